//! Section 9: scanning e-mail for keywords with a keyword blocklist beside the
//! `aho-corasick` crate — build time, peak memory per process, scan throughput on one core and
//! false flags per 1,000 clean documents with and without the keyword index, and the targets
//! beside the ratios measured in the same run.
//!
//! Rendered here from [`phishbloom_lab::measure::keywords`]'s results, which this module only
//! formats (CSV, Markdown).

use phishbloom_core::fmt;
use phishbloom_lab::measure::keywords::{KeywordReport, KeywordRow};

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// The command that measures 10⁸ keywords (by hand: it writes a 1.7 GB keyword file and takes
/// most of an hour on two shared cores).
pub const LARGE_RUN: &str =
    "cargo bench -p phishbloom-lab --bench keywords -- --sets 1e8 --peer-max 0";

/// The targets, as ratios to the peer measured in the same run.
struct Targets {
    /// Our scan MB/s ÷ aho-corasick's, at the largest set both ran.
    speed: f64,
    /// Our scanning process's peak RSS ÷ aho-corasick's.
    memory: Option<f64>,
    /// The set size.
    keywords: u64,
}

fn find<'a>(
    rows: &'a [KeywordRow],
    keywords: u64,
    system: &str,
    corpus: &str,
) -> Option<&'a KeywordRow> {
    rows.iter()
        .find(|r| r.keywords == keywords && r.system == system && r.corpus == corpus)
}

fn targets(report: &KeywordReport) -> Option<Targets> {
    let peer = report
        .rows
        .iter()
        .filter(|r| r.system == "aho-corasick" && r.corpus == "generated")
        .max_by_key(|r| r.keywords)?;
    let ours = find(&report.rows, peer.keywords, "phishbloom", "generated")?;
    Some(Targets {
        speed: ours.scan_mb_per_s / peer.scan_mb_per_s.max(f64::MIN_POSITIVE),
        memory: ours
            .scan_peak_rss
            .zip(peer.scan_peak_rss)
            .map(|(a, b)| a as f64 / b.max(1) as f64),
        keywords: peer.keywords,
    })
}

/// Writes the section from [`phishbloom_lab::measure::keywords::run`]'s results.
pub fn render(ctx: &mut Context, report: &KeywordReport) -> Result<String> {
    let (table, rows) = keyword_table(report);
    let csv = ctx.write_csv("keywords.csv", &table)?;
    let mut md = String::from("## 9. Scanning e-mail for keywords\n\n");
    md.push_str(&intro(report));
    md.push_str(&markdown_table(
        &[
            "keywords",
            "system",
            "texts",
            "build",
            "build peak RSS",
            "list / automaton",
            "scan peak RSS",
            "scan MB/s",
            "false flags per 1,000 (flagged of docs)",
            "planted found",
        ],
        &rows,
    ));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    md.push_str(&texts_text(report));
    md.push_str(&targets_text(ctx, report));
    Ok(md)
}

/// Every configuration as a CSV table (`keywords.csv`) and as Markdown rows.
fn keyword_table(report: &KeywordReport) -> (Table, Vec<Vec<String>>) {
    let mut table = Table::new(&[
        "keywords",
        "system",
        "texts",
        "build_seconds",
        "build_peak_rss_bytes",
        "structure_bytes",
        "scan_peak_rss_bytes",
        "scan_mb_per_s",
        "documents",
        "flagged",
        "flags_per_1000",
        "planted",
        "planted_found",
    ]);
    let rss = |v: Option<u64>| v.map(fmt::bytes).unwrap_or_else(|| "—".into());
    let mut rows = Vec::new();
    for r in &report.rows {
        table.push(vec![
            r.keywords.to_string(),
            r.system.clone(),
            r.corpus.clone(),
            num(r.build_seconds),
            r.build_peak_rss.map(|v| v.to_string()).unwrap_or_default(),
            r.structure_bytes.to_string(),
            r.scan_peak_rss.map(|v| v.to_string()).unwrap_or_default(),
            num(r.scan_mb_per_s),
            r.documents.to_string(),
            r.flagged.to_string(),
            num(r.flags_per_1000()),
            r.planted.to_string(),
            r.planted_found.to_string(),
        ]);
        rows.push(vec![
            fmt::power_of_ten(r.keywords),
            format!("`{}`", r.system),
            r.corpus.clone(),
            format!("{:.1} s", r.build_seconds),
            if r.system.starts_with("aho-corasick") {
                "(with scan)".into()
            } else {
                rss(r.build_peak_rss)
            },
            fmt::bytes(r.structure_bytes),
            rss(r.scan_peak_rss),
            format!("{:.1}", r.scan_mb_per_s),
            format!(
                "{:.2} ({} of {})",
                r.flags_per_1000(),
                r.flagged,
                fmt::count(r.documents)
            ),
            format!("{} of {}", r.planted_found, r.planted),
        ]);
    }
    (table, rows)
}

