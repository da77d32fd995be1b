//! URL canonicalization per Google Safe Browsing v4, producing a [`CanonicalUrl`] that stores one string plus component offsets.
//!
//! Source of the rules and of the example table tested below:
//! <https://developers.google.com/safe-browsing/v4/urls-hashing#canonicalization>
//! (the same rules and examples appear on Web Risk's "URLs and hashing" page).
//!
//! Order of operations (each step cites the page where it comes from it):
//! 1. remove tab, CR and LF (page: "remove tab (0x09), CR (0x0d), and LF
//!    (0x0a) characters from the URL"), then trim surrounding whitespace
//!    (page example `"  http://www.google.com/  "`);
//! 2. drop the fragment (page: "if the URL ends in a fragment, remove the
//!    fragment"), from the first `#` on;
//! 3. percent-unescape the whole URL fully (page: "repeatedly percent-unescape
//!    the URL until it has no more percent-escapes"), *then* split it into
//!    scheme, authority, path and query — so `http%3A%2F%2Fevil.com/login` is
//!    `http://evil.com/login`. A `#` that unescaping produces is not a
//!    fragment any more (step 2 is done): it stays in its component and is
//!    re-escaped, as the page's example `http://host%23.com/…` →
//!    `http://host%23.com/…` needs;
//! 4. only web URLs: `scheme://…`, `http:…`/`https:…`, or a bare `host[:port]/…`
//!    (page: "The scheme and host … are required … Safe Browsing … checks web
//!    URLs"). `javascript:`, `data:`, `mailto:`, `gopher:x` are refused (after a
//!    `:`, a port is digits), and so is a bare `/path` (a single leading `/`
//!    starts a path: there is no host);
//! 5. canonicalize the host (see the `host` module), drop user info and port;
//! 6. path: resolve `/./` and `/../`, collapse runs of slashes (page: "resolve
//!    the sequences /../ and /./ … replace runs of consecutive slashes with a
//!    single slash"); the query is left alone (page: "Do not perform these
//!    path canonicalizations on the query parameters");
//! 7. percent-escape bytes <= 0x20, >= 0x7F, `#` and `%` with uppercase hex
//!    (page: "percent-escape all characters that are <= ASCII 32, >= 127,
//!    `#`, or `%`").
//!
//! Because delimiters are split after unescaping, a canonical URL parses back
//! to itself (`canonicalize(canonicalize(x)) == canonicalize(x)`): every `?`,
//! `/`, `@` or `:` it contains is a real delimiter.

use std::borrow::Cow;
use std::fmt;

use crate::error::{snippet, Error};
use crate::escape::{push_escaped, unescape_fully};
use crate::fast::{canonicalize_fast, FastParts};
use crate::host::canonicalize_host;
use crate::scheme::{is_scheme_byte, split_scheme};
use crate::written::WrittenHost;

/// Schemes whose URLs always have an authority, so that `http:evil.com` and `http:/evil.com` are
/// `http://evil.com/` (WHATWG URL standard, "special schemes": the slashes are optional).
const WEB_SCHEMES: [&[u8]; 2] = [b"http", b"https"];

/// A canonical URL: one ASCII string such as `http://evil.com/a/b?x=1`, plus
/// the offsets of its components.
///
/// Invariants (established by [`canonicalize`]): the string is ASCII; it is
/// `scheme "://" host path ["?" query]`; the host is non-empty and contains
/// no `/`, `?`, `#`, `@`, or `:` (except inside a bracketed IPv6 literal);
/// the path starts with `/`, contains no `?` and no empty, `.` or `..`
/// segment (a trailing `/` is kept).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CanonicalUrl {
    serialized: String,
    /// End of the scheme (index of `:` in `://`).
    scheme_end: usize,
    /// Start of the host (after `://`).
    host_start: usize,
    /// End of the host, which is the start of the path.
    host_end: usize,
    /// End of the path: index of `?` if there is a query, else the length.
    path_end: usize,
    /// Whether the host is an IPv4 address or a bracketed IPv6 literal.
    is_ip: bool,
}

