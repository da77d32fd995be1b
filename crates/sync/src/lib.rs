//! phishbloom's publish and sync: a list reaches every client and stays current.
//!
//! A publisher runs [`publish::publish`] after every change of a list: a static directory any
//! web server or CDN hosts (the whole file, a chain of deltas, a signed index). A client —
//! `phishbloom sync`, a fleet of gateways, the browser extension — polls the index and fetches
//! only what brings its copy to the published version; `phishbloom serve` answers the same
//! protocol at `/v1/lists/NAME`. The protocol's rules (index, signature, which downloads) are
//! the core's ([`phishbloom_core::sync`]), so every client decides the same way; this crate
//! adds the files, the network and the clock. docs/SYNC.md specifies the protocol.
//!
//! # Modules
//! - [`publish`] — writes the directory: file, deltas, index, pruning.
//! - [`fetch`] — GETs from an http(s) base or a local directory ([`fetch::Fetch`]).
//! - [`client`] — [`client::Client::sync_once`]: index, plan, downloads, checks, atomic replace.
//! - [`schedule`] — `--every`: jitter, the publisher's minimum interval, Safe Browsing back-off.
//! - [`keys`] — `keygen` and key files; [`trust`] — the key a client reached by rotation.
//! - [`error`] — [`Error`].
//!
//! # Example
//! ```
//! use phishbloom_blocklist::BlocklistFile;
//! use phishbloom_core::engine::Scratch;
//! use phishbloom_core::{Blocklist, BuildOptions, EntrySet};
//! use phishbloom_sync::client::{Client, Outcome, SyncOptions};
//! use phishbloom_sync::publish::{publish, PublishOptions, Ship};
//! use phishbloom_url::Entry;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let set = EntrySet::uncategorized(vec![Entry::parse(b"evil.com")?], "phishing");
//! let options = BuildOptions { verify: true, ..BuildOptions::default() };
//! let source = dir.path().join("list.bloom");
//! Blocklist::from_entries(&set, &options)?.save(&source, &[])?;
//!
//! // The publisher: a directory a web server can host.
//! let site = dir.path().join("site");
//! let options = PublishOptions {
//!     ship: Ship::Compact { fpp: 1e-9 }, keep: 30, min_interval: 300, max_chain_age: None,
//!     sign: None, rotate_from: None, allow_rollback: false, now: 1, expires: None,
//! };
//! publish(&source, &site, &options)?;
//!
//! // A client: the whole file the first time.
//! let copy = dir.path().join("copy.bloom");
//! let fetch = phishbloom_sync::fetch::open(site.to_str().unwrap(), &[])?;
//! let mut client = Client::new(fetch, &copy, SyncOptions::default());
//! assert!(matches!(client.sync_once()?, Outcome::Updated { to: 1, .. }));
//! let verdict = Blocklist::open(&copy)?.check(b"http://evil.com/", &mut Scratch::default());
//! assert!(verdict.listed());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod error;
pub mod fetch;
pub mod keys;
pub mod publish;
pub mod schedule;
pub mod trust;

pub use error::{Error, Result};
