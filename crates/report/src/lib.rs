//! The phishbloom report: runs every measurement of the report (in `phishbloom_lab::measure`) and
//! renders what they return as a Markdown report with SVG plots and the CSV behind each figure
//! and table — theory printed beside every measurement. Nothing here measures: this crate turns
//! the lab's typed results into text, tables and figures and writes them.
//!
//! # Modules
//! - [`sections`] — one renderer per section of the report.
//! - [`context`] — the output directory, the files written, the Markdown helpers.
//! - [`output`] — CSV tables and the atomic text writer.
//! - [`plot`] — SVG panels with error bars on linear and log axes.
//! - [`cabf`] — the write-up of the CaBF experiment (`phishbloom-lab experiment cabf`).
//!
//! The `phishbloom-lab` binary (crate `phishbloom-lab-cli`) runs both.
//!
//! # Sections
//! 1. Sizing — the formulas and the dataset's n, m, k, bytes; seed 000's and 002's figures.
//! 2. The dataset experiment — false negatives, false positives on benign and random URLs.
//! 3. Rate vs k at m/n = 10, 20, 30, and seed 001's table measured.
//! 4. Rate vs bits per key beside the information-theoretic bound.
//! 5. Hash strategies — SHA-256 per index vs xxh3 double hashing.
//! 6. Seed 004's memory table with a hash set and a fingerprint table.
//! 7. Seed 002 at full scale: 10⁸ keys.
//! 8. Lists that change: bits per key against p of the kinds that delete, their
//!    speed beside peers, delta sizes on UT1 against the targets, the time to apply a delta.
//! 9. Scanning e-mail for keywords: keyword lists beside aho-corasick.
//! 10. Near-duplicate mails and pages: SimHash's shingle width, weighting and
//!     short-text threshold chosen on real prose, MinHash-LSH and brute force beside it, and
//!     Manku's tables at 10⁷ fingerprints ([`run_near`] runs this section alone).
//! 11. Compact lists against their peers: phishbloom's verified and compact lists, Safe
//!     Browsing v4's Rice-coded prefixes and binary fuse filters on UT1 and domain lists
//!     ([`run_peers`] runs this section alone).
//! 12. Threats to validity.
//!
//! # Example
//! ```no_run
//! use phishbloom_report::{run, ReportOptions};
//!
//! let summary = run(&ReportOptions {
//!     out: "docs/report".into(),
//!     quick: true,
//!     ..ReportOptions::default()
//! })?;
//! println!("{} files in {:.1} s", summary.files.len(), summary.elapsed.as_secs_f64());
//! # Ok::<(), phishbloom_report::Error>(())
//! ```

#![warn(missing_docs)]

/// The command line of the lab binary from the repository root followed by `$rest` (a literal):
/// the one spelling that every command a written file names starts with.
macro_rules! lab_command {
    ($rest:literal) => {
        concat!("cargo run --release -p phishbloom-lab-cli -- ", $rest)
    };
}

pub mod cabf;
pub mod context;
mod error;
pub mod output;
pub mod plot;
pub mod sections;

use std::path::PathBuf;
use std::time::Duration;

pub use error::{Error, Result};

use context::Context;
use phishbloom_lab::measure::{self, machine, timed, Settings};
use sections::{
    changes, dataset, hashing, keywords, memory, near, peers, scale, sizing, sweeps, validity,
};

/// What to run and where to write it.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Directory for README.md, the SVG plots and the CSV files (created if missing).
    pub out: PathBuf,
    /// Shrink every experiment so the whole report runs in well under a minute.
    pub quick: bool,
    /// The labelled dataset (`url,isMalicious`).
    pub data: PathBuf,
    /// Threads for the lab to insert and query with; 0 means every core the OS reports.
    pub threads: usize,
    /// Print a progress line per step to standard error.
    pub verbose: bool,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            out: PathBuf::from("docs/report"),
            quick: false,
            data: PathBuf::from("../shared/data/dataset.csv"),
            threads: 0,
            verbose: false,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct ReportSummary {
    /// Every file written, README.md last.
    pub files: Vec<PathBuf>,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// Wall time of each section, by title.
    pub sections: Vec<(String, Duration)>,
    /// One line per headline result.
    pub headlines: Vec<String>,
}

