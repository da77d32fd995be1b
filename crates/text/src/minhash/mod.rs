//! MinHash sketches of documents: near-copies found by the share of shingles two documents
//! have in common (their resemblance, the Jaccard index of their shingle sets), in a few dozen
//! bytes a document.
//!
//! Sources:
//! - A. Broder, "On the resemblance and containment of documents", SEQUENCES 1997: the minimum
//!   hash over two sets is the same with probability equal to their resemblance R.
//! - P. Li, A. Owen, C.-H. Zhang, "One Permutation Hashing", NIPS 2012: one hash per feature,
//!   its high bits choosing one of k bins, its value competing for that bin's minimum — k
//!   minima for the price of one hash.
//! - A. Shrivastava, "Optimal Densification for Fast and Accurate Minwise Hashing", ICML 2017:
//!   an empty bin borrows the minimum of a bin chosen by a hash of its index and the attempt,
//!   which keeps every bin's agreement probability at R.
//! - P. Li, A. C. König, "b-Bit Minwise Hashing", WWW 2010: keeping b bits of each minimum;
//!   two bins then agree with probability R + (1 − R)·2⁻ᵇ ([`agreement_probability`]).
//!
//! A document's features are its shingles of `w` tokens ([`crate::tokens`], hashed as
//! [`crate::phrase::phrase_hash`] hashes a phrase), less the *boilerplate* ones
//! ([`Boilerplate`]: shingles that many known documents share — headers, footers,
//! signatures — learned when a list is built and stored with it). The [`Sketch`] keeps, per
//! bin, b bits of its minimum (what estimates the resemblance), and the whole 64-bit minimum of
//! the first [`MinHashParams::postings`] bins (the keys an index finds candidates by: a near
//! copy shares the minimum of each of them with probability R, so it is found through at least
//! one of L of them with probability 1 − (1 − R)ᴸ).
//!
//! A match is declared at [`match_threshold`] agreeing bins, chosen so that a document
//! unrelated to the query — one sharing at most [`UNRELATED_RESEMBLANCE`] of its shingles —
//! passes so rarely that a query's expected false matches stay under
//! [`FALSE_MATCHES_PER_QUERY`], whatever the size of the list (see [`match_threshold`]).

mod index;

use std::collections::HashMap;

use phishbloom_filter::KeyHash;

use crate::phrase::phrase_hash;
use crate::tokens::Tokens;

pub use index::{NearMatch, SketchIndex};

/// The resemblance below which a document counts as unrelated to a query: the share of
/// shingles two documents on one subject, by different authors, have in common once the
/// boilerplate is dropped (the false matches SimHash made on technical text shared under 4 %).
pub const UNRELATED_RESEMBLANCE: f64 = 0.05;

/// The expected false matches per query the match threshold allows.
pub const FALSE_MATCHES_PER_QUERY: f64 = 0.01;

/// The most documents an index reads under one posting key of a query: a key that more known
/// documents share is a campaign the list holds many copies of, and the first of them stand
/// for the rest. It bounds the candidates of a query by `postings × SCANNED_PER_KEY`, which is
/// what makes the false-match rate independent of the list's size.
pub const SCANNED_PER_KEY: u32 = 64;

/// The most bins a sketch may have (a hostile file's parameters cannot ask for more).
pub const MAX_BINS: u32 = 1024;

/// The most posting keys a sketch may have (a list stores their count in a byte).
pub const MAX_POSTINGS: u32 = 255;

/// How documents are sketched and matched; a near-duplicate list stores these, and its queries
/// use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinHashParams {
    /// Tokens per shingle (`w`).
    pub shingle: u32,
    /// Bins of the one-permutation sketch (k), a multiple of `64 / bits`.
    pub bins: u32,
    /// Bits kept of each bin's minimum (b: 1, 2, 4 or 8).
    pub bits: u32,
    /// Bins whose whole minimum is kept as a posting key (L ≤ `bins`).
    pub postings: u32,
    /// Documents with fewer distinct features (after the boilerplate is dropped) are not
    /// sketched: too few shingles for the match threshold's bound to hold.
    pub min_features: u32,
}

