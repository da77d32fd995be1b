//! `phishbloom build`: a list (or UT1 categories, or a keyword list for `scan`) in, a filter
//! file out, and a summary of what was read.

use phishbloom_blocklist::BlocklistFile;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use phishbloom_blocklist::atomic::check_output;
use phishbloom_blocklist::build::{apply_never, category_of, entry_sources, read_key_groups};
use phishbloom_blocklist::entries::{read_entries, EntrySource, EntrySummary};
use phishbloom_blocklist::file::check_room;
use phishbloom_blocklist::keywords::{build_keywords, KeywordOptions};
use phishbloom_blocklist::now;
use phishbloom_blocklist::plan_check::{BuildPlan, PlanError, PlanField, PlanRule};
use phishbloom_blocklist::source::{Format, LabelFilter, ListOptions};
use phishbloom_blocklist::stream::read_hashed;
use phishbloom_blocklist::{Input, ListSummary};
use phishbloom_core::engine::per_probe_fpp;
use phishbloom_core::engine::DEFAULT_EXPRESSION_BOUND;
use phishbloom_core::fmt;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::Engine;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Kind, NeverReport};
use phishbloom_filter::Filter;

use clap::ValueEnum;
use phishbloom_blocklist::documents::DocumentFormat;
use phishbloom_blocklist::near::{expand_inputs, learn_boilerplate, read_near_docs};
use phishbloom_core::near::{NearInfo, NearMethod, DEFAULT_DISTANCE};
use phishbloom_core::structure::Layers;
use phishbloom_core::NearOptions;
use phishbloom_text::minhash::MinHashParams;
use phishbloom_text::simhash::{SimHashParams, Weighting};

use crate::args::{BuildArgs, FormatArg, NearMethodArg, WeightingArg};
use crate::commands::default_threads;

/// Reads the lists, builds and saves the blocklist, prints the summary.
pub fn run(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // Refuse an output that must not be replaced, and flags that do not apply, before spending
    // time on the input (the inputs are compared with the output again when it is written).
    check_output(&args.output, &[])?;
    check_flags(args)?;
    let options = build_options(args);
    if let Some(list) = &args.keywords {
        return build_keywords_list(args, list, &options, started);
    }
    if args.near {
        return build_near_list(args, &options, started);
    }
    let inputs: Vec<Input> = args.inputs.iter().map(|i| Input::from_arg(i)).collect();
    let (blocklist, files) = if args.exact {
        build_keys(args, &inputs, &options)?
    } else {
        build_entries(args, &inputs, &options)?
    };
    if !args.force {
        check_room(&blocklist, &args.output)?;
    }
    blocklist.save(&args.output, &files).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            args.output.display()
        )
    })?;
    print_summary(args, &blocklist, started);
    Ok(ExitCode::SUCCESS)
}

/// The build options the flags give.
fn build_options(args: &BuildArgs) -> BuildOptions {
    BuildOptions {
        kind: Kind::from(args.kind),
        fpp: args.filter.fpp_for(Kind::from(args.kind)),
        expression_bound: args.expressions.unwrap_or(DEFAULT_EXPRESSION_BOUND),
        strategy: args.filter.hash.into(),
        verify: args.verify,
        threads: default_threads(args.threads),
        name: list_name(args),
        version: next_version(&args.output),
        created: now(),
        capacity: args.capacity,
        grow: args.grow,
        force: args.force,
        host_gate: !args.no_host_gate,
    }
}

/// `build --exact`: a blocklist of whole keys, and the files read.
fn build_keys(
    args: &BuildArgs,
    inputs: &[Input],
    options: &BuildOptions,
) -> anyhow::Result<(Blocklist, Vec<PathBuf>)> {
    let scheme = scheme(args);
    let files: Vec<PathBuf> = inputs
        .iter()
        .filter_map(Input::file)
        .map(Path::to_path_buf)
        .collect();
    let Some(input) = streamed(args, inputs, options) else {
        return Ok((in_memory(args, inputs, scheme, options)?, files));
    };
    // One list of whole keys: read as it arrives, its hashes spilled to temporary files (see
    // `phishbloom_blocklist::stream`), never held in memory.
    let bar = progress_bar(input);
    let (keys, summary) = read_hashed(
        input,
        &list_options(args, scheme),
        options.threads,
        &mut |read| bar.set_position(read),
    )?;
    bar.finish_and_clear();
    print_list_summary(&input.display_path().display().to_string(), &summary);
    let category = category_of(args.category.as_deref(), input);
    let blocklist = Blocklist::from_hashed_keys(&keys, &category, scheme, options)?;
    // The temporary files go before the output is written.
    drop(keys);
    Ok((blocklist, files))
}