/// The command line that produces the report in the given mode.
pub fn command_line(quick: bool) -> &'static str {
    if quick {
        lab_command!("report --quick")
    } else {
        lab_command!("report")
    }
}

/// Runs every experiment and writes the report into `options.out`.
pub fn run(options: &ReportOptions) -> Result<ReportSummary> {
    if !options.data.is_file() {
        return Err(Error::MissingDataset {
            path: options.data.clone(),
            cwd: std::env::current_dir().unwrap_or_default(),
        });
    }
    let load_at_start = machine::load_average();
    let mut ctx = start(options)?;
    let mut timings = Vec::new();
    let mut body = dataset_sections(&mut ctx, &mut timings, options)?;
    body.extend(generated_sections(&mut ctx, &mut timings)?);
    let md = section(&mut timings, "12. Threats to validity", || {
        let load_now = machine::load_average();
        Ok(validity::render(
            &ctx,
            load_at_start.as_deref(),
            load_now.as_deref(),
        ))
    })?;
    body.push(md);

    let elapsed = ctx.settings.progress.elapsed();
    let readme = readme(&ctx, &body, &timings, elapsed);
    ctx.write("README.md", &readme)?;
    Ok(ReportSummary {
        files: ctx.files,
        elapsed,
        sections: timings,
        headlines: ctx.headlines,
    })
}

/// The error of a failed measurement in `section`.
fn lab(section: &'static str) -> impl Fn(phishbloom_lab::Error) -> Error {
    move |source| Error::Measurement {
        section,
        source: Box::new(source),
    }
}

/// Sections 1–5, which measure on the keys of the dataset: their Markdown, in order.
fn dataset_sections(
    ctx: &mut Context,
    timings: &mut Vec<(String, Duration)>,
    options: &ReportOptions,
) -> Result<Vec<String>> {
    let dataset_error = |source| Error::Dataset {
        path: options.data.clone(),
        source: Box::new(source),
    };
    let mut body = Vec::new();
    // Each section: the lab measures, the section renders; the time covers both.
    let (keys, md) = section(timings, "1. Sizing", || {
        let keys = measure::dataset::read_keys(&options.data, usize::MAX).map_err(dataset_error)?;
        let sized = measure::sizing::run(keys.phishing.len() as u64).map_err(lab("sizing"))?;
        Ok((keys, sizing::render(ctx, &sized)?))
    })?;
    body.push(md);
    body.push(section(timings, "2. The dataset experiment", || {
        let data = measure::dataset::run(&ctx.settings, &keys.phishing).map_err(dataset_error)?;
        dataset::render(ctx, &data)
    })?);
    body.push(section(timings, "3. Rate vs k", || {
        let points = measure::sweeps::rate_vs_k(&ctx.settings).map_err(lab("rate vs k"))?;
        sweeps::rate_vs_k(ctx, &points)
    })?);
    body.push(section(timings, "4. Rate vs bits per key", || {
        let points =
            measure::sweeps::rate_vs_bits(&ctx.settings).map_err(lab("rate vs bits per key"))?;
        sweeps::rate_vs_bits(ctx, &points)
    })?);
    body.push(section(timings, "5. Hash strategies", || {
        let result = measure::hashing::run(&ctx.settings, &keys).map_err(lab("hash strategies"))?;
        hashing::render(ctx, &result)
    })?);
    Ok(body)
}

