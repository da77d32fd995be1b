//! The texts of a run: the corpus split by page into known and unrelated documents, the known
//! ones copied once per edit, everything tokenized; and windows of a given number of tokens.

use std::collections::BTreeMap;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::KeyHash;
use phishbloom_text::tokens::Tokens;

use super::edits::EDITS;
use super::fingerprints::token_hashes;
use super::{NearSizes, SEED};
use crate::corpus::{self, Document};
use crate::error::Result;

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

/// Reads the handbook and makes the run's texts (errors when the corpus is missing).
pub fn texts(sizes: &NearSizes) -> Result<Texts> {
    texts_of(corpus::handbook()?, sizes)
}

/// The run's texts of a corpus's documents: known documents whose text another known one
/// already has are dropped (a copy of either would be right to match both).
pub fn texts_of(docs: Vec<Document>, sizes: &NearSizes) -> Result<Texts> {
    let vocabulary = vocabulary(&docs);
    let (mut known, unrelated, pages) = split_by_page(docs, sizes.max_documents, SEED);
    let mut seen = std::collections::HashSet::new();
    known.retain(|d| seen.insert(d.text()));
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
