//! The split-block layout: one bit in each of the eight 32-bit words of a 256-bit block, from
//! one 64-bit hash (Parquet's split-block filter), probed with SSE2 or AVX2 where present.

use super::{Layout, LayoutKind};
use crate::bits::{prefetch, Block};
use crate::hash::KeyHash;
use crate::math::{self, BLOCK_BITS, SPLIT_BLOCK_BITS, SPLIT_WORDS, SPLIT_WORD_BITS};
use crate::{Error, HashStrategy, Result};

/// The split-block layout: one 256-bit block per key and one bit in each of its eight 32-bit
/// words, all from one 64-bit hash — Parquet's split-block Bloom filter (the Apache Parquet
/// format specification, `BloomFilter.md`; after Putze, Sanders & Singler's blocked filters,
/// WEA 2007).
///
/// For a 64-bit hash `h`, the block is `⌊(h >> 32)·z / 2³²⌋` of `z = m / 256` blocks, and word
/// `i`'s bit is `((h as u32)·SALT[i]) >> 27` (mod 2³² multiply by eight odd constants). That
/// is the specification's `block_index` and `mask` exactly, so the bits are those of any
/// conforming SBBF given the same 64-bit hashes (tested against `sbbf-rs-safe`). Membership is
/// eight word tests combined without a branch.
///
/// Which 64 bits: the key-taking methods hash with xxh3-64 (one hash per key, cheaper than
/// xxh3-128 on URLs); [`Layout::contains_hash`] and the other `*_hash` methods take a
/// [`KeyHash`] (a caller that has one already, such as URL expression probes) and use its
/// `h1`. The two are different hashes of a key: a filter must be filled and queried through
/// the same one. The split layout has no SHA-256 variant and exactly k = 8.
#[derive(Clone, Copy, Debug)]
pub struct Split;

/// The eight odd 32-bit salts of Parquet's split-block filter, one per word of a block (Apache
/// Parquet format specification, `BloomFilter.md`, "Technical Approach"; the same constants as
/// Impala's and Kudu's filters). Word `i`'s bit for a hash's low half `x` is the top five bits of
/// `x·SPLIT_SALTS[i] mod 2³²`.
pub const SPLIT_SALTS: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Bits that pick one of a word's 32 bits: log2(32).
const SPLIT_BIT_WIDTH: u32 = 5;

impl Split {
    /// The 64-bit hash the layout takes from a [`KeyHash`]: its `h1` (see [`Split`]).
    #[inline(always)]
    pub fn hash64(hash: KeyHash) -> u64 {
        hash.h1
    }

    /// The block (0-based, of `num_bits / 256`) of a 64-bit hash: `⌊(h >> 32)·z / 2³²⌋`, Lemire's
    /// fast range on the hash's high half (Parquet's `block_index`). `z ≤ 2³²` (m ≤ 2⁴⁰), so the
    /// product fits in 64 bits.
    #[inline(always)]
    pub fn block_index(num_bits: u64, hash: u64) -> usize {
        (((hash >> 32) * (num_bits / SPLIT_BLOCK_BITS)) >> 32) as usize
    }

    /// The eight one-bit words a 64-bit hash sets in its block (Parquet's `mask`): word `i` has
    /// bit `((h as u32)·SPLIT_SALTS[i]) >> 27`.
    #[inline(always)]
    pub fn mask(hash: u64) -> [u32; 8] {
        let low = hash as u32;
        let mut mask = [0u32; 8];
        for (word, salt) in mask.iter_mut().zip(SPLIT_SALTS) {
            *word = 1 << (low.wrapping_mul(salt) >> (SPLIT_WORD_BITS - SPLIT_BIT_WIDTH));
        }
        mask
    }

    /// Whether every bit of `mask` is set in `block`: the eight word tests OR-ed together, no
    /// branch.
    #[inline(always)]
    pub fn probe_block(block: &[u32; 8], mask: &[u32; 8]) -> bool {
        let mut missing = 0u32;
        for (word, bit) in block.iter().zip(mask) {
            missing |= bit & !word;
        }
        missing == 0
    }

