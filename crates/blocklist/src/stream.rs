//! Streamed reading of a list of whole keys, for builds that must not hold every key in memory.
//!
//! [`read_hashed`] turns a list into [`HashedKeys`]: the distinct 128-bit key hashes
//! ([`KeyHash`]), counted exactly, with the list's set fingerprint — everything a Bloom, cuckoo
//! or counting filter is built from — in memory bounded by buffers, not by the list:
//!
//! 1. **Hash** (every core): the calling thread reads the input through fixed 1 MiB chunks cut
//!    at line ends; workers split them with `memchr`, normalize and hash each line, and append
//!    the hash to one of 256 *partitions* chosen by its top 8 bits. A partition's buffer that
//!    fills (32 KiB) is written to the worker's temporary file, so the hashes of a list of any
//!    length cost disk (16 bytes a line, in `TMPDIR`), not memory.
//! 2. **Deduplicate** (every core): each partition is read back, sorted and deduplicated, which
//!    counts the distinct keys exactly and sums their set-fingerprint terms; the distinct hashes
//!    go back to a temporary file (or stay in memory while they are few).
//! 3. The caller sizes its structure for the exact count and inserts the hashes partition by
//!    partition ([`HashedKeys::try_for_each`]), ascending: a blocked filter's block is
//!    `⌊h1·blocks / 2^64⌋`, so each partition fills its own 1/256 of the filter in order
//!    (cache- and prefetch-friendly) and every bit is set exactly as an in-memory build sets it.
//!
//! Standard input needs no spool of its own: its hashes are the spool. Duplicates are counted
//! exactly (hashed keys minus distinct ones), so the summary a build prints is the one it
//! printed when keys were held in memory.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::Mutex;

use phishbloom_filter::KeyHash;

use crate::formats::ListFormat;
use crate::source::{
    read_csv, refuse_csv_header, Collector, Format, Input, ListOptions, ListSummary,
    MALFORMED_EXAMPLES, MAX_KEY_BYTES,
};
use crate::{Error, Result};
use phishbloom_core::engine::fingerprint;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::sections::SetFingerprint;

use crate::partition::{Hash, Partitioner, Spill, HASH_BYTES, PARTITIONS};

/// Bytes read at a time (a chunk, cut at its last line end, is the unit of work). A line longer
/// than a chunk is longer than [`MAX_KEY_BYTES`], so it is skipped without being held.
pub const CHUNK_BYTES: usize = 1 << 20;

const _: () = assert!(
    CHUNK_BYTES > MAX_KEY_BYTES,
    "a chunk must hold the longest key"
);

/// Chunks in flight per worker (queued or being hashed): enough to keep the workers busy while
/// the reader fills the next one, few enough that memory stays at a few MiB.
const CHUNKS_PER_WORKER: usize = 2;

/// Distinct hashes kept in memory between deduplication and insertion, in bytes (32 MiB, 2·10⁶
/// keys); beyond it they go to a temporary file. Small lists never touch the disk.
const KEEP_BYTES: u64 = 32 << 20;

/// Where the distinct hashes of one partition are.
enum Stored {
    Memory(Vec<Hash>),
    Spilled {
        /// Which deduplicating worker's file.
        spill: usize,
        offset: u64,
        count: usize,
    },
}

/// The distinct key hashes of a list, with their exact count and the list's set fingerprint,
/// in partitions by ascending top bits (see the [module documentation](self)).
pub struct HashedKeys {
    partitions: Vec<Stored>,
    spills: Vec<Spill>,
    hashed: u64,
    distinct: u64,
    fingerprint: SetFingerprint,
}

impl HashedKeys {
    /// Distinct keys.
    pub fn len(&self) -> u64 {
        self.distinct
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }

    /// Keys hashed, duplicates included.
    pub fn hashed(&self) -> u64 {
        self.hashed
    }

    /// The set fingerprint of the distinct keys (as [`SetFingerprint::of`] their entry
    /// fingerprints).
    pub fn fingerprint(&self) -> SetFingerprint {
        self.fingerprint
    }

