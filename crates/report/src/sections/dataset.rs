//! Section 2, the dataset experiment of seeds 000/001: build from the phishing rows of
//! `dataset.csv`, then query every phishing key (false negatives), every benign key and random
//! `http://xxxxxxxxxx.com` URLs (false positives), for both layouts.
//!
//! Rendered here from [`phishbloom_lab::measure::dataset`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_blocklist::eval::EvalReport;
use phishbloom_lab::measure::dataset::DatasetResult;
use phishbloom_lab::stats::Measurement;

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use phishbloom_core::fmt;

/// Writes the section from [`phishbloom_lab::measure::dataset::run`]'s results.
pub fn render(ctx: &mut Context, result: &DatasetResult) -> Result<String> {
    let reports: Vec<&EvalReport> = result.runs.iter().map(|r| &r.report).collect();
    let (table, rows) = dataset_table(result);
    let csv = ctx.write_csv("dataset.csv", &table)?;
    let svg = ctx.write_svg(
        "fig-dataset.svg",
        "Dataset experiment: measured false-positive rate vs theory",
        &[plot(&reports)],
        (900, 520),
    )?;
    let classic = &reports[0];
    ctx.headlines.push(format!(
        "dataset: n = {}, m = {}, k = {}; {} false negatives; benign rate {} {}, random rate {} {} (theory {})",
        fmt::count(classic.n),
        fmt::count(classic.m),
        classic.k,
        classic.false_negatives,
        fmt::rate(classic.benign.rate),
        fmt::interval(classic.benign.ci_low, classic.benign.ci_high),
        fmt::rate(classic.random.rate),
        fmt::interval(classic.random.ci_low, classic.random.ci_high),
        fmt::rate(classic.random.theoretical),
    ));
    let mut md = String::from("## 2. The dataset experiment\n\n");
    md.push_str(&intro(result, classic));
    md.push_str(&markdown_table(
        &[
            "layout",
            "m / k",
            "false negatives",
            "non-members",
            "FP / queries",
            "rate",
            "95 % interval",
            "theory",
            "this filter's rate given its bits",
            "theory in interval?",
        ],
        &rows,
    ));
    md.push('\n');
    md.push_str(&figure(
        &svg,
        "Measured false-positive rates with 95 % intervals against theory",
        &csv,
    ));
    md.push_str(&findings(&reports));
    Ok(md)
}

/// Every layout and query set as a CSV table (`dataset.csv`) and as Markdown rows.
fn dataset_table(result: &DatasetResult) -> (Table, Vec<Vec<String>>) {
    let mut table = Table::new(&[
        "layout",
        "n",
        "m_bits",
        "k",
        "bytes",
        "phishing_queries",
        "false_negatives",
        "query_set",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "theory_rate",
        "filter_rate_given_bits",
    ]);
    let mut rows = Vec::new();
    for run in &result.runs {
        let (r, given) = (&run.report, run.filter_rate_given_bits);
        for (set, m) in [("benign", &r.benign), ("random", &r.random)] {
            table.push(
                [
                    vec![
                        r.layout.to_string(),
                        r.n.to_string(),
                        r.m.to_string(),
                        r.k.to_string(),
                        r.bytes.to_string(),
                        r.phishing_queries.to_string(),
                        r.false_negatives.to_string(),
                        set.to_string(),
                    ],
                    measurement_cells(m),
                    vec![num(given)],
                ]
                .concat(),
            );
            rows.push(vec![
                r.layout.to_string(),
                format!("{} / k = {}", fmt::count(r.m), r.k),
                format!(
                    "{} of {}",
                    fmt::count(r.false_negatives),
                    fmt::count(r.phishing_queries)
                ),
                if set == "benign" {
                    "benign URLs of the dataset".to_string()
                } else {
                    "random `http://` + 10 letters + `.com`".to_string()
                },
                format!(
                    "{} / {}",
                    fmt::count(m.false_positives),
                    fmt::count(m.queries)
                ),
                fmt::rate(m.rate),
                fmt::interval(m.ci_low, m.ci_high),
                fmt::rate(m.theoretical),
                fmt::rate(given),
                agreement(m),
            ]);
        }
    }
    (table, rows)
}

