//! Section 1, sizing: the formulas in brief and the dataset's n, m, k and bytes for both
//! layouts, beside seed 000's and seed 002's printed figures.
//!
//! Rendered here from [`phishbloom_lab::measure::sizing`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_filter::LayoutKind;
use phishbloom_lab::measure::sizing::{Case, SizedFilter, SEED_000_N, SEED_002_N, TARGET};
use phishbloom_lab::theory;

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};
use phishbloom_core::fmt;

/// Seed 000's printed m for its n = 88,647 phishing URLs ("≈ 106 KB").
const SEED_000_M: u64 = 849_587;
/// Seed 002's printed m for n = 10⁸ at p = 0.01 ("≈ 958,505,832 (约958MB)") and rate (0.0103).
const SEED_002_M: u64 = 958_505_832;
const SEED_002_RATE: f64 = 0.0103;

/// The label of a case, as the CSV and the table print it.
fn case_label(case: Case) -> &'static str {
    match case {
        Case::Dataset => "dataset.csv phishing rows",
        Case::Seed000 => "seed 000's n",
        Case::Seed002 => "seed 002's n",
    }
}

/// What the seed printed for a case's classic filter ("—" where it printed nothing).
fn printed(s: &SizedFilter) -> String {
    match (s.case, s.layout) {
        (Case::Seed000, LayoutKind::Classic) => {
            format!("m ≈ {}, k ≈ 7, ≈ 106 KB", fmt::count(SEED_000_M))
        }
        (Case::Seed002, LayoutKind::Classic) => format!(
            "m ≈ {}, k = 7, rate ≈ {SEED_002_RATE} (\"约958MB\")",
            fmt::count(SEED_002_M)
        ),
        _ => "—".to_string(),
    }
}

/// Writes the section from the sized filters of [`phishbloom_lab::measure::sizing::run`]
/// (dataset, seed 000, seed 002; classic then blocked for each).
pub fn render(ctx: &mut Context, sized: &[SizedFilter]) -> Result<String> {
    let (table, rows) = sizing_table(sized);
    let csv = ctx.write_csv("sizing.csv", &table)?;
    let mut md = formulas();
    md.push_str(&markdown_table(
        &[
            "case",
            "n",
            "layout",
            "m (bits)",
            "k",
            "bytes",
            "bits/key",
            "theory rate",
            "seed printed",
        ],
        &rows,
    ));
    md.push_str(&findings(sized, &csv));
    Ok(md)
}

/// Every sized filter as a CSV table (`sizing.csv`) and as Markdown rows.
fn sizing_table(sized: &[SizedFilter]) -> (Table, Vec<Vec<String>>) {
    let mut table = Table::new(&[
        "case",
        "n",
        "p",
        "layout",
        "m_bits",
        "k",
        "bytes",
        "mib",
        "bits_per_key",
        "theory_rate",
        "seed_printed",
    ]);
    let mut rows = Vec::new();
    for s in sized {
        let bytes = s.bytes();
        table.push(vec![
            case_label(s.case).to_string(),
            s.n.to_string(),
            num(s.p),
            s.layout.to_string(),
            s.m.to_string(),
            s.k.to_string(),
            bytes.to_string(),
            num(theory::bits_to_mib(s.m)),
            num(s.bits_per_key()),
            num(s.theory_rate),
            printed(s),
        ]);
        rows.push(vec![
            case_label(s.case).to_string(),
            fmt::count(s.n),
            s.layout.to_string(),
            fmt::count(s.m),
            s.k.to_string(),
            format!("{} ({})", fmt::count(bytes), fmt::bytes(bytes)),
            fmt::real(s.bits_per_key(), 2),
            fmt::rate(s.theory_rate),
            printed(s),
        ]);
    }
    (table, rows)
}

