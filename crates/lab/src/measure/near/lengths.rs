//! The short-text study: windows of a given number of tokens under the chosen configuration,
//! and the `min_tokens` below which a list keeps the exact hash instead.

use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::tokens::Tokens;

use super::fingerprints::token_hashes;
use super::{checked, distance_stats, edits, token_window, vocabulary};
use super::{Config, DistanceStats, Texts, K, LENGTHS, PLANNED_FALSE, PLANNED_LIST, SEED};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
