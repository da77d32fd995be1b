//! `phishbloom build`: a list (or UT1 categories) in, a filter file out, and a summary of what
//! was read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use phishbloom_blocklist::atomic::check_output;
use phishbloom_blocklist::blocklist::{now, Engine};
use phishbloom_blocklist::engine::per_probe_fpp;
use phishbloom_blocklist::entries::{read_entries, EntrySource, EntrySummary};
use phishbloom_blocklist::fmt;
use phishbloom_blocklist::source::{read_list, Format, LabelFilter, ListOptions};
use phishbloom_blocklist::{Blocklist, BuildOptions, Input, KeyScheme, Kind, ListSummary};
use phishbloom_filter::{Filter, HashStrategy, LayoutKind};

use crate::args::{BuildArgs, EngineArg, FormatArg};
use crate::commands::default_threads;

/// Reads the list, builds and saves the blocklist, prints the summary.
pub fn run(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // Refuse an output that must not be replaced before spending time on the input (the
    // inputs are compared again when the file is written).
    check_output(&args.output, &[])?;
    let kind = match (args.engine, LayoutKind::from(args.filter.layout)) {
        (EngineArg::Cabf, _) => Kind::Cabf,
        (EngineArg::Bloom, LayoutKind::Blocked) => Kind::Blocked,
        (EngineArg::Bloom, LayoutKind::Classic) => Kind::Classic,
    };
    let options = BuildOptions {
        kind,
        fpp: args.filter.fpp,
        expression_bound: args.expressions,
        strategy: args.filter.hash.into(),
        verify: args.verify,
        threads: default_threads(args.threads),
        name: list_name(args),
        version: next_version(&args.output),
        created: now(),
    };
    if let Some(list) = &args.keywords {
        return crate::commands::scan::build(args, list, &options, started);
    }
    let (blocklist, inputs) = if args.exact {
        // `--exact` conflicts with `--ut1`, so clap guarantees the positional input.
        let input = Input::from_arg(args.input.as_deref().unwrap_or("-"));
        let bar = progress_bar(&input);
        let (keys, summary) =
            read_list(&input, &list_options(args, KeyScheme::Exact), &mut |read| {
                bar.set_position(read)
            })?;
        bar.finish_and_clear();
        print_list_summary(&input.display_path().display().to_string(), &summary);
        let inputs: Vec<PathBuf> = input.file().map(Path::to_path_buf).into_iter().collect();
        (
            Blocklist::from_keys(&keys, KeyScheme::Exact, &options)?,
            inputs,
        )
    } else {
        if HashStrategy::from(args.filter.hash) != HashStrategy::Xxh3 {
            anyhow::bail!(
                "--hash sha256 is only available with --exact (whole keys); URL entries are \
                 hashed with xxh3, one hash per host suffix and per path prefix"
            );
        }
        let mut sources = Vec::new();
        if let Some(input) = &args.input {
            sources.push(EntrySource::List(
                Input::from_arg(input),
                list_options(args, KeyScheme::Expressions),
            ));
        }
        sources.extend(args.ut1.iter().cloned().map(EntrySource::Ut1));
        let (entries, summary) = read_entries(&sources)?;
        print_entry_summary(&summary);
        let inputs: Vec<PathBuf> = sources.iter().flat_map(EntrySource::files).collect();
        (Blocklist::from_entries(&entries, &options)?, inputs)
    };
    blocklist.save(&args.output, &inputs).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            args.output.display()
        )
    })?;
    print_summary(args, &blocklist, started);
    Ok(ExitCode::SUCCESS)
}

/// The list's name: `--name`, else the output file's stem.
fn list_name(args: &BuildArgs) -> String {
    args.name.clone().unwrap_or_else(|| {
        args.output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "list".into())
    })
}

/// The version of a rebuilt list: one more than the file it replaces (when that is a readable
/// blocklist), so that clients and servers see the list move forward; 1 for a new list.
/// (`run` checked that the output is a regular file or absent, so reading it cannot block.)
fn next_version(output: &Path) -> u64 {
    Blocklist::read_meta(output).map_or(1, |(_, meta)| meta.version.saturating_add(1))
}

fn list_options(args: &BuildArgs, scheme: KeyScheme) -> ListOptions {
    let label = match (&args.label_column, &args.label_value, args.all_rows) {
        (_, _, true) => LabelFilter::All,
        (Some(column), Some(value), _) => LabelFilter::Equals {
            column: column.clone(),
            value: value.clone(),
        },
        (None, Some(value), _) => LabelFilter::Equals {
            column: phishbloom_blocklist::source::DEFAULT_LABEL.0.to_string(),
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

pub(crate) fn print_list_summary(source: &str, summary: &ListSummary) {
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

pub(crate) fn print_summary(args: &BuildArgs, blocklist: &Blocklist, started: Instant) {
    let meta = blocklist.meta();
    let what = match meta.scheme {
        KeyScheme::Expressions => "URL entries",
        _ => "exact keys",
    };
    match blocklist.engine() {
        Engine::Cabf(engine) => println!(
            "built {}: CaBF engine, {} {what} in {} parallel filters + check filter, {} ({} bits)",
            args.output.display(),
            fmt::count(meta.entries),
            engine.component_filters(),
            fmt::bytes(engine.bits() / 8),
            fmt::count(engine.bits()),
        ),
        Engine::Keys(filter) => print_filter(args, &**filter, meta.entries, what),
        Engine::Urls(urls) => print_filter(args, &**urls.filter(), meta.entries, what),
        Engine::Keywords(engine) => {
            print_filter(args, &**engine.filter(), meta.entries, "keywords")
        }
    }
    println!(
        "  list {:?} version {}, set fingerprint {}, built in {:.2} s{}",
        meta.name,
        meta.version,
        meta.fingerprint,
        started.elapsed().as_secs_f64(),
        if blocklist.verification().is_some() {
            "; verification section included (hits are confirmed exactly)"
        } else {
            ""
        }
    );
    if meta.scheme == KeyScheme::Expressions {
        println!(
            "  per checked URL: target {} at up to {} expressions, so {} per probe",
            fmt::percent(args.filter.fpp),
            args.expressions,
            fmt::percent(per_probe_fpp(args.filter.fpp, args.expressions)),
        );
    }
}

fn print_filter(args: &BuildArgs, filter: &dyn Filter, entries: u64, what: &str) {
    println!(
        "built {}: n = {} {what}, m = {} bits, k = {}, {} ({} layout, {} hash)",
        args.output.display(),
        fmt::count(entries),
        fmt::count(filter.num_bits()),
        filter.num_hashes(),
        fmt::bytes(filter.size_in_bytes()),
        filter.layout(),
        filter.hash_strategy(),
    );
    println!(
        "  expected false-positive rate per probe {}, {:.2} bits/key",
        fmt::percent(filter.theoretical_fpp(entries as f64)),
        filter.num_bits() as f64 / entries.max(1) as f64,
    );
}
