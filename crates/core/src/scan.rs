//! Scanning text for the keywords of a keyword list: the text is tokenized once
//! (`phishbloom_text`), and at every token position the n-grams of every phrase length the list
//! records are hashed — each in O(1) from the one a token shorter — and probed in batches, so
//! the cache misses of a filter larger than the cache overlap
//! ([`phishbloom_filter::Filter::contains_hash_batch`]). With a phrase gate
//! ([`crate::keywords::gate`]), the phrases of two tokens or more are probed only at positions
//! whose first two tokens begin some keyword. A hit is confirmed by the list's keyword index
//! when it has one (one block read per hit; non-members cost no read).
//!
//! A document is `spam` when it has at least `min_hits` hits (occurrences of keywords, counted
//! with repeats); its answer lists the matched keywords (normalized) with their byte ranges in
//! the decoded text.

use phishbloom_filter::KeyHash;
use phishbloom_text::phrase::{extend, START};
use phishbloom_text::tokens::Tokens;

use crate::error::{Error, Result};
use crate::keywords::gate::{PhraseGate, GATE_TOKENS};
use crate::keywords::KeywordEngine;
use crate::list::{Blocklist, Engine};
use crate::near::NearMatch;
use crate::printer::Output;

/// Probes hashed before one batched query: enough to keep many cache misses in flight, few
/// enough that the hashes and their origins stay in L1/L2 (1,024 × 16 bytes = 16 KiB).
pub const PROBE_BATCH: usize = 1024;

/// The most matches one answer lists (hits are counted in full): a pathological document with
/// millions of hits gets a bounded answer.
pub const MAX_REPORTED_MATCHES: usize = 1000;

/// How to scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// Hits a document needs to be `spam` (at least 1).
    pub min_hits: u64,
    /// Confirm every filter hit with the keyword index, when the list has one.
    pub confirm: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            min_hits: 1,
            confirm: true,
        }
    }
}

/// One keyword found in a document.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Match {
    /// The keyword, normalized (tokens joined by one space).
    pub keyword: String,
    /// The text it matched, as the decoded document has it (`text[start..end]`).
    pub text: String,
    /// Byte offset of its first token in the decoded text.
    pub start: usize,
    /// Byte offset just past its last token.
    pub end: usize,
}

/// The answer for one document.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DocumentVerdict {
    /// Whether the document has at least `min_hits` hits.
    pub spam: bool,
    /// Keyword occurrences found (confirmed, when confirming).
    pub hits: u64,
    /// The first [`MAX_REPORTED_MATCHES`] of them, in text order.
    pub matches: Vec<Match>,
    /// Filter hits the index rejected (false positives caught by verification).
    pub unconfirmed: u64,
    /// Tokens in the document.
    pub tokens: u64,
    /// Probes made.
    pub probes: u64,
}

/// The most bytes of decoded text a streamed scan keeps behind its window's first token for the
/// text of matches that cross a piece boundary. Only a match whose tokens are more than this
/// far apart (megabytes of punctuation or spaces between two words of one keyword) reports an
/// empty `text`; its keyword, offsets and count are still exact.
pub const MAX_CARRY_BYTES: usize = 1 << 20;

/// Scans documents against one keyword list; reuses its buffers across documents.
///
/// A document is scanned whole ([`Scanner::scan`]) or streamed in pieces ([`Scanner::begin`],
/// [`Scanner::feed`] per piece, [`Scanner::finish`]), with the same answer: a streamed scan
/// keeps only the last `max_len − 1` tokens of its n-gram window (hashes, normalized tokens
/// and spans) and the decoded text from the first of them, so memory is bounded by the piece
/// size, not the document.
pub struct Scanner<'a> {
    engine: &'a KeywordEngine,
    /// The list's phrase gate, unless scanning without it.
    gate: Option<&'a PhraseGate>,
    options: ScanOptions,
    mask: u64,
    max_len: usize,
    tokens: Tokens,
    probes: Vec<KeyHash>,
    origins: Vec<(usize, usize)>,
    answers: Vec<bool>,
    /// The answer so far of a streamed document.
    streamed: DocumentVerdict,
    /// Decoded bytes fed so far to a streamed document.
    fed: usize,
    /// Decoded text of a streamed document, from byte `carry_start` to the end of what was fed.
    carry: String,
    /// Where `carry` starts in the decoded document.
    carry_start: usize,
}

