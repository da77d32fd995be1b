//! Section 5's measurements: seed 000's SHA-256-per-index positions against one xxh3-128 with
//! double hashing, on the same keys and the same m and k — rates, and build and query times
//! measured side by side (interleaved builds, the median kept).

use std::collections::HashSet;
use std::time::Instant;

use phishbloom_core::keys::KeyScheme;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, HashStrategy, Layout, LayoutKind};

use crate::error::Result;
use crate::measure::dataset::{read_keys, DatasetKeys};
use crate::measure::sizing::TARGET;
use crate::measure::{sizing_error, Settings};
use crate::stats::Measurement;
use phishbloom_blocklist::eval::random_url;

/// Seed of the random URLs of this section (different from section 2's, so the sets differ).
pub const RANDOM_SEED: u64 = 5;

/// One strategy on one layout.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StrategyRun {
    /// Hash strategy.
    #[serde(serialize_with = "crate::serialize_display")]
    pub strategy: HashStrategy,
    /// m.
    pub m: u64,
    /// k.
    pub k: u32,
    /// Members the filter answered "not listed" (must be 0).
    pub false_negatives: u64,
    /// The rate on the non-members, with the theory for this m, k, n.
    pub measured: Measurement,
    /// Median seconds to insert all members (one thread).
    pub build_seconds: f64,
    /// Seconds to answer every non-member once (one thread).
    pub query_seconds: f64,
}

/// Both strategies on one layout, built and queried back to back.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Comparison {
    /// Layout.
    #[serde(serialize_with = "crate::serialize_display")]
    pub layout: LayoutKind,
    /// The default: one xxh3-128, enhanced double hashing.
    pub xxh3: StrategyRun,
    /// Seed 000's: SHA-256(key ‖ str(i)) mod m per index.
    pub sha256: StrategyRun,
}

impl Comparison {
    /// SHA-256's median build time ÷ xxh3's.
    pub fn build_ratio(&self) -> f64 {
        self.sha256.build_seconds / self.xxh3.build_seconds
    }

    /// SHA-256's query time ÷ xxh3's.
    pub fn query_ratio(&self) -> f64 {
        self.sha256.query_seconds / self.xxh3.query_seconds
    }
}

/// Section 5's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HashStrategies {
    /// Phishing keys inserted (n).
    pub n: u64,
    /// Benign keys of the dataset among the non-members.
    pub benign: u64,
    /// Random URLs among the non-members.
    pub random: u64,
    /// Timed builds per strategy.
    pub repetitions: usize,
    /// Classic, then blocked.
    pub comparisons: Vec<Comparison>,
}

/// Builds `L` filters with both strategies `repetitions` times, interleaved, and measures them.
fn compare<L: Layout>(
    keys: &DatasetKeys,
    queries: &[Vec<u8>],
    repetitions: usize,
) -> Result<Comparison> {
    let n = keys.phishing.len() as u64;
    let strategies = [HashStrategy::Xxh3, HashStrategy::Sha256];
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut built: [Option<Bloom<L>>; 2] = [None, None];
    for _ in 0..repetitions.max(1) {
        for (slot, &strategy) in strategies.iter().enumerate() {
            let mut filter = Bloom::<L>::with_strategy(n, TARGET, strategy)
                .map_err(sizing_error("hash strategies", 0, 0))?;
            let started = Instant::now();
            for key in keys.phishing.iter() {
                filter.insert(key);
            }
            times[slot].push(started.elapsed().as_secs_f64());
            built[slot] = Some(filter);
        }
    }
    let mut runs = Vec::new();
    for (slot, strategy) in strategies.into_iter().enumerate() {
        // Set in the loop above, which runs at least once.
        let filter = built[slot].take().expect("built at least once");
        let false_negatives = keys
            .phishing
            .iter()
            .filter(|key| !filter.contains(key))
            .count() as u64;
        let started = Instant::now();
        let hits = queries.iter().filter(|key| filter.contains(key)).count() as u64;
        let query_seconds = started.elapsed().as_secs_f64();
        times[slot].sort_by(f64::total_cmp);
        runs.push(StrategyRun {
            strategy,
            m: filter.num_bits(),
            k: filter.num_hashes(),
            false_negatives,
            measured: Measurement::new(
                hits,
                queries.len() as u64,
                filter.theoretical_fpp(n as f64),
            ),
            build_seconds: times[slot][times[slot].len() / 2],
            query_seconds,
        });
    }
    // Two strategies were pushed, xxh3 first.
    let sha256 = runs.pop().expect("two runs");
    let xxh3 = runs.pop().expect("two runs");
    Ok(Comparison {
        layout: L::KIND,
        xxh3,
        sha256,
    })
}

/// Runs the comparison on the dataset's keys (`all_keys`, or at most the sizes'
/// `hash_key_limit` of them, read again) against their benign keys and random URLs.
pub fn run(settings: &Settings, all_keys: &DatasetKeys) -> Result<HashStrategies> {
    settings.progress.say("hash strategies: xxh3 vs SHA-256");
    let sizes = &settings.sizes;
    let limited;
    let keys = if sizes.hash_key_limit < all_keys.phishing.len() {
        limited = read_keys(&settings.data, sizes.hash_key_limit)?;
        &limited
    } else {
        all_keys
    };
    let mut queries = keys.benign.clone();
    let members: HashSet<&[u8]> = keys.phishing.iter().collect();
    let mut rng = SplitMix64::new(RANDOM_SEED);
    let mut key = Vec::new();
    let mut random = 0u64;
    while random < sizes.hash_random {
        KeyScheme::Url.normalize_into(random_url(&mut rng).as_bytes(), &mut key);
        if !members.contains(key.as_slice()) {
            queries.push(key.clone());
            random += 1;
        }
    }
    let reps = sizes.hash_repetitions;
    Ok(HashStrategies {
        n: keys.phishing.len() as u64,
        benign: keys.benign.len() as u64,
        random,
        repetitions: reps,
        comparisons: vec![
            compare::<Classic>(keys, &queries, reps)?,
            compare::<Blocked>(keys, &queries, reps)?,
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::KeyList;

    #[test]
    fn both_strategies_build_the_same_size_with_no_false_negatives() {
        let mut keys = DatasetKeys::default();
        let mut rng = SplitMix64::new(11);
        let mut phishing = KeyList::default();
        for _ in 0..300 {
            phishing.push(random_url(&mut rng).as_bytes());
        }
        keys.phishing = phishing;
        let queries: Vec<Vec<u8>> = (0..2_000)
            .map(|i| format!("other-{i}").into_bytes())
            .collect();
        let c = compare::<Classic>(&keys, &queries, 2).unwrap();
        assert_eq!(c.layout, LayoutKind::Classic);
        assert_eq!((c.xxh3.m, c.xxh3.k), (c.sha256.m, c.sha256.k));
        for run in [&c.xxh3, &c.sha256] {
            assert_eq!(run.false_negatives, 0);
            assert_eq!(run.measured.queries, 2_000);
            assert!(run.build_seconds > 0.0 && run.query_seconds > 0.0);
        }
        assert_eq!(c.xxh3.strategy, HashStrategy::Xxh3);
        assert!(c.build_ratio() > 0.0 && c.query_ratio().is_finite());
    }
}
