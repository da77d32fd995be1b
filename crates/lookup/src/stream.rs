//! Streaming checks: millions of lines from a pipe answered at close to the filter's speed.
//!
//! A reader thread cuts the input into chunks at line boundaries; worker threads normalize,
//! batch-query (with prefetching) and format each chunk; the calling thread writes the results
//! in input order. Memory stays bounded by a few chunks in flight.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;

use phishbloom_filter::Filter;

use crate::matcher::{Hit, Matcher, Scratch};

use crate::error::{Error, Result};
use crate::keys::KeyScheme;

/// Bytes per chunk handed to a worker: large enough to amortize channel traffic, small enough to
/// keep a few in flight within L2.
const CHUNK_BYTES: usize = 1024 * 1024;

/// Longest line accepted from a stream (64 MiB); beyond that the input is rejected with an error
/// that names the line.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Output format of verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `KEY<TAB>listed|clean`.
    Tsv,
    /// `{"key": KEY, "listed": bool}` per line.
    Json,
}

/// Counts of a check run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckStats {
    /// Lines answered.
    pub lines: u64,
    /// Lines answered `listed`.
    pub listed: u64,
}

impl std::ops::AddAssign for CheckStats {
    fn add_assign(&mut self, other: Self) {
        self.lines += other.lines;
        self.listed += other.listed;
    }
}

/// What answers lines.
#[derive(Clone, Copy)]
pub enum Checker<'a> {
    /// Each line normalized by `scheme` into one key, looked up whole in `filter`.
    Keys {
        /// The filter.
        filter: &'a dyn Filter,
        /// The normalization the filter was built with.
        scheme: KeyScheme,
    },
    /// Each line canonicalized as a URL and matched through its lookup expressions; a line that
    /// is not a URL (no host) is never listed.
    Urls(&'a dyn Matcher),
}

/// Answers `lines` (each without its `\n`), appending one verdict line each to `out`.
pub fn answer_lines<'a>(
    checker: Checker<'_>,
    lines: impl Iterator<Item = &'a [u8]>,
    output: Output,
    out: &mut Vec<u8>,
) -> CheckStats {
    let lines: Vec<&[u8]> = lines.map(|l| l.strip_suffix(b"\r").unwrap_or(l)).collect();
    let verdicts: Vec<(bool, Option<Hit>)> = match checker {
        Checker::Keys { filter, scheme } => key_verdicts(filter, scheme, &lines),
        Checker::Urls(matcher) => {
            let mut scratch = Scratch::default();
            lines
                .iter()
                .map(|line| match phishbloom_url::canonicalize(line) {
                    Ok(url) => {
                        let hit = matcher.find(&url, &mut scratch);
                        (hit.is_some(), hit)
                    }
                    Err(_) => (false, None),
                })
                .collect()
        }
    };
    let mut stats = CheckStats::default();
    for (line, (listed, hit)) in lines.iter().zip(&verdicts) {
        write_verdict(line, *listed, hit.as_ref(), output, out);
        stats.lines += 1;
        stats.listed += u64::from(*listed);
    }
    stats
}

/// Whole-key verdicts: normalize every line into one arena, then one batched query.
fn key_verdicts(
    filter: &dyn Filter,
    scheme: KeyScheme,
    lines: &[&[u8]],
) -> Vec<(bool, Option<Hit>)> {
    let mut answers = Vec::new();
    if scheme == KeyScheme::Exact {
        // Exact keys are the lines themselves (their `\r` is already gone): no copy.
        filter.contains_batch(lines, &mut answers);
        return lines
            .iter()
            .zip(answers)
            .map(|(line, listed)| (listed && !line.is_empty(), None))
            .collect();
    }
    let mut arena = Vec::with_capacity(lines.iter().map(|l| l.len()).sum());
    let mut ends = Vec::with_capacity(lines.len());
    for line in lines {
        scheme.append_key(line, &mut arena);
        ends.push(arena.len());
    }
    let mut start = 0;
    let keys: Vec<&[u8]> = ends
        .iter()
        .map(|&end| {
            let key = &arena[start..end];
            start = end;
            key
        })
        .collect();
    filter.contains_batch(&keys, &mut answers);
    // An empty key (blank line) is never listed: no list entry is empty.
    keys.iter()
        .zip(answers)
        .map(|(key, listed)| (listed && !key.is_empty(), None))
        .collect()
}

