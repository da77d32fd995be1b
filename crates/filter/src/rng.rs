//! The one seeded pseudo-random generator of phishbloom (experiments, tests, cuckoo evictions)
//! (also the blocked layout's in-block re-mix).
//!
//! Experiments must be repeatable on any machine, so they use SplitMix64 with an explicit seed
//! rather than an OS-seeded generator.

/// SplitMix64's finalizer: a bijection of 64-bit values whose output bits each depend on every
/// input bit (also what sketches mix shingle hashes with, `phishbloom_text::minhash`).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014): 64-bit state, passes BigCrush, trivially portable.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator with the given seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 pseudo-random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        // The constants are SplitMix64's: the golden-ratio increment and the two mix multipliers.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// A uniform integer in `0..bound` (Lemire's multiply-shift; bias below 2^-40 for the small
    /// bounds used here).
    pub fn below(&mut self, bound: u64) -> u64 {
        crate::hash::fast_range(self.next_u64(), bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_its_reference_output() {
        // First output of SplitMix64 seeded with 0 (reference implementation by Vigna).
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }
}
