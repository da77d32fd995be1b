//! Building keyword lists: lines are normalized and hashed once, spilled to temporary bucket
//! files by the hash's top bits, and each bucket is sorted and deduplicated in turn; the index's
//! blocks go to an unnamed temporary file as they are cut and are copied into the list file when
//! it is saved. Memory holds the filter, one bucket and the index's directory — never the list.
//! The list itself ([`phishbloom_core::keywords`]) is the core's.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::{Error, Result};
use phishbloom_core::bytes::ByteReader;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::keywords::gate::PhraseGate;
use phishbloom_core::keywords::{IndexWriter, KeywordEngine, KeywordIndex, PhraseLengths};
use phishbloom_core::rates::per_probe_fpp;
use phishbloom_core::sections::{Meta, SetFingerprint};
use phishbloom_core::{Blocklist, BuildOptions, Engine};
use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash};
use phishbloom_text::phrase::{normalize_phrase, normalized_phrase_hash, MAX_PHRASE_TOKENS};
use phishbloom_text::tokens::Tokens;

use crate::file::FileSource;
use crate::source::{read_bounded_line, Input, ListSummary, MAX_KEY_BYTES};

use phishbloom_core::keywords::default_probes_per_doc;

#[derive(Clone, Debug, Default)]
/// Options of a keyword build beyond [`BuildOptions`].
pub struct KeywordOptions {
    /// Probes per document `options.fpp` is stated for; default
    /// [`default_probes_per_doc`] of the list's distinct phrase lengths.
    pub probes_per_doc: Option<u32>,
    /// Where the temporary bucket files go (a directory on the output's file system).
    pub spill_dir: PathBuf,
}

/// What a keyword build read.
#[derive(Clone, Debug, Default)]
pub struct KeywordSummary {
    /// The list's lines, blank, malformed and duplicate counts (format `keywords`).
    pub list: ListSummary,
    /// The phrase lengths.
    pub lengths: PhraseLengths,
    /// Probes per document the filter was sized for.
    pub probes_per_doc: u32,
}

/// One temporary bucket: keyword records `{h1, h2, len u16, bytes}`.
struct Bucket {
    writer: BufWriter<File>,
    path: PathBuf,
}

/// Input bytes per bucket aimed for: a bucket is read and sorted in memory (about twice its
/// bytes with the sort keys), beside the filter and the index; 16 MiB keeps that small at any
/// list size (10⁸ keywords: 128 buckets of ~12 MB).
const BUCKET_TARGET_BYTES: u64 = 16 << 20;

/// The most distinct two-token prefixes a list gets a phrase gate for. Counting them keeps their
/// `h1`s in a hash set (9 bytes per slot at most 7/8 full: about 72 MiB at the limit, under
/// 128 MiB while it grows); the gate for 2²² prefixes takes about 4.5 MB, already beyond the
/// caches it is meant to live in. A list with more has no gate (it scans as lists did before
/// the gate), rather than a gate that would cost a cache miss at every token position.
const GATE_COUNT_LIMIT: usize = 1 << 22;

