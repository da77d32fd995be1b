//! Issue 22: recognising copies of known phishing mails and pages by SimHash, measured on real
//! prose ([`crate::corpus`], The Debian Administrator's Handbook cut into ~3 KB documents).
//!
//! The corpus's pages are shuffled with a fixed seed and split in two: documents of the first
//! half are the *known* list, documents of the other half are *unrelated* queries (no page is
//! on both sides, so no unrelated document is derived from a known one). Every known document
//! is copied once per [`edits::EDITS`] kind. Then:
//!
//! - [`quality`] — for every shingle width `w` = 1…5 and weighting (tf, set, tf-idf), the
//!   recall of each edit kind (the copy's own original within distance `k`, `k` = 0…6), the
//!   unrelated documents with any match, and the distances of all unrelated pairs beside
//!   Binomial(64, ½).
//! - [`checked`] — the lookup fingerprint of words (`w` = 1, tf and set) confirmed by a check
//!   fingerprint of word pairs or triples, for every check distance of
//!   [`checked::CHECK_DISTANCES`]; [`choose`] picks the defaults among single and checked
//!   configurations by a stated rule.
//! - [`lengths`] — texts of a given number of tokens under the chosen configuration, to place
//!   `min_tokens`.
//! - [`peers`] — the chosen configuration (lookup through Manku's tables, confirmed by the
//!   check) beside brute force over both fingerprints and a MinHash-LSH index (the `gaoya`
//!   crate) on the same documents: recall, precision and speed.
//! - [`scale`] — 10⁷ random fingerprints with planted near ones: build, bytes, candidates and
//!   lookup time of 4 and 20 tables beside brute force.

pub mod checked;
pub mod edits;
pub mod fingerprints;
pub mod peers;
pub mod scale;

use std::collections::BTreeMap;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::KeyHash;
use phishbloom_text::tokens::Tokens;

use crate::corpus::{self, Document};
use crate::error::Result;
use crate::measure::Settings;
use checked::{CheckedRow, CHECK_DISTANCES, CHECK_WIDTHS, LOOKUPS};
use edits::{Edit, EDITS};
use fingerprints::{fingerprint, shingles, token_hashes, DocumentFrequencies, Weights};

/// The largest distance the sweeps report (`k` = 0…`KMAX`).
pub const KMAX: usize = 6;

/// The distance the issue (and Manku et al.) use.
pub const K: u32 = 3;

/// The list size the choice plans for: the 10⁷ known documents.
pub const PLANNED_LIST: f64 = 1e7;

/// The most false matches an unrelated document may expect against a list of
/// [`PLANNED_LIST`] documents (the acceptance bound: 0.5 % of unrelated documents).
pub const PLANNED_FALSE: f64 = 0.005;

/// The seed of the page split, the edits and the windows.
pub const SEED: u64 = 2207;

/// Shingle widths compared.
pub const WIDTHS: [u32; 5] = [1, 2, 3, 4, 5];

/// Weightings compared.
pub const WEIGHTS: [Weights; 3] = [Weights::Tf, Weights::Set, Weights::TfIdf];

/// Text lengths (tokens) of the short-text study. It starts at 8: shorter texts (a subject
/// line, a link's text) are the exact hash's case whatever the measurement (a one-word edit
/// changes most of their shingles).
pub const LENGTHS: [usize; 9] = [8, 12, 16, 24, 32, 48, 64, 96, 128];

/// How big the section's experiments are.
#[derive(Clone, Debug, PartialEq)]
pub struct NearSizes {
    /// Most corpus documents used (the full corpus is ~1,200).
    pub max_documents: usize,
    /// Fingerprints of the scale experiment (the issue: 10⁷).
    pub scale_fingerprints: usize,
    /// Lookups timed per table shape (half planted near a stored fingerprint, half random).
    pub scale_queries: usize,
    /// Brute-force lookups timed at scale (each reads every fingerprint).
    pub scale_brute_queries: usize,
}