/// Result of parsing, with the extra facts blocklist entries need.
pub(crate) struct Parsed {
    pub(crate) url: CanonicalUrl,
    /// Whether the input had anything after the host (a path or a query):
    /// `evil.com` has none, `evil.com/` and `evil.com?x` do.
    pub(crate) explicit_path: bool,
    /// Whether the authority had user info (`user@host`).
    pub(crate) userinfo: bool,
    /// Whether the input named its scheme (`http://…`, `https:…`): with one, user info is
    /// part of a URL (dropped); without, `user@host` is an address.
    pub(crate) named_scheme: bool,
}

/// Canonicalizes a URL (or a bare `host/path`) following the Safe Browsing v4 rules.
///
/// The input is arbitrary bytes (not necessarily UTF-8, possibly megabytes
/// long); the work is linear in its length and the output is always ASCII.
/// A missing scheme becomes `http`; the port and user info are dropped; an
/// empty path becomes `/`.
///
/// # Errors
///
/// [`Error::EmptyInput`] if the input is only whitespace, [`Error::EmptyHost`]
/// if no host is left (e.g. `http://`, `http://.../x`, `/path`),
/// [`Error::NotAWebUrl`] for `javascript:`, `data:`, `mailto:` and other
/// non-web schemes, [`Error::InvalidPort`] for a port that is not digits.
///
/// # Examples
///
/// ```
/// let url = phishbloom_url::canonicalize(b"HTTP://user@Evil.COM.:8080/a/./b/../c?q#frag")?;
/// assert_eq!(url.as_str(), "http://evil.com/a/c?q");
/// assert_eq!(url.host(), "evil.com");
/// assert_eq!(url.path(), "/a/c");
/// assert_eq!(url.query(), Some("q"));
/// # Ok::<(), phishbloom_url::Error>(())
/// ```
pub fn canonicalize(input: &[u8]) -> Result<CanonicalUrl, Error> {
    parse(input).map(|p| p.url)
}

/// Where the authority of an (unescaped) URL starts, and its scheme if it names one:
/// `scheme://…`; `http:…` or `https:…` with any number of slashes; `host[:port]…` without a
/// scheme, or `//host…`. Refuses other `scheme:` forms (`javascript:alert()`,
/// `mailto:x@y.com`, `gopher:host` — after a `:`, a port is digits) and a bare `/path`.
fn split_web_scheme<'a>(s: &'a [u8], input: &[u8]) -> Result<(Option<&'a [u8]>, &'a [u8]), Error> {
    let (scheme, rest) = split_scheme(s);
    if scheme.is_some() {
        return Ok((scheme, rest));
    }
    let n = s.iter().take_while(|&&b| is_scheme_byte(b)).count();
    if n > 0 && s[0].is_ascii_alphabetic() && s.get(n) == Some(&b':') {
        let (token, after) = (&s[..n], &s[n + 1..]);
        if WEB_SCHEMES.iter().any(|w| token.eq_ignore_ascii_case(w)) {
            return Ok((Some(token), after));
        }
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        let is_port = matches!(after.get(digits), None | Some(b'/' | b'?'));
        if !is_port {
            return Err(Error::NotAWebUrl {
                input: snippet(input),
                scheme: String::from_utf8_lossy(token).to_ascii_lowercase(),
            });
        }
    }
    if s.first() == Some(&b'/') && s.get(1) != Some(&b'/') {
        return Err(Error::EmptyHost {
            input: snippet(input),
        });
    }
    Ok((None, s))
}