/// Builds a keyword blocklist from `input` (one keyword or phrase per line): reads and
/// normalizes every line once, spilling records to temporary buckets; sizes the filter for the
/// keyword lines read (an upper bound on the distinct keywords, so duplicates only lower the
/// rate) at the per-probe rate `f = 1 − (1 − p)^{1/P}`; then sorts, deduplicates and inserts
/// bucket by bucket, writing the index in hash order when `options.verify`. The phrase gate
/// holds the two-token prefix of every keyword, sized for the distinct prefixes counted in the
/// first pass (a list with more than `GATE_COUNT_LIMIT` of them has none).
pub fn build_keywords(
    input: &Input,
    options: &BuildOptions,
    keyword_options: &KeywordOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<(Blocklist, KeywordSummary)> {
    phishbloom_filter::math::validate_fpp(options.fpp)?;
    let path = input.display_path();
    let Some(layout) = options.kind.layout() else {
        return Err(phishbloom_core::Error::WrongScheme {
            path: PathBuf::from(&options.name),
            problem: "a CaBF blocklist holds URL entries, not keywords; build keywords as a \
                      blocked, classic or split filter"
                .into(),
        }
        .into());
    };
    let mut spill = Spill::create(input, &keyword_options.spill_dir)?;
    let read = spill.read_lines(input, progress)?;
    let mut summary = read.summary;
    let lines = summary.selected - summary.blank - summary.malformed;
    if lines == 0 {
        return Err(Error::EmptyInput {
            path,
            detail: format!(
                "{} lines, {} blank, {} malformed",
                summary.rows, summary.blank, summary.malformed
            ),
        });
    }
    let length_count = read.length_mask.count_ones() as usize;
    let probes_per_doc = keyword_options
        .probes_per_doc
        .unwrap_or_else(|| default_probes_per_doc(length_count))
        .max(1);
    let filter = AnyFilter::new(
        layout,
        lines,
        per_probe_fpp(options.fpp, probes_per_doc),
        HashStrategy::Xxh3,
    )?;
    let gate = match read.prefixes {
        // No keyword of two tokens, or too many prefixes for a small gate.
        0 => None,
        counted if counted > GATE_COUNT_LIMIT => None,
        counted => Some(PhraseGate::with_capacity(counted as u64)?),
    };
    let mut sink = KeywordSink::new(filter, gate, options.verify, &keyword_options.spill_dir)?;
    // Bucket by bucket (ascending top bits = ascending h1): sort, deduplicate, insert.
    for bucket in spill.buckets.drain(..) {
        sink.insert_bucket(bucket, &mut summary)?;
    }
    drop(spill);
    let lengths = sink.lengths();
    let meta = Meta {
        name: options.name.clone(),
        version: options.version,
        created: options.created,
        scheme: KeyScheme::Keywords,
        probes_per_item: probes_per_doc,
        entries: sink.distinct,
        fingerprint: sink.fingerprint,
        target_fpp: Some(options.fpp),
        exact_count: true,
    };
    let index = match sink.index {
        Some(writer) => Some(finish_index(writer, &path, &keyword_options.spill_dir)?),
        None => None,
    };
    let engine = KeywordEngine::new(sink.filter, lengths.clone(), index).with_gate(sink.gate);
    let blocklist = Blocklist::from_parts(options.kind, meta, Engine::Keywords(engine));
    Ok((
        blocklist,
        KeywordSummary {
            list: summary,
            lengths,
            probes_per_doc,
        },
    ))
}

/// The temporary bucket files of a build, in a temporary folder removed when this is dropped.
struct Spill {
    /// The buckets, in the order of their hashes' top bits.
    buckets: Vec<Bucket>,
    /// How many top bits of `h1` pick a bucket.
    bits: u32,
    /// The folder holding the buckets (removed on drop).
    _folder: tempfile::TempDir,
}

/// What reading a keyword list found, beside the records spilled.
struct LinesRead {
    /// The list's lines, blank and malformed counts.
    summary: ListSummary,
    /// Bit `n` set when a keyword of `n` tokens was read.
    length_mask: u64,
    /// The distinct two-token prefixes counted (up to just past `GATE_COUNT_LIMIT`).
    prefixes: usize,
}

impl Spill {
    /// Creates the buckets for `input` in a new temporary folder in `spill_dir`.
    fn create(input: &Input, spill_dir: &std::path::Path) -> Result<Self> {
        // Standard input has no length: plan for 1 GiB (64 buckets); a longer stream only
        // makes each bucket larger.
        let input_len = input
            .file()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(1 << 30, |m| m.len());
        // A power of two of buckets, so that a hash's top bits pick one; at most 512 open files
        // (below the usual limit of 1,024; with 64 KiB write buffers, 32 MiB).
        let bits = (input_len / BUCKET_TARGET_BYTES)
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
            .min(9);
        let folder = tempfile::Builder::new()
            .prefix(".phishbloom-keywords-")
            .tempdir_in(spill_dir)
            .map_err(|e| Error::io(spill_dir, "create a temporary folder in", e))?;
        let buckets = (0..1usize << bits)
            .map(|i| {
                let file_path = folder.path().join(format!("{i:04}"));
                let file =
                    File::create(&file_path).map_err(|e| Error::io(&file_path, "create", e))?;
                Ok(Bucket {
                    writer: BufWriter::with_capacity(1 << 16, file),
                    path: file_path,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            buckets,
            bits,
            _folder: folder,
        })
    }

    /// Reads, normalizes and hashes every line of `input`, spilling each keyword's record to
    /// its bucket; counts the lines, the phrase lengths and the two-token prefixes.
    fn read_lines(&mut self, input: &Input, progress: &mut dyn FnMut(u64)) -> Result<LinesRead> {
        let path = input.display_path();
        let mut summary = ListSummary {
            format: "keywords",
            ..ListSummary::default()
        };
        let mut length_mask = 0u64;
        // The distinct two-token prefixes (counted up to the limit).
        let mut prefixes = HashSet::new();
        let mut reader = BufReader::with_capacity(1 << 20, input.open_list(false)?);
        let (mut line, mut phrase, mut tokens) = (Vec::new(), String::new(), Tokens::new());
        let mut bytes_read = 0u64;
        loop {
            let (consumed, complete) = read_bounded_line(&mut reader, &mut line, MAX_KEY_BYTES)
                .map_err(|e| Error::io(&path, "read", e))?;
            if consumed == 0 {
                break;
            }
            bytes_read += consumed as u64;
            summary.rows += 1;
            summary.selected += 1;
            let number = summary.rows;
            // Every 65,536 lines: often enough for a progress bar, rare enough to cost nothing.
            if number.is_multiple_of(1 << 16) {
                progress(bytes_read);
            }
            if !complete {
                summary_malformed(
                    &mut summary,
                    number,
                    format!("line longer than {MAX_KEY_BYTES} bytes"),
                );
                continue;
            }
            let raw = phishbloom_text::line::content(&line);
            let Ok(text) = std::str::from_utf8(raw) else {
                summary_malformed(&mut summary, number, "not UTF-8".into());
                continue;
            };
            phrase.clear();
            match normalize_phrase(text, &mut tokens, &mut phrase) {
                Ok(0) => summary.blank += 1,
                Ok(count) if phrase.len() <= usize::from(u16::MAX) => {
                    length_mask |= 1 << count;
                    if let Some(key) = PhraseGate::key(tokens.hashes()) {
                        if prefixes.len() <= GATE_COUNT_LIMIT {
                            prefixes.insert(key.h1);
                        }
                    }
                    self.write(&phrase)?;
                }
                Ok(_) => {
                    summary_malformed(&mut summary, number, "normalized keyword too long".into());
                }
                Err(error) => summary_malformed(&mut summary, number, error.to_string()),
            }
        }
        progress(bytes_read);
        Ok(LinesRead {
            summary,
            length_mask,
            prefixes: prefixes.len(),
        })
    }

    /// Writes the record of the normalized `phrase` to its bucket.
    fn write(&mut self, phrase: &str) -> Result<()> {
        let hash = normalized_phrase_hash(phrase);
        let bucket = &mut self.buckets[bucket_of(hash, self.bits)];
        let mut record = [0u8; 18];
        record[..8].copy_from_slice(&hash.h1.to_le_bytes());
        record[8..16].copy_from_slice(&hash.h2.to_le_bytes());
        // The caller keeps phrases of at most `u16::MAX` bytes.
        record[16..].copy_from_slice(&(phrase.len() as u16).to_le_bytes());
        bucket
            .writer
            .write_all(&record)
            .and_then(|()| bucket.writer.write_all(phrase.as_bytes()))
            .map_err(|e| Error::io(&bucket.path, "write", e))
    }
}

/// Where a build's distinct keywords go: the filter, the gate, the fingerprint, the phrase
/// lengths and the index being written.
struct KeywordSink<'a> {
    filter: AnyFilter,
    gate: Option<PhraseGate>,
    fingerprint: SetFingerprint,
    /// Distinct keywords by their number of tokens.
    per_length: [u64; MAX_PHRASE_TOKENS + 1],
    distinct: u64,
    index: Option<IndexWriter<BufWriter<File>>>,
    /// Where the index is spilled (named in its errors).
    spill_dir: &'a std::path::Path,
}

impl<'a> KeywordSink<'a> {
    /// A sink into `filter` and `gate`, writing an index to a temporary file in `spill_dir`
    /// when `verify`.
    fn new(
        filter: AnyFilter,
        gate: Option<PhraseGate>,
        verify: bool,
        spill_dir: &'a std::path::Path,
    ) -> Result<Self> {
        let index = match verify {
            true => {
                let file = tempfile::tempfile_in(spill_dir)
                    .map_err(|e| Error::io(spill_dir, "create a temporary file in", e))?;
                Some(IndexWriter::new(BufWriter::with_capacity(1 << 20, file)))
            }
            false => None,
        };
        Ok(Self {
            filter,
            gate,
            fingerprint: SetFingerprint::default(),
            per_length: [0u64; MAX_PHRASE_TOKENS + 1],
            distinct: 0,
            index,
            spill_dir,
        })
    }

    /// Reads `bucket` back (removing its file), sorts its records and inserts each distinct
    /// keyword once; duplicates are counted in `summary`.
    fn insert_bucket(&mut self, bucket: Bucket, summary: &mut ListSummary) -> Result<()> {
        let (bytes, records) = read_bucket(bucket)?;
        let text = |&(_, start, len): &Record| &bytes[start..start + len];
        let mut previous: Option<&Record> = None;
        for record in &records {
            if previous.is_some_and(|p| p.0 == record.0 && text(p) == text(record)) {
                summary.duplicates += 1;
                continue;
            }
            previous = Some(record);
            self.insert(record.0, text(record))?;
        }
        Ok(())
    }

    /// Inserts one distinct normalized keyword of hash `hash`.
    fn insert(&mut self, hash: KeyHash, keyword: &[u8]) -> Result<()> {
        self.filter.insert_hash(hash);
        if let (Some(gate), Some(key)) = (&mut self.gate, PhraseGate::key_of_normalized(keyword)) {
            gate.insert(key);
        }
        self.fingerprint
            .add(phishbloom_core::keys::fingerprint(hash));
        self.per_length[keyword.iter().filter(|&&b| b == b' ').count() + 1] += 1;
        self.distinct += 1;
        if let Some(index) = &mut self.index {
            index
                .push(hash, keyword)
                .map_err(|e| Error::io(self.spill_dir, "write the keyword index in", e))?;
        }
        Ok(())
    }

    /// The phrase lengths inserted, with their counts.
    fn lengths(&self) -> PhraseLengths {
        PhraseLengths(
            (1..=MAX_PHRASE_TOKENS)
                .filter(|&len| self.per_length[len] > 0)
                .map(|len| (len as u32, self.per_length[len]))
                .collect(),
        )
    }
}

/// A spilled keyword record: its hash, and where its text starts in its bucket and how long it
/// is.
type Record = (KeyHash, usize, usize);

/// Reads a bucket's records back and removes its file: the bytes and, sorted by hash then
/// text, every record in them.
fn read_bucket(bucket: Bucket) -> Result<(Vec<u8>, Vec<Record>)> {
    let Bucket {
        writer,
        path: file_path,
    } = bucket;
    let file = writer
        .into_inner()
        .map_err(|e| Error::io(&file_path, "write", e.into_error()))?;
    drop(file);
    let mut bytes = Vec::new();
    File::open(&file_path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::io(&file_path, "read", e))?;
    std::fs::remove_file(&file_path).map_err(|e| Error::io(&file_path, "remove", e))?;
    let mut records = Vec::new();
    let mut reader = ByteReader::new(&bytes);
    while let (Some(h1), Some(h2), Some(len)) = (reader.u64(), reader.u64(), reader.u16()) {
        let start = reader.position();
        // This process wrote the record: its bytes follow.
        reader.take(len as usize).ok_or_else(|| Error::Spill {
            path: file_path.clone(),
            problem: "a record is cut short",
        })?;
        records.push((KeyHash { h1, h2 }, start, len as usize));
    }
    let text = |&(_, start, len): &Record| &bytes[start..start + len];
    records.sort_unstable_by(|a, b| {
        (a.0.h1, a.0.h2)
            .cmp(&(b.0.h1, b.0.h2))
            .then_with(|| text(a).cmp(text(b)))
    });
    Ok((bytes, records))
}

/// The index written by `writer`, its blocks left in their temporary file.
fn finish_index(
    writer: IndexWriter<BufWriter<File>>,
    path: &std::path::Path,
    spill_dir: &std::path::Path,
) -> Result<KeywordIndex> {
    let spill_error = |e| Error::io(spill_dir, "write the keyword index in", e);
    let (head, blocks) = writer.finish().map_err(spill_error)?;
    let blocks = blocks
        .into_inner()
        .map_err(|e| spill_error(e.into_error()))?;
    let data_len = blocks.metadata().map_err(spill_error)?.len();
    Ok(KeywordIndex::spilled(
        path,
        head,
        Arc::new(FileSource(blocks)),
        data_len,
    )?)
}

/// The bucket of a hash: its top `bits` bits, so buckets in order hold ascending `h1`.
fn bucket_of(hash: KeyHash, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (hash.h1 >> (64 - bits)) as usize
    }
}

fn summary_malformed(summary: &mut ListSummary, line: u64, reason: String) {
    summary.malformed += 1;
    if summary.malformed_examples.len() < crate::source::MALFORMED_EXAMPLES {
        summary.malformed_examples.push((line, reason));
    }
}
