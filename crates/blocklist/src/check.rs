//! The one stream checker: millions of lines from a pipe answered at close to the filter's
//! speed, whatever answers them — a blocklist in memory (`check FILE`) or a list in Redis
//! (`check --redis`), each an [`Answerer`].
//!
//! A reader thread cuts the input into chunks at line boundaries; worker threads (one answerer
//! each) prepare, batch-query (with prefetching) and format each chunk; the calling thread writes
//! the results in input order. Memory stays bounded by a few chunks in flight. A chunk that ends
//! where the reader may have to wait (a pipe with nothing more ready) is flushed as soon as it is
//! answered, so a co-process that writes one line gets its answer before it writes the next.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Mutex;
use std::time::Duration;

use crate::{Error, Result};
use phishbloom_core::engine::Scratch;
use phishbloom_core::printer::Output;
use phishbloom_core::resolve::Verdict;
use phishbloom_core::{write_answered, Blocklist, CheckStats};

/// Bytes per chunk handed to a worker: large enough to amortize channel traffic, small enough to
/// keep a few in flight within L2.
pub const CHUNK_BYTES: usize = 1024 * 1024;

/// How to run [`check_stream`].
#[derive(Clone, Copy, Debug)]
pub struct StreamOptions {
    /// Verdict format.
    pub output: Output,
    /// Worker threads.
    pub threads: usize,
    /// Input bytes per chunk handed to a worker ([`CHUNK_BYTES`] unless testing).
    pub chunk_bytes: usize,
    /// Whether the input is a regular file, whose reads return less than asked only at its end:
    /// then each chunk is read whole, straight into its own buffer (neither copied from a read
    /// buffer nor zeroed first). Leave it `false` for a pipe or a terminal, where a short read
    /// means the writer may be waiting for answers: those are read as they come, and answered
    /// at once.
    pub input_is_file: bool,
}

impl StreamOptions {
    /// `output` on `threads` threads with the default chunk size.
    pub fn new(output: Output, threads: usize) -> Self {
        StreamOptions {
            output,
            threads,
            chunk_bytes: CHUNK_BYTES,
            input_is_file: false,
        }
    }
}

/// How often an idle worker looks whether the stream was stopped (an error elsewhere): short
/// enough that an error is reported at once, long enough to cost nothing.
const WAKE_EVERY: Duration = Duration::from_millis(50);

/// Longest line accepted from a stream (64 MiB); beyond that the input is rejected with an error
/// that names the line.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What answers the items of a stream, one per worker thread: a blocklist in memory with its
/// scratch ([`LocalAnswerer`]), or a connection to a list in Redis.
pub trait Answerer: Send {
    /// What answering can fail with (a list in memory cannot fail; a Redis list can).
    type Error: From<Error> + Send;

    /// Appends one verdict per item (a line without its `\n` or `\r`) to `out`, in order.
    fn answer(&mut self, items: &[&[u8]], out: &mut Vec<Verdict>) -> Result<(), Self::Error>;

    /// Answers `items` (lines without their `\n`; a trailing `\r` is dropped) and appends one
    /// verdict line each to `out` in `output`'s format. By default through
    /// [`Answerer::answer`]; an answerer with a faster line path (a list in memory) overrides it.
    fn write_answers(
        &mut self,
        items: &[&[u8]],
        output: Output,
        out: &mut Vec<u8>,
    ) -> Result<CheckStats, Self::Error> {
        write_answered(
            items.iter().copied(),
            |items, verdicts| self.answer(items, verdicts),
            output,
            out,
        )
    }

    /// [`Answerer::write_answers`] of the lines of `text` ([`text_lines`]). By default the
    /// lines are gathered first; an answerer whose line path takes them one at a time (a list
    /// in memory) overrides it.
    fn write_text_answers(
        &mut self,
        text: &[u8],
        output: Output,
        out: &mut Vec<u8>,
    ) -> Result<CheckStats, Self::Error> {
        let lines: Vec<&[u8]> = text_lines(text).collect();
        self.write_answers(&lines, output, out)
    }
}