/// A blocklist of URL entries (lists, UT1 categories and allow lists), and the files read.
fn build_entries(
    args: &BuildArgs,
    inputs: &[Input],
    options: &BuildOptions,
) -> anyhow::Result<(Blocklist, Vec<PathBuf>)> {
    let allow: Vec<Input> = args.allow.iter().map(|a| Input::from_arg(a)).collect();
    let sources = entry_sources(
        inputs,
        &list_options(args, KeyScheme::Expressions),
        args.category.as_deref(),
        &args.ut1,
        &allow,
    );
    let (set, summary) = read_entries(&sources)?;
    print_entry_summary(&summary, &set);
    public_suffixes(&summary, args.strict)?;
    let mut files: Vec<PathBuf> = sources.iter().flat_map(EntrySource::files).collect();
    let mut blocklist = Blocklist::from_entries(&set, options)?;
    if let Some(never) = &args.never {
        let report = apply_never(&mut blocklist, &set, never)?;
        print_never(&report, never, &blocklist);
        files.push(never.clone());
    }
    Ok((blocklist, files))
}

/// `build --never FILE`: what the never-warn list did.
fn print_never(report: &NeverReport, path: &Path, blocklist: &Blocklist) {
    println!(
        "  never-warn: {} members of {} answer clean ({} not URLs); {} false positive(s) \
         overruled, {:.2} bits per entry",
        fmt::count(report.members),
        path.display(),
        fmt::count(report.invalid),
        fmt::count(report.excluded),
        phishbloom_core::never_bits_per_entry(report.excluded, blocklist.meta().entries)
    );
}

/// `build --keywords LIST`: reads, normalizes and builds, saves, prints the summary.
fn build_keywords_list(
    args: &BuildArgs,
    list: &str,
    options: &BuildOptions,
    started: Instant,
) -> anyhow::Result<ExitCode> {
    let input = Input::from_arg(list);
    let spill_dir = match args.output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (blocklist, summary) = build_keywords(
        &input,
        options,
        &KeywordOptions {
            probes_per_doc: args.probes_per_doc,
            spill_dir,
        },
        &mut |_| {},
    )?;
    print_list_summary(&input.display_path().display().to_string(), &summary.list);
    let inputs: Vec<PathBuf> = input.file().map(Path::to_path_buf).into_iter().collect();
    blocklist.save(&args.output, &inputs).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            args.output.display()
        )
    })?;
    print_summary(args, &blocklist, started);
    let lengths: Vec<String> = summary
        .lengths
        .0
        .iter()
        .map(|(len, _)| len.to_string())
        .collect();
    println!(
        "  phrase lengths {} tokens; per scanned document: target {} at up to {} probes, so {} \
         per probe",
        lengths.join(", "),
        fmt::percent(args.filter.fpp_for(Kind::from(args.kind))),
        fmt::count(u64::from(summary.probes_per_doc)),
        fmt::percent(per_probe_fpp(
            args.filter.fpp_for(Kind::from(args.kind)),
            summary.probes_per_doc
        )),
    );
    Ok(ExitCode::SUCCESS)
}

