//! Deterministic key generators shared by this crate's integration tests.

use phishbloom_filter::rng::SplitMix64;

/// A URL-like key: `http://` + 10 lowercase letters + `.com/` + a number (seed 000's shape,
/// with a suffix that keeps member and non-member streams disjoint by their `tag`).
pub fn url(rng: &mut SplitMix64, tag: &str) -> String {
    let mut host = String::with_capacity(10);
    let mut bits = rng.next_u64();
    for _ in 0..10 {
        host.push((b'a' + (bits % 26) as u8) as char);
        bits /= 26;
    }
    format!("http://{host}.com/{tag}/{}", rng.next_u64() % 1_000_000)
}