impl<'a> Scanner<'a> {
    /// A scanner for `list`, which must be a keyword list.
    pub fn new(list: &'a Blocklist, options: ScanOptions) -> Result<Self> {
        let Engine::Keywords(engine) = list.engine() else {
            return Err(Error::WrongScheme {
                path: list.meta().name.clone().into(),
                problem: format!(
                    "this blocklist holds {} keys, not keywords: scan needs a list built from \
                     keywords",
                    list.meta().scheme.name()
                ),
            });
        };
        Ok(Scanner {
            engine,
            gate: engine.gate(),
            options: ScanOptions {
                min_hits: options.min_hits.max(1),
                confirm: options.confirm && engine.index().is_some(),
            },
            mask: engine.lengths().mask(),
            max_len: engine.lengths().max(),
            tokens: Tokens::new(),
            probes: Vec::with_capacity(PROBE_BATCH + 64),
            origins: Vec::with_capacity(PROBE_BATCH + 64),
            answers: Vec::with_capacity(PROBE_BATCH + 64),
            streamed: DocumentVerdict::default(),
            fed: 0,
            carry: String::new(),
            carry_start: 0,
        })
    }

    /// The scanner without the list's phrase gate: every recorded length probed at every
    /// position (the same answers, more probes; for comparisons and measurements).
    pub fn without_gate(mut self) -> Self {
        self.gate = None;
        self
    }

    /// Whether hits are confirmed with the keyword index.
    pub fn confirms(&self) -> bool {
        self.options.confirm
    }

    /// Scans one decoded text. Fails only when a hit's confirmation cannot be read (the
    /// index's file changed underneath, or a read error).
    pub fn scan(&mut self, text: &str) -> Result<DocumentVerdict> {
        self.tokens.tokenize(text);
        let mut verdict = DocumentVerdict {
            tokens: self.tokens.len() as u64,
            ..DocumentVerdict::default()
        };
        self.probe_starts(self.tokens.len(), text, 0, &mut verdict)?;
        self.flush(text, 0, &mut verdict)?;
        verdict.spam = verdict.hits >= self.options.min_hits;
        Ok(verdict)
    }

    /// Starts streaming a document (forgetting any unfinished one): [`Scanner::feed`] its
    /// decoded text in pieces, then [`Scanner::finish`].
    pub fn begin(&mut self) {
        self.tokens.tokenize("");
        self.probes.clear();
        self.origins.clear();
        self.streamed = DocumentVerdict::default();
        self.fed = 0;
        self.carry.clear();
        self.carry_start = 0;
    }

    /// Scans the next piece of a streamed document's decoded text. Pieces must be cut where
    /// tokenization cannot look across (`phishbloom_text::pieces`); match offsets are then
    /// those of the whole decoded text. Fails as [`Scanner::scan`] does.
    pub fn feed(&mut self, piece: &str) -> Result<()> {
        // The window holds only tokens whose starts are not probed yet.
        let held_before = self.tokens.len();
        self.tokens.push_text(piece, self.fed);
        self.fed += piece.len();
        self.carry.push_str(piece);
        let held = self.tokens.len();
        self.streamed.tokens += (held - held_before) as u64;
        // Starts whose longest n-gram is complete; the rest wait for the next piece.
        let ready = held.saturating_sub(self.max_len.max(1) - 1);
        let (carry, carry_start) = (std::mem::take(&mut self.carry), self.carry_start);
        let mut verdict = std::mem::take(&mut self.streamed);
        let result = self
            .probe_starts(ready, &carry, carry_start, &mut verdict)
            .and_then(|()| self.flush(&carry, carry_start, &mut verdict));
        self.streamed = verdict;
        self.carry = carry;
        result?;
        self.tokens.keep_last(held - ready);
        // Keep the text from the first token still in the window (at most MAX_CARRY_BYTES).
        let mut start = if self.tokens.is_empty() {
            self.fed
        } else {
            self.tokens.span(0).0
        };
        start = start
            .max(self.fed.saturating_sub(MAX_CARRY_BYTES))
            .max(self.carry_start);
        let mut cut = start - self.carry_start;
        while !self.carry.is_char_boundary(cut) {
            cut += 1;
        }
        self.carry.drain(..cut);
        self.carry_start += cut;
        Ok(())
    }