impl Default for MinHashParams {
    /// 5-word shingles, 64 bins of 4 bits (32 bytes), 6 posting keys, at least 64 distinct
    /// shingles: about 0.96 of copies with 10 % of their words edited found (resemblance ≈
    /// 0.42), at 62 bytes a document in an index (32 of sketch, 6 × 5 of postings). Below 64
    /// shingles a sketch has many bins copied by densification, which agree together, and an
    /// unrelated document sharing 5 % of its shingles passes the threshold more often than
    /// [`match_threshold`] allows (measured: 4·10⁻⁵ a candidate at 32 and 48 shingles, against
    /// 2.6·10⁻⁵; none in 2·10⁵ at 64). The lab's near-duplicate section measures the
    /// alternatives.
    fn default() -> Self {
        MinHashParams {
            shingle: 5,
            bins: 64,
            bits: 4,
            postings: 6,
            min_features: 64,
        }
    }
}

impl MinHashParams {
    /// Whether the parameters are usable: `None` when they are, else what is wrong.
    pub fn problem(&self) -> Option<String> {
        if !matches!(self.bits, 1 | 2 | 4 | 8) {
            return Some(format!("{} bits a bin: use 1, 2, 4 or 8", self.bits));
        }
        let per_word = 64 / self.bits;
        if self.bins == 0 || self.bins > MAX_BINS || !self.bins.is_multiple_of(per_word) {
            return Some(format!(
                "{} bins: use a multiple of {per_word} up to {MAX_BINS}",
                self.bins
            ));
        }
        let most_keys = self.bins.min(MAX_POSTINGS);
        if self.postings == 0 || self.postings > most_keys {
            return Some(format!(
                "{} posting keys: use 1 to {most_keys} (at most the bins, and {MAX_POSTINGS})",
                self.postings
            ));
        }
        if self.shingle == 0 || self.shingle > crate::simhash::MAX_SHINGLE {
            return Some(format!(
                "{}-token shingles: use 1 to {}",
                self.shingle,
                crate::simhash::MAX_SHINGLE
            ));
        }
        None
    }

    /// 64-bit words of one packed sketch.
    pub fn words(&self) -> usize {
        (self.bins * self.bits / 64) as usize
    }

    /// Bytes a document takes in a large index, at most: its packed bins, and per posting key
    /// a 4-byte entry and at most a byte of bucket starts (61 on average with the defaults).
    pub fn index_bytes(&self) -> f64 {
        f64::from(self.bins * self.bits) / 8.0 + 5.0 * f64::from(self.postings)
    }
}

/// A document's sketch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    /// The bins' b-bit values, packed `64 / bits` to a word, bin 0 in the low bits of word 0.
    pub packed: Vec<u64>,
    /// The whole minima of the first `postings` bins.
    pub keys: Vec<u64>,
    /// Features the document had (shingles, boilerplate dropped, repeats counted).
    pub features: u32,
}

/// What an index keeps of a document's sketch: its packed bins and, per posting key, the top
/// `known` bits of the key's 32-bit prefix (the others zero; see
/// [`phishbloom_filter::postings`]): the keys themselves are not kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SketchRecord {
    /// The bins' b-bit values, packed as in [`Sketch::packed`].
    pub packed: Vec<u64>,
    /// Per posting key, its prefix: the key's top 32 bits, of which the top `known` are kept.
    pub prefixes: Vec<u32>,
    /// The bits of each prefix known.
    pub known: u32,
}

impl Sketch {
    /// The record an index files the sketch under, every prefix bit known.
    pub fn record(&self) -> SketchRecord {
        SketchRecord {
            packed: self.packed.clone(),
            prefixes: self.keys.iter().map(|&k| (k >> 32) as u32).collect(),
            known: 32,
        }
    }
}

/// Mixes a 64-bit value (SplitMix64's finalizer, Steele, Lea, Flood, OOPSLA 2014): what
/// shingle hashes, bin values and posting keys pass through.
pub use phishbloom_filter::rng::mix64;

/// The shingles of `w` tokens of `tokens`, mixed: the features a sketch is made of.
pub fn shingles(tokens: &[KeyHash], w: u32) -> impl Iterator<Item = u64> + '_ {
    tokens
        .windows(w.max(1) as usize)
        .map(|shingle| mix64(phrase_hash(shingle).h1))
}

