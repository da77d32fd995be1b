//! Documents to scan from files and standard input: one input read whole (within a size limit)
//! and split into its documents — a text, an e-mail message, the messages of an mbox, or one
//! document per line — for [`crate::scan`]'s scanner; or, for a plain text, streamed through
//! the scanner in pieces ([`open_documents`], [`TextStream`]) in bounded memory, whatever its
//! size.

use std::io::{Cursor, Read};
use std::path::Path;

use phishbloom_text::mail::{self, Document, InputKind, DETECT_BYTES, MAX_DOCUMENT_BYTES};
use phishbloom_text::pieces::Pieces;

use crate::source::open_file;
use crate::{Error, Result};
use phishbloom_core::scan::{DocumentVerdict, Scanner};

/// Bytes read at a time from a streamed text.
pub const STREAM_CHUNK_BYTES: usize = 1 << 20;

/// Bytes read first from an input that may be streamed, to tell text from mail and HTML: an
/// mbox's `From ` line and the [`DETECT_BYTES`] after it fit in them unless that line is longer
/// than [`DETECT_BYTES`] (then the input is read whole, as before).
const HEAD_BYTES: usize = 2 * DETECT_BYTES;

/// An input opened for scanning.
pub enum Opened {
    /// A plain text, to stream through a scanner ([`TextStream::scan`]).
    Text(TextStream),
    /// The input's documents, read whole ([`read_documents`]).
    Documents(Vec<phishbloom_text::Result<Document>>),
}

/// A plain-text input scanned as it is read: one document, named like [`read_documents`]
/// names it, with no size limit (memory stays bounded by the piece size,
/// [`phishbloom_text::pieces::MAX_PIECE_BYTES`], not the document's).
pub struct TextStream {
    /// The document's name.
    name: String,
    /// Bytes already read to detect the format.
    head: Vec<u8>,
    /// The rest of the input.
    reader: Box<dyn Read>,
}

impl TextStream {
    /// The document's name (the file, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Scans the text with `scanner`: the same answer as [`Scanner::scan`] of the whole text
    /// decoded with U+FFFD for invalid UTF-8 (as a [`DocumentFormat::Text`] document is).
    pub fn scan(self, scanner: &mut Scanner<'_>) -> Result<DocumentVerdict> {
        self.scan_in(scanner, STREAM_CHUNK_BYTES, Pieces::new())
    }

    /// [`TextStream::scan`], reading `chunk` bytes at a time into `pieces`.
    fn scan_in(
        mut self,
        scanner: &mut Scanner<'_>,
        chunk: usize,
        mut pieces: Pieces,
    ) -> Result<DocumentVerdict> {
        scanner.begin();
        pieces.clear();
        pieces.push(&std::mem::take(&mut self.head));
        let mut buffer = vec![0; chunk.max(1)];
        loop {
            let read = match self.reader.read(&mut buffer) {
                Ok(read) => read,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.name, "read", e)),
            };
            pieces.push(&buffer[..read]);
            let at_end = read == 0;
            while let Some(piece) = pieces.next_piece(at_end) {
                scanner.feed(piece)?;
            }
            if at_end {
                return Ok(scanner.finish()?);
            }
        }
    }
}

/// Opens one input as [`read_documents`] does; with `stream`, a plain text (the
/// [`DocumentFormat::Text`] format, or [`DocumentFormat::Auto`] when the input's first bytes
/// are neither HTML nor mail) is returned unread as a [`TextStream`] instead, without the
/// size limit of a document read whole.
pub fn open_documents(input: &Path, format: DocumentFormat, stream: bool) -> Result<Opened> {
    let (name, reader): (String, Box<dyn Read>) = if input == Path::new("-") {
        ("<stdin>".to_string(), Box::new(std::io::stdin()))
    } else {
        (input.display().to_string(), Box::new(open_file(input)?))
    };
    open_reader(name, reader, format, stream)
}