/// `build --near DOCS…`: reads and fingerprints the documents, builds the tables, saves, prints
/// the summary.
fn build_near_list(
    args: &BuildArgs,
    options: &BuildOptions,
    started: Instant,
) -> anyhow::Result<ExitCode> {
    let format =
        match args.format {
            FormatArg::Auto => DocumentFormat::Auto,
            FormatArg::Lines => DocumentFormat::Lines,
            other => anyhow::bail!(
            "--format {} reads blocklist entries; with --near, documents are recognized by their \
             content (e-mail, mbox, HTML, text), or pass --format lines for one document per line",
            other.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
        ),
        };
    let inputs: Vec<PathBuf> = args.inputs.iter().map(PathBuf::from).collect();
    let method = near_method(args, &inputs, format)?;
    let near = NearOptions {
        method: method.clone(),
        created: options.created,
    };
    let (docs, summary) = read_near_docs(&inputs, format, &method, args.category.as_deref())?;
    for problem in &summary.problems {
        eprintln!("phishbloom: warning: skipped a document: {problem}");
    }
    let (mut blocklist, change) = Blocklist::from_near(&options.name, &near, docs)?;
    blocklist.set_version(options.version);
    let files = expand_inputs(&inputs)?;
    blocklist.save(&args.output, &files).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            args.output.display()
        )
    })?;
    println!(
        "read {} file(s): {} documents ({} too short for {}, kept by an exact hash), {} \
         skipped, {} with a name seen before (the last kept)",
        fmt::count(summary.files),
        fmt::count(summary.documents),
        fmt::count(summary.exact),
        match method {
            NearMethod::MinHash { .. } => "a sketch",
            NearMethod::SimHash { .. } => "SimHash",
        },
        fmt::count(summary.skipped),
        fmt::count(change.unchanged),
    );
    print_summary(args, &blocklist, started);
    Ok(ExitCode::SUCCESS)
}

/// `words (tf)` or `3-token shingles (set)`: what a near-duplicate fingerprint sums.
/// The method `build --near` prints documents with: MinHash sketches (the boilerplate learned
/// from the documents of `inputs` first) or SimHash, from the flags; SimHash's own flags are
/// refused with MinHash.
fn near_method(
    args: &BuildArgs,
    inputs: &[PathBuf],
    format: DocumentFormat,
) -> anyhow::Result<NearMethod> {
    if args.near_method == NearMethodArg::Minhash {
        let simhash_only = [
            ("--max-distance", args.max_distance.is_some()),
            ("--blocks", args.blocks.is_some()),
            ("--check-shingle", args.check_shingle.is_some()),
            ("--check-distance", args.check_distance.is_some()),
            ("--min-tokens", args.min_tokens.is_some()),
            ("--weighting", args.weighting.is_some()),
        ];
        if let Some((flag, _)) = simhash_only.iter().find(|(_, given)| *given) {
            anyhow::bail!(
                "{flag} applies to SimHash lists: pass --near-method simhash with it (a MinHash \
                 list's match threshold follows from its sketches: see `phishbloom info`)"
            );
        }
        let params = MinHashParams {
            shingle: args.shingle.unwrap_or(MinHashParams::default().shingle),
            ..MinHashParams::default()
        };
        let boilerplate = learn_boilerplate(inputs, format, &params)?;
        return Ok(NearMethod::MinHash {
            params,
            boilerplate,
        });
    }
    let defaults = SimHashParams::default();
    let check_shingle = args.check_shingle.unwrap_or(defaults.check_shingle);
    let distance = args.max_distance.unwrap_or(DEFAULT_DISTANCE);
    Ok(NearMethod::SimHash {
        params: SimHashParams {
            shingle: args.shingle.unwrap_or(defaults.shingle),
            check_shingle,
            check_distance: match check_shingle {
                0 => 0,
                _ => args.check_distance.unwrap_or(defaults.check_distance),
            },
            min_tokens: args.min_tokens.unwrap_or(defaults.min_tokens),
            weighting: match args.weighting {
                Some(WeightingArg::Tf) => Weighting::Tf,
                Some(WeightingArg::Set) => Weighting::Set,
                None => defaults.weighting,
            },
        },
        distance,
        blocks: args.blocks.unwrap_or(distance + 1),
    })
}

/// Whether the --exact build streams its list (`phishbloom_blocklist::stream`): one LIST whose
/// keys form one category, in a structure built from key hashes
/// ([`Blocklist::builds_from_hashes`]). Returns that input. Several lists, categories from a
/// CSV column and the other structures read every key into memory.
fn streamed<'a>(
    args: &BuildArgs,
    inputs: &'a [Input],
    options: &BuildOptions,
) -> Option<&'a Input> {
    match inputs {
        [input] if Blocklist::builds_from_hashes(options) && args.category_column.is_none() => {
            Some(input)
        }
        _ => None,
    }
}

