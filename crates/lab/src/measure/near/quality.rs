//! The single-fingerprint configurations: every text fingerprinted under one shingle width and
//! weighting, then every copy and unrelated document compared with every known one — recall
//! per edit, unrelated documents matched, and the distances of unrelated pairs.

use phishbloom_filter::KeyHash;

use super::checked;
use super::edits::{Edit, EDITS};
use super::fingerprints::{fingerprint, shingles, DocumentFrequencies, Weights};
use super::{Texts, K, KMAX};

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

    /// The worst recall at [`K`] over the target edits: 1 % and 2 % of the words,
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
