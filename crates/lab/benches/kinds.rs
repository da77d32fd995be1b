//! Times the structures a list can be — phishbloom's blocked, classic, cuckoo and counting
//! filters — beside real peers in one run: `fastbloom` (a blocked Bloom filter, fed xxh3-64) and
//! the `cuckoofilter` crate (8-bit fingerprints, its own SipHash): inserts, member and non-member
//! queries, and deletes, per element. It is the criterion side of the report's "Lists that
//! change" table: the structures, peers and keys are the lab's own
//! (`phishbloom_lab::measure::contenders`), which `measure::changes` times in one pass each;
//! compare structures by the ratios within one run.
//!
//! # Running
//! ```text
//! cargo bench -p phishbloom-lab --bench kinds                       # 10⁶ and 10⁷ keys
//! PHISHBLOOM_KINDS_KEYS=1000000 cargo bench -p phishbloom-lab --bench kinds   # one size
//! ```
//! `PHISHBLOOM_KINDS_KEYS` is a comma-separated list of key counts (default `1000000,10000000`).
//! Under `cargo test --benches` every benchmark runs once on 20,000 keys.
//!
//! # What is measured
//! Keys are the lab's: members `kw-<hex>`, non-members `nq-<hex>` (disjoint), generated before
//! timing; each structure hashes them inside the timed loop. All structures are sized for n keys
//! at p = 0.01 (the `cuckoofilter` crate for n/0.95 keys, which it rounds up to a power of two
//! of slots). *insert* fills a structure from empty, batch after batch, and starts a fresh one
//! (untimed) once all n keys are in, so the cost averages over every load from empty to full;
//! *delete* empties a full one the same way (refilled untimed); the queries cycle through the n
//! keys of a full structure.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use phishbloom_core::KeyList;
use phishbloom_lab::keys::{MEMBERS, NON_MEMBERS};
use phishbloom_lab::measure::contenders::{
    cuckoo_load, key_list, visit_contenders, Contender, Structure, Visitor,
};

/// The rate every structure is sized for: p = 1 %.
const FPP: f64 = 0.01;

/// Default key counts: 10⁶ and 10⁷.
const DEFAULT_KEYS: [u64; 2] = [1_000_000, 10_000_000];

/// Keys under `cargo test --benches`, where each benchmark runs once.
const TEST_KEYS: u64 = 20_000;

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// The operations benchmarked, one criterion group each.
#[derive(Clone, Copy)]
enum Operation {
    Insert,
    QueryMember,
    QueryNonMember,
    Delete,
}

impl Operation {
    const ALL: [Operation; 4] = [
        Operation::Insert,
        Operation::QueryMember,
        Operation::QueryNonMember,
        Operation::Delete,
    ];

    /// The group's name after `kinds-<n>/`.
    fn name(self) -> &'static str {
        match self {
            Operation::Insert => "insert",
            Operation::QueryMember => "query-member",
            Operation::QueryNonMember => "query-non-member",
            Operation::Delete => "delete",
        }
    }
}

/// The benchmark's name of a structure.
fn bench_name(structure: Structure) -> &'static str {
    match structure {
        Structure::Blocked => "phishbloom-blocked",
        Structure::Classic => "phishbloom-classic",
        Structure::Cuckoo => "phishbloom-cuckoo",
        Structure::Counting => "phishbloom-counting",
        Structure::Fastbloom => "fastbloom-xxh3",
        Structure::CuckoofilterCrate => "cuckoofilter-crate",
        // `visit_contenders` hands out none of the others.
        other => other.name(),
    }
}

/// The benchmark group of one operation at `n` keys: per element, 10 flat samples of 4 s.
fn group<'a>(c: &'a mut Criterion, n: u64, operation: Operation) -> Group<'a> {
    let mut group = c.benchmark_group(format!("kinds-{n}/{}", operation.name()));
    group
        .throughput(Throughput::Elements(1))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group
}

/// A structure from `make` holding every member.
fn filled<C: Contender>(make: &impl Fn() -> C, members: &KeyList) -> C {
    let mut filter = make();
    for key in members.iter() {
        filter.insert(key);
    }
    filter
}