/// The --exact build of several lists (or categories from a CSV column, or a structure that is
/// not built from hashes): every list's distinct keys read into memory, one group per category.
fn in_memory(
    args: &BuildArgs,
    inputs: &[Input],
    scheme: KeyScheme,
    options: &BuildOptions,
) -> anyhow::Result<Blocklist> {
    // The lists are read in order: one bar each, finished when its summary comes.
    let bars: Vec<ProgressBar> = inputs.iter().map(progress_bar).collect();
    let current = std::cell::Cell::new(0);
    let groups = read_key_groups(
        inputs,
        &list_options(args, scheme),
        args.category.as_deref(),
        &mut |_, read| bars[current.get()].set_position(read),
        &mut |input, summary| {
            bars[current.get()].finish_and_clear();
            current.set(current.get() + 1);
            print_list_summary(&input.display_path().display().to_string(), summary);
        },
    )?;
    Ok(Blocklist::from_keys(&groups, scheme, options)?)
}

/// Refuses flags that do not apply to the chosen mode: a flag is never silently ignored. The
/// rules between build options are the library's ([`BuildPlan::check`]); the ones about the
/// command line's own arguments (CSV options, LIST arguments) are here.
fn check_flags(args: &BuildArgs) -> anyhow::Result<()> {
    let plan = BuildPlan {
        scheme: scheme(args),
        fold_case: args.fold_case,
        kind: args.kind.into(),
        strategy: args.filter.hash.into(),
        grow: args.grow,
        capacity: args.capacity,
        expression_bound: args.expressions,
    };
    plan.check().map_err(plan_error)?;
    let refuse = |flag: &str, why: &str| Err(anyhow::anyhow!("{flag} {why}"));
    let format = Format::from(args.format);
    if let Some(forced) = format.forced().filter(|f| f.is_entry_format()) {
        if args.exact || args.keywords.is_some() {
            return refuse(
                &format!("--format {}", forced.name()),
                "reads domain and URL entries; a list of whole keys or keywords is read as \
                 lines or csv (leave out --exact, or pass --format lines or csv)",
            );
        }
    }
    let url_entries = !(args.exact || args.keywords.is_some() || args.near);
    if args.no_host_gate && (!url_entries || Kind::from(args.kind) == Kind::Cabf) {
        return refuse(
            "--no-host-gate",
            "applies to lists of URL entries in a Bloom, cuckoo or counting filter (leave it out)",
        );
    }
    let csv_inputs = args
        .inputs
        .iter()
        .any(|input| format.reads_as_csv(&Input::from_arg(input)));
    let csv_flags = [
        ("--column", args.column != "url"),
        ("--label-column", args.label_column.is_some()),
        ("--label-value", args.label_value.is_some()),
        ("--all-rows", args.all_rows),
        ("--category-column", args.category_column.is_some()),
    ];
    if !csv_inputs {
        if let Some((flag, _)) = csv_flags.iter().find(|(_, given)| *given) {
            return refuse(
                flag,
                "applies to CSV lists; no LIST is read as CSV (name it .csv, or pass --format \
                 csv, phishtank or urlhaus)",
            );
        }
    }
    if args.inputs.is_empty() && args.category.is_some() {
        return refuse(
            "--category",
            "names the category of the LIST arguments; UT1 folders are named by their folder",
        );
    }
    Ok(())
}

/// What the list holds: keywords, whole keys (compared with or without case) or URL entries.
fn scheme(args: &BuildArgs) -> KeyScheme {
    match (args.keywords.is_some(), args.exact, args.fold_case) {
        (true, _, _) => KeyScheme::Keywords,
        (false, true, true) => KeyScheme::Folded,
        (false, true, false) => KeyScheme::Exact,
        (false, false, _) => KeyScheme::Expressions,
    }
}

