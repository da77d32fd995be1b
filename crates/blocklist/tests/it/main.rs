//! Integration tests of phishbloom-blocklist through its public API.
//! One test binary for the crate (one link instead of one per file); each module is one
//! concern, and `cargo test -p phishbloom-blocklist --test it MODULE::` runs one.

mod changes;
mod check_identity;
mod common;
mod exceptions;
mod file;
mod keywords;
mod matchers;
