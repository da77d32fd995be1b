//! How a blocked-layout filter is laid out in Redis: key names, chunks, where a block and a bit
//! live, and the per-chunk checksum that `add` can keep up to date.
//!
//! # Keys of list `NAME`
//! - `NAME:current` — the live version number (decimal), written last by a push.
//! - `NAME:seq` — the counter pushes draw version numbers from (`INCR`).
//! - `NAME:vV:meta` — version V's metadata hash ([`crate::meta`]).
//! - `NAME:vV:I` — chunk I of version V's bit array: bytes `I·C .. I·C + C` of the file's bit
//!   array (C = chunk bytes, at most [`MAX_CHUNK_BYTES`], a multiple of 64 bytes, so that a
//!   block never straddles two chunks); the last chunk may be shorter.
//! - `NAME:vV:verify:J` — chunk J of the sorted verification table (little-endian u64s), when
//!   the file has one.
//! - `NAME:vV:categories:J`, `NAME:vV:category-sets:J`, `NAME:vV:exceptions:J` — chunk J of the
//!   file's categories, category sets (with a verification table of several categories) and
//!   exceptions (when it has any): each the bytes of the file's own section ([`Section`]).
//! - `NAME:vV:added` — the set of verification fingerprints of keys `add` inserted.
//! - `NAME:vV:added-categories` — for keys `add` inserted in a named category of a list of
//!   several: fingerprint (decimal) → the category ids (decimal, comma-separated, ids of the
//!   pushed file's categories section). A key without a field answers with the possible
//!   categories.
//!
//! No key holds a hash tag (`{…}`), so the chunks hash to slots all over a cluster.

use phishbloom_filter::rng::SplitMix64;

/// The largest chunk: 1 MiB, so that a push sends moderate values and a cluster spreads even a
/// small filter over its nodes.
pub const MAX_CHUNK_BYTES: u64 = 1 << 20;

/// Bytes in one block of the blocked layout (512 bits: one cache line).
pub const BLOCK_BYTES: u64 = 64;

/// The key names of list `name`.
#[derive(Clone, Debug)]
pub struct Keys {
    name: String,
}

impl Keys {
    /// The keys of `name` (validated by [`crate::validate_name`] beforehand).
    pub fn new(name: &str) -> Self {
        Keys {
            name: name.to_string(),
        }
    }

    /// The list name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `NAME:current`.
    pub fn current(&self) -> String {
        format!("{}:current", self.name)
    }

    /// `NAME:seq`.
    pub fn seq(&self) -> String {
        format!("{}:seq", self.name)
    }

    /// `NAME:vV:meta`.
    pub fn meta(&self, version: u64) -> String {
        format!("{}:v{version}:meta", self.name)
    }

    /// `NAME:vV:I`.
    pub fn chunk(&self, version: u64, chunk: u64) -> String {
        format!("{}:v{version}:{chunk}", self.name)
    }

    /// `NAME:vV:verify:J`.
    pub fn verify_chunk(&self, version: u64, chunk: u64) -> String {
        self.section(version, Section::Verify, chunk)
    }

    /// `NAME:vV:SECTION:J` (`SECTION` is [`Section::name`]).
    pub fn section(&self, version: u64, section: Section, chunk: u64) -> String {
        format!("{}:v{version}:{}:{chunk}", self.name, section.name())
    }

    /// `NAME:vV:added`.
    pub fn added(&self, version: u64) -> String {
        format!("{}:v{version}:added", self.name)
    }

    /// `NAME:vV:added-categories`.
    pub fn added_categories(&self, version: u64) -> String {
        format!("{}:v{version}:added-categories", self.name)
    }
}

/// A section of the blocklist file stored beside the filter, as chunks of the file's own bytes
/// (each with its xxh3-64 in the metadata): what turns filter hits into verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// The verification table: sorted little-endian u64 fingerprints.
    Verify,
    /// A compact list's table (`sections::encode_compact`): what a compact version holds
    /// instead of a bit array, read whole by each reader, which answers from it.
    Compact,
    /// The categories: names and entry counts (`sections::encode_categories`).
    Categories,
    /// The category set of each fingerprint of the table (`sections::encode_category_sets`).
    CategorySets,
    /// The exception entries (`sections::encode_exceptions`).
    Exceptions,
    /// The fingerprints of the domain entries of a single label (sorted little-endian u64, as
    /// the file's top-labels section): only with them are URLs' top labels probed.
    Tops,
}

