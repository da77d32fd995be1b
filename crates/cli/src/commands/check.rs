//! `phishbloom check`: verdicts for keys given as arguments or streamed on standard input.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use phishbloom_filter::AnyFilter;
use phishbloom_lookup::stream::{answer_lines, check_stream, CheckStats, Output};
use phishbloom_lookup::KeyScheme;

use crate::args::CheckArgs;
use crate::commands::default_threads;

/// Loads the filter and answers; exit 0 if any key is listed, 1 if none (like grep).
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let filter = AnyFilter::load(&args.filter)?;
    let scheme = KeyScheme::from_code(filter.key_scheme(), &args.filter)?;
    let output = if args.json { Output::Json } else { Output::Tsv };
    let stats = if args.keys.is_empty() {
        let stdout = std::io::stdout().lock();
        check_stream(
            &*filter,
            scheme,
            std::io::stdin(),
            Path::new("<stdin>"),
            stdout,
            output,
            default_threads(args.threads),
        )?
    } else {
        check_arguments(&filter, scheme, args, output)?
    };
    Ok(if stats.listed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Answers the keys given on the command line (which may hold any bytes).
fn check_arguments(
    filter: &AnyFilter,
    scheme: KeyScheme,
    args: &CheckArgs,
    output: Output,
) -> anyhow::Result<CheckStats> {
    let mut out = Vec::new();
    let keys = args.keys.iter().map(|key| key.as_bytes());
    let stats = answer_lines(&**filter, scheme, keys, output, &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(stats)
}
