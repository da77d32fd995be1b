//! A prefix set: the sorted `b`-bit prefixes of 64-bit key fingerprints — Safe Browsing's
//! local hash-prefix store, and a Golomb-coded set (Putze, Sanders & Singler 2007) when stored.
//! A query is a binary search of its own prefix; a key of the set is always found, another
//! matches with probability `n / 2^b` ([`prefix_fpp`]).
//!
//! phishbloom keeps the additions a delta brings to a Bloom filter here: a Bloom filter cannot
//! insert a key from its fingerprint alone, but a prefix set can, and it costs only
//! `log₂(2^b/n) + 1.5` bits per key stored or shipped.

use crate::error::{Error, Result};
use crate::golomb;

/// False-positive rate of `items` prefixes of `bits` bits: `n / 2^b` (a union bound over the
/// stored prefixes, each matched by a uniform 64-bit fingerprint with probability `2^-b`).
pub fn prefix_fpp(items: u64, bits: u32) -> f64 {
    (items as f64 / 2f64.powi(bits as i32)).min(1.0)
}

/// Prefix bits that keep `items` prefixes at rate `fpp` or below: `⌈log₂(n/p)⌉` (the inverse of
/// [`prefix_fpp`]), at most 64.
pub fn prefix_bits(items: u64, fpp: f64) -> u32 {
    (items.max(1) as f64 / fpp).log2().ceil().clamp(1.0, 64.0) as u32
}

/// Sorted `bits`-bit prefixes of fingerprints (a multiset: two keys may share a prefix).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixSet {
    bits: u32,
    prefixes: Vec<u64>,
}

impl PrefixSet {
    /// An empty set of `bits`-bit prefixes (1 to 64).
    pub fn new(bits: u32) -> Result<Self> {
        if !(1..=64).contains(&bits) {
            return Err(Error::invalid("prefix bits", bits, "between 1 and 64"));
        }
        Ok(PrefixSet {
            bits,
            prefixes: Vec::new(),
        })
    }

    /// The prefix of a fingerprint: its top `bits` bits.
    #[inline]
    pub fn prefix_of(&self, fingerprint: u64) -> u64 {
        fingerprint >> (64 - self.bits)
    }

    /// Prefix bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Prefixes stored.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// The sorted prefixes.
    pub fn prefixes(&self) -> &[u64] {
        &self.prefixes
    }

    /// Whether a fingerprint's prefix is in the set.
    #[inline]
    pub fn contains(&self, fingerprint: u64) -> bool {
        self.prefixes
            .binary_search(&self.prefix_of(fingerprint))
            .is_ok()
    }

    /// Adds prefixes (each below `2^bits`), keeping the set sorted: one merge, O(n + m log m).
    pub fn extend_prefixes(&mut self, mut prefixes: Vec<u64>) {
        prefixes.sort_unstable();
        let old = std::mem::take(&mut self.prefixes);
        let mut merged = Vec::with_capacity(old.len() + prefixes.len());
        let (mut a, mut b) = (old.into_iter().peekable(), prefixes.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        self.prefixes = merged;
    }

    /// Removes one copy of a fingerprint's prefix; `false` if it is not there.
    pub fn remove(&mut self, fingerprint: u64) -> bool {
        match self.prefixes.binary_search(&self.prefix_of(fingerprint)) {
            Ok(at) => {
                self.prefixes.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// The rate its contents imply ([`prefix_fpp`]).
    pub fn expected_fpp(&self) -> f64 {
        prefix_fpp(self.prefixes.len() as u64, self.bits)
    }

    /// Bytes of the sorted prefixes in memory.
    pub fn size_in_bytes(&self) -> u64 {
        self.prefixes.len() as u64 * 8
    }

    /// The Golomb–Rice parameter and coded bytes (see [`golomb`]).
    pub fn encode(&self) -> (u32, Vec<u8>) {
        let r = golomb::best_parameter(&self.prefixes, 1u128 << self.bits);
        (r, golomb::encode(&self.prefixes, r))
    }

    /// A set from coded bytes.
    pub fn decode(bits: u32, count: u64, r: u32, bytes: &[u8]) -> Result<Self> {
        let mut set = PrefixSet::new(bits)?;
        set.prefixes = golomb::decode(bytes, count, r, bits)?;
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn members_are_found_and_strangers_match_at_the_predicted_rate() {
        let mut rng = SplitMix64::new(11);
        let items = 1_000u64;
        let bits = prefix_bits(items, 0.01);
        assert_eq!(bits, 17);
        let members: Vec<u64> = (0..items).map(|_| rng.next_u64()).collect();
        let mut set = PrefixSet::new(bits).unwrap();
        set.extend_prefixes(members.iter().map(|&f| set.prefix_of(f)).collect());
        assert!(members.iter().all(|&f| set.contains(f)));
        // 200,000 strangers at rate p = n/2^b: the count is binomial; 5 standard deviations.
        let trials = 200_000u64;
        let p = set.expected_fpp();
        let hits = (0..trials).filter(|_| set.contains(rng.next_u64())).count() as f64;
        let mean = trials as f64 * p;
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!((hits - mean).abs() < 5.0 * sd, "{hits} vs {mean} ± {sd}");
        // Coded and decoded.
        let (r, bytes) = set.encode();
        assert_eq!(PrefixSet::decode(bits, items, r, &bytes).unwrap(), set);
        // Removing takes one copy.
        assert!(set.remove(members[0]));
        assert_eq!(set.len(), items as usize - 1);
    }
}
