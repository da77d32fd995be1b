//! The blocked layout: all k bits of a key in one 512-bit block, so that a query touches one
//! cache line (RocksDB's FastLocalBloom).

use super::{word_and_mask, Layout, LayoutKind};
use crate::bits::{prefetch, Block};
use crate::hash::{digest_mod, fast_range, sha256_index_digest, KeyHash};
use crate::math::{self, BLOCK_BITS};
use crate::Result;

/// The cache-line layout: one 512-bit block per key, k positions inside it.
#[derive(Clone, Copy, Debug)]
pub struct Blocked;

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
    /// The probe for `8 ≤ K ≤ 11` positions (the URL lists' range: k = 10 at their default
    /// rate): the first position tested alone (a non-member fails there about half the time),
    /// then the other six of `h2` and the rest of the re-mixed second word
    /// ([`Blocked::in_block_bits`]'s order) gathered without a branch — a member, the common
    /// case behind a host gate, pays no loop and no mispredicted exit.
    #[inline(always)]
    fn probe_two_words<const K: u32>(block: &[u64; 8], h2: u64) -> bool {
        let (word, mask) = word_and_mask(h2 & (BLOCK_BITS - 1));
        if block[word] & mask == 0 {
            return false;
        }
        let mut missing = 0u64;
        for i in 1..POSITIONS_PER_WORD {
            let (word, mask) = word_and_mask((h2 >> (BLOCK_BIT_WIDTH * i)) & (BLOCK_BITS - 1));
            missing |= !block[word] & mask;
        }
        let second = remix(h2.wrapping_add(1));
        for i in 0..K - POSITIONS_PER_WORD {
            let (word, mask) = word_and_mask((second >> (BLOCK_BIT_WIDTH * i)) & (BLOCK_BITS - 1));
            missing |= !block[word] & mask;
        }
        missing == 0
    }

    /// The probe of one block. The common hash counts get an unrolled probe (constant shifts,
    /// no loop counter); the answer is the same as the general loop's.
    #[inline(always)]
    fn probe(block: &[u64; 8], num_hashes: u32, h2: u64) -> bool {
        match num_hashes {
            4 => Self::probe_unrolled::<4>(block, h2),
            5 => Self::probe_unrolled::<5>(block, h2),
            6 => Self::probe_unrolled::<6>(block, h2),
            7 => Self::probe_unrolled::<7>(block, h2),
            8 => Self::probe_two_words::<8>(block, h2),
            9 => Self::probe_two_words::<9>(block, h2),
            10 => Self::probe_two_words::<10>(block, h2),
            11 => Self::probe_two_words::<11>(block, h2),
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
        // The general loop's answer for `h2` and `k` positions in `block`.
        let general = |block: &[u64; 8], h2: u64, k: u32| {
            let mut missing = 0u64;
            Blocked::in_block_bits(h2, k, |bit| {
                let (word, mask) = word_and_mask(bit);
                missing |= !block[word] & mask;
            });
            missing == 0
        };
        let hashes = || (0..20_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        // `probe` answers 4 to 7 positions with `probe_unrolled`, 8 to 11 with
        // `probe_two_words`: each k against the loop, in the half-set block and in one with 7 of
        // 8 bits set (so that members are common too: 0.875^10 ≈ 26 %).
        let dense = block.map(|word| word | word.rotate_left(1) | word.rotate_left(2));
        for block in [block, dense] {
            let mut members = 0;
            for h2 in hashes() {
                for k in 4..=11 {
                    assert_eq!(
                        Blocked::probe(&block, k, h2),
                        general(&block, h2, k),
                        "k = {k}, h2 = {h2:#x}"
                    );
                }
                members += usize::from(general(&block, h2, 10));
            }
            if block == dense {
                // Binomial: 20,000 × 26 % ≈ 5,260 expected, σ ≈ 62; 1,000 is far below.
                assert!(members > 1000, "{members} members in the dense block");
            }
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
}