/// Sections 6–11, which measure on generated keys and texts (section 11 also on UT1 beside
/// the dataset): their Markdown, in order.
fn generated_sections(
    ctx: &mut Context,
    timings: &mut Vec<(String, Duration)>,
) -> Result<Vec<String>> {
    let mut body = Vec::new();
    body.push(section(timings, "6. Memory", || {
        let result = measure::memory::run(&ctx.settings).map_err(lab("memory"))?;
        memory::render(ctx, &result)
    })?);
    body.push(section(timings, "7. Seed 002 at full scale", || {
        let result = measure::scale::run(&ctx.settings).map_err(lab("seed 002 at scale"))?;
        scale::render(ctx, &result)
    })?);
    body.push(section(timings, "8. Lists that change", || {
        let result = measure::changes::run(&ctx.settings).map_err(lab("lists that change"))?;
        changes::render(ctx, &result)
    })?);
    body.push(section(timings, "9. Scanning e-mail for keywords", || {
        let result = measure::keywords::run(&ctx.settings).map_err(lab("keywords"))?;
        keywords::render(ctx, &result)
    })?);
    body.push(section(
        timings,
        "10. Near-duplicate mails and pages",
        || {
            let result = measure::near::run(&ctx.settings).map_err(lab("near-duplicates"))?;
            near::render(ctx, &result)
        },
    )?);
    body.push(section(timings, PEERS_TITLE, || {
        let result = measure::peers::run(&ctx.settings).map_err(lab("peers"))?;
        peers::render(ctx, &result)
    })?);
    Ok(body)
}

/// The title of the peers section.
const PEERS_TITLE: &str = "11. Compact lists against their peers";

/// Runs the peers section alone and writes its CSV, figure and `peers.md` (the section's
/// Markdown) into `options.out`; the full report ([`run`]) includes the same section in its
/// README.md.
pub fn run_peers(options: &ReportOptions) -> Result<ReportSummary> {
    let mut ctx = start(options)?;
    let mut timings = Vec::new();
    let load_at_start = machine::load_average();
    let md = section(&mut timings, PEERS_TITLE, || {
        let result = measure::peers::run(&ctx.settings).map_err(lab("peers"))?;
        peers::render(&mut ctx, &result)
    })?;
    let load_now = machine::load_average();
    let header = format!(
        "# phishbloom: compact lists against their peers, measured\n\nSection 11 of the \
         measured report, written alone by `{}{}`{} in {:.0} s on {} thread(s) (load average \
         {} at the start, {} at the end).\n\n",
        peers::COMMAND,
        if options.quick { " --quick" } else { "" },
        if options.quick {
            " (small sizes: not the committed figures)"
        } else {
            ""
        },
        ctx.settings.progress.elapsed().as_secs_f64(),
        ctx.settings.threads,
        load_at_start.as_deref().unwrap_or("unknown"),
        load_now.as_deref().unwrap_or("unknown"),
    );
    ctx.write("peers.md", &format!("{header}{md}"))?;
    Ok(ReportSummary {
        files: ctx.files,
        elapsed: ctx.settings.progress.elapsed(),
        sections: timings,
        headlines: ctx.headlines,
    })
}

/// The output folder, created, and the context every section writes through.
fn start(options: &ReportOptions) -> Result<Context> {
    std::fs::create_dir_all(&options.out).map_err(|source| Error::CreateDir {
        path: options.out.clone(),
        source,
    })?;
    Ok(Context {
        out: options.out.clone(),
        settings: Settings::new(
            options.data.clone(),
            options.quick,
            options.threads,
            options.verbose,
        ),
        files: Vec::new(),
        headlines: Vec::new(),
    })
}