/// The host part of an authority: user info (up to the last `@`) and port (from the first `:`,
/// or after the `]` of a bracketed IPv6 literal) removed; and whether there was user info. A
/// port must be digits (RFC 3986 `port = *DIGIT`).
fn host_of_authority<'a>(authority: &'a [u8], input: &[u8]) -> Result<(&'a [u8], bool), Error> {
    let (after_user, userinfo) = match authority.iter().rposition(|&b| b == b'@') {
        Some(at) => (&authority[at + 1..], true),
        None => (authority, false),
    };
    let (host, port) = match after_user.first() {
        Some(b'[') => match after_user.iter().position(|&b| b == b']') {
            Some(close) => {
                let (host, rest) = after_user.split_at(close + 1);
                (host, rest.strip_prefix(b":").unwrap_or(rest))
            }
            None => (after_user, &b""[..]),
        },
        _ => match after_user.iter().position(|&b| b == b':') {
            Some(colon) => (&after_user[..colon], &after_user[colon + 1..]),
            None => (after_user, &b""[..]),
        },
    };
    if !port.iter().all(u8::is_ascii_digit) {
        return Err(Error::InvalidPort {
            input: snippet(input),
            port: String::from_utf8_lossy(port).into_owned(),
        });
    }
    Ok((host, userinfo))
}

/// Resolves `.` and `..` segments and collapses runs of slashes, keeping a
/// trailing slash. `path` is empty or starts with `/`; the result starts with
/// `/` and has no empty, `.` or `..` segment. Linear time.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(path.len() + 1);
    // Start offsets in `out` of the segments kept so far, for `..`.
    let mut starts: Vec<usize> = Vec::new();
    let mut trailing_slash = false;
    for segment in path.split(|&b| b == b'/') {
        match segment {
            b"" | b"." => trailing_slash = true,
            b".." => {
                if let Some(start) = starts.pop() {
                    out.truncate(start);
                }
                trailing_slash = true;
            }
            _ => {
                starts.push(out.len());
                out.push(b'/');
                out.extend_from_slice(segment);
                trailing_slash = false;
            }
        }
    }
    if out.is_empty() || trailing_slash {
        out.push(b'/');
    }
    out
}

/// Canonicalizes `input`, also reporting whether it had an explicit path: the fast path
/// ([`crate::fast`]) when it applies, else every rule.
pub(crate) fn parse(input: &[u8]) -> Result<Parsed, Error> {
    let mut serialized = String::new();
    match canonicalize_fast(input, &mut serialized, &mut Vec::new(), None) {
        Some(parts) => Ok(Parsed {
            url: CanonicalUrl::from_fast(serialized, parts),
            explicit_path: parts.explicit_path,
            userinfo: false,
            // Only read with user info, which the fast path never accepts.
            named_scheme: false,
        }),
        None => parse_full(input, serialized),
    }
}

/// Canonicalizes many URLs one after another into one reused buffer: the same answers as
/// [`canonicalize`], without allocating for URLs on the fast path (printable ASCII, no
/// `.`/`..` segments or runs of slashes, a plain host; fragments and percent-escapes that
/// unescape to such a URL included). Keep one per thread.
///
/// # Examples
///
/// ```
/// use phishbloom_url::Canonicalizer;
///
/// let mut canonicalizer = Canonicalizer::new();
/// for line in [&b"HTTP://Evil.COM/login#top"[..], b"example.org/a/../b"] {
///     let url = canonicalizer.canonicalize(line)?;
///     assert_eq!(url, &phishbloom_url::canonicalize(line)?);
/// }
/// assert!(canonicalizer.canonicalize(b"javascript:alert(1)").is_err());
/// # Ok::<(), phishbloom_url::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Canonicalizer {
    /// The last URL canonicalized (an empty placeholder before the first); its string is the
    /// buffer.
    url: CanonicalUrl,
    /// Scratch space for unescaping URLs with percent-escapes.
    unescaped: Vec<u8>,
    /// The buffer the full rules write into, swapped with the URL's when they succeed.
    spare: String,
}

impl Default for Canonicalizer {
    fn default() -> Self {
        Canonicalizer::new()
    }
}

