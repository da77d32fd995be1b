//! The scheme of a URL: which bytes a scheme may contain and where `scheme://` ends; shared by
//! the full rules ([`crate::canonical`]) and the fast path ([`crate::fast`]), so that both split
//! a URL the same way and neither imports the other for it.

/// Whether `b` may appear in a scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
pub(crate) fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.'
}

/// Splits `scheme://rest`; `None` for the scheme if the input has none.
pub(crate) fn split_scheme(s: &[u8]) -> (Option<&[u8]>, &[u8]) {
    let n = s.iter().take_while(|&&b| is_scheme_byte(b)).count();
    if n > 0 && s[0].is_ascii_alphabetic() && s[n..].starts_with(b"://") {
        (Some(&s[..n]), &s[n + 3..])
    } else {
        (None, s)
    }
}
