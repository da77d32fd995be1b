//! The keyword section's texts and keywords: generated e-mails and the Debian fortunes, written
//! to corpus files read one document at a time, and synthetic keywords none of whose tokens
//! occurs in the texts.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::tokens::Tokens;

use super::{io, TokenStats};
use crate::error::Result;

/// Documents with one planted keyword each, scanned to check that none is missed.
const PLANTED: usize = 1000;

/// The Debian word list (`wamerican`), used for the generated e-mails' English when present.
const WORDS: &str = "/usr/share/dict/words";

/// The Debian fortunes (`fortunes`, `fortunes-zh`), real documents read in place when present.
const FORTUNES: &str = "/usr/share/games/fortunes";

/// Which texts a scan job reads: a corpus file written once by the parent, read one document
/// at a time (so a scanning process holds one document, not the corpus).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TextSpec {
    /// `generated` or `fortunes`.
    pub corpus: String,
    /// The documents, separated by NUL bytes.
    pub path: PathBuf,
}

/// Writes `documents` to `path`, separated by NUL bytes.
pub(super) fn write_corpus(path: &Path, documents: &[String]) -> Result<()> {
    let name = path.display().to_string();
    let file = std::fs::File::create(path).map_err(|e| io(&name, "create", e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    for document in documents {
        out.write_all(document.as_bytes())
            .and_then(|()| out.write_all(&[0]))
            .map_err(|e| io(&name, "write", e))?;
    }
    out.flush().map_err(|e| io(&name, "write", e))
}

/// Calls `visit` with each document of a corpus file, one at a time; returns the documents and
/// bytes read.
pub(super) fn for_each_document(
    path: &Path,
    mut visit: impl FnMut(usize, &str) -> Result<()>,
) -> Result<(u64, u64)> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| io(&name, "open", e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let (mut buffer, mut documents, mut bytes) = (Vec::new(), 0u64, 0u64);
    loop {
        buffer.clear();
        let read = std::io::BufRead::read_until(&mut reader, 0, &mut buffer)
            .map_err(|e| io(&name, "read", e))?;
        if read == 0 {
            return Ok((documents, bytes));
        }
        if buffer.last() == Some(&0) {
            buffer.pop();
        }
        // `write_corpus` wrote whole `String`s: always UTF-8.
        let text = std::str::from_utf8(&buffer).unwrap_or_default();
        visit(documents as usize, text)?;
        documents += 1;
        bytes += text.len() as u64;
    }
}

/// The English vocabulary of the generated e-mails: the Debian word list's purely alphabetic
/// words when installed, else 50,000 pseudo-words.
fn english() -> Vec<String> {
    let words: Vec<String> = std::fs::read_to_string(WORDS)
        .map(|text| {
            text.lines()
                .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !words.is_empty() {
        return words;
    }
    let mut rng = SplitMix64::new(1);
    (0..50_000).map(|_| letters(&mut rng, 2, 9)).collect()
}

/// A string of `min..=max` random lowercase letters.
fn letters(rng: &mut SplitMix64, min: u64, max: u64) -> String {
    let len = min + rng.below(max - min + 1);
    (0..len)
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

/// Common Han characters of the generated Chinese paragraphs: U+4E00…U+4FFF.
fn clean_han(rng: &mut SplitMix64) -> char {
    // Every code point in U+4E00..U+5000 is an assigned CJK ideograph.
    char::from_u32(0x4E00 + rng.below(0x200) as u32).unwrap_or('一')
}

/// Generated e-mails of about `bytes` bytes in all: a Subject line and 40–1,150 words (median
/// about 380 tokens) in sentences and paragraphs; one in five has a Chinese paragraph.
pub fn generated_emails(bytes: u64, seed: u64) -> Vec<String> {
    let words = english();
    let mut rng = SplitMix64::new(seed);
    // Zipf-like choice: cubing a uniform number favours the list's front.
    let pick = |rng: &mut SplitMix64| {
        let u = rng.next_u64() as f64 / u64::MAX as f64;
        &words[((u * u * u) * words.len() as f64) as usize % words.len()]
    };
    let mut documents = Vec::new();
    let mut total = 0u64;
    while total < bytes {
        let count = 40 + rng.below(180) + rng.below(180) + rng.below(4) * rng.below(250);
        let mut text = String::from("Subject: ");
        for i in 0..2 + rng.below(6) {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(pick(&mut rng));
        }
        text.push_str("\n\n");
        let mut in_sentence = 0;
        for _ in 0..count {
            let word = pick(&mut rng);
            if in_sentence == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
            } else {
                text.push_str(word);
            }
            in_sentence += 1;
            match rng.below(12) {
                0 if in_sentence > 3 => {
                    text.push_str(if rng.below(6) == 0 { ".\n\n" } else { ". " });
                    in_sentence = 0;
                }
                1 => text.push_str(", "),
                _ => text.push(' '),
            }
        }
        if rng.below(5) == 0 {
            text.push_str("\n\n");
            for i in 0..20 + rng.below(100) {
                text.push(clean_han(&mut rng));
                if i % 13 == 12 {
                    text.push('，');
                }
            }
            text.push('。');
        }
        text.push_str("\n\n-- \nSent from my phone\n");
        total += text.len() as u64;
        documents.push(text);
    }
    documents
}

/// Every fortune of the installed Debian fortune files (English and, with `fortunes-zh`,
/// Chinese), one document each; empty when none is installed.
pub fn fortunes() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(FORTUNES) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_none() && p.is_file())
        .collect();
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        documents.extend(
            text.split("\n%\n")
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
        );
    }
    documents
}

/// The tokens of every text: no keyword may contain one.
pub(super) fn vocabulary(corpora: &[&[String]]) -> HashSet<String> {
    let mut tokens = Tokens::new();
    let mut vocabulary = HashSet::new();
    for corpus in corpora {
        for document in corpus.iter() {
            tokens.tokenize(document);
            for token in tokens.iter() {
                if !vocabulary.contains(token) {
                    vocabulary.insert(token.to_string());
                }
            }
        }
    }
    vocabulary
}

/// One synthetic keyword: 1–3 words of 4–10 letters (three in four) or 2–4 Han characters from
/// U+4E00…U+9FFF, none of whose tokens occur in `vocabulary`.
fn keyword(rng: &mut SplitMix64, vocabulary: &HashSet<String>) -> String {
    let mut keyword = String::new();
    if rng.below(4) == 0 {
        for _ in 0..2 + rng.below(3) {
            loop {
                // Every code point in U+4E00..U+A000 is an assigned CJK ideograph.
                let c = char::from_u32(0x4E00 + rng.below(0x5200) as u32).unwrap_or('丁');
                if !vocabulary.contains(c.encode_utf8(&mut [0; 4]) as &str) {
                    keyword.push(c);
                    break;
                }
            }
        }
    } else {
        for i in 0..1 + rng.below(3) {
            if i > 0 {
                keyword.push(' ');
            }
            loop {
                let word = letters(rng, 4, 10);
                if !vocabulary.contains(&word) {
                    keyword.push_str(&word);
                    break;
                }
            }
        }
    }
    keyword
}

/// Writes `count` keywords to `path`; returns the file's bytes and up to [`PLANTED`] of the
/// keywords, spread over the file, to plant in documents.
pub(super) fn write_keywords(
    path: &Path,
    count: u64,
    seed: u64,
    vocabulary: &HashSet<String>,
) -> Result<(u64, Vec<String>)> {
    let file =
        std::fs::File::create(path).map_err(|e| io(&path.display().to_string(), "create", e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut rng = SplitMix64::new(seed);
    let every = (count / PLANTED as u64).max(1);
    let mut planted = Vec::new();
    let mut bytes = 0;
    for i in 0..count {
        let keyword = keyword(&mut rng, vocabulary);
        bytes += keyword.len() as u64 + 1;
        out.write_all(keyword.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| io(&path.display().to_string(), "write", e))?;
        if i % every == 0 && planted.len() < PLANTED {
            planted.push(keyword);
        }
    }
    out.flush()
        .map_err(|e| io(&path.display().to_string(), "write", e))?;
    Ok((bytes, planted))
}

/// Token statistics of a corpus.
pub(super) fn token_stats(corpus: &str, documents: &[String]) -> TokenStats {
    let mut tokens = Tokens::new();
    let mut counts: Vec<u64> = documents
        .iter()
        .map(|d| {
            tokens.tokenize(d);
            tokens.len() as u64
        })
        .collect();
    counts.sort_unstable();
    let at = |q: f64| {
        counts
            .get(((counts.len() as f64 * q) as usize).min(counts.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    TokenStats {
        corpus: corpus.to_string(),
        documents: documents.len() as u64,
        bytes: documents.iter().map(|d| d.len() as u64).sum(),
        median: at(0.5),
        p90: at(0.9),
    }
}