    /// Whether every bit that a 64-bit hash sets is set in `block` (the block
    /// [`Split::block_index`] selects for it): [`Split::probe_block`] of [`Split::mask`]; on
    /// x86-64 in AVX2 when the processor has it (see `avx2`), else in SSE2 (see `sse2`);
    /// elsewhere as written.
    #[inline(always)]
    pub fn contains_in_block(block: &[u32; 8], hash: u64) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            if avx2::available() {
                // SAFETY: the processor has AVX2, checked just above.
                return unsafe { avx2::contains_in_block(block, hash as u32) };
            }
            sse2::contains_in_block(block, hash as u32)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Self::probe_block(block, &Self::mask(hash))
        }
    }

    /// The blocks as 256-bit split blocks: two per 64-byte [`Block`], in order.
    #[inline(always)]
    fn split_blocks(blocks: &[Block]) -> &[[u32; 8]] {
        // A `Block` is 64 bytes, two `[u32; 8]`s, and 64-byte aligned (more than `u32` needs):
        // the cast cannot fail.
        bytemuck::cast_slice(blocks)
    }

    /// Whether a 64-bit hash is in the filter of `blocks` (`num_bits` bits).
    #[inline(always)]
    fn contains_u64(blocks: &[Block], num_bits: u64, hash: u64) -> bool {
        let block = &Self::split_blocks(blocks)[Self::block_index(num_bits, hash)];
        Self::contains_in_block(block, hash)
    }
}

/// The split probe in AVX2, chosen at run time (the default x86-64 target does not enable
/// AVX2): all eight words in one 256-bit register — one `vpmulld` by the salts, one shift, one
/// per-lane variable shift `vpsllv` for `1 << b`, one `vptest` against the block. Callgrind
/// counts per `contains` over xxh3-64 alone (`examples/probe_cost.rs`, 10,000-key filter): 55
/// instructions with the SSE2 probe, 44 with this one (10 of them here, the rest the block
/// index, bounds and dispatch), against 25 for `sbbf-rs-safe`, whose `sbbf-rs` picks AVX2 at
/// run time the same way.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_set1_epi32, _mm256_setr_epi32,
        _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_testc_si256,
    };

    use super::{SPLIT_BIT_WIDTH, SPLIT_SALTS, SPLIT_WORD_BITS};

    /// Whether the processor has AVX2: std caches the CPUID answer, so after the first call
    /// this is one load and a bit test (a compile-time `true` when the target enables AVX2).
    #[inline(always)]
    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// [`super::Split::probe_block`] of [`super::Split::mask`] of the hash's low half `low`.
    ///
    /// # Safety
    /// The processor must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains_in_block(block: &[u32; 8], low: u32) -> bool {
        // Bit patterns of the salts, as `i32` lanes.
        let salt = |i: usize| SPLIT_SALTS[i] as i32;
        let salts = _mm256_setr_epi32(
            salt(0),
            salt(1),
            salt(2),
            salt(3),
            salt(4),
            salt(5),
            salt(6),
            salt(7),
        );
        // Lane i: (low · SALT[i]) mod 2³², its top five bits, then 1 << those bits.
        let products = _mm256_mullo_epi32(_mm256_set1_epi32(low as i32), salts);
        let bits = _mm256_srli_epi32::<{ (SPLIT_WORD_BITS - SPLIT_BIT_WIDTH) as i32 }>(products);
        let mask = _mm256_sllv_epi32(_mm256_set1_epi32(1), bits);
        // SAFETY: `block` is 32 readable bytes, and the unaligned load needs no alignment.
        let words = unsafe { _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()) };
        // `vptest`'s carry flag: no bit of `mask` is missing from `words`.
        _mm256_testc_si256(words, mask) == 1
    }
}

