//! Blocklist lookups for phishbloom: list formats, key normalization, streaming checks and the
//! dataset experiment, on top of the `phishbloom-filter` crate.
//!
//! # Types and modules
//! - [`list`] — reads a CSV (key column by name, rows selected by label) or a plain list into a
//!   [`KeyList`] of distinct keys, with a [`ListSummary`] of malformed rows and duplicates.
//! - [`KeyScheme`] — the one function that turns a line into the bytes that are hashed; the
//!   scheme is recorded in the filter file so checks normalize the same way.
//! - [`entries`] — domain and URL entries from lists and UT1 category folders;
//!   [`matcher`] — the exact and Bloom URL matchers with list semantics and verification.
//! - [`stream`] — `check` over a pipe: chunked, batched, on several threads, in input order.
//! - [`eval`] — seeds 000/001's experiment on `dataset.csv`; [`plan`] — the sizing calculator;
//!   [`stats`] — Wilson intervals; [`rng`] — fixed-seed random URLs.
//!
//! # Example
//! ```
//! use phishbloom_filter::{BlockedBloomFilter, Filter};
//! use phishbloom_lookup::{stream, KeyScheme};
//!
//! let mut filter = BlockedBloomFilter::new(100, 0.01).unwrap();
//! let mut key = Vec::new();
//! KeyScheme::Url.normalize_into(b"HTTP://Evil.COM/", &mut key);
//! filter.insert(&key);
//!
//! let mut out = Vec::new();
//! let lines = [&b"evil.com"[..], b"good.org"];
//! let checker = stream::Checker::Keys { filter: &filter, scheme: KeyScheme::Url };
//! stream::answer_lines(checker, lines.into_iter(), stream::Output::Tsv, &mut out);
//! assert_eq!(out, b"evil.com\tlisted\ngood.org\tclean\n");
//! ```

#![warn(missing_docs)]

pub mod build;
pub mod cabf;
pub mod cabf_engine;
pub mod cabf_experiment;
pub mod entries;
mod error;
pub mod eval;
mod keys;
pub mod list;
pub mod matcher;
pub mod plan;
pub mod rng;
pub mod stats;
pub mod stream;

pub use error::{Error, Result};
pub use keys::KeyScheme;
pub use list::{Input, KeyList, ListOptions, ListSummary};

/// Serializes a value through its `Display` form (for types of other crates, such as
/// `LayoutKind`, that do not implement `serde::Serialize`).
fn serialize_display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