/// Appends one verdict line: `KEY<TAB>listed|clean`, plus `<TAB>EXPRESSION<TAB>domain|url` for a
/// URL match; or the same as one JSON object.
fn write_verdict(line: &[u8], listed: bool, hit: Option<&Hit>, output: Output, out: &mut Vec<u8>) {
    match output {
        Output::Tsv => {
            out.extend_from_slice(line);
            out.extend_from_slice(if listed { b"\tlisted" } else { b"\tclean" });
            if let Some(hit) = hit {
                out.push(b'\t');
                out.extend_from_slice(hit.expression.as_bytes());
                out.push(b'\t');
                out.extend_from_slice(hit.kind.as_bytes());
            }
            out.push(b'\n');
        }
        Output::Json => {
            #[derive(serde::Serialize)]
            struct Verdict<'a> {
                key: std::borrow::Cow<'a, str>,
                listed: bool,
                #[serde(skip_serializing_if = "Option::is_none")]
                expression: Option<&'a str>,
                #[serde(skip_serializing_if = "Option::is_none")]
                entry: Option<&'a str>,
            }
            let verdict = Verdict {
                key: String::from_utf8_lossy(line),
                listed,
                expression: hit.map(|h| h.expression.as_str()),
                entry: hit.map(|h| h.kind),
            };
            // Serializing strings and a bool into a Vec cannot fail.
            serde_json::to_writer(&mut *out, &verdict).expect("JSON into a Vec is infallible");
            out.push(b'\n');
        }
    }
}

/// Reads lines from `input` until it ends and writes a verdict per line to `output`, using
/// `threads` worker threads. `input_name` labels errors.
pub fn check_stream(
    checker: Checker<'_>,
    input: impl Read + Send,
    input_name: &Path,
    mut output: impl Write,
    format: Output,
    threads: usize,
) -> Result<CheckStats> {
    let threads = threads.max(1);
    // Chunks in flight: two per worker keeps workers busy while bounding memory.
    let (chunk_tx, chunk_rx) = sync_channel::<(u64, Vec<u8>)>(threads * 2);
    let (result_tx, result_rx) = sync_channel::<(u64, Vec<u8>, CheckStats)>(threads * 2);
    let chunk_rx = Mutex::new(chunk_rx);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            read_chunks(input, input_name, |seq, chunk| {
                chunk_tx.send((seq, chunk)).is_ok()
            })
        });
        for _ in 0..threads {
            let result_tx = result_tx.clone();
            let chunk_rx = &chunk_rx;
            scope.spawn(move || work(checker, format, chunk_rx, |r| result_tx.send(r).is_ok()));
        }
        drop(result_tx);
        let written = write_in_order(&result_rx, &mut output, input_name);
        // Unblock the reader and workers if writing stopped early (for example a closed pipe).
        drop(result_rx);
        let read = reader.join().unwrap_or_else(|_| Err(panicked(input_name)));
        let stats = written?;
        read?;
        Ok(stats)
    })
}

/// An error standing for a thread that panicked (a bug: no code here is meant to panic).
fn panicked(path: &Path) -> Error {
    Error::io(
        path,
        "read",
        std::io::Error::other("reader thread panicked"),
    )
}

/// Receives chunks and sends their formatted verdicts, until the chunks run out or `send` fails.
fn work(
    checker: Checker<'_>,
    format: Output,
    chunks: &Mutex<Receiver<(u64, Vec<u8>)>>,
    mut send: impl FnMut((u64, Vec<u8>, CheckStats)) -> bool,
) {
    loop {
        // A poisoned lock means another worker panicked; stop quietly, the writer will notice
        // the missing chunk through the closed channel.
        let next = match chunks.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok((seq, chunk)) = next else { return };
        let body = chunk.strip_suffix(b"\n").unwrap_or(&chunk);
        let mut out = Vec::with_capacity(chunk.len() + chunk.len() / 2);
        let stats = if chunk.is_empty() {
            CheckStats::default()
        } else {
            answer_lines(checker, split_lines(body), format, &mut out)
        };
        if !send((seq, out, stats)) {
            return;
        }
    }
}

/// The lines of `text` (split at `\n`, found with SIMD by memchr).
fn split_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text)
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let line = &text[start..end];
            start = end + 1;
            line
        })
}

/// Writes results in sequence order as they arrive.
fn write_in_order(
    results: &Receiver<(u64, Vec<u8>, CheckStats)>,
    output: &mut impl Write,
    input_name: &Path,
) -> Result<CheckStats> {
    let stdout = Path::new("<stdout>");
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut stats = CheckStats::default();
    for (seq, out, chunk_stats) in results {
        pending.insert(seq, (out, chunk_stats));
        while let Some((out, chunk_stats)) = pending.remove(&next) {
            output
                .write_all(&out)
                .map_err(|e| Error::io(stdout, "write", e))?;
            stats += chunk_stats;
            next += 1;
        }
    }
    if !pending.is_empty() {
        return Err(panicked(input_name));
    }
    output.flush().map_err(|e| Error::io(stdout, "write", e))?;
    Ok(stats)
}

