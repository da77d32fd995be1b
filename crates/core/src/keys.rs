//! Key normalization: the one place where a list line or a query becomes the bytes that are hashed.
//!
//! Builders and checkers must agree, so the scheme a blocklist was built with is recorded in its
//! file (see [`KeyScheme::code`]) and the checker applies the same one.

use phishbloom_filter::KeyHash;
use phishbloom_text::phrase::{normalize_phrase, normalized_phrase_hash};
use phishbloom_text::tokens::Tokens;
use phishbloom_url::Expression;

use crate::error::{Error, Result};

/// How raw lines become keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyScheme {
    /// The line's bytes exactly, without its line terminator (passwords, tokens, anything
    /// case- and space-sensitive).
    Exact,
    /// A URL or host, simply normalized (the interim rule until full canonicalization):
    /// surrounding whitespace trimmed; a leading `http://` or `https://` (any case) removed;
    /// the host — everything before the first `/`, `?` or `#` — lowercased; one trailing `/`
    /// removed. So `HTTP://Evil.COM/` and `evil.com` are the same key, while the path keeps its
    /// case (paths are case-sensitive on most servers).
    #[default]
    Url,
    /// Exact keys compared without case: the key's bytes after Unicode simple case folding
    /// (`Spammer@Evil.COM` and `spammer@evil.com` are one key). Bytes that are not UTF-8 are
    /// kept as they are.
    Folded,
    /// URL blocklist semantics: lines are canonicalized (Safe Browsing rules, `phishbloom-url`)
    /// and a URL is listed if any of its lookup expressions (host suffixes × path prefixes) is a
    /// list entry. Used through the URL engines ([`crate::engine`]), not
    /// [`KeyScheme::normalize_into`].
    Expressions,
    /// Keywords and phrases in any language, matched inside text (`phishbloom scan`): NFKC,
    /// simple case folding, UAX #29 tokens joined by one space ([`crate::keywords`]).
    Keywords,
    /// Whole documents, matched by the SimHash of their shingles within a Hamming distance
    /// (`phishbloom build --near`, [`crate::near`]).
    Near,
}

impl KeyScheme {
    /// The code stored in a blocklist file's metadata.
    pub fn code(self) -> u8 {
        match self {
            KeyScheme::Exact => 0,
            KeyScheme::Url => 1,
            KeyScheme::Expressions => 2,
            KeyScheme::Folded => 4,
            KeyScheme::Keywords => 3,
            KeyScheme::Near => 5,
        }
    }

    /// The scheme for a stored code, if it is one.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(KeyScheme::Exact),
            1 => Some(KeyScheme::Url),
            2 => Some(KeyScheme::Expressions),
            4 => Some(KeyScheme::Folded),
            3 => Some(KeyScheme::Keywords),
            5 => Some(KeyScheme::Near),
            _ => None,
        }
    }

    /// The name shown to users.
    pub fn name(self) -> &'static str {
        match self {
            KeyScheme::Exact => "exact",
            KeyScheme::Url => "url",
            KeyScheme::Expressions => "url-expressions",
            KeyScheme::Folded => "exact-folded",
            KeyScheme::Keywords => "keywords",
            KeyScheme::Near => "near-duplicates",
        }
    }

    /// Replaces `out` with the key for `raw` (a line without its `\n`). Returns `false` when the
    /// line holds no key (empty, or only whitespace in the URL scheme).
    pub fn normalize_into(self, raw: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        self.append_key(raw, out) > 0
    }

    /// Appends the key for `raw` to `out` (for callers packing many keys into one buffer) and
    /// returns its length, 0 when the line holds no key.
    pub fn append_key(self, raw: &[u8], out: &mut Vec<u8>) -> usize {
        let start = out.len();
        let raw = phishbloom_text::line::content(raw);
        match self {
            // A near-duplicate list's documents are named exactly (`remove` goes by name).
            KeyScheme::Exact | KeyScheme::Near => out.extend_from_slice(raw),
            KeyScheme::Folded => fold_case(raw, out),
            // Whole-key normalization of a URL; expression matching goes through the matcher.
            KeyScheme::Url | KeyScheme::Expressions => normalize_url(raw, out),
            KeyScheme::Keywords => append_keyword(raw, out),
        }
        out.len() - start
    }

    /// The hash a normalized key is stored under: xxh3-128 of its bytes, or for keywords the
    /// phrase hash of its tokens ([`keyword_hash`]).
    pub fn key_hash(self, key: &[u8]) -> phishbloom_filter::KeyHash {
        match self {
            KeyScheme::Keywords => keyword_hash(key),
            _ => phishbloom_filter::KeyHash::of(key),
        }
    }
}

/// Refuses two lists that do not turn items into keys alike — another key scheme, or sized for
/// other probes per item — with the parameter that differs: a delta between them or their
/// merge would mean nothing. Each side is `(scheme, probes per item)`.
pub(crate) fn check_same_keys(left: (KeyScheme, u32), right: (KeyScheme, u32)) -> Result<()> {
    if left.0 != right.0 {
        return Err(Error::Incompatible {
            parameter: "key scheme",
            left: left.0.name().into(),
            right: right.0.name().into(),
        });
    }
    if left.1 != right.1 {
        return Err(Error::Incompatible {
            parameter: "probes per item",
            left: left.1.to_string(),
            right: right.1.to_string(),
        });
    }
    Ok(())
}