/// Runs the near-duplicate section alone and writes its CSV files and `near.md` (the
/// section's Markdown) into `options.out`; the full report ([`run`]) includes the same section
/// in its README.md.
pub fn run_near(options: &ReportOptions) -> Result<ReportSummary> {
    let mut ctx = start(options)?;
    let mut timings = Vec::new();
    let md = section(&mut timings, "10. Near-duplicate mails and pages", || {
        let result = measure::near::run(&ctx.settings).map_err(lab("near-duplicates"))?;
        near::render(&mut ctx, &result)
    })?;
    let header =
        format!(
        "# phishbloom: near-duplicates, measured\n\nSection 10 of the measured report, written \
         alone by `{}`{} in {:.0} s on {} thread(s).\n\n",
        near::COMMAND,
        if options.quick { " --quick (small sizes: not the committed figures)" } else { "" },
        ctx.settings.progress.elapsed().as_secs_f64(),
        ctx.settings.threads,
    );
    ctx.write("near.md", &format!("{header}{md}"))?;
    Ok(ReportSummary {
        files: ctx.files,
        elapsed: ctx.settings.progress.elapsed(),
        sections: timings,
        headlines: ctx.headlines,
    })
}

/// Runs one section's `work` (measure, then render), recording its wall time under `title`.
fn section<T>(
    timings: &mut Vec<(String, Duration)>,
    title: &str,
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let (result, took) = timed(work);
    timings.push((title.to_string(), took));
    result
}

/// Assembles README.md from the sections.
fn readme(
    ctx: &Context,
    body: &[String],
    timings: &[(String, Duration)],
    elapsed: Duration,
) -> String {
    let mut md = String::from("# phishbloom: the measured report\n\n");
    md.push_str(&format!(
        "Every number below was measured by the run that wrote this file, with the theory \
         beside it; every figure and table links the CSV it was drawn from. Regenerate it with \
         `{}` from the repository root ({}; this run took {:.0} s on {} thread{}). Seeds 000–004 \
         are the project's source documents.\n\n",
        command_line(ctx.settings.quick),
        if ctx.settings.quick {
            "**this is a `--quick` run: small sizes, wide intervals — not the committed report**"
        } else {
            "`--quick` shrinks every experiment to run in seconds"
        },
        elapsed.as_secs_f64(),
        ctx.settings.threads,
        if ctx.settings.threads == 1 { "" } else { "s" },
    ));
    md.push_str("## Contents\n\n");
    for (title, time) in timings {
        let anchor: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        md.push_str(&format!(
            "- [{title}](#{anchor}) — {:.1} s\n",
            time.as_secs_f64()
        ));
    }
    md.push_str("- [How the plots were checked](#how-the-plots-were-checked)\n\n");
    for section in body {
        md.push_str(section);
    }
    md.push_str(PLOT_NOTE);
    md
}

/// The closing note: how the figures were inspected as images, and what that changed.
const PLOT_NOTE: &str = "## How the plots were checked\n\n\
Every SVG here was rendered to PNG with resvg (DejaVu Sans standing in for the generic \
`sans-serif` family the SVG text asks for; GitHub and browsers use their own) and looked at \
before the generator was committed. What looking changed:\n\n\
- The linear rate axes printed duplicate tick labels (0.011, 0.011, 0.01, 0.01): tick labels \
now carry as many decimals as the axis span needs.\n\
- Classic and blocked points measured at the same k (or bits per key, or n) drew their error \
bars on top of each other, merging their colours: classic points are now shifted a little \
left and blocked a little right (±0.15 in k, ±0.12 bits per key, ×0.85/×1.15 in n). The \
shift is only in the drawing; the CSV files hold the true values.\n\
- In \"space relative to the bound\" the black 1/ln 2 reference line hid the classic theory \
curve lying on it: it is now a grey line drawn underneath.\n\
- In the memory plot the fingerprint table's 4 bytes per key lay exactly on the classic \
p = 10⁻⁷ line (4.2 bytes per key): the table is now drawn as crosses.\n\
- In the full run's memory-rate panel the shifted points at n = 10⁴ (×0.85) and 10⁸ \
(×1.15) fell outside the decade-rounded axis and vanished: that axis now spans the data \
exactly, with labels at the whole decades.\n\
- A point with zero false positives has no place on a log axis: it shows only its 95 % upper \
bound, as an error bar rising from the bottom of the plot (the CSV has the zero).\n";
