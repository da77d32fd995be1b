//! Deterministic key generators shared by this crate's integration tests.

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, portable, fixed-seed generator.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A URL-like key: `http://` + 10 lowercase letters + `.com/` + a number (seed 000's shape,
    /// with a suffix that keeps member and non-member streams disjoint by their `tag`).
    pub fn url(&mut self, tag: &str) -> String {
        let mut host = String::with_capacity(10);
        let mut bits = self.next_u64();
        for _ in 0..10 {
            host.push((b'a' + (bits % 26) as u8) as char);
            bits /= 26;
        }
        format!("http://{host}.com/{tag}/{}", self.next_u64() % 1_000_000)
    }
}
