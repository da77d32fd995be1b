//! Percent-decoding and percent-encoding of URL components, following the Safe Browsing v4 canonicalization rules.
//!
//! Rules from <https://developers.google.com/safe-browsing/v4/urls-hashing#canonicalization>:
//! "repeatedly percent-unescape the URL until it has no more percent-escapes",
//! and finally "percent-escape all characters that are <= ASCII 32, >= 127,
//! `#`, or `%`. The escapes should use uppercase hex characters."

/// Uppercase hex digits; the Safe Browsing page asks for uppercase escapes.
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Value of an ASCII hex digit, either case.
fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-unescapes `input` until no `%XX` escape (two hex digits) is left.
///
/// The Safe Browsing rule is "repeatedly unescape until there are no more
/// escapes". Doing that in whole-string rounds is quadratic on hostile input
/// such as `%25252525…` (each round removes one layer only), so this does it
/// in one linear pass: every byte is pushed to the output, and whenever the
/// last three output bytes form an escape they are replaced by the byte they
/// encode, which may in turn complete an escape with the bytes before it.
/// Each replacement shortens the output by two, so there are at most
/// `input.len() / 2` replacements in total. Afterwards the output contains no
/// escape anywhere: an escape can only be completed by the byte just written,
/// which the loop checks.
pub(crate) fn unescape_fully(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    unescape_fully_into(input, &mut out);
    out
}

/// [`unescape_fully`] into `out` (cleared first), so that a caller can reuse one buffer.
///
/// A byte completes an escape only if the output's third-last byte (once it is written) is a
/// `%`. So where neither of the output's last two bytes is a `%`, the input up to its next `%`
/// is copied as it is, in one piece: only a `%` and the two bytes after it (or after an escape
/// it completes) take the byte-at-a-time step.
pub(crate) fn unescape_fully_into(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(input.len());
    let mut rest = input;
    while let Some((&b, after)) = rest.split_first() {
        if b != b'%' && !out[out.len().saturating_sub(2)..].contains(&b'%') {
            // No escape can complete in the run up to the next `%`: copied in one piece.
            let run = memchr::memchr(b'%', rest).unwrap_or(rest.len());
            out.extend_from_slice(&rest[..run]);
            rest = &rest[run..];
        } else {
            push_unescaping(out, b);
            rest = after;
        }
    }
}

/// Pushes `b` onto `out` and replaces every escape that completes (`%XX` at the end, again
/// and again: a decoded byte may complete an escape with the bytes before it).
#[inline]
fn push_unescaping(out: &mut Vec<u8>, b: u8) {
    out.push(b);
    while out.len() >= 3 {
        let n = out.len();
        if out[n - 3] != b'%' {
            break;
        }
        match (hex_value(out[n - 2]), hex_value(out[n - 1])) {
            (Some(hi), Some(lo)) => {
                out.truncate(n - 3);
                out.push(hi << 4 | lo);
            }
            _ => break,
        }
    }
}

/// Whether the Safe Browsing rules escape `b` in every component: bytes
/// <= 0x20 (space and controls), >= 0x7F, `#` and `%`.
fn always_escaped(b: u8) -> bool {
    b <= 0x20 || b >= 0x7F || b == b'#' || b == b'%'
}

