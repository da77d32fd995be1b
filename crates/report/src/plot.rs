//! SVG figures drawn with plotters: panels of lines, markers and 95 % error bars on linear or
//! base-10 logarithmic axes, each with a title, labelled axes (with units) and a legend.
//!
//! Log axes are drawn by plotting `log10(value)` on a linear axis and labelling the whole decades
//! `10ⁿ`: one code path for every axis kind, and labels that need no font metrics. Text is
//! emitted as SVG `<text>` with the generic `sans-serif` family, so no font file is needed.

use std::path::Path;

use plotters::element::ErrorBar;
use plotters::prelude::*;
use plotters::series::DashedLineSeries;

use phishbloom_filter::LayoutKind;
use phishbloom_lab::stats::Measurement;

use crate::error::{Error, Result};

/// Colours of the report's series, colour-blind-safe (Okabe & Ito, "Color Universal Design",
/// 2008): blue, vermilion, bluish green, orange, reddish purple, sky blue, black.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(230, 159, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// One axis: its range in data units, whether it is logarithmic, and optional named ticks.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The label, with its unit.
    pub label: String,
    /// Lowest value shown (data units; > 0 on a log axis).
    pub min: f64,
    /// Highest value shown.
    pub max: f64,
    /// Base-10 logarithmic.
    pub log: bool,
    /// Category names at x = 0, 1, 2, … (replaces the numeric labels).
    pub categories: Vec<String>,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str, min: f64, max: f64) -> Self {
        Axis {
            label: label.to_string(),
            min,
            max,
            log: false,
            categories: Vec::new(),
        }
    }

    /// A base-10 log axis spanning whole decades around `min..max`.
    pub fn log(label: &str, min: f64, max: f64) -> Self {
        Axis {
            label: label.to_string(),
            min: 10f64.powf(min.log10().floor()),
            max: 10f64.powf(max.log10().ceil()),
            log: true,
            categories: Vec::new(),
        }
    }

    /// A base-10 log axis spanning exactly `min..max` (labels still only at whole decades),
    /// for data drawn slightly left and right of its true x.
    pub fn log_exact(label: &str, min: f64, max: f64) -> Self {
        Axis {
            label: label.to_string(),
            min,
            max,
            log: true,
            categories: Vec::new(),
        }
    }

    /// A categorical axis: one slot per name, at 0, 1, 2, ….
    pub fn categories(label: &str, names: &[&str]) -> Self {
        Axis {
            label: label.to_string(),
            min: -0.5,
            max: names.len() as f64 - 0.5,
            log: false,
            categories: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    /// A value in plotting coordinates (log10 on a log axis; non-positive values are `None`).
    fn map(&self, value: f64) -> Option<f64> {
        if self.log {
            (value > 0.0).then(|| value.log10())
        } else {
            Some(value)
        }
    }

    /// The plotted range.
    fn range(&self) -> std::ops::Range<f64> {
        if self.log {
            self.min.log10()..self.max.log10()
        } else {
            self.min..self.max
        }
    }

    /// How many labels to ask plotters for.
    fn label_count(&self) -> usize {
        if !self.categories.is_empty() {
            // Enough for plotters to put one label on each whole position.
            self.categories.len() * 2 + 1
        } else if self.log {
            (self.range().end - self.range().start).ceil() as usize + 1
        } else {
            10
        }
    }

    /// The label text at plotting coordinate `v`.
    fn format(&self, v: f64) -> String {
        let whole = (v - v.round()).abs() < 1e-6;
        if !self.categories.is_empty() {
            let index = v.round();
            return if whole && index >= 0.0 && (index as usize) < self.categories.len() {
                self.categories[index as usize].clone()
            } else {
                String::new()
            };
        }
        if self.log {
            return if whole {
                decade(v.round() as i32)
            } else {
                String::new()
            };
        }
        // Enough decimals to tell neighbouring ticks apart (about a tenth of the span each).
        let span = (self.max - self.min).abs().max(f64::MIN_POSITIVE);
        let decimals = (1.0 - (span / 10.0).log10().floor()).clamp(0.0, 12.0) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    }
}

/// `10ⁿ` with a Unicode superscript exponent.
pub fn decade(exponent: i32) -> String {
    const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut text = String::from("10");
    if exponent < 0 {
        text.push('⁻');
    }
    for digit in exponent.unsigned_abs().to_string().bytes() {
        text.push(SUPERSCRIPT[usize::from(digit - b'0')]);
    }
    text
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A solid line.
    Line,
    /// A dashed line.
    Dashed,
    /// Filled circles.
    Circles,
    /// Hollow triangles.
    Triangles,
    /// Filled squares.
    Squares,
    /// Crosses.
    Crosses,
}

/// A point; `low`/`high` draw a vertical error bar (a 95 % interval).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// x, in data units.
    pub x: f64,
    /// y, in data units.
    pub y: f64,
    /// Lower end of the interval.
    pub low: Option<f64>,
    /// Upper end of the interval.
    pub high: Option<f64>,
}

