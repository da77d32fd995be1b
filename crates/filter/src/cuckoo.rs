//! The cuckoo filter of Fan, Andersen, Kaminsky & Mitzenmacher ("Cuckoo Filter: Practically
//! Better Than Bloom", CoNEXT 2014): buckets of four f-bit fingerprints, partial-key cuckoo
//! hashing, deletion.
//!
//! A key with hash (h1, h2) has the fingerprint `fp` (f bits of h2, never 0) and two candidate
//! buckets `i1 = h1 mod B` and `i2 = alt(i1, fp)`. The alternate bucket is an involution that
//! needs only the bucket and the fingerprint — `alt(i, fp) = (H(fp) − i) mod B` with `H` a mix of
//! the fingerprint — so a fingerprint can be moved without its key, for any bucket count B (the
//! paper's XOR form needs a power of two).
//!
//! An insert that finds both buckets full evicts fingerprints along a random cuckoo path for up
//! to [`MAX_KICKS`] steps. If the path ends without a free slot, **every move is undone** and the
//! insert fails with [`Full`]: no resident fingerprint is ever dropped (dropping the last evicted
//! one, as some implementations do, silently turns a listed key into a false negative).

use crate::hash::{fast_range, KeyHash};
use crate::math;
use crate::rng::SplitMix64;

/// Fingerprints per bucket (the paper's b = 4: 95 % load at 8 bits or more per fingerprint).
pub const BUCKET_SIZE: usize = 4;

/// Evictions tried before an insert gives up (the paper uses 500).
pub const MAX_KICKS: usize = 500;

/// The load factor the filter is sized for: Fan et al. reach 95.5 % with b = 4.
pub const TARGET_LOAD: f64 = 0.95;

/// Widest fingerprint (bits).
pub const MAX_FINGERPRINT_BITS: u32 = 32;

/// An insert found no free slot within [`MAX_KICKS`] evictions; the filter is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// Fingerprint bits for rate `p` at bucket size b: `f = ⌈log₂(2b/p)⌉`.
///
/// Source: Fan et al. 2014, §5.1 eq. (6): a query compares against at most 2b fingerprints, each
/// matching with probability 2^-f, so the rate is at most 2b/2^f.
pub fn fingerprint_bits(fpp: f64) -> u32 {
    (2.0 * BUCKET_SIZE as f64 / fpp).log2().ceil().max(1.0) as u32
}

/// Upper bound of the false-positive rate at load α with f-bit fingerprints: `2bα / 2^f`.
///
/// Source: Fan et al. 2014, §5.1 (the bound `2b/2^f` at full load, scaled by the fraction of
/// occupied slots a query compares against).
pub fn cuckoo_fpp(fingerprint_bits: u32, load: f64) -> f64 {
    (2.0 * BUCKET_SIZE as f64 * load / 2f64.powi(fingerprint_bits as i32)).min(1.0)
}

/// Bits per key of a cuckoo filter at rate p and load α: `(log₂(1/p) + 3) / α`.
///
/// Source: Fan et al. 2014, §5.2 (with b = 4, `f = log₂(1/p) + log₂(2b) = log₂(1/p) + 3`).
pub fn cuckoo_bits_per_key(fpp: f64, load: f64) -> f64 {
    (fingerprint_bits(fpp) as f64) / load
}

/// A cuckoo filter with buckets of [`BUCKET_SIZE`] fingerprints of `f` bits, packed.
#[derive(Clone, Debug)]
pub struct CuckooFilter {
    /// Fingerprints, `f` bits each, slot `s` of bucket `i` at bit `(4i + s)·f`.
    words: Vec<u64>,
    num_buckets: u64,
    fingerprint_bits: u32,
    items: u64,
    /// The item count the filter was sized for (0 when built from explicit parameters).
    expected_items: u64,
    /// The rate the filter was sized for.
    target_fpp: Option<f64>,
    /// The eviction path's random choices (a fixed seed: builds are reproducible).
    rng: SplitMix64,
}