impl Section {
    /// Every section, in the order a version stores and reads them.
    pub const ALL: [Section; 6] = [
        Section::Verify,
        Section::Compact,
        Section::Categories,
        Section::CategorySets,
        Section::Exceptions,
        Section::Tops,
    ];

    /// The name in its keys (`NAME:vV:NAME:J`) and the prefix of its metadata fields.
    pub fn name(self) -> &'static str {
        match self {
            Section::Verify => "verify",
            Section::Compact => "compact",
            Section::Categories => "categories",
            Section::CategorySets => "category-sets",
            Section::Exceptions => "exceptions",
            Section::Tops => "tops",
        }
    }
}

/// How a bit array of `bytes` bytes is cut into chunks of `chunk_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Chunking {
    /// Bytes of the whole array.
    pub bytes: u64,
    /// Bytes per chunk (the last may be shorter).
    pub chunk_bytes: u64,
}

impl Chunking {
    /// Number of chunks.
    pub fn chunks(&self) -> u64 {
        self.bytes.div_ceil(self.chunk_bytes.max(1))
    }

    /// Length of chunk `chunk`.
    pub fn len_of(&self, chunk: u64) -> u64 {
        let start = chunk * self.chunk_bytes;
        self.chunk_bytes.min(self.bytes.saturating_sub(start))
    }

    /// The chunk holding block `block`, and the block's byte offset inside it.
    pub fn locate(&self, block: u64) -> (u64, u64) {
        let byte = block * BLOCK_BYTES;
        (byte / self.chunk_bytes, byte % self.chunk_bytes)
    }
}

/// The Redis bit offset (as `BITFIELD`, `SETBIT` and `GETBIT` count: bit 0 is the most
/// significant bit of byte 0) of in-block bit `bit` (0..512) of the block at byte `block_offset`
/// of its chunk.
///
/// In the filter, bit `b` of a block is bit `b % 64` of its little-endian word `b / 64`, which is
/// bit `b % 8` (counted from the least significant) of the block's byte `b / 8`; Redis counts
/// bits within a byte from the most significant, hence `7 − b % 8`.
pub fn redis_bit_offset(block_offset: u64, bit: u64) -> u64 {
    (block_offset + bit / 8) * 8 + (7 - bit % 8)
}

/// Width of the chunk checksum: 39 bits, so that a chunk's stored sum plus the weight of every
/// one of its 2²³ bits set later (each below 2³⁹) stays below 2⁶², inside Redis's signed 64-bit
/// `HINCRBY` with room to spare.
pub const SUM_BITS: u32 = 39;

/// Mask of [`SUM_BITS`].
const SUM_MASK: u64 = (1 << SUM_BITS) - 1;

/// Seed of the per-bit-position weights (any fixed value: it only has to be the same for every
/// writer and reader of a list).
const WEIGHT_SEED: u64 = 0x7068_6973_6862_6c6f; // "phishblo"

/// The chunk checksum: `Σ weight(bit) mod 2³⁹` over the set bits of a chunk, where the weight of
/// bit `r` of byte `j` is `mix(j) · P[r]` (`mix` SplitMix64's output function, `P` eight odd
/// constants from SplitMix64).
///
/// Being a sum over set bits, it is updated by `add` without reading the chunk: each bit it
/// turns from 0 to 1 (`BITFIELD` returns the old values) adds its weight (`HINCRBY`). A
/// damaged chunk differs in some bits; the sum then changes unless the weights of the changed
/// bits cancel mod 2³⁹, which random weights do with probability about 2⁻³⁹. It detects
/// damage, not tampering.
#[derive(Clone, Debug)]
pub struct BitSum {
    /// `byte_weights[v]` = Σ P[r] over the set bits r of byte value v.
    byte_weights: [u64; 256],
    bit_weights: [u64; 8],
}

impl Default for BitSum {
    fn default() -> Self {
        let mut rng = SplitMix64::new(WEIGHT_SEED);
        // Odd multipliers: multiplying by an odd number is a bijection mod 2^64.
        let bit_weights: [u64; 8] = std::array::from_fn(|_| rng.next_u64() | 1);
        let byte_weights = std::array::from_fn(|value| {
            (0..8)
                .filter(|r| value >> r & 1 == 1)
                .fold(0u64, |sum, r| sum.wrapping_add(bit_weights[r]))
        });
        BitSum {
            byte_weights,
            bit_weights,
        }
    }
}

impl BitSum {
    fn mix(byte: u64) -> u64 {
        SplitMix64::new(byte).next_u64()
    }

