//! Key hashing: one 128-bit xxh3 per key, bit positions by enhanced double hashing and Lemire's
//! fast range, and the seeds' SHA-256-per-index strategy for comparison.
//!
//! Both strategies are deterministic across machines, processes and versions (no random seed),
//! so a filter saved on one machine answers the same on another; the strategy is recorded in the
//! file header.

use sha2::{Digest, Sha256};

/// How a filter turns a key into bit positions. Recorded in the saved file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HashStrategy {
    /// One 128-bit xxh3 of the key; its halves seed enhanced double hashing. The fast default.
    #[default]
    Xxh3,
    /// Seed 000's design: position `i` is `SHA-256(key ‖ decimal(i)) mod m` (the Python
    /// `int(hashlib.sha256((url + str(i)).encode()).hexdigest(), 16) % m`). k digests per key:
    /// kept so that the report can compare it with [`HashStrategy::Xxh3`].
    Sha256,
}

impl HashStrategy {
    /// The code stored in the file header.
    pub fn code(self) -> u8 {
        match self {
            HashStrategy::Xxh3 => 0,
            HashStrategy::Sha256 => 1,
        }
    }

    /// The strategy for a header code, if it is one.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(HashStrategy::Xxh3),
            1 => Some(HashStrategy::Sha256),
            _ => None,
        }
    }

    /// The lowercase name used on the command line and in reports (`xxh3`, `sha256`).
    pub fn name(self) -> &'static str {
        match self {
            HashStrategy::Xxh3 => "xxh3",
            HashStrategy::Sha256 => "sha256",
        }
    }
}

impl std::fmt::Display for HashStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for HashStrategy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "xxh3" => Ok(HashStrategy::Xxh3),
            "sha256" | "sha-256" => Ok(HashStrategy::Sha256),
            other => Err(format!(
                "unknown hash strategy `{other}`: use xxh3 or sha256"
            )),
        }
    }
}

/// The 128-bit hash of one key, split into the two 64-bit seeds of double hashing.
///
/// Compute it once with [`KeyHash::of`] and reuse it: the `*_hash` methods of the filters take it,
/// so a caller that hashes keys incrementally (URL expressions sharing a host) can combine hashes
/// itself with [`KeyHash::combine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHash {
    /// Low 64 bits of xxh3-128: picks the first position (classic) or the block (blocked).
    pub h1: u64,
    /// High 64 bits: the step of double hashing (classic) or the bits within the block (blocked).
    pub h2: u64,
}

impl KeyHash {
    /// The xxh3-128 (seed 0, XXH3 v0.8 specification) of `key`.
    #[inline]
    pub fn of(key: &[u8]) -> Self {
        Self::from_u128(xxhash_rust::xxh3::xxh3_128(key))
    }

    /// Splits a 128-bit hash into `(low, high)` halves.
    #[inline]
    pub fn from_u128(hash: u128) -> Self {
        KeyHash {
            h1: hash as u64,
            h2: (hash >> 64) as u64,
        }
    }

    /// Combines the hashes of two parts of a key (for example a URL's host suffix and its path
    /// prefix) into the hash of the pair, without rehashing the bytes.
    ///
    /// Not the hash of the concatenation: callers must build and query with the same scheme.
    /// Each output word is a 64×64→128-bit multiply folded by XOR ("mum", the core of wyhash)
    /// of words from both inputs, so every output bit depends on all four input words; the
    /// odd constants are wyhash's secrets and make the function order-sensitive.
    #[inline]
    pub fn combine(self, other: KeyHash) -> KeyHash {
        let a = mum(self.h1 ^ WY[0], other.h1 ^ WY[1]);
        let b = mum(self.h2 ^ WY[2], other.h2 ^ WY[3]);
        KeyHash {
            h1: mum(a ^ WY[1], b ^ WY[2]),
            h2: mum(b ^ WY[0], a ^ WY[3]),
        }
    }
}

/// wyhash's default secret: four odd 64-bit constants with balanced bits (wyhash v4, `_wyp`).
const WY: [u64; 4] = [
    0x2d35_8dcc_aa6c_78a5,
    0x8bb8_4b93_962e_acc9,
    0x4b33_a62e_d433_d4a3,
    0x4d5a_2da5_1de1_aa47,
];

/// Multiplies two words to 128 bits and folds the halves by XOR.
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Maps `x` uniformly onto `0..range` with one multiplication: `⌊x·range / 2^64⌋`.
///
/// Source: Lemire, "A fast alternative to the modulo reduction" (2016). Uses the high bits of
/// `x`, which xxh3 mixes as well as the low ones; no division, unlike `%`.
#[inline(always)]
pub fn fast_range(x: u64, range: u64) -> u64 {
    ((u128::from(x) * u128::from(range)) >> 64) as u64
}

