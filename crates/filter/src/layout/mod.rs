//! The three bit layouts: where a key's k bits go, how membership is checked, and how each is
//! sized.
//!
//! [`Classic`] spreads the k bits over the whole array (the textbook filter of seeds 000/001/004).
//! [`Blocked`] puts all k bits of a key in one 512-bit block, so that a query touches one cache
//! line (RocksDB's FastLocalBloom; seed 002's "分块布隆过滤器"). [`Split`] puts one bit in each
//! of the eight 32-bit words of a 256-bit block, from one 64-bit hash (Parquet's split-block
//! filter). The filter type [`crate::Bloom`] is generic over these; nothing else differs between
//! them. The classic layout and the trait are here; the blocked and split layouts have their own
//! modules.

mod blocked;
mod split;

use crate::bits::{prefetch, Block};
use crate::hash::{double_hashing, fast_range, sha256_positions, KeyHash};
use crate::math;
use crate::{HashStrategy, Result};

/// Which layout a filter (or a saved file) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// k bits anywhere in the array.
    Classic,
    /// k bits in one 512-bit block.
    Blocked,
    /// One bit in each 32-bit word of a 256-bit block (k = 8), from a 64-bit hash.
    Split,
}

impl LayoutKind {
    /// The code stored in the file header.
    pub fn code(self) -> u8 {
        match self {
            LayoutKind::Classic => 0,
            LayoutKind::Blocked => 1,
            LayoutKind::Split => 2,
        }
    }

    /// The layout for a header code, if it is one.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(LayoutKind::Classic),
            1 => Some(LayoutKind::Blocked),
            2 => Some(LayoutKind::Split),
            _ => None,
        }
    }

    /// The lowercase name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LayoutKind::Classic => "classic",
            LayoutKind::Blocked => "blocked",
            LayoutKind::Split => "split",
        }
    }
}

impl std::fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LayoutKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "classic" => Ok(LayoutKind::Classic),
            "blocked" => Ok(LayoutKind::Blocked),
            "split" => Ok(LayoutKind::Split),
            other => Err(format!(
                "unknown layout `{other}`: use blocked, split or classic"
            )),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Classic {}
    impl Sealed for super::Blocked {}
    impl Sealed for super::Split {}
}

/// A bit layout: the part of a Bloom filter that differs between [`Classic`], [`Blocked`] and
/// [`Split`].
///
/// Sealed: the file format records the layout as a code, so only these three exist.
pub trait Layout: sealed::Sealed + Send + Sync + 'static {
    /// The layout's tag.
    const KIND: LayoutKind;

    /// `(num_bits, num_hashes)` for `n` expected items at false-positive rate `p`.
    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)>;

    /// The bit count actually used for a requested one (the blocked and split layouts round up
    /// to whole 512-bit lines).
    fn round_num_bits(num_bits: u64) -> u64;

    /// Checks that the layout can use `num_hashes` positions per key and the hash `strategy`
    /// (the split layout takes exactly 8 and xxh3 only).
    fn check_params(_num_hashes: u32, _strategy: HashStrategy) -> Result<()> {
        Ok(())
    }

    /// The [`KeyHash`] that the xxh3 strategy's key-taking methods (`insert`, `contains`,
    /// `contains_batch`) use for `key`: its xxh3-128 ([`KeyHash::of`]), or for the split layout
    /// its xxh3-64 (see [`Split`]).
    #[inline(always)]
    fn key_hash(key: &[u8]) -> KeyHash {
        KeyHash::of(key)
    }

    /// Calls `set(word_index, mask)` for the bits of an xxh3 key hash.
    fn for_each_bit(num_bits: u64, num_hashes: u32, hash: KeyHash, set: impl FnMut(usize, u64));

    /// Calls `set(word_index, mask)` for the bits of `key` under [`crate::HashStrategy::Sha256`].
    fn for_each_bit_sha256(num_bits: u64, num_hashes: u32, key: &[u8], set: impl FnMut(usize, u64));

    /// Whether all bits of an xxh3 key hash are set.
    fn contains_hash(blocks: &[Block], num_bits: u64, num_hashes: u32, hash: KeyHash) -> bool;

    /// Starts loading the memory a [`Layout::contains_hash`] of `hash` will read first.
    fn prefetch(blocks: &[Block], num_bits: u64, hash: KeyHash);

    /// The expected false-positive rate after inserting `items` distinct keys.
    fn theoretical_fpp(num_bits: u64, items: f64, num_hashes: u32) -> f64;

    /// The false-positive rate implied by the bits actually set.
    fn current_fpp(blocks: &[Block], num_bits: u64, num_hashes: u32) -> f64;
}