/// The verification fingerprint of a key hash: 64 bits mixed from both halves, so that it is
/// independent of the block and bit choices (which use `h1` and `h2` separately). A false
/// confirmation needs a 64-bit collision with one of n entries: probability n/2^64 per probe.
pub fn fingerprint(hash: KeyHash) -> u64 {
    hash.h1 ^ hash.h2.rotate_left(32)
}

/// The hash of an expression or entry key `(host, path)`: the xxh3-128 of each part, combined.
pub fn expression_hash(expression: Expression<'_>) -> KeyHash {
    KeyHash::of(expression.host.as_bytes()).combine(KeyHash::of(expression.path.as_bytes()))
}

/// The key bytes of a keyword line (the [`KeyScheme::Keywords`] rule): its tokens joined by one
/// space; nothing for a line without a word, a phrase over the token limit or invalid UTF-8.
pub fn append_keyword(raw: &[u8], out: &mut Vec<u8>) {
    let Ok(text) = std::str::from_utf8(raw) else {
        return;
    };
    let mut phrase = String::new();
    if normalize_phrase(text, &mut Tokens::new(), &mut phrase).is_ok() {
        out.extend_from_slice(phrase.as_bytes());
    }
}

/// The phrase hash of a normalized keyword (tokens joined by one space).
pub fn keyword_hash(key: &[u8]) -> KeyHash {
    normalized_phrase_hash(&String::from_utf8_lossy(key))
}

/// Unicode simple case folding (`CaseFolding.txt`, statuses C and S: one character to one, so
/// `ß` stays `ß`) of the UTF-8 parts of `raw`; other bytes are copied. ASCII takes a fast path.
fn fold_case(raw: &[u8], out: &mut Vec<u8>) {
    if raw.is_ascii() {
        out.extend(raw.iter().map(u8::to_ascii_lowercase));
        return;
    }
    let folder = icu_casemap::CaseMapper::new();
    let mut utf8 = [0u8; 4];
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            out.extend_from_slice(folder.simple_fold(c).encode_utf8(&mut utf8).as_bytes());
        }
        out.extend_from_slice(chunk.invalid());
    }
}

/// The [`KeyScheme::Url`] rule.
fn normalize_url(raw: &[u8], out: &mut Vec<u8>) {
    let text = raw.trim_ascii();
    let text = strip_prefix_ignore_case(text, b"https://")
        .or_else(|| strip_prefix_ignore_case(text, b"http://"))
        .unwrap_or(text);
    let host_end = memchr::memchr3(b'/', b'?', b'#', text).unwrap_or(text.len());
    let host_start = out.len();
    out.extend_from_slice(text);
    out[host_start..host_start + host_end].make_ascii_lowercase();
    if text.ends_with(b"/") {
        out.pop();
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(raw: &str) -> String {
        let mut out = Vec::new();
        KeyScheme::Url.normalize_into(raw.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn url_scheme_folds_the_usual_spellings_together() {
        for raw in [
            "evil.com",
            "HTTP://Evil.COM/",
            "  https://EVIL.com\r",
            "http://evil.com/",
        ] {
            assert_eq!(url(raw), "evil.com", "{raw:?}");
        }
        assert_eq!(url("Evil.com/Login/"), "evil.com/Login");
        assert_eq!(url("evil.com?A=B"), "evil.com?A=B");
        // Other schemes are not URLs this rule knows: only the text before the first `/` is folded.
        assert_eq!(url("FTP://Evil.com"), "ftp://Evil.com");
        assert_eq!(url("   "), "");
    }

    #[test]
    fn exact_scheme_keeps_everything_but_the_terminator() {
        let mut out = Vec::new();
        assert!(KeyScheme::Exact.normalize_into(b" Passw0rd \r", &mut out));
        assert_eq!(out, b" Passw0rd ");
        assert!(!KeyScheme::Exact.normalize_into(b"", &mut out));
        assert!(KeyScheme::Exact.normalize_into(&[0xff, 0xfe], &mut out));
    }

    #[test]
    fn folded_keys_ignore_case_in_every_script() {
        let fold = |raw: &[u8]| {
            let mut out = Vec::new();
            KeyScheme::Folded.normalize_into(raw, &mut out);
            out
        };
        assert_eq!(fold(b"Spammer@Evil.COM"), b"spammer@evil.com");
        assert_eq!(fold("ÄRGER Σίσυφος".as_bytes()), "ärger σίσυφοσ".as_bytes());
        // Simple folding keeps one character for one: ß stays ß, not ss.
        assert_eq!(fold("Straße".as_bytes()), "straße".as_bytes());
        assert_eq!(fold(b"AB\xffC"), b"ab\xffc");
    }

    #[test]
    fn codes_round_trip() {
        for scheme in [
            KeyScheme::Exact,
            KeyScheme::Url,
            KeyScheme::Expressions,
            KeyScheme::Folded,
            KeyScheme::Keywords,
        ] {
            assert_eq!(KeyScheme::from_code(scheme.code()), Some(scheme));
        }
        assert_eq!(KeyScheme::from_code(99), None);
    }
}
