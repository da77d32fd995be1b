//! Sections 3 and 4's measurements: filters of both layouts built from synthetic members at a
//! range of k (m/n = 10, 20, 30) and of bits per key (4 to 24), each checked for false
//! negatives and queried with fresh non-members until enough false positives are expected.

use std::ops::RangeInclusive;

use phishbloom_filter::math::{self, BLOCK_BITS};
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, Layout, LayoutKind};

use crate::error::Result;
use crate::keys::{count_listed, insert_range, MEMBERS, NON_MEMBERS};
use crate::measure::{sizing_error, Settings};
use crate::stats::Measurement;
use crate::theory;

/// The bits-per-key ratios of seed 001's table, measured in section 3.
pub const RATIOS: [u64; 3] = [10, 20, 30];
/// k measured in section 3 (1…12).
pub const MEASURED_K: RangeInclusive<u32> = 1..=12;
/// Bits per key measured in section 4.
pub const BITS_PER_KEY: RangeInclusive<u64> = 4..=24;
/// Query-index blocks per sweep point: 2^36 indices each, far more than any point queries,
/// so every point draws fresh, independent non-members.
const POINT_STRIDE_BITS: u32 = 36;
/// The first query block of section 4: after section 3's 3 ratios × 12 k × 2 layouts = 72.
const BITS_FIRST_POINT: u64 = 1_000;

/// One measured filter of a sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepPoint {
    /// The m/n the filter was asked for (before the blocked layout's rounding to whole blocks).
    pub bits_per_key: u64,
    /// Layout.
    #[serde(serialize_with = "crate::serialize_display")]
    pub layout: LayoutKind,
    /// m (after the blocked layout's rounding to whole blocks).
    pub m: u64,
    /// k.
    pub k: u32,
    /// n.
    pub n: u64,
    /// Members the filter answered "not listed" (must be 0).
    pub false_negatives: u64,
    /// The rate on fresh non-members, with the exact theory for this m, k, n.
    pub measured: Measurement,
    /// This filter's exact false-positive probability given the bits it actually set (the
    /// mean over blocks of (ones/512)^k; (ones/m)^k for classic): the measured count is
    /// binomial around this, while theory is its expectation over all filters.
    pub given_bits: f64,
}

/// Builds a filter of layout `L` with `bits_per_key · n` bits and `k` hashes, inserts the `n`
/// members, checks them, and measures its rate on as many non-members (from query block
/// `point`) as the sizes ask for.
fn measure<L: Layout>(
    settings: &Settings,
    bits_per_key: u64,
    k: u32,
    point: u64,
) -> Result<SweepPoint> {
    let sizes = &settings.sizes;
    let n = sizes.sweep_keys;
    let m = bits_per_key * n;
    let mut filter = Bloom::<L>::with_num_bits(m, k).map_err(sizing_error("rate sweep", m, k))?;
    insert_range(&mut filter, MEMBERS, 0..n, 1);
    let false_negatives = n - count_listed(&filter, MEMBERS, 0..n, settings.threads);
    let theory = filter.theoretical_fpp(n as f64);
    let queries = theory::queries_for(
        theory,
        sizes.sweep_target_false_positives,
        sizes.sweep_min_queries,
        sizes.sweep_max_queries,
    );
    let start = point << POINT_STRIDE_BITS;
    let hits = count_listed(
        &filter,
        NON_MEMBERS,
        start..start + queries,
        settings.threads,
    );
    Ok(SweepPoint {
        bits_per_key,
        layout: L::KIND,
        m: filter.num_bits(),
        k,
        n,
        false_negatives,
        measured: Measurement::new(hits, queries, theory),
        given_bits: filter.expected_fpp(),
    })
}

/// Section 3: for each of [`RATIOS`] and each k of [`MEASURED_K`], a classic and a blocked
/// filter at m = ratio · n (in that order).
pub fn rate_vs_k(settings: &Settings) -> Result<Vec<SweepPoint>> {
    let mut measured = Vec::new();
    let mut point = 0u64;
    for ratio in RATIOS {
        settings
            .progress
            .say(&format!("rate vs k at m/n = {ratio}"));
        for k in MEASURED_K {
            measured.push(measure::<Classic>(settings, ratio, k, point)?);
            measured.push(measure::<Blocked>(settings, ratio, k, point + 1)?);
            point += 2;
        }
    }
    Ok(measured)
}

/// Section 4: for each of [`BITS_PER_KEY`], a classic filter at round((m/n)·ln 2) hashes and a
/// blocked one at the k that minimises its exact rate (in that order).
pub fn rate_vs_bits(settings: &Settings) -> Result<Vec<SweepPoint>> {
    let n = settings.sizes.sweep_keys;
    let mut measured = Vec::new();
    let mut point = BITS_FIRST_POINT;
    settings.progress.say("rate vs bits per key");
    for bits in BITS_PER_KEY {
        let m = bits * n;
        let classic_k = math::optimal_num_hashes(n, m);
        let blocked_m = m.div_ceil(BLOCK_BITS) * BLOCK_BITS;
        let (blocked_k, _) = math::best_blocked_hashes(blocked_m, n as f64);
        measured.push(measure::<Classic>(settings, bits, classic_k, point)?);
        measured.push(measure::<Blocked>(settings, bits, blocked_k, point + 1)?);
        point += 2;
    }
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_point_has_no_false_negatives_and_a_binomial_count() {
        let settings = Settings {
            sizes: crate::measure::Sizes {
                sweep_keys: 2_000,
                sweep_target_false_positives: 400.0,
                sweep_min_queries: 20_000,
                sweep_max_queries: 200_000,
                ..crate::measure::Sizes::quick()
            },
            ..Settings::new("unused.csv".into(), true, 2, false)
        };
        for p in [
            measure::<Classic>(&settings, 8, 4, 0).unwrap(),
            measure::<Blocked>(&settings, 8, 4, 1).unwrap(),
        ] {
            assert_eq!(p.false_negatives, 0);
            assert_eq!(p.n, 2_000);
            let m = &p.measured;
            // The keys are fixed (no seed): the count is binomial around the rate the bits
            // imply; allow 5 σ of Binomial(queries, given_bits) plus one count for rounding.
            let expected = m.queries as f64 * p.given_bits;
            let sigma = (expected * (1.0 - p.given_bits)).sqrt();
            let diff = (m.false_positives as f64 - expected).abs();
            assert!(diff <= 5.0 * sigma + 1.0, "{p:?}");
        }
    }
}
