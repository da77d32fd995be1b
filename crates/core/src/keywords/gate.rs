//! The phrase gate of a keyword list: a small Bloom filter of the hashes of its keywords' first
//! two tokens, asked at each token position of a scanned text before the phrases longer than
//! one token are probed there.
//!
//! A scan probes, at every token position, every phrase length the list records (up to 12 on
//! a list of Chinese phrases, one token per character): each a probe of the list's large
//! filter. A phrase of two tokens or more can be a keyword only if its first two tokens are the
//! first two of some keyword. The gate holds, for every keyword of at least
//! [`GATE_TOKENS`] tokens, the phrase hash of those two ([`phishbloom_text::phrase`]; the scan
//! computes it on its way to the longer phrases anyway). So a position pays one probe of the
//! list's filter for the one-token phrase and one probe of a cache-resident filter; only where
//! two tokens begin some keyword are the longer phrases probed.
//!
//! **No false negatives.** The gate only skips probes: a Bloom filter never says "no" for a key
//! inserted into it, and the gate holds the two-token prefix of every keyword of the list
//! (keyword lists are written only by a build, which fills it; `add`, `merge` and deltas refuse
//! them). A list without the section scans every length, as before. A prefix that collides in
//! the gate only costs the probes the list had without it; every probe that is made goes
//! through the same filter and confirmation, so the false-positive rate can only go down.

use phishbloom_filter::{BlockedBloomFilter, HashStrategy, KeyHash};
use phishbloom_text::phrase::{extend, START};

use crate::error::Result;

/// The tokens of the prefix the gate holds. Two, not one: with one token per Han character,
/// nearly every character begins some keyword of a large Chinese list (10⁶ keywords cover most
/// of the 20,000 common characters), while pairs of characters that begin a keyword are a small
/// share of the pairs in a text; for Latin words a pair is rarer still.
pub const GATE_TOKENS: usize = 2;

/// The gate's false-positive rate per token position: 2 %. A position that begins no keyword
/// then probes its longer phrases with probability 0.02, for about 8.5 bits per distinct prefix
/// (a blocked filter at 2 %): 10⁶ distinct prefixes take about 1 MiB.
pub const PHRASE_GATE_FPP: f64 = 0.02;

/// The two-token prefixes of a list's keywords, in a cache-line-blocked Bloom filter keyed by
/// the phrase hash of the prefix.
#[derive(Clone, Debug)]
pub struct PhraseGate {
    filter: BlockedBloomFilter,
}

impl PhraseGate {
    /// An empty gate sized for `prefixes` distinct prefixes (at least 1).
    pub fn with_capacity(prefixes: u64) -> Result<Self> {
        let filter = BlockedBloomFilter::with_strategy(
            prefixes.max(1),
            PHRASE_GATE_FPP,
            HashStrategy::Xxh3,
        )?;
        Ok(PhraseGate { filter })
    }

    /// A gate read from a file (its filter section).
    pub fn from_filter(filter: BlockedBloomFilter) -> Self {
        PhraseGate { filter }
    }

    /// The gate key of a phrase whose tokens have these hashes: the phrase hash of its first
    /// [`GATE_TOKENS`], or `None` for a shorter phrase (which the gate does not hold).
    pub fn key(tokens: &[KeyHash]) -> Option<KeyHash> {
        let prefix = tokens.get(..GATE_TOKENS)?;
        Some(
            prefix
                .iter()
                .fold(START, |phrase, &token| extend(phrase, token)),
        )
    }

    /// The gate key of a normalized keyword (its UTF-8 tokens joined by one space), if it has
    /// at least [`GATE_TOKENS`] tokens.
    pub fn key_of_normalized(keyword: &[u8]) -> Option<KeyHash> {
        let mut hashes = [START; GATE_TOKENS];
        let mut tokens = keyword.split(|&b| b == b' ');
        for slot in &mut hashes {
            *slot = KeyHash::of(tokens.next()?);
        }
        Self::key(&hashes)
    }

    /// Adds a key ([`PhraseGate::key`]).
    pub fn insert(&mut self, key: KeyHash) {
        self.filter.insert_hash(key);
    }

    /// Whether phrases that start with the prefix whose phrase hash is `prefix` may be keywords
    /// (`false` is certain).
    #[inline]
    pub fn pass(&self, prefix: KeyHash) -> bool {
        self.filter.contains_hash(prefix)
    }

    /// The filter, as a file stores it.
    pub fn filter(&self) -> &BlockedBloomFilter {
        &self.filter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_text::phrase::normalize_phrase;
    use phishbloom_text::tokens::Tokens;

    #[test]
    fn text_and_keyword_give_the_same_key_and_the_gate_passes_it() {
        let mut gate = PhraseGate::with_capacity(10).unwrap();
        let mut tokens = Tokens::new();
        for keyword in ["免费赚钱", "Free MONEY now", "claim your prize"] {
            let mut normalized = String::new();
            normalize_phrase(keyword, &mut tokens, &mut normalized).unwrap();
            let key = PhraseGate::key_of_normalized(normalized.as_bytes()).unwrap();
            gate.insert(key);
            // The scan's key: the phrase hash of the text's first two tokens.
            tokens.tokenize(&format!("x {keyword} y"));
            assert_eq!(PhraseGate::key(&tokens.hashes()[1..]), Some(key));
            assert!(gate.pass(key));
        }
        assert_eq!(PhraseGate::key_of_normalized(b"viagra"), None);
        assert_eq!(PhraseGate::key(&[KeyHash::of(b"viagra")]), None);
        tokens.tokenize("money free");
        assert!(!gate.pass(PhraseGate::key(tokens.hashes()).unwrap()));
    }
}
