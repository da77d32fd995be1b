//! The two bit layouts: where a key's k bits go, how membership is checked, and how each is sized.
//!
//! [`Classic`] spreads the k bits over the whole array (the textbook filter of seeds 000/001/004).
//! [`Blocked`] puts all k bits of a key in one 512-bit block, so that a query touches one cache
//! line (RocksDB's FastLocalBloom; seed 002's "分块布隆过滤器"). The filter type
//! [`crate::Bloom`] is generic over these two; nothing else differs between them.

use crate::bits::{prefetch, Block};
use crate::hash::{
    digest_mod, double_hashing, fast_range, sha256_index_digest, sha256_positions, KeyHash,
};
use crate::math::{self, BLOCK_BITS};
use crate::Result;

/// Which layout a filter (or a saved file) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// k bits anywhere in the array.
    Classic,
    /// k bits in one 512-bit block.
    Blocked,
}

impl LayoutKind {
    /// The code stored in the file header.
    pub fn code(self) -> u8 {
        match self {
            LayoutKind::Classic => 0,
            LayoutKind::Blocked => 1,
        }
    }

    /// The layout for a header code, if it is one.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(LayoutKind::Classic),
            1 => Some(LayoutKind::Blocked),
            _ => None,
        }
    }

    /// The lowercase name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LayoutKind::Classic => "classic",
            LayoutKind::Blocked => "blocked",
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
            other => Err(format!("unknown layout `{other}`: use blocked or classic")),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Classic {}
    impl Sealed for super::Blocked {}
}

/// A bit layout: the part of a Bloom filter that differs between [`Classic`] and [`Blocked`].
///
/// Sealed: the file format records the layout as a code, so only these two exist.
pub trait Layout: sealed::Sealed + Send + Sync + 'static {
    /// The layout's tag.
    const KIND: LayoutKind;

    /// `(num_bits, num_hashes)` for `n` expected items at false-positive rate `p`.
    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)>;

    /// The bit count actually used for a requested one (the blocked layout rounds up to whole
    /// blocks).
    fn round_num_bits(num_bits: u64) -> u64;

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

/// The cache-line layout: one 512-bit block per key, k positions inside it.
#[derive(Clone, Copy, Debug)]
pub struct Blocked;

/// Splits a bit position into `(word index, mask)`.
#[inline(always)]
fn word_and_mask(position: u64) -> (usize, u64) {
    ((position >> 6) as usize, 1u64 << (position & 63))
}

impl Layout for Classic {
    const KIND: LayoutKind = LayoutKind::Classic;

    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
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

/// Bits of one in-block position: log2(512).
const BLOCK_BIT_WIDTH: u32 = 9;

/// In-block positions taken from one 64-bit word before it is re-mixed: ⌊64 / 9⌋.
const POSITIONS_PER_WORD: u32 = 64 / BLOCK_BIT_WIDTH;

/// A fresh word when the seven 9-bit positions of the previous one are used up (k > 7):
/// SplitMix64's output for the state `word` (see [`crate::rng::SplitMix64`]), a bijection whose
/// every output bit depends on every input bit.
#[inline(always)]
fn remix(word: u64) -> u64 {
    crate::rng::SplitMix64::new(word).next_u64()
}

impl Blocked {
    /// The block (0-based, of `num_bits / 512`) that a key hash selects: its k bits all lie in
    /// bytes `64·i .. 64·i + 64` of the bit array. A remote store of the bits (Redis) fetches
    /// that one block and probes it with [`Blocked::probe_block`].
    #[inline(always)]
    pub fn block_index(num_bits: u64, hash: KeyHash) -> usize {
        fast_range(hash.h1, num_bits / BLOCK_BITS) as usize
    }

    /// Whether all k bits of `hash` are set in `block` (the block [`Blocked::block_index`]
    /// selects for it): the membership test of one fetched block.
    #[inline(always)]
    pub fn probe_block(block: &Block, num_hashes: u32, hash: KeyHash) -> bool {
        Self::probe(&block.0, num_hashes, hash.h2)
    }

    /// Calls `visit(bit)` with the k bit offsets (0..512) inside its block that `hash` sets:
    /// what an insert into a remote copy of the block (Redis `BITFIELD … SET u1`) writes.
    /// Bit `b` of a block is bit `b % 64` of its little-endian word `b / 64`.
    pub fn block_bits(num_hashes: u32, hash: KeyHash, visit: impl FnMut(u64)) {
        Self::in_block_bits(hash.h2, num_hashes, visit)
    }

    /// Calls `visit(bit)` with the k in-block bit offsets (0..512) of `h2`: consecutive 9-bit
    /// fields of `h2` (seven per word), then of [`remix`]ed words. Disjoint fields of a uniform
    /// hash are independent, so the positions are as the blocked-filter formula assumes, and
    /// no multiply sits on the dependency chain for k ≤ 7.
    #[inline(always)]
    fn in_block_bits(h2: u64, num_hashes: u32, mut visit: impl FnMut(u64)) {
        Self::in_block_bits_while(h2, num_hashes, |bit| {
            visit(bit);
            true
        });
    }