impl Canonicalizer {
    /// A canonicalizer with empty buffers (it allocates nothing until its first URL).
    pub fn new() -> Self {
        Canonicalizer {
            // A placeholder, never lent out: `canonicalize` replaces it before returning it.
            url: CanonicalUrl {
                serialized: String::new(),
                scheme_end: 0,
                host_start: 0,
                host_end: 0,
                path_end: 0,
                is_ip: false,
            },
            unescaped: Vec::new(),
            spare: String::new(),
        }
    }

    /// Canonicalizes `input` as [`canonicalize`] does; the URL lives until the next call.
    ///
    /// # Errors
    ///
    /// Those of [`canonicalize`].
    pub fn canonicalize(&mut self, input: &[u8]) -> Result<&CanonicalUrl, Error> {
        self.canonicalize_with(input, None)
    }

    /// [`Canonicalizer::canonicalize`] of the input whose host `written` read off it
    /// ([`crate::read_written_host`]): the same URL, without reading the scheme and host again.
    ///
    /// # Errors
    ///
    /// Those of [`canonicalize`] (none, in fact: an input with a written host is a valid URL).
    pub fn canonicalize_written(
        &mut self,
        written: &WrittenHost<'_>,
    ) -> Result<&CanonicalUrl, Error> {
        self.canonicalize_with(written.input(), Some(written))
    }

    fn canonicalize_with(
        &mut self,
        input: &[u8],
        written: Option<&WrittenHost<'_>>,
    ) -> Result<&CanonicalUrl, Error> {
        match canonicalize_fast(
            input,
            &mut self.url.serialized,
            &mut self.unescaped,
            written,
        ) {
            Some(parts) => self.url.set_fast_parts(parts),
            // On an error the previous URL stays: the fast path changes nothing when it fails,
            // and the full rules write into the spare buffer, swapped in on success only.
            None => {
                let spare = std::mem::take(&mut self.spare);
                let parsed = parse_full(input, spare)?;
                self.spare = std::mem::replace(&mut self.url, parsed.url).serialized;
            }
        }
        Ok(&self.url)
    }
}

/// Canonicalizes `input` by every rule, however unusual the input, into `serialized` (cleared
/// first: a caller can lend a buffer to reuse).
pub(crate) fn parse_full(input: &[u8], mut serialized: String) -> Result<Parsed, Error> {
    // Safe Browsing: remove tab (0x09), CR (0x0d) and LF (0x0a) anywhere (copied only if there
    // is one).
    let dropped = |b: &u8| matches!(b, b'\t' | b'\r' | b'\n');
    let cleaned: Cow<'_, [u8]> = if input.iter().any(dropped) {
        Cow::Owned(input.iter().copied().filter(|b| !dropped(b)).collect())
    } else {
        Cow::Borrowed(input)
    };
    let without_fragment = trim_and_cut_fragment(&cleaned)?;

    // Safe Browsing: unescape fully, then split (so an escaped `://` or `/` is a delimiter).
    let unescaped = unescape_fully(without_fragment);
    let (scheme, rest) = split_web_scheme(&unescaped, input)?;
    // `http:////evil.com` and `//evil.com`: extra slashes before the host
    // are skipped, as browsers do for http(s).
    let slashes = rest.iter().take_while(|&&b| b == b'/').count();
    let rest = &rest[slashes..];
    let authority_len = rest
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(rest.len());
    let (authority, after_authority) = rest.split_at(authority_len);
    let explicit_path = !after_authority.is_empty();

    let (raw_host, userinfo) = host_of_authority(authority, input)?;
    let host = canonicalize_host(raw_host).ok_or_else(|| Error::EmptyHost {
        input: snippet(input),
    })?;
    // RFC 3986 (and browsers): brackets belong only around an IPv6 address; anywhere else a
    // second parse would read them as one, so such a host is not a URL's.
    if !host.is_ip && host.text.bytes().any(|b| b == b'[' || b == b']') {
        return Err(Error::InvalidHost {
            input: snippet(input),
        });
    }

    let (raw_path, raw_query) = match after_authority.iter().position(|&b| b == b'?') {
        Some(q) => (&after_authority[..q], Some(&after_authority[q + 1..])),
        None => (after_authority, None),
    };
    let path = normalize_path(raw_path);

    serialized.clear();
    serialized.reserve(without_fragment.len() + 16);
    match scheme {
        // Scheme bytes are ASCII (checked by `split_scheme`), so each is one char.
        Some(s) => serialized.extend(s.iter().map(|&b| char::from(b.to_ascii_lowercase()))),
        // Safe Browsing example: "www.google.com" → "http://www.google.com/".
        None => serialized.push_str("http"),
    }
    let scheme_end = serialized.len();
    serialized.push_str("://");
    let host_start = serialized.len();
    serialized.push_str(&host.text);
    let host_end = serialized.len();
    push_escaped(&mut serialized, &path, b"");
    let path_end = serialized.len();
    if let Some(q) = raw_query {
        // Safe Browsing: the query is unescaped and re-escaped, not path-normalized.
        serialized.push('?');
        push_escaped(&mut serialized, q, b"");
    }

    Ok(Parsed {
        url: CanonicalUrl {
            serialized,
            scheme_end,
            host_start,
            host_end,
            path_end,
            is_ip: host.is_ip,
        },
        explicit_path,
        userinfo,
        named_scheme: scheme.is_some(),
    })
}