/// A blocklist in memory answering on one thread.
pub struct LocalAnswerer<'a> {
    list: &'a Blocklist,
    scratch: Scratch,
}

impl<'a> LocalAnswerer<'a> {
    /// An answerer for `list`.
    pub fn new(list: &'a Blocklist) -> Self {
        LocalAnswerer {
            list,
            scratch: Scratch::default(),
        }
    }
}

impl Answerer for LocalAnswerer<'_> {
    type Error = Error;

    fn answer(&mut self, items: &[&[u8]], out: &mut Vec<Verdict>) -> Result<()> {
        self.list.check_batch(items, &mut self.scratch, out);
        Ok(())
    }

    fn write_answers(
        &mut self,
        items: &[&[u8]],
        output: Output,
        out: &mut Vec<u8>,
    ) -> Result<CheckStats> {
        Ok(self
            .list
            .write_checks(items.iter().copied(), output, &mut self.scratch, out))
    }

    fn write_text_answers(
        &mut self,
        text: &[u8],
        output: Output,
        out: &mut Vec<u8>,
    ) -> Result<CheckStats> {
        Ok(self
            .list
            .write_checks(text_lines(text), output, &mut self.scratch, out))
    }
}

/// Answers `lines` (each without its `\n`) against `blocklist`, appending one verdict line
/// each to `out`.
pub fn answer_lines<'a>(
    blocklist: &Blocklist,
    lines: impl Iterator<Item = &'a [u8]>,
    output: Output,
    out: &mut Vec<u8>,
) -> CheckStats {
    // A list in memory answers every item: `LocalAnswerer::answer` returns `Ok` always.
    answer_with(&mut LocalAnswerer::new(blocklist), lines, output, out).unwrap_or_default()
}

/// Answers `lines` (each without its `\n`; a trailing `\r` is dropped) with `answerer`,
/// appending one verdict line each to `out`.
pub fn answer_with<'a, A: Answerer>(
    answerer: &mut A,
    lines: impl Iterator<Item = &'a [u8]>,
    output: Output,
    out: &mut Vec<u8>,
) -> Result<CheckStats, A::Error> {
    let lines: Vec<&[u8]> = lines.collect();
    answerer.write_answers(&lines, output, out)
}

/// Reads lines from `input` until it ends and writes a verdict per line to `output`, using
/// `options.threads` worker threads over `blocklist`. `input_name` labels errors.
pub fn check_stream(
    blocklist: &Blocklist,
    input: impl Read + Send + 'static,
    input_name: &Path,
    output: impl Write,
    options: &StreamOptions,
) -> Result<CheckStats> {
    let workers = (0..options.threads.max(1))
        .map(|_| LocalAnswerer::new(blocklist))
        .collect();
    check_stream_with(workers, input, input_name, output, options)
}

