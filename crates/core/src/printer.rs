//! Verdict printers: one line per checked item, as tab-separated text or as one JSON object
//! (the output of `phishbloom check`, and the body of the server's NDJSON answers).
//!
//! TSV columns: the item; `clean`, `listed` or `allowed`; then, unless clean, the entry that
//! decided (the block entry, or for `allowed` the exception), its kind (`domain`, `url` or `key`)
//! and the categories of the block entry, comma-separated, prefixed `possible:` when the list
//! cannot tell exactly (no verification section); for `invalid` (an item a list of URL entries
//! cannot read), the reason. JSON fields: `key`, `verdict`, `listed`, `entry`, `entry_kind`,
//! `categories`, `categories_exact`, `exception`, `exception_kind`, `error`.

use phishbloom_url::{Expression, ExpressionKind};

use crate::resolve::{Categories, Decision, Resolver, Status, Verdict};

/// Output format of verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `ITEM<TAB>VERDICT[<TAB>ENTRY<TAB>KIND<TAB>CATEGORIES]`.
    Tsv,
    /// One JSON object per line.
    Json,
}

/// Appends the verdict line for `item` to `out`.
pub fn write_verdict(item: &[u8], verdict: &Verdict, output: Output, out: &mut Vec<u8>) {
    fn entry(hit: &Option<crate::hits::Hit>) -> Option<([&str; 2], &'static str)> {
        hit.as_ref()
            .map(|hit| ([hit.expression.as_str(), ""], hit.kind))
    }
    let line = Line {
        item,
        status: verdict.status,
        error: verdict.error.as_deref(),
        hit: entry(&verdict.hit),
        exception: entry(&verdict.exception),
        exact: verdict.categories_exact,
        names: verdict.categories.as_slice(),
    };
    line.write(output, out);
}

/// Appends the line of a [`Decision`] for `item` to `out` — byte for byte what
/// [`write_verdict`] writes for [`Decision::verdict`], with nothing allocated once `order`
/// (scratch space for the category names' order) has grown.
pub fn write_decision(
    item: &[u8],
    decision: &Decision<'_, '_>,
    resolver: &Resolver,
    order: &mut Vec<u16>,
    output: Output,
    out: &mut Vec<u8>,
) {
    let (Some(hit), Some(categories)) = (decision.hit, &decision.categories) else {
        // No block entry: clean (as `Decision::verdict` says) — most lines, so the TSV line is
        // written straight: the item, a tab, `clean`.
        return match output {
            Output::Tsv => {
                out.extend_from_slice(item);
                out.extend_from_slice(b"\tclean\n");
            }
            Output::Json => write_verdict(item, &Verdict::default(), output, out),
        };
    };
    fn entry(e: Expression<'_>) -> ([&str; 2], &'static str) {
        ([e.host, e.path], expression_kind_name(e))
    }
    let line = Line {
        item,
        status: decision.status,
        error: None,
        hit: Some(entry(hit)),
        exception: decision.exception.map(entry),
        exact: categories.exact,
        names: DecisionNames {
            resolver,
            categories,
            order,
        },
    };
    line.write(output, out);
}

/// Appends the line of an item a list of URL entries cannot read (`invalid` and the reason) to
/// `out`, as [`write_verdict`] writes [`Verdict::invalid`]`(reason)`.
pub fn write_invalid(item: &[u8], reason: &str, output: Output, out: &mut Vec<u8>) {
    let line = Line {
        item,
        status: Status::Invalid,
        error: Some(reason),
        hit: None,
        exception: None,
        exact: true,
        names: &[] as &[String],
    };
    line.write(output, out);
}

