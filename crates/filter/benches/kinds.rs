//! Times the structures a list can be — phishbloom's blocked, classic, cuckoo and counting
//! filters — beside real peers in one run: `fastbloom` (a blocked Bloom filter, fed xxh3-64) and
//! the `cuckoofilter` crate (8-bit fingerprints, its own SipHash): inserts, member and non-member
//! queries, and deletes, per element. It is the criterion side of the report's "Lists that
//! change" table (`crates/lab/src/measure/changes.rs` times the same operations on the same keys
//! in one pass each); compare structures by the ratios within one run.
//!
//! # Running
//! ```text
//! cargo bench -p phishbloom-filter --bench kinds                       # 10⁶ and 10⁷ keys
//! PHISHBLOOM_KINDS_KEYS=1000000 cargo bench -p phishbloom-filter --bench kinds   # one size
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

use std::collections::hash_map::DefaultHasher;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use phishbloom_filter::counting::CountingFilter;
use phishbloom_filter::cuckoo::{CuckooFilter, TARGET_LOAD};
use phishbloom_filter::{BlockedBloomFilter, BloomFilter, KeyHash};
use xxhash_rust::xxh3::xxh3_64;

/// The rate every structure is sized for: the issue's p = 1 %.
const FPP: f64 = 0.01;

/// Default key counts: the issue's 10⁶ and 10⁷.
const DEFAULT_KEYS: [usize; 2] = [1_000_000, 10_000_000];

/// Keys under `cargo test --benches`, where each benchmark runs once.
const TEST_KEYS: usize = 20_000;

/// The longest key: a 3-byte prefix and 16 hexadecimal digits.
const KEY_CAPACITY: usize = 19;

/// Cuckoo builds retry at this fraction of the previous load when an insert is refused (as the
/// lab does), at most [`CUCKOO_RETRIES`] times.
const CUCKOO_LOAD_STEP: f64 = 0.95;
const CUCKOO_RETRIES: u32 = 6;

/// A key held inline: `prefix ‖ lowercase hex(i)` (the lab's `KeySpace` keys).
#[derive(Clone, Copy)]
struct Key {
    bytes: [u8; KEY_CAPACITY],
    len: u8,
}

impl Key {
    fn new(prefix: &[u8; 3], index: u64) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut bytes = [0u8; KEY_CAPACITY];
        bytes[..3].copy_from_slice(prefix);
        let nibbles = ((64 - index.leading_zeros()).div_ceil(4)).max(1) as usize;
        for (at, shift) in (0..nibbles).rev().enumerate() {
            bytes[3 + at] = HEX[(index >> (4 * shift)) as usize & 15];
        }
        Key {
            bytes,
            len: (3 + nibbles) as u8,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// `count` keys with `prefix`.
fn keys(prefix: &[u8; 3], count: usize) -> Vec<Key> {
    (0..count as u64).map(|i| Key::new(prefix, i)).collect()
}

/// One structure under test, one key at a time (each benchmark's loop is monomorphic).
trait Contender {
    /// Inserts a key; `false` if refused.
    fn insert(&mut self, key: &[u8]) -> bool;
    fn contains(&self, key: &[u8]) -> bool;
    /// Removes a key (structures that delete).
    fn remove(&mut self, key: &[u8]) -> bool;
}

impl Contender for BlockedBloomFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        BlockedBloomFilter::insert(self, key);
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        BlockedBloomFilter::contains(self, key)
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
}

impl Contender for BloomFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        BloomFilter::insert(self, key);
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        BloomFilter::contains(self, key)
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
}

impl Contender for CuckooFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(KeyHash::of(key)).is_ok()
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(KeyHash::of(key))
    }
    fn remove(&mut self, key: &[u8]) -> bool {
        self.remove_hash(KeyHash::of(key))
    }
}

impl Contender for CountingFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(KeyHash::of(key));
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(KeyHash::of(key))
    }
    fn remove(&mut self, key: &[u8]) -> bool {
        self.remove_hash(KeyHash::of(key))
    }
}

impl Contender for fastbloom::BloomFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(xxh3_64(key));
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(xxh3_64(key))
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
}

impl Contender for cuckoofilter::CuckooFilter<DefaultHasher> {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.add(key).is_ok()
    }
    fn contains(&self, key: &[u8]) -> bool {
        cuckoofilter::CuckooFilter::contains(self, key)
    }
    fn remove(&mut self, key: &[u8]) -> bool {
        self.delete(key)
    }
}

/// Panics on a sizing error: the benchmark's sizes are fixed and valid.
fn sizing_failed<T>(error: phishbloom_filter::Error) -> T {
    panic!("cannot size the structure: {error}")
}

/// The load at which phishbloom's cuckoo filter takes all `members` (95 %, or lower).
fn cuckoo_load(n: usize, members: &[Key]) -> f64 {
    let mut load = TARGET_LOAD;
    for _ in 0..CUCKOO_RETRIES {
        let mut filter = CuckooFilter::with_load(n as u64, FPP, load).unwrap_or_else(sizing_failed);
        if members
            .iter()
            .all(|k| Contender::insert(&mut filter, k.as_bytes()))
        {
            return load;
        }
        load *= CUCKOO_LOAD_STEP;
    }
    load
}

