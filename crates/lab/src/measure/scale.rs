//! Section 7's measurements, seed 002 at full scale: 10⁸ synthetic spam keywords at p = 0.01 —
//! built on every thread and on one (the bits must agree), and in the blocked layout; build
//! time, resident-memory growth, a sample of members and the non-member rate.

use std::time::Instant;

use phishbloom_filter::math;
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, Layout, LayoutKind};

use crate::error::Result;
use crate::keys::{count_listed, insert_range, CLEAN_WORDS, SPAM_KEYWORDS};
use crate::measure::machine::{resident_bytes, resident_growth};
use crate::measure::sizing::TARGET;
use crate::measure::{sizing_error, Settings};
use crate::stats::Measurement;

/// The first non-member index of the blocked filter's queries: 2^40, disjoint from the classic
/// filter's (which start at 0 and number far fewer).
const BLOCKED_QUERY_OFFSET: u64 = 1 << 40;

/// One build of the seed 002 filter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScaleBuild {
    /// Layout.
    #[serde(serialize_with = "crate::serialize_display")]
    pub layout: LayoutKind,
    /// m.
    pub m: u64,
    /// k.
    pub k: u32,
    /// Bytes of the bit array.
    pub bytes: u64,
    /// Threads that inserted.
    pub threads: usize,
    /// Wall time of the inserts, in seconds.
    pub seconds: f64,
    /// Growth of the process's resident memory over the build (`None` off Linux).
    pub rss_growth: Option<u64>,
}

/// A built filter's answers: a sample of members and fresh non-members.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScaleCheck {
    /// Members re-queried (the first ones inserted).
    pub member_checks: u64,
    /// Of those, answered "not listed" (must be 0).
    pub false_negatives: u64,
    /// The rate on non-members.
    pub measured: Measurement,
}

/// Section 7's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Scale {
    /// Keywords inserted.
    pub n: u64,
    /// The classic filter on every thread.
    pub parallel: ScaleBuild,
    /// Its answers.
    pub parallel_check: ScaleCheck,
    /// The classic filter on one thread.
    pub single: ScaleBuild,
    /// Whether the single-threaded build set exactly the parallel build's bits.
    pub single_bits_identical: bool,
    /// The blocked filter on every thread.
    pub blocked: ScaleBuild,
    /// Its answers.
    pub blocked_check: ScaleCheck,
}

impl Scale {
    /// One-thread build time ÷ parallel build time (> 1: the threads were faster).
    pub fn speedup(&self) -> f64 {
        self.single.seconds / self.parallel.seconds
    }
}

/// Builds a filter of `m` bits and `k` hashes from the keywords on `threads` threads.
fn build<L: Layout>(
    settings: &Settings,
    m: u64,
    k: u32,
    threads: usize,
) -> Result<(Bloom<L>, ScaleBuild)> {
    let before = resident_bytes();
    let mut filter =
        Bloom::<L>::with_num_bits(m, k).map_err(sizing_error("seed 002 at scale", m, k))?;
    let started = Instant::now();
    insert_range(
        &mut filter,
        SPAM_KEYWORDS,
        0..settings.sizes.scale_keys,
        threads,
    );
    let seconds = started.elapsed().as_secs_f64();
    let build = ScaleBuild {
        layout: L::KIND,
        m: filter.num_bits(),
        k,
        bytes: filter.size_in_bytes(),
        threads,
        seconds,
        rss_growth: resident_growth(before),
    };
    Ok((filter, build))
}

/// Queries a built filter: a sample of members, then non-members from index `offset` on.
fn check(settings: &Settings, filter: &dyn Filter, offset: u64) -> ScaleCheck {
    let sizes = &settings.sizes;
    let checks = sizes.scale_member_checks.min(sizes.scale_keys);
    // The first `checks` keywords: inserted in chunks like all others, so a fair sample.
    let false_negatives = checks - count_listed(filter, SPAM_KEYWORDS, 0..checks, settings.threads);
    let hits = count_listed(
        filter,
        CLEAN_WORDS,
        offset..offset + sizes.scale_queries,
        settings.threads,
    );
    ScaleCheck {
        member_checks: checks,
        false_negatives,
        measured: Measurement::new(
            hits,
            sizes.scale_queries,
            filter.theoretical_fpp(sizes.scale_keys as f64),
        ),
    }
}

/// Runs the section's measurements.
pub fn run(settings: &Settings) -> Result<Scale> {
    let n = settings.sizes.scale_keys;
    let m = math::optimal_num_bits(n, TARGET).map_err(sizing_error("seed 002 at scale", 0, 0))?;
    let k = math::optimal_num_hashes(n, m);
    let (blocked_m, blocked_k) =
        math::blocked_size(n, TARGET).map_err(sizing_error("seed 002 at scale", 0, 0))?;
    let threads = settings.threads;
    let progress = &settings.progress;

    progress.say(&format!(
        "seed 002: classic filter, {n} keys, {threads} threads"
    ));
    let (parallel_filter, parallel) = build::<Classic>(settings, m, k, threads)?;
    progress.say(&format!("  built in {:.1} s; measuring", parallel.seconds));
    let parallel_check = check(settings, &parallel_filter, 0);
    progress.say("seed 002: classic filter, 1 thread");
    let (single_filter, single) = build::<Classic>(settings, m, k, 1)?;
    let single_bits_identical = single_filter.words() == parallel_filter.words();
    drop(parallel_filter);
    drop(single_filter);
    progress.say(&format!("seed 002: blocked filter, {threads} threads"));
    let (blocked_filter, blocked) = build::<Blocked>(settings, blocked_m, blocked_k, threads)?;
    let blocked_check = check(settings, &blocked_filter, BLOCKED_QUERY_OFFSET);
    Ok(Scale {
        n,
        parallel,
        parallel_check,
        single,
        single_bits_identical,
        blocked,
        blocked_check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_and_single_builds_agree_bit_for_bit() {
        let settings = Settings {
            sizes: crate::measure::Sizes {
                scale_keys: 20_000,
                scale_queries: 20_000,
                scale_member_checks: 5_000,
                ..crate::measure::Sizes::quick()
            },
            ..Settings::new("unused.csv".into(), true, 2, false)
        };
        let scale = run(&settings).unwrap();
        assert!(scale.single_bits_identical);
        assert_eq!(scale.parallel.threads, 2);
        assert_eq!(scale.single.threads, 1);
        for c in [&scale.parallel_check, &scale.blocked_check] {
            assert_eq!((c.member_checks, c.false_negatives), (5_000, 0));
            // 2·10⁴ queries at ≈ 1 %: ≈ 200 expected, σ ≈ 14; 5 σ plus one count.
            let m = &c.measured;
            let expected = m.queries as f64 * m.theoretical;
            let sigma = (expected * (1.0 - m.theoretical)).sqrt();
            assert!(
                (m.false_positives as f64 - expected).abs() <= 5.0 * sigma + 1.0,
                "{m:?}"
            );
        }
    }
}
