//! Section 6, the memory table of seed 004: Bloom filters for n = 10⁴…10⁸ at p = 10⁻⁴ and
//! 10⁻⁷ (computed, and built and measured where the sizes allow), beside an exact
//! `HashSet<String>` and seed 001's sorted table of 32-bit fingerprints.
//!
//! Two hash-set sizes appear, and each is labelled as what it is: the layout formula
//! (`phishbloom_core::plan::hashset_bytes`, for every n) and, for the sets that were built,
//! the heap bytes computed from the built set's real capacities
//! ([`phishbloom_lab::measure::memory::hashset_heap_bytes`]), with the resident-memory growth.
//!
//! Rendered here from [`phishbloom_lab::measure::memory`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_core::plan::hashset_bytes;
use phishbloom_filter::{data_len, LayoutKind};
use phishbloom_lab::measure::memory::{
    Memory, FINGERPRINT_BITS, MEMBER_CHECKS, PHONE_BYTES, RATES,
};
use phishbloom_lab::theory;

use phishbloom_lab::measure::memory::{ExactRow, FilterRow};
use phishbloom_lab::measure::Sizes;

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};
use phishbloom_core::fmt;

/// Seed 004's printed table: row label, hash set, p = 10⁻⁴, p = 10⁻⁷ (as printed, MB/G).
const SEED_004: [(&str, &str, &str, &str); 3] = [
    ("1万 (10⁴)", "18.28MB", "2.29MB", "4MB"),
    ("10万 (10⁵)", "182.82MB", "22.85MB", "40MB"),
    ("1十亿 (as printed)", "1.78G", "228.53MB", "400MB"),
];

/// Writes the section from [`phishbloom_lab::measure::memory::run`]'s results.
pub fn render(ctx: &mut Context, memory: &Memory) -> Result<String> {
    let sizes = ctx.settings.sizes.clone();
    let (filters, filter_rows) = filter_table(memory);
    let (exact, exact_rows) = exact_table(memory);
    let csv = ctx.write_csv("memory.csv", &filters)?;
    let exact_csv = ctx.write_csv("memory_exact.csv", &exact)?;
    let (seed, seed_rows) = seed_table(memory);
    let seed_csv = ctx.write_csv("seed004_table.csv", &seed)?;
    let svg = ctx.write_svg(
        "fig-memory.svg",
        "Memory of a blocklist of n phone numbers: Bloom filters vs exact structures (seed 004)",
        &plot(memory, &sizes),
        (1500, 620),
    )?;

    let mut md = filters_text(&sizes, &filter_rows, &csv);
    md.push_str(&exact_text(&sizes, &exact_rows, &exact_csv));
    md.push_str(&figure(
        &svg,
        "Bytes against n for Bloom filters, a hash set and a fingerprint table; measured rates",
        &csv,
    ));
    md.push_str(&seed_text(memory, &seed_rows, &seed_csv));
    ctx.headlines.push(format!(
        "memory: n = 10^8 at p = 1e-4: classic {}, hash set ≈ {} (layout formula)",
        memory
            .seed_004
            .iter()
            .find(|s| s.n == 100_000_000)
            .map_or("—".to_string(), |s| fmt::bytes(data_len(s.m_p4))),
        fmt::bytes(hashset_bytes(100_000_000, PHONE_BYTES))
    ));
    Ok(md)
}

/// The index of `p` in [`RATES`] (0 when it is not one of them).
fn rate_index(p: f64) -> usize {
    RATES.iter().position(|&r| r == p).unwrap_or(0)
}

/// The Bloom filters: the CSV table (`memory.csv`) and the Markdown rows, one per (n, p) with
/// the classic and the blocked filter side by side.
fn filter_table(memory: &Memory) -> (Table, Vec<Vec<String>>) {
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
    // The lab lists each (n, p) as a classic and then a blocked filter.
    for pair in memory.filters.chunks(2) {
        let (n, p) = (pair[0].n, pair[0].p);
        let mut cells = Vec::new();
        for f in pair {
            let (row, cell) = filter_cells(f);
            table.push(row);
            cells.push(cell);
        }
        rows.push(vec![
            fmt::power_of_ten(n),
            format!("10^{}", p.log10().round()),
            pair[0].k.to_string(),
            cells[0].clone(),
            pair.get(1).map_or(String::new(), |b| b.k.to_string()),
            cells.get(1).cloned().unwrap_or_default(),
        ]);
    }
    (table, rows)
}

