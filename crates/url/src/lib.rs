//! URL canonicalization and blocklist matching keys for phishbloom: turns URLs and blocklist lines into the byte keys a Bloom filter stores and looks up.
//!
//! # Overview
//!
//! * [`canonicalize`] turns arbitrary bytes (a URL, or a bare `host/path`)
//!   into a [`CanonicalUrl`] following the Google Safe Browsing v4
//!   canonicalization rules
//!   (<https://developers.google.com/safe-browsing/v4/urls-hashing>):
//!   unescaping, host dots and case, IPv4 forms, IDN to punycode, `.`/`..`
//!   and `//` in the path, re-escaping. A [`CanonicalUrl`] is one ASCII
//!   `String` plus component offsets.
//! * [`Entry`] is one blocklist line: a *domain entry* (`evil.com`: the host
//!   and all subdomains) or a *URL entry* (`evil.com/a/b`: that URL and
//!   everything below it at a `/` boundary; with a query, exactly that URL).
//!   Its [`Entry::key`] is an [`Expression`].
//! * [`CanonicalUrl::expressions`] yields the borrowed [`Expression`]s
//!   `(host suffix, path prefix)` of a URL, without allocating. A URL is
//!   listed iff one of its expressions equals the key of a listed entry. A
//!   matcher can hash each [`CanonicalUrl::host_suffixes`] item once and each
//!   [`CanonicalUrl::path_prefixes`] item once and combine the hashes.
//!   Hostile URLs are bounded by [`MAX_HOST_SUFFIXES`] and
//!   [`MAX_PATH_PREFIXES`] without losing matches for valid entries.
//! * [`components_by_slash`] and [`components_reversed_host`] split a URL
//!   into components for component-wise filters.
//! * [`Error`] says what is wrong with an input and how to fix it.
//!
//! # Example
//!
//! ```
//! use phishbloom_url::{canonicalize, Entry};
//!
//! let entry = Entry::parse(b"evil.com/login")?;
//! let url = canonicalize(b"HTTP://WWW.Evil.COM:80/a/../login/step2?id=7#top")?;
//! assert_eq!(url.as_str(), "http://www.evil.com/login/step2?id=7");
//!
//! // The URL is listed: one of its expressions is the entry's key.
//! let key = entry.key();
//! assert!(url.expressions().any(|e| e == key));
//! assert_eq!(key.to_key_string(), "evil.com/login");
//!
//! // Not a `/` boundary: not listed.
//! let other = canonicalize(b"evil.com/loginX")?;
//! assert!(!entry.matches(&other));
//! # Ok::<(), phishbloom_url::Error>(())
//! ```

// Two exceptions, each with its reason: `plain::ascii_text` (text from bytes just checked to be
// ASCII) and `scan::pack` (SSE2's `pmovmskb`, in the x86-64 baseline).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod canonical;
mod components;
mod entry;
mod error;
mod escape;
mod expression;
mod fast;
mod host;
mod plain;
pub mod scan;
mod scheme;
mod written;

pub use canonical::{canonicalize, CanonicalUrl, Canonicalizer};
pub use components::{components_by_slash, components_reversed_host};
pub use entry::Entry;
pub use error::Error;
pub use expression::{
    is_top_label, Expression, ExpressionKind, Expressions, HostSuffixes, PathPrefixes,
    MAX_ENTRY_HOST_LABELS, MAX_ENTRY_PATH_DEPTH, MAX_HOST_SUFFIXES, MAX_HOST_SUFFIX_LABELS,
    MAX_PATH_PREFIXES,
};
pub use written::{read_written_host, written_host, WrittenHost};
