//! phishbloom's blocklists on a machine with files: list sources read from files and pipes,
//! streamed builds spilled to temporary files, blocklist and delta files opened and written
//! atomically, and the check pipeline on threads — over [`phishbloom_core`], the I/O-free core
//! that reads and answers. What the core defines is used from the core (`phishbloom_core::…`);
//! this crate adds what needs a machine: files, pipes, threads, temporary spills.
//!
//! # Modules
//! - [`decode`] — a list's bytes before its lines: gzip and zstd by magic, no byte-order
//!   mark, binary input refused.
//! - [`formats`] — the list formats admins already have (hosts files, AdBlock rules,
//!   PhishTank's and URLhaus's CSVs, OpenPhish's feed): recognized by content, parsed line by
//!   line, skipped lines given a reason.
//! - [`source`] — reads a CSV (key column by name, rows selected by a label) or a plain list,
//!   from a file or standard input, into a [`KeyList`] with a [`ListSummary`].
//! - [`stream`] — reads a list of whole keys without holding them: their distinct hashes,
//!   counted exactly, spilled to temporary files ([`stream::HashedKeys`]), for large builds.
//! - [`build`] — what a build reads, composed once for every front end: entry sources, key
//!   groups, a never-warn file.
//! - [`entries`] — domain and URL entries from lists and UT1 category folders.
//! - [`keywords`] — building keyword lists through temporary bucket files.
//! - [`documents`] — documents to scan from a file or standard input: a text, an e-mail
//!   message, an mbox's messages, an HTML page's visible text ([`html`]), or one per line,
//!   within a size limit.
//! - [`answers`] — one answer line per scanned document, from a keyword list, a
//!   near-duplicate list, or both.
//! - [`near`] — near-duplicate lists built from documents (SimHash per document).
//! - [`file`](mod@file) — [`BlocklistFile`]: open a blocklist file (positioned reads, every checksum
//!   verified), read its metadata, save it atomically; [`DeltaFile`]: open a delta; [`now`].
//! - [`eval`] — the dataset evaluation `eval` and `demo` run (a labelled CSV, a held-out split,
//!   measured false-positive rates with Wilson intervals).
//! - [`plan_check`] — which build options go together ([`plan_check::BuildPlan::check`]),
//!   each refusal naming the option by its field.
//! - [`atomic`] — the one atomic file writer.
//! - [`check`] — the one stream checker: lines from a pipe answered in order, on threads, each
//!   batch flushed before the reader waits (a co-process gets one answer per line).
//! - [`Error`] — what can go wrong with files, inputs and outputs, wrapping the core's errors.
//!
//! # Example
//! ```
//! use phishbloom_blocklist::BlocklistFile;
//! use phishbloom_core::engine::Scratch;
//! use phishbloom_core::{Blocklist, BuildOptions, EntrySet};
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
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod answers;
pub mod atomic;
pub mod build;
pub mod check;
pub mod decode;
pub mod documents;
pub mod entries;
mod error;
pub mod eval;
pub mod file;
pub mod formats;
pub mod html;
pub mod keywords;
pub mod near;
mod partition;
pub mod plan_check;
pub mod source;
pub mod stream;

pub use error::{Error, Result};
pub use file::{now, BlocklistFile, DeltaFile};
pub use source::{Input, ListOptions, ListSummary};
