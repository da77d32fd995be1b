//! What phishbloom's tests and benches share, kept out of the product crates: a dev-dependency
//! only, so nothing here ships in a binary.
//!
//! - [`redis_server`] — throw-away `redis-server`s and clusters on loopback.

#![warn(missing_docs)]

pub mod redis_server;
