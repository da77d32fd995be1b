//! Section 6, the memory table of seed 004: Bloom filters for n = 10⁴…10⁸ at p = 10⁻⁴ and
//! 10⁻⁷ (computed, and built and measured where the sizes allow), beside an exact
//! `HashSet<String>` and seed 001's sorted table of 32-bit fingerprints.

use std::collections::HashSet;
use std::time::Instant;

use phishbloom_blocklist::plan::hashset_bytes;
use phishbloom_filter::data_len;
use phishbloom_filter::math::{self, BLOCK_BITS};
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, Layout, LayoutKind};
use phishbloom_lab::stats::Measurement;

use crate::context::{figure, markdown_table, Context};
use crate::error::{Error, Result};
use crate::keys::{count_listed, insert_range, split, InlineKey, OTHER_PHONES, PHONES};
use crate::output::{num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use crate::theory;
use phishbloom_blocklist::fmt;

/// Seed 004's target rates.
const RATES: [f64; 2] = [1e-4, 1e-7];
/// Bytes of one of seed 004's keys: an 11-digit mobile number.
const PHONE_BYTES: u64 = 11;
/// Bits of seed 001's password fingerprints.
const FINGERPRINT_BITS: u32 = 32;
/// Members re-queried for false negatives per built filter (a sample at 10⁸).
const MEMBER_CHECKS: u64 = 1_000_000;

/// Seed 004's printed table: row label, hash set, p = 10⁻⁴, p = 10⁻⁷ (as printed, MB/G).
const SEED_004: [(&str, &str, &str, &str); 3] = [
    ("1万 (10⁴)", "18.28MB", "2.29MB", "4MB"),
    ("10万 (10⁵)", "182.82MB", "22.85MB", "40MB"),
    ("1十亿 (as printed)", "1.78G", "228.53MB", "400MB"),
];

/// Resident memory of this process in bytes, from `/proc/self/statm` (Linux); `None` elsewhere.
pub fn resident_bytes() -> Option<u64> {
    /// Page size of x86-64 and most aarch64 Linux kernels; statm counts pages.
    const PAGE_BYTES: u64 = 4096;
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * PAGE_BYTES)
}

/// A built and measured filter.
#[derive(Clone, Debug)]
struct Built {
    false_negatives: u64,
    measured: Measurement,
    bytes: u64,
}

/// Builds a filter of layout `L` sized for `n` at `p` from phone numbers and measures it.
fn build<L: Layout>(ctx: &Context, n: u64, p: f64, offset: u64) -> Result<Built> {
    let mut filter = Bloom::<L>::new(n, p).map_err(|source| Error::Filter {
        experiment: "memory table",
        num_bits: 0,
        num_hashes: 0,
        source,
    })?;
    insert_range(&mut filter, PHONES, 0..n, 1);
    let checks = n.min(MEMBER_CHECKS);
    let false_negatives = checks - count_listed(&filter, PHONES, 0..checks, ctx.threads);
    let queries = ctx.sizes.memory_queries;
    let hits = count_listed(&filter, OTHER_PHONES, offset..offset + queries, ctx.threads);
    Ok(Built {
        false_negatives,
        measured: Measurement::new(hits, queries, filter.theoretical_fpp(n as f64)),
        bytes: filter.size_in_bytes(),
    })
}

/// The exact hash set, built: its bytes counted from the built structure, its resident-memory
/// growth, and a check that it is exact.
#[derive(Clone, Debug)]
struct HashSetRun {
    counted: u64,
    rss_growth: Option<u64>,
    false_positives: u64,
    queries: u64,
}

fn build_hashset(ctx: &Context, n: u64) -> HashSetRun {
    let before = resident_bytes();
    let set: HashSet<String> = (0..n).map(|i| PHONES.string(i)).collect();
    let after = resident_bytes();
    let counted = hashset_counted_bytes(&set);
    let queries = ctx.sizes.memory_queries.min(1_000_000);
    let false_positives = (0..queries)
        .filter(|&i| set.contains(&OTHER_PHONES.string(i)))
        .count() as u64;
    drop(set);
    HashSetRun {
        counted,
        rss_growth: before.zip(after).map(|(b, a)| a.saturating_sub(b)),
        false_positives,
        queries,
    }
}

