//! `phishbloom check`: verdicts for keys given as arguments or streamed on standard input.

use phishbloom_blocklist::BlocklistFile;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use phishbloom_blocklist::check::{answer_lines, check_stream, StreamOptions};
use phishbloom_core::printer::Output;
use phishbloom_core::Blocklist;
use phishbloom_core::CheckStats;

use crate::args::CheckArgs;
use crate::commands::{default_threads, stdin_is_file};

/// Opens the blocklist and answers; exit 0 if any key is listed, 1 if none (like grep).
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let output = if args.json { Output::Json } else { Output::Tsv };
    if let (Some(url), Some(name)) = (&args.redis, &args.name) {
        return crate::commands::redis::check(args, url, name, output);
    }
    // clap requires the file unless --redis is given.
    let Some(filter) = &args.filter else {
        anyhow::bail!("give a blocklist file, or --redis URL --name NAME");
    };
    let mut blocklist = Blocklist::open(filter)?;
    blocklist.require_checkable()?;
    if args.verify {
        blocklist.require_verification()?;
    }
    if !args.category.is_empty() {
        blocklist.keep_categories(&args.category, filter)?;
    }
    let stats = answer(&blocklist, args, output)?;
    Ok(exit_code(stats))
}

/// grep's convention: 0 if anything was listed, 1 if nothing was.
fn exit_code(stats: CheckStats) -> ExitCode {
    if stats.listed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Answers the keys given on the command line (which may hold any bytes), or standard input.
fn answer(blocklist: &Blocklist, args: &CheckArgs, output: Output) -> anyhow::Result<CheckStats> {
    if args.keys.is_empty() {
        return Ok(check_stream(
            blocklist,
            std::io::stdin(),
            Path::new("<stdin>"),
            std::io::stdout().lock(),
            &StreamOptions {
                input_is_file: stdin_is_file(),
                ..StreamOptions::new(output, default_threads(args.threads))
            },
        )?);
    }
    let mut out = Vec::new();
    let keys = args.keys.iter().map(|key| key.as_bytes());
    let stats = answer_lines(blocklist, keys, output, &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(stats)
}
