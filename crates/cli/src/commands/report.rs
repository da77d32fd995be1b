//! `phishbloom report`: regenerates the measured report (placeholder until the report crate lands).

use std::process::ExitCode;

use crate::args::ReportArgs;

/// Runs every experiment of the report and writes it under `args.out`.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "the report generator is not built yet; nothing was written to {} (quick: {})",
        args.out.display(),
        args.quick
    )
}