/// Everything that describes a cuckoo filter but its slots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CuckooParams {
    /// Buckets.
    pub num_buckets: u64,
    /// Bits per fingerprint.
    pub fingerprint_bits: u32,
    /// Fingerprints stored.
    pub items: u64,
    /// The item count it was sized for (0: explicit parameters).
    pub expected_items: u64,
    /// The rate it was sized for.
    pub target_fpp: Option<f64>,
}

impl CuckooParams {
    /// Bytes of the packed slots: whole 64-bit words (saturating, for parameters read from an
    /// untrusted file: a reader compares this with the section's length before allocating).
    pub fn data_len(&self) -> u64 {
        let bits =
            u128::from(self.num_buckets) * BUCKET_SIZE as u128 * u128::from(self.fingerprint_bits);
        u64::try_from(bits.div_ceil(64) * 8).unwrap_or(u64::MAX)
    }
}

/// Seed of the eviction path's generator.
const KICK_SEED: u64 = 0x6375_636b_6f6f; // "cuckoo"

impl CuckooFilter {
    /// A filter for `expected_items` keys at rate `fpp`: `f = ⌈log₂(8/p)⌉` bits per fingerprint
    /// and enough buckets for the keys at [`TARGET_LOAD`].
    pub fn new(expected_items: u64, fpp: f64) -> crate::Result<Self> {
        Self::with_load(expected_items, fpp, TARGET_LOAD)
    }

    /// Like [`CuckooFilter::new`] at load factor `load` (a builder that met [`Full`] at 95 %
    /// retries with a lower one).
    pub fn with_load(expected_items: u64, fpp: f64, load: f64) -> crate::Result<Self> {
        math::validate_items(expected_items)?;
        math::validate_fpp(fpp)?;
        let bits = fingerprint_bits(fpp);
        if bits > MAX_FINGERPRINT_BITS {
            return Err(crate::Error::invalid(
                "fpp",
                format!("{fpp:e}"),
                format!("a cuckoo filter's fingerprints hold at most {MAX_FINGERPRINT_BITS} bits (rates down to 2e-9)"),
            ));
        }
        let buckets = (expected_items as f64 / (BUCKET_SIZE as f64 * load)).ceil() as u64;
        let mut filter = Self::with_params(&CuckooParams {
            num_buckets: buckets.max(1),
            fingerprint_bits: bits,
            items: 0,
            expected_items,
            target_fpp: Some(fpp),
        })?;
        filter.items = 0;
        Ok(filter)
    }

    /// An empty filter of these parameters (its item count as given), to be filled through
    /// [`CuckooFilter::bytes_mut`] by a reader.
    pub fn with_params(params: &CuckooParams) -> crate::Result<Self> {
        if !(1..=MAX_FINGERPRINT_BITS).contains(&params.fingerprint_bits) {
            return Err(crate::Error::invalid(
                "fingerprint_bits",
                params.fingerprint_bits,
                format!("between 1 and {MAX_FINGERPRINT_BITS}"),
            ));
        }
        let bits =
            params.num_buckets as u128 * BUCKET_SIZE as u128 * params.fingerprint_bits as u128;
        if params.num_buckets == 0 || bits > u128::from(math::MAX_NUM_BITS) {
            return Err(crate::Error::invalid(
                "num_buckets",
                params.num_buckets,
                "the slots must hold between 1 bucket and 2^40 bits",
            ));
        }
        Ok(CuckooFilter {
            words: math::try_zeroed((params.data_len() / 8) as usize)?,
            num_buckets: params.num_buckets,
            fingerprint_bits: params.fingerprint_bits,
            items: params.items,
            expected_items: params.expected_items,
            target_fpp: params.target_fpp,
            rng: SplitMix64::new(KICK_SEED ^ params.items),
        })
    }

    /// The parameters.
    pub fn params(&self) -> CuckooParams {
        CuckooParams {
            num_buckets: self.num_buckets,
            fingerprint_bits: self.fingerprint_bits,
            items: self.items,
            expected_items: self.expected_items,
            target_fpp: self.target_fpp,
        }
    }

