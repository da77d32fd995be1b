//! Golomb–Rice coding of sorted integers (Golomb 1966; Rice 1979): the gaps between
//! consecutive values of a sorted set, each written as a unary quotient and `r` remainder bits.
//! Safe Browsing v4 ships its hash-prefix additions this way; phishbloom uses it for the
//! entries of a delta and for the prefix sets of a patched list (Putze, Sanders & Singler's
//! Golomb-coded sets).
//!
//! A sorted multiset of `n` values spread over `U` costs about `n·(log₂(U/n) + 1.5)` bits — near
//! the entropy bound `n·(log₂(U/n) + log₂ e)` of a random n-subset of U.
//!
//! # Encoding
//! Bits are written least significant first into bytes. Each value is coded as its gap `g` from
//! the previous value (the first from 0): `q = g >> r` as `q` one bits and a zero, then the low
//! `r` bits of `g`. A quotient of [`ESCAPE`] or more is written as [`ESCAPE`] ones and the zero,
//! then the whole gap in 64 bits, so that no run of ones — and no decoding loop — is longer than
//! [`ESCAPE`] whatever the input. The count and `r` are stored by the caller.

use crate::error::{Error, Result};

/// Quotients from this value on are escaped (written as the gap in 64 bits).
pub const ESCAPE: u64 = 64;

/// The Rice parameter for `count` values spread over `universe`: the `r` that makes `2^r`
/// closest to the median gap, `⌊log₂(mean gap · ln 2)⌋` (Gallager & van Voorhis 1975: the
/// optimal Golomb parameter of a geometric source with mean μ is near μ·ln 2).
pub fn rice_parameter(count: u64, universe: u128) -> u32 {
    if count == 0 {
        return 0;
    }
    let mean = universe as f64 / count as f64;
    (mean * std::f64::consts::LN_2)
        .log2()
        .floor()
        .clamp(0.0, 63.0) as u32
}

/// Bits that [`encode`] writes for these sorted values at parameter `r`.
pub fn encoded_bits(values: &[u64], r: u32) -> u64 {
    let mut previous = 0;
    values
        .iter()
        .map(|&value| {
            let gap = value - previous;
            previous = value;
            let q = gap >> r;
            if q >= ESCAPE {
                ESCAPE + 1 + 64
            } else {
                q + 1 + u64::from(r)
            }
        })
        .sum()
}

/// The parameter that codes `values` in the fewest bits: the formula's, or one either side of
/// it (measured, so that sets that are not uniform are coded well too).
pub fn best_parameter(values: &[u64], universe: u128) -> u32 {
    let guess = rice_parameter(values.len() as u64, universe);
    [guess.saturating_sub(1), guess, (guess + 1).min(63)]
        .into_iter()
        .min_by_key(|&r| encoded_bits(values, r))
        .unwrap_or(guess)
}

/// Little-endian bit writer.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    /// Bits used in the last byte (0 means the last byte is full or there is none).
    used: u32,
}

impl BitWriter {
    fn bit(&mut self, one: bool) {
        if self.used == 0 {
            self.bytes.push(0);
        }
        if one {
            // A byte was pushed above when `used` was 0, so `last_mut` exists.
            if let Some(last) = self.bytes.last_mut() {
                *last |= 1 << self.used;
            }
        }
        self.used = (self.used + 1) % 8;
    }

    fn bits(&mut self, value: u64, count: u32) {
        for i in 0..count {
            self.bit(value >> i & 1 == 1);
        }
    }
}

/// Codes sorted values (ascending; equal values allowed) at parameter `r` (at most 63).
///
/// # Panics
/// If the values are not sorted (a caller's bug: every caller sorts first).
pub fn encode(values: &[u64], r: u32) -> Vec<u8> {
    assert!(
        values.windows(2).all(|w| w[0] <= w[1]),
        "values must be sorted"
    );
    let r = r.min(63);
    let mut writer = BitWriter::default();
    let mut previous = 0;
    for &value in values {
        let gap = value - previous;
        previous = value;
        let q = gap >> r;
        if q >= ESCAPE {
            writer.bits(u64::MAX, ESCAPE as u32);
            writer.bit(false);
            writer.bits(gap, 64);
        } else {
            writer.bits(u64::MAX, q as u32);
            writer.bit(false);
            writer.bits(gap, r);
        }
    }
    writer.bytes
}

/// Little-endian bit reader over untrusted bytes.
struct BitReader<'a> {
    bytes: &'a [u8],
    at: u64,
}

impl BitReader<'_> {
    fn bit(&mut self) -> Option<bool> {
        let byte = *self.bytes.get((self.at / 8) as usize)?;
        let bit = byte >> (self.at % 8) & 1 == 1;
        self.at += 1;
        Some(bit)
    }

    fn bits(&mut self, count: u32) -> Option<u64> {
        let mut value = 0;
        for i in 0..count {
            value |= u64::from(self.bit()?) << i;
        }
        Some(value)
    }
}