/// One filter's CSV row and its Markdown cell (bytes · measured rate).
fn filter_cells(f: &FilterRow) -> (Vec<String>, String) {
    let mut row = vec![
        f.n.to_string(),
        num(f.p),
        f.layout.to_string(),
        f.m.to_string(),
        f.k.to_string(),
        f.bytes.to_string(),
    ];
    let cell = match &f.built {
        Some(b) => {
            let m = &b.measured;
            row.extend(["yes".to_string(), b.false_negatives.to_string()]);
            row.extend(measurement_cells(m));
            format!(
                "{} · {} ({})",
                fmt::bytes(f.bytes),
                fmt::rate(m.rate),
                if m.false_positives < 10 {
                    format!("{} FP", m.false_positives)
                } else {
                    fmt::interval(m.ci_low, m.ci_high)
                }
            )
        }
        None => {
            row.push("no".to_string());
            row.extend(std::iter::repeat_n(String::new(), 6));
            row.push(num(f.theory_rate));
            format!("{} · not built", fmt::bytes(f.bytes))
        }
    };
    (row, cell)
}

/// A row of `memory_exact.csv` for a structure that was not built: its computed bytes, what
/// they are, and its theoretical rate.
fn unbuilt_row(n: u64, structure: &str, bytes: u64, what: &str, theory: String) -> Vec<String> {
    let mut row = vec![
        n.to_string(),
        structure.to_string(),
        bytes.to_string(),
        String::new(),
        what.to_string(),
    ];
    row.extend(std::iter::repeat_n(String::new(), 5));
    row.push(theory);
    row
}

/// The exact structures, once per n: the CSV table (`memory_exact.csv`) and the Markdown rows.
fn exact_table(memory: &Memory) -> (Table, Vec<Vec<String>>) {
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
    let mut rows = Vec::new();
    for e in &memory.exact {
        let (hashset_row, hs_built, hs_check) = hashset_cells(e);
        exact.push(hashset_row);
        let (fingerprint_row, fp_text) = fingerprint_cells(e);
        exact.push(fingerprint_row);
        rows.push(vec![
            fmt::power_of_ten(e.n),
            fmt::bytes(e.hashset_formula_bytes),
            hs_built,
            hs_check,
            fmt::bytes(e.fingerprint_bytes),
            fp_text,
        ]);
    }
    (exact, rows)
}

