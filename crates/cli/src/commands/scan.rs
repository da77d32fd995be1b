//! `phishbloom scan`: find a keyword list's keywords and phrases inside e-mails and text, one
//! answer per document; and `build --keywords`, which makes such a list.

use phishbloom_blocklist::BlocklistFile;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, ValueEnum};
use phishbloom_blocklist::engine::per_probe_fpp;
use phishbloom_blocklist::keywords::{build_keywords, KeywordOptions, KeywordsInfo};
use phishbloom_blocklist::printer::Output;
use phishbloom_blocklist::scan::{write_document, ScanOptions, Scanner};
use phishbloom_blocklist::{fmt, Blocklist, BuildOptions, Input};
use phishbloom_text::mail::{self, Document, InputKind, MAX_DOCUMENT_BYTES};

use crate::args::BuildArgs;

/// How to read the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// An mbox (`.mbox`, or a `From ` line then a message), an e-mail message (`.eml`, or
    /// header fields then a blank line), or else text.
    Auto,
    /// Text, scanned as it is (invalid UTF-8 becomes U+FFFD).
    Text,
    /// One RFC 5322 message per file.
    Eml,
    /// An mbox file: one document per message.
    Mbox,
    /// Text with one document per line (named FILE:LINE).
    Lines,
}

/// Options of `scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The keyword list (`phishbloom build --keywords LIST -o kw.bloom`).
    pub list: PathBuf,
    /// Files to scan; standard input when none is given (or for `-`).
    pub files: Vec<PathBuf>,
    /// How to read the inputs.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Hits (keyword occurrences) a document needs to be reported as spam.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_hits: u64,
    /// Write one JSON object per document instead of `NAME<TAB>spam|clean<TAB>HITS<TAB>…`.
    #[arg(long)]
    pub json: bool,
    /// Require the list's keyword index (written by `build --keywords … --verify`) and fail if
    /// it has none. Hits are always confirmed when the index is present.
    #[arg(long)]
    pub verify: bool,
}

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
        let documents = match read_documents(input, args.format) {
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

/// Reads one input (a file, or standard input for `-`) and decodes its documents.
fn read_documents(
    input: &Path,
    format: FormatArg,
) -> anyhow::Result<Vec<phishbloom_text::Result<Document>>> {
    let (name, bytes) = read_input(input, format)?;
    let kind = match format {
        FormatArg::Auto => mail::detect(&name, &bytes),
        FormatArg::Text | FormatArg::Lines => InputKind::Text,
        FormatArg::Eml => InputKind::Message,
        FormatArg::Mbox => InputKind::Mbox,
    };
    if format == FormatArg::Lines {
        let text = String::from_utf8_lossy(&bytes);
        return Ok(text
            .lines()
            .enumerate()
            .map(|(i, line)| {
                Ok(Document {
                    name: format!("{name}:{}", i + 1),
                    subject: None,
                    text: line.to_string(),
                })
            })
            .collect());
    }
    Ok(mail::documents(&name, &bytes, kind))
}

/// The bytes of an input, refusing one larger than a document may be (an mbox or a file of
/// lines may be larger: its documents are checked one by one).
fn read_input(input: &Path, format: FormatArg) -> anyhow::Result<(String, Vec<u8>)> {
    let many = matches!(format, FormatArg::Mbox | FormatArg::Lines | FormatArg::Auto);
    // An mbox or a file of lines holds many documents; 16 of the largest is still bounded.
    let limit = if many {
        16 * MAX_DOCUMENT_BYTES
    } else {
        MAX_DOCUMENT_BYTES
    };
    let (name, reader): (String, Box<dyn Read>) = if input == Path::new("-") {
        ("<stdin>".into(), Box::new(std::io::stdin()))
    } else {
        let file = phishbloom_blocklist::source::open_file(input)?;
        (input.display().to_string(), Box::new(file))
    };
    let mut bytes = Vec::new();
    reader
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{name}: cannot read"))?;
    if bytes.len() as u64 > limit {
        return Err(phishbloom_text::Error::TooLarge {
            name,
            bytes: bytes.len() as u64,
            limit,
        }
        .into());
    }
    Ok((name, bytes))
}

/// `build --keywords LIST`: reads, normalizes and builds, saves, prints the summary.
pub fn build(
    args: &BuildArgs,
    list: &str,
    options: &BuildOptions,
    started: Instant,
) -> anyhow::Result<ExitCode> {
    let input = Input::from_arg(list);
    let spill_dir = match args.output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (blocklist, summary) = build_keywords(
        &input,
        options,
        &KeywordOptions {
            probes_per_doc: args.probes_per_doc,
            spill_dir,
        },
        &mut |_| {},
    )?;
    crate::commands::build::print_list_summary(
        &input.display_path().display().to_string(),
        &summary.list,
    );
    let inputs: Vec<PathBuf> = input.file().map(Path::to_path_buf).into_iter().collect();
    blocklist.save(&args.output, &inputs).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            args.output.display()
        )
    })?;
    crate::commands::build::print_summary(args, &blocklist, started);
    let lengths: Vec<String> = summary
        .lengths
        .0
        .iter()
        .map(|(len, _)| len.to_string())
        .collect();
    println!(
        "  phrase lengths {} tokens; per scanned document: target {} at up to {} probes, so {} \
         per probe",
        lengths.join(", "),
        fmt::percent(args.filter.fpp),
        fmt::count(u64::from(summary.probes_per_doc)),
        fmt::percent(per_probe_fpp(args.filter.fpp, summary.probes_per_doc)),
    );
    Ok(ExitCode::SUCCESS)
}

/// The keyword lines of `info`.
pub fn print_keywords_info(info: &KeywordsInfo) {
    let lengths: Vec<String> = info
        .lengths
        .0
        .iter()
        .map(|(len, count)| format!("{len} ({})", fmt::count(*count)))
        .collect();
    println!("phrase lengths    {} tokens (keywords)", lengths.join(", "));
    if let (Some(doc), Some(probe)) = (info.per_doc_fpp, info.per_probe_fpp) {
        println!(
            "rates             {} per document of up to {} probes; {} per probe",
            fmt::percent(doc),
            fmt::count(u64::from(info.probes_per_doc)),
            fmt::percent(probe)
        );
    }
    match &info.index {
        Some(index) => println!(
            "keyword index     {} keywords in {} blocks ({}), read on hits; {} held in memory",
            fmt::count(index.keywords),
            fmt::count(index.blocks),
            fmt::bytes(index.bytes),
            fmt::bytes(index.resident_bytes)
        ),
        None => println!("keyword index     none (build --keywords … --verify to confirm hits)"),
    }
}
