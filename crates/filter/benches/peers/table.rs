//! The peer bench's one timed pass: every structure built and queried once over all keys,
//! printed as a table of bits/key, measured rate and ns/op, with the target ratios.

use std::hint::black_box;
use std::time::{Duration, Instant};

use phishbloom_filter::KeyHash;
use xxhash_rust::xxh3::xxh3_64;

use crate::contenders::Contender;
use crate::{Case, FPP};

/// One row of the plain table.
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) bits_per_key: f64,
    pub(crate) probes: String,
    pub(crate) theory: f64,
    pub(crate) build_ns: Option<f64>,
    pub(crate) member_ns: f64,
    /// Per query stream: ns/query and measured false-positive rate.
    pub(crate) non_member: Vec<(f64, f64)>,
}

/// Nanoseconds per item of `items` operations that took `elapsed`.
pub(crate) fn ns_per(elapsed: Duration, items: usize) -> f64 {
    elapsed.as_secs_f64() * 1e9 / items.max(1) as f64
}

/// Times `f` once, returning its result and the elapsed time.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// The one-pass, criterion-independent measurements of one structure: rows for its single and
/// (if it has one) batched query paths.
pub(crate) fn one_pass(
    case: &Case,
    contender: &dyn Contender,
    build: Option<Duration>,
) -> Vec<Row> {
    let n = case.members.len();
    let bits_per_key = contender.size_bits() as f64 / n as f64;
    let mut rows = Vec::new();
    type Counter<'c> = Box<dyn Fn(&[&str]) -> usize + 'c>;
    let mut paths: Vec<(String, Counter)> = vec![(
        contender.name().to_owned(),
        Box::new(|keys: &[&str]| contender.count_hits(keys)),
    )];
    if contender.count_hits_batched(&[]).is_some() {
        paths.push((
            format!("{} batch", contender.name()),
            Box::new(|keys: &[&str]| contender.count_hits_batched(keys).unwrap_or(0)),
        ));
    }
    for (i, (name, count)) in paths.iter().enumerate() {
        let (hits, elapsed) = timed(|| count(&case.members));
        assert_eq!(hits, n, "{name}: a member was reported absent");
        let member_ns = ns_per(elapsed, n);
        let non_member = case
            .queries
            .iter()
            .map(|q| {
                let (hits, elapsed) = timed(|| count(&q.keys));
                let negatives = q.keys.len() - q.true_members;
                let fpp = (hits - q.true_members) as f64 / negatives.max(1) as f64;
                (ns_per(elapsed, q.keys.len()), fpp)
            })
            .collect();
        rows.push(Row {
            name: name.clone(),
            bits_per_key,
            probes: contender.probes(),
            theory: contender.theory(n),
            build_ns: if i == 0 {
                build.map(|b| ns_per(b, n))
            } else {
                None
            },
            member_ns,
            non_member,
        });
    }
    rows
}

/// The xxh3 floors of one pass over every stream: (name, member ns/key, per-stream ns/key).
pub(crate) fn hash_floor_rows(case: &Case) -> Vec<Row> {
    let floors: [(&str, Sweep); 2] = [
        ("xxh3-128 only", sweep_xxh3_128),
        ("xxh3-64 only", sweep_xxh3_64),
    ];
    floors
        .iter()
        .map(|&(name, sweep)| {
            let (sum, elapsed) = timed(|| sweep(&case.members));
            black_box(sum);
            let member_ns = ns_per(elapsed, case.members.len());
            let non_member = case
                .queries
                .iter()
                .map(|q| {
                    let (sum, elapsed) = timed(|| sweep(&q.keys));
                    black_box(sum);
                    (ns_per(elapsed, q.keys.len()), f64::NAN)
                })
                .collect();
            Row {
                name: name.to_owned(),
                bits_per_key: f64::NAN,
                probes: "-".to_owned(),
                theory: f64::NAN,
                build_ns: None,
                member_ns,
                non_member,
            }
        })
        .collect()
}