/// [`check_stream`] with any answerers, one worker thread each (`options.threads` is not used:
/// the workers are as many as the answerers given, at least one).
///
/// When answering or writing fails (a Redis server gone, a closed output pipe), the error is
/// returned at once: the workers stop, and the reader — which may be waiting for input that a
/// co-process will never send — is left to end with the process instead of being waited for.
pub fn check_stream_with<A: Answerer>(
    workers: Vec<A>,
    input: impl Read + Send + 'static,
    input_name: &Path,
    mut output: impl Write,
    options: &StreamOptions,
) -> Result<CheckStats, A::Error> {
    let threads = workers.len().max(1);
    let (format, chunk_bytes) = (options.output, options.chunk_bytes.max(1));
    let whole = options.input_is_file;
    // Chunks in flight: two per worker keeps workers busy while bounding memory.
    let (chunk_tx, chunk_rx) = sync_channel::<Chunk>(threads * 2);
    let (result_tx, result_rx) = sync_channel::<Answers<A::Error>>(threads * 2);
    let chunk_rx = Mutex::new(chunk_rx);
    // Buffers handed back for reuse, so that a stream of any length allocates (and the system
    // maps and zeroes) only the few in flight: a chunk's bytes go back to the reader once
    // answered, its text back to the workers once written. A buffer that finds its queue full
    // is dropped.
    let (spare_chunk_tx, spare_chunk_rx) = sync_channel::<Vec<u8>>(threads * 2 + 2);
    let (spare_text_tx, spare_text_rx) = sync_channel::<Vec<u8>>(threads * 2 + 2);
    let spare_text_rx = Mutex::new(spare_text_rx);
    let stop = AtomicBool::new(false);
    let name = input_name.to_path_buf();
    // Not scoped: a read that waits for input must not keep an error from being returned.
    let reader = std::thread::spawn(move || {
        let spare = || spare_chunk_rx.try_recv().ok();
        read_chunks(input, &name, chunk_bytes, whole, spare, |chunk| {
            chunk_tx.send(chunk).is_ok()
        })
    });
    let written = std::thread::scope(|scope| {
        for answerer in workers {
            let result_tx = result_tx.clone();
            let spares = Spares {
                chunks: spare_chunk_tx.clone(),
                texts: &spare_text_rx,
            };
            let (chunk_rx, stop) = (&chunk_rx, &stop);
            scope.spawn(move || {
                work(answerer, format, chunk_rx, stop, &spares, |r| {
                    result_tx.send(r).is_ok()
                })
            });
        }
        drop(result_tx);
        drop(spare_chunk_tx);
        let written = write_in_order(&result_rx, &mut output, input_name, |text| {
            // Full: enough texts are waiting; this one is dropped.
            let _ = spare_text_tx.try_send(text);
        });
        // Stop the workers if writing stopped early (an error, or a closed pipe).
        stop.store(true, Ordering::Relaxed);
        drop(result_rx);
        written
    });
    // The workers are gone, and with them the chunk receiver: a reader blocked on sending
    // returns now; one blocked on reading returns with the process.
    drop(chunk_rx);
    let stats = written?;
    match reader.join().unwrap_or_else(|_| Err(panicked(input_name))) {
        // The reader does not count lines (a pass over every byte for an error's sake); every
        // line before the long one was answered, so the writer's count names it.
        Err(Error::LineTooLong { path, limit, .. }) => Err(Error::LineTooLong {
            path,
            line: stats.lines + 1,
            limit,
        }
        .into()),
        read => read.map(|()| stats).map_err(Into::into),
    }
}

/// An error standing for a thread that panicked (a bug: no code here is meant to panic).
fn panicked(path: &Path) -> Error {
    Error::io(
        path,
        "read",
        std::io::Error::other("reader thread panicked"),
    )
}

/// A piece of the input that ends at a line boundary: its sequence number, its bytes, and
/// whether the reader may block before the next one (so its answers must be flushed).
struct Chunk {
    seq: u64,
    bytes: Vec<u8>,
    flush: bool,
}

/// A chunk's verdict lines: sequence number, text and counts (or the error that stopped its
/// answerer), and whether to flush after it.
struct Answers<E> {
    seq: u64,
    answered: Result<(Vec<u8>, CheckStats), E>,
    flush: bool,
}

/// A worker's ends of the reuse queues: answered chunks go back to the reader, written texts
/// come back from the writer.
struct Spares<'a> {
    chunks: SyncSender<Vec<u8>>,
    texts: &'a Mutex<Receiver<Vec<u8>>>,
}