/// The bin an empty bin `bin` borrows from at `attempt` (1, 2, …) under optimal densification
/// (Shrivastava 2017): a hash of both, so that two documents with the same empty bins borrow
/// alike and different bins borrow independently.
#[inline]
fn borrowed_bin(bin: u32, attempt: u32, bins: u32) -> u32 {
    let h = mix64((u64::from(bin) << 32 | u64::from(attempt)) ^ 0x9e37_79b9_7f4a_7c15);
    phishbloom_filter::fast_range(h, u64::from(bins)) as u32
}

/// The b-bit value a bin keeps of its minimum: bits of a second mix, since the minimum's own
/// high bits are small (it won its bin) and its low bits are what chose nothing.
#[inline]
fn bin_value(minimum: u64, bits: u32) -> u64 {
    mix64(minimum ^ 0x2545_f491_4f6c_dd1d) >> (64 - bits)
}

/// Sketches documents, keeping its buffers between them.
#[derive(Clone, Debug, Default)]
pub struct MinHasher {
    tokens: Tokens,
    distinct: Vec<u64>,
    minima: Vec<u64>,
    filled: Vec<bool>,
}

impl MinHasher {
    /// A sketcher with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The sketch of `text` (boilerplate dropped), or `None` when it has fewer than
    /// `min_features` features.
    pub fn sketch(
        &mut self,
        text: &str,
        params: &MinHashParams,
        boilerplate: &Boilerplate,
    ) -> Option<Sketch> {
        self.tokens.tokenize(text);
        let tokens = std::mem::take(&mut self.tokens);
        let sketch = self.of_features(
            shingles(tokens.hashes(), params.shingle).filter(|&f| !boilerplate.contains(f)),
            params,
        );
        self.tokens = tokens;
        sketch
    }

    /// The hash of the whole token sequence last sketched: what stands for a document too
    /// short to sketch (the hash [`crate::simhash`] gives a short document too).
    pub fn exact_hash(&self) -> u64 {
        crate::phrase::phrase_hash(self.tokens.hashes()).h1
    }

    /// The sketch of mixed features (see [`shingles`]), or `None` when there are fewer than
    /// `min_features` distinct ones.
    pub fn of_features(
        &mut self,
        features: impl IntoIterator<Item = u64>,
        params: &MinHashParams,
    ) -> Option<Sketch> {
        self.distinct.clear();
        self.distinct.extend(features);
        self.distinct.sort_unstable();
        self.distinct.dedup();
        let count = u32::try_from(self.distinct.len()).unwrap_or(u32::MAX);
        if count < params.min_features.max(1) {
            return None;
        }
        let bins = params.bins as usize;
        self.minima.clear();
        self.minima.resize(bins, u64::MAX);
        self.filled.clear();
        self.filled.resize(bins, false);
        for &feature in &self.distinct {
            let bin = phishbloom_filter::fast_range(feature, bins as u64) as usize;
            // The high bits chose the bin; the low bits compete for its minimum.
            self.minima[bin] = self.minima[bin].min(feature.rotate_left(32));
            self.filled[bin] = true;
        }
        // A bin borrows from a filled one, which keeps its own minimum: borrowing in any order
        // gives the same sketch.
        for bin in 0..bins {
            if self.filled[bin] {
                continue;
            }
            let from = borrowed_from(bin as u32, &self.filled);
            self.minima[bin] = self.minima[from];
        }
        let per_word = (64 / params.bits) as usize;
        let mut packed = vec![0u64; params.words()];
        for (bin, &minimum) in self.minima.iter().enumerate() {
            packed[bin / per_word] |=
                bin_value(minimum, params.bits) << ((bin % per_word) as u32 * params.bits);
        }
        let keys = self.minima[..params.postings as usize]
            .iter()
            .map(|&m| mix64(m))
            .collect();
        Some(Sketch {
            packed,
            keys,
            features: count,
        })
    }
}

/// The filled bin an empty bin `bin` borrows from: the first filled one among
/// [`borrowed_bin`]`(bin, 1)`, `(bin, 2)`, …. Some bin is filled (a sketch has features);
/// each attempt finds one with probability at least 1/bins, so after `64 × bins` attempts
/// (missed with probability below e⁻⁶⁴) the next filled bin in order stands in, which keeps
/// the result a function of the filled bins alone.
fn borrowed_from(bin: u32, filled: &[bool]) -> usize {
    let bins = filled.len() as u32;
    (1..=64 * bins)
        .map(|attempt| borrowed_bin(bin, attempt, bins) as usize)
        .find(|&from| filled[from])
        .or_else(|| {
            (1..=filled.len())
                .map(|i| (bin as usize + i) % filled.len())
                .find(|&i| filled[i])
        })
        .unwrap_or(bin as usize)
}

