//! The choice among the measured configurations: what a list can hold ([`Config`]), the rule
//! that picks the defaults ([`choose`]), the chosen configuration's sweep over k, and the run of
//! every configuration ([`quality`]) with the corpus it was measured on.

use phishbloom_filter::KeyHash;

use super::checked::{self, CheckedRow, CHECK_DISTANCES, CHECK_WIDTHS, LOOKUPS};
use super::edits::EDITS;
use super::fingerprints::{fingerprint, shingles, DocumentFrequencies, Weights};
use super::{
    choose_min_tokens, evaluate, fingerprint_texts, lengths, LengthRow, QualityRow, Texts,
};
use super::{K, KMAX, PLANNED_FALSE, PLANNED_LIST, WEIGHTS, WIDTHS};
use crate::corpus::{self, Document};
use crate::measure::Settings;

/// The corpus as the section used it.
#[derive(Clone, Debug)]
pub struct CorpusSummary {
    /// HTML pages read.
    pub pages: usize,
    /// Documents cut from them (used).
    pub documents: usize,
    /// Known documents (the list).
    pub known: usize,
    /// Unrelated documents (queries that must not match).
    pub unrelated: usize,
    /// Mean bytes per document.
    pub mean_bytes: f64,
    /// Mean tokens per document.
    pub mean_tokens: f64,
    /// Paragraphs occurring in more than one document: `(text, documents)`, most frequent
    /// first (at most 12).
    pub duplicate_paragraphs: Vec<(String, usize)>,
    /// Distinct paragraphs occurring in more than one document.
    pub duplicated: usize,
    /// Pairs of corpus documents whose chosen fingerprints are within [`K`]:
    /// `(a, b, distance)`, at most 20.
    pub close_pairs: Vec<(String, String, u32)>,
    /// All such pairs.
    pub close_pair_count: usize,
}

/// A configuration a list can hold: the lookup fingerprint and, optionally, the check
/// fingerprint with its largest distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Tokens per shingle of the lookup fingerprint.
    pub shingle: u32,
    /// Weighting (of both fingerprints).
    pub weights: Weights,
    /// `(check shingle, check distance)`, or none.
    pub check: Option<(u32, u32)>,
}

impl Config {
    /// Whether a pair at lookup distance `key` and check distance `check` matches at `k`.
    pub fn passes(&self, key: u32, check: u32, k: u32) -> bool {
        key <= k && self.check.is_none_or(|(_, c)| check <= c)
    }

    /// The lookup and check fingerprints of a token sequence (check 0 without one).
    pub fn fingerprints(&self, hashes: &[KeyHash]) -> (u64, u64) {
        let df = DocumentFrequencies::default();
        let key = fingerprint(&shingles(hashes, self.shingle as usize), self.weights, &df);
        let check = self.check.map_or(0, |(w2, _)| {
            fingerprint(&shingles(hashes, w2 as usize), self.weights, &df)
        });
        (key, check)
    }

    /// A label: `w = 1, tf, check w = 2 within 8` or `w = 2, tf`.
    pub fn label(&self) -> String {
        let mut out = format!("w = {}, {}", self.shingle, self.weights.name());
        if let Some((w2, c)) = self.check {
            out.push_str(&format!(", check w = {w2} within {c}"));
        }
        out
    }
}

/// What [`choose`] picked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// One fingerprint: an index into [`Quality::rows`].
    Single(usize),
    /// A checked configuration: an index into [`Quality::checked`] and the check distance.
    Checked {
        /// The row.
        row: usize,
        /// The check distance.
        check_distance: u32,
    },
}

/// One `k` of the chosen configuration's sweep.
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// The lookup distance.
    pub k: usize,
    /// Recall per edit, in [`EDITS`] order.
    pub recall: Vec<f64>,
    /// Unrelated documents matched.
    pub false_docs: u64,
    /// Unrelated documents queried.
    pub unrelated: u64,
    /// Right pairs ÷ all pairs matched.
    pub precision: f64,
    /// Expected false matches per unrelated document against [`PLANNED_LIST`] known ones.
    pub expected_false: f64,
}

