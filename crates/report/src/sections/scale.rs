//! Section 7, seed 002 at full scale: 10⁸ synthetic spam keywords at p = 0.01 — build time on
//! both cores and on one, memory, and the rate measured over 10⁷ non-members.
//!
//! Rendered here from [`phishbloom_lab::measure::scale`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_lab::measure::scale::Scale;
use phishbloom_lab::stats::Measurement;
use phishbloom_lab::theory;

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, Table};
use phishbloom_core::fmt;

/// The rate seed 002 prints for its filter (from rounding m to 9.58·10⁸ inside the exponent).
const SEED_002_RATE: &str = "0.0103";

/// One row of the section's table: layout, (m, k, bytes), (threads, build seconds, RSS growth),
/// and (false negatives, measurement) for the builds that were queried.
type Row<'a> = (
    &'static str,
    (u64, u32, u64),
    (usize, f64, Option<u64>),
    Option<(u64, &'a Measurement)>,
);

/// The build-time sentence: which build was faster in this run, and why.
fn build_time_text(
    speedup: f64,
    single: f64,
    parallel: f64,
    blocked: f64,
    threads: usize,
) -> String {
    let comparison = if speedup >= 1.0 {
        format!(
            "{threads} threads built it {speedup:.2}× as fast as one thread in this run \
             ({parallel:.1} s vs {single:.1} s wall time)"
        )
    } else {
        format!(
            "{threads} threads were slower than one thread in this run ({parallel:.1} s vs \
             {single:.1} s wall time; one thread took {speedup:.2}× as long)"
        )
    };
    format!(
        "{comparison}, on this machine under this load (see section 8). Each insert is k random \
         cache misses into the whole array; the threads fill private shards with plain stores \
         (no atomics, no shared cache lines) and the shards are OR-ed together at the end, so \
         {threads} threads win when a second core is free. (One shared array with atomic OR, \
         `lock or` on x86, would be slower on two threads than on one: each locked OR waits for \
         its cache miss.) The blocked layout touches one cache line per key \
         and built in {blocked:.1} s on {threads} threads."
    )
}

/// Writes the section from [`phishbloom_lab::measure::scale::run`]'s results.
pub fn render(ctx: &mut Context, scale: &Scale) -> Result<String> {
    let (table, rows) = scale_table(scale);
    let csv = ctx.write_csv("seed002_scale.csv", &table)?;
    let classic_rate = &scale.parallel_check.measured;
    ctx.headlines.push(format!(
        "seed 002: n = {}, m = {}, {:.1} MiB, rate {} (theory {}), 1-thread/{}-thread build time = {:.2}",
        fmt::count(scale.n),
        fmt::count(scale.parallel.m),
        theory::bytes_to_mib(scale.parallel.bytes),
        fmt::rate(classic_rate.rate),
        fmt::rate(classic_rate.theoretical),
        scale.parallel.threads,
        scale.speedup()
    ));
    let mut md = String::from("## 7. Seed 002 at full scale\n\n");
    md.push_str(&intro(scale));
    md.push_str(&markdown_table(
        &[
            "layout",
            "m / k",
            "bytes",
            "RSS growth",
            "threads",
            "build time",
            "false negatives (sample)",
            "FP / queries",
            "rate",
            "95 % interval",
            "theory",
        ],
        &rows,
    ));
    md.push_str(&findings(scale, &csv));
    md.push_str(&format!(
        "Command: `{}`.\n\n",
        crate::command_line(ctx.settings.quick)
    ));
    Ok(md)
}

/// The three builds (classic on every thread, classic on one, blocked) as a CSV table
/// (`seed002_scale.csv`) and as Markdown rows.
fn scale_table(scale: &Scale) -> (Table, Vec<Vec<String>>) {
    let (m, k) = (scale.parallel.m, scale.parallel.k);
    let threads = scale.parallel.threads;
    let classic_bytes = scale.parallel.bytes;
    let blocked_bytes = scale.blocked.bytes;
    let classic_rate = &scale.parallel_check.measured;
    let parallel_rss = scale.parallel.rss_growth;
    let parallel_seconds = scale.parallel.seconds;
    let mut table = Table::new(&[
        "layout",
        "n",
        "m_bits",
        "k",
        "bytes",
        "threads",
        "build_seconds",
        "rss_growth_bytes",
        "member_sample",
        "false_negatives",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "theory_rate",
        "seed_002_printed_rate",
    ]);
    let (single, blocked) = (&scale.single, &scale.blocked);
    let rows_data: [Row; 3] = [
        (
            "classic",
            (m, k, classic_bytes),
            (threads, parallel_seconds, parallel_rss),
            Some((scale.parallel_check.false_negatives, classic_rate)),
        ),
        (
            "classic",
            (single.m, single.k, single.bytes),
            (single.threads, single.seconds, single.rss_growth),
            None,
        ),
        (
            "blocked",
            (blocked.m, blocked.k, blocked_bytes),
            (blocked.threads, blocked.seconds, blocked.rss_growth),
            Some((
                scale.blocked_check.false_negatives,
                &scale.blocked_check.measured,
            )),
        ),
    ];
    let mut rows = Vec::new();
    for row in rows_data {
        let (cells, md_row) = row_cells(scale, row);
        table.push(cells);
        rows.push(md_row);
    }
    (table, rows)
}