/// The bins two packed sketches agree on.
pub fn agreements(a: &[u64], b: &[u64], bits: u32) -> u32 {
    // A group of `bits` bits agrees when its XOR is zero: fold each group's bits onto its
    // lowest one and count the groups whose lowest bit stayed clear.
    let lowest = match bits {
        1 => u64::MAX,
        2 => 0x5555_5555_5555_5555,
        4 => 0x1111_1111_1111_1111,
        _ => 0x0101_0101_0101_0101,
    };
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let mut d = x ^ y;
            let mut width = bits / 2;
            while width > 0 {
                d |= d >> width;
                width /= 2;
            }
            (!d & lowest).count_ones()
        })
        .sum()
}

/// The probability that one bin of two sketches agrees when the documents' resemblance is
/// `resemblance`: R + (1 − R)·2⁻ᵇ (Li and König 2010, Theorem 1, in its limit for sets much
/// smaller than the hash space).
pub fn agreement_probability(resemblance: f64, bits: u32) -> f64 {
    let chance = 0.5f64.powi(bits as i32);
    resemblance + (1.0 - resemblance) * chance
}

/// The resemblance estimated from `agree` of `bins` agreeing bins: the inverse of
/// [`agreement_probability`] (Li and König 2010, eq. 6), clamped to 0…1.
pub fn estimated_resemblance(agree: u32, bins: u32, bits: u32) -> f64 {
    let chance = 0.5f64.powi(bits as i32);
    let share = f64::from(agree) / f64::from(bins.max(1));
    ((share - chance) / (1.0 - chance)).clamp(0.0, 1.0)
}

/// P[X ≥ t] for X ~ Binomial(n, p), summed term by term (exact to rounding for n ≤
/// [`MAX_BINS`]).
pub fn binomial_upper_tail(n: u32, p: f64, t: u32) -> f64 {
    if t == 0 {
        return 1.0;
    }
    if t > n {
        return 0.0;
    }
    // The terms in log space from ln P[X = 0] up, so that (1 − p)ⁿ cannot underflow.
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_term = f64::from(n) * lq;
    let mut tail = 0.0;
    for i in 0..n {
        if i >= t {
            tail += log_term.exp();
        }
        // ln C(n, i + 1) − ln C(n, i) = ln((n − i) / (i + 1)).
        log_term += (f64::from(n - i) / f64::from(i + 1)).ln() + lp - lq;
    }
    tail + log_term.exp()
}

/// The agreeing bins a match needs: the smallest t with
/// `postings × SCANNED_PER_KEY × P[1 + Binomial(bins − 1, p₀) ≥ t] ≤ FALSE_MATCHES_PER_QUERY`,
/// where p₀ = [`agreement_probability`]`(UNRELATED_RESEMBLANCE, bits)`.
///
/// Why that bounds false matches: an index compares a query with at most
/// `SCANNED_PER_KEY` documents per posting key, so with at most `postings × SCANNED_PER_KEY`
/// candidates, however many documents it holds. A candidate agrees with the query on the bin
/// of the key it was found by (that is what made it one); an unrelated candidate
/// (resemblance ≤ R₀) agrees on each other bin with probability at most p₀, the bins
/// independently (one permutation hashing's bins are disjoint parts of the hash space), so it
/// reaches t with probability at most the binomial tail. The expected false matches of a query
/// are at most the candidates times that tail. Independence needs filled bins: a bin filled by
/// densification copies another, so documents are sketched only from
/// [`MinHashParams::min_features`] distinct shingles on, where few bins are copies.
pub fn match_threshold(params: &MinHashParams) -> u32 {
    let p0 = agreement_probability(UNRELATED_RESEMBLANCE, params.bits);
    let candidates = f64::from(params.postings * SCANNED_PER_KEY);
    (1..=params.bins)
        .find(|&t| {
            candidates * binomial_upper_tail(params.bins - 1, p0, t - 1) <= FALSE_MATCHES_PER_QUERY
        })
        .unwrap_or(params.bins + 1)
}

/// Shingles too common among the known documents to tell them apart: the features dropped
/// from every sketch, the list's and the query's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Boilerplate {
    /// The dropped features, ascending.
    features: Vec<u64>,
}