/// [`open_documents`] from any reader, named `name`.
fn open_reader(
    name: String,
    mut reader: Box<dyn Read>,
    format: DocumentFormat,
    stream: bool,
) -> Result<Opened> {
    if !stream || !matches!(format, DocumentFormat::Text | DocumentFormat::Auto) {
        let documents = documents_from(&name, reader, format, format.input_limit())?;
        return Ok(Opened::Documents(documents));
    }
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut reader)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(&name, "read", e))?;
    let text = format == DocumentFormat::Text || is_text(&name, &head, head.len() < HEAD_BYTES);
    if text {
        return Ok(Opened::Text(TextStream { name, head, reader }));
    }
    let whole = Cursor::new(head).chain(reader);
    let documents = documents_from(&name, whole, format, format.input_limit())?;
    Ok(Opened::Documents(documents))
}

/// Whether an input of the [`DocumentFormat::Auto`] format that starts with `head` (the whole
/// input when `whole`) is surely plain text: not HTML, and detected as text by
/// [`mail::detect`] from bytes enough to decide.
fn is_text(name: &str, head: &[u8], whole: bool) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".html") || lower.ends_with(".htm") || crate::html::looks_like_html(head) {
        return false;
    }
    // HTML is told by its first bytes after white space (all of the head, undecided), an mbox
    // by the DETECT_BYTES after its `From ` line.
    let blank = head.iter().all(u8::is_ascii_whitespace);
    let decided = whole
        || !blank
            && (!head.starts_with(b"From ")
                || head
                    .iter()
                    .position(|&b| b == b'\n')
                    .is_some_and(|at| head.len() - at > DETECT_BYTES));
    decided && mail::detect(name, head) == InputKind::Text
}

/// How an input is split into documents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DocumentFormat {
    /// An mbox (`.mbox`, or a `From ` line then a message), an e-mail message (`.eml`, or
    /// header fields then a blank line), or else text ([`mail::detect`]).
    #[default]
    Auto,
    /// Text, scanned as it is (invalid UTF-8 becomes U+FFFD).
    Text,
    /// One RFC 5322 message.
    Eml,
    /// An mbox file: one document per message.
    Mbox,
    /// Text with one document per line, named `NAME:LINE`.
    Lines,
    /// An HTML page: its visible text ([`crate::html`]).
    Html,
}

impl DocumentFormat {
    /// The most bytes read from one input: [`MAX_DOCUMENT_BYTES`] for an input that is one
    /// document, 16 times that for one that may hold many (an mbox, lines, or an input not yet
    /// detected), whose documents are then checked one by one.
    pub fn input_limit(self) -> u64 {
        match self {
            DocumentFormat::Mbox | DocumentFormat::Lines | DocumentFormat::Auto => {
                16 * MAX_DOCUMENT_BYTES
            }
            DocumentFormat::Text | DocumentFormat::Eml | DocumentFormat::Html => MAX_DOCUMENT_BYTES,
        }
    }
}

/// Reads one input — a file, or standard input for `-` (named `<stdin>`) — and splits it into
/// its documents as `format` says.
///
/// An input that cannot be opened or read is an [`Error`]. A document that cannot be decoded
/// is a [`phishbloom_text::Error`] in its place, the others still returned; an input larger
/// than [`DocumentFormat::input_limit`] is one such error ([`phishbloom_text::Error::TooLarge`])
/// and no document.
pub fn read_documents(
    input: &Path,
    format: DocumentFormat,
) -> Result<Vec<phishbloom_text::Result<Document>>> {
    if input == Path::new("-") {
        documents_from("<stdin>", std::io::stdin(), format, format.input_limit())
    } else {
        let file = open_file(input)?;
        documents_from(
            &input.display().to_string(),
            file,
            format,
            format.input_limit(),
        )
    }
}

