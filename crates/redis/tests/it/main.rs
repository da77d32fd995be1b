//! Integration tests of phishbloom-redis against real redis-servers on loopback.
//! One test binary for the crate (one link instead of one per file); each module is one
//! concern, and `cargo test -p phishbloom-redis --test it MODULE::` runs one.

mod categories;
mod cluster;
mod common;
mod compact;
mod single_node;
mod tls;
mod versions;