/// What the section measured about quality (everything but the peers and the scale run).
#[derive(Clone, Debug)]
pub struct Quality {
    /// The corpus.
    pub corpus: CorpusSummary,
    /// Every single-fingerprint configuration, in [`WIDTHS`] × [`WEIGHTS`] order.
    pub rows: Vec<QualityRow>,
    /// Every checked configuration, in [`LOOKUPS`] × [`CHECK_WIDTHS`] order.
    pub checked: Vec<CheckedRow>,
    /// The chosen configuration.
    pub choice: Choice,
    /// The short-text study under the chosen configuration.
    pub lengths: Vec<LengthRow>,
    /// The `min_tokens` the study gives ([`choose_min_tokens`]).
    pub min_tokens: usize,
}

impl Quality {
    /// The chosen configuration.
    pub fn config(&self) -> Config {
        config_of(&self.rows, &self.checked, self.choice)
    }

    /// The chosen configuration at `k` = 0…[`KMAX`].
    pub fn sweep(&self) -> Vec<SweepRow> {
        (0..=KMAX)
            .map(|k| match self.choice {
                Choice::Single(i) => {
                    let r = &self.rows[i];
                    SweepRow {
                        k,
                        recall: EDITS.iter().map(|&e| r.recall(e, k)).collect(),
                        false_docs: r.false_docs[k],
                        unrelated: r.unrelated,
                        precision: r.precision(k),
                        expected_false: r.expected_false(PLANNED_LIST, k as u32),
                    }
                }
                Choice::Checked {
                    row,
                    check_distance: c,
                } => {
                    let r = &self.checked[row];
                    SweepRow {
                        k,
                        recall: EDITS.iter().map(|&e| r.recall(e, k, c)).collect(),
                        false_docs: r.false_docs(k, c),
                        unrelated: r.unrelated(),
                        precision: r.precision(k, c),
                        expected_false: r.expected_false(PLANNED_LIST, k as u32, c),
                    }
                }
            })
            .collect()
    }
}

/// The configuration `choice` names among `rows` and `checked`.
pub fn config_of(rows: &[QualityRow], checked: &[CheckedRow], choice: Choice) -> Config {
    match choice {
        Choice::Single(i) => Config {
            shingle: rows[i].shingle,
            weights: rows[i].weights,
            check: None,
        },
        Choice::Checked {
            row,
            check_distance,
        } => Config {
            shingle: checked[row].shingle,
            weights: checked[row].weights,
            check: Some((checked[row].check_shingle, check_distance)),
        },
    }
}

/// The rule that picks the defaults, among the single-fingerprint configurations a list can
/// store (tf and set; tf-idf needs document frequencies the format does not hold) and the
/// checked ones: no unrelated document matched at [`K`], and at most [`PLANNED_FALSE`]
/// expected false matches per unrelated document against [`PLANNED_LIST`] known ones
/// ([`QualityRow::expected_false`], [`CheckedRow::expected_false`]); then the highest worst
/// recall over [`TARGET_EDITS`] at [`K`]; then the highest mean recall over every edit at
/// [`K`]; then the earlier candidate: single configurations (smaller `w`, tf first) before
/// checked ones, and among those the smaller check distance, then [`LOOKUPS`] ×
/// [`CHECK_WIDTHS`] order.
pub fn choose(rows: &[QualityRow], checked: &[CheckedRow]) -> Choice {
    let k = K as usize;
    let mut best: Option<(Choice, (bool, f64, f64))> = None;
    let mut consider = |choice: Choice, score: (bool, f64, f64)| {
        // Strictly better only: earlier candidates win ties.
        if best.as_ref().is_none_or(|(_, b)| score > *b) {
            best = Some((choice, score));
        }
    };
    for (i, r) in rows.iter().enumerate() {
        if r.weights == Weights::TfIdf {
            continue;
        }
        let mean = r.edits.iter().map(|e| r.recall(e.edit, k)).sum::<f64>() / EDITS.len() as f64;
        let safe = r.false_docs[k] == 0 && r.expected_false(PLANNED_LIST, K) <= PLANNED_FALSE;
        consider(Choice::Single(i), (safe, r.target_recall(), mean));
    }
    for c in CHECK_DISTANCES {
        for (i, r) in checked.iter().enumerate() {
            let safe =
                r.false_docs(k, c) == 0 && r.expected_false(PLANNED_LIST, K, c) <= PLANNED_FALSE;
            consider(
                Choice::Checked {
                    row: i,
                    check_distance: c,
                },
                (safe, r.target_recall(c), r.mean_recall(c)),
            );
        }
    }
    best.map_or(Choice::Single(0), |(choice, _)| choice)
}

