//! Checked configurations: a lookup SimHash (the one Manku's tables index) confirmed by a
//! second SimHash of wider shingles, as [`phishbloom_text::simhash::Fingerprint::Sim`] holds
//! them. A (query, known) pair matches when the lookup fingerprints are within `k` **and** the
//! check fingerprints within `c`.
//!
//! Every pair's two distances go into a 65 × 65 histogram (`[key distance][check distance]`)
//! per kind of pair — each edit's right pairs (a copy and its own original), the wrong pairs
//! (a copy and another original, an unrelated document and any known one) and the unrelated
//! pairs alone — so recall, precision and the distance statistics follow for any `(k, c)`; the
//! unrelated documents matched follow from each one's smallest check distance among the known
//! documents within each `k`.

use super::edits::{Edit, EDITS};
use super::fingerprints::Weights;
use super::{distance_stats, DistanceStats, RunFingerprints, K, KMAX, TARGET_EDITS};

/// Lookup configurations compared with a check: single words, tf and set.
pub const LOOKUPS: [(u32, Weights); 2] = [(1, Weights::Tf), (1, Weights::Set)];

/// Check shingle widths compared.
pub const CHECK_WIDTHS: [u32; 2] = [2, 3];

/// Check distances compared.
pub const CHECK_DISTANCES: [u32; 6] = [6, 8, 10, 12, 14, 16];

/// The lower-tail fractions of each marginal at which the independence of the two distances is
/// checked ([`CheckedRow::independence`]).
pub const INDEPENDENCE_QUANTILES: [f64; 3] = [0.2, 0.1, 0.05];

/// A 65 × 65 histogram of pairs by `[key distance][check distance]`.
pub type Joint = Vec<[u64; 65]>;

fn joint() -> Joint {
    vec![[0u64; 65]; 65]
}

/// Pairs of `joint` with key distance ≤ `k` and check distance ≤ `c`.
pub fn within(joint: &Joint, k: usize, c: u32) -> u64 {
    joint
        .iter()
        .take(k + 1)
        .map(|row| row.iter().take(c as usize + 1).sum::<u64>())
        .sum()
}

/// The distances of one kind of pair, summed over the check distance (`key == true`) or the key
/// distance.
fn marginal(joint: &Joint, key: bool) -> Vec<u64> {
    let mut out = vec![0u64; 65];
    for (dk, row) in joint.iter().enumerate() {
        for (dc, &n) in row.iter().enumerate() {
            out[if key { dk } else { dc }] += n;
        }
    }
    out
}

/// One edit kind under a checked configuration.
#[derive(Clone, Debug)]
pub struct CheckedEdit {
    /// The edit.
    pub edit: Edit,
    /// Copies queried.
    pub copies: u64,
    /// Right pairs (copy, own original) by both distances.
    pub right: Joint,
    /// Mean check distance of a copy to its original.
    pub mean_check_distance: f64,
}

/// One checked configuration's results (every `k` and `c`).
#[derive(Clone, Debug)]
pub struct CheckedRow {
    /// Tokens per shingle of the lookup fingerprint.
    pub shingle: u32,
    /// Weighting of both fingerprints (a list stores one weighting for both).
    pub weights: Weights,
    /// Tokens per shingle of the check fingerprint.
    pub check_shingle: u32,
    /// Per edit kind, in [`EDITS`] order.
    pub edits: Vec<CheckedEdit>,
    /// Wrong pairs (copies × other originals, unrelated × known) by both distances.
    pub wrong: Joint,
    /// Unrelated × known pairs by both distances.
    pub unrelated_pairs: Joint,
    /// Per unrelated document, per `k` = 0…[`KMAX`]: the smallest check distance among the
    /// known documents whose key is within `k` (65: none).
    pub nearest_check: Vec<[u32; KMAX + 1]>,
    /// Key distances of the unrelated pairs.
    pub key_distances: DistanceStats,
    /// Check distances of the unrelated pairs.
    pub check_distances: DistanceStats,
}

/// The independence check at one quantile: both marginals cut at their `quantile` lower tail.
#[derive(Clone, Debug)]
pub struct Independence {
    /// The nominal lower-tail fraction.
    pub quantile: f64,
    /// Key distance threshold (smallest with empirical CDF ≥ quantile).
    pub key_threshold: u32,
    /// Check distance threshold.
    pub check_threshold: u32,
    /// Unrelated pairs within both thresholds, counted.
    pub observed: u64,
    /// Pairs expected within both if the distances were independent: pairs × F_key × F_check.
    pub expected: f64,
}