    /// [`Blocked::in_block_bits`], stopping at the first position for which `visit` returns
    /// `false`; returns whether every position was visited.
    #[inline(always)]
    fn in_block_bits_while(h2: u64, num_hashes: u32, mut visit: impl FnMut(u64) -> bool) -> bool {
        let mut word = h2;
        let mut left = POSITIONS_PER_WORD;
        let mut round = 0u64;
        for _ in 0..num_hashes {
            if left == 0 {
                round += 1;
                word = remix(h2.wrapping_add(round));
                left = POSITIONS_PER_WORD;
            }
            if !visit(word & (BLOCK_BITS - 1)) {
                return false;
            }
            word >>= BLOCK_BIT_WIDTH;
            left -= 1;
        }
        true
    }
}

impl Blocked {
    /// The probe for `K ≤ 7` positions, all taken from `h2`'s 9-bit fields (see
    /// [`Blocked::in_block_bits`]). Branch-free: the missing bits of all K probes are gathered
    /// and tested once; inside one cache line the loads are cheap, and a data-dependent branch
    /// per probe would mispredict about half the time for non-members.
    #[inline(always)]
    fn probe_unrolled<const K: u32>(block: &[u64; 8], h2: u64) -> bool {
        let mut missing = 0u64;
        for i in 0..K {
            let (word, mask) = word_and_mask((h2 >> (BLOCK_BIT_WIDTH * i)) & (BLOCK_BITS - 1));
            missing |= !block[word] & mask;
        }
        missing == 0
    }
}

impl Blocked {
    /// The probe of one block. The common hash counts get a fully unrolled probe (constant
    /// shifts, no loop counter); the answer is the same as the general loop's.
    #[inline(always)]
    fn probe(block: &[u64; 8], num_hashes: u32, h2: u64) -> bool {
        match num_hashes {
            4 => Self::probe_unrolled::<4>(block, h2),
            5 => Self::probe_unrolled::<5>(block, h2),
            6 => Self::probe_unrolled::<6>(block, h2),
            7 => Self::probe_unrolled::<7>(block, h2),
            // More than 7 positions (the low per-probe rates of keyword lists ask for k ≈ 14):
            // stop at the first missing bit. A non-member meets one within two or three
            // positions in a half-full block, so one mispredicted branch costs less than
            // computing all k positions and their re-mixes (measured on `scan`: the probe loop
            // fell from 27 % of the scan's time).
            _ => Self::in_block_bits_while(h2, num_hashes, |bit| {
                let (word, mask) = word_and_mask(bit);
                block[word] & mask != 0
            }),
        }
    }
}

impl Layout for Blocked {
    const KIND: LayoutKind = LayoutKind::Blocked;

    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
        math::blocked_size(expected_items, fpp)
    }

    fn round_num_bits(num_bits: u64) -> u64 {
        num_bits.div_ceil(BLOCK_BITS).max(1) * BLOCK_BITS
    }

    #[inline(always)]
    fn for_each_bit(
        num_bits: u64,
        num_hashes: u32,
        hash: KeyHash,
        mut set: impl FnMut(usize, u64),
    ) {
        let base = Self::block_index(num_bits, hash) * 8;
        Self::in_block_bits(hash.h2, num_hashes, |bit| {
            let (word, mask) = word_and_mask(bit);
            set(base + word, mask)
        });
    }

    /// Block: fast range of the first 8 bytes (big-endian) of `SHA-256(key ‖ "0")`; bit `i`:
    /// `SHA-256(key ‖ decimal(i)) mod 512` — the seed's per-index digests, confined to a block.
    /// The block uses a digest's top bits and the in-block offset its low 9, so they are independent.
    fn for_each_bit_sha256(
        num_bits: u64,
        num_hashes: u32,
        key: &[u8],
        mut set: impl FnMut(usize, u64),
    ) {
        let first = sha256_index_digest(key, 0);
        let mut top = [0u8; 8];
        top.copy_from_slice(&first[..8]);
        let base = fast_range(u64::from_be_bytes(top), num_bits / BLOCK_BITS) as usize * 8;
        for i in 0..num_hashes {
            let digest = if i == 0 {
                first
            } else {
                sha256_index_digest(key, i)
            };
            let (word, mask) = word_and_mask(digest_mod(&digest, BLOCK_BITS));
            set(base + word, mask);
        }
    }

    #[inline(always)]
    fn contains_hash(blocks: &[Block], num_bits: u64, num_hashes: u32, hash: KeyHash) -> bool {
        Self::probe(
            &blocks[Self::block_index(num_bits, hash)].0,
            num_hashes,
            hash.h2,
        )
    }

