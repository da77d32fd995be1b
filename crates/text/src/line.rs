//! Lines as every reader of lists, streams, requests and message headers sees them: cut at `\n`,
//! with the `\r` of a CRLF ending dropped. One rule, in one place, so that a list written on
//! Windows answers as the same list written on Unix whichever front end reads it.

/// `line` (cut at `\n`, without it) without the `\r` that a CRLF ending leaves.
#[inline]
pub fn content(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::content;

    #[test]
    fn content_drops_one_carriage_return_at_the_end_only() {
        assert_eq!(content(b"evil.com\r"), b"evil.com");
        assert_eq!(content(b"evil.com"), b"evil.com");
        assert_eq!(content(b"a\rb"), b"a\rb");
        assert_eq!(content(b"x\r\r"), b"x\r");
        assert_eq!(content(b""), b"");
    }
}
