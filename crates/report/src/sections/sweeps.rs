//! Sections 3 and 4: the false-positive rate against k at m/n = 10, 20, 30 (with seed 001's
//! table), and against bits per key from 4 to 24 beside the information-theoretic bound —
//! measured on both layouts, with the theory curves.
//!
//! Rendered here from [`phishbloom_lab::measure::sweeps`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_filter::math::{self, BLOCK_BITS};
use phishbloom_filter::LayoutKind;
use phishbloom_lab::measure::sweeps::{SweepPoint, BITS_PER_KEY, MEASURED_K, RATIOS};
use phishbloom_lab::theory;

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, RGBColor, Series, Style, PALETTE};
use phishbloom_core::fmt;

/// k drawn for the theory curves: far enough to show the minimum at m/n = 30 (k* ≈ 20.8).
const THEORY_K: std::ops::RangeInclusive<u32> = 1..=26;
/// Seed 001's printed table: m/n → rates at k = 5, 6, 7, 8.
const SEED_001: [(u64, [f64; 4]); 3] = [
    (10, [0.00943, 0.00844, 0.00819, 0.00846]),
    (20, [0.00053, 0.000303, 0.000196, 0.00014]),
    (30, [8.53e-05, 3.55e-05, 1.69e-05, 9.01e-06]),
];

/// Columns of the measured-points CSV files.
const POINT_COLUMNS: [&str; 14] = [
    "layout",
    "n",
    "m_bits",
    "k",
    "queries",
    "false_positives",
    "rate",
    "ci95_low",
    "ci95_high",
    "theory_rate",
    "z_score",
    "false_negatives",
    "filter_rate_given_bits",
    "z_given_bits",
];

/// A measured point as CSV cells (after `leading` cells).
fn point_cells(leading: Vec<String>, p: &SweepPoint) -> Vec<String> {
    let m = &p.measured;
    let sigma = theory::binomial_sigma(m.theoretical, m.queries);
    let mut cells = leading;
    cells.extend([
        p.layout.to_string(),
        p.n.to_string(),
        p.m.to_string(),
        p.k.to_string(),
    ]);
    cells.extend(measurement_cells(m));
    cells.extend([
        format!("{:.3}", (m.rate - m.theoretical) / sigma),
        p.false_negatives.to_string(),
        num(p.given_bits),
        format!(
            "{:.3}",
            (m.rate - p.given_bits) / theory::binomial_sigma(p.given_bits, m.queries)
        ),
    ]);
    cells
}

/// Points whose measurement is more than 3 σ from theory, described for the text.
fn outliers(points: &[&SweepPoint]) -> Vec<String> {
    points
        .iter()
        .filter_map(|p| {
            let m = &p.measured;
            let z = (m.rate - m.theoretical) / theory::binomial_sigma(m.theoretical, m.queries);
            (z.abs() > 3.0).then(|| {
                format!(
                    "{} m/n = {:.1}, k = {}: {} vs {} ({z:+.1} σ)",
                    p.layout,
                    p.m as f64 / p.n as f64,
                    p.k,
                    fmt::rate(m.rate),
                    fmt::rate(m.theoretical)
                )
            })
        })
        .collect()
}

/// A measured series with 95 % error bars.
fn measured_series(
    name: &str,
    color: usize,
    style: Style,
    points: &[(f64, &SweepPoint)],
) -> Series {
    Series::new(
        name,
        PALETTE[color],
        style,
        points
            .iter()
            .map(|(x, p)| {
                let m = &p.measured;
                Point::with_interval(*x, m.rate, m.ci_low, m.ci_high)
            })
            .collect(),
    )
}

