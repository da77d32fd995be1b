//! The subcommands of `phishbloom-lab`: each turns parsed arguments into one library call and
//! prints what it wrote.

use std::time::Instant;

use phishbloom_lab::cabf_experiment::{self, Config};
use phishbloom_report::{run as run_report, run_near, run_peers, ReportOptions, ReportSummary};

use crate::{CabfArgs, ReportArgs};

/// `report`: runs every experiment of the report and writes it under `args.out`.
pub fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let options = report_options(args);
    let summary = run_report(&options)?;
    for (section, time) in &summary.sections {
        println!("{:>7.1} s  {section}", time.as_secs_f64());
    }
    for line in &summary.headlines {
        println!("  {line}");
    }
    println!(
        "wrote {} files to {} in {:.1} s ({}); open {}",
        summary.files.len(),
        args.out.display(),
        summary.elapsed.as_secs_f64(),
        if args.quick {
            "quick sizes"
        } else {
            "full sizes"
        },
        args.out.join("README.md").display()
    );
    Ok(())
}

/// `near`: runs the near-duplicate section alone and writes its files under `args.out`.
pub fn near(args: &ReportArgs) -> anyhow::Result<()> {
    print_section(&run_near(&report_options(args))?);
    Ok(())
}

/// `peers`: runs the compact-lists-against-peers section alone and writes its files under
/// `args.out`.
pub fn peers(args: &ReportArgs) -> anyhow::Result<()> {
    print_section(&run_peers(&report_options(args))?);
    Ok(())
}

/// Prints what a section run alone found and wrote.
fn print_section(summary: &ReportSummary) {
    for line in &summary.headlines {
        println!("  {line}");
    }
    for file in &summary.files {
        println!("wrote {}", file.display());
    }
}

/// `experiment cabf`: runs seed 003's comparisons and writes `results.csv`, three figures and
/// `README.md` under `args.out`.
pub fn cabf(args: &CabfArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let config = Config {
        ut1: args.ut1.clone(),
        dataset: args.data.clone(),
        repetitions: args.repetitions.max(1),
        seed: args.seed,
        quick: args.quick,
    };
    let points = cabf_experiment::run(&config)?;
    let command = format!(
        "{} --repetitions {} --seed {}{}",
        phishbloom_report::cabf::COMMAND,
        config.repetitions,
        config.seed,
        if args.quick { " --quick" } else { "" }
    );
    let files = phishbloom_report::cabf::write(
        &args.out,
        &points,
        &command,
        started.elapsed().as_secs_f64(),
    )?;
    for file in &files {
        println!("wrote {}", file.display());
    }
    println!(
        "{} points in {:.1} s",
        points.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The report's options from the command line: every core, progress on.
fn report_options(args: &ReportArgs) -> ReportOptions {
    ReportOptions {
        out: args.out.clone(),
        quick: args.quick,
        data: args.data.clone(),
        threads: 0,
        verbose: true,
    }
}