/// Runs the configuration sweep and the short-text study.
pub fn quality(settings: &Settings, texts: &Texts) -> Quality {
    let mut rows = Vec::new();
    for w in WIDTHS {
        for weights in WEIGHTS {
            settings
                .progress
                .say(&format!("near: w = {w}, {}", weights.name()));
            let fps = fingerprint_texts(texts, w, weights);
            rows.push(evaluate(&fps, w, weights));
        }
    }
    let mut checked = Vec::new();
    for (w, weights) in LOOKUPS {
        let key = fingerprint_texts(texts, w, weights);
        for w2 in CHECK_WIDTHS {
            settings.progress.say(&format!(
                "near: w = {w}, {}, check w = {w2}",
                weights.name()
            ));
            let check = fingerprint_texts(texts, w2, weights);
            checked.push(checked::evaluate(&key, &check, w, weights, w2));
        }
    }
    let choice = choose(&rows, &checked);
    let config = config_of(&rows, &checked, choice);
    settings.progress.say("near: short texts");
    let lengths = lengths(texts, &config);
    let min_tokens = choose_min_tokens(&lengths);
    Quality {
        corpus: summarize(texts, &config),
        rows,
        checked,
        choice,
        lengths,
        min_tokens,
    }
}

/// The corpus summary, with the natural near-duplicates under the chosen configuration.
fn summarize(texts: &Texts, config: &Config) -> CorpusSummary {
    let all: Vec<&Document> = texts.known.iter().chain(&texts.unrelated).collect();
    let owned: Vec<Document> = all.iter().map(|&d| d.clone()).collect();
    let duplicates = corpus::duplicate_paragraphs(&owned);
    let tokens: Vec<&Vec<KeyHash>> = texts
        .known_tokens
        .iter()
        .chain(&texts.unrelated_tokens)
        .collect();
    let fps: Vec<(u64, u64)> = tokens.iter().map(|h| config.fingerprints(h)).collect();
    let mut close = Vec::new();
    for i in 0..fps.len() {
        for j in i + 1..fps.len() {
            let d = (fps[i].0 ^ fps[j].0).count_ones();
            if config.passes(d, (fps[i].1 ^ fps[j].1).count_ones(), K) {
                close.push((all[i].name.clone(), all[j].name.clone(), d));
            }
        }
    }
    let n = all.len().max(1) as f64;
    CorpusSummary {
        pages: texts.pages,
        documents: all.len(),
        known: texts.known.len(),
        unrelated: texts.unrelated.len(),
        mean_bytes: all.iter().map(|d| d.len()).sum::<usize>() as f64 / n,
        mean_tokens: tokens.iter().map(|t| t.len()).sum::<usize>() as f64 / n,
        duplicated: duplicates.len(),
        duplicate_paragraphs: duplicates.into_iter().take(12).collect(),
        close_pair_count: close.len(),
        close_pairs: close.into_iter().take(20).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::RunFingerprints;
    use super::*;

    #[test]
    fn choose_prefers_a_safe_checked_configuration_with_the_smaller_c() {
        let fps = |known: u64, copy: u64, unrelated: u64| RunFingerprints {
            known: vec![known],
            copies: vec![vec![copy]; EDITS.len()],
            unrelated: vec![unrelated],
        };
        // Lookup: every copy and the unrelated document at distance 0 (unsafe alone).
        let key = fps(0, 0, 0);
        let single = evaluate(&key, 1, Weights::Tf);
        assert_eq!(single.false_docs[K as usize], 1);
        assert_eq!(
            choose(std::slice::from_ref(&single), &[]),
            Choice::Single(0)
        );
        // Check: the copies at 0, the unrelated document at 64: safe at every c, full recall.
        let checked = checked::evaluate(&key, &fps(0, 0, u64::MAX), 1, Weights::Tf, 2);
        assert_eq!(
            choose(&[single], &[checked]),
            Choice::Checked {
                row: 0,
                check_distance: CHECK_DISTANCES[0]
            }
        );
    }
}
