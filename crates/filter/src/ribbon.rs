//! A static ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller than Bloom
//! and Xor", 2021): a set of 64-bit key fingerprints in about `f · (1 + ε)` bits per key with a
//! false-positive rate of `2^-f`, where ε is a few per cent — closer to the `log₂(1/p)` bound
//! than a prefix set can be (a Golomb–Rice coded prefix set costs `log₂(1/p) + 1.5` bits per
//! key, and its entropy alone is `log₂(1/p) + 1.44`).
//!
//! phishbloom uses it for the additions of a compact delta (and the patch a Bloom list keeps
//! from it): built once by the sender, never changed, probed beside the list's filter.
//!
//! # How it works
//! Each key `v` gets, from a SplitMix64 sequence seeded with `v ⊕ seed` (`RibbonFilter::row`),
//! a start `s` in `0..=m − w`, a `w`-bit coefficient row `c` with its lowest bit set, and an
//! `f`-bit result `r`. The filter stores `f` columns of `m` bits, `Z`, solving for every key
//! `⊕_{j : c_j = 1} Z[s + j] = r` (GF(2)). The band of width `w` (128, or `m` when smaller)
//! makes the linear system solvable by on-the-fly Gaussian elimination in O(n · w / 64) words;
//! a key is reported present when its equation holds, which for a stranger happens with
//! probability exactly `2^-f` (its `r` is independent of its row). A system that does not
//! solve (two rows dependent) is retried with another seed or a few more slots: the sender
//! picks the smallest `m` that works ([`RibbonFilter::build`]).

use crate::error::{Error, Result};
use crate::hash::fast_range;
use crate::rng::SplitMix64;

/// Band width `w`: coefficient rows are 128 bits (one `u128`), the "standard ribbon" of the
/// paper at w = 128, whose slot overhead for n in the thousands is a few per cent.
pub const WIDTH: u64 = 128;

/// Largest fingerprint width: results are held in a `u32`.
pub const MAX_BITS: u32 = 32;

/// Seeds tried at each slot count before the builder adds slots (each try fails independently
/// with the same probability, so a few seeds find a solvable system at a smaller m).
const SEEDS_PER_SIZE: u64 = 8;

/// False-positive rate of a ribbon filter with `bits`-bit results: `2^-f` (a stranger's
/// result is uniform and independent of the equation it is checked against).
pub fn ribbon_fpp(bits: u32) -> f64 {
    2f64.powi(-(bits as i32))
}

/// Result bits that keep a ribbon filter at rate `fpp` or below: `⌈log₂(1/p)⌉` (the inverse of
/// [`ribbon_fpp`]), between 1 and [`MAX_BITS`].
pub fn ribbon_bits(fpp: f64) -> u32 {
    (1.0 / fpp).log2().ceil().clamp(1.0, f64::from(MAX_BITS)) as u32
}

/// Bytes of the solution of `slots` slots of `bits` bits: `⌈f · m / 8⌉`.
pub fn solution_bytes(bits: u32, slots: u64) -> u64 {
    (u64::from(bits) * slots).div_ceil(8)
}

/// A static set of 64-bit fingerprints (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RibbonFilter {
    bits: u32,
    slots: u64,
    seed: u64,
    items: u64,
    /// The `f` columns of `m` bits, column `k` at bits `k·m ..`, little-endian words, with two
    /// zero words of padding so that 128 bits can be read at any position.
    words: Vec<u64>,
}

/// One key's equation.
struct Row {
    start: u64,
    coefficients: u128,
    result: u32,
}

impl RibbonFilter {
    /// Band width for `slots` slots: [`WIDTH`], or `m` when smaller.
    fn width(slots: u64) -> u64 {
        WIDTH.min(slots)
    }

    /// A key's equation in a filter of `slots` slots with `bits`-bit results: from SplitMix64
    /// seeded with `v ⊕ seed`, the first output gives the start (`⌊x · (m − w + 1) / 2^64⌋`),
    /// the second and third the coefficients (low then high 64 bits, cut to `w` bits, lowest
    /// bit set), the top `f` bits of the fourth the result.
    fn row(fingerprint: u64, seed: u64, slots: u64, bits: u32) -> Row {
        let width = Self::width(slots);
        let mut rng = SplitMix64::new(fingerprint ^ seed);
        let start = fast_range(rng.next_u64(), slots - width + 1);
        let low = u128::from(rng.next_u64());
        let high = u128::from(rng.next_u64());
        let mask = if width == 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        let coefficients = ((high << 64 | low) & mask) | 1;
        let result = (rng.next_u64() >> (64 - bits)) as u32;
        Row {
            start,
            coefficients,
            result,
        }
    }