/// Decodes `count` values coded by [`encode`] at parameter `r`, each below `2^bits`. Refuses,
/// without allocating more than the input can hold, a count the bytes cannot contain, a value
/// that overflows `bits`, bytes left over, and padding bits that are not zero.
pub fn decode(bytes: &[u8], count: u64, r: u32, bits: u32) -> Result<Vec<u64>> {
    let corrupt = |detail: String| Error::Corrupt {
        what: "Golomb-coded set",
        detail,
    };
    if r > 63 || !(1..=64).contains(&bits) {
        return Err(corrupt(format!("parameter r = {r}, value bits = {bits}")));
    }
    // Every value takes at least r + 1 bits.
    let available = bytes.len() as u64 * 8;
    if count.saturating_mul(u64::from(r) + 1) > available {
        return Err(corrupt(format!(
            "{count} values cannot fit in {} bytes",
            bytes.len()
        )));
    }
    let limit = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mut reader = BitReader { bytes, at: 0 };
    let mut values = Vec::with_capacity(count as usize);
    let mut previous: u64 = 0;
    let truncated = || corrupt("the data ends inside a value".into());
    for _ in 0..count {
        let mut q = 0;
        while reader.bit().ok_or_else(truncated)? {
            q += 1;
            if q > ESCAPE {
                return Err(corrupt("a unary run longer than the escape".into()));
            }
        }
        let gap = if q == ESCAPE {
            reader.bits(64).ok_or_else(truncated)?
        } else {
            (q << r) | reader.bits(r).ok_or_else(truncated)?
        };
        let value = previous
            .checked_add(gap)
            .filter(|&v| v <= limit)
            .ok_or_else(|| corrupt(format!("a value beyond {bits} bits")))?;
        values.push(value);
        previous = value;
    }
    // What is left is the last byte's padding: fewer than 8 bits, all zero.
    if available - reader.at >= 8 || reader.bits((available - reader.at) as u32) != Some(0) {
        return Err(corrupt("bytes after the last value".into()));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use proptest::prelude::*;

    #[test]
    fn a_random_set_costs_about_log2_of_the_gap_plus_one_and_a_half_bits() {
        let mut rng = SplitMix64::new(7);
        let bits = 40;
        let mut values: Vec<u64> = (0..10_000).map(|_| rng.next_u64() >> (64 - bits)).collect();
        values.sort_unstable();
        let r = best_parameter(&values, 1u128 << bits);
        let coded = encode(&values, r);
        let per_value = coded.len() as f64 * 8.0 / values.len() as f64;
        let bound = (2f64.powi(bits as i32) / values.len() as f64).log2();
        assert!(
            per_value > bound + 1.0 && per_value < bound + 2.0,
            "{per_value} bits per value, log2(U/n) = {bound}"
        );
        assert_eq!(
            decode(&coded, values.len() as u64, r, bits).unwrap(),
            values
        );
    }

    #[test]
    fn damaged_input_is_an_error() {
        let values = [3, 9, 9, 1 << 40];
        let coded = encode(&values, 2);
        assert_eq!(decode(&coded, 4, 2, 41).unwrap(), values);
        // A value beyond the bits, a count too large, a truncation, trailing bytes.
        assert!(decode(&coded, 4, 2, 40).is_err());
        assert!(decode(&coded, 1_000_000, 2, 41).is_err());
        assert!(decode(&coded[..coded.len() - 1], 4, 2, 41).is_err());
        let mut longer = coded.clone();
        longer.push(0);
        assert!(decode(&longer, 4, 2, 41).is_err());
        // An endless unary run.
        assert!(decode(&[0xff; 40], 1, 0, 64).is_err());
    }

    proptest! {
        #[test]
        fn round_trips(mut values in prop::collection::vec(any::<u64>(), 0..200), shift in 0u32..64) {
            for v in &mut values {
                *v >>= shift;
            }
            values.sort_unstable();
            let bits = 64 - shift;
            let r = best_parameter(&values, 1u128 << bits);
            let coded = encode(&values, r);
            prop_assert_eq!(coded.len() as u64, encoded_bits(&values, r).div_ceil(8));
            prop_assert_eq!(decode(&coded, values.len() as u64, r, bits).unwrap(), values);
        }

        #[test]
        fn never_panics_on_arbitrary_bytes(
            bytes in prop::collection::vec(any::<u8>(), 0..64),
            count in 0u64..100,
            r in 0u32..70,
            bits in 0u32..70,
        ) {
            let _ = decode(&bytes, count, r, bits);
        }
    }
}