    /// Ends a streamed document: probes the n-grams left in the window and returns its answer.
    pub fn finish(&mut self) -> Result<DocumentVerdict> {
        let (carry, carry_start) = (std::mem::take(&mut self.carry), self.carry_start);
        let mut verdict = std::mem::take(&mut self.streamed);
        let held = self.tokens.len();
        self.probe_starts(held, &carry, carry_start, &mut verdict)?;
        self.flush(&carry, carry_start, &mut verdict)?;
        self.carry = carry;
        self.begin();
        verdict.spam = verdict.hits >= self.options.min_hits;
        Ok(verdict)
    }

    /// Probes the n-grams starting at the first `starts` tokens held (flushing full batches),
    /// each up to `max_len` tokens or the last token held; `text` is the decoded text from byte
    /// `text_start`, for the text of matches.
    fn probe_starts(
        &mut self,
        starts: usize,
        text: &str,
        text_start: usize,
        verdict: &mut DocumentVerdict,
    ) -> Result<()> {
        let count = self.tokens.len();
        for start in 0..starts {
            let mut phrase = START;
            let longest = self.max_len.min(count - start);
            let hashes = &self.tokens.hashes()[start..start + longest];
            for (index, &token) in hashes.iter().enumerate() {
                phrase = extend(phrase, token);
                // No keyword of two tokens or more starts here unless the gate holds the
                // phrase's first two.
                if index + 1 == GATE_TOKENS && self.gate.is_some_and(|gate| !gate.pass(phrase)) {
                    break;
                }
                if self.mask >> (index + 1) & 1 == 1 {
                    self.probes.push(phrase);
                    self.origins.push((start, index + 1));
                }
            }
            if self.probes.len() >= PROBE_BATCH {
                self.flush(text, text_start, verdict)?;
            }
        }
        Ok(())
    }

    /// Probes the pending n-grams and records their hits; `text` is the decoded text from
    /// byte `text_start`.
    fn flush(
        &mut self,
        text: &str,
        text_start: usize,
        verdict: &mut DocumentVerdict,
    ) -> Result<()> {
        verdict.probes += self.probes.len() as u64;
        self.answers.clear();
        self.engine
            .filter()
            .contains_hash_batch(&self.probes, &mut self.answers);
        let mut phrase = String::new();
        for ((&hit, &hash), &(start, len)) in
            self.answers.iter().zip(&self.probes).zip(&self.origins)
        {
            if !hit {
                continue;
            }
            let confirm = self.options.confirm.then(|| self.engine.index()).flatten();
            let reported = verdict.matches.len() < MAX_REPORTED_MATCHES;
            // The phrase is needed only to confirm or report the hit (a document with millions
            // of hits counts most of them without it).
            if confirm.is_some() || reported {
                phrase.clear();
                self.tokens.phrase_into(start, len, &mut phrase);
            }
            if let Some(index) = confirm {
                if !index.contains(&phrase, hash)? {
                    verdict.unconfirmed += 1;
                    continue;
                }
            }
            verdict.hits += 1;
            if reported {
                let (from, to) = (
                    self.tokens.span(start).0,
                    self.tokens.span(start + len - 1).1,
                );
                let slice = from
                    .checked_sub(text_start)
                    .and_then(|from| text.get(from..to - text_start));
                verdict.matches.push(Match {
                    keyword: phrase.clone(),
                    text: slice.unwrap_or_default().to_string(),
                    start: from,
                    end: to,
                });
            }
        }
        self.probes.clear();
        self.origins.clear();
        Ok(())
    }
}

/// A near-duplicate list's answer for one document, as JSON carries it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NearAnswer<'a> {
    /// `near` or `clean`.
    pub verdict: &'static str,
    /// The nearest known document's distance.
    pub distance: Option<u32>,
    /// The nearest known document's estimated resemblance (MinHash lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resemblance: Option<f64>,
    /// The nearest known document's name.
    #[serde(rename = "match")]
    pub matched: Option<&'a str>,
    /// Its categories.
    pub categories: &'a [String],
    /// Whether it matched by the exact hash of a short document.
    pub exact: bool,
    /// Every known document within the distance, nearest first (at most
    /// [`MAX_REPORTED_MATCHES`]).
    pub matches: &'a [NearMatch],
}

