//! Section 5, hash strategies: seed 000's SHA-256-per-index positions against one xxh3-128 with
//! double hashing, on the same keys and the same m and k — rates with intervals, and build and
//! query speed as ratios measured side by side in this run.

use std::collections::HashSet;
use std::time::Instant;

use phishbloom_blocklist::source::{read_list, Input, LabelFilter, ListOptions, DEFAULT_LABEL};
use phishbloom_blocklist::KeyList;
use phishbloom_blocklist::KeyScheme;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, HashStrategy, Layout, LayoutKind};
use phishbloom_lab::stats::Measurement;

use crate::context::{figure, markdown_table, Context};
use crate::error::{Error, Result};
use crate::output::{num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use crate::sections::dataset::agreement;
use crate::sections::sizing::TARGET;
use phishbloom_blocklist::fmt;

/// Seed of the random URLs of this section (different from section 2's, so the sets differ).
const RANDOM_SEED: u64 = 5;

/// The dataset's keys as `phishbloom build` normalizes them.
pub struct DatasetKeys {
    /// Distinct phishing keys.
    pub phishing: KeyList,
    /// Distinct benign keys that are not also phishing keys.
    pub benign: Vec<Vec<u8>>,
}

/// Reads the phishing and benign keys of the dataset.
pub fn read_dataset(ctx: &Context) -> Result<DatasetKeys> {
    read_dataset_limited(ctx, usize::MAX)
}

/// Reads at most `limit` phishing and `limit` benign keys of the dataset.
fn read_dataset_limited(ctx: &Context, limit: usize) -> Result<DatasetKeys> {
    let input = Input::Path(ctx.data.clone());
    let read = |label| {
        let options = ListOptions {
            label,
            scheme: KeyScheme::Url,
            ..ListOptions::default()
        };
        read_list(&input, &options, &mut |_| {})
            .map(|(keys, _)| keys)
            .map_err(|source| Error::Dataset {
                path: ctx.data.clone(),
                source: source.into(),
            })
    };
    let all = read(LabelFilter::Default)?;
    let mut phishing = KeyList::default();
    for key in all.iter().take(limit) {
        phishing.push(key);
    }
    let benign_all = read(LabelFilter::Equals {
        column: DEFAULT_LABEL.0.to_string(),
        value: phishbloom_lab::eval::BENIGN_LABEL.to_string(),
    })?;
    let members: HashSet<&[u8]> = phishing.iter().collect();
    let benign = benign_all
        .iter()
        .filter(|k| !members.contains(k))
        .take(limit)
        .map(|k| k.to_vec())
        .collect();
    Ok(DatasetKeys { phishing, benign })
}

/// One strategy on one layout.
#[derive(Clone, Debug)]
struct Run {
    layout: LayoutKind,
    strategy: HashStrategy,
    m: u64,
    k: u32,
    false_negatives: u64,
    measured: Measurement,
    /// Median seconds to insert all members.
    build_seconds: f64,
    /// Seconds to answer every non-member once (one thread).
    query_seconds: f64,
}

/// Builds `L` filters with both strategies `repetitions` times, interleaved, and measures them.
fn compare<L: Layout>(
    keys: &DatasetKeys,
    queries: &[Vec<u8>],
    repetitions: usize,
) -> Result<[Run; 2]> {
    let n = keys.phishing.len() as u64;
    let strategies = [HashStrategy::Xxh3, HashStrategy::Sha256];
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut built: [Option<Bloom<L>>; 2] = [None, None];
    for _ in 0..repetitions.max(1) {
        for (slot, &strategy) in strategies.iter().enumerate() {
            let mut filter =
                Bloom::<L>::with_strategy(n, TARGET, strategy).map_err(|source| Error::Filter {
                    experiment: "hash strategies",
                    num_bits: 0,
                    num_hashes: 0,
                    source,
                })?;
            let started = Instant::now();
            for key in keys.phishing.iter() {
                filter.insert(key);
            }
            times[slot].push(started.elapsed().as_secs_f64());
            built[slot] = Some(filter);
        }
    }
    let mut runs = Vec::new();
    for (slot, strategy) in strategies.into_iter().enumerate() {
        // Set in the loop above, which runs at least once.
        let filter = built[slot].take().expect("built at least once");
        let false_negatives = keys
            .phishing
            .iter()
            .filter(|key| !filter.contains(key))
            .count() as u64;
        let started = Instant::now();
        let hits = queries.iter().filter(|key| filter.contains(key)).count() as u64;
        let query_seconds = started.elapsed().as_secs_f64();
        times[slot].sort_by(f64::total_cmp);
        runs.push(Run {
            layout: L::KIND,
            strategy,
            m: filter.num_bits(),
            k: filter.num_hashes(),
            false_negatives,
            measured: Measurement::new(
                hits,
                queries.len() as u64,
                filter.theoretical_fpp(n as f64),
            ),
            build_seconds: times[slot][times[slot].len() / 2],
            query_seconds,
        });
    }
    // Two strategies were pushed.
    let second = runs.pop().expect("two runs");
    let first = runs.pop().expect("two runs");
    Ok([first, second])
}

/// Runs the comparison and writes the section.
pub fn run(ctx: &mut Context, all_keys: &DatasetKeys) -> Result<String> {
    ctx.progress("hash strategies: xxh3 vs SHA-256");
    let limited;
    let keys = if ctx.sizes.hash_key_limit < all_keys.phishing.len() {
        limited = read_dataset_limited(ctx, ctx.sizes.hash_key_limit)?;
        &limited
    } else {
        all_keys
    };
    let mut queries = keys.benign.clone();
    let members: HashSet<&[u8]> = keys.phishing.iter().collect();
    let mut rng = SplitMix64::new(RANDOM_SEED);
    let mut key = Vec::new();
    let mut random = 0u64;
    while random < ctx.sizes.hash_random {
        KeyScheme::Url.normalize_into(phishbloom_lab::random_url(&mut rng).as_bytes(), &mut key);
        if !members.contains(key.as_slice()) {
            queries.push(key.clone());
            random += 1;
        }
    }
    let reps = ctx.sizes.hash_repetitions;
    let mut runs = compare::<Classic>(keys, &queries, reps)?.to_vec();
    runs.extend(compare::<Blocked>(keys, &queries, reps)?);

    let mut table = Table::new(&[
        "layout",
        "strategy",
        "n",
        "m_bits",
        "k",
        "false_negatives",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "theory_rate",
        "build_time_ratio_vs_xxh3",
        "query_time_ratio_vs_xxh3",
    ]);
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for pair in runs.chunks(2) {
        let (fast, slow) = (&pair[0], &pair[1]);
        let build_ratio = slow.build_seconds / fast.build_seconds;
        let query_ratio = slow.query_seconds / fast.query_seconds;
        ratios.push((fast.layout, build_ratio, query_ratio));
        for (r, b, q) in [(fast, 1.0, 1.0), (slow, build_ratio, query_ratio)] {
            let m = &r.measured;
            table.push(vec![
                r.layout.to_string(),
                r.strategy.to_string(),
                keys.phishing.len().to_string(),
                r.m.to_string(),
                r.k.to_string(),
                r.false_negatives.to_string(),
                m.queries.to_string(),
                m.false_positives.to_string(),
                num(m.rate),
                num(m.ci_low),
                num(m.ci_high),
                num(m.theoretical),
                format!("{b:.2}"),
                format!("{q:.2}"),
            ]);
            rows.push(vec![
                r.layout.to_string(),
                r.strategy.to_string(),
                format!("{} / k = {}", fmt::count(r.m), r.k),
                r.false_negatives.to_string(),
                format!(
                    "{} / {}",
                    fmt::count(m.false_positives),
                    fmt::count(m.queries)
                ),
                fmt::rate(m.rate),
                fmt::interval(m.ci_low, m.ci_high),
                fmt::rate(m.theoretical),
                agreement(m),
                format!("{b:.1}×"),
                format!("{q:.1}×"),
            ]);
        }
    }
    let csv = ctx.write_csv("hash_strategies.csv", &table)?;

    let names = [
        "classic xxh3",
        "classic SHA-256",
        "blocked xxh3",
        "blocked SHA-256",
    ];
    let rate_points: Vec<Point> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let m = &r.measured;
            Point::with_interval(i as f64, m.rate, m.ci_low, m.ci_high)
        })
        .collect();
    let theory_points: Vec<Point> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Point::at(i as f64, r.measured.theoretical))
        .collect();
    let low = runs.iter().map(|r| r.measured.ci_low).fold(1.0, f64::min);
    let high = runs.iter().map(|r| r.measured.ci_high).fold(0.0, f64::max);
    let pad = (high - low) * 0.2;
    let rate_panel = Panel {
        title: "false-positive rate, 95 % interval".to_string(),
        x: Axis::categories("layout and hash strategy", &names),
        y: Axis::linear(
            "false-positive rate (fraction of queries)",
            (low - pad).max(0.0),
            high + pad * 2.0,
        ),
        series: vec![
            Series::new("measured", PALETTE[0], Style::Circles, rate_points),
            Series::new(
                "theory (m, k, n)",
                PALETTE[6],
                Style::Crosses,
                theory_points,
            ),
        ],
        legend: LegendAt::UpperRight,
    };
    let max_ratio = ratios.iter().map(|&(_, b, q)| b.max(q)).fold(1.0, f64::max);
    let speed_panel = Panel {
        title: "SHA-256 time ÷ xxh3 time (same keys, same run)".to_string(),
        x: Axis::categories("layout", &["classic", "blocked"]),
        y: Axis::log("time ratio SHA-256 / xxh3 (×)", 1.0, max_ratio * 1.5),
        series: vec![
            Series::new(
                "build (insert all members)",
                PALETTE[1],
                Style::Squares,
                ratios
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Point::at(i as f64 - 0.1, r.1))
                    .collect(),
            ),
            Series::new(
                "query (all non-members)",
                PALETTE[2],
                Style::Triangles,
                ratios
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Point::at(i as f64 + 0.1, r.2))
                    .collect(),
            ),
        ],
        legend: LegendAt::LowerRight,
    };
    let svg = ctx.write_svg(
        "fig-hash-strategies.svg",
        "Hash strategies: SHA-256 per index (seed 000) vs xxh3 double hashing",
        &[rate_panel, speed_panel],
        (1500, 560),
    )?;

    let classic = ratios[0];
    ctx.headlines.push(format!(
        "hash strategies: SHA-256 / xxh3 time, classic: build {:.0}×, query {:.0}×",
        classic.1, classic.2
    ));
    let mut md = String::from("## 5. Hash strategies\n\n");
    md.push_str(&format!(
        "Seed 000 computes bit i as SHA-256(url ‖ str(i)) mod m — k full SHA-256 digests per key, \
         each reduced as a 256-bit integer. phishbloom's `HashStrategy::Sha256` reproduces it \
         bit for bit (tested against the seed's Python); the default `Xxh3` hashes a key once \
         (xxh3-128) and derives the k positions by enhanced double hashing (Dillinger & Manolios \
         2004; Kirsch & Mitzenmacher 2006). Both strategies build filters of the same m and k \
         from the same {} phishing keys of the dataset, and answer the same {} non-members (the \
         {} benign keys and {} random URLs). Build times are the median of {} builds, \
         alternating the two strategies; query times are one pass over all non-members on one \
         thread, also back to back. Only the ratios are reported: absolute times depend on the \
         machine and its load.\n\n",
        fmt::count(keys.phishing.len() as u64),
        fmt::count(queries.len() as u64),
        fmt::count(keys.benign.len() as u64),
        fmt::count(ctx.sizes.hash_random),
        reps
    ));
    md.push_str(&markdown_table(
        &[
            "layout",
            "hash",
            "m / k",
            "false negatives",
            "FP / queries",
            "rate",
            "95 % interval",
            "theory",
            "theory in interval?",
            "build time ÷ xxh3",
            "query time ÷ xxh3",
        ],
        &rows,
    ));
    md.push('\n');
    md.push_str(&figure(
        &svg,
        "Rates and speed ratios of the two hash strategies",
        &csv,
    ));
    let overlap = |a: &Measurement, b: &Measurement| a.ci_low <= b.ci_high && b.ci_low <= a.ci_high;
    let same = overlap(&runs[0].measured, &runs[1].measured)
        && overlap(&runs[2].measured, &runs[3].measured);
    md.push_str(&format!(
        "\n- **Rates:** {} — the strategies produce statistically indistinguishable filters: \
         double hashing from one 128-bit hash loses nothing measurable against k independent \
         cryptographic hashes.\n\
         - **Speed:** on the classic layout SHA-256 takes {:.0}× as long to build and {:.0}× as \
         long to query; on the blocked layout {:.0}× and {:.0}×. The SHA-256 path computes k \
         digests per key and reduces each 256-bit value modulo m (as the seed's Python does), \
         where xxh3 hashes once and needs no division. The cryptographic strength buys nothing \
         here: the filter's positions only need to be uniform, and an attacker who knows the \
         (public) hash can craft false positives with either.\n\n",
        if same {
            "the intervals of the two strategies overlap on both layouts"
        } else {
            "the intervals of the two strategies do NOT overlap on every layout (see the table)"
        },
        classic.1,
        classic.2,
        ratios[1].1,
        ratios[1].2,
    ));
    md.push_str(&format!(
        "Command: `{}` (this report's own run).\n\n",
        crate::command_line(ctx.quick)
    ));
    Ok(md)
}