/// One build's CSV cells and Markdown row.
fn row_cells(scale: &Scale, row: Row) -> (Vec<String>, Vec<String>) {
    let (layout, (m, k, bytes), (threads, seconds, rss), measured) = row;
    let checks = scale.parallel_check.member_checks;
    let mut cells = vec![
        layout.to_string(),
        scale.n.to_string(),
        m.to_string(),
        k.to_string(),
        bytes.to_string(),
        threads.to_string(),
        format!("{seconds:.3}"),
        rss.map(|r| r.to_string()).unwrap_or_default(),
    ];
    let mut md_row = vec![
        layout.to_string(),
        format!("{} / k = {}", fmt::count(m), k),
        format!(
            "{} ({:.1} MiB)",
            fmt::count(bytes),
            theory::bytes_to_mib(bytes)
        ),
        rss.map(fmt::bytes).unwrap_or_else(|| "—".into()),
        threads.to_string(),
        format!("{seconds:.1} s"),
    ];
    match measured {
        Some((fns, r)) => {
            cells.extend([checks.to_string(), fns.to_string()]);
            cells.extend(measurement_cells(r));
            cells.push(if layout == "classic" {
                SEED_002_RATE.to_string()
            } else {
                String::new()
            });
            md_row.extend([
                format!("{} of {}", fns, fmt::count(checks)),
                format!(
                    "{} / {}",
                    fmt::count(r.false_positives),
                    fmt::count(r.queries)
                ),
                fmt::rate(r.rate),
                fmt::interval(r.ci_low, r.ci_high),
                fmt::rate(r.theoretical),
            ]);
        }
        None => {
            cells.extend(std::iter::repeat_n(String::new(), 9));
            md_row.push(if scale.single_bits_identical {
                "bits identical to the parallel build".into()
            } else {
                "BITS DIFFER from the parallel build".into()
            });
            md_row.extend(std::iter::repeat_n(String::new(), 4));
        }
    }
    (cells, md_row)
}

/// The system seed 002 describes, and how it was built and queried here.
fn intro(scale: &Scale) -> String {
    let (n, m, k) = (scale.n, scale.parallel.m, scale.parallel.k);
    let threads = scale.parallel.threads;
    let classic_rate = &scale.parallel_check.measured;
    let checks = scale.parallel_check.member_checks;
    format!(
        "Seed 002's system: {} synthetic keywords (`spam-kw-<hex>`) at p = 1 %, m = {} bits, \
         k = {}. Built once on {threads} threads (private shards OR-ed together, the mechanism \
         of `insert_parallel`; keys generated one at a time so they never all exist at once), once on one thread with plain inserts, and once in the blocked \
         layout; then queried with {} non-members (`clean-w-<hex>`) and a sample of {} members.\n\n",
        fmt::count(n),
        fmt::count(m),
        k,
        fmt::count(classic_rate.queries),
        fmt::count(checks),
    )
}

/// What the memory, the rate and the build times show.
fn findings(scale: &Scale, csv: &str) -> String {
    let n = scale.n;
    let threads = scale.parallel.threads;
    let classic_bytes = scale.parallel.bytes;
    let blocked_bytes = scale.blocked.bytes;
    let classic_rate = &scale.parallel_check.measured;
    let parallel_rss = scale.parallel.rss_growth;
    let parallel_seconds = scale.parallel.seconds;
    let (single, blocked) = (&scale.single, &scale.blocked);
    let speedup = scale.speedup();
    format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         - **Memory:** {} bytes = **{:.1} MiB** for {} keywords (seed 002's \"958 MB\" for 10⁸ is the \
         bit count); the process's resident memory grew by {} while building, i.e. the bit array and \
         nothing else of consequence. The blocked layout needs {:.1} MiB.\n\
         - **Rate:** measured {} with 95 % interval {}, against {} from the exact formula and the \
         {} seed 002 prints.\n\
         - **Build time:** {}\n\n",
        fmt::count(classic_bytes),
        theory::bytes_to_mib(classic_bytes),
        fmt::count(n),
        parallel_rss.map(fmt::bytes).unwrap_or_else(|| "(not measurable here)".into()),
        theory::bytes_to_mib(blocked_bytes),
        fmt::rate(classic_rate.rate),
        fmt::interval(classic_rate.ci_low, classic_rate.ci_high),
        fmt::rate(classic_rate.theoretical),
        SEED_002_RATE,
        build_time_text(speedup, single.seconds, parallel_seconds, blocked.seconds, threads),
    )
}