/// Receives chunks and sends their formatted verdicts, until the chunks run out, `send` fails
/// or the answerer fails (its error is sent, and the writer stops at it).
fn work<A: Answerer>(
    mut answerer: A,
    format: Output,
    chunks: &Mutex<Receiver<Chunk>>,
    stop: &AtomicBool,
    spares: &Spares<'_>,
    mut send: impl FnMut(Answers<A::Error>) -> bool,
) {
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // A poisoned lock means another worker panicked; stop quietly, the writer will notice
        // the missing chunk through the closed channel. The wait is bounded so that a worker
        // sees `stop` while the reader waits for input.
        let next = match chunks.lock() {
            Ok(receiver) => receiver.recv_timeout(WAKE_EVERY),
            Err(_) => return,
        };
        let chunk = match next {
            Ok(chunk) => chunk,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        // A written text back from the writer if one waits (a poisoned lock: none).
        let mut text = spares
            .texts
            .lock()
            .ok()
            .and_then(|texts| texts.try_recv().ok())
            .unwrap_or_default();
        text.clear();
        // Room for the lines twice over: a listed line adds its entry, kind and categories
        // (growing the buffer would copy it, megabytes a time).
        text.reserve(2 * chunk.bytes.len() + 4096);
        let answered = if chunk.bytes.is_empty() {
            Ok(CheckStats::default())
        } else {
            answerer.write_text_answers(&chunk.bytes, format, &mut text)
        };
        // Full (or the reader gone): the buffer is dropped.
        let _ = spares.chunks.try_send(chunk.bytes);
        let failed = answered.is_err();
        let answers = Answers {
            seq: chunk.seq,
            answered: answered.map(|stats| (text, stats)),
            flush: chunk.flush,
        };
        if !send(answers) || failed {
            return;
        }
    }
}

/// The lines of `text` as `check` reads them from a stream: each `\n` (found with SIMD by
/// memchr) ends a line, and text after the last one is a last line without it. So a text that
/// ends with `\n` has no empty line after it, `"\n"` is one blank line (answered, as every line
/// is), and an empty text has none. A `\r` before a `\n` stays on its line: the answerers drop
/// it, and print the line without it.
///
/// The one cutting of lines for a whole text: the stream checker's chunks (each ends at a line
/// boundary, so their lines are the stream's) and the server's text batches.
pub fn text_lines(text: &[u8]) -> TextLines<'_> {
    TextLines {
        text,
        start: 0,
        // One mask per 64 bytes rather than one search call per line (most lines are short).
        ends: phishbloom_url::scan::positions(text, b'\n'),
    }
}

/// The iterator of [`text_lines`]: written out (not a chain of adapters), as it runs once per
/// line checked.
#[derive(Clone, Debug)]
pub struct TextLines<'a> {
    text: &'a [u8],
    /// Where the next line starts (past the end once the last is taken).
    start: usize,
    /// The line feeds not yet reached.
    ends: phishbloom_url::scan::Positions<'a>,
}

impl<'a> Iterator for TextLines<'a> {
    type Item = &'a [u8];

    // Inlined into the line loop: a call would save and restore six registers for each line.
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let end = match self.ends.next() {
            Some(end) => end,
            // Text after the last line feed is a last line.
            None if self.start < self.text.len() => self.text.len(),
            None => return None,
        };
        let line = &self.text[self.start..end];
        self.start = end + 1;
        Some(line)
    }
}

/// Writes results in sequence order as they arrive, flushing after a chunk the reader may have
/// to wait after (so a co-process gets its answers before it writes more); each text written
/// goes to `written`, for reuse.
fn write_in_order<E: From<Error>>(
    results: &Receiver<Answers<E>>,
    output: &mut impl Write,
    input_name: &Path,
    mut written: impl FnMut(Vec<u8>),
) -> Result<CheckStats, E> {
    let stdout = Path::new("<stdout>");
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut stats = CheckStats::default();
    for answers in results {
        pending.insert(answers.seq, answers);
        while let Some(answers) = pending.remove(&next) {
            let (text, answered) = answers.answered?;
            output
                .write_all(&text)
                .map_err(|e| Error::io(stdout, "write", e))?;
            if answers.flush {
                output.flush().map_err(|e| Error::io(stdout, "write", e))?;
            }
            stats += answered;
            next += 1;
            written(text);
        }
    }
    if !pending.is_empty() {
        return Err(panicked(input_name).into());
    }
    output.flush().map_err(|e| Error::io(stdout, "write", e))?;
    Ok(stats)
}

