//! Lookup engines: what decides whether a canonical URL is listed, and by which entry.
//!
//! All engines answer with the list semantics of `phishbloom_url`: a URL is listed if one of
//! its lookup expressions (host suffix × path prefix, or a bare host suffix for domain entries)
//! equals an entry's key.
//! - [`exact::ExactMatcher`] keeps the keys in a hash set: zero false positives, the oracle of
//!   tests and experiments.
//! - [`urls::UrlFilter`] keeps them in one Bloom filter, hashing each host suffix and each path
//!   prefix once and combining the two hashes per expression; a list's [`gate::HostGate`] of
//!   its entries' hosts spares the expressions of host suffixes that are no entry's host.
//! - [`cabf::CabfEngine`] keeps them in seed 003's parallel cardinality-adaptive filters.
//!
//! A filter hit can be confirmed by [`Fingerprints`], the sorted 64-bit fingerprints of the
//! entries that a blocklist file keeps in its verification section.

pub mod cabf;
pub mod exact;
pub mod gate;
pub mod probes;
pub mod scratch;
pub mod urls;

pub use crate::hits::{Fingerprints, Hit};
pub use crate::keys::{expression_hash, fingerprint};
pub use crate::rates::{per_item_fpp, per_probe_fpp, DEFAULT_EXPRESSION_BOUND};
pub use scratch::{Matcher, Scratch};