/// Section 3: rate against k, from [`phishbloom_lab::measure::sweeps::rate_vs_k`]'s points.
pub fn rate_vs_k(ctx: &mut Context, measured: &[SweepPoint]) -> Result<String> {
    let n = ctx.settings.sizes.sweep_keys;
    let mut table = Table::new(&[&["bits_per_key"][..], &POINT_COLUMNS[..]].concat());
    for p in measured {
        table.push(point_cells(vec![p.bits_per_key.to_string()], p));
    }
    let csv = ctx.write_csv("rate_vs_k.csv", &table)?;

    // Theory curves, with the blocked m rounded as the measured filters were.
    let mut theory_table = Table::new(&[
        "bits_per_key",
        "k",
        "classic_exact",
        "blocked_exact",
        "asymptotic_formula",
    ]);
    let mut optima = Vec::new();
    let mut optimum_notes: Vec<(u64, &str, u32)> = Vec::new();
    let mut panels = Vec::new();
    for ratio in RATIOS {
        let m = ratio * n;
        let blocked_m = m.div_ceil(BLOCK_BITS) * BLOCK_BITS;
        let classic: Vec<(u32, f64)> = THEORY_K
            .map(|k| (k, math::classic_fpp(m, n as f64, k)))
            .collect();
        let blocked: Vec<(u32, f64)> = THEORY_K
            .map(|k| (k, math::blocked_fpp(blocked_m, n as f64, k, BLOCK_BITS)))
            .collect();
        for ((k, c), (_, b)) in classic.iter().zip(&blocked) {
            theory_table.push(vec![
                ratio.to_string(),
                k.to_string(),
                num(*c),
                num(*b),
                num(theory::asymptotic_fpp(ratio as f64, *k)),
            ]);
        }
        let best = |curve: &[(u32, f64)]| {
            curve
                .iter()
                .copied()
                .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a })
        };
        let (classic_k, classic_rate) = best(&classic);
        let (blocked_k, blocked_rate) = math::best_blocked_hashes(blocked_m, n as f64);
        optimum_notes.push((ratio, "classic", classic_k));
        optimum_notes.push((ratio, "blocked", blocked_k));
        let mine: Vec<&SweepPoint> = measured
            .iter()
            .filter(|p| p.bits_per_key == ratio)
            .collect();
        let measured_best = |layout| {
            mine.iter()
                .filter(|p| p.layout == layout && p.measured.false_positives > 0)
                .min_by(|a, b| a.measured.rate.total_cmp(&b.measured.rate))
                .map(|p| p.k)
                .unwrap_or(0)
        };
        optima.push(vec![
            ratio.to_string(),
            fmt::real(theory::optimal_hashes_continuous(ratio as f64), 2),
            format!("{classic_k} ({})", fmt::rate(classic_rate)),
            format!("{blocked_k} ({})", fmt::rate(blocked_rate)),
            measured_best(LayoutKind::Classic).to_string(),
            measured_best(LayoutKind::Blocked).to_string(),
        ]);
        let line = |curve: &[(u32, f64)]| {
            curve
                .iter()
                .map(|&(k, r)| Point::at(f64::from(k), r))
                .collect::<Vec<_>>()
        };
        let pick = |layout| {
            mine.iter()
                .filter(|p| p.layout == layout)
                // Classic a little left, blocked a little right, so the error bars stay apart.
                .map(|p| {
                    (
                        f64::from(p.k)
                            + if layout == LayoutKind::Classic {
                                -0.15
                            } else {
                                0.15
                            },
                        *p,
                    )
                })
                .collect::<Vec<_>>()
        };
        let low = classic_rate.min(blocked_rate) / 2.0;
        panels.push(Panel {
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
                Series::new("classic theory", PALETTE[0], Style::Line, line(&classic)),
                Series::new(
                    "blocked theory (exact)",
                    PALETTE[1],
                    Style::Dashed,
                    line(&blocked),
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
        });
    }
    let theory_csv = ctx.write_csv("rate_vs_k_theory.csv", &theory_table)?;
    let svg = ctx.write_svg(
        "fig-rate-vs-k.svg",
        &format!(
            "False-positive rate vs k (n = {} keys; measured k = 1…12, theory to k = 26)",
            fmt::count(n)
        ),
        &panels,
        (1650, 580),
    )?;

    // Seed 001's table, measured.
    let mut seed_table = Table::new(&[
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
    let mut seed_rows = Vec::new();
    for (ratio, printed) in SEED_001 {
        for (k, printed) in (5u32..=8).zip(printed) {
            let find = |layout| {
                measured
                    .iter()
                    .find(|p| p.bits_per_key == ratio && p.k == k && p.layout == layout)
            };
            let (Some(c), Some(b)) = (find(LayoutKind::Classic), find(LayoutKind::Blocked)) else {
                continue;
            };
            let (cm, bm) = (&c.measured, &b.measured);
            seed_table.push(vec![
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
            seed_rows.push(vec![
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
    let seed_csv = ctx.write_csv("seed001_table.csv", &seed_table)?;

    let points: Vec<&SweepPoint> = measured.iter().collect();
    let fns: u64 = points.iter().map(|p| p.false_negatives).sum();
    let far = outliers(&points);
    let min_fp = points
        .iter()
        .map(|p| p.measured.false_positives)
        .min()
        .unwrap_or(0);
    let total_queries: u64 = points.iter().map(|p| p.measured.queries).sum();
    ctx.headlines.push(format!(
        "rate vs k: {} filters, {} queries, {} beyond 3 σ of theory, {} false negatives",
        points.len(),
        fmt::count(total_queries),
        far.len(),
        fns
    ));

    let mut md = String::from("## 3. Rate vs k\n\n");
    md.push_str(&format!(
        "n = {} member keys (`kw-<hex>`), m = (m/n)·n bits, k = 1…12, for both layouts; each \
         point queries fresh non-members (`nq-<hex>`, never inserted) until about {} false \
         positives are expected ({}–{} queries per point, {} in all). Every member was \
         re-queried: **{} false negatives**.\n\n",
        fmt::count(n),
        ctx.settings.sizes.sweep_target_false_positives,
        fmt::count(ctx.settings.sizes.sweep_min_queries),
        fmt::count(ctx.settings.sizes.sweep_max_queries),
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
    md.push_str(
        "**Convexity and the optimum.** For fixed m/n the rate first falls with k (each extra \
         bit is another chance for a non-member to miss) and then rises (each key sets more bits, \
         so the array fills): (1 − e^{−k/r})^k is log-convex in k with its minimum at \
         k* = r·ln 2. ",
    );
    let inside: Vec<String> = optimum_notes
        .iter()
        .filter(|(_, _, k)| MEASURED_K.contains(k))
        .map(|(ratio, layout, k)| format!("{layout} at m/n = {ratio} (k = {k})"))
        .collect();
    let outside: Vec<String> = optimum_notes
        .iter()
        .filter(|(_, _, k)| !MEASURED_K.contains(k))
        .map(|(ratio, layout, k)| format!("{layout} at m/n = {ratio} (k = {k})"))
        .collect();
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
    md.push_str("**Seed 001's table, measured.** Its values are the asymptotic formula \
         (1 − e^{−k/r})^k (printed to three digits); beside them the classic filter's measured rate \
         and its 95 % interval, and the blocked layout at the same m and k.\n\n");
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
        &seed_rows,
    ));
    md.push_str(&format!("\n*Data: [{seed_csv}]({seed_csv}).*\n\n"));
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

/// The closing sentence on agreement with theory.
fn agreement_text(far: &[String], total: usize) -> String {
    if far.is_empty() {
        format!(
            "All {total} measured points lie within 3 σ (binomial, from the theoretical rate) of \
             their theory — classic against (1 − (1 − 1/m)^{{kn}})^k, blocked against the exact \
             per-block formula.\n\n"
        )
    } else {
        format!(
            "{} of {total} points lie beyond 3 σ of their theory (at 3 σ about {:.1} of {total} \
             are expected by chance): {}.\n\n",
            far.len(),
            total as f64 * 0.0027,
            far.join("; ")
        )
    }
}

/// Section 4: rate against bits per key, beside the information-theoretic bound, from
/// [`phishbloom_lab::measure::sweeps::rate_vs_bits`]'s points.
pub fn rate_vs_bits(ctx: &mut Context, measured: &[SweepPoint]) -> Result<String> {
    let n = ctx.settings.sizes.sweep_keys;
    let mut table = Table::new(
        &[
            &["bits_per_key"][..],
            &POINT_COLUMNS[..],
            &[
                "classic_formula_at_this_m_k",
                "bound_rate_2^-b",
                "bits_over_bound_measured",
                "space_vs_bound_measured",
            ][..],
        ]
        .concat(),
    );
    for p in measured {
        let m = &p.measured;
        let mut cells = point_cells(vec![p.bits_per_key.to_string()], p);
        let actual_bits = p.m as f64 / p.n as f64;
        let (over, ratio) = if m.false_positives > 0 {
            (
                num(theory::bits_over_bound(actual_bits, m.rate)),
                num(actual_bits / (1.0 / m.rate).log2()),
            )
        } else {
            ("".to_string(), "".to_string())
        };
        cells.extend([
            num(math::classic_fpp(p.m, n as f64, p.k)),
            num(0.5f64.powf(p.bits_per_key as f64)),
            over,
            ratio,
        ]);
        table.push(cells);
    }
    let csv = ctx.write_csv("rate_vs_bits.csv", &table)?;

    // Theory over a fine grid of bits per key (each layout at its best k).
    let grid: Vec<f64> = (0..=200)
        .map(|i| 4.0 + 20.0 * f64::from(i) / 200.0)
        .collect();
    let classic_theory: Vec<(f64, f64)> = grid
        .iter()
        .map(|&b| {
            let m = (b * n as f64).round() as u64;
            (
                b,
                math::classic_fpp(m, n as f64, math::optimal_num_hashes(n, m)),
            )
        })
        .collect();
    let blocked_theory: Vec<(f64, f64)> = BITS_PER_KEY
        .map(|b| {
            let m = (b * n).div_ceil(BLOCK_BITS) * BLOCK_BITS;
            (b as f64, math::best_blocked_hashes(m, n as f64).1)
        })
        .collect();
    let bound: Vec<(f64, f64)> = grid.iter().map(|&b| (b, 0.5f64.powf(b))).collect();
    let to_points = |curve: &[(f64, f64)]| {
        curve
            .iter()
            .map(|&(x, y)| Point::at(x, y))
            .collect::<Vec<_>>()
    };
    let pick = |layout| {
        measured
            .iter()
            .filter(|p| p.layout == layout)
            .map(|p| {
                (
                    p.bits_per_key as f64
                        + if layout == LayoutKind::Classic {
                            -0.12
                        } else {
                            0.12
                        },
                    p,
                )
            })
            .collect::<Vec<_>>()
    };
    let classic_points = pick(LayoutKind::Classic);
    let blocked_points = pick(LayoutKind::Blocked);
    let rate_panel = Panel {
        title: "rate at each layout's best k".to_string(),
        x: Axis::linear("bits per key (m/n)", 3.0, 25.0),
        y: Axis::log("false-positive rate", 0.5f64.powi(24), 0.5),
        series: vec![
            Series::new(
                "classic theory",
                PALETTE[0],
                Style::Line,
                to_points(&classic_theory),
            ),
            Series::new(
                "blocked theory (exact)",
                PALETTE[1],
                Style::Dashed,
                to_points(&blocked_theory),
            ),
            Series::new(
                "bound: 2^(−bits per key)",
                PALETTE[6],
                Style::Line,
                to_points(&bound),
            ),
            measured_series("classic measured", 0, Style::Circles, &classic_points),
            measured_series("blocked measured", 1, Style::Triangles, &blocked_points),
        ],
        legend: LegendAt::UpperRight,
    };
    // Space relative to the bound: b / log2(1/ε). Interval ends map the other way round.
    let relative = |points: &[(f64, &SweepPoint)]| -> Vec<Point> {
        points
            .iter()
            .filter(|(_, p)| p.measured.false_positives > 0)
            .map(|(x, p)| {
                let m = &p.measured;
                let bits = p.m as f64 / p.n as f64;
                let at = |rate: f64| bits / (1.0 / rate).log2();
                Point::with_interval(*x, at(m.rate), at(m.ci_low.max(1e-300)), at(m.ci_high))
            })
            .collect()
    };
    let relative_theory = |curve: &[(f64, f64)]| {
        curve
            .iter()
            .map(|&(b, r)| Point::at(b, b / (1.0 / r).log2()))
            .collect::<Vec<_>>()
    };
    let space_panel = Panel {
        title: "space relative to the bound".to_string(),
        x: Axis::linear("bits per key (m/n)", 3.0, 25.0),
        y: Axis::linear("bits per key ÷ log2(1/rate)  (the bound is 1)", 1.0, 2.0),
        series: vec![
            Series::new(
                "1/ln 2 = 1.44",
                RGBColor(150, 150, 150),
                Style::Dashed,
                vec![
                    Point::at(3.0, 1.0 / std::f64::consts::LN_2),
                    Point::at(25.0, 1.0 / std::f64::consts::LN_2),
                ],
            ),
            Series::new(
                "classic theory",
                PALETTE[0],
                Style::Line,
                relative_theory(&classic_theory),
            ),
            Series::new(
                "blocked theory (exact)",
                PALETTE[1],
                Style::Dashed,
                relative_theory(&blocked_theory),
            ),
            measured_series("classic measured", 0, Style::Circles, &[]),
            measured_series("blocked measured", 1, Style::Triangles, &[]),
        ],
        legend: LegendAt::UpperLeft,
    };
    let mut space_panel = space_panel;
    space_panel.series[3].points = relative(&classic_points);
    space_panel.series[4].points = relative(&blocked_points);
    let svg = ctx.write_svg(
        "fig-rate-vs-bits.svg",
        &format!(
            "False-positive rate vs bits per key (n = {} keys)",
            fmt::count(n)
        ),
        &[rate_panel, space_panel],
        (1500, 600),
    )?;

    let mut rows = Vec::new();
    for bits in [4u64, 8, 10, 12, 16, 20, 24] {
        let get = |layout| {
            measured
                .iter()
                .find(|p| p.bits_per_key == bits && p.layout == layout)
        };
        let (Some(c), Some(b)) = (get(LayoutKind::Classic), get(LayoutKind::Blocked)) else {
            continue;
        };
        let over = |p: &SweepPoint| {
            if p.measured.false_positives == 0 {
                "—".to_string()
            } else {
                fmt::real(
                    theory::bits_over_bound(p.m as f64 / p.n as f64, p.measured.rate),
                    2,
                )
            }
        };
        rows.push(vec![
            bits.to_string(),
            fmt::rate(0.5f64.powf(bits as f64)),
            format!("{} (k = {})", fmt::rate(c.measured.rate), c.k),
            fmt::rate(c.measured.theoretical),
            over(c),
            format!("{} (k = {})", fmt::rate(b.measured.rate), b.k),
            fmt::rate(b.measured.theoretical),
            fmt::rate(math::classic_fpp(b.m, n as f64, b.k)),
            over(b),
        ]);
    }
    let points: Vec<&SweepPoint> = measured.iter().collect();
    let far = outliers(&points);
    let fns: u64 = points.iter().map(|p| p.false_negatives).sum();
    let at = |bits: u64, layout| {
        measured
            .iter()
            .find(|p| p.bits_per_key == bits && p.layout == layout)
            .map(|p| p.measured.theoretical)
            .unwrap_or(f64::NAN)
    };
    let gap24 = at(24, LayoutKind::Blocked) / at(24, LayoutKind::Classic);
    let gap10 = at(10, LayoutKind::Blocked) / at(10, LayoutKind::Classic);
    ctx.headlines.push(format!(
        "rate vs bits/key: at 24 bits/key blocked/classic theory = {gap24:.1}×, at 10 = {gap10:.2}×; {} of {} points beyond 3 σ",
        far.len(),
        points.len()
    ));

    let mut md = String::from("## 4. Rate vs bits per key\n\n");
    md.push_str(&format!(
        "The same n = {} keys, m/n from 4 to 24, each layout at its own best k (classic: \
         round((m/n)·ln 2); blocked: the k that minimises the exact blocked rate). The \
         information-theoretic bound (Carter et al. 1978) says any structure answering \
         membership with false-positive rate ε needs at least log2(1/ε) bits per key, i.e. at b \
         bits per key the best possible rate is 2^{{−b}}. {} false negatives.\n\n",
        fmt::count(n),
        fns
    ));
    md.push_str(&figure(
        &svg,
        "False-positive rate against bits per key, with the information-theoretic bound",
        &csv,
    ));
    md.push('\n');
    md.push_str(&markdown_table(
        &[
            "bits/key",
            "bound 2^−b",
            "classic measured",
            "classic theory",
            "classic bits over bound",
            "blocked measured",
            "blocked theory (exact)",
            "classic formula at blocked's m, k",
            "blocked bits over bound",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\n- **Classic** stays a near-constant factor from the bound: at its optimum the rate is \
         2^{{−k}} with k = b·ln 2, so it spends b / log2(1/ε) = 1/ln 2 ≈ 1.44 times the minimum — \
         about 0.44 extra bits for every bit the bound needs.\n\
         - **Blocked** pays for one cache miss per query with space: keys fall into 512-bit blocks \
         as Poisson arrivals, so some blocks hold many more keys than average and answer \
         \"maybe\" far more often. At 10 bits per key its rate is {gap10:.2}× the classic one; at \
         24 bits per key it is {gap24:.1}× — the gap grows with bits per key because the rate of \
         an overfull block falls much more slowly than the average rate. The classic formula \
         (column \"classic formula at blocked's m, k\") badly underestimates it there; the \
         exact per-block formula (Putze, Sanders & Singler 2007, with the exact occupancy of a \
         block instead of (1 − (1 − 1/512)^{{ki}})^k, which alone is 1 % low at k = 6 and 10 % at \
         k = 20) is what the measured points follow. The blocked k is also capped in practice: \
         more bits per key in a 512-bit block make the block's own fill the limit, so the best \
         blocked k stays below the classic one.\n\n"
    ));
    md.push_str(&agreement_text(&far, points.len()));
    Ok(md)
}