/// The heading and the sizing formulas, with their sources.
fn formulas() -> String {
    let mut md = String::from("## 1. Sizing\n\n");
    md.push_str(
        "A classic Bloom filter sets k bits per key among m. After n keys a given bit is still 0 \
         with probability (1 − 1/m)^{kn} ≈ e^{−kn/m}, so a non-member finds all k of its bits set \
         with probability **(1 − e^{−kn/m})^k** (seed 001, seed 002 step 2). Minimising its \
         logarithm over k gives **k = (m/n)·ln 2**, where each bit is 1 with probability ½ and the \
         rate is 2^{−k}; solving 2^{−(m/n) ln 2} = p for m gives **m = −n·ln p / (ln 2)²** \
         (seeds 000, 002, 004). phishbloom rounds m up (so the rate is at most p) and k to the \
         nearest integer (Guava's rule, seed 004). The blocked layout puts all k bits of a key in \
         one 512-bit block (one cache line); keys spread over blocks unevenly, so at equal m its \
         rate is higher, and it is sized with the exact per-block formula (see section 4) to the \
         smallest whole number of blocks that meets p.\n\n",
    );
    md
}

/// What the formulas give for the dataset, seed 000 and seed 002, beside what the seeds print.
fn findings(sized: &[SizedFilter], csv: &str) -> String {
    // `sizing::run` returns dataset, seed 000, seed 002 in this order, classic before blocked.
    let seed0 = &sized[2];
    let seed2 = &sized[4];
    let dataset = &sized[0];
    let dataset_blocked = &sized[1];
    let exact_002 = -(SEED_002_N as f64) * TARGET.ln() / (std::f64::consts::LN_2.powi(2));
    format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         - **The dataset.** `dataset.csv` has {} distinct phishing keys (the `isMalicious = -1` \
         rows after the key normalization of `phishbloom build`). At p = 1 % the classic filter \
         needs m = {} bits, k = {}, {} bytes; the blocked layout needs {} bits ({} bytes, k = {}), \
         {:.1} % more, for its lower-quality spread.\n\
         - **Seed 000** quotes n = 88,647 for this file, m ≈ 849,587 bits and \"≈ 106 KB\". For \
         n = 88,647 the formula gives {:.2}, so m = {} bits (the printed 849,587 is {} lower: a \
         one-digit slip), {} bytes = {} — \"106 KB\" in decimal kilobytes, so that part is right. \
         But the published file has {} distinct phishing keys, not 88,647 (88,647 is not the count \
         of any label; the seed's copy of the CSV may have been another version), so the filter it \
         describes is {:.1}× larger than this dataset needs.\n\
         - **Seed 002** sizes 10⁸ keywords at 1 %: −10⁸·ln 0.01/(ln 2)² = {:.2}, so m = {} bits \
         with the ceiling (the printed 958,505,832 is a rounding slip, {} bits low). That is {} \
         bytes = **{:.1} MiB**, not \"958 MB\": the seed read bits as bytes (8× too large). k = {} \
         and the rate is {} (the seed prints ≈ {SEED_002_RATE}, from rounding m to 9.58·10⁸ \
         inside the exponent).\n\n",
        fmt::count(dataset.n),
        fmt::count(dataset.m),
        dataset.k,
        fmt::count(dataset.m.div_ceil(8)),
        fmt::count(dataset_blocked.m),
        fmt::count(dataset_blocked.m / 8),
        dataset_blocked.k,
        (dataset_blocked.m as f64 / dataset.m as f64 - 1.0) * 100.0,
        -(SEED_000_N as f64) * TARGET.ln() / std::f64::consts::LN_2.powi(2),
        fmt::count(seed0.m),
        seed0.m - SEED_000_M,
        fmt::count(seed0.m.div_ceil(8)),
        fmt::bytes(seed0.m.div_ceil(8)),
        fmt::count(dataset.n),
        seed0.m as f64 / dataset.m as f64,
        exact_002,
        fmt::count(seed2.m),
        seed2.m - SEED_002_M,
        fmt::count(seed2.m.div_ceil(8)),
        theory::bits_to_mib(seed2.m),
        seed2.k,
        fmt::rate(seed2.theory_rate),
    )
}
