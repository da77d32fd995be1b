//! Section 9's measurements, issue 14: scanning e-mail for 10⁵…10⁸ spam keywords with a keyword
//! blocklist (`build --keywords`, `scan`) beside an exact multi-pattern matcher, the
//! `aho-corasick` crate, given the same normalized text.
//!
//! - **Keywords**: synthetic, mixed Latin and CJK — three in four are 1–3 random words of 4–10
//!   letters, one in four 2–4 Han characters — written to a file that both systems build from.
//!   No keyword token occurs in the clean texts (words and characters of the texts are
//!   rejected when drawing keywords), so a clean document's every flag is a false flag.
//! - **Texts**: generated e-mails (a Subject, 40–1,150 words of English from the Debian
//!   `wamerican` word list when installed — else pseudo-words —, sentences and paragraphs, one
//!   in five with a Chinese paragraph) and, when the Debian `fortunes` and `fortunes-zh`
//!   packages are installed, every fortune read in place as a real document.
//! - **Per process**: every build and every scan runs in its own child process (this
//!   executable again — the `phishbloom-lab` binary, or the `keywords` bench —, with
//!   [`CHILD_ENV`] set; see [`serve_child`]), which reports its own peak
//!   resident memory (`VmHWM`), so configurations never share a heap. A process that cannot
//!   spawn children (a test binary) measures in process and reports no peak.
//! - **Measured**: build time and peak RSS; the list's bytes; scan throughput on one core
//!   (MB of decoded text per second, tokenizing included for both systems; documents are read
//!   one at a time from a corpus file, as `scan` reads files); false flags per
//!   1,000 clean documents with and without the keyword index; and, as a check, that every
//!   keyword planted in a document is found.

use phishbloom_blocklist::BlocklistFile;
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use phishbloom_blocklist::keywords::{build_keywords, KeywordOptions};
use phishbloom_blocklist::scan::{ScanOptions, Scanner};
use phishbloom_blocklist::{Blocklist, BuildOptions, Input, Kind};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::tokens::Tokens;

use crate::error::{Error, Result};
use crate::measure::Settings;

/// The environment variable that makes a binary serve one measurement job (its JSON) and exit.
pub const CHILD_ENV: &str = "PHISHBLOOM_LAB_CHILD";

/// Set by [`serve_child`]: this executable answers jobs, so measurements may spawn it.
static CAN_SPAWN: AtomicBool = AtomicBool::new(false);

/// The per-document rate the keyword lists are built for (the `build` default).
pub const PER_DOC_FPP: f64 = 0.01;

/// The peer over the same tokens as `scan` (the comparison the targets are judged by).
pub const PEER: &str = "aho-corasick";

/// The peer as issue 14 measured it: ASCII case-insensitive over the raw text.
pub const PEER_RAW: &str = "aho-corasick (raw, ASCII case-insensitive)";

/// Documents with one planted keyword each, scanned to check that none is missed.
const PLANTED: usize = 1000;

/// The Debian word list (`wamerican`), used for the generated e-mails' English when present.
const WORDS: &str = "/usr/share/dict/words";

/// The Debian fortunes (`fortunes`, `fortunes-zh`), real documents read in place when present.
const FORTUNES: &str = "/usr/share/games/fortunes";

/// What to measure.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeywordSizes {
    /// Keyword-set sizes.
    pub sets: Vec<u64>,
    /// The largest set aho-corasick is measured at (its build is slow and large).
    pub peer_max: u64,
    /// Bytes of generated e-mail text.
    pub text_bytes: u64,
    /// Seed of keywords and texts.
    pub seed: u64,
    /// Whether to scan the Debian fortunes too, when installed.
    pub real_texts: bool,
}

impl KeywordSizes {
    /// The sizes of a full or `--quick` report (10⁸ is a separate run by hand: the bench).
    pub fn for_report(quick: bool) -> Self {
        if quick {
            KeywordSizes {
                sets: vec![10_000],
                peer_max: 10_000,
                text_bytes: 1 << 20,
                seed: 14,
                real_texts: false,
            }
        } else {
            KeywordSizes {
                sets: vec![100_000, 1_000_000, 10_000_000],
                peer_max: 1_000_000,
                text_bytes: 50 << 20,
                seed: 14,
                real_texts: true,
            }
        }
    }
}