    /// Calls `visit` with every distinct key hash, ascending by `(h1, h2)`; stops at its first
    /// error. Reads the spilled partitions back one at a time.
    pub fn try_for_each(&self, mut visit: impl FnMut(KeyHash) -> Result<()>) -> Result<()> {
        let mut buffer = Vec::new();
        for stored in &self.partitions {
            let hashes = match stored {
                Stored::Memory(hashes) => hashes,
                &Stored::Spilled {
                    spill,
                    offset,
                    count,
                } => {
                    buffer.clear();
                    self.spills[spill].read(offset, count, &mut buffer)?;
                    &buffer
                }
            };
            for &[h1, h2] in hashes {
                visit(KeyHash { h1, h2 })?;
            }
        }
        Ok(())
    }
}

impl phishbloom_core::KeyHashes for HashedKeys {
    type Error = Error;
    fn len(&self) -> u64 {
        HashedKeys::len(self)
    }
    fn fingerprint(&self) -> SetFingerprint {
        HashedKeys::fingerprint(self)
    }
    fn try_for_each(&self, visit: &mut dyn FnMut(KeyHash) -> Result<()>) -> Result<()> {
        HashedKeys::try_for_each(self, visit)
    }
}

/// Reads `input` as `options` say — a plain list on `threads` threads, a CSV on one — into its
/// distinct key hashes, with the summary [`crate::source::read_list`] gives (the same counts:
/// duplicates are exact). Temporary files go to `TMPDIR` (else the system's directory) and
/// are deleted when the [`HashedKeys`] is dropped. `progress` is called now and then with the
/// bytes read so far. Keys by category ([`ListOptions::category_column`]) are not streamed:
/// read them with [`crate::source::read_list_groups`].
pub fn read_hashed(
    input: &Input,
    options: &ListOptions,
    threads: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<(HashedKeys, ListSummary)> {
    if options.category_column.is_some() {
        return Err(phishbloom_core::Error::Unsupported {
            what: "streaming a list with a category column",
            why: "keys by category are read into memory (read_list_groups)",
        }
        .into());
    }
    if options
        .format
        .forced()
        .is_some_and(|format| format.is_entry_format())
    {
        return Err(phishbloom_core::Error::Unsupported {
            what: "a hosts, AdBlock, PhishTank, URLhaus or OpenPhish list of whole keys",
            why: "those formats list domains and URLs; read them as entries (read_entries)",
        }
        .into());
    }
    let path = input.display_path();
    let dir = std::env::temp_dir();
    let mut summary = ListSummary::default();
    let mut reader = input.open_list(options.scheme == KeyScheme::Exact)?;
    let partitioners = if options.format.reads_as_csv(input) {
        let mut collector = Collector::hashing(options.scheme, Partitioner::new(&dir));
        read_csv(
            reader,
            &path,
            ListFormat::Csv,
            options,
            &mut collector,
            &mut summary,
            progress,
        )?;
        collector.into_partitioner().into_iter().collect()
    } else {
        summary.format = "lines";
        hash_lines(
            &mut reader,
            &path,
            options,
            threads,
            &dir,
            &mut summary,
            progress,
        )?
    };
    let keys = deduplicate(&partitioners, threads, &dir)?;
    drop(partitioners);
    summary.duplicates = keys.hashed() - keys.len();
    if keys.is_empty() {
        return Err(summary.empty_input(path));
    }
    Ok((keys, summary))
}

/// One piece of input for a worker.
struct Chunk {
    /// Its place in the input.
    index: u64,
    /// A buffer of [`CHUNK_BYTES`] bytes whose first `len` are whole lines (the last one without
    /// its `\n` only at the end of the input).
    data: Vec<u8>,
    len: usize,
    /// Stands for one line longer than a chunk, skipped by the reader (`data` is unused).
    overlong: bool,
}

/// What a worker found in one chunk.
#[derive(Default)]
struct ChunkReport {
    index: u64,
    rows: u64,
    blank: u64,
    malformed: u64,
    /// The first malformed lines: (1-based line number within the chunk, reason).
    examples: Vec<(u64, String)>,
}

impl ChunkReport {
    fn malformed(&mut self, line: u64) {
        self.malformed += 1;
        if self.examples.len() < MALFORMED_EXAMPLES {
            self.examples
                .push((line, format!("line longer than {MAX_KEY_BYTES} bytes")));
        }
    }
}

/// Normalizes and hashes each line of a chunk into `partitioner`.
fn hash_chunk(
    chunk: &Chunk,
    scheme: KeyScheme,
    partitioner: &mut Partitioner,
    scratch: &mut Vec<u8>,
) -> Result<ChunkReport> {
    let mut report = ChunkReport {
        index: chunk.index,
        ..ChunkReport::default()
    };
    if chunk.overlong {
        report.rows = 1;
        report.malformed(1);
        return Ok(report);
    }
    let data = &chunk.data[..chunk.len];
    let mut line = |raw: &[u8], report: &mut ChunkReport| -> Result<()> {
        report.rows += 1;
        if raw.len() > MAX_KEY_BYTES {
            report.malformed(report.rows);
            return Ok(());
        }
        let key = match scheme {
            // The exact scheme only drops a `\r`: hash the line where it lies.
            KeyScheme::Exact => phishbloom_text::line::content(raw),
            _ => {
                scheme.normalize_into(raw, scratch);
                scratch.as_slice()
            }
        };
        if key.is_empty() {
            report.blank += 1;
            return Ok(());
        }
        partitioner.push(KeyHash::of(key))
    };
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        line(&data[start..end], &mut report)?;
        start = end + 1;
    }
    if start < data.len() {
        line(&data[start..], &mut report)?;
    }
    Ok(report)
}