/// The split probe in SSE2, which every x86-64 processor has: four words per 128-bit register.
///
/// The scalar [`Split::mask`] takes eight multiplies, eight variable shifts (three micro-ops
/// each on Intel) and as many moves into vector registers; here the salts multiply four lanes
/// at a time (`pmuludq`, two lanes of 32×32→64 bits per instruction: SSE2 has no 32-bit
/// `pmulld`) and `1 << b` is built as the float `2^b` (exponent field `b + 127`, converted back
/// to an integer), the standard SSE2 stand-in for a per-lane variable shift. Callgrind counts
/// for one probe: the scalar mask and test compiled to ~75 instructions, this to ~30.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_and_si128, _mm_andnot_si128, _mm_castsi128_ps, _mm_cmpeq_epi32,
        _mm_cvttps_epi32, _mm_movemask_epi8, _mm_mul_epu32, _mm_or_si128, _mm_set1_epi32,
        _mm_setr_epi32, _mm_setzero_si128, _mm_slli_epi32, _mm_slli_epi64, _mm_srli_epi32,
    };

    use super::{SPLIT_BIT_WIDTH, SPLIT_SALTS, SPLIT_WORD_BITS};

    /// The eight one-bit words of [`super::Split::mask`] for the hash's low half `low`, as two
    /// vectors (words 0–3, 4–7).
    #[inline(always)]
    pub(super) fn mask(low: u32) -> [__m128i; 2] {
        // SAFETY: the intrinsics below need SSE2 only, which is part of the x86-64 baseline
        // (every `x86_64` target enables it), and they touch registers, never memory.
        unsafe { mask_sse2(low) }
    }

    /// [`mask`]'s body: safe to call wherever SSE2 is enabled, i.e. on every x86-64 target.
    #[inline(always)]
    unsafe fn mask_sse2(low: u32) -> [__m128i; 2] {
        // Bit patterns of the constants below, as `i32` lanes.
        let salt = |i: usize| SPLIT_SALTS[i] as i32;
        let x = _mm_set1_epi32(low as i32);
        // The low 32-bit lane of each 64-bit lane, for merging the two multiplies' results.
        let low_lanes = _mm_setr_epi32(-1, 0, -1, 0);
        // 1.0f32's bits: exponent 127, so `(b << 23) + ONE` is the float 2^b.
        const ONE: i32 = 0x3f80_0000;
        /// Mantissa bits of an f32: the exponent field starts here.
        const MANTISSA_BITS: i32 = 23;
        let quarter = |first: usize| {
            // `pmuludq` multiplies lanes 0 and 2: words `first` and `first + 2` from `x · even`,
            // words `first + 1` and `first + 3` from `x · odd`, moved up into lanes 1 and 3.
            let even = _mm_mul_epu32(x, _mm_setr_epi32(salt(first), 0, salt(first + 2), 0));
            let odd = _mm_mul_epu32(x, _mm_setr_epi32(salt(first + 1), 0, salt(first + 3), 0));
            let products = _mm_or_si128(_mm_and_si128(even, low_lanes), _mm_slli_epi64::<32>(odd));
            let bits = _mm_srli_epi32::<{ (SPLIT_WORD_BITS - SPLIT_BIT_WIDTH) as i32 }>(products);
            let power = _mm_add_epi32(_mm_slli_epi32::<MANTISSA_BITS>(bits), _mm_set1_epi32(ONE));
            // 2^0 … 2^30 convert exactly; 2^31 overflows to 0x8000_0000, which is 1 << 31.
            _mm_cvttps_epi32(_mm_castsi128_ps(power))
        };
        [quarter(0), quarter(4)]
    }

    /// [`super::Split::probe_block`] of the mask of `low`.
    #[inline(always)]
    pub(super) fn contains_in_block(block: &[u32; 8], low: u32) -> bool {
        let words: [__m128i; 2] = bytemuck::cast(*block);
        let [first, second] = mask(low);
        // SAFETY: SSE2 register operations on an x86-64 target, as in `mask`.
        unsafe {
            let missing = _mm_or_si128(
                _mm_andnot_si128(words[0], first),
                _mm_andnot_si128(words[1], second),
            );
            // All 16 bytes equal to zero: no bit missing.
            _mm_movemask_epi8(_mm_cmpeq_epi32(missing, _mm_setzero_si128())) == 0xffff
        }
    }
}

impl Layout for Split {
    const KIND: LayoutKind = LayoutKind::Split;

    fn size_for(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
        math::split_size(expected_items, fpp)
    }

    fn round_num_bits(num_bits: u64) -> u64 {
        num_bits.div_ceil(BLOCK_BITS).max(1) * BLOCK_BITS
    }

