//! The peer bench's criterion measurements: inserts, member and non-member queries, single and
//! batched, and the hashing floor, per element, cycling through each stream's keys.

use std::hint::black_box;
use std::time::Instant;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};

use crate::contenders::Contender;
use crate::table::{sweep_xxh3_128, sweep_xxh3_64, Sweep};
use crate::Case;

/// Runs `op` on `iters` keys taken cyclically from `keys`, continuing from `*pos`.
pub(crate) fn cycle(keys: &[&str], pos: &mut usize, iters: u64, mut op: impl FnMut(&[&str])) {
    let mut left = iters;
    while left > 0 {
        let take = (keys.len() - *pos).min(usize::try_from(left).unwrap_or(usize::MAX));
        op(&keys[*pos..*pos + take]);
        *pos = (*pos + take) % keys.len();
        left -= take as u64;
    }
}

/// A criterion group for one operation of one case, timing single elements.
pub(crate) fn group<'c>(
    c: &'c mut Criterion,
    case: &Case,
    operation: &str,
) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(format!("{}/{operation}", case.label));
    group
        .throughput(Throughput::Elements(1))
        // Flat: every sample runs the same number of iterations, so the slow structures of
        // the 40M case finish in (sample_size × one sample) instead of a linear ramp.
        .sampling_mode(SamplingMode::Flat)
        .sample_size(case.sample_size)
        .warm_up_time(case.warm_up)
        .measurement_time(case.measurement);
    group
}

/// Benchmarks a query path: `count` per element, cycling through the case's subset of `keys`.
pub(crate) fn bench_queries(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    keys: &[&str],
    count: &dyn Fn(&[&str]) -> usize,
) {
    group.bench_function(id, |b| {
        let mut pos = 0;
        b.iter_custom(|iters| {
            let mut hits = 0;
            let start = Instant::now();
            cycle(keys, &mut pos, iters, |chunk| hits += count(chunk));
            let elapsed = start.elapsed();
            black_box(hits);
            elapsed
        })
    });
}

/// The criterion measurements of one case over the built structures.
pub(crate) fn criterion_case(
    c: &mut Criterion,
    case: &Case,
    contenders: &mut [Box<dyn Contender>],
) {
    let members = &case.members[..case.subset.min(case.members.len())];
    let streams: Vec<(&str, &[&str])> = case
        .queries
        .iter()
        .map(|q| (q.name, &q.keys[..case.subset.min(q.keys.len())]))
        .collect();

    let mut floor = group(c, case, "hash-only");
    for (id, sweep) in [
        ("xxh3-128", sweep_xxh3_128 as Sweep),
        ("xxh3-64", sweep_xxh3_64),
    ] {
        let count = |keys: &[&str]| sweep(keys) as usize;
        bench_queries(&mut floor, id, streams[0].1, &count);
    }
    floor.finish();

    let mut insert = group(c, case, "insert");
    for contender in contenders.iter_mut().filter(|c| c.dynamic()) {
        // HashSet re-inserts would allocate and drop a String per existing key: not an insert.
        if contender.name() == "hashset-string" {
            continue;
        }
        let name = contender.name();
        insert.bench_function(name, |b| {
            let mut pos = 0;
            b.iter_custom(|iters| {
                let start = Instant::now();
                cycle(members, &mut pos, iters, |chunk| {
                    contender.insert_all(chunk)
                });
                start.elapsed()
            })
        });
    }
    insert.finish();

    let mut query_streams = vec![("query-member", members)];
    query_streams.extend(streams.iter().map(|&(name, keys)| (name, keys)));
    for (operation, keys) in query_streams {
        let mut g = group(c, case, operation);
        for contender in contenders.iter() {
            let single = |k: &[&str]| contender.count_hits(k);
            bench_queries(&mut g, contender.name(), keys, &single);
            if contender.count_hits_batched(&[]).is_some() {
                let batched = |k: &[&str]| contender.count_hits_batched(k).unwrap_or(0);
                bench_queries(
                    &mut g,
                    &format!("{}-batch", contender.name()),
                    keys,
                    &batched,
                );
            }
        }
        g.finish();
    }
}
