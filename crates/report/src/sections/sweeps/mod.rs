//! Sections 3 and 4: the false-positive rate against k at m/n = 10, 20, 30 (with seed 001's
//! table), and against bits per key from 4 to 24 beside the information-theoretic bound —
//! measured on both layouts, with the theory curves.
//!
//! Rendered here from [`phishbloom_lab::measure::sweeps`]'s results, which this module only
//! formats (CSV, Markdown, SVG): [`k`] section 3, [`bits`] section 4, and here what both
//! share.

mod bits;
mod k;

pub use bits::rate_vs_bits;
pub use k::rate_vs_k;

use phishbloom_filter::LayoutKind;
use phishbloom_lab::measure::sweeps::SweepPoint;
use phishbloom_lab::theory;

use crate::output::{measurement_cells, num};
use crate::plot::{beside, Point, Series, Style, PALETTE};
use phishbloom_core::fmt;

/// Columns of the measured-points CSV files.
pub(super) const POINT_COLUMNS: [&str; 14] = [
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
pub(super) fn point_cells(leading: Vec<String>, p: &SweepPoint) -> Vec<String> {
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
pub(super) fn outliers(points: &[&SweepPoint]) -> Vec<String> {
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
pub(super) fn measured_series(
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
            .map(|(x, p)| Point::measured(*x, &p.measured))
            .collect(),
    )
}

/// The points of `layout` among `points`, each at `x(point)` moved [`beside`] by `step`.
pub(super) fn placed<'a>(
    points: impl IntoIterator<Item = &'a SweepPoint>,
    layout: LayoutKind,
    step: f64,
    x: impl Fn(&SweepPoint) -> f64,
) -> Vec<(f64, &'a SweepPoint)> {
    points
        .into_iter()
        .filter(|p| p.layout == layout)
        .map(|p| (x(p) + beside(layout, step), p))
        .collect()
}

/// The measured point of `layout` at `bits` bits per key and (when given) `k`.
pub(super) fn find(
    measured: &[SweepPoint],
    bits: u64,
    k: Option<u32>,
    layout: LayoutKind,
) -> Option<&SweepPoint> {
    measured
        .iter()
        .find(|p| p.bits_per_key == bits && k.is_none_or(|k| p.k == k) && p.layout == layout)
}

/// The closing sentence on agreement with theory.
pub(super) fn agreement_text(far: &[String], total: usize) -> String {
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