    fn check_params(num_hashes: u32, strategy: HashStrategy) -> Result<()> {
        if num_hashes != SPLIT_WORDS {
            return Err(Error::invalid(
                "num_hashes",
                num_hashes,
                "a split-block filter sets one bit in each of 8 words: k is always 8",
            ));
        }
        if strategy != HashStrategy::Xxh3 {
            return Err(Error::invalid(
                "hash strategy",
                strategy,
                "a split-block filter hashes with xxh3 only",
            ));
        }
        Ok(())
    }

    #[inline(always)]
    fn key_hash(key: &[u8]) -> KeyHash {
        // `h2` is unused by this layout.
        KeyHash {
            h1: xxhash_rust::xxh3::xxh3_64(key),
            h2: 0,
        }
    }

    #[inline(always)]
    fn for_each_bit(
        num_bits: u64,
        _num_hashes: u32,
        hash: KeyHash,
        mut set: impl FnMut(usize, u64),
    ) {
        let hash = Self::hash64(hash);
        // Split block j is u64 words 4j..4j + 4; u32 word i is the low (even i) or high half of
        // u64 word i / 2, little-endian, so the masks pair up into u64 words as they lie in memory.
        let base = Self::block_index(num_bits, hash) * 4;
        let mask: [u64; 4] = bytemuck::cast(Self::mask(hash));
        for (i, word) in mask.into_iter().enumerate() {
            set(base + i, word);
        }
    }

    /// Never called: [`Split::check_params`] refuses the sha256 strategy. Sets the xxh3 bits, so
    /// that even a misuse cannot write outside the key's block.
    fn for_each_bit_sha256(
        num_bits: u64,
        num_hashes: u32,
        key: &[u8],
        set: impl FnMut(usize, u64),
    ) {
        Self::for_each_bit(num_bits, num_hashes, Self::key_hash(key), set)
    }

    #[inline(always)]
    fn contains_hash(blocks: &[Block], num_bits: u64, _num_hashes: u32, hash: KeyHash) -> bool {
        Self::contains_u64(blocks, num_bits, Self::hash64(hash))
    }

    #[inline(always)]
    fn prefetch(blocks: &[Block], num_bits: u64, hash: KeyHash) {
        // Two split blocks per cache line.
        prefetch(&blocks[Self::block_index(num_bits, Self::hash64(hash)) / 2]);
    }

    fn theoretical_fpp(num_bits: u64, items: f64, _num_hashes: u32) -> f64 {
        math::split_fpp(num_bits, items)
    }

