//! `phishbloom build`: a list file in, a filter file out, and a summary of what was read.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use phishbloom_filter::AnyFilter;
use phishbloom_lookup::build::{build_filter, BuildOptions};
use phishbloom_lookup::list::{read_list, Format, LabelFilter, ListOptions};
use phishbloom_lookup::{Input, KeyScheme, ListSummary};

use crate::args::{BuildArgs, FormatArg};
use crate::commands::default_threads;
use crate::fmt;

/// Reads the list, builds and saves the filter, prints the summary.
pub fn run(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let input = Input::from_arg(&args.input);
    let options = list_options(args);
    let bar = progress_bar(&input);
    let (keys, summary) = read_list(&input, &options, &mut |read| bar.set_position(read))?;
    bar.finish_and_clear();

    let build = BuildOptions {
        fpp: args.filter.fpp,
        layout: args.filter.layout.into(),
        strategy: args.filter.hash.into(),
        scheme: options.scheme,
        threads: default_threads(args.threads),
    };
    let filter = build_filter(&keys, &build)?;
    filter.save(&args.output).with_context(|| {
        format!(
            "cannot write the filter; nothing was written to {}",
            args.output.display()
        )
    })?;

    print_summary(args, &input, &summary, &filter, options.scheme, started);
    Ok(ExitCode::SUCCESS)
}

fn list_options(args: &BuildArgs) -> ListOptions {
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
        scheme: if args.exact {
            KeyScheme::Exact
        } else {
            KeyScheme::Url
        },
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

fn print_summary(
    args: &BuildArgs,
    input: &Input,
    summary: &ListSummary,
    filter: &AnyFilter,
    scheme: KeyScheme,
    started: Instant,
) {
    let source = input.display_path();
    let label = summary
        .label
        .as_deref()
        .map(|l| format!(", rows with {l}"))
        .unwrap_or_default();
    println!(
        "built {} from {} ({}{label})",
        args.output.display(),
        source.display(),
        summary.format
    );
    println!(
        "  read {} rows: {} selected, {} duplicates, {} blank, {} malformed",
        fmt::count(summary.rows),
        fmt::count(summary.selected),
        fmt::count(summary.duplicates),
        fmt::count(summary.blank),
        fmt::count(summary.malformed),
    );
    for (line, reason) in &summary.malformed_examples {
        println!("    line {line}: {reason}");
    }
    let n = filter.items();
    println!(
        "  n = {} keys, m = {} bits, k = {}, {} ({} layout, {} hash, {} keys)",
        fmt::count(n),
        fmt::count(filter.num_bits()),
        filter.num_hashes(),
        fmt::bytes(filter.size_in_bytes()),
        filter.layout(),
        filter.hash_strategy(),
        scheme.name(),
    );
    println!(
        "  expected false-positive rate {} (target {}), {:.2} bits/key, built in {:.2} s",
        fmt::percent(filter.theoretical_fpp(n as f64)),
        fmt::percent(args.filter.fpp),
        filter.num_bits() as f64 / n as f64,
        started.elapsed().as_secs_f64(),
    );
}