/// The textbook layout: k positions anywhere in m bits.
#[derive(Clone, Copy, Debug)]
pub struct Classic;

/// Splits a bit position into `(word index, mask)`.
#[inline(always)]
fn word_and_mask(position: u64) -> (usize, u64) {
    ((position >> 6) as usize, 1u64 << (position & 63))
}

impl Layout for Classic {
    const KIND: LayoutKind = LayoutKind::Classic;

    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
        math::validate_classic_fpp(fpp, "classic")?;
        let num_bits = math::optimal_num_bits(expected_items, fpp)?;
        Ok((num_bits, math::optimal_num_hashes(expected_items, num_bits)))
    }

    fn round_num_bits(num_bits: u64) -> u64 {
        num_bits
    }

    #[inline(always)]
    fn for_each_bit(
        num_bits: u64,
        num_hashes: u32,
        hash: KeyHash,
        mut set: impl FnMut(usize, u64),
    ) {
        double_hashing(hash, num_bits, num_hashes, |p| {
            let (word, mask) = word_and_mask(p);
            set(word, mask)
        });
    }

    fn for_each_bit_sha256(
        num_bits: u64,
        num_hashes: u32,
        key: &[u8],
        mut set: impl FnMut(usize, u64),
    ) {
        sha256_positions(key, num_bits, num_hashes, |p| {
            let (word, mask) = word_and_mask(p);
            set(word, mask)
        });
    }

    #[inline(always)]
    fn contains_hash(blocks: &[Block], num_bits: u64, num_hashes: u32, hash: KeyHash) -> bool {
        let words: &[u64] = bytemuck::cast_slice(blocks);
        let (mut x, mut y) = (hash.h1, hash.h2);
        for i in 0..num_hashes {
            let (word, mask) = word_and_mask(fast_range(x, num_bits));
            // Early exit: a non-member usually fails on the first or second probe.
            if words[word] & mask == 0 {
                return false;
            }
            x = x.wrapping_add(y);
            y = y.wrapping_add(u64::from(i));
        }
        true
    }

    #[inline(always)]
    fn prefetch(blocks: &[Block], num_bits: u64, hash: KeyHash) {
        // The first probe decides most non-member queries; later ones are spread over the array.
        let words: &[u64] = bytemuck::cast_slice(blocks);
        prefetch(&words[word_and_mask(fast_range(hash.h1, num_bits)).0]);
    }

    fn theoretical_fpp(num_bits: u64, items: f64, num_hashes: u32) -> f64 {
        math::classic_fpp(num_bits, items, num_hashes)
    }

    fn current_fpp(blocks: &[Block], num_bits: u64, num_hashes: u32) -> f64 {
        let ones: u64 = bytemuck::cast_slice::<Block, u64>(blocks)
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        (ones as f64 / num_bits as f64).powi(num_hashes as i32)
    }
}

pub use blocked::Blocked;
pub use split::{Split, SPLIT_SALTS};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_codes() {
        assert_eq!(Blocked::round_num_bits(1), 512);
        assert_eq!(Blocked::round_num_bits(1024), 1024);
        assert_eq!(Classic::round_num_bits(1000), 1000);
        assert_eq!(Split::round_num_bits(1), 512);
        assert_eq!(Split::round_num_bits(513), 1024);
        for kind in [LayoutKind::Classic, LayoutKind::Blocked, LayoutKind::Split] {
            assert_eq!(LayoutKind::from_code(kind.code()), Some(kind));
            assert_eq!(kind.name().parse::<LayoutKind>(), Ok(kind));
        }
        assert_eq!(LayoutKind::from_code(3), None);
    }
}
