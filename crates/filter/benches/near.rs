//! Near-duplicate lookups: Manku's permuted tables ([`phishbloom_filter::near`]) against brute
//! force (a popcount over every fingerprint), the peer the target is stated against
//! (≥ 100× brute force, ≤ 20 µs per lookup at 10⁷ fingerprints), in the same run.
//!
//! # Running
//! ```text
//! cargo bench -p phishbloom-filter --bench near                      # 10⁶ fingerprints
//! PHISHBLOOM_NEAR_N=10000000 cargo bench -p phishbloom-filter --bench near   # 10⁷, the scale a mail system plans for
//! ```
//! Fingerprints are random 64-bit values (a SimHash of unrelated documents is uniform); half the
//! queries are a stored fingerprint with 1–3 bits flipped (a match to find), half random.
//! Measured: one lookup at distance 3 in 4 tables (b = 4) and 20 tables (b = 6), and brute force
//! over the same fingerprints; the ratio of the two is the figure to quote (these machines are
//! shared and noisy).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use phishbloom_filter::near::{brute_force, PermutedTables};
use phishbloom_filter::rng::SplitMix64;

/// Fingerprints stored: `PHISHBLOOM_NEAR_N`, default 10⁶.
fn stored() -> usize {
    std::env::var("PHISHBLOOM_NEAR_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

/// Queries: stored fingerprints with 1–3 bits flipped, alternating with random ones.
fn queries(fps: &[u64], rng: &mut SplitMix64) -> Vec<u64> {
    (0..1024)
        .map(|i| {
            if i % 2 == 1 {
                return rng.next_u64();
            }
            let mut q = fps[rng.below(fps.len() as u64) as usize];
            for _ in 0..=rng.below(3) {
                q ^= 1 << rng.below(64);
            }
            q
        })
        .collect()
}

fn lookups(c: &mut Criterion) {
    let n = stored();
    let mut rng = SplitMix64::new(22);
    let fps: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let queries = queries(&fps, &mut rng);
    let mut group = c.benchmark_group(format!("near lookup, {n} fingerprints, k = 3"));
    group.measurement_time(Duration::from_secs(5));
    for blocks in [4u32, 6] {
        // The shape is within bounds: 4 and 20 tables.
        let tables = PermutedTables::build(&fps, 3, blocks).expect("a valid shape");
        let mut out = Vec::new();
        let mut i = 0;
        group.bench_function(format!("{} tables (b = {blocks})", tables.tables()), |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                tables
                    .within(black_box(queries[i]), 3, &mut out)
                    .expect("distance 3 is the tables' own");
                out.len()
            })
        });
    }
    let mut i = 0;
    group.bench_function("brute force", |b| {
        b.iter(|| {
            i = (i + 1) % queries.len();
            brute_force(black_box(&fps), black_box(queries[i]), 3).len()
        })
    });
    group.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