/// Heap bytes of a built `HashSet<String>`, counted from its capacities: hashbrown's table of
/// `buckets` slots (24-byte `String` + 1 control byte each, + 16 trailing control bytes, one
/// SSE2 group) with `buckets` the power of two whose 7/8 is the capacity, plus each string's
/// allocation as glibc rounds it (capacity + 8-byte header, to 16 bytes, at least 32).
fn hashset_counted_bytes(set: &HashSet<String>) -> u64 {
    /// `size_of::<String>()` on 64-bit targets, and hashbrown's SSE2 group width.
    const STRING_BYTES: u64 = 24;
    const GROUP: u64 = 16;
    let capacity = set.capacity() as u64;
    let buckets = if capacity == 0 {
        0
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    let table = buckets * (STRING_BYTES + 1) + GROUP;
    let strings: u64 = set
        .iter()
        .map(|s| (s.capacity() as u64 + 8).div_ceil(16).max(2) * 16)
        .sum();
    table + strings
}

/// A 32-bit fingerprint: the low half of the key's xxh3-64.
fn fingerprint(key: &[u8]) -> u32 {
    xxhash_rust::xxh3::xxh3_64(key) as u32
}

/// Seed 001's sorted fingerprint table, built and measured.
fn build_fingerprints(ctx: &Context, n: u64, offset: u64) -> (Measurement, u64) {
    let mut key = InlineKey::default();
    let mut table: Vec<u32> = (0..n)
        .map(|i| fingerprint(PHONES.write(i, &mut key)))
        .collect();
    table.sort_unstable();
    let bytes = table.len() as u64 * 4;
    let queries = ctx.sizes.memory_queries;
    let table = &table;
    let hits: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = split(offset..offset + queries, ctx.threads)
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    let mut key = InlineKey::default();
                    part.filter(|&i| {
                        table
                            .binary_search(&fingerprint(OTHER_PHONES.write(i, &mut key)))
                            .is_ok()
                    })
                    .count() as u64
                })
            })
            .collect();
        workers
            .into_iter()
            // A worker panics only on a bug; propagate it.
            .map(|w| w.join().expect("fingerprint worker panicked"))
            .sum()
    });
    (
        Measurement::new(hits, queries, theory::fingerprint_fpp(n, FINGERPRINT_BITS)),
        bytes,
    )
}

