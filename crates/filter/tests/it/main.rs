//! Integration tests of phishbloom-filter: rates against theory, properties, the split layout.
//! One test binary for the crate (one link instead of one per file); each module is one
//! concern, and `cargo test -p phishbloom-filter --test it MODULE::` runs one.

mod common;
mod false_positives;
mod properties;
mod split;
