//! The scheme of a URL: which bytes a scheme may contain and where `scheme://` ends; shared by
//! the full rules ([`crate::canonical`]) and the fast path ([`crate::fast`]), so that both split
//! a URL the same way and neither imports the other for it.

use crate::scan::find;

/// Whether `b` may appear in a scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
///
/// Without branches, so that [`find`] tests a window at once: `b | 0x20` maps exactly the
/// uppercase letters onto the lowercase ones.
pub(crate) fn is_scheme_byte(b: u8) -> bool {
    let letter = (b | 0x20).wrapping_sub(b'a') < 26;
    let digit = b.wrapping_sub(b'0') < 10;
    letter | digit | (b == b'+') | (b == b'-') | (b == b'.')
}

/// Splits `http://rest` or `https://rest` (lowercase, the common case): [`split_scheme`]'s
/// answer for such inputs, found with a few compares.
#[inline(always)]
pub(crate) fn split_http(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let after = s.strip_prefix(b"http")?;
    let secure = usize::from(after.first() == Some(&b's'));
    let rest = after[secure..].strip_prefix(b"://")?;
    Some((&s[.."http".len() + secure], rest))
}

/// Splits `scheme://rest`; `None` for the scheme if the input has none.
pub(crate) fn split_scheme(s: &[u8]) -> (Option<&[u8]>, &[u8]) {
    // Most URLs start with `http://` or `https://`: no need to look for the end of the scheme
    // (the search below finds the same, as `:` is not a scheme byte).
    if let Some((scheme, rest)) = split_http(s) {
        return (Some(scheme), rest);
    }
    // A scheme ends at the first byte that is not a scheme byte, which must be the `:` of
    // `://`. `/` is not a scheme byte, so that `:` is the first `:` or `/` of the input, and
    // every byte before it is a scheme byte. Looking for `:` and `/` first (two tests a byte)
    // rather than for the first non-scheme byte (six) is the cheaper scan of a host without a
    // scheme, which has only scheme bytes up to its first `/`.
    match find(s, |b, _| (b == b':') | (b == b'/')) {
        Some(n)
            if n > 0
                && s[0].is_ascii_alphabetic()
                && s[n..].starts_with(b"://")
                && s[..n].iter().all(|&b| is_scheme_byte(b)) =>
        {
            (Some(&s[..n]), &s[n + 3..])
        }
        _ => (None, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_bytes() {
        for b in 0..=255u8 {
            let want = b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.';
            assert_eq!(is_scheme_byte(b), want, "{b}");
        }
    }

    #[test]
    fn schemes_are_split_at_their_slashes() {
        let split = |s: &str| {
            let (scheme, rest) = split_scheme(s.as_bytes());
            (
                scheme.map(|s| String::from_utf8_lossy(s).into_owned()),
                String::from_utf8_lossy(rest).into_owned(),
            )
        };
        let some = |scheme: &str, rest: &str| (Some(scheme.to_owned()), rest.to_owned());
        assert_eq!(split("http://a/b"), some("http", "a/b"));
        assert_eq!(split("https://a"), some("https", "a"));
        assert_eq!(split("http://"), some("http", ""));
        assert_eq!(split("HTTP://a"), some("HTTP", "a"));
        assert_eq!(split("httpx://a"), some("httpx", "a"));
        assert_eq!(split("https+x://a"), some("https+x", "a"));
        assert_eq!(split("ftp://a"), some("ftp", "a"));
        assert_eq!(
            split("a-long.scheme+name.0123456789://x"),
            some("a-long.scheme+name.0123456789", "x")
        );
        for plain in [
            "http:/a",
            "https:a",
            "http",
            "https",
            "http//a",
            "1http://a",
            "a.com/x://y",
        ] {
            assert_eq!(split(plain), (None, plain.to_owned()), "{plain}");
        }
    }

    proptest::proptest! {
        /// The split is the rule's: the scheme is everything before the first byte that is not
        /// a scheme byte, when that byte starts `://` and the scheme starts with a letter.
        #[test]
        fn the_split_is_the_first_non_scheme_byte_rule(
            head in "[hA1+.\\-]{0,6}",
            slashes in proptest::sample::select(vec!["", "://", ":/", ":", "/"]),
            tail in proptest::collection::vec(proptest::sample::select(b"hA1+.-:/?% @".to_vec()), 0..24)
        ) {
            let s = [head.as_bytes(), slashes.as_bytes(), &tail].concat();
            let n = s.iter().position(|&b| !is_scheme_byte(b)).unwrap_or(s.len());
            let want = if n > 0 && s[0].is_ascii_alphabetic() && s[n..].starts_with(b"://") {
                (Some(&s[..n]), &s[n + 3..])
            } else {
                (None, &s[..])
            };
            proptest::prop_assert_eq!(split_scheme(&s), want);
        }
    }
}