/// The k classic bit positions of a key hash by enhanced double hashing:
/// `x₀ = h1, y₀ = h2; xᵢ₊₁ = xᵢ + yᵢ, yᵢ₊₁ = yᵢ + i` (mod 2^64), position `i` = fast_range(xᵢ, m).
///
/// Source: Dillinger & Manolios, "Bloom Filters in Probabilistic Verification" (FMCAD 2004),
/// Algorithm 2; Kirsch & Mitzenmacher (2006) show two hashes lose nothing asymptotically. The
/// cubic term avoids plain double hashing's repeated positions when `y` is small.
#[inline(always)]
pub fn double_hashing(hash: KeyHash, num_bits: u64, num_hashes: u32, mut visit: impl FnMut(u64)) {
    let (mut x, mut y) = (hash.h1, hash.h2);
    for i in 0..num_hashes {
        visit(fast_range(x, num_bits));
        x = x.wrapping_add(y);
        y = y.wrapping_add(u64::from(i));
    }
}

/// `SHA-256(key ‖ decimal(index))`, the digest seed 000 computes for hash function `index`.
pub fn sha256_index_digest(key: &[u8], index: u32) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(key);
    hasher.update(index.to_string().as_bytes());
    hasher.finalize().into()
}

/// The 256-bit big-endian integer `digest` modulo `modulus`, as Python's `int(hexdigest, 16) % m`.
///
/// Horner's rule one byte at a time; the remainder stays below `modulus < 2^64`, so
/// `remainder·256 + byte < 2^72` fits in a `u128`.
pub fn digest_mod(digest: &[u8; 32], modulus: u64) -> u64 {
    let modulus = u128::from(modulus.max(1));
    let mut remainder = 0u128;
    for &byte in digest {
        remainder = ((remainder << 8) | u128::from(byte)) % modulus;
    }
    remainder as u64
}

/// Seed 000's k positions: `SHA-256(key ‖ decimal(i)) mod m` for `i` in `0..k`.
pub fn sha256_positions(key: &[u8], num_bits: u64, num_hashes: u32, mut visit: impl FnMut(u64)) {
    for i in 0..num_hashes {
        visit(digest_mod(&sha256_index_digest(key, i), num_bits));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh3_128_matches_the_specification_vector() {
        // XXH3_128bits("") with seed 0, from the xxHash reference test vectors.
        assert_eq!(
            xxhash_rust::xxh3::xxh3_128(b""),
            0x99aa_06d3_0147_98d8_6001_c324_468d_497f
        );
        let hash = KeyHash::of(b"");
        assert_eq!(hash.h1, 0x6001_c324_468d_497f);
        assert_eq!(hash.h2, 0x99aa_06d3_0147_98d8);
    }

    #[test]
    fn sha256_positions_reproduce_seed_000_python() {
        // Computed with seed 000's Python: [int(sha256((u + str(i)).encode()).hexdigest(), 16)
        // % 98985 for i in range(7)].
        let cases: [(&str, [u64; 7]); 2] = [
            (
                "metamascks.com",
                [33410, 32364, 57526, 54138, 91055, 87804, 60342],
            ),
            (
                "http://fake-site.example.com",
                [13693, 16697, 94310, 29137, 95714, 70748, 64616],
            ),
        ];
        for (key, want) in cases {
            let mut got = Vec::new();
            sha256_positions(key.as_bytes(), 98_985, 7, |p| got.push(p));
            assert_eq!(got, want, "{key}");
        }
    }

    #[test]
    fn fast_range_stays_in_range_and_spans_it() {
        assert_eq!(fast_range(0, 10), 0);
        assert_eq!(fast_range(u64::MAX, 10), 9);
        assert_eq!(fast_range(u64::MAX / 2 + 1, 10), 5);
        assert_eq!(fast_range(12345, 1), 0);
    }

    #[test]
    fn double_hashing_positions_are_in_range_and_distinct_enough() {
        let mut positions = Vec::new();
        double_hashing(KeyHash::of(b"key"), 1000, 7, |p| positions.push(p));
        assert_eq!(positions.len(), 7);
        assert!(positions.iter().all(|&p| p < 1000));
        positions.sort_unstable();
        positions.dedup();
        assert!(positions.len() >= 6);
    }

    #[test]
    fn combine_is_order_sensitive_and_deterministic() {
        let (a, b) = (KeyHash::of(b"evil.com"), KeyHash::of(b"/a"));
        assert_eq!(a.combine(b), a.combine(b));
        assert_ne!(a.combine(b), b.combine(a));
    }

    #[test]
    fn strategy_codes_and_names_round_trip() {
        for strategy in [HashStrategy::Xxh3, HashStrategy::Sha256] {
            assert_eq!(HashStrategy::from_code(strategy.code()), Some(strategy));
            assert_eq!(strategy.name().parse::<HashStrategy>(), Ok(strategy));
        }
        assert_eq!(HashStrategy::from_code(7), None);
        assert!("md5".parse::<HashStrategy>().is_err());
    }
}
