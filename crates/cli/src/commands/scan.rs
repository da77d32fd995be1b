//! `phishbloom scan`: find a keyword list's keywords and phrases inside e-mails and text, one
//! answer per document (the documents are `phishbloom_blocklist::documents`'s).

use phishbloom_blocklist::BlocklistFile;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::documents::read_documents;
use phishbloom_blocklist::printer::Output;
use phishbloom_blocklist::scan::{write_document, ScanOptions, Scanner};
use phishbloom_blocklist::Blocklist;

use crate::args::ScanArgs;

/// Scans every input; exit 0 if any document matched, 1 if none, 2 if any input failed.
pub fn run(args: &ScanArgs) -> anyhow::Result<ExitCode> {
    let list = Blocklist::open(&args.list)?;
    let mut scanner = Scanner::new(
        &list,
        ScanOptions {
            min_hits: args.min_hits,
            confirm: true,
        },
    )
    .with_context(|| format!("{}: cannot scan with this list", args.list.display()))?;
    if args.verify && !scanner.confirms() {
        anyhow::bail!(
            "{}: the keyword list has no keyword index (it was built without --verify); rebuild \
             it with `phishbloom build --keywords LIST --verify` to confirm hits",
            args.list.display()
        );
    }
    let output = if args.json { Output::Json } else { Output::Tsv };
    let stdout = std::io::stdout();
    let mut stdout = std::io::BufWriter::new(stdout.lock());
    let (mut spam, mut failed) = (0u64, false);
    let inputs: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let mut line = Vec::new();
    for input in &inputs {
        let documents = match read_documents(input, args.format.into()) {
            Ok(documents) => documents,
            Err(error) => {
                eprintln!("phishbloom: error: {error:#}");
                failed = true;
                continue;
            }
        };
        for document in documents {
            let result = document
                .map_err(anyhow::Error::from)
                .and_then(|doc| Ok((scanner.scan(&doc.text)?, doc)));
            match result {
                Ok((verdict, doc)) => {
                    spam += u64::from(verdict.spam);
                    line.clear();
                    write_document(
                        &doc.name,
                        doc.subject.as_deref(),
                        &verdict,
                        output,
                        &mut line,
                    );
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
    Ok(match (failed, spam) {
        (true, _) => ExitCode::from(2),
        (false, 0) => ExitCode::from(1),
        (false, _) => ExitCode::SUCCESS,
    })
}