/// [`read_documents`] from any reader, named `name`, refusing more than `limit` bytes.
fn documents_from(
    name: &str,
    reader: impl Read,
    format: DocumentFormat,
    limit: u64,
) -> Result<Vec<phishbloom_text::Result<Document>>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(name, "read", e))?;
    if bytes.len() as u64 > limit {
        return Ok(vec![Err(phishbloom_text::Error::TooLarge {
            name: name.to_string(),
            bytes: bytes.len() as u64,
            limit,
        })]);
    }
    let is_html = match format {
        DocumentFormat::Html => true,
        DocumentFormat::Auto => {
            let lower = name.to_ascii_lowercase();
            lower.ends_with(".html")
                || lower.ends_with(".htm")
                || crate::html::looks_like_html(&bytes)
        }
        _ => false,
    };
    if is_html {
        return Ok(vec![one_document(name, &bytes, DocumentFormat::Html)]);
    }
    let kind = match format {
        // An HTML page was answered above.
        DocumentFormat::Auto | DocumentFormat::Html => mail::detect(name, &bytes),
        DocumentFormat::Text => InputKind::Text,
        DocumentFormat::Eml => InputKind::Message,
        DocumentFormat::Mbox => InputKind::Mbox,
        DocumentFormat::Lines => return Ok(lines(name, &bytes)),
    };
    Ok(mail::documents(name, &bytes, kind))
}