/// The hash set's CSV row and its two Markdown cells (bytes built, the check).
fn hashset_cells(e: &ExactRow) -> (Vec<String>, String, String) {
    let n = e.n;
    let Some(run) = &e.hashset else {
        let what = "layout formula only (plan::hashset_bytes), not built";
        let row = unbuilt_row(
            n,
            "HashSet<String>",
            e.hashset_formula_bytes,
            what,
            "0".into(),
        );
        return (row, "not built".to_string(), "exact".to_string());
    };
    let row = vec![
        n.to_string(),
        "HashSet<String>".to_string(),
        e.hashset_formula_bytes.to_string(),
        run.heap_bytes.to_string(),
        format!(
            "heap bytes computed from the built set's real capacities (table and \
             every String, glibc rounding); resident-memory growth {} bytes",
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
    ];
    let built = format!(
        "{} (RSS +{})",
        fmt::bytes(run.heap_bytes),
        run.rss_growth.map(fmt::bytes).unwrap_or_else(|| "?".into())
    );
    let check = format!("{} FP / {}", run.false_positives, fmt::count(run.queries));
    (row, built, check)
}

/// The fingerprint table's CSV row and its Markdown cell (the measured rate).
fn fingerprint_cells(e: &ExactRow) -> (Vec<String>, String) {
    let structure = "sorted u32 fingerprints";
    let Some(run) = &e.fingerprints else {
        let theory = num(e.fingerprint_theory);
        let row = unbuilt_row(e.n, structure, e.fingerprint_bytes, "computed only", theory);
        let text = format!("not built (theory {})", fmt::rate(e.fingerprint_theory));
        return (row, text);
    };
    let m = &run.measured;
    let mut row = vec![
        e.n.to_string(),
        structure.to_string(),
        e.fingerprint_bytes.to_string(),
        run.bytes.to_string(),
        "Vec<u32> length × 4".to_string(),
    ];
    row.extend(measurement_cells(m));
    let text = format!(
        "{} ({} FP / {}; theory {})",
        fmt::rate(m.rate),
        fmt::count(m.false_positives),
        fmt::count(m.queries),
        fmt::rate(e.fingerprint_theory)
    );
    (row, text)
}

/// Seed 004's printed figures beside the computed ones: the CSV table (`seed004_table.csv`)
/// and the Markdown rows.
fn seed_table(memory: &Memory) -> (Table, Vec<Vec<String>>) {
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
    let mut rows = Vec::new();
    for ((label, hs, p4, p7), sized) in SEED_004.iter().zip(&memory.seed_004) {
        let (n, m4, m7) = (sized.n, sized.m_p4, sized.m_p7);
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
        rows.push(vec![
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
    (seed, rows)
}

/// The figure: bytes against n for every structure, and the measured rates against n.
fn plot(memory: &Memory, sizes: &Sizes) -> [Panel; 2] {
    let n_min = *sizes.memory_items.first().unwrap_or(&10_000) as f64;
    let n_max = *sizes.memory_items.last().unwrap_or(&100_000_000) as f64;
    [
        bytes_panel(memory, n_min, n_max),
        rate_panel(memory, n_min, n_max),
    ]
}

/// Bytes against n: the four filters, the hash set (formula and built) and the fingerprints.
fn bytes_panel(memory: &Memory, n_min: f64, n_max: f64) -> Panel {
    let mut curves: Vec<Vec<Point>> = vec![Vec::new(); 6];
    for f in &memory.filters {
        let curve = rate_index(f.p) * 2 + usize::from(f.layout == LayoutKind::Blocked);
        curves[curve].push(Point::at(f.n as f64, f.bytes as f64));
    }
    let mut hashset_built = Vec::new();
    for e in &memory.exact {
        let n = e.n as f64;
        curves[4].push(Point::at(n, e.hashset_formula_bytes as f64));
        if let Some(run) = &e.hashset {
            hashset_built.push(Point::at(n, run.heap_bytes as f64));
        }
        curves[5].push(Point::at(n, e.fingerprint_bytes as f64));
    }
    let names = [
        "classic, p = 10⁻⁴",
        "blocked, p = 10⁻⁴",
        "classic, p = 10⁻⁷",
        "blocked, p = 10⁻⁷",
        "HashSet<String> (layout formula)",
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
        "HashSet<String> (built: from its real capacities)",
        PALETTE[4],
        Style::Squares,
        hashset_built,
    ));
    let max_bytes = hashset_bytes(n_max as u64, PHONE_BYTES) as f64;
    Panel {
        title: "memory".to_string(),
        x: Axis::log("n (keys)", n_min, n_max),
        y: Axis::log("bytes", 1e4, max_bytes),
        series,
        legend: LegendAt::UpperLeft,
    }
}

/// The measured rates against n: the filters at p = 10⁻⁴ and the fingerprints, with theory.
fn rate_panel(memory: &Memory, n_min: f64, n_max: f64) -> Panel {
    let mut rate_curves: Vec<Vec<Point>> = vec![Vec::new(); 3];
    for f in &memory.filters {
        let Some(b) = &f.built else { continue };
        if rate_index(f.p) == 0 && b.measured.false_positives > 0 {
            let which = usize::from(f.layout == LayoutKind::Blocked);
            // Classic a little left of n, blocked a little right (log axis).
            let x = f.n as f64 * if which == 0 { 0.85 } else { 1.15 };
            rate_curves[which].push(Point::measured(x, &b.measured));
        }
    }
    for e in &memory.exact {
        if let Some(run) = e
            .fingerprints
            .as_ref()
            .filter(|r| r.measured.false_positives > 0)
        {
            rate_curves[2].push(Point::measured(e.n as f64, &run.measured));
        }
    }
    let fp_theory: Vec<Point> = (0..=40)
        .map(|i| {
            let n = n_min * (n_max / n_min).powf(f64::from(i) / 40.0);
            Point::at(n, theory::fingerprint_fpp(n as u64, FINGERPRINT_BITS))
        })
        .collect();
    let [classic, blocked, fingerprints] = <[Vec<Point>; 3]>::try_from(rate_curves)
        .unwrap_or_else(|_| unreachable!("three curves were made"));
    Panel {
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
            Series::new("classic, p = 10⁻⁴", PALETTE[0], Style::Circles, classic),
            Series::new("blocked, p = 10⁻⁴", PALETTE[1], Style::Triangles, blocked),
            Series::new(
                "32-bit fingerprints, measured",
                PALETTE[2],
                Style::Squares,
                fingerprints,
            ),
        ],
        legend: LegendAt::UpperLeft,
    }
}

/// The heading, how the filters were measured, and their table.
fn filters_text(sizes: &Sizes, rows: &[Vec<String>], csv: &str) -> String {
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
        rows,
    ));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    md
}

