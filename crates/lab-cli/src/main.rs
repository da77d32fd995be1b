//! The `phishbloom-lab` binary: the measured report and the experiments, kept out of the
//! installed `phishbloom` so that it links no plotting or peer-benchmark crate. It parses the
//! command line, delegates to `phishbloom-report` and `phishbloom-lab`, and maps errors to exit
//! codes (0 success, 2 error).
//!
//! It is also the lab's measurement worker: the keyword section runs every build and scan in a
//! child process of this executable ([`phishbloom_lab::measure::keywords::serve_child`]).
//!
//! ```text
//! cargo run --release -p phishbloom-lab-cli -- report [--quick]
//! cargo run --release -p phishbloom-lab-cli -- near [--quick]
//! cargo run --release -p phishbloom-lab-cli -- peers [--quick]
//! cargo run --release -p phishbloom-lab-cli -- experiment cabf [--quick]
//! ```

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use phishbloom_blocklist::eval::DEFAULT_DATASET;

/// phishbloom's laboratory: regenerate the measured report and run the experiments, from the
/// repository root.
#[derive(Debug, Parser)]
#[command(name = "phishbloom-lab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Regenerate the measured report (Markdown, SVG plots, CSV) from real runs.
    Report(ReportArgs),
    /// Measure the near-duplicate section alone: its CSV files and near.md.
    Near(ReportArgs),
    /// Measure the compact lists against their peers alone: peers.csv, its figure and peers.md.
    Peers(ReportArgs),
    /// Run an experiment and write its results (CSV, plots, summary) under docs/.
    #[command(subcommand)]
    Experiment(ExperimentCommand),
}

/// Options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Directory to write the report into (README.md, plots, CSV files).
    #[arg(long, default_value = "docs/report")]
    pub out: PathBuf,
    /// Shrink every experiment so the whole report runs in under a minute (for CI).
    #[arg(long)]
    pub quick: bool,
    /// The labelled dataset used by the dataset sections.
    #[arg(long, default_value = DEFAULT_DATASET)]
    pub data: PathBuf,
}

/// The experiments.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// CaBF against the BBF baselines: false-positive rates vs memory, set size and k.
    Cabf(CabfArgs),
}

/// Options of `experiment cabf`.
#[derive(Debug, Args)]
pub struct CabfArgs {
    /// Directory for results.csv, the plots and README.md.
    #[arg(long, default_value = "docs/cabf")]
    pub out: PathBuf,
    /// The UT1 folder (every category's urls and domains are used).
    #[arg(long, default_value = "../shared/data/ut1")]
    pub ut1: PathBuf,
    /// The labelled dataset (phishing rows as a list; benign rows as foreign queries).
    #[arg(long, default_value = DEFAULT_DATASET)]
    pub data: PathBuf,
    /// Random subsets averaged per point.
    #[arg(long, default_value_t = 10)]
    pub repetitions: usize,
    /// Seed of the subsets.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Small sets and few points (seconds, for CI).
    #[arg(long)]
    pub quick: bool,
}

fn main() -> ExitCode {
    // The keyword section measures each configuration in a child process: this executable,
    // which then serves one job and exits.
    if let Some(code) = phishbloom_lab::measure::keywords::serve_child() {
        return ExitCode::from(u8::try_from(code).unwrap_or(2));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report(args) => commands::report(&args),
        Command::Near(args) => commands::near(&args),
        Command::Peers(args) => commands::peers(&args),
        Command::Experiment(ExperimentCommand::Cabf(args)) => commands::cabf(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("phishbloom-lab: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