/// One job of a child process.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Job {
    /// `build --keywords` from a file, saved to `out`.
    Build {
        keywords: PathBuf,
        out: PathBuf,
        verify: bool,
    },
    /// Open a keyword list and scan the texts.
    Scan {
        list: PathBuf,
        texts: TextSpec,
        confirm: bool,
        planted: Vec<String>,
    },
    /// Build aho-corasick from the keyword file and scan the texts: over the same tokens as
    /// `scan` (`tokens`), or as issue 14 measured it — ASCII case-insensitive over the raw
    /// keywords and text, which also matches inside words.
    Peer {
        keywords: PathBuf,
        texts: TextSpec,
        planted: Vec<String>,
        tokens: bool,
    },
}

/// Which texts a scan job reads: a corpus file written once by the parent, read one document
/// at a time (so a scanning process holds one document, not the corpus).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TextSpec {
    /// `generated` or `fortunes`.
    pub corpus: String,
    /// The documents, separated by NUL bytes.
    pub path: PathBuf,
}

/// Writes `documents` to `path`, separated by NUL bytes.
fn write_corpus(path: &Path, documents: &[String]) -> Result<()> {
    let name = path.display().to_string();
    let file = std::fs::File::create(path).map_err(|e| io(&name, "create", e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    for document in documents {
        out.write_all(document.as_bytes())
            .and_then(|()| out.write_all(&[0]))
            .map_err(|e| io(&name, "write", e))?;
    }
    out.flush().map_err(|e| io(&name, "write", e))
}

/// Calls `visit` with each document of a corpus file, one at a time; returns the documents and
/// bytes read.
fn for_each_document(
    path: &Path,
    mut visit: impl FnMut(usize, &str) -> Result<()>,
) -> Result<(u64, u64)> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| io(&name, "open", e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let (mut buffer, mut documents, mut bytes) = (Vec::new(), 0u64, 0u64);
    loop {
        buffer.clear();
        let read = std::io::BufRead::read_until(&mut reader, 0, &mut buffer)
            .map_err(|e| io(&name, "read", e))?;
        if read == 0 {
            return Ok((documents, bytes));
        }
        if buffer.last() == Some(&0) {
            buffer.pop();
        }
        // `write_corpus` wrote whole `String`s: always UTF-8.
        let text = std::str::from_utf8(&buffer).unwrap_or_default();
        visit(documents as usize, text)?;
        documents += 1;
        bytes += text.len() as u64;
    }
}

/// What one job measured.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct JobResult {
    /// Wall seconds of the build (build jobs) or of the automaton's construction (peer jobs).
    pub build_seconds: Option<f64>,
    /// Bytes of the structure: the list file, or aho-corasick's `memory_usage`.
    pub structure_bytes: Option<u64>,
    /// Wall seconds scanning (tokenizing included).
    pub scan_seconds: Option<f64>,
    /// Bytes of decoded text scanned.
    pub text_bytes: u64,
    /// Documents scanned.
    pub documents: u64,
    /// Of those, flagged.
    pub flagged: u64,
    /// Keywords planted, and found.
    pub planted: u64,
    /// Planted keywords found.
    pub planted_found: u64,
    /// Peak resident memory of the process (`VmHWM`), when measured in a child.
    pub peak_rss: Option<u64>,
}

/// One row of the section: a system at a keyword-set size on one corpus.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct KeywordRow {
    /// Keywords.
    pub keywords: u64,
    /// `phishbloom`, `phishbloom --verify` or `aho-corasick`.
    pub system: String,
    /// `generated` or `fortunes`.
    pub corpus: String,
    /// Build wall seconds.
    pub build_seconds: f64,
    /// Peak RSS of the building process.
    pub build_peak_rss: Option<u64>,
    /// Bytes of the list file (or of the automaton).
    pub structure_bytes: u64,
    /// Peak RSS of the scanning process (for aho-corasick: build and scan, one process).
    pub scan_peak_rss: Option<u64>,
    /// MB (10⁶ bytes) of decoded text per second, one core.
    pub scan_mb_per_s: f64,
    /// Documents scanned.
    pub documents: u64,
    /// Clean documents flagged (every flag is false: no keyword token occurs in the texts).
    pub flagged: u64,
    /// Planted keywords found / planted.
    pub planted_found: u64,
    /// Planted keywords.
    pub planted: u64,
}

