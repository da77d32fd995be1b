//! squid's external ACL helper protocol (the job squidGuard does): one request per line,
//! `[ID ]URL[ extras]`, answered `[ID ]OK message=CATEGORIES` for a listed URL and `[ID ]ERR` for
//! a clean one (or anything that is not a URL), one line per request, flushed at once.
//!
//! With `concurrency=N` in `external_acl_type`, squid puts a channel ID first and may send the
//! next request before the last answer; without it, lines hold the URL alone. A first token of
//! digits followed by more is a channel ID. squid percent-encodes what it passes with `%URI`;
//! canonicalization decodes it.

use std::io::{BufRead, Write};

use phishbloom_core::engine::Scratch;

use crate::check::Checker;
use crate::error::{Error, Result};
use crate::lists::Lists;

/// What one request line holds.
struct Request<'a> {
    channel: Option<&'a [u8]>,
    url: &'a [u8],
}

fn split(line: &[u8]) -> Option<Request<'_>> {
    let mut words = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let first = words.next()?;
    if first.iter().all(u8::is_ascii_digit) {
        if let Some(url) = words.next() {
            return Some(Request {
                channel: Some(first),
                url,
            });
        }
    }
    Some(Request {
        channel: None,
        url: first,
    })
}

/// Percent-encodes what squid's `key=value` syntax cannot carry bare (spaces, quotes,
/// control bytes, `%`).
fn escape(value: &str, out: &mut Vec<u8>) {
    for &b in value.as_bytes() {
        if b <= b' ' || b == b'"' || b == b'%' || b == b'\\' || b >= 0x7f {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
}

/// Answers requests from `input` on `output` until `input` ends. Lists are taken afresh for
/// each line, so a reload between lines applies to the next one.
pub fn run(lists: &Lists, mut input: impl BufRead, mut output: impl Write) -> Result<()> {
    let mut line = Vec::new();
    let mut answers = Vec::new();
    let mut out = Vec::new();
    let mut scratch = Scratch::default();
    loop {
        line.clear();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("reading squid's requests", e))?;
        if read == 0 {
            return Ok(());
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = phishbloom_text::line::content(text);
        let Some(request) = split(text) else { continue };
        out.clear();
        if let Some(channel) = request.channel {
            out.extend_from_slice(channel);
            out.push(b' ');
        }
        let checker = Checker::new(lists, None)?;
        answers.clear();
        checker.check(&[request.url], &mut scratch, &mut answers);
        match answers.first() {
            Some(answer) if answer.verdict.listed() => {
                out.extend_from_slice(b"OK message=");
                let categories = answer.verdict.categories.join(",");
                let label = match answer.list {
                    Some(list) if categories.is_empty() => checker.name(list).to_owned(),
                    _ => categories,
                };
                escape(&label, &mut out);
            }
            _ => out.extend_from_slice(b"ERR"),
        }
        lists
            .metrics()
            .count_checks(1, u64::from(out.windows(2).any(|w| w == b"OK")));
        out.push(b'\n');
        output
            .write_all(&out)
            .and_then(|()| output.flush())
            .map_err(|e| Error::io("answering squid", e))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lists::ListSpec;
    use phishbloom_blocklist::BlocklistFile;
    use phishbloom_core::EntrySet;
    use phishbloom_core::{Blocklist, BuildOptions};
    use phishbloom_url::Entry;
    use std::sync::Arc;

    #[test]
    fn answers_carry_the_channel_and_the_category() {
        let dir = tempfile::tempdir().unwrap();
        let entries = vec![Entry::parse(b"evil.com").unwrap()];
        let set = EntrySet::uncategorized(entries, "phishing");
        let path = dir.path().join("phish.bloom");
        let options = BuildOptions {
            verify: true,
            ..BuildOptions::default()
        };
        Blocklist::from_entries(&set, &options)
            .unwrap()
            .save(&path, &[])
            .unwrap();
        let lists = Lists::open(
            &[ListSpec::parse(path.to_str().unwrap()).unwrap()],
            Arc::default(),
        )
        .unwrap();
        let input = b"0 http://evil.com/x -\n1 http://fine.org/\nhttp://a.evil.com/\n\n7 not a url\n12 evil.com:443\n";
        let mut output = Vec::new();
        run(&lists, &input[..], &mut output).unwrap();
        assert_eq!(
            String::from_utf8(output).unwrap(),
            "0 OK message=phishing\n1 ERR\nOK message=phishing\n7 ERR\n12 OK message=phishing\n"
        );
    }

    #[test]
    fn escaping_keeps_values_one_token() {
        let mut out = Vec::new();
        escape("adult, gambling\"%", &mut out);
        assert_eq!(out, b"adult,%20gambling%22%25");
    }
}
