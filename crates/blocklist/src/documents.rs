//! Documents to scan from files and standard input: one input read whole (within a size limit)
//! and split into its documents — a text, an e-mail message, the messages of an mbox, or one
//! document per line — for [`crate::scan`]'s scanner.

use std::io::Read;
use std::path::Path;

use phishbloom_text::mail::{self, Document, InputKind, MAX_DOCUMENT_BYTES};

use crate::source::open_file;
use crate::{Error, Result};

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
}
