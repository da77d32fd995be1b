//! What a filter's hits are made of, shared by the engines and the resolver below them: the
//! [`Candidate`] entries a structure answers for, the [`Fingerprints`] that confirm them, and
//! the [`Hit`] a verdict names.

use phishbloom_url::{Expression, ExpressionKind};

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

/// A candidate entry for a URL: an expression the filter answered for, and its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The entry's 64-bit fingerprint, for confirmation.
    pub fingerprint: u64,
    /// The host of the expression.
    pub host: String,
    /// Its path (`""` for a domain entry).
    pub path: String,
}

impl Candidate {
    /// The candidate for an expression.
    pub fn new(fingerprint: u64, expression: Expression<'_>) -> Self {
        Candidate {
            fingerprint,
            host: expression.host.to_string(),
            path: expression.path.to_string(),
        }
    }

    /// The candidate's expression.
    pub fn expression(&self) -> Expression<'_> {
        Expression {
            host: &self.host,
            path: &self.path,
        }
    }
}

/// The sorted, distinct 64-bit fingerprints of a list's entries: exact confirmation of filter
/// hits (a blocklist file's verification section).
///
/// A lookup first reads where the fingerprints with its top `bits` bits start (a table built
/// when the fingerprints are, about 8 fingerprints a bucket, at most 2¹⁶ buckets), then
/// searches that bucket: fingerprints are uniform (they are hashes), so a bucket holds a few,
/// and a lookup takes a few steps instead of log₂ n.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprints {
    sorted: Vec<u64>,
    /// `starts[b]`: the index of the first fingerprint whose top `bits` bits are at least `b`;
    /// `2^bits + 1` entries (empty: no table, the whole table is searched).
    starts: Vec<u32>,
    bits: u32,
}

/// Fingerprints per bucket of the start table, on average: 8 (a binary search of a bucket
/// takes about three steps), for a table of about half a u32 per fingerprint.
const FINGERPRINTS_PER_BUCKET: usize = 8;

/// At most 2¹⁶ buckets (256 KiB of starts), whatever the list's size.
const MAX_BUCKET_BITS: u32 = 16;

impl Fingerprints {
    /// The table of `fingerprints` (sorted and deduplicated here).
    pub fn new(mut fingerprints: Vec<u64>) -> Self {
        fingerprints.sort_unstable();
        fingerprints.dedup();
        Self::indexed(fingerprints)
    }

    /// A table already sorted strictly ascending (as a file stores it); `None` otherwise.
    pub fn from_sorted(fingerprints: Vec<u64>) -> Option<Self> {
        fingerprints
            .windows(2)
            .all(|w| w[0] < w[1])
            .then(|| Self::indexed(fingerprints))
    }

    /// The table with its bucket starts (none for a small table, or one too large for u32
    /// indices, which is searched whole).
    fn indexed(sorted: Vec<u64>) -> Self {
        let buckets = sorted.len() / FINGERPRINTS_PER_BUCKET;
        let bits = match u32::try_from(sorted.len()) {
            Ok(_) if buckets >= 2 => buckets.ilog2().min(MAX_BUCKET_BITS),
            _ => 0,
        };
        let mut starts = Vec::new();
        if bits > 0 {
            starts.reserve((1 << bits) + 1);
            let mut at = 0;
            for bucket in 0..(1u64 << bits) {
                while at < sorted.len() && sorted[at] >> (64 - bits) < bucket {
                    at += 1;
                }
                // Fewer than 2^32 fingerprints (checked above).
                starts.push(at as u32);
            }
            starts.push(sorted.len() as u32);
        }
        Fingerprints {
            sorted,
            starts,
            bits,
        }
    }

    /// Where `fingerprint` is in the table (`Ok`), or where it would go (`Err`): what
    /// `binary_search` on [`Fingerprints::as_slice`] answers, in fewer steps.
    #[inline]
    pub fn position(&self, fingerprint: u64) -> Result<usize, usize> {
        let Some((from, to)) = self.bucket(fingerprint) else {
            return self.sorted.binary_search(&fingerprint);
        };
        match self.sorted[from..to].binary_search(&fingerprint) {
            Ok(i) => Ok(from + i),
            Err(i) => Err(from + i),
        }
    }

