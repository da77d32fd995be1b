//! The keyword bench: keyword blocklists against aho-corasick at any keyword count, each build
//! and scan in its own process (this executable serves the jobs), printed as a table and
//! optionally saved as JSON. The report's section 9 runs the same code at 10⁵–10⁷; the 10⁸ run
//! is this bench, by hand:
//!
//! ```text
//! cargo bench -p phishbloom-lab --bench keywords -- --sets 1e8 --peer-max 0
//! cargo bench -p phishbloom-lab --bench keywords -- --sets 1e5,1e6,1e7 --peer-max 1e6 --json out.json
//! ```
//!
//! Options: `--sets N,N…` keyword counts (default 1e5,1e6); `--peer-max N` largest count
//! aho-corasick is measured at (default 1e6; 0 for none); `--text-mb N` MB of generated e-mail
//! (default 50); `--no-fortunes` skips the Debian fortunes; `--json FILE` also writes the
//! results.

use phishbloom_core::fmt;
use phishbloom_lab::measure::keywords::{run_with, serve_child, KeywordSizes};
use phishbloom_lab::measure::Progress;

fn count(text: &str) -> u64 {
    // Counts are written like 1e8 or 100000; a bad one is a usage error of this bench.
    text.parse::<f64>()
        .map(|v| v as u64)
        .unwrap_or_else(|_| panic!("not a count: {text}"))
}

fn main() {
    if let Some(code) = serve_child() {
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let sizes = KeywordSizes {
        sets: value("--sets")
            .unwrap_or_else(|| "1e5,1e6".into())
            .split(',')
            .map(count)
            .collect(),
        peer_max: value("--peer-max").map_or(1_000_000, |v| count(&v)),
        text_bytes: value("--text-mb").map_or(50, |v| count(&v)) << 20,
        seed: 14,
        real_texts: !args.iter().any(|a| a == "--no-fortunes"),
    };
    let report = run_with(&sizes, &Progress::new("keywords", true))
        .unwrap_or_else(|e| panic!("measurement failed: {e}"));
    println!(
        "{:>11}  {:<20} {:<9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8} {:>8}",
        "keywords",
        "system",
        "texts",
        "build s",
        "build RSS",
        "bytes",
        "scan RSS",
        "MB/s",
        "flags/1k",
        "planted"
    );
    for r in &report.rows {
        let rss = |v: Option<u64>| v.map_or("-".into(), fmt::bytes);
        println!(
            "{:>11}  {:<20} {:<9} {:>9.1} {:>10} {:>10} {:>10} {:>9.1} {:>8.2} {:>4}/{:<4}",
            fmt::count(r.keywords),
            r.system,
            r.corpus,
            r.build_seconds,
            rss(r.build_peak_rss),
            fmt::bytes(r.structure_bytes),
            rss(r.scan_peak_rss),
            r.scan_mb_per_s,
            r.flags_per_1000(),
            r.planted_found,
            r.planted
        );
    }
    for t in &report.texts {
        println!(
            "texts {}: {} documents, {}, median {} tokens, 90th percentile {}",
            t.corpus,
            fmt::count(t.documents),
            fmt::bytes(t.bytes),
            t.median,
            t.p90
        );
    }
    if let Some(path) = value("--json") {
        let json = serde_json::to_string_pretty(&report).unwrap_or_default();
        std::fs::write(&path, json).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    }
}
