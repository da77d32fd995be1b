//! `phishbloom eval`: seeds 000/001's experiment on dataset.csv, as a table or JSON.

use std::path::Path;
use std::process::ExitCode;

use phishbloom_blocklist::eval::{self, EvalConfig, EvalReport, Measurement, UrlEvalReport};
use phishbloom_core::engine::DEFAULT_EXPRESSION_BOUND;
use phishbloom_core::fmt;

use crate::args::EvalArgs;

/// Both experiments, for `--json`.
#[derive(serde::Serialize)]
struct Both<'a> {
    #[serde(flatten)]
    keys: &'a EvalReport,
    urls: &'a UrlEvalReport,
}

/// Runs the experiment (whole keys, then URL semantics) and prints it.
pub fn run(args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let report = evaluate(args)?;
    let urls = evaluate_urls(args)?;
    if args.json {
        let both = Both {
            keys: &report,
            urls: &urls,
        };
        println!("{}", serde_json::to_string_pretty(&both)?);
    } else {
        print_report(&report);
        println!("\nURL semantics (canonical URLs, domain/URL entries, Bloom matcher vs exact):");
        print_url_report(&urls);
    }
    let clean = report.false_negatives == 0 && urls.false_negatives == 0;
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The URL-semantics experiment with the default expression bound.
pub fn evaluate_urls(args: &EvalArgs) -> anyhow::Result<UrlEvalReport> {
    require_dataset(&args.data)?;
    Ok(eval::run_urls(&config(args), DEFAULT_EXPRESSION_BOUND)?)
}

/// Prints the URL-semantics report.
pub fn print_url_report(r: &UrlEvalReport) {
    println!(
        "   {} entries ({} domain, {} URL; {} rows not entries); E = {} expressions per URL, \
         {} per probe: m = {}, k = {}, {}",
        fmt::count(r.entries),
        fmt::count(r.domain_entries),
        fmt::count(r.entries - r.domain_entries),
        fmt::count(r.rejected_rows),
        r.expression_bound,
        fmt::percent(r.per_probe_fpp),
        fmt::count(r.m),
        r.k,
        fmt::bytes(r.bytes)
    );
    let [p50, p90, p99, max] = r.expressions_p50_p90_p99_max;
    println!(
        "   expressions per benign URL (but the top label): median {p50}, p90 {p90}, p99 {p99}, max {max}"
    );
    println!(
        "   phishing URLs missed: {}; benign URLs listed by the exact matcher (true matches): {}",
        fmt::count(r.false_negatives),
        fmt::count(r.benign_listed_exactly)
    );
    println!(
        "   {:<8} {:>9} {:>6} {:>9} {:>21} {:>9}",
        "queries", "count", "FP", "rate", "95 % interval", "theory"
    );
    for (name, m) in [("benign", &r.benign), ("random", &r.random)] {
        println!("   {:<8} {}", name, measurement_cells(m));
    }
}

/// Checks the dataset exists (with directions if not) and runs the experiment.
pub fn evaluate(args: &EvalArgs) -> anyhow::Result<EvalReport> {
    require_dataset(&args.data)?;
    Ok(eval::run(&config(args))?)
}

fn config(args: &EvalArgs) -> EvalConfig {
    EvalConfig {
        data: args.data.clone(),
        fpp: args.filter.fpp_for(phishbloom_core::Kind::Blocked),
        layout: args.layout.into(),
        strategy: args.filter.hash.into(),
        random_queries: args.random,
        seed: args.seed,
    }
}

/// Fails with directions to the public dataset when `path` does not exist.
pub fn require_dataset(path: &Path) -> anyhow::Result<()> {
    if path.exists() {
        return Ok(());
    }
    anyhow::bail!(
        "{}: dataset not found. Download dataset/dataset.csv from the public GitHub repository \
         XD-ANG/Phishing_Detection_GNN and pass its path with --data PATH",
        path.display()
    )
}

/// The table of one or more reports (the demo prints several layouts side by side).
pub fn print_reports(reports: &[EvalReport]) {
    println!(
        "{:<8} {:<6} {:>7} {:>8} {:>3} {:>9} {:>8}  {:<8} {:>9} {:>6} {:>9} {:>21} {:>9}",
        "layout",
        "hash",
        "n",
        "m",
        "k",
        "memory",
        "bits/key",
        "queries",
        "count",
        "FN/FP",
        "rate",
        "95 % interval",
        "theory"
    );
    for r in reports {
        let head = format!(
            "{:<8} {:<6} {:>7} {:>8} {:>3} {:>9} {:>8.2}",
            r.layout.name(),
            r.hash,
            fmt::count(r.n),
            fmt::count(r.m),
            r.k,
            fmt::bytes(r.bytes),
            r.bits_per_key
        );
        println!(
            "{head}  {:<8} {:>9} {:>6} {:>9}",
            "phishing",
            fmt::count(r.phishing_queries),
            fmt::count(r.false_negatives),
            "FN"
        );
        let blank = " ".repeat(head.len());
        for (name, m) in [("benign", &r.benign), ("random", &r.random)] {
            println!("{blank}  {:<8} {}", name, measurement_cells(m));
        }
    }
}

fn measurement_cells(m: &Measurement) -> String {
    format!(
        "{:>9} {:>6} {:>9} {:>21} {:>9}",
        fmt::count(m.queries),
        fmt::count(m.false_positives),
        fmt::percent(m.rate),
        format!("[{}, {}]", fmt::percent(m.ci_low), fmt::percent(m.ci_high)),
        fmt::percent(m.theoretical)
    )
}

fn print_report(report: &EvalReport) {
    println!(
        "dataset {} ({} keys)",
        report.data.display(),
        report.key_scheme.name()
    );
    print_reports(std::slice::from_ref(report));
    print_verdict(report);
}

/// One line saying whether the filter kept its promise, and why not when it did not.
pub fn print_verdict(report: &EvalReport) {
    let (benign, random) = (&report.benign, &report.random);
    let under_target = benign.rate < report.target_fpp && random.rate < report.target_fpp;
    let theory = benign.theoretical;
    let verdict = if report.false_negatives > 0 {
        "FALSE NEGATIVES: a Bloom filter must never have them; this is a bug".to_string()
    } else if under_target {
        "under the target".to_string()
    } else if theory > report.target_fpp
        && benign.agrees_with_theory()
        && random.agrees_with_theory()
    {
        format!(
            "above the target, as theory predicts ({}): the textbook m with k rounded to a whole \
             number misses p slightly; the blocked layout is sized to the true rate",
            fmt::percent(theory)
        )
    } else {
        "above the target".to_string()
    };
    println!(
        "{}: {} false negatives; false-positive rate {} (benign), {} (random), target {}: {verdict}",
        report.layout.name(),
        report.false_negatives,
        fmt::percent(benign.rate),
        fmt::percent(random.rate),
        fmt::percent(report.target_fpp),
    );
    if report.benign_overlapping_phishing > 0 {
        println!(
            "  ({} benign rows equal a phishing key after normalization and were not counted)",
            report.benign_overlapping_phishing
        );
    }
}
