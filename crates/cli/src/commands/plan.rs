//! `phishbloom plan`: the sizing calculator and seed 004's memory table.

use std::process::ExitCode;

use phishbloom_core::plan::{plan, PlanRow};

use crate::args::PlanArgs;
use phishbloom_core::fmt;

/// Prints m, k, memory and expected rate for every (n, p) asked, both layouts.
pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for &fpp in &args.fpp {
        for &items in &args.items {
            rows.extend(plan(items, fpp, args.key_bytes)?);
        }
    }
    if args.json {
        for row in &rows {
            println!("{}", serde_json::to_string(row)?);
        }
    } else {
        print_table(&rows, args.key_bytes);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(rows: &[PlanRow], key_bytes: u64) {
    println!(
        "{:>13}  {:>8}  {:<7}  {:>15}  {:>3}  {:>10}  {:>8}  {:>10}  {:>10}",
        "n", "p", "layout", "m (bits)", "k", "memory", "bits/key", "expected", "HashSet"
    );
    for row in rows {
        println!(
            "{:>13}  {:>8}  {:<7}  {:>15}  {:>3}  {:>10}  {:>8.2}  {:>10}  {:>10}",
            fmt::count(row.expected_items),
            format!("{:e}", row.fpp),
            row.layout.name(),
            fmt::count(row.num_bits),
            row.num_hashes,
            fmt::bytes(row.bytes),
            row.bits_per_key,
            fmt::percent(row.expected_fpp),
            fmt::bytes(row.hashset_bytes),
        );
    }
    println!(
        "classic: m = ceil(-n ln p / (ln 2)^2), k = round(m/n ln 2); blocked: smallest size whose \
         true rate (Poisson over 512-bit blocks) is <= p.\nHashSet: estimated Rust \
         HashSet<String> of {key_bytes}-byte keys (--key-bytes)."
    );
}