/// Reads `reader` in chunks and hands them to `threads` workers that hash its lines as
/// `options` say; fills `summary`'s row counts. Returns the workers' partitions.
fn hash_lines(
    reader: &mut dyn Read,
    path: &Path,
    options: &ListOptions,
    threads: usize,
    dir: &Path,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Partitioner>> {
    let (scheme, sniff) = (options.scheme, options.format == Format::Auto);
    let threads = threads.max(1);
    let pool = threads * CHUNKS_PER_WORKER + 1;
    let (work_tx, work_rx) = sync_channel::<Chunk>(threads * CHUNKS_PER_WORKER);
    let work_rx = Mutex::new(work_rx);
    let (free_tx, free_rx) = channel::<Vec<u8>>();
    for _ in 0..pool {
        // Buffers are allocated once and recycled; they never grow.
        let _ = free_tx.send(vec![0u8; CHUNK_BYTES]);
    }
    let failed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let free_tx = free_tx.clone();
                let (work_rx, failed) = (&work_rx, &failed);
                scope.spawn(move || worker(work_rx, free_tx, scheme, dir, failed))
            })
            .collect();
        drop(free_tx);
        let read = read_chunks(reader, path, sniff, &work_tx, &free_rx, &failed, progress);
        // Closing the queue ends the workers once they have drained it.
        drop(work_tx);
        let mut reports = Vec::new();
        let mut partitioners = Vec::new();
        let mut first_error = read.err();
        for handle in workers {
            // A panicking worker is a bug: re-raise it here.
            let joined = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            match joined {
                Ok((partitioner, mut worker_reports)) => {
                    partitioners.push(partitioner);
                    reports.append(&mut worker_reports);
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        if let Some(error) = first_error {
            return Err(error);
        }
        summarize(&mut reports, summary);
        Ok(partitioners)
    })
}

/// A hashing worker: takes chunks until the queue closes, returns its partitions and reports.
/// After an error it goes on taking chunks without hashing them (and raises `failed`, which
/// stops the reader), so that the reader is never left waiting on a full queue.
fn worker(
    work: &Mutex<Receiver<Chunk>>,
    free: Sender<Vec<u8>>,
    scheme: KeyScheme,
    dir: &Path,
    failed: &AtomicBool,
) -> Result<(Partitioner, Vec<ChunkReport>)> {
    let mut partitioner = Partitioner::new(dir);
    let mut reports = Vec::new();
    let mut scratch = Vec::new();
    let mut outcome = Ok(());
    loop {
        // The lock is held only to take one chunk; a poisoned lock means another worker
        // panicked, which `hash_lines` re-raises, so this one just stops.
        let next = match work.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => break,
        };
        let Ok(chunk) = next else { break };
        if outcome.is_ok() && !failed.load(Ordering::Relaxed) {
            match hash_chunk(&chunk, scheme, &mut partitioner, &mut scratch) {
                Ok(report) if report.malformed > 0 || report.rows > 0 => reports.push(report),
                Ok(_) => {}
                Err(error) => {
                    failed.store(true, Ordering::Relaxed);
                    outcome = Err(error);
                }
            }
        }
        // The reader may have stopped already; then the buffer is simply dropped.
        let _ = free.send(chunk.data);
    }
    outcome.map(|()| (partitioner, reports))
}