impl Point {
    /// A point without an interval.
    pub fn at(x: f64, y: f64) -> Self {
        Point {
            x,
            y,
            low: None,
            high: None,
        }
    }

    /// A point with a vertical interval.
    pub fn with_interval(x: f64, y: f64, low: f64, high: f64) -> Self {
        Point {
            x,
            y,
            low: Some(low),
            high: Some(high),
        }
    }

    /// A measured rate at `x` with its 95 % interval as the error bar.
    pub fn measured(x: f64, m: &Measurement) -> Self {
        Point::with_interval(x, m.rate, m.ci_low, m.ci_high)
    }
}

/// A curve of `(x, y)` pairs as points without intervals.
pub fn curve(pairs: impl IntoIterator<Item = (f64, f64)>) -> Vec<Point> {
    pairs.into_iter().map(|(x, y)| Point::at(x, y)).collect()
}

/// How far from its true x a layout's point is drawn, so that classic and blocked points
/// measured at the same x keep their error bars apart: classic `step` left, blocked `step`
/// right. Only the drawing moves; the CSV files hold the true values.
pub fn beside(layout: LayoutKind, step: f64) -> f64 {
    if layout == LayoutKind::Classic {
        -step
    } else {
        step
    }
}

/// A named series.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend text.
    pub name: String,
    /// Its colour.
    pub color: RGBColor,
    /// Line or marker.
    pub style: Style,
    /// The data.
    pub points: Vec<Point>,
}

impl Series {
    /// A series.
    pub fn new(name: &str, color: RGBColor, style: Style, points: Vec<Point>) -> Self {
        Series {
            name: name.to_string(),
            color,
            style,
            points,
        }
    }
}

/// Where a panel's legend goes.
pub use plotters::chart::SeriesLabelPosition as LegendAt;
/// A colour.
pub use plotters::style::RGBColor;

/// One chart.
#[derive(Clone, Debug)]
pub struct Panel {
    /// The caption above the chart.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The series, drawn in order (lines first is best).
    pub series: Vec<Series>,
    /// Legend position.
    pub legend: LegendAt,
}

/// Pixel sizes of the text, chosen so the figures read at GitHub's 100 % width.
const TITLE_PX: u32 = 24;
const CAPTION_PX: u32 = 19;
const AXIS_DESC_PX: u32 = 16;
const TICK_PX: u32 = 14;
const LEGEND_PX: u32 = 14;
/// Marker radius and error-bar cap width, in pixels.
const MARKER_PX: i32 = 4;
const CAP_PX: u32 = 6;

/// Draws `panels` side by side under `title` into an SVG of `width × height` pixels, and
/// returns the SVG text. `path` only labels errors.
pub fn render(
    path: &Path,
    title: &str,
    panels: &[Panel],
    (width, height): (u32, u32),
) -> Result<String> {
    let mut svg = String::new();
    {
        let fail = |e: &dyn std::fmt::Display| Error::Plot {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let root = root
            .titled(title, ("sans-serif", TITLE_PX))
            .map_err(|e| fail(&e))?;
        let areas = root.split_evenly((1, panels.len().max(1)));
        for (area, panel) in areas.iter().zip(panels) {
            draw_panel(area, panel).map_err(|e| fail(&e))?;
        }
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// Draws one panel.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", CAPTION_PX))
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(panel.x.range(), panel.y.range())?;
    let x_format = |v: &f64| panel.x.format(*v);
    let y_format = |v: &f64| panel.y.format(*v);
    chart
        .configure_mesh()
        .x_desc(panel.x.label.as_str())
        .y_desc(panel.y.label.as_str())
        .x_labels(panel.x.label_count())
        .y_labels(panel.y.label_count())
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .axis_desc_style(("sans-serif", AXIS_DESC_PX))
        .label_style(("sans-serif", TICK_PX))
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;

    for series in &panel.series {
        draw_series(&mut chart, panel, series)?;
    }
    chart
        .configure_series_labels()
        .position(panel.legend.clone())
        .label_font(("sans-serif", LEGEND_PX))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .draw()?;
    Ok(())
}

/// A panel's chart: plotters' Cartesian chart on linear plotting coordinates.
type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Draws one series (its error bars, then its line or markers) and its legend entry.
fn draw_series<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    panel: &Panel,
    series: &Series,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x_lo, x_hi) = (panel.x.range().start, panel.x.range().end);
    let (y_lo, y_hi) = (panel.y.range().start, panel.y.range().end);
    let inside = |x: f64, y: f64| (x_lo..=x_hi).contains(&x) && (y_lo..=y_hi).contains(&y);
    let color = series.color;
    // Points in plotting coordinates, dropping those a log axis cannot show (zero rates).
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter_map(|p| Some((panel.x.map(p.x)?, panel.y.map(p.y)?)))
        .filter(|&(x, y)| inside(x, y))
        .collect();
    for p in &series.points {
        if let (Some(low), Some(high), Some(x)) = (p.low, p.high, panel.x.map(p.x)) {
            let clamp = |v: f64| panel.y.map(v).unwrap_or(y_lo).clamp(y_lo, y_hi);
            let y = panel.y.map(p.y).unwrap_or(y_lo).clamp(y_lo, y_hi);
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                clamp(low),
                y,
                clamp(high),
                color.stroke_width(1),
                CAP_PX,
            )))?;
        }
    }
    let stroke = color.stroke_width(2);
    let drawn = match series.style {
        Style::Line => chart.draw_series(LineSeries::new(points, stroke))?,
        Style::Dashed => chart.draw_series(DashedLineSeries::new(points, 9, 6, stroke))?,
        Style::Circles => chart.draw_series(
            points
                .into_iter()
                .map(|c| Circle::new(c, MARKER_PX, color.filled())),
        )?,
        Style::Triangles => chart.draw_series(
            points
                .into_iter()
                .map(|c| TriangleMarker::new(c, MARKER_PX + 2, color.stroke_width(2))),
        )?,
        Style::Squares => chart.draw_series(points.into_iter().map(|c| {
            EmptyElement::at(c)
                + Rectangle::new(
                    [(-MARKER_PX, -MARKER_PX), (MARKER_PX, MARKER_PX)],
                    color.filled(),
                )
        }))?,
        Style::Crosses => chart.draw_series(
            points
                .into_iter()
                .map(|c| Cross::new(c, MARKER_PX + 1, color.stroke_width(2))),
        )?,
    };
    drawn.label(series.name.as_str());
    legend_sample(drawn, series.style, color);
    Ok(())
}

