//! Measures phishbloom's Bloom filters against real peer crates, side by side in one run, on the
//! phishing dataset and on synthetic URL sets that fit in and overflow the L3 cache.
//!
//! # Running
//! ```text
//! cargo bench -p phishbloom-filter --bench peers            # full sizes: ~17 min, ~10 GB RAM
//! PHISHBLOOM_BENCH_LARGE=2000000 PHISHBLOOM_BENCH_MEDIUM=500000 \
//!     cargo bench -p phishbloom-filter --bench peers        # a quick run
//! ```
//! Environment variables (all optional):
//! - `PHISHBLOOM_DATASET`: the CSV of case (a); default `../../../shared/data/dataset.csv`,
//!   relative to `crates/filter`, where cargo runs benches. Case (a) is skipped when it is absent.
//! - `PHISHBLOOM_BENCH_LARGE` / `PHISHBLOOM_BENCH_MEDIUM`: key counts of case (b); defaults
//!   40,000,000 (a filter larger than a 35.8 MiB L3) and 10,000,000 (one that fits); `0` skips.
//! - `PHISHBLOOM_BENCH_QUERIES`: size of the fixed subset that the criterion measurements cycle
//!   through in case (b); default 4,000,000.
//! - `PHISHBLOOM_BENCH_HASHSET_MAX`: largest key count at which `HashSet<String>` is built;
//!   default: no limit.
//! - `PHISHBLOOM_BENCH_STRUCTURES`: comma-separated structure names (as in the tables, e.g.
//!   `phishbloom-split,sbbf-xxh3`) to build and measure; default: all of them. For quick
//!   comparisons while iterating; the published tables come from runs of all.
//!
//! # What is measured
//! Structures, all at p = 0.01 where they take a target: phishbloom's blocked, split-block and
//! classic filters; `fastbloom` with its default hasher (SipHash-1-3) and fed xxh3-64 through its
//! `*_hash` methods; `bloomfilter` (two SipHash-1-3); `sbbf-rs-safe` fed xxh3-64 (sized to the
//! smallest whole bits/key whose theoretical rate is ≤ p); `xorf::BinaryFuse8` built from
//! xxh3-64 hashes (static, for reference); and `HashSet<String>` (exact, for reference).
//!
//! For each data set, first one timed pass with [`Instant`] over all keys (build, member queries,
//! non-member queries, phishbloom's `contains_batch`) gives the printed table of bits/key,
//! measured false-positive rate and ns/op, with the target ratios. Then criterion measures the
//! same operations per element (`Throughput::Elements(1)`, `iter_custom` cycling through the
//! keys): inserts (re-inserting members into the built filter, which touches the same memory as
//! a first insert), member and non-member queries, single and batched, and the cost of hashing
//! the same keys with xxh3-128 and xxh3-64 alone (the floor). In case (b) criterion cycles through
//! the first `PHISHBLOOM_BENCH_QUERIES` keys of each stream (a fixed random subset: keys are
//! generated independently at random).
//!
//! Under `cargo test --benches` (no `--bench` argument) criterion runs every benchmark once and
//! case (b) shrinks to small sizes, so the test suite stays fast.

mod contenders;
mod criterion_runs;
mod keys;
mod table;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;

use contenders::{sbbf_bits, BUILDERS};
use criterion_runs::criterion_case;
use keys::{random_urls, read_dataset, synthetic_keys, MEMBER_TAG, NON_MEMBER_TAG, RANDOM_URLS};
use table::{hash_floor_rows, one_pass, print_ratios, print_table, timed};

/// The false-positive target of every filter: p = 1 %.
const FPP: f64 = 0.01;

/// Keys passed to one `contains_batch` call: a plausible request batch, and small enough that
/// the answer vector stays in L1.
const BATCH_CALL: usize = 1024;

/// Seeds of the SplitMix64 streams: members, non-members, and the random URLs of case (a).
/// Distinct so that the streams are independent; the values themselves are arbitrary.
const SEED_MEMBERS: u64 = 1;
const SEED_NON_MEMBERS: u64 = 2;
const SEED_RANDOM_URLS: u64 = 3;

/// Default key counts of case (b): 40M keys make a ~50 MB filter, larger than
/// this machine's 35.8 MiB L3; 10M keys make a ~13 MB one, which fits.
const DEFAULT_LARGE: usize = 40_000_000;
const DEFAULT_MEDIUM: usize = 10_000_000;

/// Default size of the subset criterion cycles through in case (b).
const DEFAULT_QUERIES: usize = 4_000_000;

/// Key counts of case (b) under `cargo test --benches`, where criterion runs each benchmark once.
const TEST_LARGE: usize = 200_000;
const TEST_MEDIUM: usize = 50_000;

/// A stream of non-member queries: its name, its keys, and how many of them are in fact members
/// (dataset URLs can be both benign and phishing), which false positives must not count.
struct Queries<'a> {
    name: &'static str,
    keys: Vec<&'a str>,
    true_members: usize,
}

impl<'a> Queries<'a> {
    /// A stream whose keys that are in `members` are counted as true members.
    fn new(name: &'static str, keys: Vec<&'a str>, members: &HashSet<&str>) -> Self {
        let true_members = keys.iter().filter(|k| members.contains(*k)).count();
        Queries {
            name,
            keys,
            true_members,
        }
    }
}

/// One case: members and query streams, with the criterion settings that suit its size.
struct Case<'a> {
    label: String,
    members: Vec<&'a str>,
    queries: Vec<Queries<'a>>,
    /// How many keys of each stream criterion cycles through.
    subset: usize,
    /// Largest member count at which the HashSet is built.
    hashset_max: usize,
    sample_size: usize,
    warm_up: Duration,
    measurement: Duration,
}