    #[inline(always)]
    fn prefetch(blocks: &[Block], num_bits: u64, hash: KeyHash) {
        prefetch(&blocks[Self::block_index(num_bits, hash)]);
    }

    fn theoretical_fpp(num_bits: u64, items: f64, num_hashes: u32) -> f64 {
        math::blocked_fpp(num_bits, items, num_hashes, BLOCK_BITS)
    }

    /// The mean over blocks of `(ones_in_block / 512)^k`: a query lands in a uniformly random
    /// block, so this is its exact false-positive probability given the bits as they are.
    fn current_fpp(blocks: &[Block], _num_bits: u64, num_hashes: u32) -> f64 {
        if blocks.is_empty() {
            return 1.0;
        }
        let total: f64 = blocks
            .iter()
            .map(|b| {
                let ones: u32 = b.0.iter().map(|w| w.count_ones()).sum();
                (f64::from(ones) / BLOCK_BITS as f64).powi(num_hashes as i32)
            })
            .sum();
        total / blocks.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_bits_stay_in_one_block() {
        let num_bits = 64 * BLOCK_BITS;
        for key in 0..1000u32 {
            let mut words = Vec::new();
            Blocked::for_each_bit(num_bits, 9, KeyHash::of(&key.to_le_bytes()), |w, _| {
                words.push(w)
            });
            let block = words[0] / 8;
            assert!(words.iter().all(|w| w / 8 == block && *w < 64 * 8));
            let mut sha_words = Vec::new();
            Blocked::for_each_bit_sha256(num_bits, 9, &key.to_le_bytes(), |w, _| sha_words.push(w));
            let block = sha_words[0] / 8;
            assert!(sha_words.iter().all(|w| w / 8 == block && *w < 64 * 8));
        }
    }

    #[test]
    fn blocked_spreads_keys_over_blocks() {
        let num_blocks = 16u64;
        let mut counts = [0u32; 16];
        for key in 0..16_000u32 {
            Blocked::for_each_bit(
                num_blocks * BLOCK_BITS,
                1,
                KeyHash::of(&key.to_le_bytes()),
                |w, _| counts[w / 8] += 1,
            );
        }
        // 1000 expected per block; 5σ ≈ 160.
        assert!(
            counts.iter().all(|&c| (840..=1160).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn unrolled_probes_answer_like_the_general_loop() {
        let mut block = [0u64; 8];
        for (i, word) in block.iter_mut().enumerate() {
            *word = 0x5555_5555_5555_5555u64.rotate_left(i as u32 * 7) ^ (i as u64 * 0x1234_5678);
        }
        let general = |h2: u64, k: u32| {
            let mut missing = 0u64;
            Blocked::in_block_bits(h2, k, |bit| {
                let (word, mask) = word_and_mask(bit);
                missing |= !block[word] & mask;
            });
            missing == 0
        };
        for h2 in (0..20_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            assert_eq!(Blocked::probe_unrolled::<4>(&block, h2), general(h2, 4));
            assert_eq!(Blocked::probe_unrolled::<5>(&block, h2), general(h2, 5));
            assert_eq!(Blocked::probe_unrolled::<6>(&block, h2), general(h2, 6));
            assert_eq!(Blocked::probe_unrolled::<7>(&block, h2), general(h2, 7));
        }
    }

    #[test]
    fn one_block_answers_for_the_whole_filter() {
        use crate::{BlockedBloomFilter, Filter};
        let mut filter = BlockedBloomFilter::new(1000, 0.01).unwrap();
        for key in 0..1000u32 {
            filter.insert(key.to_le_bytes());
        }
        let blocks: &[Block] = bytemuck::cast_slice(filter.bit_bytes());
        for key in 0..3000u32 {
            let hash = KeyHash::of(&key.to_le_bytes());
            let block = &blocks[Blocked::block_index(filter.num_bits(), hash)];
            assert_eq!(
                Blocked::probe_block(block, filter.num_hashes(), hash),
                filter.contains(key.to_le_bytes())
            );
            let mut set = true;
            Blocked::block_bits(filter.num_hashes(), hash, |bit| {
                set &= block.0[bit as usize / 64] & (1 << (bit % 64)) != 0
            });
            assert_eq!(set, filter.contains(key.to_le_bytes()));
        }
    }

    #[test]
    fn rounding_and_codes() {
        assert_eq!(Blocked::round_num_bits(1), 512);
        assert_eq!(Blocked::round_num_bits(1024), 1024);
        assert_eq!(Classic::round_num_bits(1000), 1000);
        for kind in [LayoutKind::Classic, LayoutKind::Blocked] {
            assert_eq!(LayoutKind::from_code(kind.code()), Some(kind));
            assert_eq!(kind.name().parse::<LayoutKind>(), Ok(kind));
        }
        assert_eq!(LayoutKind::from_code(2), None);
    }
}
