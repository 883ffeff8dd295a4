//! herdr-link: a native implementation of the Herdr Link protocol (`herdr-link/1`).
//!
//! The crate is both a Rust library (`rlib`, used by the `herdr-link` MCP binary) and a C-ABI
//! plugin (`cdylib`, see `include/herdr_link.h`). Layers, top to bottom:
//! [`ffi`] (C strings, panic boundary) → [`tools`] (request, gate, activation, routing) →
//! `ops` (start, peers, send, close; their table is [`OPERATIONS`]) → [`identity`] (live
//! self/target records, bootstrap) → [`herdr`] (the only process spawner); [`turn`] (delivery
//! turns per receiver, over the private runtime directory) sits beside it. [`protocol`], [`presentation`] and [`guard`] are pure.

#![warn(missing_docs)]

// The public surface: the C ABI hosts load, and the modules the `herdr-link` binary (cli/) builds
// on, each for what it uses there. Everything else is private; the few items used outside the
// crate are re-exported below.

// The C ABI (`include/herdr_link.h`): what hosts load.
pub mod ffi;

// What the binary's MCP server, guard hook, shim, doctor, setup, `log` and `watch` use.
pub mod env;
pub mod error;
pub mod follow;
pub mod guard;
pub mod herdr;
pub mod identity;
pub mod limits;
pub mod oplog;
pub mod paths;
pub mod presence;
pub mod presentation;
pub mod protocol;
pub mod request;
pub mod session;
pub mod tools;
pub mod turn;

mod contract_block;
mod ops;
mod rundir;

pub use error::LinkError;
pub use ops::peers::visible_peers;
pub use ops::{Operation, OPERATIONS};

/// For the library's own tests, benchmarks and fuzz targets only: not part of the API.
#[doc(hidden)]
pub mod internal {
    pub use crate::herdr::process::{run, Exit};
    pub use crate::ops::start::config as start_config;
    pub use crate::rundir::{base_dir, ensure_private_dir};
}
