//! A text read in pieces, for scanning a document of any size in bounded memory: bytes come in
//! as they are read, and go out as decoded pieces (invalid UTF-8 becomes U+FFFD, as
//! `String::from_utf8_lossy` decodes the whole text) cut only where neither decoding nor
//! tokenization ([`crate::tokens`]) looks across the cut, so the pieces decode and tokenize to
//! exactly what the whole text does.
//!
//! A cut is made, preferring the last one in the bytes held:
//! - after a line feed (UAX #29 never looks across one; a line feed also ends any invalid UTF-8
//!   sequence, so lossy decoding gives the same U+FFFDs on both sides);
//! - between an ASCII space and an ASCII letter or digit (no word-boundary rule joins a space to
//!   what follows, and none looks back past it);
//! - between two CJK Unified Ideographs (U+4E00–U+9FFF; each is its own word segment and its
//!   own grapheme cluster), so text without spaces or line feeds still has cuts.
//!
//! A run of more than [`MAX_PIECE_BYTES`] without any of these is cut before the last byte that
//! starts a character (lossy decoding is still exact): the one place where a piece's tokens can
//! differ from the whole text's (a word longer than that limit is split in two).

/// The longest piece: bytes held without a cut beyond this are cut at a character boundary.
pub const MAX_PIECE_BYTES: usize = 8 << 20;

/// Bytes in, decoded pieces out (module docs); reusable across texts.
#[derive(Clone, Debug, Default)]
pub struct Pieces {
    /// Bytes received and not yet given out as a piece.
    bytes: Vec<u8>,
    /// The last piece, decoded.
    piece: String,
    /// Where the bytes held start in the input (bytes given out before them).
    consumed: u64,
    /// The longest piece ([`MAX_PIECE_BYTES`] unless set for tests).
    max_piece: usize,
}

impl Pieces {
    /// Nothing received yet, pieces at most [`MAX_PIECE_BYTES`] long.
    pub fn new() -> Self {
        Self::with_max_piece(MAX_PIECE_BYTES)
    }

    /// Nothing received yet, pieces at most `max_piece` bytes long (at least 4, so a
    /// character always fits).
    pub fn with_max_piece(max_piece: usize) -> Self {
        Pieces {
            max_piece: max_piece.max(4),
            ..Pieces::default()
        }
    }

    /// Forgets everything held, for the next text.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.piece.clear();
        self.consumed = 0;
    }

    /// Appends bytes read from the input.
    pub fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.consumed + self.bytes.len() as u64
    }

    /// The next decoded piece, if the bytes held have a cut (or `at_end`, the input ended: then
    /// everything held), else `None` until more bytes come.
    pub fn next_piece(&mut self, at_end: bool) -> Option<&str> {
        if self.bytes.is_empty() {
            return None;
        }
        let cut = if at_end {
            self.bytes.len()
        } else {
            match last_cut(&self.bytes) {
                Some(cut) => cut,
                None if self.bytes.len() >= self.max_piece => char_cut(&self.bytes),
                None => return None,
            }
        };
        self.piece.clear();
        self.piece
            .push_str(&String::from_utf8_lossy(&self.bytes[..cut]));
        self.bytes.drain(..cut);
        self.consumed += cut as u64;
        Some(&self.piece)
    }
}

/// Whether the three bytes at `at` are one CJK Unified Ideograph (U+4E00–U+9FFF: E4 B8 80 …
/// E9 BF BF).
fn is_ideograph(bytes: &[u8], at: usize) -> bool {
    match bytes.get(at..at + 3) {
        Some(&[lead, second, third]) => {
            let continuation = |b: u8| (0x80..=0xBF).contains(&b);
            ((lead == 0xE4 && second >= 0xB8) || (0xE5..=0xE9).contains(&lead))
                && continuation(second)
                && continuation(third)
        }
        _ => false,
    }
}

/// The last cut in `bytes` (module docs), as the length of the part before it; never 0.
pub fn last_cut(bytes: &[u8]) -> Option<usize> {
    if let Some(at) = bytes.iter().rposition(|&b| b == b'\n') {
        return Some(at + 1);
    }
    (1..bytes.len()).rev().find(|&at| {
        (bytes[at - 1] == b' ' && bytes[at].is_ascii_alphanumeric())
            || (at >= 3 && is_ideograph(bytes, at) && is_ideograph(bytes, at - 3))
    })
}

/// The fallback cut of a run without a cut: before the last byte that is not a UTF-8
/// continuation byte (no invalid sequence continues across it), or all the bytes.
fn char_cut(bytes: &[u8]) -> usize {
    (1..bytes.len())
        .rev()
        .find(|&at| !(0x80..=0xBF).contains(&bytes[at]))
        .unwrap_or(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Tokens;
    use proptest::prelude::*;

    /// The pieces of `bytes` fed `chunk` bytes at a time.
    fn pieces(bytes: &[u8], chunk: usize, max_piece: usize) -> Vec<String> {
        let mut pieces = Pieces::with_max_piece(max_piece);
        let mut out = Vec::new();
        for part in bytes.chunks(chunk) {
            pieces.push(part);
            while let Some(piece) = pieces.next_piece(false) {
                out.push(piece.to_string());
            }
        }
        while let Some(piece) = pieces.next_piece(true) {
            out.push(piece.to_string());
        }
        assert_eq!(pieces.received(), bytes.len() as u64);
        out
    }

    #[test]
    fn cuts_fall_after_line_feeds_before_words_and_between_ideographs() {
        assert_eq!(last_cut(b"ab\ncd ef"), Some(3));
        assert_eq!(last_cut(b"ab cd, ef"), Some(7));
        assert_eq!(last_cut("免费赚钱".as_bytes()), Some(9));
        assert_eq!(last_cut(b"abc,,def"), None);
        assert_eq!(last_cut(b"abc  "), None);
        assert_eq!(
            pieces(b"free money\nnow", 4, 64),
            ["free ", "money\n", "now"]
        );
    }

    #[test]
    fn a_run_without_cuts_is_cut_at_a_character_boundary() {
        let text = "ééééé".repeat(4);
        let got = pieces(text.as_bytes(), 3, 8);
        assert_eq!(got.concat(), text);
        assert!(got.iter().all(|p| p.len() <= 10 && !p.contains('\u{FFFD}')));
    }

    proptest::proptest! {
        #[test]
        fn pieces_decode_and_tokenize_as_the_whole_text(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-zA-Z0-9 .,'\\n]{0,12}").unwrap()
                        .prop_map(String::into_bytes),
                    proptest::string::string_regex("[免费赚钱\u{3041}-\u{3046}éÅ\u{301} ]{0,6}").unwrap()
                        .prop_map(String::into_bytes),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..4),
                ],
                0..12,
            ),
            chunk in 1usize..40,
        ) {
            let bytes = parts.concat();
            let whole = String::from_utf8_lossy(&bytes).into_owned();
            // Large enough that only the exact cuts are used.
            let got = pieces(&bytes, chunk, 1 << 20);
            proptest::prop_assert_eq!(got.concat(), whole.clone());
            let mut reference = Tokens::new();
            reference.tokenize(&whole);
            let mut streamed = Tokens::new();
            let mut offset = 0;
            for piece in &got {
                streamed.push_text(piece, offset);
                offset += piece.len();
            }
            let tokens = |t: &Tokens| {
                (0..t.len()).map(|i| (t.token(i).to_string(), t.span(i))).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(tokens(&streamed), tokens(&reference));
            proptest::prop_assert_eq!(streamed.hashes(), reference.hashes());
        }
    }
}