/// The library's refusal of a build option, in the command line's words: its flag (and value),
/// and the flag that the option needs when there is one.
fn plan_error(error: PlanError) -> anyhow::Error {
    let flag = match error.field {
        PlanField::Kind => "--kind",
        PlanField::Strategy => "--hash",
        PlanField::FoldCase => "--fold-case",
        PlanField::Grow => "--grow",
        PlanField::Capacity => "--capacity",
        PlanField::ExpressionBound => "--expressions",
    };
    let value = error.value.map(|v| format!(" {v}")).unwrap_or_default();
    let needs = match error.rule {
        PlanRule::FoldCaseIsForKeys | PlanRule::Sha256IsForKeys => "; pass --exact for whole keys",
        _ => "",
    };
    anyhow::anyhow!("{flag}{value} {}{needs}", error.rule)
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
    let label = LabelFilter::from_options(
        args.label_column.as_deref(),
        args.label_value.as_deref(),
        args.all_rows,
    );
    ListOptions {
        format: args.format.into(),
        key_column: args.column.clone(),
        label,
        scheme,
        category_column: args.category_column.clone(),
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
    if let Some(skipped) = summary.skipped_text() {
        println!("  skipped: {skipped}");
    }
    if summary.exceptions > 0 {
        println!(
            "  exceptions in the list: {} (@@ rules)",
            fmt::count(summary.exceptions)
        );
    }
    for (line, reason) in &summary.malformed_examples {
        println!("    line {line}: {reason}");
    }
}

fn print_entry_summary(summary: &EntrySummary, set: &EntrySet) {
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
    let categories: Vec<String> = set
        .categories
        .iter()
        .enumerate()
        .map(|(id, name)| format!("{name} {}", fmt::count(set.count_in(id as u16))))
        .collect();
    println!("  categories: {}", categories.join(", "));
    if !set.exceptions.is_empty() {
        println!("  exceptions: {}", fmt::count(set.exceptions.len() as u64));
    }
    for (path, line, reason) in &summary.rejected_examples {
        println!("    {}: {line:?}: {reason}", path.display());
    }
}

/// Warns about entries that are public suffixes (each lists a whole registry), or with
/// `--strict` refuses them.
fn public_suffixes(summary: &EntrySummary, strict: bool) -> anyhow::Result<()> {
    if summary.public_suffixes == 0 {
        return Ok(());
    }
    let examples: Vec<String> = summary
        .public_suffix_examples
        .iter()
        .map(|(path, entry)| format!("{entry:?} ({})", path.display()))
        .collect();
    let are = match summary.public_suffixes {
        1 => "entry is a public suffix".to_string(),
        n => format!("{} entries are public suffixes", fmt::count(n)),
    };
    let what = format!(
        "{are}, each listing every site registered under it: {}",
        examples.join(", ")
    );
    if strict {
        anyhow::bail!("{what}; take them out of the list (or build without --strict)");
    }
    eprintln!("phishbloom: warning: {what} (--strict refuses them)");
    Ok(())
}

fn print_summary(args: &BuildArgs, blocklist: &Blocklist, started: Instant) {
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
        Engine::Keywords(engine) => {
            print_filter(args, &**engine.filter(), meta.entries, "keywords")
        }
        Engine::Near(engine) => print_near(args, &engine.info(), meta.entries),
        _ => match (blocklist.filter(), blocklist.layers()) {
            (Some(filter), _) => print_filter(args, &**filter, meta.entries, what),
            (None, Some(layers)) => print_layers(args, blocklist, layers, what),
            (None, None) => {}
        },
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
            fmt::percent(args.filter.fpp_for(Kind::from(args.kind))),
            meta.probes_per_item,
            fmt::percent(per_probe_fpp(
                args.filter.fpp_for(Kind::from(args.kind)),
                meta.probes_per_item
            )),
        );
    }
}

/// The summary lines of a near-duplicate list of `entries` documents.
fn print_near(args: &BuildArgs, info: &NearInfo, entries: u64) {
    println!(
        "built {}: {} documents, near-duplicates by {}",
        args.output.display(),
        fmt::count(entries),
        match info.method {
            "minhash" => "MinHash sketches",
            _ => "SimHash",
        }
    );
    super::info::print_near_info(info);
}

/// The summary lines of a list of `what` in layers: the list, then each layer.
fn print_layers(args: &BuildArgs, blocklist: &Blocklist, layers: &Layers, what: &str) {
    let entries = blocklist.meta().entries;
    println!(
        "built {}: {} {what} in a {} filter{}, {}",
        args.output.display(),
        fmt::count(entries),
        blocklist.kind(),
        if layers.grows() {
            " that grows when full"
        } else {
            ""
        },
        fmt::bytes(layers.size_in_bytes()),
    );
    for layer in layers.describe() {
        println!(
            "  {}: {} of {} entries, {} ({:.2} bits/entry sized)",
            layer.structure,
            fmt::count(layer.items),
            fmt::count(layer.capacity),
            fmt::bytes(layer.bytes),
            layer.bytes as f64 * 8.0 / layer.capacity.max(1) as f64,
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