/// `domain` or `url`, as [`crate::hits::Hit::of`] names an expression's kind.
fn expression_kind_name(expression: Expression<'_>) -> &'static str {
    match expression.kind() {
        ExpressionKind::Domain => "domain",
        ExpressionKind::Url => "url",
    }
}

/// A verdict line's category names, visited in order (once: a line is written once).
trait Names {
    fn each(self, visit: impl FnMut(&str));
}

/// An owned verdict's names, in their order.
impl Names for &[String] {
    fn each(self, visit: impl FnMut(&str)) {
        self.iter().map(String::as_str).for_each(visit);
    }
}

/// A [`Decision`]'s names, ordered as it is written ([`Resolver::each_category_name`]).
struct DecisionNames<'a, 'r> {
    resolver: &'a Resolver,
    categories: &'a Categories<'r>,
    order: &'a mut Vec<u16>,
}

impl Names for DecisionNames<'_, '_> {
    #[inline]
    fn each(self, visit: impl FnMut(&str)) {
        self.resolver
            .each_category_name(self.categories, self.order, visit);
    }
}

/// One verdict line's fields, borrowed from an owned [`Verdict`] or a [`Decision`]: the one
/// shape both printers write from. An entry's text may come in pieces (host, path).
struct Line<'a, N: Names> {
    item: &'a [u8],
    status: Status,
    /// Why the item is invalid.
    error: Option<&'a str>,
    /// The block entry that lists the item (also when an exception allows it), and its kind.
    hit: Option<([&'a str; 2], &'static str)>,
    /// The exception that allows it, and its kind.
    exception: Option<([&'a str; 2], &'static str)>,
    /// Whether the categories are exactly the block entry's.
    exact: bool,
    /// Visits the block entry's category names, in order (once: a line is written once).
    names: N,
}

impl<N: Names> Line<'_, N> {
    fn write(self, output: Output, out: &mut Vec<u8>) {
        match output {
            Output::Tsv => self.write_tsv(out),
            Output::Json => self.write_json(out),
        }
    }

    /// Item, status, then the reason (invalid) or the deciding entry (the block entry, or for
    /// `allowed` the exception), its kind and the block entry's categories.
    fn write_tsv(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.item);
        self.status.write_tsv_column(out);
        if self.status == Status::Invalid {
            out.push(b'\t');
            // One line and one column: a reason (which may quote the item) never holds a line
            // break or a tab.
            out.extend(self.error.unwrap_or_default().bytes().map(|b| match b {
                b'\n' | b'\r' | b'\t' => b' ',
                b => b,
            }));
        }
        let decided = match self.status {
            Status::Listed => self.hit,
            Status::Allowed => self.exception,
            Status::Clean | Status::Invalid => None,
        };
        if let Some((text, kind)) = decided {
            out.push(b'\t');
            for piece in text {
                out.extend_from_slice(piece.as_bytes());
            }
            // The kind names are constants: copied without a call.
            match kind {
                "url" => out.extend_from_slice(b"\turl\t"),
                "domain" => out.extend_from_slice(b"\tdomain\t"),
                other => {
                    out.push(b'\t');
                    out.extend_from_slice(other.as_bytes());
                    out.push(b'\t');
                }
            }
            if !self.exact {
                out.extend_from_slice(b"possible:");
            }
            let mut first = true;
            self.names.each(|name| {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(name.as_bytes());
            });
        }
        out.push(b'\n');
    }

    /// The JSON object, by hand (it is the server's hot path): the fields in their order,
    /// absent ones left out, strings as serde_json writes them ([`write_json_string`]); the
    /// item as UTF-8, bytes that are not replaced by U+FFFD.
    fn write_json(self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"key\":");
        if self.item.is_ascii() {
            // Nearly every item: ASCII is UTF-8 as it is, and the test reads a word at a time
            // where a UTF-8 check walks bytes to an aligned address first.
            out.push(b'"');
            write_json_escaped(self.item, out);
            out.push(b'"');
        } else {
            write_json_string(&String::from_utf8_lossy(self.item), out);
        }
        out.extend_from_slice(b",\"verdict\":\"");
        // The status names are plain lower-case words: nothing to escape.
        out.extend_from_slice(self.status.name().as_bytes());
        out.extend_from_slice(if self.status == Status::Listed {
            b"\",\"listed\":true"
        } else {
            b"\",\"listed\":false"
        });
        if let Some((text, kind)) = self.hit {
            out.extend_from_slice(b",\"entry\":");
            write_json_pieces(&text, out);
            out.extend_from_slice(b",\"entry_kind\":");
            write_json_string(kind, out);
            out.extend_from_slice(b",\"categories\":[");
            let mut first = true;
            self.names.each(|name| {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_json_string(name, out);
            });
            out.extend_from_slice(if self.exact {
                b"],\"categories_exact\":true"
            } else {
                b"],\"categories_exact\":false"
            });
        }
        if let Some((text, kind)) = self.exception {
            out.extend_from_slice(b",\"exception\":");
            write_json_pieces(&text, out);
            out.extend_from_slice(b",\"exception_kind\":");
            write_json_string(kind, out);
        }
        if let Some(error) = self.error {
            out.extend_from_slice(b",\"error\":");
            write_json_string(error, out);
        }
        out.extend_from_slice(b"}\n");
    }
}