/// Builds every structure, prints the one-pass table and ratios, then runs criterion.
fn run_case(c: &mut Criterion, case: &Case) {
    let n = case.members.len();
    let mut contenders = Vec::new();
    let mut rows = hash_floor_rows(case);
    let chosen = std::env::var("PHISHBLOOM_BENCH_STRUCTURES").ok();
    for (name, build) in BUILDERS {
        if chosen
            .as_deref()
            .is_some_and(|list| !list.split(',').any(|s| s.trim() == name))
        {
            continue;
        }
        if name == "hashset-string" && n > case.hashset_max {
            println!(
                "{}: HashSet<String> skipped at {n} keys (PHISHBLOOM_BENCH_HASHSET_MAX)",
                case.label
            );
            continue;
        }
        let (contender, elapsed) = timed(|| build(&case.members));
        rows.extend(one_pass(case, contender.as_ref(), Some(elapsed)));
        eprintln!(
            "{}: built {name} ({:.1} MB) in {:.1} s",
            case.label,
            contender.size_bits() as f64 / 8e6,
            elapsed.as_secs_f64()
        );
        contenders.push(contender);
    }
    print_table(case, &rows);
    for contender in &contenders {
        println!(
            "{:<28} size {:.2} MB",
            contender.name(),
            contender.size_bits() as f64 / 8e6
        );
    }
    print_ratios(case, &rows);
    criterion_case(c, case, &mut contenders);
}

/// A key count from the environment (underscores allowed), or `default`.
fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a whole number")),
        Err(_) => default,
    }
}

/// `40000000` → `40M`, `200000` → `200k`.
fn human(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

fn main() {
    let mut criterion = Criterion::default().without_plots().configure_from_args();
    // Criterion benchmarks only under `cargo bench` (`--bench` without `--test`); otherwise it
    // runs each benchmark once as a test, and so should the data be small.
    let args: Vec<String> = std::env::args().collect();
    let benchmarking =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    sbbf_bits();
    dataset_case(&mut criterion);
    synthetic_cases(&mut criterion, benchmarking);
    criterion.final_summary();
}

/// Case (a): the phishing dataset, queried with its benign URLs and seed 000's random URLs.
fn dataset_case(criterion: &mut Criterion) {
    let dataset = std::env::var_os("PHISHBLOOM_DATASET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../../../shared/data/dataset.csv"));
    let text = match std::fs::read_to_string(&dataset) {
        Ok(text) => text,
        Err(error) => {
            println!(
                "(a) skipped: cannot read the dataset {} ({error}); set PHISHBLOOM_DATASET",
                dataset.display()
            );
            return;
        }
    };
    let (phishing, benign) = read_dataset(&text);
    let random = random_urls(RANDOM_URLS, SEED_RANDOM_URLS);
    let members = phishing.views();
    let truth: HashSet<&str> = members.iter().copied().collect();
    let queries = vec![
        Queries::new("query-benign", benign.views(), &truth),
        Queries::new("query-random", random.views(), &truth),
    ];
    println!(
        "(a) {}: {} phishing URLs ({} distinct), {} benign ({} of them also phishing), {} random",
        dataset.display(),
        members.len(),
        truth.len(),
        queries[0].keys.len(),
        queries[0].true_members,
        queries[1].keys.len()
    );
    let case = Case {
        label: "a-dataset".to_owned(),
        members,
        queries,
        subset: usize::MAX,
        hashset_max: usize::MAX,
        // Small sets: 20 samples of ~0.1 s each resolve tens of ns well.
        sample_size: 20,
        warm_up: Duration::from_millis(500),
        measurement: Duration::from_secs(2),
    };
    run_case(criterion, &case);
}

/// Case (b): synthetic URL sets, one that fits in L3 and one that does not (small ones when
/// not `benchmarking`).
fn synthetic_cases(criterion: &mut Criterion, benchmarking: bool) {
    let (large_default, medium_default) = if benchmarking {
        (DEFAULT_LARGE, DEFAULT_MEDIUM)
    } else {
        (TEST_LARGE, TEST_MEDIUM)
    };
    let hashset_max = env_count("PHISHBLOOM_BENCH_HASHSET_MAX", usize::MAX);
    let subset = env_count("PHISHBLOOM_BENCH_QUERIES", DEFAULT_QUERIES).max(1);
    for (var, default) in [
        ("PHISHBLOOM_BENCH_MEDIUM", medium_default),
        ("PHISHBLOOM_BENCH_LARGE", large_default),
    ] {
        let n = env_count(var, default);
        if n == 0 {
            println!("(b) {var}=0: skipped");
            continue;
        }
        let (members, elapsed) = timed(|| synthetic_keys(n, SEED_MEMBERS, MEMBER_TAG));
        let non_members = synthetic_keys(n, SEED_NON_MEMBERS, NON_MEMBER_TAG);
        eprintln!(
            "(b) generated 2 × {n} keys in {:.1} s",
            elapsed.as_secs_f64() * 2.0
        );
        let case = Case {
            label: format!("b-{}", human(n)),
            members: members.views(),
            queries: vec![Queries {
                name: "query-non-member",
                keys: non_members.views(),
                true_members: 0,
            }],
            subset,
            hashset_max,
            // Large sets: 10 samples (the minimum) of ~0.6 s, each a few million operations;
            // the whole run (three cases, ~90 benchmarks) then takes about 15 minutes.
            sample_size: 10,
            warm_up: Duration::from_millis(1500),
            measurement: Duration::from_secs(6),
        };
        run_case(criterion, &case);
    }
}