/// Cuts `input` into chunks that end at a line boundary and hands them to `send` with a sequence
/// number; stops early if `send` returns false.
fn read_chunks(
    mut input: impl Read,
    input_name: &Path,
    mut send: impl FnMut(u64, Vec<u8>) -> bool,
) -> Result<()> {
    let mut seq = 0u64;
    let mut lines_before = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut chunk = std::mem::take(&mut carry);
        chunk.reserve(CHUNK_BYTES);
        // `read_to_end` fills spare capacity without zeroing it first, and retries on EINTR.
        let read = (&mut input)
            .take(CHUNK_BYTES as u64)
            .read_to_end(&mut chunk)
            .map_err(|e| Error::io(input_name, "read", e))?;
        if read == 0 {
            // End of input: whatever is left is the last line, without a newline.
            if !chunk.is_empty() {
                // The result does not matter: a closed channel means the writer stopped early.
                let _ = send(seq, chunk);
            }
            return Ok(());
        }
        match memchr::memrchr(b'\n', &chunk) {
            Some(last) => {
                carry = chunk[last + 1..].to_vec();
                chunk.truncate(last + 1);
                lines_before += memchr::memchr_iter(b'\n', &chunk).count() as u64;
                if !send(seq, chunk) {
                    return Ok(());
                }
                seq += 1;
            }
            None if chunk.len() > MAX_LINE_BYTES => {
                return Err(Error::LineTooLong {
                    path: input_name.to_path_buf(),
                    line: lines_before + 1,
                    limit: MAX_LINE_BYTES,
                });
            }
            None => carry = chunk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::BlockedBloomFilter;

    fn filter() -> BlockedBloomFilter {
        let mut filter = BlockedBloomFilter::new(1000, 0.0001).unwrap();
        for i in 0..1000 {
            filter.insert(format!("listed{i}.com"));
        }
        filter
    }

    fn run(input: &[u8], threads: usize, format: Output) -> (String, CheckStats) {
        let mut out = Vec::new();
        let stats = check_stream(
            Checker::Keys {
                filter: &filter(),
                scheme: KeyScheme::Url,
            },
            input,
            Path::new("in"),
            &mut out,
            format,
            threads,
        )
        .unwrap();
        (String::from_utf8(out).unwrap(), stats)
    }

    #[test]
    fn verdicts_come_back_in_input_order() {
        let mut input = String::new();
        let mut expected = String::new();
        for i in 0..60_000 {
            let (line, verdict) = if i % 7 == 0 {
                (format!("HTTP://Listed{}.com/", i % 1000), "listed")
            } else {
                (format!("clean{i}.org"), "clean")
            };
            input.push_str(&line);
            input.push('\n');
            expected.push_str(&format!("{line}\t{verdict}\n"));
        }
        for threads in [1, 2, 3] {
            let (out, stats) = run(input.as_bytes(), threads, Output::Tsv);
            assert_eq!(stats.lines, 60_000);
            assert!(stats.listed >= 60_000 / 7);
            // The filter's rate is 1e-4: a handful of clean lines may read "listed".
            let differing = out
                .lines()
                .zip(expected.lines())
                .filter(|(a, b)| a != b)
                .count();
            assert!(differing < 20, "{differing}");
            assert_eq!(out.lines().count(), 60_000);
        }
    }

    #[test]
    fn url_lines_report_the_matching_expression() {
        let entries: Vec<phishbloom_url::Entry> = ["evil.com", "a.org/x"]
            .iter()
            .map(|e| phishbloom_url::Entry::parse(e.as_bytes()).unwrap())
            .collect();
        let matcher = crate::matcher::ExactMatcher::new(&entries);
        let mut out = Vec::new();
        let lines = [
            &b"HTTP://WWW.Evil.com:80/x/../y#f"[..],
            b"a.org/x/y?z",
            b"a.org/xy",
            b"",
        ];
        let stats = answer_lines(
            Checker::Urls(&matcher),
            lines.into_iter(),
            Output::Tsv,
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP://WWW.Evil.com:80/x/../y#f\tlisted\tevil.com\tdomain\n\
             a.org/x/y?z\tlisted\ta.org/x\turl\na.org/xy\tclean\n\tclean\n"
        );
        assert_eq!(
            stats,
            CheckStats {
                lines: 4,
                listed: 2
            }
        );
    }

    #[test]
    fn last_line_without_newline_blank_lines_and_crlf() {
        let (out, stats) = run(b"listed1.com\r\n\nx.com", 2, Output::Tsv);
        assert_eq!(out, "listed1.com\tlisted\n\tclean\nx.com\tclean\n");
        assert_eq!(
            stats,
            CheckStats {
                lines: 3,
                listed: 1
            }
        );
        let (out, _) = run(b"", 2, Output::Tsv);
        assert_eq!(out, "");
    }

    #[test]
    fn json_output_is_one_object_per_line_even_for_binary_input() {
        let (out, _) = run(b"listed2.com\n\xff\"q\n", 1, Output::Json);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["listed"], true);
        assert_eq!(lines[0]["key"], "listed2.com");
        assert_eq!(lines[1]["key"], "\u{fffd}\"q");
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error_naming_it() {
        struct Endless;
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(b'a');
                Ok(buf.len())
            }
        }
        let mut out = Vec::new();
        let error = check_stream(
            Checker::Keys {
                filter: &filter(),
                scheme: KeyScheme::Url,
            },
            Endless,
            Path::new("in"),
            &mut out,
            Output::Tsv,
            2,
        )
        .unwrap_err();
        assert!(
            matches!(error, Error::LineTooLong { line: 1, .. }),
            "{error:?}"
        );
    }
}
