//! Section 3: the false-positive rate against k at m/n = 10, 20, 30 for both layouts, with the
//! theory curves and seed 001's table measured.

use phishbloom_filter::math::{self, BLOCK_BITS};
use phishbloom_filter::LayoutKind;
use phishbloom_lab::measure::sweeps::{SweepPoint, MEASURED_K, RATIOS};
use phishbloom_lab::theory;

use super::{agreement_text, find, measured_series, outliers, placed, point_cells, POINT_COLUMNS};
use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};
use crate::plot::{curve, Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use phishbloom_core::fmt;

/// k drawn for the theory curves: far enough to show the minimum at m/n = 30 (k* ≈ 20.8).
const THEORY_K: std::ops::RangeInclusive<u32> = 1..=26;
/// Seed 001's printed table: m/n → rates at k = 5, 6, 7, 8.
const SEED_001: [(u64, [f64; 4]); 3] = [
    (10, [0.00943, 0.00844, 0.00819, 0.00846]),
    (20, [0.00053, 0.000303, 0.000196, 0.00014]),
    (30, [8.53e-05, 3.55e-05, 1.69e-05, 9.01e-06]),
];

/// The theory of one m/n ratio of section 3: both layouts' rates at every k of [`THEORY_K`]
/// and their best integer k.
struct RatioTheory {
    /// Bits per key.
    ratio: u64,
    /// (k, rate) of the classic layout.
    classic: Vec<(u32, f64)>,
    /// (k, rate) of the blocked layout, with m rounded up to whole blocks as the filters were.
    blocked: Vec<(u32, f64)>,
    /// The classic layout's best (k, rate).
    classic_best: (u32, f64),
    /// The blocked layout's best (k, rate).
    blocked_best: (u32, f64),
}

impl RatioTheory {
    /// The theory at `ratio` bits per key for `n` keys.
    fn new(ratio: u64, n: u64) -> Self {
        let m = ratio * n;
        let blocked_m = m.div_ceil(BLOCK_BITS) * BLOCK_BITS;
        let classic: Vec<(u32, f64)> = THEORY_K
            .map(|k| (k, math::classic_fpp(m, n as f64, k)))
            .collect();
        let blocked = THEORY_K
            .map(|k| (k, math::blocked_fpp(blocked_m, n as f64, k, BLOCK_BITS)))
            .collect();
        let classic_best =
            classic
                .iter()
                .copied()
                .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        RatioTheory {
            ratio,
            classic,
            blocked,
            classic_best,
            blocked_best: math::best_blocked_hashes(blocked_m, n as f64),
        }
    }
}

/// Section 3: rate against k, from [`phishbloom_lab::measure::sweeps::rate_vs_k`]'s points.
pub fn rate_vs_k(ctx: &mut Context, measured: &[SweepPoint]) -> Result<String> {
    let n = ctx.settings.sizes.sweep_keys;
    let mut table = Table::new(&[&["bits_per_key"][..], &POINT_COLUMNS[..]].concat());
    for p in measured {
        table.push(point_cells(vec![p.bits_per_key.to_string()], p));
    }
    let csv = ctx.write_csv("rate_vs_k.csv", &table)?;
    let theories: Vec<RatioTheory> = RATIOS.into_iter().map(|r| RatioTheory::new(r, n)).collect();
    let theory_csv = ctx.write_csv("rate_vs_k_theory.csv", &k_theory_table(&theories))?;
    let panels: Vec<Panel> = theories.iter().map(|t| k_panel(t, measured)).collect();
    let svg = ctx.write_svg(
        "fig-rate-vs-k.svg",
        &format!(
            "False-positive rate vs k (n = {} keys; measured k = 1…12, theory to k = 26)",
            fmt::count(n)
        ),
        &panels,
        (1650, 580),
    )?;
    let (seed_table, seed_rows) = seed_001_table(measured);
    let seed_csv = ctx.write_csv("seed001_table.csv", &seed_table)?;

    let points: Vec<&SweepPoint> = measured.iter().collect();
    let fns: u64 = points.iter().map(|p| p.false_negatives).sum();
    let far = outliers(&points);
    let total_queries: u64 = points.iter().map(|p| p.measured.queries).sum();
    ctx.headlines.push(format!(
        "rate vs k: {} filters, {} queries, {} beyond 3 σ of theory, {} false negatives",
        points.len(),
        fmt::count(total_queries),
        far.len(),
        fns
    ));

    let sizes = &ctx.settings.sizes;
    let mut md = String::from("## 3. Rate vs k\n\n");
    md.push_str(&format!(
        "n = {} member keys (`kw-<hex>`), m = (m/n)·n bits, k = 1…12, for both layouts; each \
         point queries fresh non-members (`nq-<hex>`, never inserted) until about {} false \
         positives are expected ({}–{} queries per point, {} in all). Every member was \
         re-queried: **{} false negatives**.\n\n",
        fmt::count(n),
        sizes.sweep_target_false_positives,
        fmt::count(sizes.sweep_min_queries),
        fmt::count(sizes.sweep_max_queries),
        fmt::count(total_queries),
        fns
    ));
    md.push_str(&figure(
        &svg,
        "False-positive rate against k at m/n = 10, 20 and 30",
        &csv,
    ));
    md.push_str(&format!(
        "\n*Theory curves: [{theory_csv}]({theory_csv}).*\n\n"
    ));
    md.push_str(&optimum_text(&theories, measured));
    md.push_str(&seed_001_text(&seed_rows, &seed_csv));
    let min_fp = points
        .iter()
        .map(|p| p.measured.false_positives)
        .min()
        .unwrap_or(0);
    if min_fp < 100 {
        md.push_str(&format!(
            "The smallest measured count is {min_fp} false positives: points with fewer than \
             ~100 have wide intervals (their relative error is about 1/√count), as the error bars \
             show.\n\n"
        ));
    }
    md.push_str(&agreement_text(&far, points.len()));
    Ok(md)
}

/// The theory curves of section 3 as a CSV table (`rate_vs_k_theory.csv`).
fn k_theory_table(theories: &[RatioTheory]) -> Table {
    let mut table = Table::new(&[
        "bits_per_key",
        "k",
        "classic_exact",
        "blocked_exact",
        "asymptotic_formula",
    ]);
    for t in theories {
        for ((k, c), (_, b)) in t.classic.iter().zip(&t.blocked) {
            table.push(vec![
                t.ratio.to_string(),
                k.to_string(),
                num(*c),
                num(*b),
                num(theory::asymptotic_fpp(t.ratio as f64, *k)),
            ]);
        }
    }
    table
}

/// One panel of section 3's figure: rate against k at one m/n, theory and measured.
fn k_panel(t: &RatioTheory, measured: &[SweepPoint]) -> Panel {
    let ratio = t.ratio;
    let mine = measured.iter().filter(|p| p.bits_per_key == ratio);
    // Classic a little left, blocked a little right, so the error bars stay apart.
    let pick = |layout| placed(mine.clone(), layout, 0.15, |p| f64::from(p.k));
    let line = |curve_k: &[(u32, f64)]| curve(curve_k.iter().map(|&(k, r)| (f64::from(k), r)));
    let ((classic_k, classic_rate), (blocked_k, blocked_rate)) = (t.classic_best, t.blocked_best);
    let low = classic_rate.min(blocked_rate) / 2.0;
    Panel {
        title: format!(
            "m/n = {ratio} bits per key (k* = {:.1})",
            theory::optimal_hashes_continuous(ratio as f64)
        ),
        x: Axis::linear(
            "k (hash functions per key)",
            0.0,
            f64::from(*THEORY_K.end()) + 1.0,
        ),
        y: Axis::log("false-positive rate", low, 1.0),
        series: vec![
            Series::new("classic theory", PALETTE[0], Style::Line, line(&t.classic)),
            Series::new(
                "blocked theory (exact)",
                PALETTE[1],
                Style::Dashed,
                line(&t.blocked),
            ),
            measured_series(
                "classic measured",
                0,
                Style::Circles,
                &pick(LayoutKind::Classic),
            ),
            measured_series(
                "blocked measured",
                1,
                Style::Triangles,
                &pick(LayoutKind::Blocked),
            ),
            Series::new(
                "theory optimum (integer k)",
                PALETTE[6],
                Style::Crosses,
                vec![
                    Point::at(f64::from(classic_k), classic_rate),
                    Point::at(f64::from(blocked_k), blocked_rate),
                ],
            ),
        ],
        legend: LegendAt::UpperRight,
    }
}

/// Why the rate has a minimum in k, where the optima lie, and the table of optima.
fn optimum_text(theories: &[RatioTheory], measured: &[SweepPoint]) -> String {
    let mut md = String::from(
        "**Convexity and the optimum.** For fixed m/n the rate first falls with k (each extra \
         bit is another chance for a non-member to miss) and then rises (each key sets more bits, \
         so the array fills): (1 − e^{−k/r})^k is log-convex in k with its minimum at \
         k* = r·ln 2. ",
    );
    let notes: Vec<(u64, &str, u32)> = theories
        .iter()
        .flat_map(|t| {
            [
                (t.ratio, "classic", t.classic_best.0),
                (t.ratio, "blocked", t.blocked_best.0),
            ]
        })
        .collect();
    let described = |inside: bool| -> Vec<String> {
        notes
            .iter()
            .filter(|(_, _, k)| MEASURED_K.contains(k) == inside)
            .map(|(ratio, layout, k)| format!("{layout} at m/n = {ratio} (k = {k})"))
            .collect()
    };
    let (inside, outside) = (described(true), described(false));
    md.push_str(&format!(
        "The measured range k = 1…12 contains the theoretical optimum for {}, so there the \
         measured points show the turn itself; for {} the optimum lies beyond k = 12, where \
         the rates are so small that a measurement would need 10⁹ queries or more, and only the \
         theory curves (drawn to k = 26) show the minimum.\n\n",
        if inside.is_empty() {
            "no curve".to_string()
        } else {
            inside.join(", ")
        },
        if outside.is_empty() {
            "none".to_string()
        } else {
            outside.join(", ")
        },
    ));
    let optima = optima_rows(theories, measured);
    md.push_str(&markdown_table(
        &[
            "m/n",
            "k* = (m/n)·ln 2",
            "best integer k, classic theory (rate)",
            "best k, blocked theory (rate)",
            "lowest measured k, classic",
            "lowest measured k, blocked",
        ],
        &optima,
    ));
    md.push_str(
        "\nThe blocked optimum lies at a smaller k than the classic one: a block that received \
         more than its share of keys is denser, and more bits per key make that worse.\n\n",
    );
    md
}

/// One row per m/n: k*, both layouts' best integer k by theory, and the lowest measured k.
fn optima_rows(theories: &[RatioTheory], measured: &[SweepPoint]) -> Vec<Vec<String>> {
    theories
        .iter()
        .map(|t| {
            let measured_best = |layout| {
                measured
                    .iter()
                    .filter(|p| p.bits_per_key == t.ratio)
                    .filter(|p| p.layout == layout && p.measured.false_positives > 0)
                    .min_by(|a, b| a.measured.rate.total_cmp(&b.measured.rate))
                    .map(|p| p.k)
                    .unwrap_or(0)
            };
            let ((classic_k, classic_rate), (blocked_k, blocked_rate)) =
                (t.classic_best, t.blocked_best);
            vec![
                t.ratio.to_string(),
                fmt::real(theory::optimal_hashes_continuous(t.ratio as f64), 2),
                format!("{classic_k} ({})", fmt::rate(classic_rate)),
                format!("{blocked_k} ({})", fmt::rate(blocked_rate)),
                measured_best(LayoutKind::Classic).to_string(),
                measured_best(LayoutKind::Blocked).to_string(),
            ]
        })
        .collect()
}

/// Seed 001's printed table beside the measured rates: the CSV table (`seed001_table.csv`)
/// and the Markdown rows.
fn seed_001_table(measured: &[SweepPoint]) -> (Table, Vec<Vec<String>>) {
    let mut table = Table::new(&[
        "bits_per_key",
        "k",
        "seed_001_printed",
        "asymptotic_formula",
        "classic_exact_theory",
        "classic_measured",
        "classic_ci95_low",
        "classic_ci95_high",
        "classic_false_positives",
        "classic_queries",
        "blocked_measured",
        "blocked_theory",
        "blocked_false_positives",
        "blocked_queries",
    ]);
    let mut rows = Vec::new();
    for (ratio, printed) in SEED_001 {
        for (k, printed) in (5u32..=8).zip(printed) {
            let at = |layout| find(measured, ratio, Some(k), layout);
            let (Some(c), Some(b)) = (at(LayoutKind::Classic), at(LayoutKind::Blocked)) else {
                continue;
            };
            let (cm, bm) = (&c.measured, &b.measured);
            table.push(vec![
                ratio.to_string(),
                k.to_string(),
                num(printed),
                num(theory::asymptotic_fpp(ratio as f64, k)),
                num(cm.theoretical),
                num(cm.rate),
                num(cm.ci_low),
                num(cm.ci_high),
                cm.false_positives.to_string(),
                cm.queries.to_string(),
                num(bm.rate),
                num(bm.theoretical),
                bm.false_positives.to_string(),
                bm.queries.to_string(),
            ]);
            rows.push(vec![
                ratio.to_string(),
                k.to_string(),
                fmt::rate(printed),
                format!("**{}**", fmt::rate(cm.rate)),
                fmt::interval(cm.ci_low, cm.ci_high),
                format!(
                    "{} / {}",
                    fmt::count(cm.false_positives),
                    fmt::count(cm.queries)
                ),
                fmt::rate(bm.rate),
                fmt::rate(bm.theoretical),
            ]);
        }
    }
    (table, rows)
}

/// What seed 001's table is, and the table measured.
fn seed_001_text(rows: &[Vec<String>], seed_csv: &str) -> String {
    let mut md = String::from(
        "**Seed 001's table, measured.** Its values are the asymptotic formula \
         (1 − e^{−k/r})^k (printed to three digits); beside them the classic filter's measured rate \
         and its 95 % interval, and the blocked layout at the same m and k.\n\n",
    );
    md.push_str(&markdown_table(
        &[
            "m/n",
            "k",
            "seed 001 printed",
            "classic measured",
            "95 % interval",
            "FP / queries",
            "blocked measured",
            "blocked theory",
        ],
        rows,
    ));
    md.push_str(&format!("\n*Data: [{seed_csv}]({seed_csv}).*\n\n"));
    md
}
