//! The "Lists that change" section's bits per key against p: every kind a list can be beside
//! its formula and the static binary fuse filters — the CSV, the figure and the table.

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{BitsPoint, RATES};
use phishbloom_lab::measure::contenders::Structure;
use phishbloom_lab::measure::Sizes;
use phishbloom_lab::theory;

use super::OURS;
use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};

/// The formula a structure's bits per key are compared with, as printed.
fn formula_text(structure: Structure) -> &'static str {
    match structure {
        Structure::Classic | Structure::Blocked | Structure::Fastbloom => "1.44·log₂(1/p)",
        Structure::Cuckoo | Structure::CuckoofilterCrate => "(log₂(1/p) + 3)/0.95",
        Structure::Counting => "4 × 1.44·log₂(1/p)",
        Structure::BinaryFuse8 => "1.125 × 8 (n ≥ 10⁶)",
        Structure::BinaryFuse16 => "1.125 × 16 (n ≥ 10⁶)",
    }
}

/// `bits · rate` for a table cell.
fn bits_cell(point: &BitsPoint) -> String {
    let m = &point.measured;
    format!(
        "{} · {}{}",
        fmt::real(point.bits_per_key, 2),
        fmt::rate(m.rate),
        if m.false_positives < 10 {
            format!(" ({} FP)", m.false_positives)
        } else {
            String::new()
        }
    )
}

/// Writes the CSV and the figure of bits per key against p; returns the Markdown.
pub(super) fn render(ctx: &mut Context, bits: &[BitsPoint]) -> Result<String> {
    let csv = ctx.write_csv("changes_bits.csv", &bits_csv(bits))?;
    let svg = ctx.write_svg(
        "fig-changes-bits.svg",
        "Bits per key against p: the kinds a list can be, and the static binary fuse filters",
        &plot(bits),
        (1500, 640),
    )?;
    let mut md = intro(bits[0].n, &ctx.settings.sizes);
    md.push_str(&markdown_table(
        &[
            "p",
            "Bloom formula",
            "classic",
            "blocked",
            "cuckoo formula",
            "cuckoo",
            "counting formula",
            "counting",
        ],
        &bits_rows(bits),
    ));
    md.push_str(&static_text(bits, &csv));
    md.push_str(&figure(
        &svg,
        "Bits per key and measured false-positive rate against p",
        &csv,
    ));
    md.push('\n');
    Ok(md)
}

/// Every measured structure and p as a CSV table (`changes_bits.csv`).
fn bits_csv(bits: &[BitsPoint]) -> Table {
    let mut table = Table::new(&[
        "structure",
        "p",
        "n",
        "bytes",
        "bits_per_key",
        "formula",
        "formula_bits_per_key",
        "cuckoo_load",
        "false_negatives",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "predicted_rate",
    ]);
    for point in bits {
        let m = &point.measured;
        table.push(
            [
                vec![
                    point.structure.name().to_string(),
                    num(point.p),
                    point.n.to_string(),
                    point.bytes.to_string(),
                    num(point.bits_per_key),
                    formula_text(point.structure).to_string(),
                    num(point.formula_bits_per_key),
                    point.load.map(num).unwrap_or_default(),
                    point.false_negatives.to_string(),
                ],
                measurement_cells(m),
            ]
            .concat(),
        );
    }
    table
}

/// The Markdown rows: one per p, each own structure beside its formula.
fn bits_rows(bits: &[BitsPoint]) -> Vec<Vec<String>> {
    let find =
        |structure: Structure, p: f64| bits.iter().find(|b| b.structure == structure && b.p == p);
    let mut rows = Vec::new();
    for &p in &RATES {
        let mut row = vec![
            format!("10^{}", p.log10().round()),
            fmt::real(theory::bloom_bits_per_key(p), 2),
        ];
        for structure in OURS {
            let cell = find(structure, p).map_or("—".to_string(), bits_cell);
            match structure {
                Structure::Cuckoo => {
                    row.push(fmt::real(
                        theory::cuckoo_bits_per_key_continuous(p, 0.95),
                        2,
                    ));
                    row.push(cell);
                }
                Structure::Counting => {
                    row.push(fmt::real(
                        phishbloom_filter::counting::counting_bits_per_key(p),
                        2,
                    ));
                    row.push(cell);
                }
                _ => row.push(cell),
            }
        }
        rows.push(row);
    }
    rows
}