impl NearSizes {
    /// Full (`quick == false`) or quick sizes.
    pub fn new(quick: bool) -> Self {
        if quick {
            NearSizes {
                max_documents: 300,
                scale_fingerprints: 100_000,
                scale_queries: 2_000,
                scale_brute_queries: 50,
            }
        } else {
            NearSizes {
                max_documents: usize::MAX,
                scale_fingerprints: 10_000_000,
                scale_queries: 20_000,
                scale_brute_queries: 100,
            }
        }
    }
}

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

/// Recall of one edit kind under one configuration.
#[derive(Clone, Debug)]
pub struct EditRecall {
    /// The edit.
    pub edit: Edit,
    /// Copies queried (one per known document).
    pub copies: u64,
    /// `found[k]`: copies whose own original is within distance `k`.
    pub found: [u64; KMAX + 1],
    /// Mean distance of a copy to its original.
    pub mean_distance: f64,
}

/// Summary of the distances of unrelated pairs.
#[derive(Clone, Debug)]
pub struct DistanceStats {
    /// Pairs (unrelated × known).
    pub pairs: u64,
    /// Mean distance.
    pub mean: f64,
    /// Standard deviation.
    pub sd: f64,
    /// Smallest distance.
    pub min: u32,
    /// `histogram[d]`: pairs at distance `d` (0…64).
    pub histogram: Vec<u64>,
}

/// One configuration's results.
#[derive(Clone, Debug)]
pub struct QualityRow {
    /// Tokens per shingle.
    pub shingle: u32,
    /// Weighting.
    pub weights: Weights,
    /// Recall per edit kind, in [`EDITS`] order.
    pub edits: Vec<EditRecall>,
    /// Unrelated documents queried.
    pub unrelated: u64,
    /// `false_docs[k]`: unrelated documents with some known document within `k`.
    pub false_docs: [u64; KMAX + 1],
    /// `wrong_pairs[k]`: (query, known) pairs within `k` that are not a copy and its own
    /// original, over the copies and the unrelated documents.
    pub wrong_pairs: [u64; KMAX + 1],
    /// Distances of every unrelated document to every known one.
    pub distances: DistanceStats,
}

impl QualityRow {
    /// Recall of `edit` at distance `k`.
    pub fn recall(&self, edit: Edit, k: usize) -> f64 {
        self.edits
            .iter()
            .find(|e| e.edit == edit)
            .map_or(0.0, |e| e.found[k] as f64 / e.copies.max(1) as f64)
    }

    /// Pairs within `k` that are right (a copy and its own original), over all edits.
    pub fn right_pairs(&self, k: usize) -> u64 {
        self.edits.iter().map(|e| e.found[k]).sum()
    }

    /// Right pairs ÷ all pairs within `k` (1 when none).
    pub fn precision(&self, k: usize) -> f64 {
        let right = self.right_pairs(k);
        let all = right + self.wrong_pairs[k];
        if all == 0 {
            1.0
        } else {
            right as f64 / all as f64
        }
    }

    /// Expected known documents within `k` of an unrelated document, for a list of `n`: `n` ×
    /// the chance of one pair, from a normal fit of the measured unrelated distances (mean and
    /// sd; continuity-corrected at `k + ½`) — the tail no run of this size can observe directly.
    pub fn expected_false(&self, n: f64, k: u32) -> f64 {
        n * checked::normal_pair_chance(&self.distances, k)
    }

    /// Unrelated (query, known) pairs within `k`, measured.
    pub fn unrelated_pairs_within(&self, k: usize) -> u64 {
        self.distances.histogram.iter().take(k + 1).sum()
    }

    /// The worst recall at [`K`] over the edits the issue targets: 1 % and 2 % of the words,
    /// reordered paragraphs, greeting and token.
    pub fn target_recall(&self) -> f64 {
        TARGET_EDITS
            .iter()
            .map(|&e| self.recall(e, K as usize))
            .fold(1.0, f64::min)
    }
}

/// The edits whose recall decides the choice (the "few words changed" cases).
pub const TARGET_EDITS: [Edit; 4] = [
    Edit::Words { percent: 1 },
    Edit::Words { percent: 2 },
    Edit::Reorder,
    Edit::Greeting,
];

