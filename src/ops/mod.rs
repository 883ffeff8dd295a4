//! The four Tier 1 operations, one module each. They take a [`Herdr`](crate::herdr::Herdr) driver
//! and the caller's pane, and return the receipt JSON or a [`LinkError`](crate::error::LinkError).

pub mod close;
pub mod delivery;
pub mod peers;
pub mod send;
pub mod start;
