//! The chosen configuration beside its peers on the same documents, in one run: Manku's
//! permuted tables of the lookup SimHash with each candidate confirmed by the check SimHash
//! (what a near-duplicate list does), brute force over every (lookup, check) pair (the same
//! answers, by construction: the run checks it), and MinHash-LSH from the `gaoya` crate (MMDS
//! chapter 3's banding) over the lookup's shingles.
//!
//! For every system: recall per edit kind (the copy's own original among the answers),
//! precision (right pairs ÷ all pairs answered, pooled over the copies and the unrelated
//! documents; and gaoya's "mean precision", the mean over queries with an answer of their
//! right fraction), and timings: hashing per document, building, and lookup per query after
//! hashing.

use std::collections::HashSet;
use std::time::Instant;

use gaoya::minhash::{calculate_minhash_params, MinHashIndex, MinHasher, MinHasher32};
use phishbloom_filter::near::{brute_force, PermutedTables};
use phishbloom_text::tokens::Tokens;

use super::edits::EDITS;
use super::fingerprints::{shingles, token_hashes};
use super::{Config, Texts, K};
use crate::error::{Error, Result};

/// MinHash functions per signature (gaoya's examples use 128).
pub const MINHASHES: usize = 128;

/// The Jaccard similarity the LSH index is tuned to and filters its answers at.
pub const JACCARD_THRESHOLD: f64 = 0.5;

/// One system's results.
#[derive(Clone, Debug)]
pub struct PeerRow {
    /// The system (`SimHash, 4 tables`, `SimHash, brute force`, `gaoya MinHash-LSH`).
    pub system: String,
    /// Its parameters.
    pub params: String,
    /// `(edit label, copies, found)`, in [`EDITS`] order.
    pub recall: Vec<(String, u64, u64)>,
    /// Unrelated documents with an answer.
    pub false_docs: u64,
    /// Unrelated documents queried.
    pub unrelated: u64,
    /// Right pairs answered.
    pub right_pairs: u64,
    /// Wrong pairs answered (copies' other answers and every answer to an unrelated document).
    pub wrong_pairs: u64,
    /// Mean over queries with an answer of right answers ÷ answers.
    pub mean_precision: f64,
    /// Microseconds to hash (fingerprint or sign) one document, tokenizing included.
    pub hash_us: f64,
    /// Seconds to build the index from the hashes.
    pub build_seconds: f64,
    /// Microseconds per lookup of a hashed query.
    pub query_us: f64,
    /// Bytes of the index's hashes (signatures or tables), when known.
    pub index_bytes: Option<u64>,
}

impl PeerRow {
    /// Right pairs ÷ all pairs answered.
    pub fn precision(&self) -> f64 {
        let all = self.right_pairs + self.wrong_pairs;
        if all == 0 {
            1.0
        } else {
            self.right_pairs as f64 / all as f64
        }
    }

    /// Copies found ÷ copies, over every edit kind in `labels` (all when empty).
    pub fn recall_of(&self, labels: &[String]) -> f64 {
        let (mut copies, mut found) = (0, 0);
        for (label, c, f) in &self.recall {
            if labels.is_empty() || labels.contains(label) {
                copies += c;
                found += f;
            }
        }
        found as f64 / copies.max(1) as f64
    }
}

/// Tallies answers: `answers[q]` for the queries, the first `copies.len() × known` being the
/// copies (edit-major) whose right answer is their index within the edit, the rest unrelated.
pub(super) fn tally(system: &str, params: String, answers: &[Vec<usize>], known: usize) -> PeerRow {
    let mut recall = Vec::new();
    let (mut right_pairs, mut wrong_pairs) = (0u64, 0u64);
    let (mut precision_sum, mut answered) = (0.0, 0u64);
    let mut score = |answer: &[usize], right: Option<usize>| {
        let hit = right.is_some_and(|r| answer.contains(&r));
        right_pairs += u64::from(hit);
        wrong_pairs += answer.len() as u64 - u64::from(hit);
        if !answer.is_empty() {
            answered += 1;
            precision_sum += f64::from(u8::from(hit)) / answer.len() as f64;
        }
        hit
    };
    for (e, edit) in EDITS.iter().enumerate() {
        let mut found = 0;
        for i in 0..known {
            found += u64::from(score(&answers[e * known + i], Some(i)));
        }
        recall.push((edit.label(), known as u64, found));
    }
    let unrelated = &answers[EDITS.len() * known..];
    let mut false_docs = 0;
    for answer in unrelated {
        score(answer, None);
        false_docs += u64::from(!answer.is_empty());
    }
    PeerRow {
        system: system.into(),
        params,
        recall,
        false_docs,
        unrelated: unrelated.len() as u64,
        right_pairs,
        wrong_pairs,
        mean_precision: precision_sum / answered.max(1) as f64,
        hash_us: 0.0,
        build_seconds: 0.0,
        query_us: 0.0,
        index_bytes: None,
    }
}