/// The figure: bits per key against p, and the measured rate against p.
fn plot(bits: &[BitsPoint]) -> [Panel; 2] {
    let p_min = RATES.iter().copied().fold(f64::INFINITY, f64::min);
    let p_max = RATES.iter().copied().fold(0.0, f64::max);
    let (space, rates) = bits_series(bits, p_min, p_max);
    let max_bits = bits
        .iter()
        .map(|b| b.bits_per_key)
        .fold(0.0, f64::max)
        .max(10.0);
    let x = Axis::log_exact("p (target false-positive rate)", p_min * 0.5, p_max * 2.0);
    [
        Panel {
            title: format!("space at n = {}", fmt::count(bits[0].n)),
            x: x.clone(),
            y: Axis::linear("bits per key", 0.0, (max_bits / 10.0).ceil() * 10.0),
            series: space,
            legend: LegendAt::UpperRight,
        },
        Panel {
            title: "measured false-positive rate (95 % intervals)".to_string(),
            x,
            y: Axis::log("false-positive rate", p_min * 0.1, 1.0),
            series: rates,
            legend: LegendAt::UpperLeft,
        },
    ]
}

/// The series of the two panels: (bits per key, measured rate), formulas and measurements.
fn bits_series(bits: &[BitsPoint], p_min: f64, p_max: f64) -> (Vec<Series>, Vec<Series>) {
    let (mut space, mut rates) = formula_series(p_min, p_max);
    let styles = [
        Style::Circles,
        Style::Triangles,
        Style::Squares,
        Style::Crosses,
    ];
    let colors = [0, 1, 2, 3];
    for (i, structure) in OURS.into_iter().enumerate() {
        let points: Vec<&BitsPoint> = bits.iter().filter(|b| b.structure == structure).collect();
        space.push(Series::new(
            &format!("{structure}, measured"),
            PALETTE[colors[i]],
            styles[i],
            points
                .iter()
                .map(|b| Point::at(b.p, b.bits_per_key))
                .collect(),
        ));
        // Classic a little left of p, blocked a little right, so the bars do not overlap.
        let shift = [0.8, 1.25, 0.9, 1.1][i];
        rates.push(Series::new(
            &format!("{structure}"),
            PALETTE[colors[i]],
            styles[i],
            points
                .iter()
                .map(|b| Point::measured(b.p * shift, &b.measured))
                .collect(),
        ));
    }
    for (structure, color) in [(Structure::BinaryFuse8, 4), (Structure::BinaryFuse16, 5)] {
        if let Some(b) = bits.iter().find(|b| b.structure == structure) {
            let name = format!("{structure} (static)");
            let point = Point::at(b.p, b.bits_per_key);
            space.push(Series::new(
                &name,
                PALETTE[color],
                Style::Squares,
                vec![point],
            ));
            let point = Point::measured(b.p, &b.measured);
            rates.push(Series::new(
                &name,
                PALETTE[color],
                Style::Squares,
                vec![point],
            ));
        }
    }
    (space, rates)
}

