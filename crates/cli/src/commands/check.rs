//! `phishbloom check`: verdicts for keys given as arguments or streamed on standard input.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use phishbloom_filter::AnyFilter;
use phishbloom_lookup::cabf_engine::CabfMatcher;
use phishbloom_lookup::matcher::BloomMatcher;
use phishbloom_lookup::stream::{answer_lines, check_stream, CheckStats, Checker, Output};
use phishbloom_lookup::KeyScheme;

use crate::args::CheckArgs;
use crate::commands::default_threads;

/// Loads the filter and answers; exit 0 if any key is listed, 1 if none (like grep).
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let output = if args.json { Output::Json } else { Output::Tsv };
    if CabfMatcher::is_cabf_file(&args.filter) {
        let engine = CabfMatcher::load(&args.filter, args.verify)?;
        let stats = answer(Checker::Urls(&engine), args, output)?;
        return Ok(exit_code(stats));
    }
    let filter = AnyFilter::load(&args.filter)?;
    let scheme = KeyScheme::from_code(filter.key_scheme(), &args.filter)?;
    let stats = if scheme == KeyScheme::Expressions {
        let matcher = BloomMatcher::from_filter(filter, &args.filter, args.verify)?;
        answer(Checker::Urls(&matcher), args, output)?
    } else {
        if args.verify {
            anyhow::bail!(
                "{}: --verify needs a filter of URL entries built with `phishbloom build --verify`",
                args.filter.display()
            );
        }
        answer(
            Checker::Keys {
                filter: &*filter,
                scheme,
            },
            args,
            output,
        )?
    };
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
fn answer(checker: Checker<'_>, args: &CheckArgs, output: Output) -> anyhow::Result<CheckStats> {
    if args.keys.is_empty() {
        return Ok(check_stream(
            checker,
            std::io::stdin(),
            Path::new("<stdin>"),
            std::io::stdout().lock(),
            output,
            default_threads(args.threads),
        )?);
    }
    let mut out = Vec::new();
    let keys = args.keys.iter().map(|key| key.as_bytes());
    let stats = answer_lines(checker, keys, output, &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(stats)
}