/// Every query text of the run: the copies (edit-major), then the unrelated documents.
fn query_texts(texts: &Texts) -> Vec<String> {
    texts
        .copies
        .iter()
        .flatten()
        .cloned()
        .chain(texts.unrelated.iter().map(|d| d.text()))
        .collect()
}

/// Runs the three systems under the chosen `config` at distance [`K`].
pub fn run(texts: &Texts, config: &Config) -> Result<Vec<PeerRow>> {
    let known_texts: Vec<String> = texts.known.iter().map(|d| d.text()).collect();
    let queries = query_texts(texts);
    let mut tokens = Tokens::new();
    let [tables_row, brute_row] = simhash_rows(&known_texts, &queries, config, &mut tokens)?;
    let gaoya_row = gaoya_row(
        &known_texts,
        &queries,
        config.shingle,
        &mut tokens,
        &mut |_| {},
    );
    Ok(vec![tables_row, brute_row, gaoya_row])
}

/// The known documents sorted by lookup fingerprint: `(lookup, check, document)`.
struct ByKey(Vec<(u64, u64, usize)>);

impl ByKey {
    /// Each lookup fingerprint the tables return names the known documents that have it
    /// (duplicates are possible), found by binary search; the check confirms each, as
    /// `NearEngine::lookup` does. Returns the confirmed documents, sorted.
    fn confirm(&self, config: &Config, query: (u64, u64), found: &[u64]) -> Vec<usize> {
        let mut out = Vec::new();
        for &f in found {
            let first = self.0.partition_point(|d| d.0 < f);
            let last = self.0.partition_point(|d| d.0 <= f);
            out.extend(
                self.0[first..last]
                    .iter()
                    .filter(|d| config.passes(0, (d.1 ^ query.1).count_ones(), K))
                    .map(|d| d.2),
            );
        }
        out.sort_unstable();
        out
    }
}

/// SimHash through the permuted tables (confirmed by the check) and by brute force over both
/// fingerprints: their rows, after checking that both answer alike.
fn simhash_rows(
    known_texts: &[String],
    queries: &[String],
    config: &Config,
    tokens: &mut Tokens,
) -> Result<[PeerRow; 2]> {
    let n_docs = (known_texts.len() + queries.len()) as f64;
    // Fingerprint every document, lookup and check (tokenizing included).
    let started = Instant::now();
    let mut fp = |text: &str| config.fingerprints(&token_hashes(tokens, text));
    let known_fps: Vec<(u64, u64)> = known_texts.iter().map(|t| fp(t)).collect();
    let query_fps: Vec<(u64, u64)> = queries.iter().map(|t| fp(t)).collect();
    let sim_hash_us = started.elapsed().as_secs_f64() * 1e6 / n_docs;
    let keys: Vec<u64> = known_fps.iter().map(|f| f.0).collect();
    let mut by_key: Vec<(u64, u64, usize)> = known_fps
        .iter()
        .enumerate()
        .map(|(i, f)| (f.0, f.1, i))
        .collect();
    by_key.sort_unstable();
    let by_key = ByKey(by_key);

    let started = Instant::now();
    let tables = PermutedTables::build(&keys, K, K + 1)?;
    let build_seconds = started.elapsed().as_secs_f64();
    let mut out = Vec::new();
    let started = Instant::now();
    let answers: Vec<Vec<usize>> = query_fps
        .iter()
        .map(|&q| {
            tables.within(q.0, K, &mut out)?;
            Ok(by_key.confirm(config, q, &out))
        })
        .collect::<Result<_>>()?;
    let table_us = started.elapsed().as_secs_f64() * 1e6 / query_fps.len().max(1) as f64;
    let started = Instant::now();
    let brute_answers = brute_answers(&known_fps, &query_fps, config);
    let brute_us = started.elapsed().as_secs_f64() * 1e6 / query_fps.len().max(1) as f64;
    // The library's brute force over the lookup keys agrees with the tables too.
    let keys_agree = query_fps.iter().all(|&q| {
        let mut from_tables = Vec::new();
        tables
            .within(q.0, K, &mut from_tables)
            .is_ok_and(|()| from_tables == brute_force(&keys, q.0, K))
    });
    if answers != brute_answers || !keys_agree {
        return Err(Error::Unbuildable {
            experiment: "near peers",
            reason: "the permuted tables answered differently from brute force".into(),
        });
    }
    let params = format!("{}, k = {K}", config.label());
    let mut tables_row = tally(
        "SimHash, permuted tables",
        format!("{params}, {} tables", tables.tables()),
        &answers,
        known_texts.len(),
    );
    tables_row.hash_us = sim_hash_us;
    tables_row.build_seconds = build_seconds;
    tables_row.query_us = table_us;
    let check_bytes = if config.check.is_some() {
        8 * known_fps.len() as u64
    } else {
        0
    };
    tables_row.index_bytes = Some(tables.memory_bytes() as u64 + check_bytes);
    let mut brute_row = tally(
        "SimHash, brute force",
        params,
        &brute_answers,
        known_texts.len(),
    );
    brute_row.hash_us = sim_hash_us;
    brute_row.query_us = brute_us;
    brute_row.index_bytes = Some(8 * known_fps.len() as u64 + check_bytes);
    Ok([tables_row, brute_row])
}

