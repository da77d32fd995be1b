//! A static map from fingerprint prefixes to small values — the structure of a `compact` list:
//! each entry's prefix, and the index of its category set, in about `log₂(u/n) + 2 + c` bits
//! per entry, answered exactly.
//!
//! A 64-bit fingerprint `v` is cut to its prefix in a universe of `u` values by Lemire's fast
//! range, `⌊v · u / 2^64⌋` ([`prefix_in`]): uniform fingerprints give uniform prefixes, and a
//! stranger matches one of `n` distinct prefixes with probability `n / u` ([`map_fpp`]). Any
//! `u`, not only a power of two, so a list asks exactly the universe its rate needs
//! ([`universe_for`]) and pays no rounding of a prefix width.
//!
//! # How it is coded
//! The sorted distinct prefixes are Elias–Fano coded (Elias 1974, Fano 1971; Vigna, "Quasi-
//! succinct indices", 2013): each prefix `p` is split into its *bucket* `p >> L` and its low
//! `L` bits, with `L = ⌊log₂(u/n)⌋` so that there are between `n` and `2n` buckets
//! ([`low_bits`]). The low parts are packed at `L` bits each in prefix order; the buckets are
//! written in unary — for each bucket, one `1` bit per prefix in it, then a `0` — `n + ⌈u/2^L⌉`
//! bits in all. The values are packed at `c` bits each in the same order, so the `i`-th
//! prefix's value is the `i`-th `c`-bit field.
//!
//! A lookup finds where its bucket starts in the unary part (the position after the bucket's
//! preceding zeros: a sample every [`SAMPLE`] buckets, then a scan of a few words), and compares
//! its low part with the bucket's few prefixes (one on average). The samples are derived when
//! the map is made, never stored: they cost `64 / SAMPLE` bits per bucket in memory only.
//!
//! Against the bound: a set of `n` of `u` values holds `log₂ C(u, n) ≈ n (log₂(u/n) + 1.44)`
//! bits of information; Elias–Fano spends `L + 1 + ⌈u/2^L⌉/n` bits per entry, between
//! `log₂(u/n) + 1.91` and `log₂(u/n) + 2` ([`map_bits`]).

use crate::error::{Error, Result};

/// Buckets between two samples of where a bucket starts: a lookup scans the unary code of at
/// most this many buckets (about `2 · SAMPLE` bits: one word or two) from its sample. The
/// samples cost `64 / SAMPLE` bits per bucket in memory — about 2.5 bits per entry, some 6 % of
/// a table at the default rate, never stored — and a lookup scans about one word where 256
/// would take a dozen.
pub const SAMPLE: u64 = 32;

/// Widest value: the index of a category set.
pub const MAX_VALUE_BITS: u32 = 32;

/// Most prefixes a map holds: 2⁴⁰ (a trillion entries, far past any list; a larger count read
/// from a file is damage, refused before any size is computed from it).
pub const MAX_LEN: u64 = 1 << 40;

/// `⌈log₂ n⌉` (0 for 0 and 1).
fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// The prefix of fingerprint `v` in a universe of `universe` values: `⌊v · u / 2^64⌋` (Lemire,
/// "Fast random integer generation in an interval", 2019).
#[inline]
pub fn prefix_in(v: u64, universe: u64) -> u64 {
    ((u128::from(v) * u128::from(universe)) >> 64) as u64
}

/// The rate at which a stranger's prefix matches one of `n` distinct prefixes of a universe of
/// `universe`: `n / u`.
pub fn map_fpp(n: u64, universe: u64) -> f64 {
    (n as f64 / universe as f64).min(1.0)
}

/// The universe that keeps `n` prefixes at rate `fpp` or below: `⌈n / p⌉` (the inverse of
/// [`map_fpp`]), at least `n` and 1, at most `2^64 − 1` (where prefixes are whole fingerprints
/// but one value).
pub fn universe_for(n: u64, fpp: f64) -> u64 {
    let wanted = (n.max(1) as f64 / fpp).ceil();
    if wanted >= u64::MAX as f64 {
        u64::MAX
    } else {
        (wanted as u64).max(n).max(1)
    }
}

/// Low bits per prefix for `n` prefixes of a universe of `universe`: `⌊log₂(u / n)⌋` (0 when
/// `u < 2n`), Elias–Fano's choice, which makes the buckets number between `n` and `2n`.
pub fn low_bits(n: u64, universe: u64) -> u32 {
    let ratio = universe / n.max(1);
    if ratio == 0 {
        0
    } else {
        63 - ratio.leading_zeros()
    }
}

