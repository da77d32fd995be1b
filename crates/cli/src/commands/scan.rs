//! `phishbloom scan`: one answer per document (e-mails, pages, texts — the documents are
//! `phishbloom_blocklist::documents`'s) from a keyword list (its keywords and phrases inside
//! the text), a near-duplicate list (known documents within a Hamming distance), or both.

use phishbloom_blocklist::BlocklistFile;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::answers::DocumentAnswers;
use phishbloom_blocklist::documents::{open_documents, Opened};
use phishbloom_blocklist::near::expand_inputs;
use phishbloom_core::printer::Output;
use phishbloom_core::scan::{ScanOptions, Scanner};
use phishbloom_core::{Blocklist, Kind};

use crate::args::ScanArgs;

/// Scans every input; exit 0 if any document matched (spam or near), 1 if none, 2 if any
/// input failed.
pub fn run(args: &ScanArgs) -> anyhow::Result<ExitCode> {
    let (keywords, near) = open_lists(args)?;
    check_distance(args, near.as_ref())?;
    let scanner = match &keywords {
        Some(list) => Some(
            Scanner::new(
                list,
                ScanOptions {
                    min_hits: args.min_hits,
                    confirm: true,
                },
            )
            .with_context(|| format!("{}: cannot scan with this list", args.list.display()))?,
        ),
        None => None,
    };
    if args.verify && !scanner.as_ref().is_some_and(Scanner::confirms) {
        anyhow::bail!(
            "{}: the keyword list has no keyword index (it was built without --verify); rebuild \
             it with `phishbloom build --keywords LIST --verify` to confirm hits",
            args.list.display()
        );
    }
    let output = if args.json { Output::Json } else { Output::Tsv };
    let mut answers = DocumentAnswers::new(scanner, near.as_ref(), args.max_distance, output);
    let stdout = std::io::stdout();
    let mut stdout = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    // A directory stands for every file below it, as in `build --near`.
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        expand_inputs(&args.files)?
    };
    // Each failure is reported as it comes; the others are still answered.
    let mut report = |answer: Result<&[u8], String>| -> std::io::Result<()> {
        match answer {
            Ok(line) => stdout.write_all(line)?,
            Err(error) => {
                eprintln!("phishbloom: error: {error}");
                failed = true;
            }
        }
        Ok(())
    };
    // A plain text is streamed through the keyword scanner in bounded memory, whatever its
    // size. A document's error is shown with its causes; an input's, as the library words it.
    let chain = |error: anyhow::Error| format!("{error:#}");
    for input in &inputs {
        match open_documents(input, args.format.into(), answers.streams()) {
            Ok(Opened::Documents(documents)) => {
                for document in documents {
                    let answer = match document {
                        Ok(document) => answers.answer(&document).map_err(|e| chain(e.into())),
                        Err(error) => Err(chain(error.into())),
                    };
                    report(answer)?;
                }
            }
            Ok(Opened::Text(text)) => {
                if let Some(answer) = answers.answer_text(text) {
                    report(answer.map_err(|error| format!("{error:#}")))?;
                }
            }
            Err(error) => report(Err(format!("{error:#}")))?,
        }
    }
    stdout.flush()?;
    Ok(match (failed, answers.matched()) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::from(1),
        (false, _) => ExitCode::SUCCESS,
    })
}

/// The keyword list and the near-duplicate list, whichever were given: LIST is either, and
/// `--near` adds a near-duplicate list beside a keyword list.
fn open_lists(args: &ScanArgs) -> anyhow::Result<(Option<Blocklist>, Option<Blocklist>)> {
    let first = Blocklist::open(&args.list)?;
    Ok(match (first.kind(), &args.near) {
        (Kind::Near, None) => (None, Some(first)),
        (Kind::Near, Some(_)) => anyhow::bail!(
            "{}: a near-duplicate list; --near adds one beside a keyword list (pass the keyword \
             list first)",
            args.list.display()
        ),
        (_, Some(path)) => {
            let near = Blocklist::open(path)?;
            near.near_engine()?;
            (Some(first), Some(near))
        }
        (_, None) => (Some(first), None),
    })
}

/// Refuses a `--max-distance` beyond the one the near-duplicate list was built for, or
/// without such a list.
fn check_distance(args: &ScanArgs, near: Option<&Blocklist>) -> anyhow::Result<()> {
    if let Some(near) = near {
        let built = near.near_engine()?.max_distance();
        if let Some(asked) = args.max_distance.filter(|&k| k > built) {
            anyhow::bail!(
                "{}: --max-distance {asked} is more than the {built} the list was built for; ask \
                 for at most {built}, or rebuild it with `phishbloom build --near … \
                 --max-distance {asked}`",
                near_path(args).display()
            );
        }
    } else if args.max_distance.is_some() {
        anyhow::bail!("--max-distance applies to near-duplicate lists (pass one with --near)");
    }
    Ok(())
}

/// The near-duplicate list's file: `--near`, else the LIST argument.
fn near_path(args: &ScanArgs) -> &Path {
    args.near.as_deref().unwrap_or(&args.list)
}
