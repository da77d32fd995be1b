//! The error type for canonicalization and blocklist-entry parsing, with messages that say what is wrong and how to fix it.

/// How many bytes of the offending input an error message quotes.
///
/// Inputs can be megabyte-long hostile lines; quoting all of it would make a
/// log line unreadable, 200 bytes is enough to recognise the line.
const SNIPPET_BYTES: usize = 200;

/// Everything that can go wrong when canonicalizing a URL or parsing a blocklist entry.
///
/// Each variant carries the (lossily decoded, truncated) input so a caller
/// reporting a bad blocklist line can show which line it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is empty once tab/CR/LF are removed and surrounding whitespace is trimmed.
    #[error(
        "empty URL: the input holds nothing but whitespace; \
         give a URL such as `http://example.com/path` or a bare host such as `example.com`"
    )]
    EmptyInput,

    /// Nothing is left of the host once the scheme, user info, port and dots are removed.
    #[error(
        "URL `{input}` has no host: nothing is left once the scheme, user info, port and \
         surrounding dots are removed; write it as `host/path` or `scheme://host/path`"
    )]
    EmptyHost {
        /// The input, lossily decoded and truncated to about 200 bytes.
        input: String,
    },

    /// The input names a scheme that is not a web URL's (`javascript:`, `data:`, `mailto:`, …).
    #[error(
        "`{input}` is a `{scheme}:` URI, not a web URL: only http(s) URLs and bare hosts such \
         as `example.com/path` can be checked against a blocklist"
    )]
    NotAWebUrl {
        /// The input, lossily decoded and truncated to about 200 bytes.
        input: String,
        /// The scheme, lowercased.
        scheme: String,
    },

    /// The host holds `[` or `]` but is not a bracketed IPv6 address.
    #[error(
        "URL `{input}` has a host with `[` or `]` that is not an IPv6 address such as `[::1]`; \
         brackets are allowed only around an IPv6 address"
    )]
    InvalidHost {
        /// The input, lossily decoded and truncated to about 200 bytes.
        input: String,
    },

    /// The port after the host is not a number.
    #[error("URL `{input}` has the port `{port}`, which is not a number; a port is digits")]
    InvalidPort {
        /// The input, lossily decoded and truncated to about 200 bytes.
        input: String,
        /// The text after the host's `:`.
        port: String,
    },

    /// A blocklist entry has user info (`user@host`): it is an address, not a URL entry.
    #[error(
        "blocklist entry `{input}` has user info (`user@host`), so it is not a URL or domain \
         entry; e-mail addresses and other whole keys belong in an exact-key list"
    )]
    EntryUserinfo {
        /// The entry line, lossily decoded and truncated to about 200 bytes.
        input: String,
    },

    /// A blocklist entry's host has more labels than lookups try as host suffixes.
    #[error(
        "blocklist entry `{input}` has a host of {labels} labels, more than the {max} supported: \
         lookups only try host suffixes of up to {max} labels, so URLs on subdomains of this \
         entry could never match it; shorten the entry to the part of the host that names the site"
    )]
    EntryHostTooDeep {
        /// The entry line, lossily decoded and truncated to about 200 bytes.
        input: String,
        /// Number of labels in the entry's canonical host.
        labels: usize,
        /// The supported maximum, [`crate::MAX_ENTRY_HOST_LABELS`].
        max: usize,
    },

    /// A blocklist URL entry's path has more segments than lookups try as path prefixes.
    #[error(
        "blocklist entry `{input}` has a path {depth} segments deep, more than the {max} \
         supported: lookups only try directory prefixes up to that depth, so URLs below this \
         entry could never match it; shorten the entry's path"
    )]
    EntryPathTooDeep {
        /// The entry line, lossily decoded and truncated to about 200 bytes.
        input: String,
        /// Number of segments in the entry's canonical path.
        depth: usize,
        /// The supported maximum, [`crate::MAX_ENTRY_PATH_DEPTH`].
        max: usize,
    },
}

/// Lossily decodes at most [`SNIPPET_BYTES`] bytes of `input` for an error message.
pub(crate) fn snippet(input: &[u8]) -> String {
    if input.len() <= SNIPPET_BYTES {
        return String::from_utf8_lossy(input).into_owned();
    }
    let mut s = String::from_utf8_lossy(&input[..SNIPPET_BYTES]).into_owned();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_truncates_long_input() {
        let long = vec![b'a'; 10_000];
        let s = snippet(&long);
        assert_eq!(s.chars().count(), SNIPPET_BYTES + 1);
        assert!(s.ends_with('…'));
        assert_eq!(snippet(b"short"), "short");
        // Invalid UTF-8 is replaced, never a panic.
        assert_eq!(snippet(b"\xff"), "\u{fffd}");
    }

    #[test]
    fn messages_say_how_to_fix() {
        let e = Error::EmptyHost {
            input: "http://".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("http://"), "{msg}");
        assert!(msg.contains("scheme://host/path"), "{msg}");
        assert!(Error::EmptyInput.to_string().contains("example.com"));
    }
}
