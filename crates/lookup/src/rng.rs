//! A fixed-seed pseudo-random generator and seed 000's random-URL generator.
//!
//! Experiments must be repeatable on any machine, so they use SplitMix64 with an explicit seed
//! rather than an OS-seeded generator.

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
    pub fn next_u64(&mut self) -> u64 {
        // The constants are SplitMix64's: the golden-ratio increment and the two mix multipliers.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..bound` (Lemire's multiply-shift; bias below 2^-40 for the small
    /// bounds used here).
    pub fn below(&mut self, bound: u64) -> u64 {
        phishbloom_filter::fast_range(self.next_u64(), bound)
    }

    /// Seed 000's test URL: `http://` + 10 random lowercase letters + `.com`.
    pub fn random_url(&mut self) -> String {
        let mut url = String::with_capacity(21);
        url.push_str("http://");
        for _ in 0..10 {
            url.push(char::from(b'a' + self.below(26) as u8));
        }
        url.push_str(".com");
        url
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

    #[test]
    fn random_urls_have_seed_000s_shape_and_repeat_per_seed() {
        let mut a = SplitMix64::new(7);
        let url = a.random_url();
        assert_eq!(url.len(), 21);
        assert!(url.starts_with("http://") && url.ends_with(".com"));
        assert!(url[7..17].bytes().all(|b| b.is_ascii_lowercase()));
        assert_eq!(SplitMix64::new(7).random_url(), url);
        assert_ne!(a.random_url(), url);
    }
}
