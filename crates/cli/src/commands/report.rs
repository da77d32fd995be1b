//! `phishbloom report`: regenerates the measured report (Markdown, SVG plots, CSV) by running
//! every experiment of the `phishbloom-report` crate, and prints what it wrote.

use std::process::ExitCode;

use phishbloom_report::{run as run_report, ReportOptions};

use crate::args::ReportArgs;

/// Runs every experiment of the report and writes it under `args.out`.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let options = ReportOptions {
        out: args.out.clone(),
        quick: args.quick,
        data: args.data.clone(),
        threads: 0,
        verbose: true,
    };
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
    Ok(ExitCode::SUCCESS)
}
