//! The counting Bloom filter (Fan, Cao, Almeida & Broder, "Summary Cache", 2000; seed 001's answer
//! to deletion): a classic Bloom filter whose bits are 4-bit counters, so keys can be removed.
//!
//! A counter that reaches 15 is **saturated**: it is never decremented again, so no sequence of
//! removals can bring it below the number of keys that hold it (an underflow would turn a listed
//! key clean). The price is that a saturated counter never clears; with the optimal k at a
//! classic filter's load the chance of a counter reaching 15 is about 1.37e-15 per counter
//! (Fan et al. 2000, §5.2), so it does not happen in practice.
//! Memory is four times a classic Bloom filter's at the same rate.

use crate::hash::{double_hashing, KeyHash};
use crate::math;

/// The largest counter value; a counter there is saturated and stays.
pub const SATURATED: u8 = 15;

/// A counting Bloom filter: m 4-bit counters, k positions per key (the classic layout's enhanced
/// double hashing over the counters).
#[derive(Clone, Debug)]
pub struct CountingFilter {
    /// Two counters per byte: counter i is the low nibble of byte i/2 when i is even.
    counters: Vec<u8>,
    num_counters: u64,
    num_hashes: u32,
    items: u64,
    expected_items: u64,
    target_fpp: Option<f64>,
}

/// Everything that describes a counting filter but its counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountingParams {
    /// m, the number of counters.
    pub num_counters: u64,
    /// k.
    pub num_hashes: u32,
    /// Keys inserted minus keys removed.
    pub items: u64,
    /// The item count it was sized for (0: explicit parameters).
    pub expected_items: u64,
    /// The rate it was sized for.
    pub target_fpp: Option<f64>,
}

impl CountingParams {
    /// Bytes of the counters: two per byte, padded to whole 8-byte words.
    pub fn data_len(&self) -> u64 {
        self.num_counters.div_ceil(16) * 8
    }
}

impl CountingFilter {
    /// A filter for `expected_items` keys at rate `fpp`: the classic optimum's m counters and k.
    pub fn new(expected_items: u64, fpp: f64) -> crate::Result<Self> {
        math::validate_classic_fpp(fpp, "counting")?;
        let num_counters = math::optimal_num_bits(expected_items, fpp)?;
        let num_hashes = math::optimal_num_hashes(expected_items, num_counters);
        Self::with_params(&CountingParams {
            num_counters,
            num_hashes,
            items: 0,
            expected_items,
            target_fpp: Some(fpp),
        })
    }

    /// An all-zero filter of these parameters (its item count as given), to be filled through
    /// [`CountingFilter::bytes_mut`] by a reader.
    pub fn with_params(params: &CountingParams) -> crate::Result<Self> {
        math::validate_num_bits(params.num_counters)?;
        math::validate_num_hashes(params.num_hashes)?;
        if params.num_counters > math::MAX_NUM_BITS / 4 {
            return Err(crate::Error::invalid(
                "num_counters",
                params.num_counters,
                "4-bit counters may take at most 2^40 bits in all",
            ));
        }
        Ok(CountingFilter {
            counters: math::try_zeroed(params.data_len() as usize)?,
            num_counters: params.num_counters,
            num_hashes: params.num_hashes,
            items: params.items,
            expected_items: params.expected_items,
            target_fpp: params.target_fpp,
        })
    }

    /// The parameters.
    pub fn params(&self) -> CountingParams {
        CountingParams {
            num_counters: self.num_counters,
            num_hashes: self.num_hashes,
            items: self.items,
            expected_items: self.expected_items,
            target_fpp: self.target_fpp,
        }
    }

    /// The counters as bytes (file order).
    pub fn bytes(&self) -> &[u8] {
        &self.counters
    }

