//! `phishbloom experiment cabf`: runs seed 003's comparisons and writes their results.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use phishbloom_lookup::cabf_experiment::{self, Config, Point};

use crate::args::CabfArgs;

/// Runs the CaBF experiments and writes `results.csv` under `args.out`.
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
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let csv = to_csv(&points)?;
    let path = args.out.join("results.csv");
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    for p in &points {
        println!(
            "{:<14} {:<8} {:<14} {:<18} n={:<7} bits={:<9} k={:<2} member {:.3e} foreign {:.3e} lpm-err {:.3e}",
            p.figure, p.dataset, p.split, p.structure, p.n, p.bits, p.k, p.member_fpp, p.foreign_fpp, p.foreign_lpm_error
        );
    }
    println!(
        "wrote {} ({} points) in {:.1} s",
        path.display(),
        points.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn to_csv(points: &[Point]) -> anyhow::Result<String> {
    let mut out = String::from(
        "figure,dataset,split,structure,n,bits,k,member_fpp,foreign_fpp,foreign_lpm_error,probes\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            p.figure,
            p.dataset,
            p.split,
            p.structure,
            p.n,
            p.bits,
            p.k,
            p.member_fpp,
            p.foreign_fpp,
            p.foreign_lpm_error,
            p.probes
        ));
    }
    Ok(out)
}