/// The benchmark group of one operation at `n` keys: per element, 10 flat samples of 4 s.
fn group<'a>(c: &'a mut Criterion, n: usize, operation: &str) -> Group<'a> {
    let mut group = c.benchmark_group(format!("kinds-{n}/{operation}"));
    group
        .throughput(Throughput::Elements(1))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group
}

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Inserts: a structure from `make` filled from empty, continuing where the previous batch
/// stopped and replaced by a fresh one (untimed) once it holds every member, so the batches
/// together cover every load from empty to full.
fn bench_insert<C: Contender>(
    group: &mut Group<'_>,
    name: &str,
    make: impl Fn() -> C,
    members: &[Key],
) {
    group.bench_function(name, |b| {
        let mut filter = make();
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                if pos == members.len() {
                    filter = make();
                    pos = 0;
                }
                let count = left.min(members.len() - pos);
                let start = Instant::now();
                for key in &members[pos..pos + count] {
                    black_box(filter.insert(key.as_bytes()));
                }
                elapsed += start.elapsed();
                pos += count;
                left -= count;
            }
            elapsed
        })
    });
}

/// Queries of a full structure, cycling through `keys`.
fn bench_query<C: Contender>(group: &mut Group<'_>, name: &str, full: &C, keys: &[Key]) {
    group.bench_function(name, |b| {
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let mut hits = 0usize;
            let start = Instant::now();
            for _ in 0..iters {
                hits += usize::from(full.contains(keys[pos].as_bytes()));
                pos = if pos + 1 == keys.len() { 0 } else { pos + 1 };
            }
            let elapsed = start.elapsed();
            black_box(hits);
            elapsed
        })
    });
}

/// Deletes: a full structure emptied, continuing where the previous batch stopped and
/// refilled (untimed) once empty.
fn bench_delete<C: Contender>(
    group: &mut Group<'_>,
    name: &str,
    make: impl Fn() -> C,
    members: &[Key],
) {
    group.bench_function(name, |b| {
        let mut filter = filled(&make, members);
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            let mut left = iters as usize;
            while left > 0 {
                if pos == members.len() {
                    filter = filled(&make, members);
                    pos = 0;
                }
                let count = left.min(members.len() - pos);
                let start = Instant::now();
                for key in &members[pos..pos + count] {
                    black_box(filter.remove(key.as_bytes()));
                }
                elapsed += start.elapsed();
                pos += count;
                left -= count;
            }
            elapsed
        })
    });
}

/// A structure from `make` holding every member.
fn filled<C: Contender>(make: &impl Fn() -> C, members: &[Key]) -> C {
    let mut filter = make();
    for key in members {
        filter.insert(key.as_bytes());
    }
    filter
}

/// Every structure and peer at `n` keys, one group per operation.
fn bench_keys(c: &mut Criterion, n: usize) {
    let members = keys(b"kw-", n);
    let non_members = keys(b"nq-", n);
    let load = cuckoo_load(n, &members);
    let peer_capacity = (n as f64 / TARGET_LOAD).ceil() as usize;
    let blocked = || BlockedBloomFilter::new(n as u64, FPP).unwrap_or_else(sizing_failed);
    let classic = || BloomFilter::new(n as u64, FPP).unwrap_or_else(sizing_failed);
    let cuckoo = || CuckooFilter::with_load(n as u64, FPP, load).unwrap_or_else(sizing_failed);
    let counting = || CountingFilter::new(n as u64, FPP).unwrap_or_else(sizing_failed);
    let fast = || fastbloom::BloomFilter::with_false_pos(FPP).expected_items(n);
    let crate_cuckoo = || cuckoofilter::CuckooFilter::<DefaultHasher>::with_capacity(peer_capacity);
    let m = &members[..];

    let mut g = group(c, n, "insert");
    bench_insert(&mut g, "phishbloom-blocked", blocked, m);
    bench_insert(&mut g, "phishbloom-classic", classic, m);
    bench_insert(&mut g, "phishbloom-cuckoo", cuckoo, m);
    bench_insert(&mut g, "phishbloom-counting", counting, m);
    bench_insert(&mut g, "fastbloom-xxh3", fast, m);
    bench_insert(&mut g, "cuckoofilter-crate", crate_cuckoo, m);
    g.finish();

    let full_blocked = filled(&blocked, m);
    let full_classic = filled(&classic, m);
    let full_cuckoo = filled(&cuckoo, m);
    let full_counting = filled(&counting, m);
    let full_fast = filled(&fast, m);
    let full_crate = filled(&crate_cuckoo, m);
    for (operation, keys) in [("query-member", m), ("query-non-member", &non_members[..])] {
        let mut g = group(c, n, operation);
        bench_query(&mut g, "phishbloom-blocked", &full_blocked, keys);
        bench_query(&mut g, "phishbloom-classic", &full_classic, keys);
        bench_query(&mut g, "phishbloom-cuckoo", &full_cuckoo, keys);
        bench_query(&mut g, "phishbloom-counting", &full_counting, keys);
        bench_query(&mut g, "fastbloom-xxh3", &full_fast, keys);
        bench_query(&mut g, "cuckoofilter-crate", &full_crate, keys);
        g.finish();
    }

    let mut g = group(c, n, "delete");
    bench_delete(&mut g, "phishbloom-cuckoo", cuckoo, m);
    bench_delete(&mut g, "phishbloom-counting", counting, m);
    bench_delete(&mut g, "cuckoofilter-crate", crate_cuckoo, m);
    g.finish();
}

fn main() {
    let mut criterion = Criterion::default().without_plots().configure_from_args();
    // Criterion benchmarks only under `cargo bench` (`--bench` without `--test`); otherwise it
    // runs each benchmark once as a test, and so should the data be small.
    let args: Vec<String> = std::env::args().collect();
    let benchmarking =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let counts: Vec<usize> = if !benchmarking {
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
