//! phishbloom's blocklists — the product: list sources → entries → engines → one file format →
//! [`Blocklist::open`] → the check pipeline → printers.
//!
//! # Modules
//! - [`source`] — reads a CSV (key column by name, rows selected by a label) or a plain list,
//!   from a file or standard input, into a [`KeyList`] with a [`ListSummary`].
//! - [`stream`] — reads a list of whole keys without holding them: their distinct hashes,
//!   counted exactly, spilled to temporary files ([`stream::HashedKeys`]), for large builds.
//! - [`entries`] — domain and URL entries from lists and UT1 category folders.
//! - [`keys`] — [`KeyScheme`], the one function that turns a line into the bytes that are hashed.
//! - [`engine`] — the lookup engines (exact, Bloom over URL expressions, CaBF), verification
//!   fingerprints and the per-item rate formulas.
//! - [`blocklist`] — [`Blocklist`]: build, save, open (whichever [`Kind`] the file holds), check,
//!   add and remove.
//! - [`delta`] — the change between two versions of a list, coded small, checked when applied.
//! - [`resolve`] — from filter hits to a [`Verdict`]: verification, categories, exceptions, the
//!   most specific entry.
//! - [`format`] — the container (header, checksummed section table, aligned sections);
//!   [`sections`] — what each section holds. `docs/FORMAT.md` specifies every byte.
//! - [`check`] — checking a stream of lines on several threads, answers in input order;
//!   [`printer`] — verdict lines as TSV or JSON; [`fmt`] — numbers for people.
//! - [`atomic`] — the one atomic file writer; [`bytes`] — the one bounds-checked
//!   little-endian reader.
//! - [`structure`] — what holds a list's keys: a Bloom, cuckoo or counting filter, or the
//!   growing stack of them.
//! - [`plan`] — the sizing calculator.
//! - [`keywords`] — keyword lists (phrases in any language, built streaming, with phrase
//!   lengths and an exact index read on hits); [`scan`] — finding them inside e-mail and text.
//! - [`Error`] — everything that can fail, naming the file and the fix.
//!
//! # Example
//! ```
//! use phishbloom_blocklist::blocklist::{Blocklist, BuildOptions};
//! use phishbloom_blocklist::engine::Scratch;
//! use phishbloom_blocklist::entries::EntrySet;
//! use phishbloom_url::Entry;
//!
//! # fn main() -> Result<(), phishbloom_blocklist::Error> {
//! let entries = vec![Entry::parse(b"evil.com")?, Entry::parse(b"bad.org/login")?];
//! let set = EntrySet::uncategorized(entries, "phishing");
//! let options = BuildOptions { verify: true, ..BuildOptions::default() };
//! let list = Blocklist::from_entries(&set, &options)?;
//!
//! // Saved as one file and opened again, whichever kind it holds.
//! let dir = std::env::temp_dir().join(format!("phishbloom-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).ok();
//! let path = dir.join("list.bloom");
//! list.save(&path, &[])?;
//! let opened = Blocklist::open(&path)?;
//!
//! let mut scratch = Scratch::default();
//! let verdict = opened.check(b"HTTP://WWW.Evil.COM:80/a/../x", &mut scratch);
//! assert!(verdict.listed());
//! assert_eq!(verdict.categories, ["phishing"]);
//! assert_eq!(verdict.hit.unwrap().expression, "evil.com");
//! assert!(!opened.check(b"bad.org/loginX", &mut scratch).listed());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod atomic;
pub mod blocklist;
pub mod bytes;
pub mod check;
pub mod delta;
pub mod engine;
pub mod entries;
mod error;
pub mod eval;
pub mod fmt;
pub mod format;
pub mod keys;
pub mod keywords;
pub mod plan;
pub mod printer;
pub mod resolve;
pub mod scan;
pub mod sections;
pub mod source;
pub mod stream;
pub mod structure;

pub use blocklist::{Blocklist, BuildOptions, Kind};
pub use error::{Error, Result};
pub use keys::KeyScheme;
pub use resolve::{Status, Verdict};
pub use source::{Input, KeyList, ListOptions, ListSummary};

/// Serializes a value through its `Display` form (for types of other crates, such as
/// `LayoutKind`, that do not implement `serde::Serialize`).
fn serialize_display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