impl<'a> NearAnswer<'a> {
    /// The answer for the matches of a lookup (nearest first).
    pub fn of(matches: &'a [NearMatch]) -> Self {
        let nearest = matches.first();
        NearAnswer {
            verdict: if nearest.is_some() { "near" } else { "clean" },
            distance: nearest.map(|m| m.distance),
            resemblance: nearest.and_then(|m| m.resemblance),
            matched: nearest.map(|m| m.name.as_str()),
            categories: nearest.map_or(&[], |m| m.categories.as_slice()),
            exact: nearest.is_some_and(|m| m.exact),
            matches: &matches[..matches.len().min(MAX_REPORTED_MATCHES)],
        }
    }

    /// The TSV columns after the name: `near<TAB>MATCH<TAB>DISTANCE<TAB>CATEGORIES` or `clean`.
    fn tsv(&self) -> String {
        match (self.matched, self.distance) {
            (Some(matched), Some(distance)) => {
                format!("near\t{matched}\t{distance}\t{}", self.categories.join(","))
            }
            _ => "clean".into(),
        }
    }
}

/// Appends the answer line of a near-duplicate list for document `name`:
/// `NAME<TAB>near<TAB>MATCH<TAB>DISTANCE<TAB>CATEGORIES` or `NAME<TAB>clean` (TSV), or one JSON
/// object `{"name", "subject"?, "verdict", "distance", "match", "categories", "exact",
/// "matches"}`.
pub fn write_near_document(
    name: &str,
    subject: Option<&str>,
    matches: &[NearMatch],
    output: Output,
    out: &mut Vec<u8>,
) {
    let answer = NearAnswer::of(matches);
    match output {
        Output::Tsv => {
            out.extend_from_slice(format!("{name}\t{}\n", answer.tsv()).as_bytes());
        }
        Output::Json => {
            #[derive(serde::Serialize)]
            struct Line<'a> {
                name: &'a str,
                #[serde(skip_serializing_if = "Option::is_none")]
                subject: Option<&'a str>,
                #[serde(flatten)]
                answer: NearAnswer<'a>,
            }
            // Serializing strings and numbers into a Vec cannot fail.
            let _ = serde_json::to_writer(
                &mut *out,
                &Line {
                    name,
                    subject,
                    answer,
                },
            );
            out.push(b'\n');
        }
    }
}

/// Appends the answer line for document `name`: `NAME<TAB>spam|clean<TAB>HITS` then
/// `<TAB>KEYWORD@START-END` per match (TSV), or one JSON object with the document, its
/// Subject, the verdict, the hits and the matches. With `near` (the matches of a
/// near-duplicate list asked as well), TSV ends with `<TAB>near:MATCH:DISTANCE` or
/// `<TAB>near:-`, and JSON has a `near` object ([`NearAnswer`]).
pub fn write_document(
    name: &str,
    subject: Option<&str>,
    verdict: &DocumentVerdict,
    near: Option<&[NearMatch]>,
    output: Output,
    out: &mut Vec<u8>,
) {
    let near = near.map(NearAnswer::of);
    let label = if verdict.spam { "spam" } else { "clean" };
    match output {
        Output::Tsv => {
            out.extend_from_slice(format!("{name}\t{label}\t{}", verdict.hits).as_bytes());
            for m in &verdict.matches {
                out.extend_from_slice(format!("\t{}@{}-{}", m.keyword, m.start, m.end).as_bytes());
            }
            if let Some(near) = &near {
                let signal = match (near.matched, near.distance) {
                    (Some(matched), Some(distance)) => format!("\tnear:{matched}:{distance}"),
                    _ => "\tnear:-".into(),
                };
                out.extend_from_slice(signal.as_bytes());
            }
            out.push(b'\n');
        }
        Output::Json => {
            #[derive(serde::Serialize)]
            struct Line<'a> {
                document: &'a str,
                #[serde(skip_serializing_if = "Option::is_none")]
                subject: Option<&'a str>,
                verdict: &'a str,
                hits: u64,
                matches: &'a [Match],
                unconfirmed: u64,
                #[serde(skip_serializing_if = "Option::is_none")]
                near: Option<NearAnswer<'a>>,
            }
            let line = Line {
                document: name,
                subject,
                verdict: label,
                hits: verdict.hits,
                matches: &verdict.matches,
                unconfirmed: verdict.unconfirmed,
                near,
            };
            // Serializing strings and numbers into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, &line);
            out.push(b'\n');
        }
    }
}