    /// Solves the system for `fingerprints` (distinct or not) in `slots` slots with `seed`:
    /// `None` when two rows are dependent with different results.
    pub fn try_build(fingerprints: &[u64], bits: u32, slots: u64, seed: u64) -> Option<Self> {
        if !(1..=MAX_BITS).contains(&bits) || slots == 0 {
            return None;
        }
        let m = usize::try_from(slots).ok()?;
        let mut coefficients = vec![0u128; m];
        let mut results = vec![0u32; m];
        for &v in fingerprints {
            let Row {
                start,
                coefficients: mut c,
                result: mut r,
            } = Self::row(v, seed, slots, bits);
            let mut at = start as usize;
            loop {
                if c == 0 {
                    // A row the others imply: the same key twice (fine), or a conflict.
                    if r == 0 {
                        break;
                    }
                    return None;
                }
                let shift = c.trailing_zeros();
                at += shift as usize;
                c >>= shift;
                if coefficients[at] == 0 {
                    coefficients[at] = c;
                    results[at] = r;
                    break;
                }
                c ^= coefficients[at];
                r ^= results[at];
            }
        }
        // Back substitution, last slot first: `state[k]` holds column k's bits from the slot
        // being solved on (bit j = Z_k[i + j]).
        let mut filter = RibbonFilter {
            bits,
            slots,
            seed,
            items: fingerprints.len() as u64,
            words: vec![0; Self::word_count(bits, slots)],
        };
        let mut state = vec![0u128; bits as usize];
        for i in (0..m).rev() {
            let (c, r) = (coefficients[i], results[i]);
            for (k, column) in state.iter_mut().enumerate() {
                let shifted = *column << 1;
                // An empty slot is a free variable: 0.
                let bit = if c == 0 {
                    0
                } else {
                    (((r >> k) & 1) as u128) ^ u128::from((shifted & c).count_ones() & 1)
                };
                *column = shifted | bit;
                if bit == 1 {
                    let at = k as u64 * slots + i as u64;
                    filter.words[(at / 64) as usize] |= 1 << (at % 64);
                }
            }
        }
        Some(filter)
    }

    /// Builds a filter of `fingerprints` with `bits`-bit results (rate `2^-bits`) in the fewest
    /// slots it finds: from `n` slots up in steps of 1/256 of n (at least one), trying
    /// `SEEDS_PER_SIZE` seeds at each size.
    pub fn build(fingerprints: &[u64], bits: u32) -> Result<Self> {
        if !(1..=MAX_BITS).contains(&bits) {
            return Err(Error::invalid(
                "ribbon result bits",
                bits,
                "between 1 and 32",
            ));
        }
        let mut distinct = fingerprints.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let n = distinct.len() as u64;
        // The step: 1/256 of n, so that the search ends within ~0.4 % of the smallest size.
        let step = (n / 256).max(1);
        let mut slots = n.max(1);
        // Twice the keys plus a band always solves in practice; the bound only stops a loop.
        while slots <= 2 * n + WIDTH {
            for seed in 0..SEEDS_PER_SIZE {
                if let Some(filter) = Self::try_build(&distinct, bits, slots, seed) {
                    return Ok(filter);
                }
            }
            slots += step;
        }
        Err(Error::invalid(
            "ribbon filter",
            n,
            "no solvable system was found (duplicate fingerprints?)",
        ))
    }

    fn word_count(bits: u32, slots: u64) -> usize {
        (u64::from(bits) * slots).div_ceil(64) as usize + 2
    }

    /// 128 bits of the solution from bit `at` on.
    #[inline]
    fn window(&self, at: u64) -> u128 {
        let word = (at / 64) as usize;
        let shift = (at % 64) as u32;
        let low = u128::from(self.words[word]) | u128::from(self.words[word + 1]) << 64;
        if shift == 0 {
            low
        } else {
            low >> shift | u128::from(self.words[word + 2]) << (128 - shift)
        }
    }

    /// Whether a fingerprint may be in the set (always, when it was built in).
    #[inline]
    pub fn contains(&self, fingerprint: u64) -> bool {
        let row = Self::row(fingerprint, self.seed, self.slots, self.bits);
        (0..self.bits).all(|k| {
            let window = self.window(u64::from(k) * self.slots + row.start);
            (window & row.coefficients).count_ones() & 1 == (row.result >> k) & 1
        })
    }

