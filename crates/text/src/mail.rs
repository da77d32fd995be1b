//! Documents to scan: plain text, RFC 5322 e-mail messages and mbox files.
//!
//! A message is parsed with a real MIME parser (`mail-parser`): its Subject and the text of every
//! text/plain and text/html part (HTML reduced to its text), of nested messages too, with
//! transfer encodings (base64, quoted-printable) and charsets decoded; binary parts are skipped.
//! The decoded text is the Subject, then each part, separated by blank lines: match offsets
//! refer to it. An mbox file is split into its messages (`From ` lines, `>From ` unquoted).
//! Plain text that is not UTF-8 is decoded with U+FFFD for each invalid sequence.

use mail_parser::{MessageParser, MimeHeaders, PartType};

use crate::error::{Error, Result};

/// The largest document scanned (a file, or one message of an mbox): far above real e-mail
/// (providers cap messages at 25–150 MB), and low enough that one hostile input cannot take
/// the machine's memory.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// Text, scanned as it is.
    Text,
    /// One RFC 5322 message.
    Message,
    /// An mbox file: messages after `From ` lines.
    Mbox,
}

/// Header fields that mark the start of an e-mail message (any one of them, in a block of
/// header fields that ends with a blank line).
const MESSAGE_HEADERS: [&str; 12] = [
    "from",
    "to",
    "subject",
    "date",
    "received",
    "return-path",
    "message-id",
    "mime-version",
    "delivered-to",
    "content-type",
    "reply-to",
    "x-mailer",
];

/// How many bytes of a file are looked at to detect a message.
pub const DETECT_BYTES: usize = 64 * 1024;

/// Whether `bytes` start like an RFC 5322 message: header fields (`Name: value`, with folded
/// continuation lines), at least one of them a message header such as `From` or `Subject`,
/// ending in a blank line (or the end of the input).
pub fn looks_like_message(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(DETECT_BYTES)];
    let mut fields = 0;
    let mut known = false;
    for line in head.split(|&b| b == b'\n') {
        let line = crate::line::content(line);
        if line.is_empty() {
            return fields > 0 && known;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            if fields == 0 {
                return false;
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| (33..=126).contains(&b)) {
            return false;
        }
        fields += 1;
        known |= MESSAGE_HEADERS
            .iter()
            .any(|h| h.as_bytes().eq_ignore_ascii_case(name));
    }
    fields >= 2 && known
}

/// What `bytes` (from a file named `name`) hold: `.eml` is a message, `.mbox` an mbox; else an
/// mbox if it starts with a `From ` line followed by a message, a message if it looks like one
/// ([`looks_like_message`]), and text otherwise.
pub fn detect(name: &str, bytes: &[u8]) -> InputKind {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".mbox") {
        return InputKind::Mbox;
    }
    if lower.ends_with(".eml") {
        return InputKind::Message;
    }
    if let Some(rest) = bytes.strip_prefix(b"From ") {
        let after = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&rest[rest.len()..], |at| &rest[at + 1..]);
        if looks_like_message(after) {
            return InputKind::Mbox;
        }
    }
    if looks_like_message(bytes) {
        InputKind::Message
    } else {
        InputKind::Text
    }
}

/// A decoded document: a name for the answers, the Subject of a message, and the text scanned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// The file, or `file#N` for the N-th message of an mbox.
    pub name: String,
    /// The Subject of a message.
    pub subject: Option<String>,
    /// The decoded text; match offsets are byte offsets into it.
    pub text: String,
    /// A message's Message-ID, without its angle brackets.
    pub message_id: Option<String>,
}

/// Checks the size limit.
fn check_size(name: &str, bytes: &[u8]) -> Result<()> {
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(Error::TooLarge {
            name: name.to_string(),
            bytes: bytes.len() as u64,
            limit: MAX_DOCUMENT_BYTES,
        });
    }
    Ok(())
}

/// Plain text: UTF-8, invalid sequences replaced by U+FFFD.
pub fn decode_text(name: &str, bytes: &[u8]) -> Result<Document> {
    check_size(name, bytes)?;
    Ok(Document {
        name: name.to_string(),
        subject: None,
        text: String::from_utf8_lossy(bytes).into_owned(),
        message_id: None,
    })
}

/// One e-mail message: Subject and the decoded text of its text parts.
pub fn decode_message(name: &str, bytes: &[u8]) -> Result<Document> {
    check_size(name, bytes)?;
    let malformed = || Error::MalformedMessage {
        name: name.to_string(),
    };
    // The parser is not expected to panic on any input; should one slip through, the input is
    // reported as malformed rather than ending the scan.
    let decoded = std::panic::catch_unwind(|| {
        let message = MessageParser::default().parse(bytes)?;
        let subject = message.subject().map(str::to_string);
        let message_id = message.message_id().map(str::to_string);
        let mut text = String::new();
        append_message(&message, &mut text);
        Some((subject, text, message_id))
    })
    .map_err(|_| malformed())?;
    let (subject, text, message_id) = decoded.ok_or_else(malformed)?;
    Ok(Document {
        name: name.to_string(),
        subject,
        text,
        message_id,
    })
}