/// One text length of the short-text study, under the chosen configuration at [`K`].
#[derive(Clone, Debug)]
pub struct LengthRow {
    /// Tokens per text.
    pub tokens: usize,
    /// Known texts (one window per known document).
    pub known: u64,
    /// Copies with 2 % of their words edited (at least one word).
    pub copies: u64,
    /// Copies whose own original is within [`K`].
    pub found: u64,
    /// Unrelated texts (one window per unrelated document).
    pub unrelated: u64,
    /// Unrelated texts with some known text within [`K`].
    pub false_docs: u64,
    /// Known-text pairs within [`K`] of each other (natural duplicates at this length).
    pub known_close_pairs: u64,
    /// Lookup distances of every unrelated text to every known one.
    pub distances: DistanceStats,
    /// Check distances of the same pairs, under a checked configuration.
    pub check_distances: Option<DistanceStats>,
    /// The check distance of the configuration, when it has a check.
    pub check_distance: Option<u32>,
}

impl LengthRow {
    /// Expected known texts matching an unrelated one for a list of `n`: `n` × P(key ≤ [`K`])
    /// (× P(check ≤ c) under a check, assuming independence), the normal fits of
    /// [`checked::normal_pair_chance`].
    pub fn expected_false(&self, n: f64) -> f64 {
        let check = match (&self.check_distances, self.check_distance) {
            (Some(stats), Some(c)) => checked::normal_pair_chance(stats, c),
            _ => 1.0,
        };
        n * checked::normal_pair_chance(&self.distances, K) * check
    }
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

/// The texts of one run: known documents, their copies, unrelated documents, tokenized.
pub struct Texts {
    /// The known documents.
    pub known: Vec<Document>,
    /// The unrelated documents.
    pub unrelated: Vec<Document>,
    /// `copies[e][i]`: known document `i` under edit `EDITS[e]`.
    pub copies: Vec<Vec<String>>,
    /// Token hashes of the known documents.
    pub known_tokens: Vec<Vec<KeyHash>>,
    /// Token hashes of the copies, as `copies`.
    pub copy_tokens: Vec<Vec<Vec<KeyHash>>>,
    /// Token hashes of the unrelated documents.
    pub unrelated_tokens: Vec<Vec<KeyHash>>,
    /// Pages read.
    pub pages: usize,
}

/// The page a document name `PAGE#N` comes from.
fn page_of(name: &str) -> &str {
    name.split('#').next().unwrap_or(name)
}

/// Splits documents by page into known and unrelated halves (pages shuffled with `seed`),
/// keeping at most `max_documents` in all.
pub fn split_by_page(
    docs: Vec<Document>,
    max_documents: usize,
    seed: u64,
) -> (Vec<Document>, Vec<Document>, usize) {
    let mut pages: BTreeMap<String, Vec<Document>> = BTreeMap::new();
    for doc in docs {
        pages
            .entry(page_of(&doc.name).to_string())
            .or_default()
            .push(doc);
    }
    let page_count = pages.len();
    let mut pages: Vec<Vec<Document>> = pages.into_values().collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..pages.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        pages.swap(i, j);
    }
    let (mut known, mut unrelated) = (Vec::new(), Vec::new());
    let mut taken = 0;
    for page in pages {
        if taken + page.len() > max_documents {
            break;
        }
        taken += page.len();
        // Alternate by document count so both halves get about as many.
        if known.len() <= unrelated.len() {
            known.extend(page);
        } else {
            unrelated.extend(page);
        }
    }
    (known, unrelated, page_count)
}

/// Every whitespace-separated word of `docs`, the pool new words are drawn from.
pub fn vocabulary(docs: &[Document]) -> Vec<String> {
    docs.iter()
        .flat_map(|d| d.paragraphs.iter())
        .flat_map(|p| p.split_whitespace())
        .map(str::to_string)
        .collect()
}