/// The formula curves of the space panel and the diagonal of the rate panel.
fn formula_series(p_min: f64, p_max: f64) -> (Vec<Series>, Vec<Series>) {
    let curve = |f: &dyn Fn(f64) -> f64| -> Vec<Point> {
        (0..=50)
            .map(|i| {
                let p = p_min * (p_max / p_min).powf(f64::from(i) / 50.0);
                Point::at(p, f(p))
            })
            .collect()
    };
    let space = vec![
        Series::new(
            "bound log₂(1/p)",
            PALETTE[6],
            Style::Dashed,
            curve(&phishbloom_filter::math::information_bound_bits_per_key),
        ),
        Series::new(
            "Bloom 1.44·log₂(1/p)",
            PALETTE[0],
            Style::Line,
            curve(&theory::bloom_bits_per_key),
        ),
        Series::new(
            "cuckoo (log₂(1/p)+3)/0.95",
            PALETTE[2],
            Style::Line,
            curve(&|p| theory::cuckoo_bits_per_key_continuous(p, 0.95)),
        ),
        Series::new(
            "counting 4 × Bloom",
            PALETTE[3],
            Style::Line,
            curve(&phishbloom_filter::counting::counting_bits_per_key),
        ),
    ];
    let rates = vec![Series::new(
        "measured = target",
        PALETTE[6],
        Style::Dashed,
        vec![Point::at(p_min, p_min), Point::at(p_max, p_max)],
    )];
    (space, rates)
}

/// How the structures were built and measured, and the formulas they are compared with.
fn intro(n: u64, sizes: &Sizes) -> String {
    format!(
        "### Bits per key against p\n\n\
         Each structure of each kind was built for n = {} synthetic keys (`kw-<hex>`) at every p, \
         and its bytes (bits, cuckoo slots, 4-bit counters, binary fuse fingerprints) × 8 / n are \
         the measured bits per key. Each was then queried with every member (no false negative \
         anywhere: see the CSV) and with fresh non-members (`nq-<hex>`, a new block per point) — \
         enough for about {} false positives, between {} and {} queries. Each cell: bits per key \
         · measured rate (the false-positive count when under 10). Formulas: a classic Bloom \
         filter needs 1.44·log₂(1/p) bits per key (Broder & Mitzenmacher 2004; `math::\
         optimal_num_bits`), the blocked layout more (its exact per-block sizing, section 4); a \
         cuckoo filter (log₂(1/p) + 3)/α with α = 0.95 (Fan et al. 2014, §5.2; the built one \
         rounds the fingerprint up to whole bits, f = ⌈log₂(8/p)⌉); a counting filter 4× the \
         classic one (4-bit counters; Fan et al. 2000); a 3-wise binary fuse filter 1.125 × its \
         fingerprint bits from 10⁶ keys on (Graf & Lemire 2022, §4), with rate 2⁻ᶠ.\n\n",
        fmt::count(n),
        fmt::count(sizes.changes_target_false_positives as u64),
        fmt::count(sizes.changes_min_queries),
        fmt::count(sizes.changes_max_queries),
    )
}

/// The static binary fuse filters, and what the table shows.
fn static_text(bits: &[BitsPoint], csv: &str) -> String {
    let fuse: Vec<String> = [Structure::BinaryFuse8, Structure::BinaryFuse16]
        .into_iter()
        .filter_map(|s| bits.iter().find(|b| b.structure == s))
        .map(|b| {
            format!(
                "`{}`: {} bits per key (formula {}) at a measured rate of {} (2⁻ᶠ = {}, {} FP in \
                 {} queries)",
                b.structure,
                fmt::real(b.bits_per_key, 2),
                fmt::real(b.formula_bits_per_key, 2),
                fmt::rate(b.measured.rate),
                fmt::rate(b.measured.theoretical),
                fmt::count(b.measured.false_positives),
                fmt::count(b.measured.queries)
            )
        })
        .collect();
    format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         The static reference, built once from all n keys' xxh3-64 hashes and unable to add or \
         remove one: {}. A cuckoo filter's measured rate sits below p because its fingerprint \
         is rounded up to whole bits and its bound 2bα/2ᶠ is what it is sized by (the CSV's \
         `predicted_rate` column is that bound); it beats a Bloom filter on space from about \
         p = 10⁻³ down, as Fan et al. predict, and deletes; the counting filter pays 4× for \
         deleting.\n\n",
        fuse.join("; ")
    )
}