/// `cleaned` trimmed of spaces and control bytes and cut before its fragment; an input of
/// nothing but those is empty.
fn trim_and_cut_fragment(cleaned: &[u8]) -> Result<&[u8], Error> {
    // Safe Browsing example: "  http://www.google.com/  " → "http://www.google.com/".
    // Trims space and every other control byte (all <= 0x20).
    let start = cleaned.iter().position(|&b| b > 0x20);
    let end = cleaned.iter().rposition(|&b| b > 0x20);
    let trimmed = match (start, end) {
        (Some(s), Some(e)) => &cleaned[s..=e],
        _ => return Err(Error::EmptyInput),
    };
    // Safe Browsing: remove the fragment (example: `foo#bar#baz` → `foo`).
    Ok(match trimmed.iter().position(|&b| b == b'#') {
        Some(hash) => &trimmed[..hash],
        None => trimmed,
    })
}

impl CanonicalUrl {
    /// The URL the fast path wrote into `serialized`, whose parts end where `parts` says.
    pub(crate) fn from_fast(serialized: String, parts: FastParts) -> Self {
        let mut url = CanonicalUrl {
            serialized,
            scheme_end: 0,
            host_start: 0,
            host_end: 0,
            path_end: 0,
            is_ip: false,
        };
        url.set_fast_parts(parts);
        url
    }

    /// Takes the offsets of a URL the fast path just wrote into `self.serialized` (its hosts
    /// are never IP addresses).
    #[inline]
    fn set_fast_parts(&mut self, parts: FastParts) {
        self.scheme_end = parts.scheme_end;
        self.host_start = parts.host_start;
        self.host_end = parts.host_end;
        self.path_end = parts.path_end;
        self.is_ip = false;
    }