    /// The checksum of a whole chunk.
    pub fn of(&self, chunk: &[u8]) -> u64 {
        let mut sum = 0u64;
        for (j, &value) in chunk.iter().enumerate() {
            if value != 0 {
                sum = sum.wrapping_add(
                    Self::mix(j as u64).wrapping_mul(self.byte_weights[usize::from(value)]),
                );
            }
        }
        sum & SUM_MASK
    }

    /// The weight of bit `bit` of byte `byte` of a chunk (bit counted from the least
    /// significant): what turning it on adds to the checksum. Below 2³⁹.
    pub fn weight(&self, byte: u64, bit: u32) -> u64 {
        Self::mix(byte).wrapping_mul(self.bit_weights[bit as usize % 8]) & SUM_MASK
    }

    /// Whether a stored sum (the pushed sum plus the weights `add` added since) matches `computed`.
    pub fn matches(stored: u64, computed: u64) -> bool {
        stored & SUM_MASK == computed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::{Blocked, BlockedBloomFilter, Filter, KeyHash};

    /// A Redis string as `SETBIT` sees it: bit `o` is bit `7 − o % 8` of byte `o / 8`.
    fn redis_setbit(bytes: &mut [u8], offset: u64) {
        bytes[(offset / 8) as usize] |= 0x80 >> (offset % 8);
    }

    #[test]
    fn bits_set_through_redis_offsets_are_the_filters_bits() {
        let mut filter = BlockedBloomFilter::new(2000, 0.01).unwrap();
        let chunking = Chunking {
            bytes: filter.bit_bytes().len() as u64,
            chunk_bytes: 1024,
        };
        let mut chunks = vec![vec![0u8; 1024]; chunking.chunks() as usize];
        for key in 0..2000u32 {
            let hash = KeyHash::of(&key.to_le_bytes());
            filter.insert_hash(hash);
            let block = Blocked::block_index(filter.num_bits(), hash) as u64;
            let (chunk, offset) = chunking.locate(block);
            Blocked::block_bits(filter.num_hashes(), hash, |bit| {
                redis_setbit(&mut chunks[chunk as usize], redis_bit_offset(offset, bit))
            });
        }
        let joined: Vec<u8> = chunks.concat();
        assert_eq!(&joined[..filter.bit_bytes().len()], filter.bit_bytes());
    }

    #[test]
    fn chunks_hold_whole_blocks() {
        let chunking = Chunking {
            bytes: 64 * 100,
            chunk_bytes: 64 * 16,
        };
        assert_eq!(chunking.chunks(), 7);
        assert_eq!(chunking.len_of(6), 64 * 4);
        assert_eq!(chunking.locate(0), (0, 0));
        assert_eq!(chunking.locate(17), (1, 64));
        assert_eq!(chunking.locate(99), (6, 64 * 3));
    }

    #[test]
    fn the_checksum_follows_single_bits() {
        let sums = BitSum::default();
        let mut chunk = vec![0u8; 4096];
        let mut rng = SplitMix64::new(1);
        for byte in chunk.iter_mut().take(2048) {
            *byte = rng.next_u64() as u8;
        }
        let mut stored = sums.of(&chunk);
        // Turning bits on adds their weights, as `add` does with HINCRBY.
        for _ in 0..500 {
            let (byte, bit) = (rng.below(4096), rng.below(8) as u32);
            if chunk[byte as usize] & (1 << bit) == 0 {
                chunk[byte as usize] |= 1 << bit;
                stored += sums.weight(byte, bit);
            }
        }
        assert!(BitSum::matches(stored, sums.of(&chunk)));
        // Any one changed bit, and a swapped pair of bytes, change the sum.
        for byte in [0usize, 1, 777, 4095] {
            let mut damaged = chunk.clone();
            damaged[byte] ^= 0x10;
            assert!(!BitSum::matches(stored, sums.of(&damaged)));
        }
        let mut swapped = chunk.clone();
        swapped.swap(3, 4);
        assert_ne!(chunk[3], chunk[4]);
        assert!(!BitSum::matches(stored, sums.of(&swapped)));
    }

    #[test]
    fn keys_carry_no_hash_tag() {
        let keys = Keys::new("phish");
        assert_eq!(keys.chunk(7, 3), "phish:v7:3");
        assert_eq!(keys.meta(7), "phish:v7:meta");
        assert_eq!(keys.current(), "phish:current");
        assert!(!keys.verify_chunk(7, 0).contains('{'));
        assert_eq!(keys.verify_chunk(7, 2), "phish:v7:verify:2");
        assert_eq!(
            keys.section(7, Section::CategorySets, 0),
            "phish:v7:category-sets:0"
        );
    }
}