/// One document from bytes already read (a request body): HTML (by `format`, or recognized by
/// its start), an e-mail message (by `format`, or recognized by its header fields), else text.
/// Never split: an mbox or lines format is read as one text.
pub fn one_document(
    name: &str,
    bytes: &[u8],
    format: DocumentFormat,
) -> phishbloom_text::Result<Document> {
    let html = match format {
        DocumentFormat::Html => true,
        DocumentFormat::Auto => crate::html::looks_like_html(bytes),
        _ => false,
    };
    if html {
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            return Err(phishbloom_text::Error::TooLarge {
                name: name.to_string(),
                bytes: bytes.len() as u64,
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        return Ok(Document {
            name: name.to_string(),
            subject: None,
            text: crate::html::visible_text(&String::from_utf8_lossy(bytes)),
            message_id: None,
        });
    }
    let message = match format {
        DocumentFormat::Eml => true,
        DocumentFormat::Auto => mail::looks_like_message(bytes),
        _ => false,
    };
    if message {
        mail::decode_message(name, bytes)
    } else {
        mail::decode_text(name, bytes)
    }
}

/// One document per line of `bytes` (invalid UTF-8 becomes U+FFFD), named `NAME:LINE`.
fn lines(name: &str, bytes: &[u8]) -> Vec<phishbloom_text::Result<Document>> {
    String::from_utf8_lossy(bytes)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            Ok(Document {
                name: format!("{name}:{}", i + 1),
                subject: None,
                text: line.to_string(),
                message_id: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = "From: a@example.com\nTo: b@example.com\nSubject: Hello\n\nBody text\n";

    fn write(dir: &Path, name: &str, content: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    fn names(documents: &[phishbloom_text::Result<Document>]) -> Vec<String> {
        documents
            .iter()
            .map(|d| d.as_ref().unwrap().name.clone())
            .collect()
    }

    #[test]
    fn a_text_file_is_one_document() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "note.txt", b"free money\nnow\n");
        for format in [DocumentFormat::Auto, DocumentFormat::Text] {
            let documents = read_documents(&path, format).unwrap();
            assert_eq!(names(&documents), [path.display().to_string()]);
            let document = documents[0].as_ref().unwrap();
            assert!(document.text.contains("free money"), "{}", document.text);
            assert_eq!(document.subject, None);
        }
    }

    #[test]
    fn lines_are_documents_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "l.txt", b"first\nsecond\r\nthird");
        let documents = read_documents(&path, DocumentFormat::Lines).unwrap();
        let shown = path.display();
        assert_eq!(
            names(&documents),
            [
                format!("{shown}:1"),
                format!("{shown}:2"),
                format!("{shown}:3")
            ]
        );
        assert_eq!(documents[1].as_ref().unwrap().text, "second");
    }

    #[test]
    fn an_mbox_holds_one_document_per_message() {
        let dir = tempfile::tempdir().unwrap();
        let mbox = format!(
            "From a@example.com Sat Jan  3 01:05:34 1996\n{MESSAGE}\n\
             From c@example.com Sat Jan  3 01:06:34 1996\n{}",
            MESSAGE.replace("Hello", "Again")
        );
        let path = write(dir.path(), "inbox", mbox.as_bytes());
        for format in [DocumentFormat::Auto, DocumentFormat::Mbox] {
            let documents = read_documents(&path, format).unwrap();
            let shown = path.display();
            assert_eq!(
                names(&documents),
                [format!("{shown}#1"), format!("{shown}#2")]
            );
            let subjects: Vec<_> = documents
                .iter()
                .map(|d| d.as_ref().unwrap().subject.clone())
                .collect();
            assert_eq!(
                subjects,
                [Some("Hello".to_string()), Some("Again".to_string())]
            );
        }
    }

    #[test]
    fn too_large_an_input_is_refused_and_a_missing_file_is_an_error() {
        let documents =
            documents_from("big.eml", &b"0123456789"[..], DocumentFormat::Eml, 9).unwrap();
        match documents.as_slice() {
            [Err(
                error @ phishbloom_text::Error::TooLarge {
                    bytes: 10,
                    limit: 9,
                    ..
                },
            )] => {
                assert!(error.to_string().contains("big.eml"), "{error}")
            }
            other => panic!("expected one TooLarge error, got {other:?}"),
        }
        assert_eq!(
            documents_from("ok", &b"012345678"[..], DocumentFormat::Text, 9)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            DocumentFormat::Eml.input_limit() * 16,
            DocumentFormat::Mbox.input_limit()
        );
        let dir = tempfile::tempdir().unwrap();
        let error = read_documents(&dir.path().join("absent.eml"), DocumentFormat::Auto)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("absent.eml") && error.contains("open"),
            "{error}"
        );
    }

    /// A keyword list of multi-word, Chinese and single-word keywords, with an index (`verify`).
    fn keyword_list(dir: &Path, verify: bool) -> phishbloom_core::Blocklist {
        let keywords = dir.join("kw.txt");
        std::fs::write(
            &keywords,
            "free money\nclaim your prize now\n免费赚钱\n赚钱\nviagra\nwire transfer\n\
             a b c d e f\néé\nx\n",
        )
        .unwrap();
        let options = phishbloom_core::BuildOptions {
            kind: phishbloom_core::Kind::Blocked,
            fpp: 0.3,
            verify,
            name: "kw".into(),
            ..phishbloom_core::BuildOptions::default()
        };
        crate::keywords::build_keywords(
            &crate::Input::Path(keywords),
            &options,
            &crate::keywords::KeywordOptions {
                probes_per_doc: None,
                spill_dir: dir.to_path_buf(),
            },
            &mut |_| {},
        )
        .unwrap()
        .0
    }

    /// A random text of keywords, words, CJK, separators, long runs and invalid bytes.
    fn random_text(rng: &mut phishbloom_filter::rng::SplitMix64) -> Vec<u8> {
        const PARTS: [&[u8]; 24] = [
            b"free ",
            b"money",
            b"FREE\r\nMONEY",
            b" claim your prize now ",
            "免费赚钱".as_bytes(),
            "赚".as_bytes(),
            "钱免".as_bytes(),
            b"viagra",
            b"wire\ttransfer",
            b" ",
            b"  ",
            b"\n",
            b"\r\n",
            b", ",
            b"!!!",
            b"a b c d e f g ",
            "éé ".as_bytes(),
            "e\u{301}".as_bytes(),
            b"x",
            b"\xff",
            b"\xe4\xb8",
            b"\xe8",
            b"don't",
            b"3,5.7",
        ];
        let mut text = Vec::new();
        for _ in 0..rng.below(120) {
            match rng.below(30) {
                // A long run without cuts: letters and commas.
                0 => text.extend((0..rng.below(400)).map(|i| if i % 7 == 6 { b',' } else { b'q' })),
                // A long Chinese run.
                1 => {
                    (0..rng.below(100)).for_each(|_| text.extend_from_slice("免费赚钱".as_bytes()))
                }
                n => text.extend_from_slice(PARTS[n as usize % PARTS.len()]),
            }
        }
        text
    }

    #[test]
    fn a_streamed_text_has_the_verdict_of_the_whole_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = phishbloom_filter::rng::SplitMix64::new(23);
        for verify in [true, false] {
            let list = keyword_list(dir.path(), verify);
            let mut scanner =
                phishbloom_core::scan::Scanner::new(&list, Default::default()).unwrap();
            for case in 0..400 {
                let bytes = random_text(&mut rng);
                let whole = scanner.scan(&String::from_utf8_lossy(&bytes)).unwrap();
                let chunk = 7 + rng.below(194) as usize;
                let head = rng.below(bytes.len() as u64 + 1) as usize;
                let stream = TextStream {
                    name: "t".into(),
                    head: bytes[..head].to_vec(),
                    reader: Box::new(Cursor::new(bytes[head..].to_vec())),
                };
                let streamed = stream.scan_in(&mut scanner, chunk, Pieces::new()).unwrap();
                assert_eq!(
                    streamed,
                    whole,
                    "case {case}, chunk {chunk}: {:?}",
                    String::from_utf8_lossy(&bytes)
                );
                if case == 0 {
                    assert!(whole.hits > 0 || bytes.is_empty());
                }
            }
        }
    }

    #[test]
    fn text_is_streamed_and_mail_and_html_are_read_whole() {
        let open = |name: &str, bytes: &[u8], format| {
            open_reader(
                name.into(),
                Box::new(Cursor::new(bytes.to_vec())),
                format,
                true,
            )
            .unwrap()
        };
        let streamed = |opened: &Opened| matches!(opened, Opened::Text(_));
        assert!(streamed(&open(
            "a.txt",
            b"free money\n",
            DocumentFormat::Auto
        )));
        assert!(streamed(&open(
            "a.eml",
            MESSAGE.as_bytes(),
            DocumentFormat::Text
        )));
        assert!(!streamed(&open(
            "a",
            MESSAGE.as_bytes(),
            DocumentFormat::Auto
        )));
        assert!(!streamed(&open(
            "a.txt",
            b"<html><p>hi",
            DocumentFormat::Auto
        )));
        assert!(!streamed(&open("a.txt", b"a\nb", DocumentFormat::Lines)));
        let mbox = format!("From a@example.com Sat Jan  3 01:05:34 1996\n{MESSAGE}");
        assert!(!streamed(&open(
            "inbox",
            mbox.as_bytes(),
            DocumentFormat::Auto
        )));
        // A `From ` line too long to decide from the first bytes: read whole, as before.
        let long = format!("From {}\nplain text", "x".repeat(HEAD_BYTES));
        assert!(!streamed(&open("t", long.as_bytes(), DocumentFormat::Auto)));
        // HTML after more white space than the first bytes hold: read whole, as before.
        let late = format!("{}<html><p>hi", " ".repeat(HEAD_BYTES));
        assert!(!streamed(&open("t", late.as_bytes(), DocumentFormat::Auto)));
        assert!(streamed(&open("t", b"  \n ", DocumentFormat::Auto)));
        // Without streaming, the documents as read_documents gives them.
        match open_reader(
            "t".into(),
            Box::new(Cursor::new(b"free".to_vec())),
            DocumentFormat::Auto,
            false,
        )
        .unwrap()
        {
            Opened::Documents(documents) => assert_eq!(names(&documents), ["t"]),
            Opened::Text(_) => panic!("streamed without stream"),
        }
    }
}