    /// The whole canonical URL, e.g. `http://evil.com/a/b?x=1`. Always ASCII.
    // Small and called per URL from other crates: worth inlining there.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.serialized
    }

    /// The lowercase scheme, e.g. `http` (the default when the input had none).
    #[inline]
    pub fn scheme(&self) -> &str {
        self.part(0, self.scheme_end)
    }

    /// The canonical host, e.g. `evil.com`, `195.127.0.11` or `[::1]`; never empty.
    #[inline]
    pub fn host(&self) -> &str {
        self.part(self.host_start, self.host_end)
    }

    /// The canonical path: starts with `/`, excludes the query.
    #[inline]
    pub fn path(&self) -> &str {
        self.part(self.host_end, self.path_end)
    }

    /// The query without its `?`; `Some("")` for a URL ending in a bare `?`.
    #[inline]
    pub fn query(&self) -> Option<&str> {
        // `path_end` is the index of `?` when there is a query (one ASCII byte).
        self.serialized.get(self.path_end + 1..)
    }

    /// The path followed by `?query` if there is one, e.g. `/a/b?x=1`.
    #[inline]
    pub fn path_and_query(&self) -> &str {
        self.part(self.host_end, self.serialized.len())
    }

    /// Where [`CanonicalUrl::host`] and [`CanonicalUrl::path_and_query`] lie in
    /// [`CanonicalUrl::as_str`], for [`CanonicalUrl::part`].
    #[inline(always)]
    pub(crate) fn host_span(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        (
            self.host_start..self.host_end,
            self.host_end..self.serialized.len(),
        )
    }

    /// Bytes `start..end` of the URL as text, without the two character-boundary checks of a
    /// `str` slice (the bounds are still checked): the parts are sliced per probe of a
    /// checked URL.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(crate) fn part(&self, start: usize, end: usize) -> &str {
        let bytes = &self.serialized.as_bytes()[start..end];
        debug_assert!(bytes.is_ascii());
        // SAFETY: the URL is ASCII (the type's invariant: every constructor writes only ASCII,
        // escaping any other byte, which the tests check on arbitrary input), and every range
        // of ASCII bytes is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Whether the host is an IP address (IPv4 dotted quad or bracketed IPv6).
    #[inline]
    pub fn is_ip_host(&self) -> bool {
        self.is_ip
    }

    /// The path with a trailing `/` removed unless the path is just `/`:
    /// the form blocklist keys use, so `/a/b/` and `/a/b` give the same key.
    #[inline]
    pub fn path_without_trailing_slash(&self) -> &str {
        let path = self.path();
        if path.len() > 1 {
            path.strip_suffix('/').unwrap_or(path)
        } else {
            path
        }
    }

    /// Number of dot-separated labels in the host (1 for an IP host).
    pub fn host_label_count(&self) -> usize {
        if self.is_ip {
            1
        } else {
            self.host().bytes().filter(|&b| b == b'.').count() + 1
        }
    }
}

impl fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.serialized)
    }
}

