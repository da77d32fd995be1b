//! `phishbloom experiment cabf`: runs seed 003's comparisons and writes their results.

use std::process::ExitCode;
use std::time::Instant;

use phishbloom_lab::cabf_experiment::{self, Config};

use crate::args::CabfArgs;

/// Runs the CaBF experiments and writes `results.csv`, three figures and `README.md` under
/// `args.out`.
pub fn run_cabf(args: &CabfArgs) -> anyhow::Result<ExitCode> {
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
        "phishbloom experiment cabf --repetitions {} --seed {}{}",
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
    Ok(ExitCode::SUCCESS)
}
