//! Lookup engines: what decides whether a canonical URL is listed, and by which entry.
//!
//! All engines answer with the list semantics of `phishbloom_url`: a URL is listed if one of
//! its lookup expressions (host suffix × path prefix, or a bare host suffix for domain entries)
//! equals an entry's key.
//! - [`exact::ExactMatcher`] keeps the keys in a hash set: zero false positives, the oracle of
//!   tests and experiments.
//! - [`urls::UrlFilter`] keeps them in one Bloom filter, hashing each host suffix and each path
//!   prefix once and combining the two hashes per expression.
//! - [`cabf::CabfEngine`] keeps them in seed 003's parallel cardinality-adaptive filters.
//!
//! A filter hit can be confirmed by [`Fingerprints`], the sorted 64-bit fingerprints of the
//! entries that a blocklist file keeps in its verification section.

pub mod cabf;
pub mod exact;
pub mod urls;

use phishbloom_filter::KeyHash;
use phishbloom_url::{CanonicalUrl, Expression, ExpressionKind};

use crate::resolve::Candidate;

/// The number of expressions per URL a URL filter is sized for, unless told otherwise.
///
/// Measured on the dataset's 43,639 URLs (`phishbloom eval` prints the distribution): most URLs
/// have 2–12 expressions; 20 covers the 99th percentile. URLs with more expressions get a
/// proportionally higher false-positive rate, `1 − (1 − f)^E`.
pub const DEFAULT_EXPRESSION_BOUND: u32 = 20;

/// The entry through which a URL matched.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    /// The matched key: a host suffix (domain entry) or host suffix + path prefix (URL entry).
    pub expression: String,
    /// `domain` or `url`.
    pub kind: &'static str,
}

impl Hit {
    /// The hit for an expression.
    pub fn of(expression: Expression<'_>) -> Hit {
        Hit {
            expression: expression.to_key_string(),
            kind: match expression.kind() {
                ExpressionKind::Domain => "domain",
                ExpressionKind::Url => "url",
            },
        }
    }
}

/// Reusable buffers for [`Matcher::find`], one per thread.
#[derive(Default)]
pub struct Scratch {
    pub(crate) key: Vec<u8>,
    pub(crate) url: urls::UrlProbes,
    pub(crate) answers: Vec<bool>,
    pub(crate) candidates: Vec<bool>,
    pub(crate) found: Vec<Candidate>,
    /// Canonicalizes the URLs of a batch into one reused buffer.
    pub(crate) canonicalizer: phishbloom_url::Canonicalizer,
}

/// What finds the entries that may list a canonical URL; [`crate::resolve::Resolver`] then
/// confirms them and decides the verdict.
pub trait Matcher: Send + Sync {
    /// Appends to `out` every expression of `url` that the structure answers for (in any
    /// order; a filter's false positives included), with its fingerprint.
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>);

    /// The most specific candidate, for callers without a resolver (tests, experiments): the
    /// entry that lists `url` according to the structure alone.
    fn find(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        let mut found = Vec::new();
        self.candidates(url, scratch, &mut found);
        let resolver = crate::resolve::Resolver::default();
        resolver.url_verdict(url, &mut found, &mut scratch.key).hit
    }
}

/// The verification fingerprint of a key hash: 64 bits mixed from both halves, so that it is
/// independent of the block and bit choices (which use `h1` and `h2` separately). A false
/// confirmation needs a 64-bit collision with one of n entries: probability n/2^64 per probe.
pub fn fingerprint(hash: KeyHash) -> u64 {
    hash.h1 ^ hash.h2.rotate_left(32)
}

/// The sorted, distinct 64-bit fingerprints of a list's entries: exact confirmation of filter
/// hits (a blocklist file's verification section).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprints(Vec<u64>);

impl Fingerprints {
    /// The table of `fingerprints` (sorted and deduplicated here).
    pub fn new(mut fingerprints: Vec<u64>) -> Self {
        fingerprints.sort_unstable();
        fingerprints.dedup();
        Fingerprints(fingerprints)
    }

    /// A table already sorted strictly ascending (as a file stores it); `None` otherwise.
    pub fn from_sorted(fingerprints: Vec<u64>) -> Option<Self> {
        fingerprints
            .windows(2)
            .all(|w| w[0] < w[1])
            .then_some(Fingerprints(fingerprints))
    }

    /// Whether `fingerprint` is in the table.
    pub fn contains(&self, fingerprint: u64) -> bool {
        self.0.binary_search(&fingerprint).is_ok()
    }

    /// The fingerprints, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }

    /// Number of fingerprints.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The per-probe rate `f` that gives an item with `probes` probes the rate `per_item`:
/// `1 − (1 − f)^E = p`, so `f = 1 − (1 − p)^{1/E}` (≈ p/E for small p).
///
/// Each probe is an independent chance to collide, so an item's false-positive probability is
/// one minus the chance that all E probes miss.
pub fn per_probe_fpp(per_item: f64, probes: u32) -> f64 {
    -((-per_item).ln_1p() / f64::from(probes.max(1))).exp_m1()
}

/// The rate an item with `probes` probes sees when each probe has rate `per_probe`.
pub fn per_item_fpp(per_probe: f64, probes: u32) -> f64 {
    -(f64::from(probes) * (-per_probe).ln_1p()).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_probe_and_per_item_rates_invert_each_other() {
        let f = per_probe_fpp(0.01, 20);
        assert!((f - 0.01 / 20.0).abs() / f < 0.01, "{f}");
        assert!((per_item_fpp(f, 20) - 0.01).abs() < 1e-12);
        assert_eq!(per_probe_fpp(0.01, 1), 0.01);
    }

    #[test]
    fn fingerprint_tables_are_sorted_sets() {
        let table = Fingerprints::new(vec![5, 1, 5, 3]);
        assert_eq!(table.as_slice(), [1, 3, 5]);
        assert!(table.contains(3) && !table.contains(4));
        assert!(Fingerprints::from_sorted(vec![1, 1]).is_none());
        assert!(Fingerprints::from_sorted(vec![2, 1]).is_none());
        assert_eq!(Fingerprints::from_sorted(vec![1, 2]).unwrap().len(), 2);
    }
}