/// Buckets of a map of a universe of `universe` with `low` low bits: `⌈u / 2^L⌉`.
fn buckets(universe: u64, low: u32) -> u64 {
    shr(universe, low) + u64::from(universe & mask(low) != 0)
}

/// Words of the three stored parts of a map of `n` prefixes of a universe of `universe` with
/// `value_bits`-bit values: the unary part, the low parts, the values.
pub fn stored_words(n: u64, universe: u64, value_bits: u32) -> [usize; 3] {
    let low = low_bits(n, universe);
    [
        words_of(n.saturating_add(buckets(universe, low))),
        words_of(n.saturating_mul(u64::from(low))),
        words_of(n.saturating_mul(u64::from(value_bits))),
    ]
}

/// Bits of a map of `n` prefixes of a universe of `universe` with `value_bits`-bit values, as
/// stored (the samples excluded): `n·L + n + ⌈u/2^L⌉ + n·c`.
pub fn map_bits(n: u64, universe: u64, value_bits: u32) -> u64 {
    let low = low_bits(n, universe);
    n * u64::from(low) + n + buckets(universe, low) + n * u64::from(value_bits)
}

/// Bits needed to store each of `count` distinct values `0 … count − 1`: `⌈log₂ count⌉`.
pub fn value_bits(count: u64) -> u32 {
    ceil_log2(count)
}

/// `x >> s`, 0 when `s` is 64 (a shift Rust would refuse).
#[inline]
fn shr(x: u64, s: u32) -> u64 {
    x.checked_shr(s).unwrap_or(0)
}

/// The low `width` bits set.
#[inline]
fn mask(width: u32) -> u64 {
    shr(u64::MAX, 64 - width)
}

/// Words of `bits` bits.
fn words_of(bits: u64) -> usize {
    bits.div_ceil(64) as usize
}

/// The `width`-bit field `index` of packed little-endian words (one word of padding after the
/// data, so a field that ends in the last data word can read the next one).
#[inline]
fn field(words: &[u64], index: u64, width: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let bit = index * u64::from(width);
    let (word, offset) = ((bit / 64) as usize, (bit % 64) as u32);
    let mut value = words[word] >> offset;
    if offset + width > 64 {
        value |= words[word + 1] << (64 - offset);
    }
    value & mask(width)
}