/// What the exact structures are and how they were measured, and their table.
fn exact_text(sizes: &Sizes, rows: &[Vec<String>], exact_csv: &str) -> String {
    let mut md = format!(
        "Exact structures for the same keys: a Rust `HashSet<String>` — for every n its bytes by \
         the layout formula (hashbrown's table layout and glibc's allocation sizes, \
         `plan::hashset_bytes`: computed, not measured); built up to n = {}, where its heap \
         bytes are computed from the built set's real capacities (the table's and every \
         string's, with glibc's rounding) and the growth of the process's resident memory is \
         shown beside them as an independent reading — that growth undercounts at small n, where \
         the allocator reuses memory freed by earlier sections — and seed 001's sorted table of 32-bit fingerprints \
         (4 bytes per key; its false-positive rate 1 − (1 − 2⁻³²)ⁿ grows with n, while a Bloom \
         filter's is fixed by its sizing).\n\n",
        fmt::power_of_ten(sizes.hashset_build_max)
    );
    md.push_str(&markdown_table(
        &[
            "n",
            "HashSet (layout formula)",
            "HashSet built: from real capacities (RSS growth)",
            "HashSet check",
            "fingerprints bytes",
            "fingerprint rate measured",
        ],
        rows,
    ));
    md.push_str(&format!("\n*Data: [{exact_csv}]({exact_csv}).*\n\n"));
    md
}

/// What seed 004's printed numbers are, their table, and how far the p = 10⁻⁷ rows go.
fn seed_text(memory: &Memory, rows: &[Vec<String>], seed_csv: &str) -> String {
    let mut md = format!(
        "\n**Seed 004's printed numbers** do not belong to its row labels. Its p = 10⁻⁴ and \
         p = 10⁻⁷ columns are the classic sizes for n = 10⁶, 10⁷ and 10⁸ (not 10⁴, 10⁵ and \
         10⁹), in MiB; and its \"HashSet\" column equals the p = 10⁻⁴ filter's bit count read as \
         bytes (m/2²⁰), i.e. 8× the filter — not a hash-set size (by the layout formula a \
         `HashSet<String>` of 10⁶ phone numbers takes about {}{}).\n\n",
        fmt::bytes(hashset_bytes(1_000_000, PHONE_BYTES)),
        memory
            .exact
            .iter()
            .find(|e| e.n == 1_000_000)
            .and_then(|e| e.hashset.as_ref())
            .map_or(String::new(), |run| format!(
                "; the one built here takes {} by its real capacities",
                fmt::bytes(run.heap_bytes)
            )),
    );
    md.push_str(&markdown_table(
        &[
            "seed row",
            "printed: HashSet · 10⁻⁴ · 10⁻⁷",
            "n they match",
            "computed classic 10⁻⁴ · 10⁻⁷",
            "m(10⁻⁴) as Mi bytes",
        ],
        rows,
    ));
    md.push_str(&format!("\n*Data: [{seed_csv}]({seed_csv}).*\n\n"));
    md.push_str(
        "At p = 10⁻⁷ even 10⁷ queries expect only about one false positive, so those rows show \
         that the rate is tiny, not how tiny; the p = 10⁻⁴ rows are measured to a few percent.\n\n",
    );
    md
}
