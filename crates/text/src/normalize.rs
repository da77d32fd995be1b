//! Normalization, the same for keywords and text: Unicode NFKC (compatibility forms such as
//! `ｆｒｅｅ` or `ﬁ` become `free`, `fi`), then simple case folding (Unicode's `CaseFolding.txt`
//! status C and S, one character to one character), with an ASCII fast path that gives the same
//! bytes (NFKC leaves ASCII alone; ASCII folds by lowercasing).
//!
//! Runs of whitespace and punctuation are not normalized here: they are never part of a token
//! ([`crate::tokens`]), so any run of them between two words is one separator.

use icu_casemap::CaseMapper;
use unicode_normalization::UnicodeNormalization;

/// Appends the normalized form of `text` to `out`: NFKC, then simple case folding.
pub fn normalize_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        out.extend(text.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        return;
    }
    let folder = CaseMapper::new();
    out.extend(text.nfkc().map(|c| folder.simple_fold(c)));
}

/// Appends `text` with simple case folding only, for text already in NFKC.
pub fn fold_into(text: &str, out: &mut String) {
    let folder = CaseMapper::new();
    out.extend(text.chars().map(|c| folder.simple_fold(c)));
}

/// The normalized form of `text` (see [`normalize_into`]).
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(text, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatibility_forms_and_case_fold_together() {
        assert_eq!(normalize("ｆｒｅｅ"), "free");
        assert_eq!(normalize("ＦＲＥＥ"), "free");
        assert_eq!(normalize("FrEe"), "free");
        assert_eq!(normalize("ﬁnance"), "finance");
        assert_eq!(normalize("ΣΊΣΥΦΟΣ"), normalize("σίσυφοσ"));
        // Simple folding maps one character to one: ß stays ß (full folding would give ss).
        assert_eq!(normalize("Straße"), "straße");
        // Composition: e + combining acute is é.
        assert_eq!(normalize("e\u{301}"), "é");
        assert_eq!(normalize("ｶﾞ"), "ガ");
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_general_path() {
        let ascii: String = (0u8..128).map(char::from).collect();
        let folder = CaseMapper::new();
        let general: String = ascii.nfkc().map(|c| folder.simple_fold(c)).collect();
        assert_eq!(normalize(&ascii), general);
    }
}