impl Independence {
    /// Observed ÷ expected (1 under independence; above 1: pairs near in one are nearer in the
    /// other than chance).
    pub fn ratio(&self) -> f64 {
        self.observed as f64 / self.expected.max(f64::MIN_POSITIVE)
    }
}

impl CheckedRow {
    /// Recall of `edit` at `(k, c)`: copies whose own original passes both.
    pub fn recall(&self, edit: Edit, k: usize, c: u32) -> f64 {
        self.edits.iter().find(|e| e.edit == edit).map_or(0.0, |e| {
            within(&e.right, k, c) as f64 / e.copies.max(1) as f64
        })
    }

    /// Unrelated documents with a known one passing both at `(k, c)`.
    pub fn false_docs(&self, k: usize, c: u32) -> u64 {
        self.nearest_check.iter().filter(|n| n[k] <= c).count() as u64
    }

    /// Unrelated documents queried.
    pub fn unrelated(&self) -> u64 {
        self.nearest_check.len() as u64
    }

    /// Right pairs ÷ all pairs passing both at `(k, c)` (1 when none).
    pub fn precision(&self, k: usize, c: u32) -> f64 {
        let right: u64 = self.edits.iter().map(|e| within(&e.right, k, c)).sum();
        let all = right + within(&self.wrong, k, c);
        if all == 0 {
            1.0
        } else {
            right as f64 / all as f64
        }
    }

    /// Expected known documents passing both at `(k, c)` for an unrelated document and a list
    /// of `n`: `n` × P(key ≤ k) × P(check ≤ c), each from a normal fit of the measured
    /// unrelated distances continuity-corrected at `+ ½` ([`normal_pair_chance`]). The product
    /// assumes the two distances independent; [`CheckedRow::independence`] checks that on the
    /// measured pairs.
    pub fn expected_false(&self, n: f64, k: u32, c: u32) -> f64 {
        n * normal_pair_chance(&self.key_distances, k)
            * normal_pair_chance(&self.check_distances, c)
    }

    /// The worst recall at ([`K`], `c`) over [`TARGET_EDITS`].
    pub fn target_recall(&self, c: u32) -> f64 {
        TARGET_EDITS
            .iter()
            .map(|&e| self.recall(e, K as usize, c))
            .fold(1.0, f64::min)
    }

    /// The mean recall at ([`K`], `c`) over every edit.
    pub fn mean_recall(&self, c: u32) -> f64 {
        EDITS
            .iter()
            .map(|&e| self.recall(e, K as usize, c))
            .sum::<f64>()
            / EDITS.len() as f64
    }

    /// The independence check of the two distances on the unrelated pairs, at each of
    /// [`INDEPENDENCE_QUANTILES`] ([`independence_at`]).
    pub fn independence(&self) -> Vec<Independence> {
        INDEPENDENCE_QUANTILES
            .iter()
            .map(|&q| independence_at(&self.unrelated_pairs, q))
            .collect()
    }

    /// A short name: `w = 1 tf, check w = 2`.
    pub fn label(&self) -> String {
        format!(
            "w = {} {}, check w = {}",
            self.shingle,
            self.weights.name(),
            self.check_shingle
        )
    }
}

/// The chance that an unrelated pair is within `d`, from a normal fit (mean, sd) of measured
/// distances with continuity correction at `d + ½` — the same fit as
/// [`super::QualityRow::expected_false`].
pub fn normal_pair_chance(stats: &DistanceStats, d: u32) -> f64 {
    crate::theory::normal_upper_tail((stats.mean - (f64::from(d) + 0.5)) / stats.sd.max(1e-9))
}

/// The smallest distance whose empirical CDF in `histogram` reaches `quantile`, and that CDF.
fn lower_quantile(histogram: &[u64], quantile: f64) -> (u32, f64) {
    let total = histogram.iter().sum::<u64>().max(1) as f64;
    let mut cumulative = 0u64;
    for (d, &n) in histogram.iter().enumerate() {
        cumulative += n;
        if cumulative as f64 / total >= quantile {
            return (d as u32, cumulative as f64 / total);
        }
    }
    (64, 1.0)
}

/// The independence check at one quantile: each distance cut where its own empirical CDF
/// reaches `quantile`; the pairs within both, counted, beside pairs × F_key × F_check (what
/// independent distances give: P(A ∩ B) = P(A) P(B)).
pub fn independence_at(pairs: &Joint, quantile: f64) -> Independence {
    let (key_threshold, fk) = lower_quantile(&marginal(pairs, true), quantile);
    let (check_threshold, fc) = lower_quantile(&marginal(pairs, false), quantile);
    let total: u64 = pairs.iter().map(|r| r.iter().sum::<u64>()).sum();
    Independence {
        quantile,
        key_threshold,
        check_threshold,
        observed: within(pairs, key_threshold as usize, check_threshold),
        expected: total as f64 * fk * fc,
    }
}