/// Cuts `input` into chunks that end at a line boundary and hands them to `send`; stops early
/// if `send` returns false.
///
/// A chunk is sent when it is full or when a read returned less than asked: a pipe or terminal
/// with nothing more ready, where the next read may wait. Such a chunk is marked for flushing,
/// so a co-process that writes one line and waits for its answer gets it; a file or a fast
/// pipe fills whole chunks and keeps the batched speed. A line longer than [`MAX_LINE_BYTES`]
/// is an [`Error::LineTooLong`] whose line number (0 here) the caller gives. Each chunk's
/// buffer is one `spare` gives back (answered before), if any.
fn read_chunks(
    mut input: impl Read,
    input_name: &Path,
    chunk_bytes: usize,
    input_is_file: bool,
    mut spare: impl FnMut() -> Option<Vec<u8>>,
    mut send: impl FnMut(Chunk) -> bool,
) -> Result<()> {
    let mut seq = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    // Where a pipe's reads land before they are appended to the chunk (allocated when first
    // needed: a file is read straight into its chunks).
    let mut buffer = Vec::new();
    loop {
        // The carried partial line (most often a few bytes, copied into a buffer given back;
        // a line longer than a chunk grows as a vector does, not copied once a round) and room
        // for a chunk after it.
        let mut chunk = match spare() {
            Some(mut buffer) if carry.len() <= chunk_bytes => {
                buffer.clear();
                buffer.extend_from_slice(&carry);
                carry.clear();
                buffer
            }
            _ => std::mem::take(&mut carry),
        };
        chunk.reserve(chunk_bytes);
        let (ended, short) = fill_chunk(
            &mut input,
            input_name,
            &mut chunk,
            chunk_bytes,
            (!input_is_file).then_some(&mut buffer),
        )?;
        if ended {
            // End of input: whatever is left is the last line, without a newline.
            if !chunk.is_empty() {
                // The result does not matter: a closed channel means the writer stopped early.
                let _ = send(Chunk {
                    seq,
                    bytes: chunk,
                    flush: true,
                });
            }
            return Ok(());
        }
        match memchr::memrchr(b'\n', &chunk) {
            Some(last) => {
                carry.clear();
                carry.extend_from_slice(&chunk[last + 1..]);
                chunk.truncate(last + 1);
                let flush = short;
                if !send(Chunk {
                    seq,
                    bytes: chunk,
                    flush,
                }) {
                    return Ok(());
                }
                seq += 1;
            }
            None if chunk.len() > MAX_LINE_BYTES => {
                return Err(Error::LineTooLong {
                    path: input_name.to_path_buf(),
                    // Named by the caller, which counts the lines answered before it.
                    line: 0,
                    limit: MAX_LINE_BYTES,
                });
            }
            None => carry = chunk,
        }
    }
}