    /// The mean over blocks of `Π_i (ones_in_word_i / 32)`: a query lands in a uniformly random
    /// block and tests one uniform bit per word, so this is its exact false-positive probability
    /// given the bits as they are.
    fn current_fpp(blocks: &[Block], num_bits: u64, _num_hashes: u32) -> f64 {
        let split = &Self::split_blocks(blocks)[..(num_bits / SPLIT_BLOCK_BITS) as usize];
        if split.is_empty() {
            return 1.0;
        }
        let total: f64 = split
            .iter()
            .map(|block| {
                block
                    .iter()
                    .map(|w| f64::from(w.count_ones()) / f64::from(SPLIT_WORD_BITS))
                    .product::<f64>()
            })
            .sum();
        total / split.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn probe_equals_the_scalar_probe() {
        if !super::avx2::available() {
            return;
        }
        let mut rng = crate::rng::SplitMix64::new(32);
        for round in 0..200_000u32 {
            let low = rng.next_u64() as u32;
            // Blocks from empty to nearly full, so that both answers occur often.
            let density = round % 4;
            let block: [u32; 8] =
                std::array::from_fn(|_| (0..=density).fold(0, |w, _| w | rng.next_u64() as u32));
            let mask = Split::mask(u64::from(low));
            let block = if round % 3 == 0 {
                std::array::from_fn(|i| block[i] | mask[i])
            } else {
                block
            };
            // SAFETY: AVX2 is present, checked above.
            let got = unsafe { super::avx2::contains_in_block(&block, low) };
            assert_eq!(got, Split::probe_block(&block, &mask), "{low:#x}");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn mask_equals_the_scalar_mask() {
        let mut rng = crate::rng::SplitMix64::new(31);
        for low in [0u32, 1, u32::MAX, 0x8000_0000]
            .into_iter()
            .chain((0..100_000).map(|_| rng.next_u64() as u32))
        {
            let got: [u32; 8] = bytemuck::cast(super::sse2::mask(low));
            assert_eq!(got, Split::mask(u64::from(low)), "{low:#x}");
        }
    }

    #[test]
    fn split_mask_is_parquets() {
        // The specification's `mask`: for x = 0x12345678, word i's bit is (x·SALT[i]) >> 27.
        let x = 0x1234_5678u32;
        let mask = Split::mask(0xdead_beef_0000_0000 | u64::from(x));
        for (i, word) in mask.iter().enumerate() {
            assert_eq!(word.count_ones(), 1);
            assert_eq!(
                *word,
                1 << (x.wrapping_mul(SPLIT_SALTS[i]) >> 27),
                "word {i}"
            );
        }
        // A worked value (Python): 0x12345678 · 0x47b6137b mod 2³² = 0x62e073a8, top five bits 12.
        assert_eq!(x.wrapping_mul(0x47b6_137b), 0x62e0_73a8_u32);
        assert_eq!(mask[0], 1 << 12);
        // The block is the high half's fast range.
        assert_eq!(
            Split::block_index(1 << 20, 0xffff_ffff_0000_0000),
            (1 << 12) - 1
        );
        assert_eq!(Split::block_index(1 << 20, 0x8000_0000_0000_0000), 1 << 11);
    }

    #[test]
    fn split_bits_stay_in_one_block_one_per_word() {
        let num_bits = 64 * BLOCK_BITS;
        for key in 0..1000u32 {
            let mut words = Vec::new();
            Split::for_each_bit(num_bits, 8, Split::key_hash(&key.to_le_bytes()), |w, m| {
                words.push((w, m))
            });
            assert_eq!(words.len(), 4);
            let block = words[0].0 / 4;
            assert!(words.iter().all(|&(w, _)| w / 4 == block && w < 128 * 4));
            // One bit in each 32-bit half of each u64 word.
            assert!(words
                .iter()
                .all(|&(_, m)| (m as u32).count_ones() == 1 && (m >> 32).count_ones() == 1));
        }
    }

    #[test]
    fn split_spreads_keys_over_blocks() {
        let num_blocks = 16u64;
        let mut counts = [0u32; 16];
        for key in 0..16_000u32 {
            let hash = Split::key_hash(&key.to_le_bytes()).h1;
            counts[Split::block_index(num_blocks * SPLIT_BLOCK_BITS, hash)] += 1;
        }
        // 1000 expected per block; 5σ ≈ 160.
        assert!(
            counts.iter().all(|&c| (840..=1160).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn split_refuses_other_hash_counts_and_sha256() {
        use crate::SplitBlockBloomFilter;
        assert!(SplitBlockBloomFilter::with_num_bits(1024, 7).is_err());
        assert!(SplitBlockBloomFilter::with_num_bits(1024, 8).is_ok());
        assert!(SplitBlockBloomFilter::with_strategy(100, 0.01, HashStrategy::Sha256).is_err());
    }

    #[test]
    fn split_key_and_hash_entry_points() {
        use crate::{Filter, SplitBlockBloomFilter};
        let mut filter = SplitBlockBloomFilter::new(1000, 0.01).unwrap();
        for key in 0..1000u32 {
            filter.insert(key.to_le_bytes());
        }
        for key in 0..1000u32 {
            let bytes = key.to_le_bytes();
            assert!(filter.contains(bytes));
            assert!(filter.contains_hash64(xxhash_rust::xxh3::xxh3_64(&bytes)));
        }
        let mut by_hash = SplitBlockBloomFilter::new(1000, 0.01).unwrap();
        let hashes: Vec<KeyHash> = (0..1000u32)
            .map(|k| KeyHash::of(&k.to_le_bytes()))
            .collect();
        for &hash in &hashes {
            by_hash.insert_hash(hash);
        }
        let mut out = Vec::new();
        by_hash.contains_hash_batch(&hashes, &mut out);
        assert!(out.iter().all(|&hit| hit));
        // The exact rate given the bits is near the formula's at the sized load.
        let (now, theory) = (by_hash.expected_fpp(), by_hash.theoretical_fpp(1000.0));
        assert!((now - theory).abs() < theory * 0.5, "{now} vs {theory}");
    }
}