/// Applies `step` (insert or delete) to the members of a structure from `start`, continuing
/// where the previous batch stopped and replaced by a fresh one from `start` (untimed) once it
/// has seen every member, so the batches together cover every load from empty to full.
fn bench_batches<C: Contender>(
    group: &mut Group<'_>,
    name: &str,
    start: impl Fn() -> C,
    step: impl Fn(&mut C, &[u8]) -> bool,
    members: &KeyList,
) {
    group.bench_function(name, |b| {
        let mut filter = start();
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                if pos == members.len() {
                    filter = start();
                    pos = 0;
                }
                let count = left.min(members.len() - pos);
                let begin = Instant::now();
                for i in pos..pos + count {
                    black_box(step(&mut filter, members.get(i)));
                }
                elapsed += begin.elapsed();
                pos += count;
                left -= count;
            }
            elapsed
        })
    });
}

/// Queries of a full structure, cycling through `keys`.
fn bench_query<C: Contender>(group: &mut Group<'_>, name: &str, full: &C, keys: &KeyList) {
    group.bench_function(name, |b| {
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let mut hits = 0usize;
            let start = Instant::now();
            for _ in 0..iters {
                hits += usize::from(full.contains(keys.get(pos)));
                pos = if pos + 1 == keys.len() { 0 } else { pos + 1 };
            }
            let elapsed = start.elapsed();
            black_box(hits);
            elapsed
        })
    });
}

/// One operation's group: benchmarks it on every structure [`visit_contenders`] hands over
/// (deletes only on the structures that delete).
struct Bench<'g, 'c, 'k> {
    group: &'g mut Group<'c>,
    operation: Operation,
    members: &'k KeyList,
    non_members: &'k KeyList,
}

impl Visitor for Bench<'_, '_, '_> {
    fn visit<C: Contender>(
        &mut self,
        structure: Structure,
        make: impl Fn() -> phishbloom_lab::Result<C>,
    ) -> phishbloom_lab::Result<()> {
        // The benchmark's sizes are fixed and valid: a sizing failure is a bug worth its panic.
        let make = || make().expect("structure sizing");
        let name = bench_name(structure);
        let (group, members) = (&mut *self.group, self.members);
        match self.operation {
            Operation::Insert => bench_batches(group, name, make, C::insert, members),
            Operation::QueryMember => bench_query(group, name, &filled(&make, members), members),
            Operation::QueryNonMember => {
                bench_query(group, name, &filled(&make, members), self.non_members)
            }
            Operation::Delete if C::DELETES => {
                bench_batches(group, name, || filled(&make, members), C::remove, members)
            }
            Operation::Delete => {}
        }
        Ok(())
    }
}

/// Every structure and peer at `n` keys, one group per operation.
fn bench_keys(c: &mut Criterion, n: u64) {
    let members = key_list(MEMBERS, n);
    let non_members = key_list(NON_MEMBERS, n);
    // The benchmark's sizes are fixed and valid: a failure here is a bug worth its panic.
    let load = cuckoo_load(n, FPP, &members).expect("cuckoo filter sizing");
    for operation in Operation::ALL {
        let mut group = group(c, n, operation);
        let mut bench = Bench {
            group: &mut group,
            operation,
            members: &members,
            non_members: &non_members,
        };
        visit_contenders(n, FPP, load, &mut bench).expect("structure sizing");
        group.finish();
    }
}

fn main() {
    let mut criterion = Criterion::default().without_plots().configure_from_args();
    // Criterion benchmarks only under `cargo bench` (`--bench` without `--test`); otherwise it
    // runs each benchmark once as a test, and so should the data be small.
    let args: Vec<String> = std::env::args().collect();
    let benchmarking =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let counts: Vec<u64> = if !benchmarking {
        vec![TEST_KEYS]
    } else {
        match std::env::var("PHISHBLOOM_KINDS_KEYS") {
            Ok(list) => list
                .split(',')
                .map(|n| {
                    n.trim()
                        .replace('_', "")
                        .parse()
                        .unwrap_or_else(|_| panic!("PHISHBLOOM_KINDS_KEYS: {n} is not a count"))
                })
                .collect(),
            Err(_) => DEFAULT_KEYS.to_vec(),
        }
    };
    for n in counts {
        bench_keys(&mut criterion, n);
    }
    criterion.final_summary();
}
