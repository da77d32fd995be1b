//! Tokenization, the same for keywords and text: Unicode word boundaries (UAX #29, the
//! `unicode-segmentation` crate), each word normalized ([`crate::normalize`]); a segment without
//! a letter or digit (spaces, punctuation, symbols) is a separator, so any run of them between
//! two words separates them once. In scripts written without spaces (Han, Hiragana, Katakana,
//! Bopomofo, Thai, Lao, Khmer, Myanmar) every character — with the marks that combine with it,
//! one extended grapheme cluster — is its own token, so `免费赚钱` is four tokens and matches
//! inside `现在免费赚钱啦`.
//!
//! Each token keeps its byte range in the text it came from (the decoded text, before
//! normalization), its normalized bytes and its 128-bit hash: the inputs of
//! [`crate::phrase`]'s phrase hash.

use phishbloom_filter::KeyHash;
use unicode_script::{Script, UnicodeScript};
use unicode_segmentation::UnicodeSegmentation;

use unicode_normalization::{is_nfkc_quick, IsNormalized};

use crate::normalize::{fold_into, normalize_into};

/// Whether `c` belongs to a script written without spaces between words, whose every
/// character is a token.
pub fn is_spaceless(c: char) -> bool {
    let code = c as u32;
    // The CJK Unified Ideographs block (U+4E00–U+9FFF, all Han) and Hiragana and Katakana
    // (U+3040–U+30FF, but for two Common marks) answer without the script lookup; every other
    // such script lies above U+0E00 (Thai is the lowest), so ASCII and Latin skip it too.
    (0x4E00..=0x9FFF).contains(&code)
        || (code >= 0x0E00
            && matches!(
                c.script(),
                Script::Han
                    | Script::Hiragana
                    | Script::Katakana
                    | Script::Bopomofo
                    | Script::Thai
                    | Script::Lao
                    | Script::Khmer
                    | Script::Myanmar
            ))
}

/// The tokens of one text, reusable across texts (its buffers keep their capacity).
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    /// The normalized tokens, concatenated (valid UTF-8: lowercased ASCII or whole `str`s).
    text: Vec<u8>,
    /// Where each token ends in `text`.
    ends: Vec<usize>,
    /// Each token's byte range in the original text.
    spans: Vec<(usize, usize)>,
    /// Each token's hash.
    hashes: Vec<KeyHash>,
    /// Normalization buffer.
    scratch: String,
}

impl Tokens {
    /// No tokens yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the tokens with those of `text`.
    ///
    /// Text is taken a line at a time: UAX #29 always breaks after a line feed and no rule
    /// looks across one, so lines segment independently. An ASCII line goes through
    /// [`ascii_words`] (the UAX #29 rules restricted to ASCII, checked against
    /// `unicode-segmentation` by a property test); any other line through
    /// `unicode-segmentation` itself.
    pub fn tokenize(&mut self, text: &str) {
        self.text.clear();
        self.ends.clear();
        self.spans.clear();
        self.hashes.clear();
        self.push_text(text, 0);
    }

    /// Appends the tokens of `text`, a piece of a longer text that starts at byte `offset` of
    /// it, their spans shifted by `offset` (the tokens already held stay). A text cut into
    /// pieces where segmentation cannot look across ([`crate::pieces`]) gives the tokens of the
    /// whole text.
    ///
    /// A non-ASCII line is cut further, around its lone Han characters (`lone_han_at`): each is
    /// a token as it stands (the general path's answer for it, checked for every such
    /// character by a test), and the runs between them are tokenized like lines — an ASCII run
    /// by [`ascii_words`], any other by `unicode-segmentation`. That gives the tokens of the
    /// whole line: UAX #29 breaks before and after such a character, and no rule that looks
    /// across a break tells such a character from the start or end of the text (a property
    /// test compares with the whole-line path on random mixed text).
    pub fn push_text(&mut self, text: &str, offset: usize) {
        let mut line_start = offset;
        for line in text.split_inclusive('\n') {
            if line.is_ascii() {
                self.push_ascii(line, line_start);
            } else {
                let mut run = 0;
                let mut at = 0;
                while at < line.len() {
                    if lone_han_at(line, at) {
                        self.push_run(&line[run..at], line_start + run);
                        let (from, end) = (self.text.len(), at + HAN_BYTES);
                        self.text.extend_from_slice(&line.as_bytes()[at..end]);
                        self.finish_token(from, line_start + at, line_start + end);
                        at = end;
                        run = end;
                    } else {
                        at += 1;
                    }
                }
                self.push_run(&line[run..], line_start + run);
            }
            line_start += line.len();
        }
    }