/// The legend's sample of a series: a short line or one marker, 20 pixels wide.
fn legend_sample<'a, DB: DrawingBackend + 'a>(
    drawn: &mut plotters::chart::SeriesAnno<'a, DB>,
    style: Style,
    color: RGBColor,
) {
    match style {
        Style::Line => drawn.legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
        }),
        Style::Dashed => drawn.legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (7, 0)], color.stroke_width(2))
                + PathElement::new(vec![(13, 0), (20, 0)], color.stroke_width(2))
        }),
        Style::Circles => {
            drawn.legend(move |(x, y)| Circle::new((x + 10, y), MARKER_PX, color.filled()))
        }
        Style::Triangles => drawn.legend(move |(x, y)| {
            TriangleMarker::new((x + 10, y), MARKER_PX + 2, color.stroke_width(2))
        }),
        Style::Squares => drawn.legend(move |(x, y)| {
            Rectangle::new(
                [
                    (x + 10 - MARKER_PX, y - MARKER_PX),
                    (x + 10 + MARKER_PX, y + MARKER_PX),
                ],
                color.filled(),
            )
        }),
        Style::Crosses => drawn
            .legend(move |(x, y)| Cross::new((x + 10, y), MARKER_PX + 1, color.stroke_width(2))),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_use_superscripts() {
        assert_eq!(decade(-5), "10⁻⁵");
        assert_eq!(decade(0), "10⁰");
        assert_eq!(decade(12), "10¹²");
    }

    #[test]
    fn log_axes_round_out_to_decades_and_label_only_them() {
        let axis = Axis::log("rate", 3e-6, 0.2);
        assert_eq!((axis.min, axis.max), (1e-6, 1.0));
        assert_eq!(axis.format(-3.0), "10⁻³");
        assert_eq!(axis.format(-2.5), "");
        assert_eq!(axis.map(0.0), None);
        let cats = Axis::categories("set", &["a", "b"]);
        assert_eq!(
            (cats.format(1.0), cats.format(0.5)),
            ("b".into(), String::new())
        );
        assert_eq!(Axis::linear("k", 0.0, 1.0).format(0.25), "0.25");
        // Ticks 0.0005 apart stay distinct.
        let rate = Axis::linear("rate", 0.007, 0.0125);
        assert_ne!(rate.format(0.0105), rate.format(0.011));
        assert_eq!(Axis::linear("k", 0.0, 26.0).format(20.0), "20");
    }

    #[test]
    fn renders_a_well_formed_svg_with_labels() {
        let panel = Panel {
            title: "t".into(),
            x: Axis::linear("k (hash functions)", 0.0, 10.0),
            y: Axis::log("false-positive rate", 1e-4, 1.0),
            series: vec![
                Series::new(
                    "theory",
                    PALETTE[0],
                    Style::Line,
                    vec![Point::at(1.0, 0.1), Point::at(9.0, 0.001)],
                ),
                Series::new(
                    "measured",
                    PALETTE[1],
                    Style::Circles,
                    vec![
                        Point::with_interval(5.0, 0.01, 0.008, 0.012),
                        Point::at(6.0, 0.0),
                    ],
                ),
            ],
            legend: LegendAt::UpperRight,
        };
        let svg = render(Path::new("t.svg"), "Title", &[panel], (600, 400)).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..50]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for text in [
            "k (hash functions)",
            "false-positive rate",
            "theory",
            "10⁻²",
        ] {
            assert!(svg.contains(text), "{text}");
        }
    }
}
