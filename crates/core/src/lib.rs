//! phishbloom's check core: everything that reads a blocklist from bytes and answers checks,
//! with no file system, threads, sockets or clock, so that it also builds for
//! `wasm32-unknown-unknown` (a browser extension holds a list with it). Files, streams, temporary
//! spills and pipelines are `phishbloom-blocklist`'s, above it.
//!
//! # Modules, from the bottom layer up (each imports only modules listed before it)
//! - [`Kind`], the structure a file holds; [`Error`], what went wrong and in which field or
//!   item (the front ends word it for their users);
//!   [`bytes`] — the bounds-checked little-endian reader; [`fmt`] — numbers for people;
//!   [`rates`] — per-item and per-probe false-positive rates.
//! - [`format`](mod@format) — the container (header, checksummed section table, aligned sections);
//!   `docs/FORMAT.md` specifies every byte.
//! - [`keys`] — [`KeyScheme`](keys::KeyScheme): how a line becomes the bytes that are hashed; key and entry hashes.
//! - A list's contents in memory ([`KeyList`], [`EntrySet`]);
//!   [`hits`] — candidate entries, fingerprints, hits.
//! - [`structure`] — a Bloom, cuckoo or counting filter, or a growing stack of them.
//! - [`resolve`] — from hits to a [`Verdict`](resolve::Verdict): verification, categories, exceptions, the most
//!   specific entry.
//! - [`prepare`] — **the one item preparation**: how any front end turns an item into what a
//!   list is asked (canonical URL, or key) or changed with (entry key, hash, fingerprint), and
//!   the rule for the category an added entry joins.
//! - [`engine`] — the probes of a URL, the lookup engines (exact, URL filter, CaBF) and the
//!   per-thread [`Scratch`](engine::Scratch) (which holds a preparer).
//! - [`sections`] — what each section holds; [`keywords`] — keyword lists and their index.
//! - [`near`] — near-duplicate lists: known documents by SimHash in permuted tables.
//! - [`delta`] — the change between two versions of a list, coded small and checked.
//! - [`Blocklist`]: build in memory, read from and write to a file image, check,
//!   add, remove, apply, merge, describe ([`CheckStats`], [`BuildOptions`], [`Change`], …).
//! - [`scan`] — finding keywords inside text; [`printer`] — verdict lines as TSV or JSON;
//!   [`plan`] — the sizing calculator; [`sync`] — the publish/sync protocol's index, its
//!   Ed25519 signature, and which downloads bring a copy up to date.
//!
//! Each item has one public path: the root for the types named there, its module for the rest.
//!
//! # Example
//! ```
//! use phishbloom_core::engine::Scratch;
//! use phishbloom_core::{Blocklist, BuildOptions, EntrySet};
//! use phishbloom_url::Entry;
//!
//! # fn main() -> Result<(), phishbloom_core::Error> {
//! let entries = vec![Entry::parse(b"evil.com")?, Entry::parse(b"bad.org/login")?];
//! let set = EntrySet::uncategorized(entries, "phishing");
//! let options = BuildOptions { verify: true, ..BuildOptions::default() };
//! let list = Blocklist::from_entries(&set, &options)?;
//!
//! // One file image, read back whichever kind it holds: no file system needed.
//! let image = list.to_bytes();
//! let opened = Blocklist::from_bytes("list.bloom", &image)?;
//!
//! let mut scratch = Scratch::default();
//! let verdict = opened.check(b"HTTP://WWW.Evil.COM:80/a/../x", &mut scratch);
//! assert!(verdict.listed());
//! assert_eq!(verdict.categories, ["phishing"]);
//! assert_eq!(verdict.hit.unwrap().expression, "evil.com");
//! assert!(!opened.check(b"bad.org/loginX", &mut scratch).listed());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod bytes;
mod contents;
pub mod delta;
pub mod engine;
mod error;
pub mod fmt;
pub mod format;
pub mod hits;
pub mod keys;
pub mod keywords;
mod kind;
mod list;
pub mod near;
pub mod plan;
pub mod prepare;
pub mod printer;
pub mod rates;
pub mod resolve;
pub mod scan;
pub mod sections;
pub mod structure;
pub mod sync;

pub use contents::{EntrySet, KeyList, Membership};
pub use error::{Error, Result};
pub use kind::Kind;
pub use list::{
    never_bits_per_entry, write_answered, Applied, Blocklist, BuildOptions, Change, CheckStats,
    CompactInfo, Description, Engine, FilterInfo, GateInfo, KeyFilter, KeyHashes, NamedDoc,
    NearOptions, NeverReport, SectionInfo,
};

/// Serializes a value through its `Display` form (for types of other crates, such as
/// `LayoutKind`, that do not implement `serde::Serialize`).
pub fn serialize_display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
