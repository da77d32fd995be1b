//! `phishbloom canon`: canonical forms and lookup expressions, to see why a URL did or did not match.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use phishbloom_blocklist::source::{read_bounded_line, MAX_KEY_BYTES};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::prepare::{Preparer, Query};
use phishbloom_url::ExpressionKind;

use crate::args::CanonArgs;

/// Prints one canonical URL per input (and its expressions with `--expressions`); inputs that
/// are not URLs are reported on stderr and make the exit code 2.
pub fn run(args: &CanonArgs) -> anyhow::Result<ExitCode> {
    // Buffered: one write per 64 KiB instead of one per line (stdout is line-buffered).
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut failures = 0u64;
    // The preparation `check` gives a line of a list of URL entries, so what is shown is what
    // is checked.
    let mut preparer = Preparer::default();
    let mut show = |raw: &[u8], out: &mut dyn Write| -> anyhow::Result<bool> {
        match preparer.query(KeyScheme::Expressions, raw) {
            Query::Url(url) => {
                writeln!(out, "{}", url.as_str())?;
                if args.expressions {
                    for expression in url.expressions() {
                        let kind = match expression.kind() {
                            ExpressionKind::Domain => "domain",
                            ExpressionKind::Url => "url",
                        };
                        writeln!(out, "  {expression}\t{kind}")?;
                    }
                }
            }
            Query::Invalid(error) => {
                eprintln!("phishbloom: {}: {error}", String::from_utf8_lossy(raw));
                return Ok(false);
            }
            Query::Blank | Query::Key(_) | Query::Phrase(_) => {
                eprintln!("phishbloom: a blank line is not a URL");
                return Ok(false);
            }
        }
        Ok(true)
    };
    if args.urls.is_empty() {
        let mut stdin = std::io::stdin().lock();
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            let (read, fits) = read_bounded_line(&mut stdin, &mut line, MAX_KEY_BYTES)?;
            if read == 0 {
                break;
            }
            number += 1;
            if fits {
                failures += u64::from(!show(&line, &mut out)?);
            } else {
                failures += 1;
                eprintln!(
                    "phishbloom: <stdin> line {number}: longer than {MAX_KEY_BYTES} bytes, skipped"
                );
            }
        }
    } else {
        for url in &args.urls {
            failures += u64::from(!show(url.as_bytes(), &mut out)?);
        }
    }
    out.flush()?;
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
