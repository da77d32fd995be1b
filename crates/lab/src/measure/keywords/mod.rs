//! Section 9's measurements: scanning e-mail for 10⁵…10⁸ spam keywords with a keyword
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

mod jobs;
mod texts;

pub use jobs::{peak_rss, serve_child, JobResult};
pub use texts::{fortunes, generated_emails, TextSpec};

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};
use crate::measure::Settings;
use jobs::{can_spawn, dispatch, Job};
use texts::{token_stats, vocabulary, write_corpus, write_keywords};

/// The environment variable that makes a binary serve one measurement job (its JSON) and exit.
pub const CHILD_ENV: &str = "PHISHBLOOM_LAB_CHILD";

/// The per-document rate the keyword lists are built for (the `build` default).
pub const PER_DOC_FPP: f64 = 0.01;

/// The peer over the same tokens as `scan` (the comparison the targets are judged by).
pub const PEER: &str = "aho-corasick";

/// The peer in its plainest setup: ASCII case-insensitive over the raw text.
pub const PEER_RAW: &str = "aho-corasick (raw, ASCII case-insensitive)";

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

/// An I/O error on `what` while doing `action`.
pub(super) fn io(what: &str, action: &'static str, source: std::io::Error) -> Error {
    Error::Io {
        what: what.to_string(),
        action,
        source,
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
        per_process: can_spawn(),
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
        let run = SetRun {
            work: work.path(),
            count,
            sizes,
            corpora: &corpora,
            progress,
        };
        run.measure(&vocabulary, &mut report)?;
    }
    Ok(report)
}

/// One keyword-set size's measurements: its keywords written, then every system built and
/// scanned over every corpus.
struct SetRun<'a> {
    /// The temporary folder.
    work: &'a Path,
    /// Keywords in the set.
    count: u64,
    /// What to measure.
    sizes: &'a KeywordSizes,
    /// The corpus files.
    corpora: &'a [TextSpec],
    /// Progress lines.
    progress: &'a crate::measure::Progress,
}

impl SetRun<'_> {
    /// Measures the set, appending its rows and keyword bytes to `report`.
    fn measure(&self, vocabulary: &HashSet<String>, report: &mut KeywordReport) -> Result<()> {
        let count = self.count;
        self.progress
            .say(&format!("keywords: writing {count} keywords"));
        let keywords = self.work.join(format!("keywords-{count}.txt"));
        let (bytes, planted) =
            write_keywords(&keywords, count, self.sizes.seed ^ count, vocabulary)?;
        report.keyword_bytes.push((count, bytes / count.max(1)));
        for verify in [false, true] {
            let system = if verify {
                "phishbloom --verify"
            } else {
                "phishbloom"
            };
            self.progress
                .say(&format!("keywords: {system} build, {count} keywords"));
            let out = self.work.join(format!("kw-{count}-{verify}.bloom"));
            let build = dispatch(&Job::Build {
                keywords: keywords.clone(),
                out: out.clone(),
                verify,
            })?;
            for texts in self.corpora {
                self.progress.say(&format!(
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
        if count <= self.sizes.peer_max {
            for (system, tokens) in [(PEER, true), (PEER_RAW, false)] {
                for texts in self.corpora {
                    self.progress.say(&format!(
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
        Ok(())
    }
}

/// A section row from a build job and a scan job.
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
