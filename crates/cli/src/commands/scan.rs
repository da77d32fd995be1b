//! `phishbloom scan`: one answer per document (e-mails, pages, texts — the documents are
//! `phishbloom_blocklist::documents`'s) from a keyword list (its keywords and phrases inside
//! the text), a near-duplicate list (known documents within a Hamming distance), or both.

use phishbloom_blocklist::BlocklistFile;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::documents::{open_documents, Opened};
use phishbloom_blocklist::near::expand_inputs;
use phishbloom_core::near::NearMatch;
use phishbloom_core::printer::Output;
use phishbloom_core::scan::{write_document, write_near_document, ScanOptions, Scanner};
use phishbloom_core::{Blocklist, Kind};
use phishbloom_text::simhash::SimHasher;

use crate::args::ScanArgs;

/// Scans every input; exit 0 if any document matched (spam or near), 1 if none, 2 if any
/// input failed.
pub fn run(args: &ScanArgs) -> anyhow::Result<ExitCode> {
    let first = Blocklist::open(&args.list)?;
    // The keyword list and the near-duplicate list, whichever were given.
    let (keywords, near) = match (first.kind(), &args.near) {
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
    };
    if let Some(near) = &near {
        let built = near.near_engine()?.tables().distance();
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
    let mut scanner = match &keywords {
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
    let stdout = std::io::stdout();
    let mut stdout = std::io::BufWriter::new(stdout.lock());
    let (mut matched, mut failed) = (0u64, false);
    // A directory stands for every file below it, as in `build --near`.
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        expand_inputs(&args.files)?
    };
    let mut hasher = SimHasher::new();
    let mut line = Vec::new();
    // A plain text is streamed through the keyword scanner in bounded memory, whatever its
    // size; a near-duplicate list needs the whole text, so with one every input is read whole.
    let stream = near.is_none() && scanner.is_some();
    for input in &inputs {
        let documents = match open_documents(input, args.format.into(), stream) {
            Ok(Opened::Documents(documents)) => documents,
            Ok(Opened::Text(text)) => {
                let name = text.name().to_string();
                // `stream` is only set with a keyword list, hence a scanner.
                let Some(scanner) = scanner.as_mut() else {
                    continue;
                };
                match text.scan(scanner) {
                    Ok(verdict) => {
                        matched += u64::from(verdict.spam);
                        line.clear();
                        write_document(&name, None, &verdict, None, output, &mut line);
                        stdout.write_all(&line)?;
                    }
                    Err(error) => {
                        eprintln!("phishbloom: error: {error:#}");
                        failed = true;
                    }
                }
                continue;
            }
            Err(error) => {
                eprintln!("phishbloom: error: {error:#}");
                failed = true;
                continue;
            }
        };
        for document in documents {
            let result = document.map_err(anyhow::Error::from).and_then(|doc| {
                let near_matches: Option<Vec<NearMatch>> = match &near {
                    Some(list) => Some(list.near(&doc.text, args.max_distance, &mut hasher)?),
                    None => None,
                };
                let verdict = match scanner.as_mut() {
                    Some(scanner) => Some(scanner.scan(&doc.text)?),
                    None => None,
                };
                Ok((verdict, near_matches, doc))
            });
            match result {
                Ok((verdict, near_matches, doc)) => {
                    let is_near = near_matches.as_ref().is_some_and(|m| !m.is_empty());
                    line.clear();
                    match &verdict {
                        Some(verdict) => {
                            matched += u64::from(verdict.spam || is_near);
                            write_document(
                                &doc.name,
                                doc.subject.as_deref(),
                                verdict,
                                near_matches.as_deref(),
                                output,
                                &mut line,
                            );
                        }
                        None => {
                            matched += u64::from(is_near);
                            write_near_document(
                                &doc.name,
                                doc.subject.as_deref(),
                                near_matches.as_deref().unwrap_or_default(),
                                output,
                                &mut line,
                            );
                        }
                    }
                    stdout.write_all(&line)?;
                }
                Err(error) => {
                    eprintln!("phishbloom: error: {error:#}");
                    failed = true;
                }
            }
        }
    }
    stdout.flush()?;
    Ok(match (failed, matched) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::from(1),
        (false, _) => ExitCode::SUCCESS,
    })
}

/// The near-duplicate list's file: `--near`, else the LIST argument.
fn near_path(args: &ScanArgs) -> &Path {
    args.near.as_deref().unwrap_or(&args.list)
}
