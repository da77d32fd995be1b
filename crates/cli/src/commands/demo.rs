//! `phishbloom demo`: the main job on the default data — plan, build, evaluate, show verdicts.

use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::check::answer_lines;
use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_blocklist::eval::{EvalReport, UrlEvalReport};
use phishbloom_blocklist::source::{read_list, ListOptions};
use phishbloom_blocklist::Input;
use phishbloom_core::fmt;
use phishbloom_core::plan::plan;
use phishbloom_core::printer::Output;
use phishbloom_core::{Blocklist, BuildOptions};
use phishbloom_filter::LayoutKind;

use crate::args::{DemoArgs, EvalArgs, FilterArgs, HashArg, LayoutArg};
use crate::commands::eval;

/// The target rate of seeds 000/001: "query error under 1 %".
const SEED_FPP: f64 = 0.01;

/// URLs shown with their verdicts (seed 000's table, plus spellings of a listed URL).
const SAMPLE_URLS: [&str; 5] = [
    "http://example.com",
    "http://fake-malware-site.xyz",
    "google.com",
    "HTTP://WWW.METAMASCKS.COM:80/x/../login#f",
    "https://sig2fa.wixsite.com/sig2faverify/step2?id=1",
];

/// Runs the whole demonstration; fails (exit 2) if the filter breaks its promise.
pub fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    eval::require_dataset(&args.data)?;
    println!(
        "phishbloom demo: a Bloom filter of the phishing URLs in {}\n",
        args.data.display()
    );

    let input = Input::Path(args.data.clone());
    let (keys, summary) = read_list(&input, &ListOptions::default(), &mut |_| {})?;
    println!(
        "1. read {} rows; {} phishing rows (isMalicious = -1), {} distinct keys",
        fmt::count(summary.rows),
        fmt::count(summary.selected),
        fmt::count(keys.len() as u64)
    );
    print_plan(keys.len() as u64)?;
    let reports = measure_keys(args)?;
    let urls = measure_urls(args)?;
    let first = String::from_utf8_lossy(keys.get(0)).into_owned();
    print_verdicts(args, &first)?;
    println!(
        "\nTo keep a filter: phishbloom build {} -o phishing.bloom && phishbloom check phishing.bloom URL",
        args.data.display()
    );

    // The demo fails on any false negative, or if the default (blocked) filter misses the target.
    let false_negatives = reports.iter().any(|r| r.false_negatives > 0);
    let default_missed = reports
        .iter()
        .filter(|r| r.layout == LayoutKind::Blocked)
        .any(|r| r.benign.rate >= SEED_FPP || r.random.rate >= SEED_FPP);
    let url_missed = urls.false_negatives > 0 || urls.random.rate >= SEED_FPP;
    if false_negatives || default_missed || url_missed {
        return Err(anyhow::anyhow!(
            "the filter broke its promise (see the table above)"
        ))
        .context("demo failed");
    }
    Ok(ExitCode::SUCCESS)
}

/// Step 2: the sizing of every layout for `n` keys at the seed's rate.
fn print_plan(n: u64) -> anyhow::Result<()> {
    println!("\n2. sizing for n = {} at p = 1 %:", fmt::count(n));
    for row in plan(n, SEED_FPP, 0)? {
        println!(
            "   {:<8} n = {}, m = {}, k = {}, {} ({:.2} bits/key), expected rate {}",
            row.layout.name(),
            fmt::count(row.expected_items),
            fmt::count(row.num_bits),
            row.num_hashes,
            fmt::bytes(row.bytes),
            row.bits_per_key,
            fmt::percent(row.expected_fpp)
        );
    }
    Ok(())
}

/// The evaluation of the demo's data with a filter of `layout` at the seed's rate.
fn eval_args(args: &DemoArgs, layout: LayoutArg) -> EvalArgs {
    EvalArgs {
        data: args.data.clone(),
        filter: FilterArgs {
            fpp: Some(SEED_FPP),
            hash: HashArg::Xxh3,
        },
        layout,
        random: args.random,
        seed: 2026,
        json: false,
    }
}

/// Step 3: the measured rates of a classic and a blocked filter of whole keys.
fn measure_keys(args: &DemoArgs) -> anyhow::Result<Vec<EvalReport>> {
    println!(
        "\n3. measured: every phishing URL, the dataset's benign URLs, and {} random \
         http://xxxxxxxxxx.com URLs",
        fmt::count(args.random)
    );
    let mut reports = Vec::new();
    for layout in [LayoutArg::Classic, LayoutArg::Blocked] {
        reports.push(eval::evaluate(&eval_args(args, layout))?);
    }
    eval::print_reports(&reports);
    for report in &reports {
        eval::print_verdict(report);
    }
    Ok(reports)
}

/// Step 4: the same URLs with blocklist semantics, judged against the exact matcher.
fn measure_urls(args: &DemoArgs) -> anyhow::Result<UrlEvalReport> {
    println!(
        "\n4. the same URLs with blocklist semantics: phishing rows as domain/URL entries, queries \
         canonicalized (Safe Browsing rules), listed if any lookup expression is an entry; \
         Bloom matcher judged against the exact one, {} per checked URL",
        fmt::percent(SEED_FPP)
    );
    let urls = eval::evaluate_urls(&eval_args(args, LayoutArg::Blocked))?;
    eval::print_url_report(&urls);
    Ok(urls)
}

/// Step 5: the verdicts of the data's `first` key and the sample URLs, from a verified
/// blocked filter of URL entries.
fn print_verdicts(args: &DemoArgs, first: &str) -> anyhow::Result<()> {
    println!(
        "\n5. verdicts (blocked filter of URL entries, verified against the fingerprint table):"
    );
    let input = Input::Path(args.data.clone());
    let (entries, _) = read_entries(&[EntrySource::list(input, ListOptions::default())])?;
    let blocklist = Blocklist::from_entries(
        &entries,
        &BuildOptions {
            fpp: SEED_FPP,
            verify: true,
            ..BuildOptions::default()
        },
    )?;
    let samples: Vec<&[u8]> = std::iter::once(first.as_bytes())
        .chain(SAMPLE_URLS.iter().map(|u| u.as_bytes()))
        .collect();
    let mut out = Vec::new();
    answer_lines(&blocklist, samples.into_iter(), Output::Tsv, &mut out);
    for line in String::from_utf8_lossy(&out).lines() {
        println!("   {line}");
    }
    Ok(())
}
