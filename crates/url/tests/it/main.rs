//! Integration tests of phishbloom-url: conformance suites, idempotence, no false negatives.
//! One test binary for the crate (one link instead of one per file); each module is one
//! concern, and `cargo test -p phishbloom-url --test it MODULE::` runs one.

mod conformance;
mod idempotence;
mod no_false_negatives;