/// Appends `bytes` to `out`, percent-escaping (uppercase hex) the bytes
/// Safe Browsing escapes plus those in `extra`.
///
/// The output is ASCII whatever the input: every byte >= 0x80 is escaped. Runs of bytes kept
/// as they are go over in one piece.
pub(crate) fn push_escaped(out: &mut String, bytes: &[u8], extra: &[u8]) {
    out.reserve(bytes.len());
    let mut rest = bytes;
    loop {
        let run = rest
            .iter()
            .position(|&b| always_escaped(b) || extra.contains(&b))
            .unwrap_or(rest.len());
        // Every byte of the run is 0x21..=0x7E (not escaped): ASCII, valid UTF-8.
        out.push_str(std::str::from_utf8(&rest[..run]).expect("a run of kept bytes is ASCII"));
        let Some((&b, after)) = rest[run..].split_first() else {
            return;
        };
        out.push('%');
        out.push(char::from(HEX_UPPER[usize::from(b >> 4)]));
        out.push(char::from(HEX_UPPER[usize::from(b & 0x0F)]));
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(bytes: &[u8], extra: &[u8]) -> String {
        let mut s = String::new();
        push_escaped(&mut s, bytes, extra);
        s
    }

    #[test]
    fn unescape_handles_nested_and_broken_escapes() {
        assert_eq!(unescape_fully(b"%25%32%35"), b"%");
        assert_eq!(unescape_fully(b"%2525252525252525"), b"%");
        assert_eq!(unescape_fully(b"%%%25%32%35asd%%"), b"%%%asd%%");
        assert_eq!(unescape_fully(b"%"), b"%");
        assert_eq!(unescape_fully(b"abc%"), b"abc%");
        assert_eq!(unescape_fully(b"%4"), b"%4");
        assert_eq!(unescape_fully(b"%zz"), b"%zz");
        assert_eq!(unescape_fully(b"%%341"), b"A");
        assert_eq!(unescape_fully(b"%6a%6A"), b"jj");
        assert_eq!(unescape_fully(b""), b"");
        assert_eq!(unescape_fully(b"%00"), b"\0");
        // A run copied whole must not start while a `%` is one of the last two bytes out.
        assert_eq!(unescape_fully(b"%22"), b"\"");
        assert_eq!(unescape_fully(b"a%2%341"), b"a$1");
    }

    #[test]
    fn unescape_is_linear_on_deep_nesting() {
        // 1 MB of `%25` layers: whole-string rounds would need ~500k passes.
        let mut s = b"%".to_vec();
        s.extend(std::iter::repeat_n(b"25".iter().copied(), 500_000).flatten());
        assert_eq!(unescape_fully(&s), b"%");
    }

    /// The rule as first written: every byte pushed, and escapes replaced as they complete.
    fn unescape_byte_at_a_time(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in input {
            push_unescaping(&mut out, b);
        }
        out
    }

    /// The escape rule as first written: a byte at a time.
    fn escape_byte_at_a_time(bytes: &[u8], extra: &[u8]) -> String {
        let mut out = String::new();
        for &b in bytes {
            if always_escaped(b) || extra.contains(&b) {
                out.push_str(&format!("%{b:02X}"));
            } else {
                out.push(char::from(b));
            }
        }
        out
    }

    proptest::proptest! {
        /// Copying runs between `%`s changes nothing: the same bytes as pushing one at a time,
        /// on inputs dense with `%`, hex digits and escapes that nest.
        #[test]
        fn unescaping_by_runs_is_unescaping_a_byte_at_a_time(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(b"%%%2255aAfFgz/".to_vec()),
                    proptest::num::u8::ANY,
                ],
                0..64,
            )
        ) {
            let mut out = vec![b'x'; 3];
            unescape_fully_into(&input, &mut out);
            proptest::prop_assert_eq!(out, unescape_byte_at_a_time(&input));
        }

        /// Escaping by runs writes what escaping a byte at a time writes.
        #[test]
        fn escaping_by_runs_is_escaping_a_byte_at_a_time(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            extra in proptest::collection::vec(proptest::num::u8::ANY, 0..3),
        ) {
            let mut out = String::from("kept");
            push_escaped(&mut out, &bytes, &extra);
            proptest::prop_assert_eq!(out, format!("kept{}", escape_byte_at_a_time(&bytes, &extra)));
        }
    }

    #[test]
    fn escape_uses_uppercase_and_extra_set() {
        assert_eq!(esc(b"a b#c%d\x7f\x80\xff", b""), "a%20b%23c%25d%7F%80%FF");
        assert_eq!(esc(b"a?b", b"?"), "a%3Fb");
        assert_eq!(esc(b"a?b", b""), "a?b");
        assert_eq!(esc(b"", b""), "");
    }
}