/// Writes the `width`-bit field `index` (the field must be zero).
fn set_field(words: &mut [u64], index: u64, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let bit = index * u64::from(width);
    let (word, offset) = ((bit / 64) as usize, (bit % 64) as u32);
    words[word] |= value << offset;
    if offset + width > 64 {
        words[word + 1] |= value >> (64 - offset);
    }
}

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th set bit (from 0) of byte `b` (8 where it
/// has no such bit), so that the last step of [`select_in_word`] is a load, not a loop whose
/// length the processor cannot predict.
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if byte >> bit & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// The position of the `k`-th set bit (from 0) of `word`, which has more than `k` set bits,
/// without a loop: the byte that holds it from the bytes' running popcounts (broadword, Vigna,
/// "Broadword implementation of rank/select queries", 2008, §5), then the bit within that byte
/// from [`SELECT_IN_BYTE`].
#[inline]
fn select_in_word(word: u64, k: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Popcount of each byte, then running sums: byte i holds the set bits of bytes 0 … i.
    let mut bytes = word - ((word >> 1) & 0x5555_5555_5555_5555);
    bytes = (bytes & 0x3333_3333_3333_3333) + ((bytes >> 2) & 0x3333_3333_3333_3333);
    bytes = (bytes + (bytes >> 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    let running = bytes.wrapping_mul(ONES);
    // Bytes whose running sum is at most k (each sum ≤ 64 < 128, so the high bit of
    // (k | 0x80) − sum is set exactly when sum ≤ k): their count is the byte holding bit k.
    let at_most = (((u64::from(k) * ONES) | HIGHS) - running) & HIGHS;
    let byte = at_most.count_ones() * 8;
    // The set bits before that byte (the running sum of the byte before it; 0 for byte 0).
    let before = ((running << 8) >> byte) as u32 & 0xFF;
    let within = (word >> byte) as usize & 0xFF;
    byte + u32::from(SELECT_IN_BYTE[within][(k - before) as usize & 7])
}

/// The stored parts of a [`PrefixMap`], as a file holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixMapParts {
    /// The universe `u` the prefixes are below, at least 1.
    pub universe: u64,
    /// Value bits `c`, 0–32.
    pub value_bits: u32,
    /// Prefixes `n`.
    pub len: u64,
    /// The unary bucket counts, `n + ⌈u/2^L⌉` bits in `⌈…/64⌉` words.
    pub upper: Vec<u64>,
    /// The low parts, `n·L` bits in `⌈…/64⌉` words.
    pub lower: Vec<u64>,
    /// The values, `n·c` bits in `⌈…/64⌉` words.
    pub values: Vec<u64>,
}

/// Sorted distinct `b`-bit prefixes, each with a value below `2^c` (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixMap {
    universe: u64,
    buckets: u64,
    low_bits: u32,
    value_bits: u32,
    len: u64,
    /// Each of the three with one zero word of padding after its data.
    upper: Vec<u64>,
    lower: Vec<u64>,
    values: Vec<u64>,
    /// `samples[t]`: the position in `upper` where bucket `t · SAMPLE` starts.
    samples: Vec<u64>,
}

impl PrefixMap {
    /// The map of `entries` — `(prefix, value)` pairs, strictly ascending by prefix, each prefix
    /// below `universe` and each value below `2^value_bits`.
    pub fn build(entries: &[(u64, u32)], universe: u64, value_bits: u32) -> Result<Self> {
        check_widths(universe, value_bits)?;
        let n = entries.len() as u64;
        check_len(n, universe)?;
        let low = low_bits(n, universe);
        let buckets = buckets(universe, low);
        let mut upper = vec![0u64; words_of(n + buckets)];
        let mut lower = vec![0u64; words_of(n * u64::from(low)) + 1];
        let mut values = vec![0u64; words_of(n * u64::from(value_bits)) + 1];
        let mut previous = None;
        for (i, &(prefix, value)) in entries.iter().enumerate() {
            if prefix >= universe || u64::from(value) > mask(value_bits) {
                return Err(Error::invalid(
                    "prefix map entry",
                    format!("{prefix:#x} → {value}"),
                    format!("prefixes must be below {universe} and values below 2^{value_bits}"),
                ));
            }
            if previous.is_some_and(|p| p >= prefix) {
                return Err(Error::invalid(
                    "prefix map entries",
                    format!("{prefix:#x} after {:#x}", previous.unwrap_or(0)),
                    "prefixes must be strictly ascending",
                ));
            }
            previous = Some(prefix);
            let at = i as u64 + shr(prefix, low);
            upper[(at / 64) as usize] |= 1 << (at % 64);
            set_field(&mut lower, i as u64, low, prefix & mask(low));
            set_field(&mut values, i as u64, value_bits, u64::from(value));
        }
        upper.push(0);
        Ok(Self::assemble(PrefixMapParts {
            universe,
            value_bits,
            len: n,
            upper,
            lower,
            values,
        }))
    }

    /// A map as a file stores it, checked whole: the unary part holds exactly `n` ones among
    /// `n + ⌈u/2^L⌉` bits, every padding bit is zero, and the prefixes it decodes are strictly
    /// ascending. Values are checked by the caller (what they index is its).
    pub fn from_parts(mut parts: PrefixMapParts) -> Result<Self> {
        let (universe, value_bits, n) = (parts.universe, parts.value_bits, parts.len);
        check_widths(universe, value_bits)?;
        check_len(n, universe).map_err(|_| corrupt(format!("it says it holds {n} prefixes")))?;
        let low = low_bits(n, universe);
        // At most 2^40 + 2^41 + 1 (buckets ≤ 2n, or 2 when n = 0): no overflow.
        let upper_bits = n + buckets(universe, low);
        for (name, words, used) in [
            ("unary part", &parts.upper, upper_bits),
            ("low parts", &parts.lower, n.saturating_mul(u64::from(low))),
            (
                "values",
                &parts.values,
                n.saturating_mul(u64::from(value_bits)),
            ),
        ] {
            if words.len() != words_of(used) {
                return Err(corrupt(format!(
                    "its {name} has {} words where {used} bits need {}",
                    words.len(),
                    words_of(used)
                )));
            }
            if used % 64 != 0
                && words
                    .last()
                    .is_some_and(|&w| shr(w, (used % 64) as u32) != 0)
            {
                return Err(corrupt(format!("its {name} has padding bits set")));
            }
        }
        let ones: u64 = parts.upper.iter().map(|w| u64::from(w.count_ones())).sum();
        if ones != n {
            return Err(corrupt(format!(
                "its unary part holds {ones} prefixes where the map says {n}"
            )));
        }
        // The last bit ends the last bucket: a one after it would be in no bucket.
        let last = upper_bits - 1;
        if parts.upper[(last / 64) as usize] >> (last % 64) & 1 == 1 {
            return Err(corrupt(
                "its unary part does not end with a bucket's end".into(),
            ));
        }
        parts.upper.push(0);
        parts.lower.push(0);
        parts.values.push(0);
        let map = Self::assemble(parts);
        map.check_ascending()?;
        Ok(map)
    }

    /// The map of its parts (each with its padding word), with the samples derived.
    fn assemble(parts: PrefixMapParts) -> Self {
        let PrefixMapParts {
            universe,
            value_bits,
            len,
            upper,
            lower,
            values,
        } = parts;
        let low_bits = low_bits(len, universe);
        let buckets = buckets(universe, low_bits);
        let mut samples = Vec::with_capacity(buckets.div_ceil(SAMPLE) as usize);
        let mut zeros = 0u64;
        for (w, &word) in upper.iter().enumerate() {
            let inverted = !word;
            let count = u64::from(inverted.count_ones());
            // A sample is due after every SAMPLE-th zero (bucket t·SAMPLE starts right after
            // the zero that ends bucket t·SAMPLE − 1); bucket 0 starts at 0.
            while (samples.len() as u64) * SAMPLE < buckets
                && samples.len() as u64 * SAMPLE <= zeros + count
            {
                let target = samples.len() as u64 * SAMPLE;
                if target == 0 {
                    samples.push(0);
                    continue;
                }
                let k = (target - zeros - 1) as u32;
                samples.push(w as u64 * 64 + u64::from(select_in_word(inverted, k)) + 1);
            }
            zeros += count;
        }
        PrefixMap {
            universe,
            buckets,
            low_bits,
            value_bits,
            len,
            upper,
            lower,
            values,
            samples,
        }
    }

    /// Refuses a map whose prefixes are not strictly ascending (equal low parts in one bucket,
    /// or a bucket's low parts out of order) or not below the universe (the last bucket's).
    fn check_ascending(&self) -> Result<()> {
        let mut previous: Option<u64> = None;
        for (prefix, _) in self.iter() {
            if prefix >= self.universe {
                return Err(corrupt(format!(
                    "its prefix {prefix:#x} is not below its universe {}",
                    self.universe
                )));
            }
            if previous.is_some_and(|p| p >= prefix) {
                return Err(corrupt(format!(
                    "its prefix {prefix:#x} does not ascend from the one before"
                )));
            }
            previous = Some(prefix);
        }
        Ok(())
    }

    /// The position in the unary part where `bucket` starts.
    #[inline]
    fn bucket_start(&self, bucket: u64) -> u64 {
        let sample = bucket / SAMPLE;
        let mut position = self.samples[sample as usize];
        let mut skip = bucket - sample * SAMPLE;
        while skip > 0 {
            let word = (position / 64) as usize;
            let offset = (position % 64) as u32;
            // The zeros from `position` to the word's end (the shift fills with zeros, which the
            // inversion made before it: they are not counted).
            let zeros = !self.upper[word] >> offset;
            let count = u64::from(zeros.count_ones());
            if count >= skip {
                return position + u64::from(select_in_word(zeros, (skip - 1) as u32)) + 1;
            }
            skip -= count;
            position = (word as u64 + 1) * 64;
        }
        position
    }

    /// The index of `prefix` among the map's prefixes, if it is one.
    #[inline]
    pub fn rank(&self, prefix: u64) -> Option<u64> {
        let bucket = shr(prefix, self.low_bits);
        if bucket >= self.buckets {
            return None;
        }
        let low = prefix & mask(self.low_bits);
        let mut position = self.bucket_start(bucket);
        let mut rank = position - bucket;
        while self.upper[(position / 64) as usize] >> (position % 64) & 1 == 1 {
            let here = field(&self.lower, rank, self.low_bits);
            if here >= low {
                return (here == low).then_some(rank);
            }
            position += 1;
            rank += 1;
        }
        None
    }

    /// The value of `prefix`, if it is one of the map's prefixes.
    #[inline]
    pub fn get(&self, prefix: u64) -> Option<u32> {
        self.rank(prefix).map(|rank| self.value(rank))
    }

    /// The value of the prefix of index `rank` (below [`PrefixMap::len`]).
    #[inline]
    pub fn value(&self, rank: u64) -> u32 {
        // At most MAX_VALUE_BITS wide: fits.
        field(&self.values, rank, self.value_bits) as u32
    }

    /// Every `(prefix, value)`, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let mut position = 0u64;
        let mut bucket = 0u64;
        (0..self.len).map(move |rank| {
            while self.upper[(position / 64) as usize] >> (position % 64) & 1 == 0 {
                position += 1;
                bucket += 1;
            }
            position += 1;
            // With L = 64 there is one bucket, 0.
            let prefix = bucket.checked_shl(self.low_bits).unwrap_or(0)
                | field(&self.lower, rank, self.low_bits);
            (prefix, self.value(rank))
        })
    }

    /// The universe `u` of the prefixes.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// The prefix of fingerprint `v` in this map's universe ([`prefix_in`]).
    #[inline]
    pub fn prefix_of(&self, v: u64) -> u64 {
        prefix_in(v, self.universe)
    }

    /// Value bits `c`.
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// Prefixes held.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it holds no prefix.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rate at which a stranger's prefix matches: `n / u`.
    pub fn expected_fpp(&self) -> f64 {
        map_fpp(self.len, self.universe)
    }

    /// The stored parts (padding words dropped), for a file.
    pub fn parts(&self) -> PrefixMapParts {
        let trim = |words: &[u64]| words[..words.len() - 1].to_vec();
        PrefixMapParts {
            universe: self.universe,
            value_bits: self.value_bits,
            len: self.len,
            upper: trim(&self.upper),
            lower: trim(&self.lower),
            values: trim(&self.values),
        }
    }

    /// Bits as stored: [`map_bits`].
    pub fn stored_bits(&self) -> u64 {
        map_bits(self.len, self.universe, self.value_bits)
    }

    /// Bytes in memory: the three parts with their padding and the samples.
    pub fn size_in_bytes(&self) -> u64 {
        8 * (self.upper.len() + self.lower.len() + self.values.len() + self.samples.len()) as u64
    }
}