/// The task, the two systems, the keywords and how each run was measured.
fn intro(report: &KeywordReport) -> String {
    let mut md = String::from(
        "The task: decide whether a new e-mail contains any of up to 10⁸ listed spam keywords \
         and phrases. `phishbloom build --keywords` puts every keyword's phrase hash in one \
         blocked Bloom filter sized so that a document of P probes is flagged by mistake with \
         probability 1 % (P = 400 tokens × the list's phrase lengths); `scan` tokenizes the \
         decoded text once (NFKC, case folding, UAX #29 words, one token per Han character) and \
         probes every n-gram of a listed length, each n-gram hashed in O(1) from the previous \
         one, in prefetched batches. `--verify` adds the exact keyword index, read only on \
         filter hits. The peer is the `aho-corasick` crate (1.x, its default automaton, \
         overlapping matches) over the same tokens joined by spaces, so both match whole-token \
         phrases and both pay for tokenizing; `aho-corasick (raw, ASCII case-insensitive)` is \
         the plainer setup of the peer, over the raw text, which also matches inside words \
         (so it flags documents whose words contain a keyword). Keywords are synthetic (three in four 1–3 random \
         words of 4–10 letters, one in four 2–4 Han characters), drawn so that none of their \
         tokens occurs in the texts: every flag on these clean documents is false. Each build \
         and each scan ran in its own process, whose peak resident memory (`VmHWM`) is shown; \
         documents are read one at a time from a corpus file (the generated e-mails: ",
    );
    let generated = report.texts.iter().find(|t| t.corpus == "generated");
    md.push_str(&format!(
        "{}). One core scans (the scan loop is single-threaded); throughput is MB of decoded \
         text per second, the median of three passes. Planted: one keyword from the list inserted into each of 1,000 \
         documents, all of which must be found.{}\n\n",
        generated.map_or("—".into(), |t| fmt::bytes(t.bytes)),
        if report.per_process {
            ""
        } else {
            " *This run measured in one process: no peak memory per configuration.*"
        }
    ));
    md
}

/// The texts scanned, and why false flags cluster.
fn texts_text(report: &KeywordReport) -> String {
    let texts: Vec<String> = report
        .texts
        .iter()
        .map(|t| {
            format!(
                "{} ({} documents, {}; median {} tokens, 90th percentile {})",
                t.corpus,
                fmt::count(t.documents),
                fmt::bytes(t.bytes),
                t.median,
                t.p90
            )
        })
        .collect();
    format!(
        "Texts: {}. `generated` are e-mails from the Debian word list; `fortunes` are the \
         Debian `fortunes` and `fortunes-zh` packages' fortunes read in place (about half of \
         their bytes Chinese), absent when those packages are not installed. Documents longer \
         than P/|lengths| tokens are flagged more often than 1 % (1 − (1 − f)^probes), and a \
         common phrase that happens to be a false positive flags every document containing \
         it, so false flags cluster on texts that repeat phrases; the keyword index removes \
         them all.\n\n",
        texts.join("; ")
    )
}

/// The targets beside the ratios measured in this run (and the section's headline).
fn targets_text(ctx: &mut Context, report: &KeywordReport) -> String {
    let mut md = String::new();
    if let Some(t) = targets(report) {
        let verify_docs: u64 = report
            .rows
            .iter()
            .filter(|r| r.system == "phishbloom --verify")
            .map(|r| r.documents)
            .sum();
        let verify_flags: u64 = report
            .rows
            .iter()
            .filter(|r| r.system == "phishbloom --verify")
            .map(|r| r.flagged)
            .sum();
        md.push_str(&format!(
            "**Targets** (ratios to aho-corasick in this run, at {} keywords): scan speed {:.1}× \
             (target ≥ 5×); peak memory of the scanning process {} (target ≤ 1/10); with \
             `--verify`, {} false flags in {} clean documents over all sets (target 0 in \
             10,000). The 10⁸-keyword run (target: build and scan within 2 GB at ≥ 30 MB/s) is \
             made by hand: `{LARGE_RUN}`.\n\n",
            fmt::count(t.keywords),
            t.speed,
            t.memory.map_or("—".into(), |m| if m < 0.5 {
                format!("{m:.3}× (1/{:.0})", 1.0 / m.max(1e-9))
            } else {
                format!("{m:.2}×")
            }),
            verify_flags,
            fmt::count(verify_docs),
        ));
        ctx.headlines.push(format!(
            "keywords: at {} keywords, scan {:.1}× aho-corasick's speed at {} of its peak memory; \
             {verify_flags} false flags with --verify in {verify_docs} documents",
            fmt::count(t.keywords),
            t.speed,
            t.memory.map_or("—".into(), |m| format!("{m:.3}")),
        ));
    }
    md
}