/// Appends `text` as a JSON string, byte for byte as serde_json writes it: `"` and `\`
/// escaped, the control characters below U+0020 as `\b`, `\t`, `\n`, `\f`, `\r` or
/// `\u00XX` (lower-case hex), every other character as it is. Eight bytes are looked at a
/// time while none needs an escape.
pub fn write_json_string(text: &str, out: &mut Vec<u8>) {
    write_json_pieces(&[text], out);
}

/// Appends the concatenation of `pieces` as one JSON string ([`write_json_string`]).
fn write_json_pieces(pieces: &[&str], out: &mut Vec<u8>) {
    out.push(b'"');
    for piece in pieces {
        write_json_escaped(piece.as_bytes(), out);
    }
    out.push(b'"');
}

/// Appends the bytes of a UTF-8 string escaped as in a JSON string, without quotes: runs that
/// need no escape are found a window at a time ([`phishbloom_url::scan::find`]) and copied
/// whole.
fn write_json_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    let mut rest = bytes;
    while let Some(at) =
        phishbloom_url::scan::find(rest, |b, _| (b < 0x20) | (b == b'"') | (b == b'\\'))
    {
        out.extend_from_slice(&rest[..at]);
        let byte = rest[at];
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            _ => b"",
        };
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Hit;
    use proptest::prelude::*;

    /// The JSON line as serde writes it: what [`write_json`] must write, byte for byte.
    fn reference_json(item: &[u8], verdict: &Verdict) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Line<'a> {
            key: std::borrow::Cow<'a, str>,
            verdict: Status,
            listed: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            entry: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            entry_kind: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            categories: Option<&'a [String]>,
            #[serde(skip_serializing_if = "Option::is_none")]
            categories_exact: Option<bool>,
            #[serde(skip_serializing_if = "Option::is_none")]
            exception: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            exception_kind: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
        }
        let hit = verdict.hit.as_ref();
        let line = Line {
            key: String::from_utf8_lossy(item),
            verdict: verdict.status,
            listed: verdict.listed(),
            entry: hit.map(|h| h.expression.as_str()),
            entry_kind: hit.map(|h| h.kind),
            categories: hit.map(|_| verdict.categories.as_slice()),
            categories_exact: hit.map(|_| verdict.categories_exact),
            exception: verdict.exception.as_ref().map(|h| h.expression.as_str()),
            exception_kind: verdict.exception.as_ref().map(|h| h.kind),
            error: verdict.error.as_deref(),
        };
        let mut out = serde_json::to_vec(&line).unwrap();
        out.push(b'\n');
        out
    }

    #[test]
    fn json_strings_are_escaped_as_serde_json_escapes_them() {
        let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
        let mut texts = vec![
            String::new(),
            every_ascii.clone(),
            "é\u{2028}\u{fffd}😀\"\\".into(),
        ];
        // Each character to escape at each place of a word and across words.
        for at in 0..20 {
            for c in ['"', '\\', '\n', '\u{1}', '\u{1f}', '\u{7f}', 'é'] {
                let mut text = "abcdefghijklmnopqrst".to_string();
                text.insert(at, c);
                texts.push(text);
            }
        }
        for text in texts {
            let mut out = Vec::new();
            write_json_string(&text, &mut out);
            assert_eq!(out, serde_json::to_vec(&text).unwrap(), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn json_strings_match_serde_json(text in any::<String>(), ascii in "[\\x00-\\x7f]{0,40}") {
            for text in [text, ascii] {
                let mut out = Vec::new();
                write_json_string(&text, &mut out);
                prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
            }
        }

        #[test]
        fn json_lines_match_serde(
            item in proptest::collection::vec(any::<u8>(), 0..40),
            status in 0..4u8,
            hit in proptest::option::of(".{0,12}"),
            exception in proptest::option::of(".{0,12}"),
            categories in proptest::collection::vec(".{0,6}", 0..3),
            exact in any::<bool>(),
            error in proptest::option::of(".{0,12}"),
        ) {
            let verdict = Verdict {
                status: [Status::Clean, Status::Listed, Status::Allowed, Status::Invalid]
                    [usize::from(status)],
                hit: hit.map(|expression| Hit { expression, kind: "domain" }),
                exception: exception.map(|expression| Hit { expression, kind: "url" }),
                categories,
                categories_exact: exact,
                error,
            };
            let mut out = Vec::new();
            write_verdict(&item, &verdict, Output::Json, &mut out);
            prop_assert_eq!(out, reference_json(&item, &verdict));
        }
    }

    fn listed() -> Verdict {
        Verdict {
            status: Status::Listed,
            hit: Some(Hit {
                expression: "evil.com".into(),
                kind: "domain",
            }),
            exception: None,
            categories: vec!["phishing".into(), "malware".into()],
            categories_exact: true,
            error: None,
        }
    }

    #[test]
    fn tsv_lines_name_the_entry_and_its_categories() {
        let mut out = Vec::new();
        write_verdict(b"http://a.evil.com/", &listed(), Output::Tsv, &mut out);
        write_verdict(b"x", &Verdict::default(), Output::Tsv, &mut out);
        let possible = Verdict {
            categories_exact: false,
            ..listed()
        };
        write_verdict(b"y", &possible, Output::Tsv, &mut out);
        let allowed = Verdict {
            status: Status::Allowed,
            exception: Some(Hit {
                expression: "docs.evil.com".into(),
                kind: "domain",
            }),
            ..listed()
        };
        write_verdict(b"docs.evil.com/a", &allowed, Output::Tsv, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "http://a.evil.com/\tlisted\tevil.com\tdomain\tphishing,malware\n\
             x\tclean\n\
             y\tlisted\tevil.com\tdomain\tpossible:phishing,malware\n\
             docs.evil.com/a\tallowed\tdocs.evil.com\tdomain\tphishing,malware\n"
        );
    }

    #[test]
    fn an_invalid_item_is_answered_with_its_reason() {
        let mut out = Vec::new();
        let verdict = Verdict::invalid("not a URL:\nbad host");
        write_verdict(b"http://[x", &verdict, Output::Tsv, &mut out);
        assert_eq!(out, b"http://[x\tinvalid\tnot a URL: bad host\n");
        out.clear();
        write_verdict(b"http://[x", &verdict, Output::Json, &mut out);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"key": "http://[x", "verdict": "invalid", "listed": false,
                               "error": "not a URL:\nbad host"})
        );
    }

    #[test]
    fn json_lines_carry_every_field() {
        let mut out = Vec::new();
        write_verdict(b"\xff\"q", &listed(), Output::Json, &mut out);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["key"], "\u{fffd}\"q");
        assert_eq!(value["verdict"], "listed");
        assert_eq!(value["listed"], true);
        assert_eq!(value["entry"], "evil.com");
        assert_eq!(value["entry_kind"], "domain");
        assert_eq!(
            value["categories"],
            serde_json::json!(["phishing", "malware"])
        );
        assert_eq!(value["categories_exact"], true);
        assert!(value.get("exception").is_none());
        out.clear();
        write_verdict(b"ok", &Verdict::default(), Output::Json, &mut out);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"key": "ok", "verdict": "clean", "listed": false})
        );
    }
}
