//! The bytes the full canonicalization rules keep as written, told without running them: the
//! special bytes that make them do more than copy, the bytes that end or complicate a host, a
//! plain host name, and ASCII text. Shared by the fast path ([`crate::fast`]) and the reading of
//! a host as written ([`crate::written`]).

use crate::host::parse_ipv4;

/// Whether the full rules do more than copy byte `b`: drop it (tab, CR, LF), trim it (<= 0x20),
/// escape it (<= 0x20, >= 0x7F), unescape from it (`%`) or cut the fragment at it (`#`).
///
/// The predicates given to [`crate::scan::find`] combine their tests with `|` and `&`, not `||` and `&&`:
/// without branches the compiler can test a whole window at once.
#[inline(always)]
pub(crate) fn is_special(b: u8) -> bool {
    // 0x21..=0x7E maps to 0..=0x5D; every other byte wraps around above 0x5D.
    (b.wrapping_sub(0x21) > 0x7E - 0x21) | (b == b'%') | (b == b'#')
}

/// `s` as text if it is ASCII: [`std::str::from_utf8`] without its byte-by-byte walk to an
/// aligned address, which costs more than the rest of the check for a URL.
#[allow(unsafe_code)]
pub(crate) fn ascii_text(s: &[u8]) -> Option<&str> {
    if !s.is_ascii() {
        return None;
    }
    // SAFETY: every byte of `s` is ASCII (checked just above), and a string of ASCII bytes is
    // valid UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(s) })
}

/// Whether byte `b`, followed by `next`, ends a host (`/` or `?`) or makes the full rules do
/// more than lowercase it: user info, port or brackets (`@ : [ ]`), or a dot followed by a dot,
/// by the end of the host or by the end of the URL (`next` 0: a plain URL has no 0 byte).
#[inline(always)]
pub(crate) fn host_stop(b: u8, next: u8) -> bool {
    // `/` (0x2F) and `?` (0x3F) are the only bytes that are `?` with bit 0x10 set.
    let end = |c: u8| (c | 0x10) == b'?';
    let bad_dot = (b == b'.') & ((next == b'.') | end(next) | (next == 0));
    end(b) | (b == b'@') | (b == b':') | (b == b'[') | (b == b']') | bad_dot
}

/// Whether `host` — without stops ([`host_stop`]) or special bytes — is kept as written by the
/// full rules: not empty, no leading dot, and not an IPv4 address in any spelling.
#[inline]
pub(crate) fn plain_name(host: &[u8]) -> bool {
    // A leading dot; or an empty host (`http:///x`).
    if host.first().is_none_or(|&b| b == b'.') {
        return false;
    }
    // Every part of an IPv4 address starts with a digit (`0x…` and octal with `0`), so a host
    // whose first or last label does not is a name, and `parse_ipv4` need not be asked (most
    // hosts start with a letter). The check is on the host as written: the full rules
    // lowercase first, and `parse_ipv4` reads `0X` and hex digits of either case.
    if host[0].is_ascii_digit() {
        let last_label = host
            .iter()
            .rposition(|&b| b == b'.')
            .map_or(0, |dot| dot + 1);
        if host[last_label].is_ascii_digit() && parse_ipv4(host).is_some() {
            return false;
        }
    }
    true
}