/// A shingle in more than this share of the known documents is boilerplate.
pub const BOILERPLATE_SHARE: f64 = 0.01;

/// …and in more than this many of them: in a small list, a few copies of one campaign are
/// not boilerplate.
pub const BOILERPLATE_FLOOR: u32 = 8;

/// The most known documents whose shingles are counted to learn the boilerplate: a shingle
/// in 1 % of them shows in about 200 of a sample this size, far above chance, and the sample's
/// shingles stay within about 70 MB for documents of a few KB.
pub const BOILERPLATE_SAMPLE: usize = 20_000;

impl Boilerplate {
    /// None dropped.
    pub fn none() -> Self {
        Self::default()
    }

    /// The features of a stored list (ascending; duplicates removed).
    pub fn from_features(mut features: Vec<u64>) -> Self {
        features.sort_unstable();
        features.dedup();
        Boilerplate { features }
    }

    /// Learns the boilerplate of documents given as their features (see [`shingles`]): the
    /// features in more than `max(BOILERPLATE_FLOOR, BOILERPLATE_SHARE × documents)` of them,
    /// counted over at most [`BOILERPLATE_SAMPLE`] documents (the first ones: pass them in a
    /// shuffled order for a fair sample of a list sorted by source).
    pub fn learn<I, F>(documents: I) -> Self
    where
        I: IntoIterator<Item = F>,
        F: IntoIterator<Item = u64>,
    {
        let mut frequency: HashMap<u64, u32> = HashMap::new();
        let mut seen = Vec::new();
        let mut counted = 0usize;
        for features in documents.into_iter().take(BOILERPLATE_SAMPLE) {
            seen.clear();
            seen.extend(features);
            seen.sort_unstable();
            seen.dedup();
            for &feature in &seen {
                *frequency.entry(feature).or_insert(0) += 1;
            }
            counted += 1;
        }
        let cut = (BOILERPLATE_SHARE * counted as f64).max(f64::from(BOILERPLATE_FLOOR));
        Self::from_features(
            frequency
                .into_iter()
                .filter(|&(_, df)| f64::from(df) > cut)
                .map(|(feature, _)| feature)
                .collect(),
        )
    }

    /// Whether `feature` is dropped.
    #[inline]
    pub fn contains(&self, feature: u64) -> bool {
        !self.features.is_empty() && self.features.binary_search(&feature).is_ok()
    }

    /// The dropped features, ascending.
    pub fn features(&self) -> &[u64] {
        &self.features
    }

    /// How many features are dropped.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::rng::SplitMix64;

