//! Section 5, hash strategies: seed 000's SHA-256-per-index positions against one xxh3-128 with
//! double hashing, on the same keys and the same m and k — rates with intervals, and build and
//! query speed as ratios measured side by side in this run.
//!
//! Rendered here from [`phishbloom_lab::measure::hashing`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_lab::measure::hashing::{HashStrategies, StrategyRun};
use phishbloom_lab::stats::Measurement;

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use crate::sections::dataset::agreement;
use phishbloom_core::fmt;

/// Writes the section from [`phishbloom_lab::measure::hashing::run`]'s results.
pub fn render(ctx: &mut Context, result: &HashStrategies) -> Result<String> {
    let (table, rows) = strategy_table(result);
    let csv = ctx.write_csv("hash_strategies.csv", &table)?;
    let ratios = time_ratios(result);
    let svg = ctx.write_svg(
        "fig-hash-strategies.svg",
        "Hash strategies: SHA-256 per index (seed 000) vs xxh3 double hashing",
        &[rate_panel(result), speed_panel(&ratios)],
        (1500, 560),
    )?;
    let classic = ratios[0];
    ctx.headlines.push(format!(
        "hash strategies: SHA-256 / xxh3 time, classic: build {:.0}×, query {:.0}×",
        classic.0, classic.1
    ));
    let mut md = String::from("## 5. Hash strategies\n\n");
    md.push_str(&intro(result));
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
    md.push_str(&findings(result, &ratios));
    md.push_str(&format!(
        "Command: `{}` (this report's own run).\n\n",
        crate::command_line(ctx.settings.quick)
    ));
    Ok(md)
}

/// The runs in figure order: classic xxh3, classic SHA-256, blocked xxh3, blocked SHA-256.
fn runs(result: &HashStrategies) -> Vec<&StrategyRun> {
    result
        .comparisons
        .iter()
        .flat_map(|c| [&c.xxh3, &c.sha256])
        .collect()
}

/// (build, query) time ratios SHA-256 ÷ xxh3, classic then blocked.
fn time_ratios(result: &HashStrategies) -> Vec<(f64, f64)> {
    result
        .comparisons
        .iter()
        .map(|c| (c.build_ratio(), c.query_ratio()))
        .collect()
}

/// Every run as a CSV table (`hash_strategies.csv`) and as Markdown rows.
fn strategy_table(result: &HashStrategies) -> (Table, Vec<Vec<String>>) {
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
    for c in &result.comparisons {
        let (build_ratio, query_ratio) = (c.build_ratio(), c.query_ratio());
        for (r, b, q) in [(&c.xxh3, 1.0, 1.0), (&c.sha256, build_ratio, query_ratio)] {
            let m = &r.measured;
            table.push(
                [
                    vec![
                        c.layout.to_string(),
                        r.strategy.to_string(),
                        result.n.to_string(),
                        r.m.to_string(),
                        r.k.to_string(),
                        r.false_negatives.to_string(),
                    ],
                    measurement_cells(m),
                    vec![format!("{b:.2}"), format!("{q:.2}")],
                ]
                .concat(),
            );
            rows.push(vec![
                c.layout.to_string(),
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
    (table, rows)
}

/// The rates of the four runs beside their theory.
fn rate_panel(result: &HashStrategies) -> Panel {
    let runs = runs(result);
    let names = [
        "classic xxh3",
        "classic SHA-256",
        "blocked xxh3",
        "blocked SHA-256",
    ];
    let rate_points: Vec<Point> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Point::measured(i as f64, &r.measured))
        .collect();
    let theory_points: Vec<Point> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Point::at(i as f64, r.measured.theoretical))
        .collect();
    let low = runs.iter().map(|r| r.measured.ci_low).fold(1.0, f64::min);
    let high = runs.iter().map(|r| r.measured.ci_high).fold(0.0, f64::max);
    let pad = (high - low) * 0.2;
    Panel {
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
    }
}

/// The time ratios SHA-256 ÷ xxh3 of building and querying, per layout.
fn speed_panel(ratios: &[(f64, f64)]) -> Panel {
    let max_ratio = ratios.iter().map(|&(b, q)| b.max(q)).fold(1.0, f64::max);
    Panel {
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
                    .map(|(i, r)| Point::at(i as f64 - 0.1, r.0))
                    .collect(),
            ),
            Series::new(
                "query (all non-members)",
                PALETTE[2],
                Style::Triangles,
                ratios
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Point::at(i as f64 + 0.1, r.1))
                    .collect(),
            ),
        ],
        legend: LegendAt::LowerRight,
    }
}

/// What the two strategies are and how they were compared.
fn intro(result: &HashStrategies) -> String {
    format!(
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
        fmt::count(result.n),
        fmt::count(result.benign + result.random),
        fmt::count(result.benign),
        fmt::count(result.random),
        result.repetitions
    )
}

/// What the rates and the speed ratios show.
fn findings(result: &HashStrategies, ratios: &[(f64, f64)]) -> String {
    let runs = runs(result);
    let classic = ratios[0];
    let overlap = |a: &Measurement, b: &Measurement| a.ci_low <= b.ci_high && b.ci_low <= a.ci_high;
    let same = overlap(&runs[0].measured, &runs[1].measured)
        && overlap(&runs[2].measured, &runs[3].measured);
    format!(
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
        classic.0,
        classic.1,
        ratios[1].0,
        ratios[1].1,
    )
}