impl KeywordRow {
    /// False flags per 1,000 clean documents.
    pub fn flags_per_1000(&self) -> f64 {
        self.flagged as f64 * 1000.0 / self.documents.max(1) as f64
    }
}

/// Token counts of the texts' documents (what `--probes-per-doc` is sized from).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TokenStats {
    /// `generated` or `fortunes`.
    pub corpus: String,
    /// Documents.
    pub documents: u64,
    /// Bytes.
    pub bytes: u64,
    /// Median tokens per document.
    pub median: u64,
    /// 90th percentile.
    pub p90: u64,
}

/// Section 9's results.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct KeywordReport {
    /// One row per system, set size and corpus.
    pub rows: Vec<KeywordRow>,
    /// The texts.
    pub texts: Vec<TokenStats>,
    /// Whether the rows were measured in child processes (peak RSS per process).
    pub per_process: bool,
    /// Average keyword line length in bytes, per set.
    pub keyword_bytes: Vec<(u64, u64)>,
}

/// Serves a measurement job when [`CHILD_ENV`] is set: runs it, prints its [`JobResult`] as
/// JSON on standard output and returns the exit code; otherwise records that this executable can
/// serve jobs and returns `None`. Call it first thing in `main` of a binary that runs the report.
pub fn serve_child() -> Option<i32> {
    let Ok(job) = std::env::var(CHILD_ENV) else {
        CAN_SPAWN.store(true, Ordering::Relaxed);
        return None;
    };
    let result = serde_json::from_str::<Job>(&job)
        .map_err(|e| e.to_string())
        .and_then(|job| run_job(&job).map_err(|e| e.to_string()));
    match result {
        Ok(mut result) => {
            result.peak_rss = peak_rss();
            // A result of numbers serializes without fail.
            println!("{}", serde_json::to_string(&result).unwrap_or_default());
            Some(0)
        }
        Err(message) => {
            eprintln!("measurement job failed: {message}");
            Some(2)
        }
    }
}

/// This process's peak resident memory, from `/proc/self/status` (Linux).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `job` in a child process when this executable serves jobs, else in this process.
fn dispatch(job: &Job) -> Result<JobResult> {
    if !CAN_SPAWN.load(Ordering::Relaxed) {
        return run_job(job);
    }
    let exe = std::env::current_exe().map_err(|e| io("the current executable", "find", e))?;
    // A job is plain data: serializing it cannot fail.
    let json = serde_json::to_string(job).unwrap_or_default();
    let output = std::process::Command::new(&exe)
        .env(CHILD_ENV, json)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| io(&exe.display().to_string(), "run", e))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    if !output.status.success() {
        return Err(Error::Child {
            job: format!("{job:?}"),
            message: format!("exit status {}", output.status),
        });
    }
    serde_json::from_str(line).map_err(|e| Error::Child {
        job: format!("{job:?}"),
        message: format!("unreadable answer {line:?}: {e}"),
    })
}

fn io(what: &str, action: &'static str, source: std::io::Error) -> Error {
    Error::Io {
        what: what.to_string(),
        action,
        source,
    }
}

/// Runs one job in this process.
fn run_job(job: &Job) -> Result<JobResult> {
    match job {
        Job::Build {
            keywords,
            out,
            verify,
        } => {
            let started = Instant::now();
            let options = BuildOptions {
                kind: Kind::Blocked,
                fpp: PER_DOC_FPP,
                verify: *verify,
                name: "keywords".into(),
                ..BuildOptions::default()
            };
            let spill_dir = out.parent().unwrap_or(Path::new(".")).to_path_buf();
            let (list, _) = build_keywords(
                &Input::Path(keywords.clone()),
                &options,
                &KeywordOptions {
                    probes_per_doc: None,
                    spill_dir,
                },
                &mut |_| {},
            )?;
            list.save(out, &[])?;
            Ok(JobResult {
                build_seconds: Some(started.elapsed().as_secs_f64()),
                structure_bytes: std::fs::metadata(out).ok().map(|m| m.len()),
                ..JobResult::default()
            })
        }
        Job::Scan {
            list,
            texts,
            confirm,
            planted,
        } => {
            let list = Blocklist::open(list)?;
            let mut scanner = Scanner::new(
                &list,
                ScanOptions {
                    min_hits: 1,
                    confirm: *confirm,
                },
            )?;
            let (scan_seconds, documents, text_bytes, flagged) = timed_passes(|| {
                let mut flagged = 0;
                let (documents, bytes) = for_each_document(&texts.path, |_, document| {
                    flagged += u64::from(scanner.scan(document)?.spam);
                    Ok(())
                })?;
                Ok((documents, bytes, flagged))
            })?;
            let (mut found, mut tried) = (0, 0);
            for_each_document(&texts.path, |i, document| {
                if let Some(keyword) = planted.get(i) {
                    let verdict = scanner.scan(&plant(document, keyword))?;
                    let normalized = phishbloom_text::tokens::tokenize(keyword).join(" ");
                    found += u64::from(verdict.matches.iter().any(|m| m.keyword == normalized));
                    tried += 1;
                }
                Ok(())
            })?;
            Ok(JobResult {
                scan_seconds: Some(scan_seconds),
                text_bytes,
                documents,
                flagged,
                planted: tried,
                planted_found: found,
                ..JobResult::default()
            })
        }
        Job::Peer {
            keywords,
            texts,
            planted,
            tokens,
        } => peer(keywords, texts, planted, *tokens),
    }
}