    fn random_set(rng: &mut SplitMix64, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.next_u64()).collect()
    }

    /// Two sets of `n` features sharing `shared` of them.
    fn pair(rng: &mut SplitMix64, n: usize, shared: usize) -> (Vec<u64>, Vec<u64>) {
        let common = random_set(rng, shared);
        let mut a = common.clone();
        a.extend(random_set(rng, n - shared));
        let mut b = common;
        b.extend(random_set(rng, n - shared));
        (a, b)
    }

    #[test]
    fn the_default_parameters_are_usable_and_fit_64_bytes() {
        let params = MinHashParams::default();
        assert_eq!(params.problem(), None);
        assert!(params.index_bytes() <= 64.0);
        assert_eq!(params.words(), 4);
    }

    #[test]
    fn absurd_parameters_are_refused_with_a_reason() {
        for params in [
            MinHashParams {
                bits: 3,
                ..Default::default()
            },
            MinHashParams {
                bins: 60,
                ..Default::default()
            },
            MinHashParams {
                bins: 1 << 20,
                ..Default::default()
            },
            MinHashParams {
                postings: 65,
                ..Default::default()
            },
            MinHashParams {
                shingle: 0,
                ..Default::default()
            },
        ] {
            assert!(params.problem().is_some(), "{params:?}");
        }
    }

    #[test]
    fn the_binomial_tail_matches_a_direct_sum() {
        // Binomial(10, 0.3): P[X ≥ 4] = 1 − Σ_{i<4} C(10, i) 0.3^i 0.7^(10−i) = 0.3503892.
        assert!((binomial_upper_tail(10, 0.3, 4) - 0.350_389_2).abs() < 1e-7);
        assert_eq!(binomial_upper_tail(10, 0.3, 0), 1.0);
        assert_eq!(binomial_upper_tail(10, 0.3, 11), 0.0);
        assert!((binomial_upper_tail(10, 0.3, 10) - 0.3f64.powi(10)).abs() < 1e-15);
    }

    #[test]
    fn the_threshold_keeps_unrelated_candidates_under_the_budget_and_is_the_least_such() {
        let params = MinHashParams::default();
        let t = match_threshold(&params);
        let p0 = agreement_probability(UNRELATED_RESEMBLANCE, params.bits);
        let candidates = f64::from(params.postings * SCANNED_PER_KEY);
        let tail = |t: u32| binomial_upper_tail(params.bins - 1, p0, t - 1);
        assert!(candidates * tail(t) <= FALSE_MATCHES_PER_QUERY);
        assert!(candidates * tail(t - 1) > FALSE_MATCHES_PER_QUERY);
    }

    #[test]
    fn an_unrelated_candidate_passes_no_more_often_than_the_threshold_allows() {
        // Documents of `min_features` distinct shingles sharing 5 % of them (R = 6 / 122):
        // among those that become candidates (a key bin agrees), the share reaching the
        // threshold must not exceed the budget per candidate, 0.01 / (6 × 64) = 2.6·10⁻⁵.
        // With about 1.5·10⁵ candidates that allows 3.9 passes on average; 12 or more would
        // have probability below 10⁻³ at the budget (Binomial tail), so the test fails only
        // when the rate is truly above it. Seeded: the run is the same every time.
        let params = MinHashParams::default();
        let t = match_threshold(&params);
        let n = params.min_features as usize;
        let mut hasher = MinHasher::new();
        let mut rng = SplitMix64::new(99);
        let (mut candidates, mut passed) = (0u64, 0u64);
        let per_word = 64 / params.bits as usize;
        let bin =
            |p: &[u64], j: usize| (p[j / per_word] >> ((j % per_word) as u32 * params.bits)) & 15;
        for _ in 0..300_000 {
            let (a, b) = pair(&mut rng, n, 6);
            let a = hasher.of_features(a, &params).unwrap();
            let b = hasher.of_features(b, &params).unwrap();
            if (0..params.postings as usize).any(|j| bin(&a.packed, j) == bin(&b.packed, j)) {
                candidates += 1;
                passed += u64::from(agreements(&a.packed, &b.packed, params.bits) >= t);
            }
        }
        let budget = FALSE_MATCHES_PER_QUERY / f64::from(params.postings * SCANNED_PER_KEY);
        let allowed = (0..)
            .find(|&k| binomial_upper_tail(candidates as u32, budget, k + 1) < 1e-3)
            .unwrap_or(0);
        assert!(candidates > 120_000, "{candidates} candidates");
        assert!(
            passed <= u64::from(allowed),
            "{passed} of {candidates} passed (allowed {allowed})"
        );
    }

    #[test]
    fn agreements_count_equal_groups_for_every_width() {
        for bits in [1u32, 2, 4, 8] {
            let mut rng = SplitMix64::new(u64::from(bits));
            for _ in 0..200 {
                let (a, b) = (rng.next_u64(), rng.next_u64() & rng.next_u64());
                let mask = (1u64 << bits) - 1;
                let expected = (0..64 / bits)
                    .filter(|i| (a >> (i * bits)) & mask == (b >> (i * bits)) & mask)
                    .count() as u32;
                assert_eq!(agreements(&[a], &[b], bits), expected, "bits {bits}");
            }
        }
    }

    #[test]
    fn the_estimate_of_resemblance_is_within_its_binomial_spread() {
        // Sets of 400 features sharing 240: R = 240 / 560 = 0.4286. Over 200 pairs, the mean
        // estimate must sit within 4 standard errors of R (seeded, so it cannot flake).
        let params = MinHashParams::default();
        let mut rng = SplitMix64::new(7);
        let mut hasher = MinHasher::new();
        let resemblance = 240.0 / 560.0;
        let runs = 200;
        let mut sum = 0.0;
        for _ in 0..runs {
            let (a, b) = pair(&mut rng, 400, 240);
            let (a, b) = (
                hasher.of_features(a, &params).unwrap(),
                hasher.of_features(b, &params).unwrap(),
            );
            let agree = agreements(&a.packed, &b.packed, params.bits);
            sum += estimated_resemblance(agree, params.bins, params.bits);
        }
        let p = agreement_probability(resemblance, params.bits);
        let chance = 1.0 / 16.0;
        let spread =
            (p * (1.0 - p) / f64::from(params.bins)).sqrt() / (1.0 - chance) / (runs as f64).sqrt();
        let mean = sum / runs as f64;
        assert!(
            (mean - resemblance).abs() < 4.0 * spread,
            "mean estimate {mean:.4} against {resemblance:.4} ± {spread:.4}"
        );
    }

    #[test]
    fn posting_keys_agree_with_probability_near_the_resemblance() {
        // Each posting key agrees with probability R; over 300 pairs × 6 keys, the count must
        // fall within 4 binomial standard deviations of its mean.
        let params = MinHashParams::default();
        let mut rng = SplitMix64::new(11);
        let mut hasher = MinHasher::new();
        let (trials, resemblance) = (300 * 6, 300.0 / 500.0);
        let mut equal = 0;
        for _ in 0..300 {
            let (a, b) = pair(&mut rng, 400, 300);
            let (a, b) = (
                hasher.of_features(a, &params).unwrap(),
                hasher.of_features(b, &params).unwrap(),
            );
            equal += a.keys.iter().zip(&b.keys).filter(|(x, y)| x == y).count();
        }
        let mean = trials as f64 * resemblance;
        let sd = (trials as f64 * resemblance * (1.0 - resemblance)).sqrt();
        assert!(
            (equal as f64 - mean).abs() < 4.0 * sd,
            "{equal} equal keys against {mean} ± {sd:.1}"
        );
    }

    #[test]
    fn a_short_document_has_no_sketch_and_a_sparse_one_is_densified() {
        let params = MinHashParams::default();
        let mut hasher = MinHasher::new();
        let mut rng = SplitMix64::new(3);
        assert_eq!(hasher.of_features(random_set(&mut rng, 63), &params), None);
        // Repeats count once: 63 distinct shingles said many times are still too few.
        let repeated = random_set(&mut rng, 63);
        let many = repeated.iter().cycle().take(1_000).copied();
        assert_eq!(hasher.of_features(many, &params), None);
        // 16 features fill at most 16 of 64 bins; the others borrow, so a copy agrees on all.
        let sparse = MinHashParams {
            min_features: 16,
            ..params
        };
        let features = random_set(&mut rng, 16);
        let a = hasher.of_features(features.clone(), &sparse).unwrap();
        let b = hasher.of_features(features, &sparse).unwrap();
        assert_eq!(agreements(&a.packed, &b.packed, params.bits), params.bins);
        // A feature whose rotation is the largest value still fills its bin.
        let extreme = vec![u64::MAX; 16];
        let one = MinHashParams {
            min_features: 1,
            ..params
        };
        let sketch = hasher.of_features(extreme, &one).unwrap();
        assert_eq!(sketch.features, 1);
    }

    #[test]
    fn boilerplate_is_what_many_documents_share() {
        let mut rng = SplitMix64::new(5);
        let footer = random_set(&mut rng, 10);
        let docs: Vec<Vec<u64>> = (0..200)
            .map(|i| {
                let mut doc = random_set(&mut rng, 50);
                if i % 4 == 0 {
                    doc.extend(&footer);
                }
                doc
            })
            .collect();
        let boilerplate = Boilerplate::learn(docs.iter().map(|d| d.iter().copied()));
        assert_eq!(boilerplate.len(), footer.len());
        assert!(footer.iter().all(|&f| boilerplate.contains(f)));
        assert!(!boilerplate.contains(docs[1][0]));
    }

    #[test]
    fn text_sketches_of_a_copy_agree_and_boilerplate_is_dropped() {
        let params = MinHashParams::default();
        let text: String = (0..200)
            .map(|i| format!("word{} ", i % 97 + i / 7))
            .collect();
        let mut hasher = MinHasher::new();
        let a = hasher.sketch(&text, &params, &Boilerplate::none()).unwrap();
        let b = hasher.sketch(&text, &params, &Boilerplate::none()).unwrap();
        assert_eq!(a, b);
        let mut tokens = Tokens::new();
        tokens.tokenize(&text);
        let all = Boilerplate::from_features(shingles(tokens.hashes(), 5).collect());
        assert_eq!(hasher.sketch(&text, &params, &all), None);
    }
}