/// Reads the corpus and makes the run's texts (errors when the corpus is missing).
pub fn texts(sizes: &NearSizes) -> Result<Texts> {
    let docs = corpus::handbook()?;
    let vocabulary = vocabulary(&docs);
    let (known, unrelated, pages) = split_by_page(docs, sizes.max_documents, SEED);
    let mut rng = SplitMix64::new(SEED ^ 0xed17);
    let copies: Vec<Vec<String>> = EDITS
        .iter()
        .map(|edit| {
            known
                .iter()
                .map(|d| edit.apply(d, &vocabulary, &mut rng))
                .collect()
        })
        .collect();
    let mut tokens = Tokens::new();
    let known_tokens = known
        .iter()
        .map(|d| token_hashes(&mut tokens, &d.text()))
        .collect();
    let copy_tokens = copies
        .iter()
        .map(|texts| texts.iter().map(|t| token_hashes(&mut tokens, t)).collect())
        .collect();
    let unrelated_tokens = unrelated
        .iter()
        .map(|d| token_hashes(&mut tokens, &d.text()))
        .collect();
    Ok(Texts {
        known,
        unrelated,
        copies,
        known_tokens,
        copy_tokens,
        unrelated_tokens,
        pages,
    })
}

/// Fingerprints of token sequences under `(w, weights)`, tf-idf frequencies from `reference`.
fn fingerprints_of(
    sequences: &[Vec<KeyHash>],
    w: u32,
    weights: Weights,
    df: &DocumentFrequencies,
) -> Vec<u64> {
    sequences
        .iter()
        .map(|h| fingerprint(&shingles(h, w as usize), weights, df))
        .collect()
}

/// The fingerprints of the known documents, each copy kind and the unrelated documents.
pub struct RunFingerprints {
    /// Known documents.
    pub known: Vec<u64>,
    /// `copies[e][i]`.
    pub copies: Vec<Vec<u64>>,
    /// Unrelated documents.
    pub unrelated: Vec<u64>,
}

/// Fingerprints every text of `texts` under one configuration.
pub fn fingerprint_texts(texts: &Texts, w: u32, weights: Weights) -> RunFingerprints {
    let df = if weights == Weights::TfIdf {
        let features: Vec<Vec<u64>> = texts
            .known_tokens
            .iter()
            .map(|h| shingles(h, w as usize))
            .collect();
        DocumentFrequencies::new(features.iter().map(Vec::as_slice))
    } else {
        DocumentFrequencies::default()
    };
    RunFingerprints {
        known: fingerprints_of(&texts.known_tokens, w, weights, &df),
        copies: texts
            .copy_tokens
            .iter()
            .map(|c| fingerprints_of(c, w, weights, &df))
            .collect(),
        unrelated: fingerprints_of(&texts.unrelated_tokens, w, weights, &df),
    }
}

/// Mean and standard deviation of a histogram of distances.
pub fn distance_stats(histogram: Vec<u64>) -> DistanceStats {
    let pairs: u64 = histogram.iter().sum();
    let n = pairs.max(1) as f64;
    let mean = histogram
        .iter()
        .enumerate()
        .map(|(d, &c)| d as f64 * c as f64)
        .sum::<f64>()
        / n;
    let var = histogram
        .iter()
        .enumerate()
        .map(|(d, &c)| (d as f64 - mean).powi(2) * c as f64)
        .sum::<f64>()
        / n;
    DistanceStats {
        pairs,
        mean,
        sd: var.sqrt(),
        min: histogram.iter().position(|&c| c > 0).unwrap_or(64) as u32,
        histogram,
    }
}

