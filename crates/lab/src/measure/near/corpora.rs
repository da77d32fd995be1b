//! Near-duplicates on several kinds of real text, every system in the same run: MinHash
//! sketches ([`phishbloom_text::minhash`], with and without the boilerplate cut), the SimHash
//! pair a near-duplicate list uses today, gaoya's MinHash-LSH, and Rspamd's fuzzy rule (32
//! minima of word trigrams, a match at more than 16 of them equal).
//!
//! Each corpus is split by page into known and unrelated documents ([`split_by_page`]);
//! known documents are copied under every edit of [`super::edits::EDITS`]; the unrelated queries are the
//! corpus's own unrelated half and every document of the other corpora (text of another kind
//! is unrelated too, and it multiplies the queries the false-match rate is measured on).

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::minhash::{
    self, mix64, Boilerplate, MinHashParams, MinHasher, Sketch, SketchIndex,
};
use phishbloom_text::simhash::{hamming, Fingerprint, SimHashParams, SimHasher};
use phishbloom_text::tokens::Tokens;

use super::peers::{gaoya_row, tally, PeerRow};
use super::texts::{split_by_page, texts_of, Texts};
use super::{NearSizes, K, SEED};
use crate::corpus::{self, Document};
use crate::error::Result;

/// Rspamd's fuzzy shingles: this many minima, each over its own keyed hash of the word
/// trigrams (Rspamd `src/libutil/shingles.c`, `RSPAMD_SHINGLE_SIZE`).
pub const RSPAMD_SHINGLES: usize = 32;

/// Rspamd's match: more than half of the shingles equal.
pub const RSPAMD_MATCH: usize = 16;

/// The resemblance from which a query is a near copy of a known document, whatever the page
/// it came from: what 20 % of words edited leaves (0.8⁵ of the 5-word shingles kept: 0.33 of
/// them shared, 0.2 of their union). A corpus holds such pairs of its own (the same paragraphs
/// on `f32` and `f64` methods, man pages of sibling functions); a match of an unrelated query
/// with one is right, and only matches below it count as false.
pub const NEAR_COPY: f64 = 0.2;

/// Drops from unrelated queries' answers the known documents they are near copies of.
type Screen<'a> = &'a mut dyn FnMut(&mut [Vec<usize>]);

/// One corpus's results.
#[derive(Clone, Debug)]
pub struct CorpusRow {
    /// The corpus (`handbook`, `man pages`, `Rust library docs`).
    pub corpus: &'static str,
    /// Its documents in all.
    pub documents: usize,
    /// Known documents (after exact duplicates are dropped).
    pub known: usize,
    /// Unrelated queries (its own unrelated half and the other corpora).
    pub unrelated: usize,
    /// Boilerplate shingles the known documents gave.
    pub boilerplate: usize,
    /// Pairs of an unrelated query and a known document some system matched that are near
    /// copies all the same (true resemblance ≥ [`NEAR_COPY`]): not counted as false.
    pub near_copies: usize,
    /// One row per system.
    pub systems: Vec<PeerRow>,
    /// The unrelated documents the sketches matched, each with the document it matched.
    pub false_pairs: Vec<FalsePair>,
}

/// An unrelated document the sketches matched.
#[derive(Clone, Debug)]
pub struct FalsePair {
    /// The query's text.
    pub query: String,
    /// The known document's text.
    pub known: String,
    /// The resemblance the sketches estimated.
    pub estimated: f64,
    /// The true resemblance of their shingle sets (boilerplate kept).
    pub resemblance: f64,
}