/// Evaluates a checked configuration by brute force: `key` are the lookup fingerprints,
/// `check` the check fingerprints of the same texts.
pub fn evaluate(
    key: &RunFingerprints,
    check: &RunFingerprints,
    shingle: u32,
    weights: Weights,
    check_shingle: u32,
) -> CheckedRow {
    let mut wrong = joint();
    let mut edits = Vec::new();
    for (e, (keys, checks)) in key.copies.iter().zip(&check.copies).enumerate() {
        let mut right = joint();
        let mut total = 0u64;
        for (i, (&qk, &qc)) in keys.iter().zip(checks).enumerate() {
            for (j, (&fk, &fc)) in key.known.iter().zip(&check.known).enumerate() {
                let dk = (qk ^ fk).count_ones() as usize;
                let dc = (qc ^ fc).count_ones() as usize;
                if i == j {
                    right[dk][dc] += 1;
                    total += dc as u64;
                } else {
                    wrong[dk][dc] += 1;
                }
            }
        }
        edits.push(CheckedEdit {
            edit: EDITS[e],
            copies: keys.len() as u64,
            right,
            mean_check_distance: total as f64 / keys.len().max(1) as f64,
        });
    }
    let mut unrelated_pairs = joint();
    let mut nearest_check = Vec::new();
    for (&qk, &qc) in key.unrelated.iter().zip(&check.unrelated) {
        let mut nearest = [65u32; KMAX + 1];
        for (&fk, &fc) in key.known.iter().zip(&check.known) {
            let dk = (qk ^ fk).count_ones() as usize;
            let dc = (qc ^ fc).count_ones();
            unrelated_pairs[dk][dc as usize] += 1;
            wrong[dk][dc as usize] += 1;
            for slot in nearest.iter_mut().skip(dk) {
                *slot = (*slot).min(dc);
            }
        }
        nearest_check.push(nearest);
    }
    CheckedRow {
        shingle,
        weights,
        check_shingle,
        edits,
        wrong,
        key_distances: distance_stats(marginal(&unrelated_pairs, true)),
        check_distances: distance_stats(marginal(&unrelated_pairs, false)),
        unrelated_pairs,
        nearest_check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_counts_the_lower_left_corner() {
        let mut j = joint();
        j[0][0] = 1;
        j[3][12] = 2;
        j[4][0] = 4;
        j[0][13] = 8;
        assert_eq!(within(&j, 3, 12), 3);
        assert_eq!(within(&j, 4, 12), 7);
        assert_eq!(within(&j, 64, 64), 15);
    }

    #[test]
    fn independent_distances_give_a_ratio_near_one() {
        // A product histogram: key and check distances drawn independently.
        let key = [10u64, 30, 60];
        let check = [20u64, 80];
        let mut j = joint();
        for (a, &x) in key.iter().enumerate() {
            for (b, &y) in check.iter().enumerate() {
                j[a][b] = x * y;
            }
        }
        let ind = independence_at(&j, 0.1);
        assert_eq!((ind.key_threshold, ind.check_threshold), (0, 0));
        assert!((ind.ratio() - 1.0).abs() < 1e-9, "{}", ind.ratio());
    }

    #[test]
    fn a_pair_must_pass_both_distances() {
        let fps = |known: Vec<u64>, copy: u64, unrelated: u64| RunFingerprints {
            known,
            copies: vec![vec![copy]; EDITS.len()],
            unrelated: vec![unrelated],
        };
        // Key: the copy 1 bit away, the unrelated document 2. Check: the copy 5 bits away, the
        // unrelated document 20.
        let key = fps(vec![0], 1, 3);
        let check = fps(vec![0], 0x1f, 0xfffff);
        let row = evaluate(&key, &check, 1, Weights::Tf, 2);
        assert_eq!(row.recall(Edit::Reorder, 1, 5), 1.0);
        assert_eq!(row.recall(Edit::Reorder, 1, 4), 0.0);
        assert_eq!(row.recall(Edit::Reorder, 0, 5), 0.0);
        assert_eq!(row.false_docs(2, 19), 0);
        assert_eq!(row.false_docs(2, 20), 1);
        assert_eq!(row.false_docs(1, 64), 0);
        assert_eq!(row.precision(6, 16), 1.0);
    }
}