impl AsRef<str> for CanonicalUrl {
    fn as_ref(&self) -> &str {
        &self.serialized
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(input: &[u8]) -> String {
        match canonicalize(input) {
            Ok(u) => u.as_str().to_owned(),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Every canonicalization example from the Safe Browsing v4 page
    /// <https://developers.google.com/safe-browsing/v4/urls-hashing#canonicalization>,
    /// with the expected output exactly as the page gives it.
    #[test]
    fn safe_browsing_examples() {
        let table: &[(&[u8], &str)] = &[
            (b"http://host/%25%32%35", "http://host/%25"),
            (b"http://host/%25%32%35%25%32%35", "http://host/%25%25"),
            (b"http://host/%2525252525252525", "http://host/%25"),
            (b"http://host/asdf%25%32%35asd", "http://host/asdf%25asd"),
            (b"http://host/%%%25%32%35asd%%", "http://host/%25%25%25asd%25%25"),
            (b"http://www.google.com/", "http://www.google.com/"),
            (
                b"http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/",
                "http://168.188.99.26/.secure/www.ebay.com/",
            ),
            (
                b"http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/",
                "http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/",
            ),
            (
                b"http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B",
                "http://host%23.com/~a!b@c%23d$e%25f^00&11*22(33)44_55+",
            ),
            (b"http://3279880203/blah", "http://195.127.0.11/blah"),
            (b"http://www.google.com/blah/..", "http://www.google.com/"),
            (b"www.google.com/", "http://www.google.com/"),
            (b"www.google.com", "http://www.google.com/"),
            (b"http://www.evil.com/blah#frag", "http://www.evil.com/blah"),
            (b"http://www.GOOgle.com/", "http://www.google.com/"),
            (b"http://www.google.com.../", "http://www.google.com/"),
            (b"http://www.google.com/foo\tbar\rbaz\n2", "http://www.google.com/foobarbaz2"),
            (b"http://www.google.com/q?", "http://www.google.com/q?"),
            (b"http://www.google.com/q?r?", "http://www.google.com/q?r?"),
            (b"http://www.google.com/q?r?s", "http://www.google.com/q?r?s"),
            (b"http://evil.com/foo#bar#baz", "http://evil.com/foo"),
            (b"http://evil.com/foo;", "http://evil.com/foo;"),
            (b"http://evil.com/foo?bar;", "http://evil.com/foo?bar;"),
            (b"http://\x01\x80.com/", "http://%01%80.com/"),
            (b"http://notrailingslash.com", "http://notrailingslash.com/"),
            (b"http://www.gotaport.com:1234/", "http://www.gotaport.com/"),
            (b"  http://www.google.com/  ", "http://www.google.com/"),
            (b"http:// leadingspace.com/", "http://%20leadingspace.com/"),
            (b"http://%20leadingspace.com/", "http://%20leadingspace.com/"),
            (b"%20leadingspace.com/", "http://%20leadingspace.com/"),
            (b"https://www.securesite.com/", "https://www.securesite.com/"),
            (b"http://host.com/ab%23cd", "http://host.com/ab%23cd"),
            (
                b"http://host.com//twoslashes?more//slashes",
                "http://host.com/twoslashes?more//slashes",
            ),
        ];
        let mut failures = Vec::new();
        for (input, want) in table {
            let got = canon(input);
            if got != *want {
                failures.push(format!(
                    "{:?}: got {got:?}, want {want:?}",
                    String::from_utf8_lossy(input)
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert_eq!(table.len(), 33);
    }

    #[test]
    fn accessors_split_the_string() {
        let u = canonicalize(b"HTTPS://a:b@Www.Evil.com:443/x/y/?q=1").expect("valid URL");
        assert_eq!(u.as_str(), "https://www.evil.com/x/y/?q=1");
        assert_eq!(u.scheme(), "https");
        assert_eq!(u.host(), "www.evil.com");
        assert_eq!(u.path(), "/x/y/");
        assert_eq!(u.path_without_trailing_slash(), "/x/y");
        assert_eq!(u.query(), Some("q=1"));
        assert_eq!(u.path_and_query(), "/x/y/?q=1");
        assert!(!u.is_ip_host());
        assert_eq!(u.host_label_count(), 3);
        assert_eq!(u.to_string(), u.as_str());

        let u = canonicalize(b"evil.com").expect("valid URL");
        assert_eq!((u.path(), u.query()), ("/", None));
        assert_eq!(u.path_without_trailing_slash(), "/");
        let u = canonicalize(b"evil.com?").expect("valid URL");
        assert_eq!((u.path(), u.query()), ("/", Some("")));
        let u = canonicalize(b"http://1.2.3.4/").expect("valid URL");
        assert!(u.is_ip_host());
        assert_eq!(u.host_label_count(), 1);
    }

    #[test]
    fn path_normalization() {
        let cases: &[(&[u8], &str)] = &[
            (b"h.com/a/./b", "http://h.com/a/b"),
            (b"h.com/a/../b", "http://h.com/b"),
            (b"h.com/../../a", "http://h.com/a"),
            (b"h.com/a/.", "http://h.com/a/"),
            (b"h.com/a/b/..", "http://h.com/a/"),
            (b"h.com/a//b///", "http://h.com/a/b/"),
            (b"h.com/.../a", "http://h.com/.../a"),
            (b"h.com/a%2Fb", "http://h.com/a/b"),
            (b"h.com/%2e%2E/a", "http://h.com/a"),
            (b"h.com/a?b/../c//d", "http://h.com/a?b/../c//d"),
            // Unescaped before splitting (Safe Browsing's order): the `?` starts the query.
            (b"h.com/a%3Fb", "http://h.com/a?b"),
            (b"h.com/a?b%23c", "http://h.com/a?b%23c"),
        ];
        for (input, want) in cases {
            assert_eq!(canon(input), *want, "{:?}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn hostile_and_odd_inputs() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "error: empty URL"),
            (b" \t\r\n ", "error: empty URL"),
            (b"http://", "error: URL `http://` has no host"),
            (b"http://.../x", "error: URL `http://.../x` has no host"),
            (b"http://user@/x", "error: URL `http://user@/x` has no host"),
            (b"h.com/%", "http://h.com/%25"),
            (b"h.com/%zz", "http://h.com/%25zz"),
            (b"h.com/a%", "http://h.com/a%25"),
            (b"http://[::1]:8080/x", "http://[::1]/x"),
            (
                b"http://[FE80::1%25eth0]/",
                "error: URL `http://[FE80::1%25eth0]/` has a host with `[` or `]`",
            ),
            (
                b"%2e[]%5B",
                "error: URL `%2e[]%5B` has a host with `[` or `]`",
            ),
            (
                b"http://h.com:garbage:more/x",
                "error: URL `http://h.com:garbage:more/x` has the port `garbage:more`",
            ),
            (b"http://h.com:/x", "http://h.com/x"),
            (b"http:////h.com/x", "http://h.com/x"),
            (b"//h.com/x", "http://h.com/x"),
            (b"h.com?x", "http://h.com/?x"),
            (b"FTP://H.com/x", "ftp://h.com/x"),
            (b"h.com:8080", "http://h.com/"),
            // Escaped delimiters are delimiters: the URL is unescaped before it is split.
            (b"a%2Fb.com/", "http://a/b.com/"),
            (b"a%40b.com/", "http://b.com/"),
            (b"a%3A80/", "http://a/"),
            (b"http%3A%2F%2Fwackyurl.com:80/", "http://wackyurl.com/"),
            (b"http%3A%2F%2Fevil.com/login", "http://evil.com/login"),
            (b"http:evil.com/x", "http://evil.com/x"),
            (b"HTTPS:/evil.com/x", "https://evil.com/x"),
            (b"localhost:8080/x", "http://localhost/x"),
            // Not web URLs: a scheme without `//` whose rest is no port, and a bare path.
            (
                b"javascript:alert()",
                "error: `javascript:alert()` is a `javascript:` URI",
            ),
            (
                b"data:text/html;base64,PGI+",
                "error: `data:text/html;base64,PGI+` is a `data:` URI",
            ),
            (
                b"mailto:x@google.com",
                "error: `mailto:x@google.com` is a `mailto:` URI",
            ),
            (
                b"gopher:google.com",
                "error: `gopher:google.com` is a `gopher:` URI",
            ),
            (b"/blah", "error: URL `/blah` has no host"),
            (
                b"/blah?query#ref",
                "error: URL `/blah?query#ref` has no host",
            ),
            (b"http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
            ("http://BÜCHER.de/".as_bytes(), "http://xn--bcher-kva.de/"),
            (b"http://0x7f.1/", "http://127.0.0.1/"),
        ];
        for (input, want) in cases {
            let got = canon(input);
            assert!(
                got.starts_with(want),
                "{:?}: got {got:?}, want {want:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn megabyte_lines_are_linear() {
        let mut line = b"http://".to_vec();
        line.extend(std::iter::repeat_n(b'a', 1 << 20));
        line.extend(b".com/");
        line.extend(std::iter::repeat_n(b"%2525/./../a/".iter().copied(), 100_000).flatten());
        let url = canonicalize(&line).expect("long but valid");
        assert!(url.as_str().is_ascii());
        assert_eq!(url.host().len(), (1 << 20) + 4);

        let dots = vec![b'.'; 1 << 20];
        assert!(matches!(canonicalize(&dots), Err(Error::EmptyHost { .. })));
        if let Err(Error::EmptyHost { input }) = canonicalize(&dots) {
            assert!(input.len() < 300, "error message input is truncated");
        }
    }

    #[test]
    fn non_utf8_input_gives_ascii_output() {
        let url = canonicalize(b"\xff\xfe.com/\xc3\x28?\x80").expect("valid enough");
        assert_eq!(url.as_str(), "http://%FF%FE.com/%C3(?%80");
    }
}