    /// The packed slots, little-endian words (file order).
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }

    /// The packed slots, writable (for readers).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.words)
    }

    /// Fingerprints stored.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Buckets.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// Bits per fingerprint.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Bytes of the slots.
    pub fn size_in_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// Fraction of slots occupied.
    pub fn load(&self) -> f64 {
        self.items as f64 / (self.num_buckets * BUCKET_SIZE as u64) as f64
    }

    /// The false-positive rate bound at the current load ([`cuckoo_fpp`]).
    pub fn expected_fpp(&self) -> f64 {
        cuckoo_fpp(self.fingerprint_bits, self.load())
    }

    /// The fingerprint of a key hash: f bits of h2, 0 mapped to 1 (0 marks an empty slot).
    #[inline]
    fn fingerprint(&self, hash: KeyHash) -> u32 {
        let mask = if self.fingerprint_bits == 32 {
            u32::MAX
        } else {
            (1 << self.fingerprint_bits) - 1
        };
        let fp = (hash.h2 >> 32) as u32 & mask;
        fp.max(1)
    }

    /// The primary bucket of a key hash.
    #[inline]
    fn bucket(&self, hash: KeyHash) -> u64 {
        fast_range(hash.h1, self.num_buckets)
    }

    /// The other bucket of fingerprint `fp` in bucket `i`: `(H(fp) − i) mod B`, an involution.
    #[inline]
    fn alternate(&self, i: u64, fp: u32) -> u64 {
        let h = fast_range(SplitMix64::new(u64::from(fp)).next_u64(), self.num_buckets);
        (h + self.num_buckets - i) % self.num_buckets
    }

    #[inline]
    fn slot(&self, bucket: u64, slot: usize) -> u32 {
        let bit = (bucket * BUCKET_SIZE as u64 + slot as u64) * u64::from(self.fingerprint_bits);
        let (word, shift) = ((bit / 64) as usize, bit % 64);
        let low = self.words[word] >> shift;
        let value = if shift + u64::from(self.fingerprint_bits) > 64 {
            low | (self.words[word + 1] << (64 - shift))
        } else {
            low
        };
        (value & ((1u64 << self.fingerprint_bits) - 1)) as u32
    }

    #[inline]
    fn set_slot(&mut self, bucket: u64, slot: usize, fp: u32) {
        let bits = u64::from(self.fingerprint_bits);
        let bit = (bucket * BUCKET_SIZE as u64 + slot as u64) * bits;
        let (word, shift) = ((bit / 64) as usize, bit % 64);
        let mask = (1u64 << bits) - 1;
        self.words[word] = (self.words[word] & !(mask << shift)) | (u64::from(fp) << shift);
        if shift + bits > 64 {
            let high = shift + bits - 64;
            let high_mask = (1u64 << high) - 1;
            self.words[word + 1] =
                (self.words[word + 1] & !high_mask) | (u64::from(fp) >> (64 - shift));
        }
    }

    fn place(&mut self, bucket: u64, fp: u32) -> bool {
        match (0..BUCKET_SIZE).find(|&s| self.slot(bucket, s) == 0) {
            Some(slot) => {
                self.set_slot(bucket, slot, fp);
                true
            }
            None => false,
        }
    }

    /// Inserts a key hash (a second insert of the same key stores a second copy, as a multiset
    /// does: `remove_hash` then removes one). Fails with [`Full`], leaving the filter unchanged,
    /// when no free slot is found within [`MAX_KICKS`] evictions.
    pub fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Full> {
        let fp = self.fingerprint(hash);
        let i1 = self.bucket(hash);
        let i2 = self.alternate(i1, fp);
        if self.place(i1, fp) || self.place(i2, fp) {
            self.items += 1;
            return Ok(());
        }
        // Evict along a random path, recording every swap so that a failure can be undone.
        let mut path: Vec<(u64, usize, u32)> = Vec::with_capacity(MAX_KICKS);
        let mut bucket = if self.rng.next_u64() & 1 == 0 { i1 } else { i2 };
        let mut carried = fp;
        for _ in 0..MAX_KICKS {
            let slot = self.rng.below(BUCKET_SIZE as u64) as usize;
            let evicted = self.slot(bucket, slot);
            self.set_slot(bucket, slot, carried);
            path.push((bucket, slot, evicted));
            carried = evicted;
            bucket = self.alternate(bucket, carried);
            if self.place(bucket, carried) {
                self.items += 1;
                return Ok(());
            }
        }
        // No room: put every evicted fingerprint back where it was, newest first.
        for (bucket, slot, evicted) in path.into_iter().rev() {
            self.set_slot(bucket, slot, evicted);
        }
        Err(Full)
    }

    /// Whether a key hash may be in the filter.
    #[inline]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        let fp = self.fingerprint(hash);
        let i1 = self.bucket(hash);
        let i2 = self.alternate(i1, fp);
        (0..BUCKET_SIZE).any(|s| self.slot(i1, s) == fp || self.slot(i2, s) == fp)
    }

    /// Copies of the key's fingerprint in its two buckets (RedisBloom's `CF.COUNT`: an upper
    /// bound of the key's insertions).
    pub fn count_hash(&self, hash: KeyHash) -> u64 {
        let fp = self.fingerprint(hash);
        let i1 = self.bucket(hash);
        let i2 = self.alternate(i1, fp);
        let mut count = (0..BUCKET_SIZE).filter(|&s| self.slot(i1, s) == fp).count();
        if i2 != i1 {
            count += (0..BUCKET_SIZE).filter(|&s| self.slot(i2, s) == fp).count();
        }
        count as u64
    }

    /// Removes one copy of a key hash's fingerprint; `false` if none is there. Removing a key
    /// that was never inserted can remove another key's fingerprint (a false negative for it):
    /// callers confirm the key is listed first.
    pub fn remove_hash(&mut self, hash: KeyHash) -> bool {
        let fp = self.fingerprint(hash);
        let i1 = self.bucket(hash);
        let i2 = self.alternate(i1, fp);
        for bucket in [i1, i2] {
            if let Some(slot) = (0..BUCKET_SIZE).find(|&s| self.slot(bucket, s) == fp) {
                self.set_slot(bucket, slot, 0);
                self.items -= 1;
                return true;
            }
        }
        false
    }

    /// Inserts every fingerprint of `other` (same parameters): the union of two filters. Fails
    /// with [`Full`] if one does not fit; the fingerprints placed before stay.
    pub fn union(&mut self, other: &CuckooFilter) -> Result<(), UnionError> {
        if (self.num_buckets, self.fingerprint_bits) != (other.num_buckets, other.fingerprint_bits)
        {
            return Err(UnionError::Incompatible);
        }
        for bucket in 0..other.num_buckets {
            for slot in 0..BUCKET_SIZE {
                let fp = other.slot(bucket, slot);
                if fp != 0 {
                    self.insert_fingerprint(bucket, fp)
                        .map_err(|_| UnionError::Full)?;
                }
            }
        }
        Ok(())
    }

    /// Inserts a fingerprint known to belong in bucket `bucket` (or its alternate).
    fn insert_fingerprint(&mut self, bucket: u64, fp: u32) -> Result<(), Full> {
        // Rebuild a hash whose primary bucket and fingerprint are these, so `insert_hash` does
        // the work (fast_range(h1, B) = bucket for h1 = ⌈bucket·2^64 / B⌉).
        let h1 = ((u128::from(bucket) << 64).div_ceil(u128::from(self.num_buckets))) as u64;
        let h2 = u64::from(fp) << 32;
        self.insert_hash(KeyHash { h1, h2 })
    }

    /// Every stored fingerprint with its bucket (for encoding changes).
    pub fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        (0..self.num_buckets).flat_map(move |b| {
            (0..BUCKET_SIZE).filter_map(move |s| {
                let fp = self.slot(b, s);
                (fp != 0).then_some((b, fp))
            })
        })
    }
}