/// The resemblance (Jaccard index) of two texts' sets of `w`-token shingles.
pub fn true_resemblance(a: &str, b: &str, w: u32) -> f64 {
    let mut tokens = Tokens::new();
    let (a, b) = (
        shingle_set(&mut tokens, a, w),
        shingle_set(&mut tokens, b, w),
    );
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// A corpus reader.
pub type Reader = fn() -> Result<Vec<Document>>;

/// The corpora: name and reader.
pub const CORPORA: [(&str, Reader); 3] = [
    ("handbook", corpus::handbook),
    ("man pages", corpus::man_pages),
    ("Rust library docs", corpus::rust_docs),
];

/// The known documents' shingle sets, to find the known document a text resembles most
/// (the ground truth the systems are judged by).
pub struct ShingleIndex {
    /// Shingle → the known documents holding it.
    holders: HashMap<u64, Vec<u32>>,
    /// Each known document's distinct shingles.
    sizes: Vec<usize>,
    shingle: u32,
}

impl ShingleIndex {
    /// The index of `known` texts' `w`-token shingles.
    pub fn new<'a>(known: impl IntoIterator<Item = &'a str>, w: u32) -> Self {
        let mut holders: HashMap<u64, Vec<u32>> = HashMap::new();
        let mut sizes = Vec::new();
        let mut tokens = Tokens::new();
        for (i, text) in known.into_iter().enumerate() {
            let set = shingle_set(&mut tokens, text, w);
            sizes.push(set.len());
            for s in set {
                holders.entry(s).or_default().push(i as u32);
            }
        }
        ShingleIndex {
            holders,
            sizes,
            shingle: w,
        }
    }

    /// The known document `text` resembles most and their resemblance (0 and document 0 when
    /// it shares no shingle).
    pub fn most_resembled(&self, text: &str) -> (usize, f64) {
        let set = shingle_set(&mut Tokens::new(), text, self.shingle);
        let mut shared: HashMap<u32, usize> = HashMap::new();
        for s in &set {
            for &k in self.holders.get(s).map_or(&[][..], Vec::as_slice) {
                *shared.entry(k).or_default() += 1;
            }
        }
        shared
            .into_iter()
            .map(|(k, c)| {
                let union = set.len() + self.sizes[k as usize] - c;
                (k as usize, c as f64 / union.max(1) as f64)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or((0, 0.0))
    }
}

/// The distinct `w`-token shingles of `text`.
fn shingle_set(tokens: &mut Tokens, text: &str, w: u32) -> HashSet<u64> {
    tokens.tokenize(text);
    minhash::shingles(tokens.hashes(), w).collect()
}

/// Runs every system on every corpus.
pub fn run(sizes: &NearSizes) -> Result<Vec<CorpusRow>> {
    let all: Vec<(&'static str, Vec<Document>)> = CORPORA
        .iter()
        .map(|&(name, read)| Ok((name, read()?)))
        .collect::<Result<_>>()?;
    let mut rows = Vec::new();
    for (c, (name, docs)) in all.iter().enumerate() {
        let texts = texts_of(docs.clone(), sizes)?;
        let mut strangers: Vec<String> = texts.unrelated.iter().map(Document::text).collect();
        for (other, (_, docs)) in all.iter().enumerate() {
            if other != c {
                let (a, b, _) = split_by_page(docs.clone(), sizes.max_documents, SEED);
                strangers.extend(a.iter().chain(&b).map(Document::text));
            }
        }
        rows.push(corpus_row(name, docs.len(), &texts, &strangers));
    }
    Ok(rows)
}

/// Every system on one corpus.
fn corpus_row(
    name: &'static str,
    documents: usize,
    texts: &Texts,
    strangers: &[String],
) -> CorpusRow {
    let known: Vec<String> = texts.known.iter().map(Document::text).collect();
    let queries: Vec<String> = texts
        .copies
        .iter()
        .flatten()
        .cloned()
        .chain(strangers.iter().cloned())
        .collect();
    let params = MinHashParams::default();
    let mut tokens = Tokens::new();
    let features: Vec<Vec<u64>> = known
        .iter()
        .map(|t| {
            tokens.tokenize(t);
            minhash::shingles(tokens.hashes(), params.shingle).collect()
        })
        .collect();
    // Learn from the known documents in a shuffled order, as a list builder samples.
    let mut order: Vec<usize> = (0..known.len()).collect();
    let mut rng = SplitMix64::new(SEED);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let boilerplate = Boilerplate::learn(order.iter().map(|&i| features[i].iter().copied()));
    let copies = queries.len() - strangers.len();
    let mut verdicts: HashMap<(usize, usize), bool> = Default::default();
    let mut screen = |answers: &mut [Vec<usize>]| {
        for (q, answer) in answers.iter_mut().enumerate().skip(copies) {
            answer.retain(|&d| {
                !*verdicts.entry((q, d)).or_insert_with(|| {
                    true_resemblance(&queries[q], &known[d], params.shingle) >= NEAR_COPY
                })
            });
        }
    };
    let (ours, matched) = sketch_row(&known, &queries, params, &boilerplate, &mut screen);
    let false_pairs = matched
        .into_iter()
        .filter(|&(q, _, _)| q >= copies)
        .map(|(q, d, estimated)| {
            (
                q,
                d,
                estimated,
                true_resemblance(&queries[q], &known[d], params.shingle),
            )
        })
        .filter(|&(_, _, _, resemblance)| resemblance < NEAR_COPY)
        .map(|(q, d, estimated, resemblance)| FalsePair {
            resemblance,
            query: queries[q].clone(),
            known: known[d].clone(),
            estimated,
        })
        .collect();
    let systems = vec![
        ours,
        sketch_row(&known, &queries, params, &Boilerplate::none(), &mut screen).0,
        simhash_row(&known, &queries, &mut screen),
        gaoya_row(&known, &queries, params.shingle, &mut tokens, &mut screen),
        rspamd_row(&known, &queries, &mut screen),
    ];
    let near_copies = verdicts.values().filter(|&&v| v).count();
    CorpusRow {
        corpus: name,
        documents,
        known: known.len(),
        unrelated: strangers.len(),
        boilerplate: boilerplate.len(),
        near_copies,
        systems,
        false_pairs,
    }
}

/// Microseconds per item since `started`.
fn per_item_us(started: Instant, items: usize) -> f64 {
    started.elapsed().as_secs_f64() * 1e6 / items.max(1) as f64
}

/// MinHash sketches in a [`SketchIndex`]: the nearest known document, if near enough. Also
/// every match as (query, document, estimated resemblance).
fn sketch_row(
    known: &[String],
    queries: &[String],
    params: MinHashParams,
    boilerplate: &Boilerplate,
    screen: Screen<'_>,
) -> (PeerRow, Vec<(usize, usize, f64)>) {
    let mut hasher = MinHasher::new();
    let started = Instant::now();
    // A document too short to sketch is indexed under an empty sketch that matches nothing:
    // keeping numbers aligned with `known`.
    let empty = Sketch {
        packed: vec![0; params.words()],
        keys: vec![0; params.postings as usize],
        features: 0,
    };
    let sketches: Vec<Option<Sketch>> = known
        .iter()
        .map(|t| hasher.sketch(t, &params, boilerplate))
        .collect();
    let query_sketches: Vec<Option<Sketch>> = queries
        .iter()
        .map(|t| hasher.sketch(t, &params, boilerplate))
        .collect();
    let hash_us = per_item_us(started, known.len() + queries.len());
    let started = Instant::now();
    let stored: Vec<Sketch> = sketches
        .iter()
        .map(|s| s.clone().unwrap_or_else(|| empty.clone()))
        .collect();
    let index = SketchIndex::build(params, &stored).expect("default parameters are usable");
    let build_seconds = started.elapsed().as_secs_f64();
    let unsketched: HashSet<usize> = (0..known.len())
        .filter(|&i| sketches[i].is_none())
        .collect();
    let started = Instant::now();
    let found: Vec<Option<(usize, f64)>> = query_sketches
        .iter()
        .map(|q| {
            q.as_ref()
                .and_then(|q| index.nearest(q))
                .map(|m| (m.document as usize, m.resemblance))
                .filter(|(d, _)| !unsketched.contains(d))
        })
        .collect();
    let query_us = per_item_us(started, queries.len());
    let mut answers: Vec<Vec<usize>> = found
        .iter()
        .map(|f| f.iter().map(|&(d, _)| d).collect())
        .collect();
    screen(&mut answers);
    let matched = found
        .iter()
        .enumerate()
        .filter_map(|(q, f)| f.map(|(d, r)| (q, d, r)))
        .collect();
    let cut = if boilerplate.is_empty() {
        "no boilerplate cut".to_string()
    } else {
        format!("{} boilerplate shingles cut", boilerplate.len())
    };
    let mut row = tally(
        if boilerplate.is_empty() {
            "MinHash sketches, no cut"
        } else {
            "MinHash sketches"
        },
        format!(
            "{}-word shingles, {} bins × {} bits, {} posting keys, match at ≥ {} bins; {cut}",
            params.shingle,
            params.bins,
            params.bits,
            params.postings,
            index.threshold()
        ),
        &answers,
        known.len(),
    );
    row.hash_us = hash_us;
    row.build_seconds = build_seconds;
    row.query_us = query_us;
    row.index_bytes = Some(index.bytes() as u64);
    (row, matched)
}

/// The SimHash pair of a near-duplicate list today ([`SimHashParams::default`]) by brute force:
/// lookup within [`K`], check within its distance; exact fingerprints equal.
fn simhash_row(known: &[String], queries: &[String], screen: Screen<'_>) -> PeerRow {
    let params = SimHashParams::default();
    let mut hasher = SimHasher::new();
    let started = Instant::now();
    let known_fps: Vec<Fingerprint> = known
        .iter()
        .map(|t| hasher.fingerprint(t, &params).0)
        .collect();
    let query_fps: Vec<Fingerprint> = queries
        .iter()
        .map(|t| hasher.fingerprint(t, &params).0)
        .collect();
    let hash_us = per_item_us(started, known.len() + queries.len());
    let near = |a: Fingerprint, b: Fingerprint| match (a, b) {
        (Fingerprint::Sim { key, check }, Fingerprint::Sim { key: k2, check: c2 }) => {
            hamming(key, k2) <= K && hamming(check, c2) <= params.check_distance
        }
        (Fingerprint::Exact(a), Fingerprint::Exact(b)) => a == b,
        _ => false,
    };
    let started = Instant::now();
    let mut answers: Vec<Vec<usize>> = query_fps
        .iter()
        .map(|&q| {
            (0..known_fps.len())
                .filter(|&i| near(known_fps[i], q))
                .collect()
        })
        .collect();
    let query_us = per_item_us(started, queries.len());
    screen(&mut answers);
    let mut row = tally(
        "SimHash (--near-method simhash)",
        format!(
            "words within {K}, word pairs within {}, brute force",
            params.check_distance
        ),
        &answers,
        known.len(),
    );
    row.hash_us = hash_us;
    row.query_us = query_us;
    row.index_bytes = Some(16 * known.len() as u64);
    row
}

/// Rspamd's fuzzy shingles of `text`: for each of [`RSPAMD_SHINGLES`] keys, the least keyed
/// hash of its word trigrams (none for fewer than three words).
fn rspamd_shingles(tokens: &mut Tokens, text: &str) -> Option<[u64; RSPAMD_SHINGLES]> {
    tokens.tokenize(text);
    let trigrams: Vec<u64> = minhash::shingles(tokens.hashes(), 3).collect();
    if trigrams.is_empty() {
        return None;
    }
    let mut out = [u64::MAX; RSPAMD_SHINGLES];
    for (key, slot) in out.iter_mut().enumerate() {
        let salt = mix64(key as u64 + 1);
        *slot = trigrams
            .iter()
            .map(|&t| mix64(t ^ salt))
            .min()
            .unwrap_or(u64::MAX);
    }
    Some(out)
}

/// Rspamd's rule by brute force: a known document with more than [`RSPAMD_MATCH`] of the
/// [`RSPAMD_SHINGLES`] equal.
fn rspamd_row(known: &[String], queries: &[String], screen: Screen<'_>) -> PeerRow {
    let mut tokens = Tokens::new();
    let started = Instant::now();
    let known_sh: Vec<Option<[u64; RSPAMD_SHINGLES]>> = known
        .iter()
        .map(|t| rspamd_shingles(&mut tokens, t))
        .collect();
    let query_sh: Vec<Option<[u64; RSPAMD_SHINGLES]>> = queries
        .iter()
        .map(|t| rspamd_shingles(&mut tokens, t))
        .collect();
    let hash_us = per_item_us(started, known.len() + queries.len());
    let started = Instant::now();
    let mut answers: Vec<Vec<usize>> = query_sh
        .iter()
        .map(|q| {
            let Some(q) = q else { return Vec::new() };
            known_sh
                .iter()
                .enumerate()
                .filter(|(_, k)| {
                    k.is_some_and(|k| {
                        k.iter().zip(q).filter(|(a, b)| a == b).count() > RSPAMD_MATCH
                    })
                })
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let query_us = per_item_us(started, queries.len());
    screen(&mut answers);
    let mut row = tally(
        "Rspamd fuzzy rule",
        format!("{RSPAMD_SHINGLES} minima of word trigrams, > {RSPAMD_MATCH} equal, brute force"),
        &answers,
        known.len(),
    );
    row.hash_us = hash_us;
    row.query_us = query_us;
    row.index_bytes = Some((8 * RSPAMD_SHINGLES * known.len()) as u64);
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shingle_index_finds_the_most_resembled_document_and_its_resemblance() {
        let known = [
            "one two three four five six seven eight nine ten",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa",
        ];
        let index = ShingleIndex::new(known, 5);
        // Six shingles; the query shares the first four and adds two: 4 / (6 + 6 − 4).
        let (doc, r) = index.most_resembled("one two three four five six seven eight x y");
        assert_eq!(doc, 0);
        assert!((r - 4.0 / 8.0).abs() < 1e-12, "{r}");
        assert!(
            (true_resemblance(known[0], "one two three four five six seven eight x y", 5) - r)
                .abs()
                < 1e-12
        );
        assert_eq!(index.most_resembled("nothing in common at all here").1, 0.0);
    }
}
