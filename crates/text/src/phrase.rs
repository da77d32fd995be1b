//! The phrase hash: one function for keywords at build time and for n-grams of text at scan
//! time, so that they agree by construction.
//!
//! A phrase of tokens `t₁ … tₙ` hashes to `((S ⊕ T₁) ⊕ T₂) ⊕ … ⊕ Tₙ`, where `Tᵢ` is the
//! 128-bit xxh3 of token `tᵢ`'s normalized bytes (computed once per token of the text),
//! `S` is the all-zero start, and `⊕` is [`KeyHash::combine`] (two 64×64→128-bit
//! multiply-folds per output word, wyhash's mixing; order-sensitive). Extending a phrase by one
//! token is one `combine`, so a scan that walks the lengths `1 … L` from each token position
//! gets every n-gram's hash in O(1) from the previous one, without rehashing any text. The
//! result is a full [`KeyHash`], probed like any key.

use phishbloom_filter::KeyHash;

use crate::error::{Error, Result};
use crate::tokens::Tokens;

/// The longest phrase, in tokens. Scans probe every recorded length at every token, so a list
/// with long phrases costs proportionally more per token; 32 tokens covers long Chinese
/// phrases (one token per character) with room to spare.
pub const MAX_PHRASE_TOKENS: usize = 32;

/// The hash of the empty phrase, where every phrase starts.
pub const START: KeyHash = KeyHash { h1: 0, h2: 0 };

/// The hash of `phrase` extended by a token whose hash is `token`.
#[inline]
pub fn extend(phrase: KeyHash, token: KeyHash) -> KeyHash {
    phrase.combine(token)
}

/// The hash of the phrase made of tokens with these hashes.
pub fn phrase_hash(tokens: &[KeyHash]) -> KeyHash {
    tokens
        .iter()
        .fold(START, |phrase, &token| extend(phrase, token))
}

/// The hash of a normalized phrase (tokens joined by one space, as [`normalize_phrase`] writes
/// them).
pub fn normalized_phrase_hash(phrase: &str) -> KeyHash {
    phrase.split(' ').fold(START, |hash, token| {
        extend(hash, KeyHash::of(token.as_bytes()))
    })
}

/// Appends the normalized form of keyword `raw` to `out` — its tokens joined by one space —
/// and returns the number of tokens (0 for a keyword without a word, such as `!!!`).
pub fn normalize_phrase(raw: &str, tokens: &mut Tokens, out: &mut String) -> Result<usize> {
    tokens.tokenize(raw);
    if tokens.len() > MAX_PHRASE_TOKENS {
        return Err(Error::PhraseTooLong {
            tokens: tokens.len(),
            limit: MAX_PHRASE_TOKENS,
        });
    }
    tokens.phrase_into(0, tokens.len(), out);
    Ok(tokens.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_text_hash_the_same_phrase_alike() {
        let mut tokens = Tokens::new();
        let mut keyword = String::new();
        assert_eq!(
            normalize_phrase("  Free   MONEY ", &mut tokens, &mut keyword).unwrap(),
            2
        );
        assert_eq!(keyword, "free money");
        tokens.tokenize("get free-money now");
        let from_text = phrase_hash(&tokens.hashes()[1..3]);
        assert_eq!(normalized_phrase_hash(&keyword), from_text);
        // Order and length matter.
        assert_ne!(
            phrase_hash(&tokens.hashes()[1..3]),
            phrase_hash(&[tokens.hashes()[2], tokens.hashes()[1]])
        );
        assert_ne!(
            phrase_hash(&tokens.hashes()[1..2]),
            phrase_hash(&tokens.hashes()[1..3])
        );
    }

    #[test]
    fn overlong_phrases_are_refused() {
        let long = "字".repeat(MAX_PHRASE_TOKENS + 1);
        let mut tokens = Tokens::new();
        let error = normalize_phrase(&long, &mut tokens, &mut String::new()).unwrap_err();
        assert!(error.to_string().contains("33 tokens"), "{error}");
    }
}