/// Appends a message's Subject and text parts to `out`, blank-line separated.
fn append_message(message: &mail_parser::Message<'_>, out: &mut String) {
    let push = |out: &mut String, text: &str| {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(text);
    };
    if let Some(subject) = message.subject() {
        push(out, subject);
    }
    for part in &message.parts {
        match &part.body {
            PartType::Text(text) => {
                let plain = part
                    .content_type()
                    .and_then(|t| t.subtype())
                    .is_none_or(|s| s.eq_ignore_ascii_case("plain"));
                if plain {
                    push(out, text);
                }
            }
            PartType::Html(html) => push(out, &mail_parser::decoders::html::html_to_text(html)),
            PartType::Message(nested) => {
                let mut inner = String::new();
                append_message(nested, &mut inner);
                push(out, &inner);
            }
            PartType::Binary(_) | PartType::InlineBinary(_) | PartType::Multipart(_) => {}
        }
    }
}

/// The messages of an mbox file, in order, each as raw RFC 5322 bytes.
pub fn split_mbox(bytes: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    mail_parser::mailbox::mbox::MessageIterator::new(bytes)
        // Reading from a byte slice cannot fail.
        .filter_map(std::io::Result::ok)
        .map(mail_parser::mailbox::mbox::Message::unwrap_contents)
}

/// Every document in a file's bytes, decoded as `kind` says: one for text or a message, one per
/// message for an mbox (named `name#1`, `name#2`, …). A message that cannot be decoded is an
/// error in its place; the others are still returned.
pub fn documents(name: &str, bytes: &[u8], kind: InputKind) -> Vec<Result<Document>> {
    match kind {
        InputKind::Text => vec![decode_text(name, bytes)],
        InputKind::Message => vec![decode_message(name, bytes)],
        InputKind::Mbox => split_mbox(bytes)
            .enumerate()
            .map(|(i, message)| decode_message(&format!("{name}#{}", i + 1), &message))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &[u8] =
        b"From: a@example.com\r\nTo: b@example.com\r\nSubject: Hello\r\n\r\nBody text\r\n";

    #[test]
    fn messages_are_detected_and_text_is_not() {
        assert!(looks_like_message(PLAIN));
        assert_eq!(detect("x", PLAIN), InputKind::Message);
        assert_eq!(
            detect("x", b"Dear friend: free money\n\nbye"),
            InputKind::Text
        );
        assert_eq!(detect("x", b"just text"), InputKind::Text);
        assert_eq!(detect("x.EML", b"anything"), InputKind::Message);
        let mut mbox = b"From a@example.com Sat Jan  3 01:05:34 1996\n".to_vec();
        mbox.extend_from_slice(PLAIN);
        assert_eq!(detect("x", &mbox), InputKind::Mbox);
    }

    #[test]
    fn subject_and_body_are_decoded() {
        let doc = decode_message("m", PLAIN).unwrap();
        assert_eq!(doc.subject.as_deref(), Some("Hello"));
        assert_eq!(doc.text.trim_end(), "Hello\n\nBody text");
    }

    #[test]
    fn base64_quoted_printable_charsets_and_html_are_decoded() {
        let message = concat!(
            "From: a@example.com\r\nSubject: =?UTF-8?B?5YWN6LS5?=\r\n",
            "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n",
            "--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n",
            "ZnJlZSBtb25leQ==\r\n",
            "--b\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
            "caf=E9 cr=\r\nedit\r\n",
            "--b\r\nContent-Type: text/html\r\n\r\n<p>click <b>here</b></p>\r\n",
            "--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n",
            "AAECAwQF/w==\r\n--b--\r\n"
        );
        let doc = decode_message("m", message.as_bytes()).unwrap();
        assert_eq!(doc.subject.as_deref(), Some("免费"));
        for expected in ["免费", "free money", "café credit", "click here"] {
            assert!(
                doc.text.contains(expected),
                "{expected:?} in {:?}",
                doc.text
            );
        }
    }

    #[test]
    fn mbox_files_split_into_messages() {
        let mbox = b"From a Sat Jan  3 01:05:34 1996\nSubject: one\n\nfirst\n>From here\n\nFrom b Sat Jan  3 01:05:34 1996\nSubject: two\n\nsecond\n";
        let docs = documents("box", mbox, InputKind::Mbox);
        assert_eq!(docs.len(), 2);
        let first = docs[0].as_ref().unwrap();
        assert_eq!(first.name, "box#1");
        assert!(first.text.contains("From here"), "{:?}", first.text);
        assert_eq!(docs[1].as_ref().unwrap().subject.as_deref(), Some("two"));
    }

    #[test]
    fn garbage_and_invalid_utf8_never_panic() {
        for bytes in [
            &b""[..],
            b"\xff\xfe\x00",
            b"Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n--x",
            b"Subject: =?utf-8?B?####?=\r\n\r\n\xff",
        ] {
            let _ = decode_message("g", bytes);
            let doc = decode_text("g", bytes).unwrap();
            assert!(doc.text.len() >= bytes.len().min(1) || bytes.is_empty());
        }
    }
}