/// A pass that only hashes keys, returning a fold of the hashes.
pub(crate) type Sweep = fn(&[&str]) -> u64;

/// Hashes every key with xxh3-128 as phishbloom does ([`KeyHash::of`]), folding the results.
pub(crate) fn sweep_xxh3_128(keys: &[&str]) -> u64 {
    keys.iter().fold(0, |acc, key| {
        let hash = KeyHash::of(key.as_bytes());
        acc ^ hash.h1 ^ hash.h2
    })
}

/// Hashes every key with xxh3-64, folding the results.
pub(crate) fn sweep_xxh3_64(keys: &[&str]) -> u64 {
    keys.iter()
        .fold(0, |acc, key| acc ^ xxh3_64(key.as_bytes()))
}

/// Prints the plain table of one case.
pub(crate) fn print_table(case: &Case, rows: &[Row]) {
    let n = case.members.len();
    println!();
    println!(
        "== {}: {} members; one timed pass over all keys (Instant), ns/op ==",
        case.label, n
    );
    let mut header = format!(
        "{:<28} {:>8} {:>14} {:>8} {:>9} {:>9}",
        "structure", "bits/key", "k", "theory", "build", "member"
    );
    for q in &case.queries {
        header.push_str(&format!(
            " {:>11} {:>9}",
            format!("{}({})", short(q.name), q.keys.len()),
            "fpp"
        ));
    }
    println!("{header}");
    let cell = |x: f64, digits: usize| {
        if x.is_nan() {
            "-".to_owned()
        } else {
            format!("{x:.digits$}")
        }
    };
    for row in rows {
        let mut line = format!(
            "{:<28} {:>8} {:>14} {:>8} {:>9} {:>9.1}",
            row.name,
            cell(row.bits_per_key, 2),
            row.probes,
            cell(row.theory, 5),
            row.build_ns.map_or("-".to_owned(), |b| format!("{b:.1}")),
            row.member_ns
        );
        for &(ns, fpp) in &row.non_member {
            line.push_str(&format!(" {:>11.1} {:>9}", ns, cell(fpp, 5)));
        }
        println!("{line}");
    }
}

/// A short column label for a query stream.
pub(crate) fn short(name: &str) -> &str {
    name.trim_start_matches("query-")
}

/// Prints the target ratios from the one-pass table, for each phishbloom layout with a
/// batched path.
pub(crate) fn print_ratios(case: &Case, rows: &[Row]) {
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    println!(
        "-- {} targets (one-pass ratios; criterion's follow below) --",
        case.label
    );
    for (ours, label) in [
        ("phishbloom-blocked", "blocked"),
        ("phishbloom-split", "split"),
    ] {
        let (Some(single_row), Some(batch)) = (find(ours), find(&format!("{ours} batch"))) else {
            continue;
        };
        for (i, q) in case.queries.iter().enumerate() {
            let single = single_row.non_member[i].0;
            let batched = batch.non_member[i].0;
            for peer in ["fastbloom-xxh3", "sbbf-xxh3"] {
                if let Some(p) = find(peer) {
                    let ns = p.non_member[i].0;
                    println!(
                        "{:<18} {label}/{peer} = {:.3}, {label} batch/{peer} = {:.3}",
                        q.name,
                        single / ns,
                        batched / ns
                    );
                }
            }
            println!(
                "{:<18} {label} batch/single = {:.3}",
                q.name,
                batched / single
            );
            let fpp = single_row.non_member[i].1;
            println!(
                "{:<18} {label} fpp = {:.5} (theory {:.5}; ≤ {FPP}: {}), bits/key = {:.2} (≤ 11: {})",
                q.name,
                fpp,
                single_row.theory,
                if fpp <= FPP { "met" } else { "NOT met" },
                single_row.bits_per_key,
                if single_row.bits_per_key <= 11.0 {
                    "met"
                } else {
                    "NOT met"
                }
            );
        }
        println!(
            "{:<18} {label} batch/single = {:.3}",
            "members",
            batch.member_ns / single_row.member_ns
        );
    }
}
