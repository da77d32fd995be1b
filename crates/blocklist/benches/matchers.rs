//! Measures URL checks end to end — canonicalize, generate expressions, probe — for the Bloom
//! matcher (without and with verification), the CaBF engine and the exact matcher, and the
//! longest-prefix lookups of BBF−, BBF+, CaBF− and CaBF, on one core and on all cores.
//!
//! The stream is the dataset's URLs plus URLs below UT1 entries (read from `../shared/data` when
//! present, else generated); the lists are UT1 `phishing` and `malware`.
//! Run: `cargo bench -p phishbloom-blocklist --bench matchers`.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use phishbloom_core::engine::cabf::{entry_components, url_components, Split};
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{Matcher, Scratch};
use phishbloom_core::{Blocklist, Kind};
use phishbloom_filter::cabf::{longest_prefix, PrefixFilter, Structure};
use phishbloom_url::{canonicalize, CanonicalUrl, Canonicalizer, Entry};

mod common;

use common::{build, list, stream};

/// Whether a canonical URL is listed, by one engine.
type Find<'a> = &'a (dyn Fn(&CanonicalUrl, &mut Scratch) -> bool + Sync);

/// Checks every line on `threads` threads; returns the number listed (kept so nothing is
/// optimized away).
fn check_all(find: Find<'_>, lines: &[Vec<u8>], threads: usize) -> usize {
    let share = lines.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(share)
            .map(|part| {
                scope.spawn(move || {
                    let mut scratch = Scratch::default();
                    let mut canonicalizer = Canonicalizer::new();
                    part.iter()
                        .filter(|line| {
                            canonicalizer
                                .canonicalize(line)
                                .is_ok_and(|url| find(url, &mut scratch))
                        })
                        .count()
                })
            })
            .collect();
        // A panicking worker is a bug in the code under measurement: surface it.
        handles
            .into_iter()
            .map(|h| h.join().expect("worker panicked"))
            .sum()
    })
}

/// A [`Find`] that asks `list`.
fn in_list(list: &Blocklist) -> impl Fn(&CanonicalUrl, &mut Scratch) -> bool + Sync + '_ {
    move |url, scratch| list.find_url(url, scratch).is_some()
}

/// The peer of the URL checks: canonicalize every line (as they do, into one reused buffer) and
/// count its expressions, without hashing or looking any up.
fn canonicalize_only(lines: &[Vec<u8>]) -> usize {
    let mut canonicalizer = Canonicalizer::new();
    lines
        .iter()
        .filter_map(|l| {
            canonicalizer
                .canonicalize(l)
                .ok()
                .map(|u| u.expression_count())
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let list = list();
    let lines = stream(&list);
    let bloom = build(&list, Kind::Blocked, false);
    let verified = build(&list, Kind::Blocked, true);
    let cabf = build(&list, Kind::Cabf, false);
    let exact = ExactMatcher::new(&list);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!(
        "{} entries, {} query URLs, {} cores; Bloom filter {} bytes",
        list.len(),
        lines.len(),
        cores,
        bloom.filter().map_or(0, |f| f.size_in_bytes())
    );

    let mut group = c.benchmark_group("url_checks");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("canonicalize+expressions only", |b| {
        b.iter(|| canonicalize_only(&lines))
    });
    let (bloom, verified, cabf) = (in_list(&bloom), in_list(&verified), in_list(&cabf));
    let exact = |url: &CanonicalUrl, scratch: &mut Scratch| exact.find(url, scratch).is_some();
    let matchers: [(&str, Find<'_>); 4] = [
        ("bloom", &bloom),
        ("bloom+verify", &verified),
        ("cabf-engine", &cabf),
        ("exact", &exact),
    ];
    for (name, matcher) in matchers {
        for threads in [1, cores] {
            group.bench_function(format!("{name}/{threads} thread(s)"), |b| {
                b.iter_custom(|iterations| {
                    let started = Instant::now();
                    for _ in 0..iterations {
                        std::hint::black_box(check_all(matcher, &lines, threads));
                    }
                    started.elapsed()
                })
            });
        }
    }
    group.finish();
    prefix_structures(c, &list, &lines, cores);
}

/// Longest-prefix lookups of seed 003's four structures on the same stream (slash split, one
/// component sequence per URL, 10 bits per entry, no verification), one core and all cores.
fn prefix_structures(c: &mut Criterion, list: &[Entry], lines: &[Vec<u8>], cores: usize) {
    let split = Split::Slash;
    let entries: Vec<Vec<String>> = list.iter().map(|e| entry_components(split, e)).collect();
    let queries: Vec<Vec<String>> = lines
        .iter()
        .filter_map(|l| canonicalize(l).ok())
        .map(|u| url_components(split, &u, u.host()))
        .collect();
    let bits = 10 * entries.len() as u64;
    let structures: Vec<Box<dyn PrefixFilter>> = Structure::PAPER
        .iter()
        .map(|s| s.build(&entries, 8, bits, None).expect("structure"))
        .collect();
    let mut group = c.benchmark_group("longest_prefix");
    group.throughput(Throughput::Elements(queries.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for structure in &structures {
        for threads in [1, cores] {
            group.bench_function(format!("{}/{threads} thread(s)", structure.name()), |b| {
                b.iter_custom(|iterations| {
                    let started = Instant::now();
                    for _ in 0..iterations {
                        let share = queries.len().div_ceil(threads);
                        std::thread::scope(|scope| {
                            for part in queries.chunks(share) {
                                let structure = &**structure;
                                scope.spawn(move || {
                                    let mut candidates = Vec::new();
                                    let found: usize = part
                                        .iter()
                                        .map(|q| {
                                            longest_prefix(structure, None, q, &mut candidates)
                                        })
                                        .sum();
                                    std::hint::black_box(found)
                                });
                            }
                        });
                    }
                    started.elapsed()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