/// The reader: fills recycled buffers, cuts them after their last `\n`, carries the rest over,
/// and stands one marker chunk for each line longer than a buffer.
fn read_chunks(
    reader: &mut dyn Read,
    path: &Path,
    sniff: bool,
    work: &std::sync::mpsc::SyncSender<Chunk>,
    free: &Receiver<Vec<u8>>,
    failed: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let read_error = |e| Error::io(path, "read", e);
    let mut carry: Vec<u8> = Vec::new();
    let mut index = 0u64;
    let mut bytes_read = 0u64;
    let mut eof = false;
    loop {
        if failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        // Every worker gone (each failed) means no buffer comes back: stop, their error is
        // reported.
        let Ok(mut data) = free.recv() else {
            return Ok(());
        };
        data[..carry.len()].copy_from_slice(&carry);
        let mut filled = carry.len();
        carry.clear();
        while !eof && filled < data.len() {
            match reader.read(&mut data[filled..]) {
                Ok(0) => eof = true,
                Ok(read) => {
                    filled += read;
                    bytes_read += read as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(read_error(e)),
            }
        }
        // At the end of the input, once the last piece (a line without `\n`) has gone.
        if filled == 0 {
            return Ok(());
        }
        if index == 0 && sniff {
            let first = memchr::memchr(b'\n', &data[..filled]).unwrap_or(filled);
            refuse_csv_header(&data[..first], path)?;
        }
        let chunk = match memchr::memrchr(b'\n', &data[..filled]) {
            Some(end) => {
                carry.extend_from_slice(&data[end + 1..filled]);
                Chunk {
                    index,
                    data,
                    len: end + 1,
                    overlong: false,
                }
            }
            None if eof => Chunk {
                index,
                data,
                len: filled,
                overlong: false,
            },
            None => {
                // A whole buffer without a line end: a line longer than any key. Skip to its
                // end, keeping what follows it.
                let (read, ended) = skip_line(reader, &mut data, &mut carry).map_err(read_error)?;
                bytes_read += read;
                eof |= ended;
                Chunk {
                    index,
                    data,
                    len: 0,
                    overlong: true,
                }
            }
        };
        index += 1;
        if work.send(chunk).is_err() {
            return Ok(());
        }
        progress(bytes_read);
    }
}

/// Reads on, through `buffer`, to the end of the current line, keeping in `carry` what
/// follows it; returns the bytes read and whether the input ended.
fn skip_line(
    reader: &mut dyn Read,
    buffer: &mut [u8],
    carry: &mut Vec<u8>,
) -> std::io::Result<(u64, bool)> {
    let mut bytes_read = 0u64;
    loop {
        let read = match reader.read(buffer) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes_read += read as u64;
        if read == 0 {
            return Ok((bytes_read, true));
        }
        if let Some(end) = memchr::memchr(b'\n', &buffer[..read]) {
            carry.extend_from_slice(&buffer[end + 1..read]);
            return Ok((bytes_read, false));
        }
    }
}

/// Adds the chunks' counts to `summary`, numbering their malformed lines from the start of the
/// input.
fn summarize(reports: &mut [ChunkReport], summary: &mut ListSummary) {
    reports.sort_unstable_by_key(|r| r.index);
    for report in reports.iter() {
        for (line, reason) in &report.examples {
            if summary.malformed_examples.len() < MALFORMED_EXAMPLES {
                summary
                    .malformed_examples
                    .push((summary.rows + line, reason.clone()));
            }
        }
        summary.rows += report.rows;
        summary.blank += report.blank;
        summary.malformed += report.malformed;
    }
    summary.selected = summary.rows;
}

/// Sorts and deduplicates every partition on `threads` threads: the distinct hashes, their
/// count and set fingerprint.
fn deduplicate(partitioners: &[Partitioner], threads: usize, dir: &Path) -> Result<HashedKeys> {
    let next = AtomicUsize::new(0);
    let kept = AtomicU64::new(0);
    let threads = threads.max(1);
    type Done = (usize, Stored, u64, u128);
    let results: Vec<Result<(Spill, Vec<Done>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|worker| {
                let (next, kept) = (&next, &kept);
                scope.spawn(move || -> Result<(Spill, Vec<Done>)> {
                    let mut spill = Spill::new(dir);
                    let mut done = Vec::new();
                    let mut hashes: Vec<Hash> = Vec::new();
                    loop {
                        let partition = next.fetch_add(1, Ordering::Relaxed);
                        if partition >= PARTITIONS {
                            break;
                        }
                        hashes.clear();
                        for partitioner in partitioners {
                            partitioner.load(partition, &mut hashes)?;
                        }
                        hashes.sort_unstable();
                        hashes.dedup();
                        let terms = hashes.iter().fold(0u128, |sum, &[h1, h2]| {
                            let v = fingerprint(KeyHash { h1, h2 });
                            sum.wrapping_add(SetFingerprint::term(v))
                        });
                        let count = hashes.len() as u64;
                        let bytes = count * HASH_BYTES as u64;
                        let stored =
                            if kept.fetch_add(bytes, Ordering::Relaxed) + bytes <= KEEP_BYTES {
                                Stored::Memory(std::mem::take(&mut hashes))
                            } else {
                                let offset = spill.append(&hashes)?;
                                Stored::Spilled {
                                    spill: worker,
                                    offset,
                                    count: hashes.len(),
                                }
                            };
                        done.push((partition, stored, count, terms));
                    }
                    Ok((spill, done))
                })
            })
            .collect();
        handles
            .into_iter()
            // A panicking thread is a bug: re-raise it here.
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut partitions: Vec<Option<Stored>> = (0..PARTITIONS).map(|_| None).collect();
    let mut spills = Vec::with_capacity(threads);
    let mut distinct = 0u64;
    let mut sum = 0u128;
    for result in results {
        let (spill, done) = result?;
        spills.push(spill);
        for (partition, stored, count, terms) in done {
            partitions[partition] = Some(stored);
            distinct += count;
            sum = sum.wrapping_add(terms);
        }
    }
    Ok(HashedKeys {
        // Every partition index below PARTITIONS was taken by exactly one thread.
        partitions: partitions
            .into_iter()
            .map(|p| p.unwrap_or(Stored::Memory(Vec::new())))
            .collect(),
        spills,
        hashed: partitioners.iter().map(|p| p.hashed).sum(),
        distinct,
        fingerprint: SetFingerprint(sum),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::read_list_groups;
    use phishbloom_core::{Blocklist, BuildOptions, Kind};
    use proptest::prelude::*;

    /// Builds `content` both ways — streamed ([`read_hashed`], [`Blocklist::from_hashed_keys`])
    /// and in memory ([`read_list_groups`], [`Blocklist::from_keys`]) — and asserts the same
    /// file bytes and the same summary, or the same error.
    fn assert_same_build(content: &[u8], name: &str, list: &ListOptions, build: &BuildOptions) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let input = Input::Path(path);
        let streamed =
            read_hashed(&input, list, build.threads, &mut |_| {}).and_then(|(keys, summary)| {
                let blocklist = Blocklist::from_hashed_keys(&keys, "cat", list.scheme, build)?;
                Ok((blocklist.to_bytes(), summary))
            });
        let in_memory =
            read_list_groups(&input, list, "cat", &mut |_| {}).and_then(|(groups, summary)| {
                let blocklist = Blocklist::from_keys(&groups, list.scheme, build)?;
                Ok((blocklist.to_bytes(), summary))
            });
        match (streamed, in_memory) {
            (Ok((bytes, summary)), Ok((expected_bytes, expected_summary))) => {
                assert_eq!(
                    serde_json::to_string(&summary).unwrap(),
                    serde_json::to_string(&expected_summary).unwrap()
                );
                assert!(
                    bytes == expected_bytes,
                    "{build:?} {list:?}: the files differ"
                );
            }
            (Err(error), Err(expected)) => assert_eq!(error.to_string(), expected.to_string()),
            (streamed, in_memory) => panic!(
                "streamed {:?}, in memory {:?}",
                streamed.map(|(_, s)| s),
                in_memory.map(|(_, s)| s)
            ),
        }
    }

    fn options(kind: Kind, verify: bool, threads: usize) -> BuildOptions {
        BuildOptions {
            kind,
            verify,
            threads,
            created: 1_700_000_000,
            ..BuildOptions::default()
        }
    }

    fn lines(scheme: KeyScheme) -> ListOptions {
        ListOptions {
            format: Format::Lines,
            scheme,
            ..ListOptions::default()
        }
    }

    /// A list of several chunks with every kind of line: duplicates (also across chunks), CRLF,
    /// blank and whitespace lines, case variants, lines too long for a key (some longer than a
    /// chunk, one straddling chunks), and a last line without `\n`.
    fn awkward_list() -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..300_000u32 {
            match i % 11 {
                0 => out.extend_from_slice(b"\n"),
                1 => out.extend_from_slice(format!("Key-{}\r\n", i / 3).as_bytes()),
                2 => out.extend_from_slice(format!("key-{}\n", i / 3).as_bytes()),
                3 => out.extend_from_slice(b"  \r\n"),
                _ => out.extend_from_slice(format!("token {i:x} \n").as_bytes()),
            }
            if i % 70_001 == 5 {
                out.extend(std::iter::repeat_n(b'x', MAX_KEY_BYTES + 1));
                out.push(b'\n');
            }
            if i == 150_000 {
                out.extend(std::iter::repeat_n(b'y', 3 * CHUNK_BYTES + 7));
                out.extend_from_slice(b"\r\n");
            }
        }
        out.extend_from_slice(b"last-without-newline");
        out
    }

    #[test]
    fn streamed_build_is_the_in_memory_build() {
        let list = awkward_list();
        assert!(list.len() > 4 * CHUNK_BYTES);
        let schemes = [KeyScheme::Exact, KeyScheme::Folded];
        for (i, kind) in [Kind::Blocked, Kind::Classic, Kind::Counting]
            .into_iter()
            .enumerate()
        {
            for (j, (verify, threads)) in [(false, 2), (true, 1), (true, 3)].into_iter().enumerate()
            {
                let build = options(kind, verify, threads);
                assert_same_build(&list, "list.txt", &lines(schemes[(i + j) % 2]), &build);
            }
        }
    }

    #[test]
    fn streamed_csv_and_odd_inputs_match() {
        let build = options(Kind::Blocked, true, 2);
        let csv = ListOptions {
            scheme: KeyScheme::Exact,
            ..ListOptions::default()
        };
        let table =
            b"url,isMalicious\nevil.com,-1\ngood.com,1\n\"a.com/x,y\",-1\nevil.com,-1\nbroken\n";
        assert_same_build(table, "list.csv", &csv, &build);
        let plain = lines(KeyScheme::Exact);
        for content in [
            &b""[..],
            b"\n\n\r\n",
            b"one",
            b"one\ntwo",
            b"one\r\n\r\none\r\n",
            b"\xff\xfe\n\xff\xfe\r\n",
        ] {
            assert_same_build(content, "odd.txt", &plain, &build);
        }
        // A list that looks like a CSV table is refused by name, both ways.
        let auto = ListOptions {
            format: Format::Auto,
            ..plain
        };
        assert_same_build(b"url,label\nevil.com,1\n", "table.txt", &auto, &build);
    }

    #[test]
    fn hashed_keys_ascend_and_count_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.txt");
        let body: String = (0..5000).map(|i| format!("k{}\n", i % 1000)).collect();
        std::fs::write(&path, body).unwrap();
        let (keys, summary) =
            read_hashed(&Input::Path(path), &lines(KeyScheme::Exact), 2, &mut |_| {}).unwrap();
        assert_eq!(
            (keys.len(), keys.hashed(), summary.duplicates),
            (1000, 5000, 4000)
        );
        let mut previous = None;
        keys.try_for_each(|hash| {
            let hash = (hash.h1, hash.h2);
            assert!(previous < Some(hash));
            previous = Some(hash);
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn other_structures_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.txt");
        std::fs::write(&path, b"a\nb\n").unwrap();
        let (keys, _) =
            read_hashed(&Input::Path(path), &lines(KeyScheme::Exact), 1, &mut |_| {}).unwrap();
        for build in [
            options(Kind::Cuckoo, false, 1),
            BuildOptions {
                grow: true,
                ..options(Kind::Blocked, false, 1)
            },
        ] {
            assert!(!Blocklist::builds_from_hashes(&build));
            let refused = Blocklist::from_hashed_keys(&keys, "c", KeyScheme::Exact, &build);
            assert!(matches!(
                refused,
                Err(Error::Core(phishbloom_core::Error::Unsupported { .. }))
            ));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any list of short lines over a small alphabet (so duplicates, case variants, `\r`
        /// and blank lines are common) builds the same file both ways.
        #[test]
        fn any_list_builds_the_same(
            content in proptest::collection::vec(
                proptest::sample::select(&b"aAb \r\n\n"[..]), 0..400),
            folded in any::<bool>(),
            threads in 1usize..4,
        ) {
            let scheme = if folded { KeyScheme::Folded } else { KeyScheme::Exact };
            let build = options(Kind::Counting, true, threads);
            assert_same_build(&content, "p.txt", &lines(scheme), &build);
        }
    }
}