/// Evaluates one configuration's fingerprints by brute force (every query against every known
/// fingerprint).
pub fn evaluate(fps: &RunFingerprints, shingle: u32, weights: Weights) -> QualityRow {
    let mut wrong_pairs = [0u64; KMAX + 1];
    let mut edit_rows = Vec::new();
    for (e, copies) in fps.copies.iter().enumerate() {
        let mut found = [0u64; KMAX + 1];
        let mut total = 0u64;
        for (i, &q) in copies.iter().enumerate() {
            for (j, &f) in fps.known.iter().enumerate() {
                let d = (q ^ f).count_ones() as usize;
                if j == i {
                    total += d as u64;
                    for slot in found.iter_mut().skip(d) {
                        *slot += 1;
                    }
                } else {
                    for slot in wrong_pairs.iter_mut().skip(d) {
                        *slot += 1;
                    }
                }
            }
        }
        edit_rows.push(EditRecall {
            edit: EDITS[e],
            copies: copies.len() as u64,
            found,
            mean_distance: total as f64 / copies.len().max(1) as f64,
        });
    }
    let mut false_docs = [0u64; KMAX + 1];
    let mut histogram = vec![0u64; 65];
    for &q in &fps.unrelated {
        let mut nearest = 64usize;
        for &f in &fps.known {
            let d = (q ^ f).count_ones() as usize;
            histogram[d] += 1;
            nearest = nearest.min(d);
            for slot in wrong_pairs.iter_mut().skip(d) {
                *slot += 1;
            }
        }
        for slot in false_docs.iter_mut().skip(nearest) {
            *slot += 1;
        }
    }
    QualityRow {
        shingle,
        weights,
        edits: edit_rows,
        unrelated: fps.unrelated.len() as u64,
        false_docs,
        wrong_pairs,
        distances: distance_stats(histogram),
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

/// A window of exactly `len` tokens of `text` at a random token offset (the text from the
/// first token's start to the last one's end), or `None` when `text` is shorter.
pub fn token_window(
    tokens: &mut Tokens,
    text: &str,
    len: usize,
    rng: &mut SplitMix64,
) -> Option<String> {
    tokens.tokenize(text);
    if tokens.len() < len || len == 0 {
        return None;
    }
    let start = rng.below((tokens.len() - len + 1) as u64) as usize;
    let (from, _) = tokens.span(start);
    let (_, to) = tokens.span(start + len - 1);
    Some(text[from..to].to_string())
}

/// The short-text study: for each of [`LENGTHS`], one window per known document (and its copy
/// with 2 % of the words edited, at least one) and one per unrelated document, fingerprinted
/// under `config` (lookup and check SimHash) whatever their length.
pub fn lengths(texts: &Texts, config: &Config) -> Vec<LengthRow> {
    let mut rng = SplitMix64::new(SEED ^ 0x1e57);
    let mut tokens = Tokens::new();
    let vocabulary = vocabulary(&texts.known);
    let fp = |tokens: &mut Tokens, text: &str| config.fingerprints(&token_hashes(tokens, text));
    let pass = |a: (u64, u64), b: (u64, u64)| {
        config.passes((a.0 ^ b.0).count_ones(), (a.1 ^ b.1).count_ones(), K)
    };
    let mut out = Vec::new();
    for len in LENGTHS {
        let (mut known, mut copies) = (Vec::new(), Vec::new());
        for doc in &texts.known {
            if let Some(window) = token_window(&mut tokens, &doc.text(), len, &mut rng) {
                let copy = edits::edit_words(&window, 2, &vocabulary, &mut rng);
                known.push(fp(&mut tokens, &window));
                copies.push(fp(&mut tokens, &copy));
            }
        }
        let mut unrelated = Vec::new();
        for doc in &texts.unrelated {
            if let Some(window) = token_window(&mut tokens, &doc.text(), len, &mut rng) {
                unrelated.push(fp(&mut tokens, &window));
            }
        }
        let found = copies
            .iter()
            .zip(&known)
            .filter(|(c, k)| pass(**c, **k))
            .count();
        let false_docs = unrelated
            .iter()
            .filter(|&&q| known.iter().any(|&f| pass(q, f)))
            .count();
        let mut histogram = vec![0u64; 65];
        let mut check_histogram = vec![0u64; 65];
        for &q in &unrelated {
            for &f in &known {
                histogram[(q.0 ^ f.0).count_ones() as usize] += 1;
                check_histogram[(q.1 ^ f.1).count_ones() as usize] += 1;
            }
        }
        let mut close = 0u64;
        for i in 0..known.len() {
            for j in i + 1..known.len() {
                close += u64::from(pass(known[i], known[j]));
            }
        }
        out.push(LengthRow {
            tokens: len,
            known: known.len() as u64,
            copies: copies.len() as u64,
            found: found as u64,
            unrelated: unrelated.len() as u64,
            false_docs: false_docs as u64,
            known_close_pairs: close,
            distances: distance_stats(histogram),
            check_distances: config.check.map(|_| distance_stats(check_histogram)),
            check_distance: config.check.map(|(_, c)| c),
        });
    }
    out
}

/// `min_tokens` from the short-text study: the shortest length from which on (at it and at
/// every longer length measured) no unrelated text matched a known one at [`K`] and an
/// unrelated text expects at most [`PLANNED_FALSE`] false matches against [`PLANNED_LIST`]
/// known ones. Shorter texts fall back to the exact hash, which never matches an unrelated
/// text by chance.
pub fn choose_min_tokens(rows: &[LengthRow]) -> usize {
    let mut min = rows.last().map_or(0, |r| r.tokens);
    for row in rows.iter().rev() {
        if row.false_docs > 0 || row.expected_false(PLANNED_LIST) > PLANNED_FALSE {
            break;
        }
        min = row.tokens;
    }
    min
}

/// Everything the section measured.
#[derive(Clone, Debug)]
pub struct NearReport {
    /// Quality: configurations, the choice, short texts.
    pub quality: Quality,
    /// The chosen configuration beside its peers.
    pub peers: Vec<peers::PeerRow>,
    /// The tables at scale beside brute force.
    pub scale: Vec<scale::ScaleRow>,
    /// Sizes in force.
    pub sizes: NearSizes,
}

/// Runs the whole section.
pub fn run(settings: &Settings) -> Result<NearReport> {
    let sizes = NearSizes::new(settings.quick);
    settings.progress.say("near: reading the corpus");
    let texts = texts(&sizes)?;
    let quality = quality(settings, &texts);
    settings.progress.say("near: peers");
    let peers = peers::run(&texts, &quality.config())?;
    settings.progress.say("near: scale");
    let scale = scale::run(settings, &sizes)?;
    Ok(NearReport {
        quality,
        peers,
        scale,
        sizes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> Document {
        Document {
            name: name.into(),
            paragraphs: vec!["x".into()],
        }
    }

    #[test]
    fn pages_go_to_one_side_only() {
        let docs: Vec<Document> = (0..10)
            .flat_map(|p| (0..3).map(move |i| doc(&format!("p{p}.html#{i}"))))
            .collect();
        let (known, unrelated, pages) = split_by_page(docs, usize::MAX, 1);
        assert_eq!(pages, 10);
        assert_eq!(known.len() + unrelated.len(), 30);
        for k in &known {
            assert!(unrelated
                .iter()
                .all(|u| page_of(&u.name) != page_of(&k.name)));
        }
    }

    #[test]
    fn min_tokens_is_where_false_matches_stop() {
        let row = |tokens, false_docs| LengthRow {
            tokens,
            known: 10,
            copies: 10,
            found: 10,
            unrelated: 10,
            false_docs,
            known_close_pairs: 0,
            distances: distance_stats({
                let mut h = vec![0u64; 65];
                h[32] = 1;
                h
            }),
            check_distances: None,
            check_distance: None,
        };
        let rows = [row(4, 3), row(8, 0), row(12, 1), row(16, 0), row(24, 0)];
        assert_eq!(choose_min_tokens(&rows), 16);
    }

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

    #[test]
    fn windows_hold_exactly_the_tokens_asked() {
        let mut tokens = Tokens::new();
        let mut rng = SplitMix64::new(4);
        let text = "One, two; three four — five six seven.";
        let window = token_window(&mut tokens, text, 3, &mut rng).expect("7 tokens ≥ 3");
        tokens.tokenize(&window);
        assert_eq!(tokens.len(), 3);
        assert!(token_window(&mut tokens, text, 8, &mut rng).is_none());
    }
}