    /// Result bits `f`.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Slots `m`.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The hashing seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Keys it was built from.
    pub fn len(&self) -> u64 {
        self.items
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Its false-positive rate, `2^-f`.
    pub fn expected_fpp(&self) -> f64 {
        ribbon_fpp(self.bits)
    }

    /// Bytes in memory (the solution).
    pub fn size_in_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The solution as stored: `⌈f · m / 8⌉` bytes, bit `k·m + i` (`Z_k[i]`) at byte
    /// `⌊(k·m + i)/8⌋`, bit `(k·m + i) mod 8`; the last byte's unused bits zero.
    pub fn solution(&self) -> Vec<u8> {
        let len = solution_bytes(self.bits, self.slots) as usize;
        self.words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .take(len)
            .collect()
    }

    /// A filter from its parameters and [`RibbonFilter::solution`]: refuses a length that is
    /// not `⌈f · m / 8⌉`, set padding bits, or parameters out of range.
    pub fn from_solution(
        bits: u32,
        slots: u64,
        seed: u64,
        items: u64,
        solution: &[u8],
    ) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            what: "ribbon filter",
            detail,
        };
        if !(1..=MAX_BITS).contains(&bits) || slots == 0 || items > slots {
            return Err(corrupt(format!(
                "{bits}-bit results, {slots} slots, {items} keys"
            )));
        }
        let expected = u64::from(bits)
            .checked_mul(slots)
            .map(|b| b.div_ceil(8))
            .filter(|&len| len == solution.len() as u64);
        if expected.is_none() {
            return Err(corrupt(format!(
                "{} bytes for {slots} slots of {bits} bits",
                solution.len()
            )));
        }
        let used = u64::from(bits) * slots;
        if !used.is_multiple_of(8) && solution.last().is_some_and(|&b| b >> (used % 8) != 0) {
            return Err(corrupt("padding bits are set".into()));
        }
        let mut words = vec![0u64; Self::word_count(bits, slots)];
        for (word, chunk) in words.iter_mut().zip(solution.chunks(8)) {
            let mut bytes = [0u8; 8];
            bytes[..chunk.len()].copy_from_slice(chunk);
            *word = u64::from_le_bytes(bytes);
        }
        Ok(RibbonFilter {
            bits,
            slots,
            seed,
            items,
            words,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: u64, seed: u64) -> Vec<u64> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn every_key_is_found_and_strangers_match_at_about_two_to_minus_f() {
        for n in [1u64, 2, 5, 64, 100, 1_000, 10_000] {
            let set = keys(n, n);
            let filter = RibbonFilter::build(&set, 7).unwrap();
            assert!(set.iter().all(|&v| filter.contains(v)), "n = {n}");
            assert!(filter.slots() >= n);
            let trials = 200_000;
            let hits = keys(trials, 99)
                .iter()
                .filter(|&&v| filter.contains(v))
                .count();
            let rate = hits as f64 / trials as f64;
            assert!((rate - ribbon_fpp(7)).abs() < 0.002, "n = {n}: {rate}");
        }
    }

    #[test]
    fn the_slot_overhead_is_a_few_per_cent() {
        for n in [1_000u64, 10_000] {
            let filter = RibbonFilter::build(&keys(n, 1), 7).unwrap();
            let overhead = filter.slots() as f64 / n as f64;
            assert!(overhead < 1.08, "n = {n}: {overhead}");
        }
    }

    #[test]
    fn a_stored_solution_round_trips_and_damage_is_refused() {
        let set = keys(300, 3);
        let filter = RibbonFilter::build(&set, 9).unwrap();
        let solution = filter.solution();
        assert_eq!(solution.len() as u64, solution_bytes(9, filter.slots()));
        let back =
            RibbonFilter::from_solution(9, filter.slots(), filter.seed(), 300, &solution).unwrap();
        assert_eq!(back, filter);
        assert!(RibbonFilter::from_solution(9, filter.slots(), 0, 300, &solution[1..]).is_err());
        assert!(RibbonFilter::from_solution(0, filter.slots(), 0, 300, &solution).is_err());
        assert!(RibbonFilter::from_solution(33, filter.slots(), 0, 300, &solution).is_err());
        assert!(RibbonFilter::from_solution(9, 10, 0, 300, &solution).is_err());
    }

    #[test]
    fn sizing_inverts_the_rate() {
        assert_eq!(ribbon_bits(0.01), 7);
        assert_eq!(ribbon_bits(2f64.powi(-7)), 7);
        assert_eq!(ribbon_bits(1e-30), MAX_BITS);
        assert_eq!(solution_bytes(7, 9), 8);
    }
}