    /// The counters, writable (for readers).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.counters
    }

    /// Keys inserted minus keys removed.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// m.
    pub fn num_counters(&self) -> u64 {
        self.num_counters
    }

    /// k.
    pub fn num_hashes(&self) -> u32 {
        self.num_hashes
    }

    /// Bytes of the counters.
    pub fn size_in_bytes(&self) -> u64 {
        self.counters.len() as u64
    }

    #[inline]
    fn counter(&self, i: u64) -> u8 {
        let byte = self.counters[(i / 2) as usize];
        if i.is_multiple_of(2) {
            byte & 0x0f
        } else {
            byte >> 4
        }
    }

    #[inline]
    fn set_counter(&mut self, i: u64, value: u8) {
        let byte = &mut self.counters[(i / 2) as usize];
        *byte = if i.is_multiple_of(2) {
            (*byte & 0xf0) | value
        } else {
            (*byte & 0x0f) | (value << 4)
        };
    }

    /// Adds a key hash: each of its k counters goes up by one, up to [`SATURATED`].
    pub fn insert_hash(&mut self, hash: KeyHash) {
        double_hashing(hash, self.num_counters, self.num_hashes, |i| {
            let value = self.counter(i);
            if value < SATURATED {
                self.set_counter(i, value + 1);
            }
        });
        self.items += 1;
    }

    /// Whether a key hash may be in the filter: all its counters are non-zero.
    #[inline]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        let mut present = true;
        double_hashing(hash, self.num_counters, self.num_hashes, |i| {
            present &= self.counter(i) > 0;
        });
        present
    }

    /// Removes a key hash: each of its counters goes down by one, except saturated ones. Returns
    /// `false`, changing nothing, if the key is not (possibly) in the filter. Removing a key
    /// that was never inserted takes counts from other keys (false negatives): callers confirm
    /// the key is listed first.
    pub fn remove_hash(&mut self, hash: KeyHash) -> bool {
        if !self.contains_hash(hash) {
            return false;
        }
        double_hashing(hash, self.num_counters, self.num_hashes, |i| {
            let value = self.counter(i);
            if value < SATURATED {
                self.set_counter(i, value - 1);
            }
        });
        self.items = self.items.saturating_sub(1);
        true
    }

    /// Adds every count of `other` (same m and k), saturating: the union of two multisets.
    pub fn union(&mut self, other: &CountingFilter) -> Result<(), &'static str> {
        if self.num_counters != other.num_counters {
            return Err("num_counters");
        }
        if self.num_hashes != other.num_hashes {
            return Err("num_hashes");
        }
        for i in 0..self.num_counters {
            let sum = (self.counter(i) + other.counter(i)).min(SATURATED);
            self.set_counter(i, sum);
        }
        self.items += other.items;
        Ok(())
    }

    /// The rate theory predicts at the current count: the classic formula over the counters.
    pub fn expected_fpp(&self) -> f64 {
        math::classic_fpp(self.num_counters, self.items as f64, self.num_hashes)
    }

    /// Number of counters at [`SATURATED`].
    pub fn saturated(&self) -> u64 {
        (0..self.num_counters)
            .filter(|&i| self.counter(i) == SATURATED)
            .count() as u64
    }
}

/// Bits per key of a counting Bloom filter at rate p: four times the classic filter's,
/// `4 · log₂(e) · log₂(1/p)`.
///
/// Source: Fan et al. 2000, §5 (4-bit counters replace the bits of an optimal classic filter).
pub fn counting_bits_per_key(fpp: f64) -> f64 {
    4.0 * -fpp.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(i: u64) -> KeyHash {
        KeyHash::of(&i.to_le_bytes())
    }

    #[test]
    fn counts_up_and_down_without_false_negatives() {
        let mut filter = CountingFilter::new(10_000, 0.01).unwrap();
        for i in 0..10_000 {
            filter.insert_hash(hash(i));
        }
        for i in (0..10_000).step_by(2) {
            assert!(filter.remove_hash(hash(i)));
        }
        assert!((1..10_000)
            .step_by(2)
            .all(|i| filter.contains_hash(hash(i))));
        assert_eq!(filter.items(), 5_000);
        assert!(!filter.remove_hash(hash(1_000_000)) || filter.contains_hash(hash(1_000_000)));
    }

    #[test]
    fn saturated_counters_stay_saturated() {
        let mut filter = CountingFilter::with_params(&CountingParams {
            num_counters: 4,
            num_hashes: 1,
            items: 0,
            expected_items: 0,
            target_fpp: None,
        })
        .unwrap();
        let key = hash(7);
        for _ in 0..20 {
            filter.insert_hash(key);
        }
        assert_eq!(filter.saturated(), 1);
        for _ in 0..20 {
            filter.remove_hash(key);
        }
        // 20 removals after 20 inserts: a plain counter would be back at 0 — or, had it
        // wrapped, below; the saturated one stays, so the key stays (conservatively) present.
        assert!(filter.contains_hash(key));
        assert_eq!(filter.saturated(), 1);
    }

    #[test]
    fn union_adds_counts() {
        let mut a = CountingFilter::new(1_000, 0.01).unwrap();
        let mut b = a.clone();
        a.insert_hash(hash(1));
        b.insert_hash(hash(1));
        b.insert_hash(hash(2));
        a.union(&b).unwrap();
        assert!(a.remove_hash(hash(1)));
        assert!(a.contains_hash(hash(1)) && a.contains_hash(hash(2)));
        assert_eq!(counting_bits_per_key(0.01).round(), 38.0);
    }
}
