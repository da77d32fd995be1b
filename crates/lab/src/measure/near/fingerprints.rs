//! Fingerprints of tokenized texts under every configuration the near-duplicate section
//! compares: shingle width `w`, and the weighting of the shingles — term frequency and set
//! (what [`phishbloom_text::simhash::SimHasher`] computes) and tf-idf with document
//! frequencies taken from the known documents (which the list format does not store: measured
//! here only, to decide whether it should).

use std::collections::HashMap;

use phishbloom_filter::KeyHash;
use phishbloom_text::phrase::phrase_hash;
use phishbloom_text::simhash::simhash;
use phishbloom_text::tokens::Tokens;

/// How shingles weigh in the SimHash sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Weights {
    /// Every occurrence counts once ([`phishbloom_text::simhash::Weighting::Tf`]).
    Tf,
    /// Every distinct shingle counts once ([`phishbloom_text::simhash::Weighting::Set`]).
    Set,
    /// Term frequency × smoothed inverse document frequency ([`idf`]).
    TfIdf,
}

impl Weights {
    /// The name in tables (`tf`, `set`, `tf-idf`).
    pub fn name(self) -> &'static str {
        match self {
            Weights::Tf => "tf",
            Weights::Set => "set",
            Weights::TfIdf => "tf-idf",
        }
    }
}

/// The token hashes of `text` (the tokenizer of [`phishbloom_text::simhash::SimHasher`]).
pub fn token_hashes(tokens: &mut Tokens, text: &str) -> Vec<KeyHash> {
    tokens.tokenize(text);
    tokens.hashes().to_vec()
}

/// The features of a token sequence: one 64-bit hash per shingle of `w` tokens, as
/// [`phishbloom_text::simhash::SimHasher`] computes them (fewer tokens than `w`: none).
pub fn shingles(hashes: &[KeyHash], w: usize) -> Vec<u64> {
    hashes
        .windows(w.max(1))
        .map(|shingle| phrase_hash(shingle).h1)
        .collect()
}

/// Smoothed inverse document frequency, `ln((1 + N) / (1 + df)) + 1` (scikit-learn's
/// `TfidfTransformer(smooth_idf=True)`; Salton and Buckley, "Term-weighting approaches in
/// automatic text retrieval", IP&M 1988, for tf × idf).
pub fn idf(documents: usize, df: u32) -> f64 {
    ((1.0 + documents as f64) / (1.0 + f64::from(df))).ln() + 1.0
}

/// Document frequencies of features over documents (each document's features counted once).
#[derive(Clone, Debug, Default)]
pub struct DocumentFrequencies {
    documents: usize,
    df: HashMap<u64, u32>,
}

impl DocumentFrequencies {
    /// The frequencies over `documents` (each a feature list).
    pub fn new<'a>(documents: impl IntoIterator<Item = &'a [u64]>) -> Self {
        let mut out = DocumentFrequencies::default();
        let mut own = Vec::new();
        for features in documents {
            out.documents += 1;
            own.clear();
            own.extend_from_slice(features);
            own.sort_unstable();
            own.dedup();
            for &f in &own {
                *out.df.entry(f).or_default() += 1;
            }
        }
        out
    }

    /// [`idf`] of a feature (0 documents for one never seen).
    pub fn idf(&self, feature: u64) -> f64 {
        idf(self.documents, self.df.get(&feature).copied().unwrap_or(0))
    }
}

/// The SimHash of `features` under `weights` (`df` is used by [`Weights::TfIdf`] only).
pub fn fingerprint(features: &[u64], weights: Weights, df: &DocumentFrequencies) -> u64 {
    match weights {
        Weights::Tf => simhash(features.iter().map(|&f| (f, 1))),
        Weights::Set => {
            let mut set = features.to_vec();
            set.sort_unstable();
            set.dedup();
            simhash(set.iter().map(|&f| (f, 1)))
        }
        Weights::TfIdf => {
            let mut counts: HashMap<u64, u32> = HashMap::new();
            for &f in features {
                *counts.entry(f).or_default() += 1;
            }
            // simhash takes integer weights: idf in hundredths keeps two decimals.
            simhash(
                counts
                    .into_iter()
                    .map(|(f, tf)| (f, (f64::from(tf) * df.idf(f) * 100.0).round() as i32)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_text::simhash::{SimHashParams, SimHasher, Weighting};

    const TEXT: &str = "The Debian Administrator's Handbook: the APT tools, the packages, \
                        and the packages again, for the administrators of the Falcot Corp.";

    #[test]
    fn tf_and_set_are_what_the_simhasher_computes() {
        let mut tokens = Tokens::new();
        let hashes = token_hashes(&mut tokens, TEXT);
        let mut hasher = SimHasher::new();
        for w in 1..=5u32 {
            for (weights, weighting) in
                [(Weights::Tf, Weighting::Tf), (Weights::Set, Weighting::Set)]
            {
                let params = SimHashParams {
                    shingle: w,
                    check_shingle: 0,
                    check_distance: 0,
                    min_tokens: 1,
                    weighting,
                };
                let ours = fingerprint(
                    &shingles(&hashes, w as usize),
                    weights,
                    &DocumentFrequencies::default(),
                );
                assert_eq!(ours, hasher.fingerprint(TEXT, &params).0.bits(), "w {w}");
            }
        }
    }

    #[test]
    fn idf_is_highest_for_unseen_features() {
        let a = [1u64, 2, 3];
        let b = [1u64, 4];
        let df = DocumentFrequencies::new([&a[..], &b[..]]);
        assert!(df.idf(1) < df.idf(2));
        assert!(df.idf(2) < df.idf(99));
        assert!((idf(2, 2) - 1.0).abs() < 1e-12);
    }
}