    /// Appends the tokens of a run of a line (no lone Han character in it) that starts at byte
    /// `offset` of the text.
    fn push_run(&mut self, run: &str, offset: usize) {
        if run.is_ascii() {
            self.push_ascii(run, offset);
        } else {
            self.push_segmented(run, offset);
        }
    }

    /// Appends the tokens of ASCII text that starts at byte `offset` ([`ascii_words`]).
    fn push_ascii(&mut self, text: &str, offset: usize) {
        ascii_words(text.as_bytes(), |start, end| {
            let from = self.text.len();
            self.text.extend_from_slice(&text.as_bytes()[start..end]);
            self.text[from..].make_ascii_lowercase();
            self.finish_token(from, offset + start, offset + end);
        });
    }

    /// Appends the tokens of text that starts at byte `offset`, segmented by
    /// `unicode-segmentation` (the general path, right for any text).
    fn push_segmented(&mut self, text: &str, offset: usize) {
        for (start, segment) in text.split_word_bound_indices() {
            self.segment(offset + start, segment);
        }
    }

    /// A non-ASCII word-boundary segment: split around spaceless-script graphemes, each piece
    /// normalized and split into words again (normalization can change what is a word: `㍿`
    /// becomes the four Han characters `株式会社`). A piece that is already in NFKC (the quick
    /// check says so: most text, every common Han character) only needs folding and stays one
    /// token if it holds a letter or digit, which is what the general path gives it too.
    fn segment(&mut self, start: usize, segment: &str) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for_each_piece(segment, |offset, piece| {
            let span = (start + offset, start + offset + piece.len());
            if is_nfkc_quick(piece.chars()) == IsNormalized::Yes {
                if piece.chars().any(char::is_alphanumeric) {
                    let from = self.text.len();
                    scratch.clear();
                    fold_into(piece, &mut scratch);
                    self.text.extend_from_slice(scratch.as_bytes());
                    self.finish_token(from, span.0, span.1);
                }
                return;
            }
            scratch.clear();
            normalize_into(piece, &mut scratch);
            for word in scratch.unicode_words() {
                for_each_piece(word, |_, token| {
                    let from = self.text.len();
                    self.text.extend_from_slice(token.as_bytes());
                    self.finish_token(from, span.0, span.1);
                });
            }
        });
        self.scratch = scratch;
    }

    /// Records the token just appended to `text` at `from`.
    #[inline]
    fn finish_token(&mut self, from: usize, start: usize, end: usize) {
        self.hashes.push(KeyHash::of(&self.text[from..]));
        self.ends.push(self.text.len());
        self.spans.push((start, end));
    }

    /// Drops all but the last `keep` tokens (the tail of a window that continues into the next
    /// piece of a text).
    pub fn keep_last(&mut self, keep: usize) {
        let drop = self.len().saturating_sub(keep);
        if drop == 0 {
            return;
        }
        let cut = self.ends[drop - 1];
        self.text.drain(..cut);
        self.ends.drain(..drop);
        for end in &mut self.ends {
            *end -= cut;
        }
        self.spans.drain(..drop);
        self.hashes.drain(..drop);
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The hashes of the tokens, in order.
    pub fn hashes(&self) -> &[KeyHash] {
        &self.hashes
    }

    /// The normalized `index`-th token.
    pub fn token(&self, index: usize) -> &str {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        // Tokens are appended whole, as lowercased ASCII or as `str`s: always UTF-8.
        std::str::from_utf8(&self.text[start..self.ends[index]]).unwrap_or_default()
    }

    /// The byte range of the `index`-th token in the original text.
    pub fn span(&self, index: usize) -> (usize, usize) {
        self.spans[index]
    }

    /// Appends the normalized phrase of `len` tokens from `start` to `out`: the tokens joined
    /// by one space, as [`crate::phrase::normalize_phrase`] writes a keyword.
    pub fn phrase_into(&self, start: usize, len: usize, out: &mut String) {
        for index in start..start + len {
            if index > start {
                out.push(' ');
            }
            out.push_str(self.token(index));
        }
    }

    /// The normalized tokens, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.token(i))
    }
}

/// Bytes of a character of the CJK Unified Ideographs block (U+4E00–U+9FFF) in UTF-8.
const HAN_BYTES: usize = 3;

/// Whether `text` has at byte `at` a *lone Han character*: one of the CJK Unified Ideographs
/// block (U+4E00–U+9FFF, whose UTF-8 is three bytes led by `E4` to `E9`), followed by the end
/// of the text or by a character that UAX #29 never joins to what precedes it
/// ([`stands_apart`]). Such a character is one word-boundary segment, already in NFKC, folds
/// to itself and is alphanumeric, so the general path makes it exactly one token: itself.
#[inline]
fn lone_han_at(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    // A quick reject on the lead byte: most bytes of other text are not E4–E9.
    if !matches!(bytes[at], 0xE4..=0xE9) || !text.is_char_boundary(at) {
        return false;
    }
    let mut chars = text[at..].chars();
    chars.next().is_some_and(is_basic_han) && chars.next().is_none_or(stands_apart)
}

