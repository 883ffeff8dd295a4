//! herdr-link: a native implementation of the Herdr Link protocol (`herdr-link/1`).
//!
//! The crate is both a Rust library (`rlib`, used by the `herdr-link` MCP binary) and a C-ABI
//! plugin (`cdylib`, see `include/herdr_link.h`). Layers, top to bottom:
//! [`ffi`] (C strings, panic boundary) → [`tools`] (request, gate, activation, routing) →
//! [`ops`] (start, peers, send, close) → [`identity`] (live self/target records, bootstrap) →
//! [`herdr`] (the only process spawner); [`turn`] (delivery turns per receiver, over
//! [`rundir`]) sits beside it. [`protocol`], [`presentation`] and [`guard`] are pure.

#![warn(missing_docs)]

mod contract_block;
pub mod env;
pub mod error;
pub mod ffi;
pub mod follow;
pub mod guard;
pub mod herdr;
pub mod identity;
pub mod limits;
pub mod oplog;
pub mod ops;
pub mod paths;
pub mod presence;
pub mod presentation;
pub mod protocol;
pub mod request;
pub mod rundir;
pub mod session;
pub mod tools;
pub mod turn;

pub use error::LinkError;