/// Refuses an empty universe or value widths out of range.
fn check_widths(universe: u64, value_bits: u32) -> Result<()> {
    if universe == 0 {
        return Err(Error::invalid(
            "prefix universe",
            universe,
            "must be at least 1",
        ));
    }
    if value_bits > MAX_VALUE_BITS {
        return Err(Error::invalid(
            "value bits",
            value_bits,
            format!("must be at most {MAX_VALUE_BITS}"),
        ));
    }
    Ok(())
}

/// Refuses more prefixes than [`MAX_LEN`] or than the universe holds distinct values.
fn check_len(n: u64, universe: u64) -> Result<()> {
    if n > MAX_LEN || n > universe {
        return Err(Error::invalid(
            "prefix count",
            n,
            format!("must be at most 2^40 and at most the universe, {universe}"),
        ));
    }
    Ok(())
}

/// A stored map that does not decode.
fn corrupt(detail: String) -> Error {
    Error::Corrupt {
        what: "compact prefix map",
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use proptest::prelude::*;

    /// About `n` distinct random prefixes of `universe`, sorted, with values of `value_bits`.
    fn sorted_prefixes(n: usize, universe: u64, value_bits: u32, seed: u64) -> Vec<(u64, u32)> {
        let mut rng = SplitMix64::new(seed);
        let mut prefixes: Vec<u64> = (0..n)
            .map(|_| prefix_in(rng.next_u64(), universe))
            .collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        prefixes
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p, (i as u64 & mask(value_bits)) as u32))
            .collect()
    }

    #[test]
    fn every_prefix_is_found_with_its_value_and_its_neighbours_are_not() {
        for (n, universe) in [
            (0, 20),
            (1, 1),
            (1, u64::MAX),
            (3, 3),
            (1000, 1 << 40),
            (20_000, u64::MAX),
            (5000, 8191),
            (777, 10_000_019),
        ] {
            let entries = sorted_prefixes(n, universe, 3, n as u64 ^ universe);
            let map = PrefixMap::build(&entries, universe, 3).unwrap();
            assert_eq!(map.len(), entries.len() as u64);
            for (rank, &(prefix, value)) in entries.iter().enumerate() {
                assert_eq!(map.rank(prefix), Some(rank as u64), "n {n} u {universe}");
                assert_eq!(map.get(prefix), Some(value));
                for other in [prefix.wrapping_add(1), prefix.wrapping_sub(1)] {
                    let held = entries.binary_search_by_key(&other, |e| e.0).is_ok();
                    assert_eq!(map.rank(other).is_some(), held);
                }
            }
            assert!(map.iter().eq(entries.iter().copied()));
        }
    }

    #[test]
    fn stored_parts_read_back_and_damage_is_refused() {
        let entries = sorted_prefixes(3000, 1 << 45, 2, 7);
        let map = PrefixMap::build(&entries, 1 << 45, 2).unwrap();
        let parts = map.parts();
        assert_eq!(PrefixMap::from_parts(parts.clone()).unwrap(), map);
        let stored = 64 * (parts.upper.len() + parts.lower.len() + parts.values.len()) as u64;
        assert!(stored - map.stored_bits() < 3 * 64);
        let mut extra_one = parts.clone();
        let last = extra_one.upper.len() - 1;
        extra_one.upper[last] |= 1 << 63;
        assert!(PrefixMap::from_parts(extra_one).is_err());
        let mut short = parts.clone();
        short.lower.pop();
        assert!(PrefixMap::from_parts(short).is_err());
        let mut smaller = parts;
        smaller.universe = entries.last().unwrap().0;
        assert!(PrefixMap::from_parts(smaller).is_err());
    }

    #[test]
    fn select_in_word_finds_every_set_bit() {
        let mut rng = SplitMix64::new(5);
        for word in (0..2000)
            .map(|_| rng.next_u64())
            .chain([1, u64::MAX, 1 << 63, 0xFF00])
        {
            let positions: Vec<u32> = (0..64).filter(|&i| word >> i & 1 == 1).collect();
            for (k, &position) in positions.iter().enumerate() {
                assert_eq!(select_in_word(word, k as u32), position, "{word:#x} k {k}");
            }
        }
    }

    #[test]
    fn prefixes_out_of_order_are_refused() {
        // Two prefixes of one bucket (u = 16, n = 2: L = 3, buckets 0 and 1), low parts swapped.
        let map = PrefixMap::build(&[(0b1000, 0), (0b1001, 0)], 16, 0).unwrap();
        let mut parts = map.parts();
        assert_eq!(parts.lower, [0b001_000]);
        parts.lower[0] = 0b000_001;
        assert!(PrefixMap::from_parts(parts).is_err());
    }

    #[test]
    fn bits_per_prefix_are_within_two_of_the_universe_ratio_and_the_rate_holds() {
        for universe in [1u64 << 50, 3 << 48, 100_000 * 1_000_003] {
            let entries = sorted_prefixes(100_000, universe, 0, 3);
            let map = PrefixMap::build(&entries, universe, 0).unwrap();
            let per = map.stored_bits() as f64 / map.len() as f64;
            let ratio = (universe as f64 / map.len() as f64).log2();
            assert!(
                per >= ratio + 1.9 && per <= ratio + 2.01,
                "{per} bits at log₂(u/n) {ratio}"
            );
        }
        assert_eq!(universe_for(1000, 0.001), 1_000_000);
        assert!((map_fpp(1000, universe_for(1000, 3e-7)) - 3e-7).abs() < 1e-12);
        assert_eq!(universe_for(10, 1e-30), u64::MAX);
    }

    proptest! {
        #[test]
        fn lookups_agree_with_a_sorted_vector(
            raw in proptest::collection::vec(any::<u64>(), 0..400),
            universe in 1u64..,
            probes in proptest::collection::vec(any::<u64>(), 0..50),
        ) {
            let mut prefixes: Vec<u64> = raw.iter().map(|&v| prefix_in(v, universe)).collect();
            prefixes.sort_unstable();
            prefixes.dedup();
            let entries: Vec<(u64, u32)> = prefixes.iter().map(|&p| (p, (p % 7) as u32)).collect();
            let map = PrefixMap::build(&entries, universe, 3).unwrap();
            for probe in probes.iter().map(|&v| prefix_in(v, universe)).chain(prefixes.iter().copied()) {
                let expected = prefixes.binary_search(&probe).ok().map(|i| i as u64);
                prop_assert_eq!(map.rank(probe), expected);
            }
            prop_assert_eq!(PrefixMap::from_parts(map.parts()).unwrap(), map);
        }
    }
}