/// Why two cuckoo filters could not be united.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnionError {
    /// Different bucket counts or fingerprint widths.
    Incompatible,
    /// The union does not fit.
    Full,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(i: u64) -> KeyHash {
        KeyHash::of(&i.to_le_bytes())
    }

    #[test]
    fn sizing_follows_the_paper() {
        assert_eq!(fingerprint_bits(0.01), 10); // log2(800) = 9.64
        assert_eq!(fingerprint_bits(0.001), 13);
        let filter = CuckooFilter::new(1_000_000, 0.01).unwrap();
        assert_eq!(filter.fingerprint_bits(), 10);
        assert_eq!(filter.num_buckets(), 263_158); // ⌈10^6 / (4 · 0.95)⌉
        assert!((cuckoo_bits_per_key(0.01, 0.95) - 10.53).abs() < 0.01);
    }

    #[test]
    fn inserts_queries_counts_and_removes() {
        let mut filter = CuckooFilter::new(10_000, 0.001).unwrap();
        for i in 0..9_000 {
            filter.insert_hash(hash(i)).unwrap();
        }
        assert!((0..9_000).all(|i| filter.contains_hash(hash(i))));
        assert_eq!(filter.items(), 9_000);
        let false_positives = (100_000..200_000)
            .filter(|&i| filter.contains_hash(hash(i)))
            .count();
        // Bound 2bα/2^f = 8 · 0.9 / 8192 ≈ 8.8e-4: 88 expected, 5σ ≈ 47.
        assert!(false_positives < 88 + 47, "{false_positives}");
        for i in 0..4_500 {
            assert!(filter.remove_hash(hash(i)));
        }
        assert!((4_500..9_000).all(|i| filter.contains_hash(hash(i))));
        assert_eq!(filter.items(), 4_500);
        filter.insert_hash(hash(7_000)).unwrap();
        assert!(filter.count_hash(hash(7_000)) >= 2);
    }

    #[test]
    fn a_full_filter_refuses_and_loses_nothing() {
        // 100 buckets of 4: 400 slots. Fill until an insert fails; every key in must stay.
        let mut filter = CuckooFilter::with_params(&CuckooParams {
            num_buckets: 100,
            fingerprint_bits: 12,
            items: 0,
            expected_items: 0,
            target_fpp: None,
        })
        .unwrap();
        let mut inserted = Vec::new();
        let mut refused = 0;
        for i in 0..600 {
            let before = filter.clone();
            match filter.insert_hash(hash(i)) {
                Ok(()) => inserted.push(i),
                Err(Full) => {
                    refused += 1;
                    // Unchanged, slot for slot (the random generator moved on).
                    assert_eq!(filter.words, before.words);
                    assert_eq!(filter.items, before.items);
                }
            }
            assert!(
                inserted.iter().all(|&k| filter.contains_hash(hash(k))),
                "lost a key at {i}"
            );
        }
        assert!(
            refused > 0 && inserted.len() >= 380,
            "{} in, {refused} refused",
            inserted.len()
        );
    }

    #[test]
    fn packed_slots_round_trip_at_every_width() {
        for bits in [1u32, 7, 10, 13, 16, 31, 32] {
            let mut filter = CuckooFilter::with_params(&CuckooParams {
                num_buckets: 37,
                fingerprint_bits: bits,
                items: 0,
                expected_items: 0,
                target_fpp: None,
            })
            .unwrap();
            let max = if bits == 32 {
                u32::MAX
            } else {
                (1 << bits) - 1
            };
            for b in 0..37 {
                for s in 0..BUCKET_SIZE {
                    filter.set_slot(b, s, (b as u32 * 7 + s as u32) % max + 1);
                }
            }
            for b in 0..37 {
                for s in 0..BUCKET_SIZE {
                    assert_eq!(
                        filter.slot(b, s),
                        (b as u32 * 7 + s as u32) % max + 1,
                        "{bits}"
                    );
                }
            }
        }
    }

    #[test]
    fn union_holds_both() {
        let mut a = CuckooFilter::new(2_000, 0.01).unwrap();
        let mut b = a.clone();
        for i in 0..800 {
            a.insert_hash(hash(i)).unwrap();
            b.insert_hash(hash(10_000 + i)).unwrap();
        }
        a.union(&b).unwrap();
        assert!((0..800).all(|i| a.contains_hash(hash(i)) && a.contains_hash(hash(10_000 + i))));
        assert_eq!(a.items(), 1_600);
    }
}
