//! Reading a URL's host as written, where no rule of canonicalization can change it: the host
//! a caller may look up before canonicalizing, and where it lies so that the fast path
//! ([`crate::fast`]) does not read it again.

use crate::plain::{ascii_text, host_stop, is_special, plain_name};
use crate::scan::find;
use crate::scheme::{split_http, split_scheme};

/// The canonical host of `input` read straight off it, when nothing canonicalization does can
/// change it — so that a matcher can rule a URL out by its host before canonicalizing the rest
/// (most URLs checked against a list are on no listed host). `None` means "canonicalize to know",
/// never "no host".
///
/// The host is the one [`crate::canonicalize`] gives (and the input is a valid URL) when:
/// - no byte up to the host's end is special (dropped, trimmed, escaped,
///   unescaped or a fragment) — the rules change nothing before the first special byte, and an
///   escape is only ever decoded from its `%` forward;
/// - the scheme, if any, is `scheme://`, and the host is plain as the fast path reads it
///   (no user info, port, brackets, stray dots or IPv4 spelling) and lowercase;
/// - it ends at `/` or `?` before the first special byte, or at the end of the input.
///
/// Whatever follows the host (a path with escapes, dot segments, a fragment) cannot move its
/// end, which is the first `/` or `?` after the scheme in the unescaped input either way.
pub fn written_host(input: &[u8]) -> Option<&str> {
    read_written_host(input).map(|written| written.host)
}

/// [`written_host`]'s host with where it starts in its input: what
/// [`crate::Canonicalizer::canonicalize_written`] takes, so that the host is not read twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrittenHost<'a> {
    pub(crate) input: &'a [u8],
    /// Where the host starts in `input` (after `scheme://`, if any).
    pub(crate) start: usize,
    pub(crate) host: &'a str,
}

impl<'a> WrittenHost<'a> {
    /// The canonical host, as [`written_host`] gives it.
    pub fn host(&self) -> &'a str {
        self.host
    }

    /// The input it was read from.
    pub fn input(&self) -> &'a [u8] {
        self.input
    }
}

/// [`written_host`], keeping where the host lies ([`WrittenHost`]).
pub fn read_written_host(input: &[u8]) -> Option<WrittenHost<'_>> {
    let (start, len) = written_host_span(input)?;
    let host = plain_host_text(&input[start..start + len])?;
    Some(WrittenHost { input, start, host })
}

/// Where [`written_host`]'s host lies in `input` (start, length), before [`crate::plain::plain_name`].
fn written_host_span(input: &[u8]) -> Option<(usize, usize)> {
    // Without a scheme the host starts the input: one scan finds its end. The scan stops at the
    // `:` of any `scheme://` (or before it: a scheme's bytes are letters, digits, `+`, `-` and
    // `.`, and the scan stops at upper case and stray dots), so an input that reaches `/`, `?`
    // or its end first has no scheme (a scheme's first non-scheme byte is its `:`) — the split
    // would leave it whole.
    if let Some((_, rest)) = split_http(input) {
        return Some((input.len() - rest.len(), host_scan(rest)?));
    }
    match host_scan(input) {
        Some(len) => Some((0, len)),
        // Another stop: after a scheme, if there is one, scan again.
        None => match split_scheme(input) {
            (Some(_), rest) => Some((input.len() - rest.len(), host_scan(rest)?)),
            (None, _) => None,
        },
    }
}

/// The length of the host at the start of `rest` if the first byte that ends it or is not a
/// plain lowercase host's is `/`, `?` or the end; `None` at any other stop.
#[inline(always)]
fn host_scan(rest: &[u8]) -> Option<usize> {
    let stop = find(rest, |b, next| {
        host_stop(b, next) | is_special(b) | (b.wrapping_sub(b'A') <= b'Z' - b'A')
    });
    match stop {
        None => Some(rest.len()),
        Some(at) if matches!(rest[at], b'/' | b'?') => Some(at),
        Some(_) => None,
    }
}

/// `host` as text if the full rules keep it as written ([`crate::plain::plain_name`]).
#[inline(always)]
fn plain_host_text(host: &[u8]) -> Option<&str> {
    if !plain_name(host) {
        return None;
    }
    ascii_text(host)
}
