//! `phishbloom build`: a list (or UT1 categories) in, a filter file out, and a summary of what
//! was read.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use phishbloom_filter::{AnyFilter, HashStrategy};
use phishbloom_lookup::build::{build_filter, BuildOptions};
use phishbloom_lookup::cabf_engine::CabfMatcher;
use phishbloom_lookup::entries::{read_entries, EntrySource, EntrySummary};
use phishbloom_lookup::list::{read_list, Format, LabelFilter, ListOptions};
use phishbloom_lookup::matcher::{per_probe_fpp, BloomMatcher};
use phishbloom_lookup::{Input, KeyScheme, ListSummary};

use crate::args::{BuildArgs, EngineArg, FormatArg};
use crate::commands::default_threads;
use crate::fmt;

/// Reads the list, builds and saves the filter, prints the summary.
pub fn run(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    if args.exact {
        build_exact(args)
    } else {
        build_urls(args)
    }
}

/// Whole-key filter: every line is one key, hashed as it is.
fn build_exact(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // `--exact` conflicts with `--ut1`, so clap guarantees the positional input.
    let input = Input::from_arg(args.input.as_deref().unwrap_or("-"));
    let options = list_options(args, KeyScheme::Exact);
    let bar = progress_bar(&input);
    let (keys, summary) = read_list(&input, &options, &mut |read| bar.set_position(read))?;
    bar.finish_and_clear();
    let build = BuildOptions {
        fpp: args.filter.fpp,
        layout: args.filter.layout.into(),
        strategy: args.filter.hash.into(),
        scheme: KeyScheme::Exact,
        threads: default_threads(args.threads),
    };
    let filter = build_filter(&keys, &build)?;
    save(&filter, args)?;
    print_list_summary(&input.display_path().display().to_string(), &summary);
    print_filter_summary(args, &filter, "exact keys", started);
    Ok(ExitCode::SUCCESS)
}

/// URL-entry filter: lines are domain or URL entries, matched with blocklist semantics.
fn build_urls(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    if HashStrategy::from(args.filter.hash) != HashStrategy::Xxh3 {
        anyhow::bail!(
            "--hash sha256 is only available with --exact (whole keys); URL entries are hashed \
             with xxh3, one hash per host suffix and per path prefix"
        );
    }
    let started = Instant::now();
    let mut sources = Vec::new();
    if let Some(input) = &args.input {
        sources.push(EntrySource::List(
            Input::from_arg(input),
            list_options(args, KeyScheme::Expressions),
        ));
    }
    sources.extend(args.ut1.iter().cloned().map(EntrySource::Ut1));
    let (entries, summary) = read_entries(&sources)?;
    if args.engine == EngineArg::Cabf {
        let engine = CabfMatcher::build(&entries, args.filter.fpp, args.expressions, args.verify)?;
        engine.save(&args.output).with_context(|| {
            format!(
                "cannot write the filter; nothing was written to {}",
                args.output.display()
            )
        })?;
        print_entry_summary(&summary);
        println!(
            "built {}: CaBF engine, {} entries in {} parallel filters + check filter, {} ({} bits){}, built in {:.2} s",
            args.output.display(),
            fmt::count(engine.entries()),
            phishbloom_lookup::cabf_engine::ENGINE_FILTERS,
            fmt::bytes(engine.bits() / 8),
            fmt::count(engine.bits()),
            if args.verify { ", fingerprint table included" } else { "" },
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let matcher = BloomMatcher::build(
        &entries,
        args.filter.fpp,
        args.expressions,
        args.filter.layout.into(),
        args.verify,
    )?;
    matcher.save(&args.output).with_context(|| {
        format!(
            "cannot write the filter; nothing was written to {}",
            args.output.display()
        )
    })?;
    print_entry_summary(&summary);
    print_filter_summary(args, matcher.filter(), "URL entries", started);
    println!(
        "  per checked URL: target {} at up to {} expressions, so {} per probe{}",
        fmt::percent(args.filter.fpp),
        args.expressions,
        fmt::percent(per_probe_fpp(args.filter.fpp, args.expressions)),
        if args.verify {
            "; fingerprint table written for --verify"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn save(filter: &AnyFilter, args: &BuildArgs) -> anyhow::Result<()> {
    filter.save(&args.output).with_context(|| {
        format!(
            "cannot write the filter; nothing was written to {}",
            args.output.display()
        )
    })
}

fn list_options(args: &BuildArgs, scheme: KeyScheme) -> ListOptions {
    let label = match (&args.label_column, &args.label_value, args.all_rows) {
        (_, _, true) => LabelFilter::All,
        (Some(column), Some(value), _) => LabelFilter::Equals {
            column: column.clone(),
            value: value.clone(),
        },
        (None, Some(value), _) => LabelFilter::Equals {
            column: phishbloom_lookup::list::DEFAULT_LABEL.0.to_string(),
            value: value.clone(),
        },
        _ => LabelFilter::Default,
    };
    ListOptions {
        format: match args.format {
            FormatArg::Auto => Format::Auto,
            FormatArg::Csv => Format::Csv,
            FormatArg::Lines => Format::Lines,
        },
        key_column: args.column.clone(),
        label,
        scheme,
    }
}

/// A byte-count bar on stderr for files (a spinner for stdin); invisible when stderr is not a
/// terminal, and drawn only once reading takes more than a moment.
fn progress_bar(input: &Input) -> ProgressBar {
    let total = match input {
        Input::Path(path) => std::fs::metadata(path).map(|m| m.len()).ok(),
        Input::Stdin => None,
    };
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template("reading {bytes}/{total_bytes} {wide_bar} {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner(),
    };
    // A tenth of a second: short lists finish before the bar ever draws.
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    bar
}

fn print_list_summary(source: &str, summary: &ListSummary) {
    let label = summary
        .label
        .as_deref()
        .map(|l| format!(", rows with {l}"))
        .unwrap_or_default();
    println!("read {source} ({}{label})", summary.format);
    println!(
        "  {} rows: {} selected, {} duplicates, {} blank, {} malformed",
        fmt::count(summary.rows),
        fmt::count(summary.selected),
        fmt::count(summary.duplicates),
        fmt::count(summary.blank),
        fmt::count(summary.malformed),
    );
    for (line, reason) in &summary.malformed_examples {
        println!("    line {line}: {reason}");
    }
}

fn print_entry_summary(summary: &EntrySummary) {
    for (path, list) in &summary.files {
        print_list_summary(&path.display().to_string(), list);
    }
    println!(
        "  entries: {} domain, {} URL; {} duplicates after canonicalization, {} lines rejected",
        fmt::count(summary.domains),
        fmt::count(summary.urls),
        fmt::count(summary.duplicates),
        fmt::count(summary.rejected),
    );
    for (path, line, reason) in &summary.rejected_examples {
        println!("    {}: {line:?}: {reason}", path.display());
    }
}

fn print_filter_summary(args: &BuildArgs, filter: &AnyFilter, what: &str, started: Instant) {
    let n = filter.items();
    println!(
        "built {}: n = {} {what}, m = {} bits, k = {}, {} ({} layout, {} hash)",
        args.output.display(),
        fmt::count(n),
        fmt::count(filter.num_bits()),
        filter.num_hashes(),
        fmt::bytes(filter.size_in_bytes()),
        filter.layout(),
        filter.hash_strategy(),
    );
    println!(
        "  expected false-positive rate per probe {}, {:.2} bits/key, built in {:.2} s",
        fmt::percent(filter.theoretical_fpp(n as f64)),
        filter.num_bits() as f64 / n.max(1) as f64,
        started.elapsed().as_secs_f64(),
    );
}