/// The figure: each layout's measured rates on both query sets beside its theory.
fn plot(reports: &[&EvalReport]) -> Panel {
    let mut series = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        // Classic left of each category, blocked right, so the intervals do not overlap.
        let shift = if i == 0 { -0.12 } else { 0.12 };
        let points = [&r.benign, &r.random]
            .iter()
            .enumerate()
            .map(|(slot, m)| Point::measured(slot as f64 + shift, m))
            .collect();
        let style = if i == 0 {
            Style::Circles
        } else {
            Style::Triangles
        };
        series.push(Series::new(
            &format!("{} measured, 95 % interval", r.layout),
            PALETTE[i],
            style,
            points,
        ));
        let theory = [-0.35, 1.35]
            .iter()
            .map(|&x| Point::at(x, r.benign.theoretical))
            .collect();
        let line = if i == 0 { Style::Line } else { Style::Dashed };
        series.push(Series::new(
            &format!("{} theory (m, k, n)", r.layout),
            PALETTE[i],
            line,
            theory,
        ));
    }
    let all: Vec<&Measurement> = reports
        .iter()
        .flat_map(|r| [&r.benign, &r.random])
        .collect();
    let low = all
        .iter()
        .map(|m| m.ci_low.min(m.theoretical))
        .fold(1.0, f64::min);
    let high = all
        .iter()
        .map(|m| m.ci_high.max(m.theoretical))
        .fold(0.0, f64::max);
    let pad = (high - low) * 0.15;
    Panel {
        title: format!(
            "n = {} phishing keys, target p = 1 %",
            fmt::count(reports[0].n)
        ),
        x: Axis::categories(
            "non-member query set",
            &[
                "benign URLs of dataset.csv",
                "random URLs (seed 000's test)",
            ],
        ),
        y: Axis::linear(
            "false-positive rate (fraction of queries)",
            (low - pad).max(0.0),
            high + pad * 2.5,
        ),
        series,
        legend: LegendAt::UpperRight,
    }
}

/// What seed 000's experiment does, and what the columns mean.
fn intro(result: &DatasetResult, classic: &EvalReport) -> String {
    format!(
        "Seed 000's experiment on the real data: insert the {} phishing keys of `dataset.csv` \
         (p = 1 %), query every one of them, every benign URL (benign rows whose key equals a \
         phishing key — {} of them — are not non-members and are left out) and {} random \
         URLs of seed 000's form (`http://` + 10 random letters + `.com`, fixed seed {}). \
         The interval is the 95 % Wilson score interval; \"theory\" is the rate for this m, k and \
         n ((1 − (1 − 1/m)^{{kn}})^k for classic, the exact per-block formula for blocked), the \
         average over all filters of this size; \"given its bits\" is the exact probability for \
         the one filter built here (the fraction of set bits to the k-th power, per block for \
         blocked), around which the measured count is binomial.\n\n",
        fmt::count(classic.n),
        fmt::count(classic.benign_overlapping_phishing),
        fmt::count(result.random_queries),
        classic.seed,
    )
}

/// What the measured rates show.
fn findings(reports: &[&EvalReport]) -> String {
    let classic = &reports[0];
    let fnr: u64 = reports.iter().map(|r| r.false_negatives).sum();
    format!(
        "\n- **False negatives: {}** — every phishing key is found, as a Bloom filter guarantees.\n\
         - Seed 000 queried 10,000 random URLs and saw \"≈ 70 ~ 100\" false positives. At 10⁴ \
         queries a 1 % rate has a binomial standard deviation of ≈ 10 counts, so its 70–100 is \
         that noise; with {} queries the interval above is {:.0}× narrower.\n\
         - The benign URLs are real, long and varied, the random ones short and uniform; the \
         rates agree, so the hash spreads both kinds of key alike.\n\n",
        fnr,
        fmt::count(classic.random.queries),
        (classic.random.queries as f64 / 10_000.0).sqrt(),
    )
}

/// "yes" if theory lies inside the 95 % interval, else how many σ away it is.
pub fn agreement(m: &Measurement) -> String {
    if m.agrees_with_theory() {
        "yes".to_string()
    } else {
        let sigma = phishbloom_lab::theory::binomial_sigma(m.theoretical, m.queries);
        format!("no ({:+.1} σ)", (m.rate - m.theoretical) / sigma)
    }
}
