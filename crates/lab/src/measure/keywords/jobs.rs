//! The keyword section's jobs: a build, a scan or the peer's build and scan, each run in a
//! child process of this executable when it serves jobs ([`serve_child`]), so that each
//! reports its own peak resident memory; else in this process.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use phishbloom_blocklist::keywords::{build_keywords, KeywordOptions};
use phishbloom_blocklist::BlocklistFile;
use phishbloom_blocklist::Input;
use phishbloom_core::scan::{ScanOptions, Scanner};
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_text::tokens::Tokens;

use super::texts::{for_each_document, TextSpec};
use super::{io, CHILD_ENV, PER_DOC_FPP};
use crate::error::{Error, Result};

/// Set by [`serve_child`]: this executable answers jobs, so measurements may spawn it.
static CAN_SPAWN: AtomicBool = AtomicBool::new(false);

/// Whether this executable serves jobs (so measurements run in child processes).
pub(super) fn can_spawn() -> bool {
    CAN_SPAWN.load(Ordering::Relaxed)
}

/// One job of a child process.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) enum Job {
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
    /// `scan` (`tokens`), or in the peer's plainest setup — ASCII case-insensitive over the raw
    /// keywords and text, which also matches inside words.
    Peer {
        keywords: PathBuf,
        texts: TextSpec,
        planted: Vec<String>,
        tokens: bool,
    },
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
pub(super) fn dispatch(job: &Job) -> Result<JobResult> {
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

/// Runs one job in this process.
fn run_job(job: &Job) -> Result<JobResult> {
    match job {
        Job::Build {
            keywords,
            out,
            verify,
        } => build(keywords, out, *verify),
        Job::Scan {
            list,
            texts,
            confirm,
            planted,
        } => scan(list, texts, *confirm, planted),
        Job::Peer {
            keywords,
            texts,
            planted,
            tokens,
        } => peer(keywords, texts, planted, *tokens),
    }
}

/// `build --keywords` from the keyword file, saved to `out`: the build's time and bytes.
fn build(keywords: &Path, out: &Path, verify: bool) -> Result<JobResult> {
    let started = Instant::now();
    let options = BuildOptions {
        kind: Kind::Blocked,
        fpp: PER_DOC_FPP,
        verify,
        name: "keywords".into(),
        ..BuildOptions::default()
    };
    let spill_dir = out.parent().unwrap_or(Path::new(".")).to_path_buf();
    let (list, _) = build_keywords(
        &Input::Path(keywords.to_path_buf()),
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

/// Opens a keyword list and scans the texts (timed), then the texts with keywords planted.
fn scan(list: &Path, texts: &TextSpec, confirm: bool, planted: &[String]) -> Result<JobResult> {
    let list = Blocklist::open(list)?;
    let mut scanner = Scanner::new(
        &list,
        ScanOptions {
            min_hits: 1,
            confirm,
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
/// joined the same way, so that a match is a whole-token phrase. Without, the plainest setup:
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