    /// Where the fingerprints with the top bits of `fingerprint` start and end in the table;
    /// `None` without a start table (the whole table is the bucket).
    #[inline(always)]
    fn bucket(&self, fingerprint: u64) -> Option<(usize, usize)> {
        if self.bits == 0 {
            return None;
        }
        let bucket = (fingerprint >> (64 - self.bits)) as usize;
        // `bucket < 2^bits` and `starts` has `2^bits + 1` entries.
        Some((
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        ))
    }

    /// Hints the processor to load the bucket `fingerprint` would be in (its middle, where a
    /// search starts), so that a [`Fingerprints::position`] soon after finds it in cache: asked
    /// before the filter probe whose hit the lookup confirms, the two cache misses overlap
    /// instead of following each other. Returns where the bucket starts (0 without buckets).
    #[inline]
    pub fn prefetch(&self, fingerprint: u64) -> usize {
        let Some((from, to)) = self.bucket(fingerprint) else {
            return 0;
        };
        if let Some(middle) = self.sorted.get(from + (to - from) / 2) {
            phishbloom_filter::prefetch(middle);
        }
        from
    }

    /// Whether `fingerprint` is in the table.
    pub fn contains(&self, fingerprint: u64) -> bool {
        self.position(fingerprint).is_ok()
    }

    /// The fingerprints, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.sorted
    }

    /// Number of fingerprints.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The table without the fingerprints of `removed` (any order; those it does not hold are
    /// ignored).
    pub fn without(&self, removed: &[u64]) -> Fingerprints {
        if self.is_empty() || removed.is_empty() {
            return self.clone();
        }
        let removed: std::collections::HashSet<u64> = removed.iter().copied().collect();
        let kept = self.sorted.iter().copied().filter(|v| !removed.contains(v));
        // A subsequence of a sorted, distinct sequence: sorted and distinct.
        Self::indexed(kept.collect())
    }

    /// The table with the fingerprints of `added` too.
    pub fn with(&self, added: &[u64]) -> Fingerprints {
        if added.is_empty() {
            return self.clone();
        }
        Fingerprints::new(self.sorted.iter().chain(added).copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_and_without_add_and_take_out_fingerprints() {
        let table = Fingerprints::new(vec![30, 10, 20]);
        assert_eq!(table.with(&[25, 10]).as_slice(), [10, 20, 25, 30]);
        assert_eq!(table.without(&[20, 99]).as_slice(), [10, 30]);
        assert_eq!(table.without(&[]), table);
        let big = Fingerprints::new((0..1000u64).map(|i| i << 50).collect());
        let fewer = big.without(&[5 << 50]);
        assert!(!fewer.contains(5 << 50) && fewer.contains(6 << 50));
        assert_eq!(fewer.len(), 999);
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

    proptest::proptest! {
        /// A lookup through the bucket starts answers as a binary search of the whole table,
        /// for members and others, for tables of every size (no buckets, a few, many) and for
        /// fingerprints crowded into one bucket.
        #[test]
        fn positions_are_the_binary_search_of_the_whole_table(
            seed in proptest::prelude::any::<u64>(),
            len in 0usize..3000,
            crowded in proptest::prelude::any::<bool>(),
            probes in proptest::collection::vec(proptest::prelude::any::<u64>(), 50),
        ) {
            let mut rng = phishbloom_filter::rng::SplitMix64::new(seed);
            let values: Vec<u64> = (0..len)
                .map(|_| rng.next_u64() >> if crowded { 20 } else { 0 })
                .collect();
            let table = Fingerprints::new(values.clone());
            let sorted = table.as_slice().to_vec();
            for fingerprint in values.iter().copied().chain(probes).chain([0, u64::MAX]) {
                proptest::prop_assert_eq!(table.position(fingerprint), sorted.binary_search(&fingerprint));
            }
        }
    }
}