/// Every query's matches by brute force over both fingerprints.
fn brute_answers(
    known_fps: &[(u64, u64)],
    query_fps: &[(u64, u64)],
    config: &Config,
) -> Vec<Vec<usize>> {
    query_fps
        .iter()
        .map(|&q| {
            known_fps
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    config.passes((f.0 ^ q.0).count_ones(), (f.1 ^ q.1).count_ones(), K)
                })
                .map(|(i, _)| i)
                .collect()
        })
        .collect()
}

/// gaoya's MinHash-LSH on the same shingles of width `w`, banded: its row, its answers
/// passed through `screen` first.
pub(super) fn gaoya_row(
    known_texts: &[String],
    queries: &[String],
    w: u32,
    tokens: &mut Tokens,
    screen: &mut dyn FnMut(&mut [Vec<usize>]),
) -> PeerRow {
    let n_docs = (known_texts.len() + queries.len()) as f64;
    let (bands, rows) = calculate_minhash_params(JACCARD_THRESHOLD, MINHASHES);
    let hasher = MinHasher32::new(bands * rows);
    let started = Instant::now();
    let mut sign = |text: &str| {
        hasher.create_signature(shingles(&token_hashes(tokens, text), w as usize).into_iter())
    };
    let known_sigs: Vec<Vec<u32>> = known_texts.iter().map(|t| sign(t)).collect();
    let query_sigs: Vec<Vec<u32>> = queries.iter().map(|t| sign(t)).collect();
    let gaoya_hash_us = started.elapsed().as_secs_f64() * 1e6 / n_docs;
    let started = Instant::now();
    let mut index: MinHashIndex<u32, usize> = MinHashIndex::new(bands, rows, JACCARD_THRESHOLD);
    for (i, sig) in known_sigs.iter().enumerate() {
        index.insert(i, sig.clone());
    }
    let gaoya_build = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let gaoya_answers: Vec<Vec<usize>> = query_sigs
        .iter()
        .map(|sig| {
            let found: HashSet<usize> = index.query_owned(sig);
            let mut found: Vec<usize> = found.into_iter().collect();
            found.sort_unstable();
            found
        })
        .collect();
    let gaoya_us = started.elapsed().as_secs_f64() * 1e6 / query_sigs.len().max(1) as f64;
    let mut gaoya_answers = gaoya_answers;
    screen(&mut gaoya_answers);
    let mut gaoya_row = tally(
        "gaoya MinHash-LSH",
        format!(
            "same shingles, {} hashes, {bands} bands × {rows}, Jaccard ≥ {JACCARD_THRESHOLD}",
            bands * rows
        ),
        &gaoya_answers,
        known_texts.len(),
    );
    gaoya_row.hash_us = gaoya_hash_us;
    gaoya_row.build_seconds = gaoya_build;
    gaoya_row.query_us = gaoya_us;
    gaoya_row.index_bytes = Some((4 * bands * rows * known_sigs.len()) as u64);
    gaoya_row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_right_and_wrong_pairs() {
        // Two known documents; per edit kind two copies; then two unrelated documents.
        let mut answers = Vec::new();
        for _ in EDITS {
            answers.push(vec![0]); // right
            answers.push(vec![0, 1]); // right and wrong
        }
        answers.push(vec![]);
        answers.push(vec![1]);
        let row = tally("t", String::new(), &answers, 2);
        assert_eq!(row.recall_of(&[]), 1.0);
        assert_eq!(row.false_docs, 1);
        assert_eq!(row.right_pairs, 2 * EDITS.len() as u64);
        assert_eq!(row.wrong_pairs, EDITS.len() as u64 + 1);
        // Mean precision: (1 + ½) per edit kind and 0 for the unrelated answer.
        let expected = (1.5 * EDITS.len() as f64) / (2.0 * EDITS.len() as f64 + 1.0);
        assert!((row.mean_precision - expected).abs() < 1e-12);
    }
}