/// Scan passes over a corpus per job: the median of three resists the other work of a shared
/// machine (one slow pass does not move it).
const SCAN_PASSES: usize = 3;

/// Runs `pass` [`SCAN_PASSES`] times; returns the median wall seconds and the last pass's
/// (documents, bytes, flagged) — every pass answers alike.
fn timed_passes(mut pass: impl FnMut() -> Result<(u64, u64, u64)>) -> Result<(f64, u64, u64, u64)> {
    let mut seconds = Vec::with_capacity(SCAN_PASSES);
    let mut counts = (0, 0, 0);
    for _ in 0..SCAN_PASSES {
        let started = Instant::now();
        counts = pass()?;
        seconds.push(started.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    Ok((seconds[SCAN_PASSES / 2], counts.0, counts.1, counts.2))
}

/// Inserts `keyword` in the middle of `document`, between spaces.
fn plant(document: &str, keyword: &str) -> String {
    let mut middle = document.len() / 2;
    while !document.is_char_boundary(middle) {
        middle -= 1;
    }
    format!("{} {keyword} {}", &document[..middle], &document[middle..])
}

/// aho-corasick. With `normalize`, over the same normalization as `scan`: patterns are the
/// keywords' tokens joined by spaces with a space on each side, a document becomes its tokens
/// joined the same way, so that a match is a whole-token phrase. Without, issue 14's setup:
/// the keyword lines as patterns, ASCII case-insensitive, over the raw text (substring matches,
/// no Unicode folding). Overlapping matches either way, as a scan reports every keyword.
fn peer(
    keywords: &Path,
    texts: &TextSpec,
    planted: &[String],
    normalize: bool,
) -> Result<JobResult> {
    let started = Instant::now();
    let list = std::fs::read_to_string(keywords)
        .map_err(|e| io(&keywords.display().to_string(), "read", e))?;
    let mut tokens = Tokens::new();
    let mut patterns: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for line in list.lines() {
        if !normalize {
            if !line.is_empty() && seen.insert(line.to_string()) {
                patterns.push(line.to_string());
            }
            continue;
        }
        let mut pattern = String::from(" ");
        tokens.tokenize(line);
        if tokens.is_empty() {
            continue;
        }
        tokens.phrase_into(0, tokens.len(), &mut pattern);
        pattern.push(' ');
        if seen.insert(pattern.clone()) {
            patterns.push(pattern);
        }
    }
    drop((list, seen));
    let automaton = aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(!normalize)
        .build(&patterns)
        .map_err(|e| Error::Child {
            job: "aho-corasick build".into(),
            message: e.to_string(),
        })?;
    let build_seconds = started.elapsed().as_secs_f64();
    drop(patterns);
    let mut normalized = String::new();
    let mut count = |text: &str, normalized: &mut String| -> usize {
        if !normalize {
            return automaton.find_overlapping_iter(text).count();
        }
        tokens.tokenize(text);
        normalized.clear();
        normalized.push(' ');
        tokens.phrase_into(0, tokens.len(), normalized);
        normalized.push(' ');
        automaton.find_overlapping_iter(normalized.as_str()).count()
    };
    let (scan_seconds, documents, text_bytes, flagged) = timed_passes(|| {
        let mut flagged = 0;
        let (documents, bytes) = for_each_document(&texts.path, |_, document| {
            flagged += u64::from(count(document, &mut normalized) > 0);
            Ok(())
        })?;
        Ok((documents, bytes, flagged))
    })?;
    let (mut found, mut tried) = (0, 0);
    for_each_document(&texts.path, |i, document| {
        if let Some(keyword) = planted.get(i) {
            found += u64::from(count(&plant(document, keyword), &mut normalized) > 0);
            tried += 1;
        }
        Ok(())
    })?;
    Ok(JobResult {
        build_seconds: Some(build_seconds),
        structure_bytes: Some(automaton.memory_usage() as u64),
        scan_seconds: Some(scan_seconds),
        text_bytes,
        documents,
        flagged,
        planted: tried,
        planted_found: found,
        peak_rss: None,
    })
}

/// The English vocabulary of the generated e-mails: the Debian word list's purely alphabetic
/// words when installed, else 50,000 pseudo-words.
fn english() -> Vec<String> {
    let words: Vec<String> = std::fs::read_to_string(WORDS)
        .map(|text| {
            text.lines()
                .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !words.is_empty() {
        return words;
    }
    let mut rng = SplitMix64::new(1);
    (0..50_000).map(|_| letters(&mut rng, 2, 9)).collect()
}

/// A string of `min..=max` random lowercase letters.
fn letters(rng: &mut SplitMix64, min: u64, max: u64) -> String {
    let len = min + rng.below(max - min + 1);
    (0..len)
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

/// Common Han characters of the generated Chinese paragraphs: U+4E00…U+4FFF.
fn clean_han(rng: &mut SplitMix64) -> char {
    // Every code point in U+4E00..U+5000 is an assigned CJK ideograph.
    char::from_u32(0x4E00 + rng.below(0x200) as u32).unwrap_or('一')
}

/// Generated e-mails of about `bytes` bytes in all: a Subject line and 40–1,150 words (median
/// about 380 tokens) in sentences and paragraphs; one in five has a Chinese paragraph.
pub fn generated_emails(bytes: u64, seed: u64) -> Vec<String> {
    let words = english();
    let mut rng = SplitMix64::new(seed);
    // Zipf-like choice: cubing a uniform number favours the list's front.
    let pick = |rng: &mut SplitMix64| {
        let u = rng.next_u64() as f64 / u64::MAX as f64;
        &words[((u * u * u) * words.len() as f64) as usize % words.len()]
    };
    let mut documents = Vec::new();
    let mut total = 0u64;
    while total < bytes {
        let count = 40 + rng.below(180) + rng.below(180) + rng.below(4) * rng.below(250);
        let mut text = String::from("Subject: ");
        for i in 0..2 + rng.below(6) {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(pick(&mut rng));
        }
        text.push_str("\n\n");
        let mut in_sentence = 0;
        for _ in 0..count {
            let word = pick(&mut rng);
            if in_sentence == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
            } else {
                text.push_str(word);
            }
            in_sentence += 1;
            match rng.below(12) {
                0 if in_sentence > 3 => {
                    text.push_str(if rng.below(6) == 0 { ".\n\n" } else { ". " });
                    in_sentence = 0;
                }
                1 => text.push_str(", "),
                _ => text.push(' '),
            }
        }
        if rng.below(5) == 0 {
            text.push_str("\n\n");
            for i in 0..20 + rng.below(100) {
                text.push(clean_han(&mut rng));
                if i % 13 == 12 {
                    text.push('，');
                }
            }
            text.push('。');
        }
        text.push_str("\n\n-- \nSent from my phone\n");
        total += text.len() as u64;
        documents.push(text);
    }
    documents
}

/// Every fortune of the installed Debian fortune files (English and, with `fortunes-zh`,
/// Chinese), one document each; empty when none is installed.
pub fn fortunes() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(FORTUNES) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_none() && p.is_file())
        .collect();
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        documents.extend(
            text.split("\n%\n")
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
        );
    }
    documents
}

/// The tokens of every text: no keyword may contain one.
fn vocabulary(corpora: &[&[String]]) -> HashSet<String> {
    let mut tokens = Tokens::new();
    let mut vocabulary = HashSet::new();
    for corpus in corpora {
        for document in corpus.iter() {
            tokens.tokenize(document);
            for token in tokens.iter() {
                if !vocabulary.contains(token) {
                    vocabulary.insert(token.to_string());
                }
            }
        }
    }
    vocabulary
}

/// One synthetic keyword: 1–3 words of 4–10 letters (three in four) or 2–4 Han characters from
/// U+4E00…U+9FFF, none of whose tokens occur in `vocabulary`.
fn keyword(rng: &mut SplitMix64, vocabulary: &HashSet<String>) -> String {
    let mut keyword = String::new();
    if rng.below(4) == 0 {
        for _ in 0..2 + rng.below(3) {
            loop {
                // Every code point in U+4E00..U+A000 is an assigned CJK ideograph.
                let c = char::from_u32(0x4E00 + rng.below(0x5200) as u32).unwrap_or('丁');
                if !vocabulary.contains(c.encode_utf8(&mut [0; 4]) as &str) {
                    keyword.push(c);
                    break;
                }
            }
        }
    } else {
        for i in 0..1 + rng.below(3) {
            if i > 0 {
                keyword.push(' ');
            }
            loop {
                let word = letters(rng, 4, 10);
                if !vocabulary.contains(&word) {
                    keyword.push_str(&word);
                    break;
                }
            }
        }
    }
    keyword
}

/// Writes `count` keywords to `path`; returns the file's bytes and up to [`PLANTED`] of the
/// keywords, spread over the file, to plant in documents.
fn write_keywords(
    path: &Path,
    count: u64,
    seed: u64,
    vocabulary: &HashSet<String>,
) -> Result<(u64, Vec<String>)> {
    let file =
        std::fs::File::create(path).map_err(|e| io(&path.display().to_string(), "create", e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut rng = SplitMix64::new(seed);
    let every = (count / PLANTED as u64).max(1);
    let mut planted = Vec::new();
    let mut bytes = 0;
    for i in 0..count {
        let keyword = keyword(&mut rng, vocabulary);
        bytes += keyword.len() as u64 + 1;
        out.write_all(keyword.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| io(&path.display().to_string(), "write", e))?;
        if i % every == 0 && planted.len() < PLANTED {
            planted.push(keyword);
        }
    }
    out.flush()
        .map_err(|e| io(&path.display().to_string(), "write", e))?;
    Ok((bytes, planted))
}

/// Token statistics of a corpus.
fn token_stats(corpus: &str, documents: &[String]) -> TokenStats {
    let mut tokens = Tokens::new();
    let mut counts: Vec<u64> = documents
        .iter()
        .map(|d| {
            tokens.tokenize(d);
            tokens.len() as u64
        })
        .collect();
    counts.sort_unstable();
    let at = |q: f64| {
        counts
            .get(((counts.len() as f64 * q) as usize).min(counts.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    TokenStats {
        corpus: corpus.to_string(),
        documents: documents.len() as u64,
        bytes: documents.iter().map(|d| d.len() as u64).sum(),
        median: at(0.5),
        p90: at(0.9),
    }
}

/// Runs the section's measurements at the report's sizes.
pub fn run(settings: &Settings) -> Result<KeywordReport> {
    run_with(
        &KeywordSizes::for_report(settings.quick),
        &settings.progress,
    )
}

/// Runs the measurements at `sizes`, in a temporary folder (keyword files and lists are large:
/// 10⁸ keywords make a 1.7 GB list file).
pub fn run_with(
    sizes: &KeywordSizes,
    progress: &crate::measure::Progress,
) -> Result<KeywordReport> {
    let work = tempfile::Builder::new()
        .prefix("phishbloom-keywords-")
        .tempdir()
        .map_err(|e| io("a temporary folder", "create", e))?;
    let generated = TextSpec {
        corpus: "generated".into(),
        path: work.path().join("generated.txt"),
    };
    let fortunes_spec = TextSpec {
        corpus: "fortunes".into(),
        path: work.path().join("fortunes.txt"),
    };
    let generated_docs = generated_emails(sizes.text_bytes, sizes.seed);
    write_corpus(&generated.path, &generated_docs)?;
    let fortune_docs = if sizes.real_texts {
        fortunes()
    } else {
        Vec::new()
    };
    let mut report = KeywordReport {
        per_process: CAN_SPAWN.load(Ordering::Relaxed),
        ..KeywordReport::default()
    };
    report.texts.push(token_stats("generated", &generated_docs));
    let mut corpora = vec![generated.clone()];
    if !fortune_docs.is_empty() {
        report.texts.push(token_stats("fortunes", &fortune_docs));
        write_corpus(&fortunes_spec.path, &fortune_docs)?;
        corpora.push(fortunes_spec);
    }
    let vocabulary = vocabulary(&[&generated_docs, &fortune_docs]);
    drop((generated_docs, fortune_docs));
    for &count in &sizes.sets {
        progress.say(&format!("keywords: writing {count} keywords"));
        let keywords = work.path().join(format!("keywords-{count}.txt"));
        let (bytes, planted) = write_keywords(&keywords, count, sizes.seed ^ count, &vocabulary)?;
        report.keyword_bytes.push((count, bytes / count.max(1)));
        for verify in [false, true] {
            let system = if verify {
                "phishbloom --verify"
            } else {
                "phishbloom"
            };
            progress.say(&format!("keywords: {system} build, {count} keywords"));
            let out = work.path().join(format!("kw-{count}-{verify}.bloom"));
            let build = dispatch(&Job::Build {
                keywords: keywords.clone(),
                out: out.clone(),
                verify,
            })?;
            for texts in &corpora {
                progress.say(&format!(
                    "keywords: {system} scan of {} texts",
                    texts.corpus
                ));
                let scan = dispatch(&Job::Scan {
                    list: out.clone(),
                    texts: texts.clone(),
                    confirm: verify,
                    planted: planted.clone(),
                })?;
                report
                    .rows
                    .push(row(count, system, &texts.corpus, &build, &scan));
            }
            std::fs::remove_file(&out).ok();
        }
        if count <= sizes.peer_max {
            for (system, tokens) in [(PEER, true), (PEER_RAW, false)] {
                for texts in &corpora {
                    progress.say(&format!(
                        "keywords: {system}, {count} keywords, {} texts",
                        texts.corpus
                    ));
                    let peer = dispatch(&Job::Peer {
                        keywords: keywords.clone(),
                        texts: texts.clone(),
                        planted: planted.clone(),
                        tokens,
                    })?;
                    let mut line = row(count, system, &texts.corpus, &peer, &peer);
                    line.build_peak_rss = peer.peak_rss;
                    report.rows.push(line);
                }
            }
        }
        std::fs::remove_file(&keywords).ok();
    }
    Ok(report)
}

fn row(count: u64, system: &str, corpus: &str, build: &JobResult, scan: &JobResult) -> KeywordRow {
    let seconds = scan.scan_seconds.unwrap_or_default();
    KeywordRow {
        keywords: count,
        system: system.to_string(),
        corpus: corpus.to_string(),
        build_seconds: build.build_seconds.unwrap_or_default(),
        build_peak_rss: build.peak_rss,
        structure_bytes: build.structure_bytes.unwrap_or_default(),
        scan_peak_rss: scan.peak_rss,
        scan_mb_per_s: if seconds > 0.0 {
            scan.text_bytes as f64 / 1e6 / seconds
        } else {
            0.0
        },
        documents: scan.documents,
        flagged: scan.flagged,
        planted_found: scan.planted_found,
        planted: scan.planted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_avoid_every_token_of_the_texts_and_planted_ones_are_found() {
        let sizes = KeywordSizes {
            sets: vec![3_000],
            peer_max: 3_000,
            text_bytes: 200_000,
            seed: 7,
            real_texts: false,
        };
        let report = run_with(&sizes, &crate::measure::Progress::new("test", false)).unwrap();
        let generated: Vec<&KeywordRow> = report
            .rows
            .iter()
            .filter(|r| r.corpus == "generated")
            .collect();
        assert_eq!(generated.len(), 4);
        for row in &generated {
            assert_eq!(row.planted_found, row.planted, "{row:?}");
            assert!(row.planted > 0 && row.documents > 20, "{row:?}");
        }
        // The exact systems flag nothing: no keyword token occurs in the texts (the raw peer
        // matches inside words, so it may).
        for row in report
            .rows
            .iter()
            .filter(|r| r.system != "phishbloom" && r.system != PEER_RAW)
        {
            assert_eq!(row.flagged, 0, "{row:?}");
        }
        assert!(report.texts[0].median >= 100, "{:?}", report.texts);
    }
}