/// Runs the section.
pub fn run(ctx: &mut Context) -> Result<String> {
    let sizes = ctx.sizes.clone();
    let mut table = Table::new(&[
        "n",
        "p",
        "layout",
        "m_bits",
        "k",
        "bytes",
        "built",
        "false_negatives_in_sample",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "theory_rate",
    ]);
    let mut rows = Vec::new();
    let mut exact = Table::new(&[
        "n",
        "structure",
        "bytes_computed",
        "bytes_measured",
        "measurement",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "theory_rate",
    ]);
    let mut exact_rows = Vec::new();
    let mut curves: Vec<Vec<Point>> = vec![Vec::new(); 6];
    let mut rate_curves: Vec<Vec<Point>> = vec![Vec::new(); 3];
    let mut hashset_measured = Vec::new();
    let mut offset = 0u64;
    for &n in &sizes.memory_items {
        for (pi, &p) in RATES.iter().enumerate() {
            let classic_m = checked(math::optimal_num_bits(n, p))?;
            let classic_k = math::optimal_num_hashes(n, classic_m);
            let (blocked_m, blocked_k) = checked(math::blocked_size(n, p))?;
            let mut cells = Vec::new();
            for (layout, m, k) in [
                (LayoutKind::Classic, classic_m, classic_k),
                (LayoutKind::Blocked, blocked_m, blocked_k),
            ] {
                let bytes = data_len(m);
                let built = if n <= sizes.memory_build_max {
                    ctx.progress(&format!("memory table: {layout} filter, n = {n}, p = {p}"));
                    // A fresh block of 2^34 query indices per structure: more than any query
                    // count, so no two structures share a non-member.
                    offset += 1 << 34;
                    let started = Instant::now();
                    let built = match layout {
                        LayoutKind::Classic => build::<Classic>(ctx, n, p, offset)?,
                        _ => build::<Blocked>(ctx, n, p, offset)?,
                    };
                    ctx.progress(&format!(
                        "  built and measured in {:.1} s",
                        started.elapsed().as_secs_f64()
                    ));
                    Some(built)
                } else {
                    None
                };
                let theory_rate = match layout {
                    LayoutKind::Classic => math::classic_fpp(m, n as f64, k),
                    _ => math::blocked_fpp(m, n as f64, k, BLOCK_BITS),
                };
                let curve = pi * 2 + usize::from(layout == LayoutKind::Blocked);
                curves[curve].push(Point::at(n as f64, bytes as f64));
                let mut row = vec![
                    n.to_string(),
                    num(p),
                    layout.to_string(),
                    m.to_string(),
                    k.to_string(),
                    bytes.to_string(),
                ];
                match &built {
                    Some(b) => {
                        debug_assert_eq!(b.bytes, bytes);
                        let m = &b.measured;
                        row.extend([
                            "yes".to_string(),
                            b.false_negatives.to_string(),
                            m.queries.to_string(),
                            m.false_positives.to_string(),
                            num(m.rate),
                            num(m.ci_low),
                            num(m.ci_high),
                            num(m.theoretical),
                        ]);
                        if pi == 0 && m.false_positives > 0 {
                            let which = usize::from(layout == LayoutKind::Blocked);
                            // Classic a little left of n, blocked a little right (log axis).
                            let x = n as f64 * if which == 0 { 0.85 } else { 1.15 };
                            rate_curves[which]
                                .push(Point::with_interval(x, m.rate, m.ci_low, m.ci_high));
                        }
                        cells.push(format!(
                            "{} · {} ({})",
                            fmt::bytes(bytes),
                            fmt::rate(m.rate),
                            if m.false_positives < 10 {
                                format!("{} FP", m.false_positives)
                            } else {
                                fmt::interval(m.ci_low, m.ci_high)
                            }
                        ));
                    }
                    None => {
                        row.extend([
                            "no".to_string(),
                            String::new(),
                            String::new(),
                            String::new(),
                            String::new(),
                            String::new(),
                            String::new(),
                            num(theory_rate),
                        ]);
                        cells.push(format!("{} · not built", fmt::bytes(bytes)));
                    }
                }
                table.push(row);
            }
            rows.push(vec![
                fmt::power_of_ten(n),
                format!("10^{}", p.log10().round()),
                classic_k.to_string(),
                cells[0].clone(),
                blocked_k.to_string(),
                cells[1].clone(),
            ]);
        }

        // The exact structures, once per n.
        let estimate = hashset_bytes(n, PHONE_BYTES);
        curves[4].push(Point::at(n as f64, estimate as f64));
        let (hs_measured, hs_text) = if n <= sizes.hashset_build_max {
            ctx.progress(&format!("memory table: HashSet<String>, n = {n}"));
            let run = build_hashset(ctx, n);
            hashset_measured.push(Point::at(n as f64, run.counted as f64));
            exact.push(vec![
                n.to_string(),
                "HashSet<String>".to_string(),
                estimate.to_string(),
                run.counted.to_string(),
                format!(
                    "counted from the built set's capacities; resident-memory growth {} bytes",
                    run.rss_growth
                        .map(|g| g.to_string())
                        .unwrap_or_else(|| "unknown".into())
                ),
                run.queries.to_string(),
                run.false_positives.to_string(),
                num(run.false_positives as f64 / run.queries as f64),
                String::new(),
                String::new(),
                "0".to_string(),
            ]);
            (
                format!(
                    "{} (RSS +{})",
                    fmt::bytes(run.counted),
                    run.rss_growth.map(fmt::bytes).unwrap_or_else(|| "?".into())
                ),
                format!("{} FP / {}", run.false_positives, fmt::count(run.queries)),
            )
        } else {
            exact.push(vec![
                n.to_string(),
                "HashSet<String>".to_string(),
                estimate.to_string(),
                String::new(),
                "estimated only".to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                "0".to_string(),
            ]);
            ("not built".to_string(), "exact".to_string())
        };
        let fp_bytes = n * 4;
        curves[5].push(Point::at(n as f64, fp_bytes as f64));
        let fp_theory = theory::fingerprint_fpp(n, FINGERPRINT_BITS);
        let fp_text = if n <= sizes.fingerprint_build_max {
            ctx.progress(&format!(
                "memory table: sorted 32-bit fingerprints, n = {n}"
            ));
            // A fresh block of query indices, as for the filters above.
            offset += 1 << 34;
            let (m, bytes) = build_fingerprints(ctx, n, offset);
            if m.false_positives > 0 {
                rate_curves[2].push(Point::with_interval(n as f64, m.rate, m.ci_low, m.ci_high));
            }
            exact.push(vec![
                n.to_string(),
                "sorted u32 fingerprints".to_string(),
                fp_bytes.to_string(),
                bytes.to_string(),
                "Vec<u32> length × 4".to_string(),
                m.queries.to_string(),
                m.false_positives.to_string(),
                num(m.rate),
                num(m.ci_low),
                num(m.ci_high),
                num(m.theoretical),
            ]);
            format!(
                "{} ({} FP / {}; theory {})",
                fmt::rate(m.rate),
                fmt::count(m.false_positives),
                fmt::count(m.queries),
                fmt::rate(fp_theory)
            )
        } else {
            exact.push(vec![
                n.to_string(),
                "sorted u32 fingerprints".to_string(),
                fp_bytes.to_string(),
                String::new(),
                "computed only".to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                num(fp_theory),
            ]);
            format!("not built (theory {})", fmt::rate(fp_theory))
        };
        exact_rows.push(vec![
            fmt::power_of_ten(n),
            fmt::bytes(estimate),
            hs_measured,
            hs_text,
            fmt::bytes(fp_bytes),
            fp_text,
        ]);
    }
    let csv = ctx.write_csv("memory.csv", &table)?;
    let exact_csv = ctx.write_csv("memory_exact.csv", &exact)?;

    // Seed 004's printed figures beside the computed ones.
    let mut seed = Table::new(&[
        "seed_row",
        "seed_hashset",
        "seed_p1e-4",
        "seed_p1e-7",
        "n_matching_numbers",
        "computed_classic_mib_p1e-4",
        "computed_classic_mib_p1e-7",
        "computed_m_p1e-4_bits_as_mib",
    ]);
    let mut seed_rows = Vec::new();
    for ((label, hs, p4, p7), n) in SEED_004.iter().zip([1_000_000u64, 10_000_000, 100_000_000]) {
        let m4 = checked(math::optimal_num_bits(n, 1e-4))?;
        let m7 = checked(math::optimal_num_bits(n, 1e-7))?;
        let cells = [
            theory::bits_to_mib(m4),
            theory::bits_to_mib(m7),
            m4 as f64 / 1_048_576.0,
        ];
        seed.push(vec![
            label.to_string(),
            hs.to_string(),
            p4.to_string(),
            p7.to_string(),
            n.to_string(),
            num(cells[0]),
            num(cells[1]),
            num(cells[2]),
        ]);
        seed_rows.push(vec![
            label.to_string(),
            format!("{hs} · {p4} · {p7}"),
            fmt::power_of_ten(n),
            format!("{:.2} MiB · {:.2} MiB", cells[0], cells[1]),
            if cells[2] >= 1024.0 {
                format!("{:.2} Gi", cells[2] / 1024.0)
            } else {
                format!("{:.2} Mi", cells[2])
            },
        ]);
    }
    let seed_csv = ctx.write_csv("seed004_table.csv", &seed)?;

    let n_min = *sizes.memory_items.first().unwrap_or(&10_000) as f64;
    let n_max = *sizes.memory_items.last().unwrap_or(&100_000_000) as f64;
    let names = [
        "classic, p = 10⁻⁴",
        "blocked, p = 10⁻⁴",
        "classic, p = 10⁻⁷",
        "blocked, p = 10⁻⁷",
        "HashSet<String> (estimate)",
        "sorted 32-bit fingerprints (4n)",
    ];
    // Fingerprints as markers: 4 bytes per key nearly coincides with the classic p = 10⁻⁷ line.
    let styles = [
        Style::Line,
        Style::Dashed,
        Style::Line,
        Style::Dashed,
        Style::Line,
        Style::Crosses,
    ];
    let colors = [0, 0, 1, 1, 4, 2];
    let mut series: Vec<Series> = curves
        .into_iter()
        .enumerate()
        .map(|(i, points)| Series::new(names[i], PALETTE[colors[i]], styles[i], points))
        .collect();
    series.push(Series::new(
        "HashSet<String> (counted from the built set)",
        PALETTE[4],
        Style::Squares,
        hashset_measured,
    ));
    let max_bytes = hashset_bytes(n_max as u64, PHONE_BYTES) as f64;
    let memory_panel = Panel {
        title: "memory".to_string(),
        x: Axis::log("n (keys)", n_min, n_max),
        y: Axis::log("bytes", 1e4, max_bytes),
        series,
        legend: LegendAt::UpperLeft,
    };
    let fp_theory: Vec<Point> = (0..=40)
        .map(|i| {
            let n = n_min * (n_max / n_min).powf(f64::from(i) / 40.0);
            Point::at(n, theory::fingerprint_fpp(n as u64, FINGERPRINT_BITS))
        })
        .collect();
    let rate_panel = Panel {
        title: "measured false-positive rate".to_string(),
        // Room for the points drawn at ×0.85 and ×1.15 of the smallest and largest n.
        x: Axis::log_exact("n (keys)", n_min * 0.7, n_max * 1.4),
        y: Axis::log("false-positive rate", 1e-7, 0.1),
        series: vec![
            Series::new(
                "target p = 10⁻⁴",
                PALETTE[6],
                Style::Dashed,
                vec![Point::at(n_min, 1e-4), Point::at(n_max, 1e-4)],
            ),
            Series::new(
                "32-bit fingerprints, theory 1 − (1 − 2⁻³²)ⁿ",
                PALETTE[2],
                Style::Line,
                fp_theory,
            ),
            Series::new(
                "classic, p = 10⁻⁴",
                PALETTE[0],
                Style::Circles,
                rate_curves[0].clone(),
            ),
            Series::new(
                "blocked, p = 10⁻⁴",
                PALETTE[1],
                Style::Triangles,
                rate_curves[1].clone(),
            ),
            Series::new(
                "32-bit fingerprints, measured",
                PALETTE[2],
                Style::Squares,
                rate_curves[2].clone(),
            ),
        ],
        legend: LegendAt::UpperLeft,
    };
    let svg = ctx.write_svg(
        "fig-memory.svg",
        "Memory of a blocklist of n phone numbers: Bloom filters vs exact structures (seed 004)",
        &[memory_panel, rate_panel],
        (1500, 620),
    )?;

    let mut md = String::from("## 6. Memory (seed 004's table)\n\n");
    md.push_str(&format!(
        "Seed 004 tabulates the memory of deduplicating phone numbers. Keys here are 11-digit \
         numbers (`1` + ten digits; non-members start with `2`). Bloom filters were built and \
         measured up to n = {} ({} non-member queries each; members re-checked on a sample of up \
         to {}); larger ones are computed only. Each cell: bytes · measured rate (95 % interval, or \
         the count when it is under 10).\n\n",
        fmt::power_of_ten(sizes.memory_build_max),
        fmt::count(sizes.memory_queries),
        fmt::count(MEMBER_CHECKS),
    ));
    md.push_str(&markdown_table(
        &[
            "n",
            "p",
            "classic k",
            "classic: bytes · measured rate",
            "blocked k",
            "blocked: bytes · measured rate",
        ],
        &rows,
    ));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    md.push_str(&format!(
        "Exact structures for the same keys: a Rust `HashSet<String>` (estimated from hashbrown's \
         layout and glibc's allocation sizes; built up to n = {}, where its bytes are counted from \
         the built set's capacities and the growth of the process's resident memory is shown \
         beside them — that growth undercounts at small n, where the allocator reuses memory \
         freed by earlier sections), and seed 001's sorted table of 32-bit fingerprints \
         (4 bytes per key; its false-positive rate 1 − (1 − 2⁻³²)ⁿ grows with n, while a Bloom \
         filter's is fixed by its sizing).\n\n",
        fmt::power_of_ten(sizes.hashset_build_max)
    ));
    md.push_str(&markdown_table(
        &[
            "n",
            "HashSet estimate",
            "HashSet built: counted (RSS growth)",
            "HashSet check",
            "fingerprints bytes",
            "fingerprint rate measured",
        ],
        &exact_rows,
    ));
    md.push_str(&format!("\n*Data: [{exact_csv}]({exact_csv}).*\n\n"));
    md.push_str(&figure(
        &svg,
        "Bytes against n for Bloom filters, a hash set and a fingerprint table; measured rates",
        &csv,
    ));
    md.push_str(&format!(
        "\n**Seed 004's printed numbers** do not belong to its row labels. Its p = 10⁻⁴ and \
         p = 10⁻⁷ columns are the classic sizes for n = 10⁶, 10⁷ and 10⁸ (not 10⁴, 10⁵ and \
         10⁹), in MiB; and its \"HashSet\" column equals the p = 10⁻⁴ filter's bit count read as \
         bytes (m/2²⁰), i.e. 8× the filter — not a hash-set estimate (a real `HashSet<String>` of \
         10⁶ phone numbers takes about {} here).\n\n",
        fmt::bytes(hashset_bytes(1_000_000, PHONE_BYTES)),
    ));
    md.push_str(&markdown_table(
        &[
            "seed row",
            "printed: HashSet · 10⁻⁴ · 10⁻⁷",
            "n they match",
            "computed classic 10⁻⁴ · 10⁻⁷",
            "m(10⁻⁴) as Mi bytes",
        ],
        &seed_rows,
    ));
    md.push_str(&format!("\n*Data: [{seed_csv}]({seed_csv}).*\n\n"));
    md.push_str(
        "At p = 10⁻⁷ even 10⁷ queries expect only about one false positive, so those rows show \
         that the rate is tiny, not how tiny; the p = 10⁻⁴ rows are measured to a few percent.\n\n",
    );
    ctx.headlines.push(format!(
        "memory: n = 10^8 at p = 1e-4: classic {}, hash set ≈ {} (estimate)",
        fmt::bytes(data_len(checked(math::optimal_num_bits(
            100_000_000,
            1e-4
        ))?)),
        fmt::bytes(hashset_bytes(100_000_000, PHONE_BYTES))
    ));
    Ok(md)
}

/// Maps a sizing failure (the sizes here are fixed and valid, so it is a bug).
fn checked<T>(result: phishbloom_filter::Result<T>) -> Result<T> {
    result.map_err(|source| Error::Filter {
        experiment: "memory table",
        num_bits: 0,
        num_hashes: 0,
        source,
    })
}