/// Reads up to `chunk_bytes` new bytes onto the end of `chunk`: from a file (`pipe_buffer` is
/// `None`) straight into the chunk's spare room; from a pipe, through its read buffer, until
/// the chunk is full or a read returns less than asked. Returns (input ended, read short).
fn fill_chunk(
    input: &mut impl Read,
    input_name: &Path,
    chunk: &mut Vec<u8>,
    chunk_bytes: usize,
    pipe_buffer: Option<&mut Vec<u8>>,
) -> Result<(bool, bool)> {
    let buffer = match pipe_buffer {
        None => {
            // Into the chunk's spare room, which is neither zeroed nor copied: `read_to_end`
            // reads into it as it is. A file's read is short only at its end.
            let read = input
                .by_ref()
                .take(chunk_bytes as u64)
                .read_to_end(chunk)
                .map_err(|e| Error::io(input_name, "read", e))?;
            return Ok((read == 0, read < chunk_bytes));
        }
        Some(buffer) => buffer,
    };
    if buffer.is_empty() {
        *buffer = vec![0u8; chunk_bytes];
    }
    // Up to `chunk_bytes` new bytes per round, after the carried partial line.
    let (mut fresh, mut short) = (0, false);
    while fresh < chunk_bytes && !short {
        let want = chunk_bytes - fresh;
        let read = match input.read(&mut buffer[..want]) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(input_name, "read", e)),
        };
        if read == 0 {
            return Ok((true, short));
        }
        chunk.extend_from_slice(&buffer[..read]);
        fresh += read;
        short = read < want;
    }
    Ok((false, short))
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::keys::KeyScheme;
    use phishbloom_core::BuildOptions;
    use phishbloom_core::KeyList;

    fn blocklist() -> Blocklist {
        let mut keys = KeyList::default();
        for i in 0..1000 {
            keys.push(format!("listed{i}.com").as_bytes());
        }
        let options = BuildOptions {
            fpp: 0.0001,
            ..BuildOptions::default()
        };
        Blocklist::from_keys(&[("test".into(), keys)], KeyScheme::Url, &options).unwrap()
    }

    fn run(input: &[u8], threads: usize, format: Output) -> (String, CheckStats) {
        let mut out = Vec::new();
        let options = StreamOptions::new(format, threads);
        let input = std::io::Cursor::new(input.to_vec());
        let stats = check_stream(&blocklist(), input, Path::new("in"), &mut out, &options).unwrap();
        (String::from_utf8(out).unwrap(), stats)
    }

    #[test]
    fn verdicts_come_back_in_input_order() {
        let mut input = String::new();
        let mut expected = String::new();
        for i in 0..60_000 {
            let (line, verdict) = if i % 7 == 0 {
                let key = format!("listed{}.com", i % 1000);
                (
                    format!("HTTP://Listed{}.com/", i % 1000),
                    format!("listed\t{key}\tkey\ttest"),
                )
            } else {
                (format!("clean{i}.org"), "clean".to_string())
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
    fn last_line_without_newline_blank_lines_and_crlf() {
        let (out, stats) = run(b"listed1.com\r\n\nx.com", 2, Output::Tsv);
        assert_eq!(
            out,
            "listed1.com\tlisted\tlisted1.com\tkey\ttest\n\tclean\nx.com\tclean\n"
        );
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
    fn text_lines_end_at_each_newline_and_at_the_end() {
        fn lines(text: &[u8]) -> Vec<&[u8]> {
            text_lines(text).collect()
        }
        assert!(lines(b"").is_empty());
        assert_eq!(lines(b"\n"), [b""]);
        assert_eq!(lines(b"a"), [b"a"]);
        assert_eq!(lines(b"a\n"), [b"a"]);
        assert_eq!(lines(b"a\r\n\nb"), [&b"a\r"[..], b"", b"b"]);
        assert_eq!(lines(b"a\n\n"), [&b"a"[..], b""]);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error_naming_it() {
        /// Two short lines, then one that never ends.
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let lines = b"a\nb\n";
                if self.0 < lines.len() {
                    let n = buf.len().min(lines.len() - self.0);
                    buf[..n].copy_from_slice(&lines[self.0..self.0 + n]);
                    self.0 += n;
                    return Ok(n);
                }
                buf.fill(b'a');
                Ok(buf.len())
            }
        }
        let mut out = Vec::new();
        let options = StreamOptions::new(Output::Tsv, 2);
        let error = check_stream(
            &blocklist(),
            Endless(0),
            Path::new("in"),
            &mut out,
            &options,
        )
        .unwrap_err();
        assert!(
            matches!(error, Error::LineTooLong { line: 3, .. }),
            "{error:?}"
        );
    }

    #[test]
    fn an_answerer_error_is_returned_while_the_input_is_still_open() {
        /// Input that sends one line, then waits for ever (a co-process's pipe left open).
        struct OneLineThenWait(bool);
        impl Read for OneLineThenWait {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    loop {
                        std::thread::park();
                    }
                }
                buf[..2].copy_from_slice(b"x\n");
                Ok(2)
            }
        }
        /// An answerer whose server is gone.
        struct Gone;
        impl Answerer for Gone {
            type Error = Error;
            fn answer(&mut self, _: &[&[u8]], _: &mut Vec<Verdict>) -> Result<()> {
                Err(Error::io("server", "ask", std::io::Error::other("gone")))
            }
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let options = StreamOptions::new(Output::Tsv, 2);
            let result = check_stream_with(
                vec![Gone, Gone],
                OneLineThenWait(false),
                Path::new("in"),
                Vec::new(),
                &options,
            );
            let _ = done_tx.send(result.map_err(|e| e.to_string()));
        });
        let result = done_rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the error comes back without waiting for more input");
        assert!(result.unwrap_err().contains("gone"));
    }
}