/// Whether `c` is in the CJK Unified Ideographs block, U+4E00–U+9FFF (every code point of it
/// is an assigned Han ideograph).
#[inline]
fn is_basic_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
}

/// Whether `c` is never joined to a preceding Han character by UAX #29 (it is not Extend,
/// Format or ZWJ, the classes rule WB4 attaches): ASCII, a basic Han character, the CJK
/// punctuation U+3000–U+3029 and the fullwidth forms U+FF01–U+FF5E — the characters that
/// follow Han in Chinese text. A test checks every one of them.
#[inline]
fn stands_apart(c: char) -> bool {
    c.is_ascii()
        || is_basic_han(c)
        || ('\u{3000}'..='\u{3029}').contains(&c)
        || ('\u{FF01}'..='\u{FF5E}').contains(&c)
}

/// Calls `visit(start, end)` for every UAX #29 word of an ASCII `line` that holds a letter or
/// digit. In ASCII the rules that join characters into a word are: letters, digits and `_`
/// join (WB5, WB8–WB10, WB13a/b); `:`, `.` or `'` between two letters (WB6/WB7); `,`, `;`,
/// `.` or `'` between two digits (WB11/WB12). Everything else breaks.
pub fn ascii_words(line: &[u8], mut visit: impl FnMut(usize, usize)) {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let n = line.len();
    let mut i = 0;
    while i < n {
        if !is_word(line[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut alphanumeric = false;
        loop {
            while i < n && is_word(line[i]) {
                alphanumeric |= line[i] != b'_';
                i += 1;
            }
            // `i > start`, so `line[i - 1]` is the word's last character.
            if i + 1 < n {
                let (before, mid, after) = (line[i - 1], line[i], line[i + 1]);
                let letters = before.is_ascii_alphabetic()
                    && after.is_ascii_alphabetic()
                    && matches!(mid, b':' | b'.' | b'\'');
                let digits = before.is_ascii_digit()
                    && after.is_ascii_digit()
                    && matches!(mid, b',' | b';' | b'.' | b'\'');
                if letters || digits {
                    i += 2;
                    alphanumeric = true;
                    continue;
                }
            }
            break;
        }
        if alphanumeric {
            visit(start, i);
        }
    }
}

/// Calls `visit(offset, piece)` for the pieces of `text`: each extended grapheme cluster that
/// starts with a spaceless-script character alone, and each maximal run of other clusters.
fn for_each_piece(text: &str, mut visit: impl FnMut(usize, &str)) {
    let mut chars = text.chars();
    // One character (every Han character between others is its own UAX #29 segment): one piece.
    if chars.next().is_some() && chars.next().is_none() || !text.chars().any(is_spaceless) {
        visit(0, text);
        return;
    }
    let mut run: Option<usize> = None;
    for (offset, grapheme) in text.grapheme_indices(true) {
        // A grapheme cluster is never empty.
        if grapheme.chars().next().is_some_and(is_spaceless) {
            if let Some(from) = run.take() {
                visit(from, &text[from..offset]);
            }
            visit(offset, grapheme);
        } else if run.is_none() {
            run = Some(offset);
        }
    }
    if let Some(from) = run {
        visit(from, &text[from..]);
    }
}

/// The normalized tokens of `text` (convenience for tests and tools; scanning reuses a
/// [`Tokens`]).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Tokens::new();
    tokens.tokenize(text);
    tokens.iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_on_unicode_boundaries_and_normalized() {
        assert_eq!(tokenize("Get FREE money!!"), ["get", "free", "money"]);
        assert_eq!(tokenize("win-money...now"), ["win", "money", "now"]);
        assert_eq!(tokenize("ｆｒｅｅ\r\n\tＣＡＳＨ"), ["free", "cash"]);
        assert_eq!(tokenize("freedom"), ["freedom"]);
        assert_eq!(tokenize("don't stop"), ["don't", "stop"]);
        assert_eq!(tokenize("  ,;  "), Vec::<String>::new());
    }

    #[test]
    fn spaceless_scripts_give_one_token_per_character() {
        assert_eq!(
            tokenize("现在免费赚钱啦"),
            ["现", "在", "免", "费", "赚", "钱", "啦"]
        );
        assert_eq!(tokenize("カタカナ"), ["カ", "タ", "カ", "ナ"]);
        assert_eq!(tokenize("ｶﾀｶﾅ"), ["カ", "タ", "カ", "ナ"]);
        assert_eq!(tokenize("abc中文def"), ["abc", "中", "文", "def"]);
        // Normalization can create words: ㍿ is 株式会社.
        assert_eq!(tokenize("㍿"), ["株", "式", "会", "社"]);
    }

    #[test]
    fn spans_point_into_the_original_text() {
        let text = "Hi ＦＲＥＥ 免费!";
        let mut tokens = Tokens::new();
        tokens.tokenize(text);
        let spans: Vec<&str> = (0..tokens.len())
            .map(|i| {
                let (s, e) = tokens.span(i);
                &text[s..e]
            })
            .collect();
        assert_eq!(spans, ["Hi", "ＦＲＥＥ", "免", "费"]);
        let mut phrase = String::new();
        tokens.phrase_into(1, 3, &mut phrase);
        assert_eq!(phrase, "free 免 费");
    }

    proptest::proptest! {
        #[test]
        fn ascii_fast_path_matches_unicode_segmentation(
            text in "[aZ09_.,;:' \t\r\n!-]{0,40}"
        ) {
            let mut fast = Vec::new();
            ascii_words(text.as_bytes(), |s, e| fast.push((s, &text[s..e])));
            let reference: Vec<(usize, &str)> = text.unicode_word_indices().collect();
            proptest::prop_assert_eq!(fast, reference);
        }
    }

    /// The tokens of `text` by the general path alone: each line whole through
    /// [`ascii_words`] or `unicode-segmentation` (what [`Tokens::push_text`] did before lone
    /// Han characters were cut out).
    fn general_path(text: &str) -> Tokens {
        let mut tokens = Tokens::new();
        let mut line_start = 0;
        for line in text.split_inclusive('\n') {
            if line.is_ascii() {
                tokens.push_ascii(line, line_start);
            } else {
                tokens.push_segmented(line, line_start);
            }
            line_start += line.len();
        }
        tokens
    }

    /// Tokens, spans and hashes, for comparing two tokenizations.
    fn parts(tokens: &Tokens) -> (Vec<&str>, &[(usize, usize)], &[KeyHash]) {
        (tokens.iter().collect(), &tokens.spans, tokens.hashes())
    }

    #[test]
    fn every_lone_han_character_is_the_token_the_general_path_makes() {
        let mut fast = Tokens::new();
        for c in ('\u{4E00}'..='\u{9FFF}').filter(|&c| is_basic_han(c)) {
            let text = c.to_string();
            assert!(lone_han_at(&text, 0));
            fast.tokenize(&text);
            let general = general_path(&text);
            assert_eq!(parts(&fast), parts(&general), "{c:?}");
            assert_eq!(fast.iter().collect::<Vec<_>>(), [text.as_str()]);
        }
    }

    #[test]
    fn han_characters_are_segments_of_their_own() {
        // UAX #29 breaks before a Han character whatever precedes it, and after it before any
        // character that `stands_apart`.
        // Planes 0–3 hold every assigned character but the tags and variation selectors of
        // plane 14 (Extend); planes 4–13 are unassigned and 15–16 private use.
        let code_points = (0..=0x3FFFFu32).chain(0xE0000..=0xE01EF);
        for c in code_points.filter_map(char::from_u32) {
            let before = format!("{c}\u{4E00}");
            assert!(
                before
                    .split_word_bound_indices()
                    .any(|(at, _)| at == c.len_utf8()),
                "{c:?} joins the Han character after it"
            );
            if stands_apart(c) {
                let after = format!("\u{9FFF}{c}");
                assert!(
                    after.split_word_bound_indices().any(|(at, _)| at == 3),
                    "{c:?} joins the Han character before it"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn lone_han_fast_path_matches_the_general_path(
            text in "[aZ09_.,:' \n!\u{4E00}\u{4E8C}\u{9FA5}\u{9FFF}\u{3400}\u{3002}\u{300C}\
                      \u{FF0C}\u{FF21}\u{FF5E}\u{FF9E}\u{0301}\u{FE00}\u{200D}\u{00AD}\
                      \u{30AB}\u{3099}\u{302A}\u{F900}\u{2F800}\u{1F600}\u{1F1E6}\u{00E9}\
                      \u{0130}\u{3231}\u{337F}]{0,40}"
        ) {
            let mut fast = Tokens::new();
            fast.tokenize(&text);
            let general = general_path(&text);
            proptest::prop_assert_eq!(parts(&fast), parts(&general));
        }
    }

    #[test]
    fn equal_tokens_hash_equal() {
        let mut tokens = Tokens::new();
        tokens.tokenize("Free free ｆｒｅｅ freedom");
        let h = tokens.hashes();
        assert_eq!(h[0], h[1]);
        assert_eq!(h[1], h[2]);
        assert_ne!(h[2], h[3]);
    }
}
