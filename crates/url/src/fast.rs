//! The fast path of canonicalization: plain URLs in one scan and block copies, into a reused
//! buffer, with no allocation.
//!
//! Most URLs on a blocklist or in a proxy log are printable ASCII with a lowercase-able host and
//! a path without `.`/`..` segments. For them every rule of the full parser
//! ([`crate::canonical`]) is either a no-op or a copy: the canonical form is the scheme and host
//! lowercased, `http://` added when there is no scheme, `/` when there is no path, and runs of
//! slashes in the path written as one. This module
//! recognizes such URLs with a vectorizable scan for the bytes that need a rule — tab, CR, LF,
//! spaces and other bytes <= 0x20 or >= 0x7F (dropped, trimmed or escaped), `%` (unescaped) and
//! `#` (fragment) — plus a few checks of the host and path, and writes the canonical form.
//! Two common cases that the full rules change only a little are also handled:
//!
//! - a fragment: everything from the first `#` is dropped, if the bytes before it are plain;
//! - percent-escapes: the bytes before the fragment are unescaped (into a reused buffer) and,
//!   if the result is plain, it is the URL.
//!
//! Everything else (`None`) goes to the full rules, which stay the reference: the tests check
//! that wherever this path answers, it answers exactly as they do, on arbitrary bytes.

use crate::escape::unescape_fully_into;
use crate::plain::{ascii_text, host_stop, is_special, plain_name};
use crate::scan::find;
use crate::scheme::split_scheme;
use crate::written::WrittenHost;

/// Where the parts of a canonical URL written by [`canonicalize_fast`] end, as
/// [`crate::CanonicalUrl`] stores them, and whether the input had a path or query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FastParts {
    /// Index of the `:` of `://`.
    pub(crate) scheme_end: usize,
    /// Start of the host.
    pub(crate) host_start: usize,
    /// End of the host: start of the path.
    pub(crate) host_end: usize,
    /// End of the path: the `?` of the query, or the length.
    pub(crate) path_end: usize,
    /// Whether anything followed the host in the input (`evil.com/` or `evil.com?x`).
    pub(crate) explicit_path: bool,
}

/// Index of the first [`is_special`] byte of `s`.
#[inline]
fn first_special(s: &[u8]) -> Option<usize> {
    find(s, |b, _| is_special(b))
}

/// Writes the canonical form of `input` into `out` (replacing its contents) if `input` is on
/// the fast path; `None`, with `out` untouched, if the full rules must decide. `unescaped` is
/// scratch space for URLs with percent-escapes.
pub(crate) fn canonicalize_fast(
    input: &[u8],
    out: &mut String,
    unescaped: &mut Vec<u8>,
    written: Option<&WrittenHost<'_>>,
) -> Option<FastParts> {
    let plain = match first_special(input) {
        None => input,
        Some(at) => match input[at] {
            // The bytes before the fragment are plain, so nothing before it is dropped or
            // trimmed, and the full rules cut exactly here.
            b'#' => &input[..at],
            b'%' => {
                // Unescape up to the fragment, if the only special bytes before it are `%`.
                let rest = &input[at..];
                let end = at
                    + rest
                        .iter()
                        .position(|&b| b != b'%' && is_special(b))
                        .unwrap_or(rest.len());
                if end < input.len() && input[end] != b'#' {
                    return None;
                }
                unescape_fully_into(&input[..end], unescaped);
                // Fully unescaped: the full rules would find the same bytes after their own
                // unescaping, and split them as below if they are plain.
                if first_special(unescaped).is_some() {
                    return None;
                }
                unescaped.as_slice()
            }
            _ => return None,
        },
    };
    // The host read off the input is where it was: nothing before its end is special, so the
    // fragment cut and the unescaping (which starts at the first `%`) leave it in place.
    plain_into(plain, out, written.map(|w| (w.start, w.host.len())))
}

/// The fast path proper, for `s` without special bytes: checks everything first, then writes.
/// `written`: where the host starts in `s` and its length, when [`crate::read_written_host`] read it
/// (plain and lowercase, after `scheme://` or at the start) — then neither is looked for again.
fn plain_into(s: &[u8], out: &mut String, written: Option<(usize, usize)>) -> Option<FastParts> {
    let (scheme, rest, host) = match written {
        // `scheme://` ends where the host starts ("://" is 3 bytes); no scheme at 0.
        Some((start, len)) => (
            start.checked_sub(3).map(|end| &s[..end]),
            &s[start..],
            PlainHost { len, upper: false },
        ),
        None => {
            let (scheme, rest) = split_scheme(s);
            let host = plain_host(rest)?;
            (scheme, rest, host)
        }
    };
    // Offset of `rest` in `s`: after `scheme://`.
    let rest_start = s.len() - rest.len();
    let after = &rest[host.len..];
    let (path_len, collapse) = plain_path(after)?;
    // `s` is printable ASCII (no special byte), so this never fails; slicing it below is at
    // ASCII delimiters, always char boundaries.
    let text = ascii_text(s)?;
    out.clear();
    out.reserve(s.len() + "http:///".len());
    match scheme {
        Some(scheme) => {
            out.push_str(&text[..scheme.len() + "://".len()]);
            out[..scheme.len()].make_ascii_lowercase();
        }
        // Safe Browsing example: "www.google.com" → "http://www.google.com/".
        None => out.push_str("http://"),
    }
    let scheme_end = out.len() - "://".len();
    let host_start = out.len();
    let host_end = host_start + host.len;
    let host_text = &text[rest_start..];
    let path_end = if path_len == 0 {
        // No path: `/` between the host and the query, if any.
        out.push_str(&host_text[..host.len]);
        out.push('/');
        out.push_str(&host_text[host.len..]);
        host_end + 1
    } else if collapse {
        out.push_str(&host_text[..host.len]);
        push_collapsed(&host_text[host.len..host.len + path_len], out);
        let path_end = out.len();
        out.push_str(&host_text[host.len + path_len..]);
        path_end
    } else {
        out.push_str(host_text);
        host_end + path_len
    };
    if host.upper {
        out[host_start..host_end].make_ascii_lowercase();
    }
    Some(FastParts {
        scheme_end,
        host_start,
        host_end,
        path_end,
        explicit_path: !after.is_empty(),
    })
}

/// A host the full rules keep as it is, lowercased (see [`plain_host`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PlainHost {
    /// Its length: where `/`, `?` or the end of the URL is.
    len: usize,
    /// Whether it has uppercase letters to lowercase.
    upper: bool,
}

/// The host at the start of `rest` (the URL after `scheme://`), up to `/`, `?` or the end, if
/// the full rules keep it as it is, lowercased: not empty, no dot to trim or collapse (leading,
/// trailing, or two in a row), no user info, port or brackets, and not an IPv4 address in any
/// spelling. `rest` has no special byte.
#[inline]
fn plain_host(rest: &[u8]) -> Option<PlainHost> {
    let mut upper = false;
    // Scans for the stops, and for uppercase letters until the first one.
    let mut from = 0;
    let len = loop {
        let stop = if upper {
            find(&rest[from..], host_stop)
        } else {
            find(&rest[from..], |b, next| {
                host_stop(b, next) | (b.wrapping_sub(b'A') <= b'Z' - b'A')
            })
        };
        let Some(at) = stop.map(|at| from + at) else {
            break rest.len();
        };
        match rest[at] {
            b'/' | b'?' => break at,
            b'A'..=b'Z' => {
                upper = true;
                from = at;
            }
            _ => return None,
        }
    };
    plain_name(&rest[..len]).then_some(PlainHost { len, upper })
}

/// The length of the path at the start of `after` (the URL after the host: empty, or from `/`
/// or `?`), and whether it has runs of slashes to collapse; `None` if the full rules do more
/// (see [`normal_path`]).
#[inline]
fn plain_path(after: &[u8]) -> Option<(usize, bool)> {
    // The end of the path, or a `/` followed by `/` or `.` (0x2E and 0x2F are the only bytes
    // that are `/` with bit 0 set): a run of slashes or perhaps a dot segment.
    let stop = find(after, |b, next| {
        (b == b'?') | ((b == b'/') & ((next | 1) == b'/'))
    });
    match stop {
        None => Some((after.len(), false)),
        Some(at) if after[at] == b'?' => Some((at, false)),
        Some(at) => {
            let len = at
                + after[at..]
                    .iter()
                    .position(|&b| b == b'?')
                    .unwrap_or(after.len() - at);
            Some((len, normal_path(&after[..len])?))
        }
    }
}

/// Whether the full rules' path normalization only collapses runs of slashes in `path`:
/// `None` if it does more (a path not starting with `/`, or a `.` or `..` segment); else
/// `Some(true)` if `path` has a run of slashes to collapse (`/a//b` → `/a/b`), `Some(false)`
/// if it stays as it is (an empty path becomes `/`).
#[inline]
fn normal_path(path: &[u8]) -> Option<bool> {
    if path.is_empty() {
        return Some(false);
    }
    if path[0] != b'/' {
        return None;
    }
    let mut runs = false;
    for slash in crate::scan::positions(path, b'/') {
        match path.get(slash + 1) {
            Some(b'/') => runs = true,
            Some(b'.') => match path.get(slash + 2) {
                None | Some(b'/') => return None,
                Some(b'.') if matches!(path.get(slash + 3), None | Some(b'/')) => return None,
                Some(_) => {}
            },
            _ => {}
        }
    }
    Some(runs)
}

/// Appends `path` to `out` with every run of slashes written as one (the full rules' split at
/// `/` dropping empty segments, for a path without `.` or `..` segments): the text between runs
/// is copied whole, each run's first slash with it.
fn push_collapsed(path: &str, out: &mut String) {
    let bytes = path.as_bytes();
    let mut from = 0;
    // Each `//`: the text up to its second slash is kept, the slashes after it skipped.
    while let Some(at) = find(&bytes[from..], |b, next| (b == b'/') & (next == b'/')) {
        let second = from + at + 1;
        out.push_str(&path[from..second]);
        from = second + bytes[second..].iter().take_while(|&&b| b == b'/').count();
    }
    out.push_str(&path[from..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{parse_full, CanonicalUrl, Canonicalizer};
    use crate::written::{read_written_host, written_host};
    use proptest::prelude::*;

    /// Wherever the fast path answers, it answers exactly as the full rules do; and the
    /// public entry points (which use it) answer as the full rules on every input. Returns
    /// whether the fast path answered.
    fn agrees(input: &[u8]) -> bool {
        let shown = String::from_utf8_lossy(input);
        let full = parse_full(input, String::new());
        let (mut out, mut scratch) = (String::new(), Vec::new());
        let fast = canonicalize_fast(input, &mut out, &mut scratch, None);
        if let Some(parts) = fast {
            let full = full
                .as_ref()
                .unwrap_or_else(|e| panic!("{shown:?}: fast path accepted, full rules: {e}"));
            assert_eq!(
                CanonicalUrl::from_fast(out.clone(), parts),
                full.url,
                "{shown:?}"
            );
            assert_eq!(parts.explicit_path, full.explicit_path, "{shown:?}");
            assert!(!full.userinfo, "{shown:?}");
        }
        if let Some(host) = written_host(input) {
            let url = full
                .as_ref()
                .unwrap_or_else(|e| panic!("{shown:?}: host {host:?} read off, full rules: {e}"));
            assert_eq!(url.url.host(), host, "{shown:?}");
            assert!(!url.url.is_ip_host(), "{shown:?}");
            // Canonicalized from the host read off: the same URL, by the fast path exactly
            // when it answers without the host.
            let written = read_written_host(input).expect("written_host answered");
            assert_eq!(written.host(), host, "{shown:?}");
            let mut with_host = String::new();
            let parts = canonicalize_fast(input, &mut with_host, &mut scratch, Some(&written));
            assert_eq!(parts, fast, "{shown:?}");
            if fast.is_some() {
                assert_eq!(with_host, out, "{shown:?}");
            }
            let mut canonicalizer = Canonicalizer::new();
            assert_eq!(
                canonicalizer.canonicalize_written(&written).ok(),
                Some(&url.url),
                "{shown:?}"
            );
        }
        let full_url = full.map(|p| p.url);
        assert_eq!(crate::canonicalize(input), full_url, "{shown:?}");
        let mut canonicalizer = Canonicalizer::new();
        assert_eq!(
            canonicalizer.canonicalize(input).cloned(),
            full_url,
            "{shown:?}"
        );
        fast.is_some()
    }

    /// URL-shaped bytes with every kind of trouble mixed in: escapes (single and double, of
    /// any byte), `\`, dot and slash runs, upper case, `#`, `?`, `@`, `:`, brackets, control
    /// and non-UTF-8 bytes, IPv4 parts in every base, schemes with and without slashes.
    fn url_like() -> impl Strategy<Value = Vec<u8>> {
        let bytes = |s: &'static str| Just(s.as_bytes().to_vec());
        let piece = prop_oneof![
            12 => "[a-z0-9-]{1,6}".prop_map(String::into_bytes),
            3 => "[A-Z]{1,3}".prop_map(String::into_bytes),
            6 => bytes("."),
            6 => bytes("/"),
            2 => bytes(".."),
            1 => bytes("..."),
            2 => bytes("//"),
            2 => bytes("?"),
            2 => bytes("#"),
            1 => bytes("\\"),
            1 => bytes(":"),
            1 => bytes(":80"),
            1 => bytes("@"),
            1 => bytes("["),
            1 => bytes("]"),
            1 => bytes("%"),
            3 => any::<u8>().prop_map(|b| format!("%{b:02X}").into_bytes()),
            1 => any::<u8>().prop_map(|b| format!("%{b:02x}").into_bytes()),
            1 => any::<u8>().prop_map(|b| format!("%25{b:02X}").into_bytes()),
            1 => prop::sample::select(vec!["%2e", "%2E", "%2f", "%2F", "%3A", "%3F", "%23", "%40", "%5B"])
                .prop_map(|s| s.as_bytes().to_vec()),
            2 => any::<u8>().prop_map(|b| vec![b]),
            1 => prop::sample::select(vec![
                &b"\t"[..], b"\r", b"\n", b" ", b"\x00", b"\x01", b"\x7f", b"\x80", b"\xff",
                "é".as_bytes(), "Ü".as_bytes(), "。".as_bytes(), "１".as_bytes(),
            ])
            .prop_map(<[u8]>::to_vec),
            2 => "(0[xX][0-9a-fA-F]{0,8}|0[0-7]{1,11}|[0-9]{1,10})".prop_map(String::into_bytes),
            2 => prop::sample::select(vec![
                "http://", "HTTP://", "https://", "ftp://", "http:", "HTTPS:/", "//", "javascript:",
                "a+b.c-d://",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
        ];
        prop::collection::vec(piece, 0..20).prop_map(|pieces| pieces.concat())
    }

    /// Mostly plain URLs (so the fast path answers often), with a trouble spot now and then.
    fn mostly_plain() -> impl Strategy<Value = Vec<u8>> {
        (
            "((https?|HTTP|Ftp)://)?",
            "[a-zA-Z0-9-]{1,8}(\\.[a-zA-Z0-9-]{1,8}){0,4}",
            "(/[a-zA-Z0-9._~!$&'()*+,;=:@-]{0,8}){0,5}",
            "(\\?[a-zA-Z0-9=&/?.:-]{0,10})?",
            "(#[ -~]{0,6})?",
            url_like(),
            0usize..60,
        )
            .prop_map(|(scheme, host, path, query, fragment, noise, at)| {
                let mut url = [scheme, host, path, query, fragment].concat().into_bytes();
                if at < 40 {
                    // Trouble inserted somewhere (some of it plain, too).
                    let at = at.min(url.len());
                    url.splice(at..at, noise.into_iter().take(4));
                }
                url
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn fast_path_agrees_on_arbitrary_bytes(input in prop::collection::vec(any::<u8>(), 0..48)) {
            agrees(&input);
        }

        #[test]
        fn fast_path_agrees_on_url_like_bytes(input in url_like()) {
            agrees(&input);
        }

        #[test]
        fn fast_path_agrees_on_mostly_plain_urls(input in mostly_plain()) {
            agrees(&input);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// One canonicalizer over a sequence (successes, failures, fast and slow) answers each
        /// input as a fresh call does: nothing of one URL leaks into the next.
        #[test]
        fn a_reused_canonicalizer_answers_like_fresh_calls(
            inputs in prop::collection::vec(prop_oneof![url_like(), mostly_plain()], 1..30)
        ) {
            let mut canonicalizer = Canonicalizer::new();
            for input in &inputs {
                let reused = canonicalizer.canonicalize(input).cloned();
                prop_assert_eq!(reused, crate::canonicalize(input));
            }
        }
    }

    #[test]
    fn written_hosts_are_read_only_where_nothing_can_change_them() {
        for (input, host) in [
            ("evil.com", Some("evil.com")),
            ("http://www.evil.com/a/../b%41?q#x", Some("www.evil.com")),
            ("https://a.b.evil.com?x=%2F", Some("a.b.evil.com")),
            ("ftp://evil.com/", Some("evil.com")),
            // Changed by the rules, or not known without them.
            ("Evil.com/", None),
            ("evil.com.", None),
            ("evil.com#top", None),
            ("evil.com%2Fa", None),
            ("http%3A//evil.com/", None),
            (" evil.com/", None),
            ("ev\til.com/", None),
            ("user@evil.com/", None),
            ("evil.com:80/", None),
            ("http:////evil.com/", None),
            ("1.2.3.4/", None),
            ("0x7f.1/", None),
            ("", None),
        ] {
            assert_eq!(written_host(input.as_bytes()), host, "{input:?}");
            agrees(input.as_bytes());
        }
    }

    #[test]
    fn common_urls_take_the_fast_path() {
        for input in [
            "evil.com",
            "HTTP://Evil.COM/a/b?x=1",
            "https://a.b.c/x/y/",
            "www.google.com",
            "a.com/?",
            "a.com?x/y",
            "ftp://host/p",
            "sig2fa.wixsite.com/sig2faverify",
            "http://face.cafe/",
            "a.com/.x/..y/",
            "http://evil.com/login#top",
            "http://evil.com/a%41b#x",
            "http%3A%2F%2Fevil.com%2Flogin",
            "1and1.com/x",
            "0x.com/",
            "a.com//b",
            "http://a.com/x//?q//r",
            "A.com///",
        ] {
            assert!(agrees(input.as_bytes()), "{input}");
        }
        for input in [
            "http://1.2.3.4/",
            "http://0x7f.1/",
            "3279880203/x",
            "a.com/./b",
            "a.com/b/..",
            "http:///a.com/",
            "//a.com",
            "a..com",
            ".a.com",
            "a.com.",
            "user@a.com",
            "a.com:80/",
            "http:a.com",
            "[::1]/",
            " a.com",
            "a.com/a b",
            "http://evil.com/a%20b#x",
            "a.com/\t",
            "http://host%23.com/",
            "a.com/%2e%2e/x",
            "a.com/%80",
            "a.com/%25",
            "xn--bcher-kva.de\u{ff}",
            "#x",
            "",
        ] {
            assert!(!agrees(input.as_bytes()), "{input}");
        }
    }

    #[test]
    fn fast_path_agrees_on_every_real_url_when_the_data_is_present() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let files = [
            data.join("dataset.csv"),
            data.join("ut1/phishing/urls"),
            data.join("ut1/malware/urls"),
        ];
        for file in files.iter().filter(|f| f.is_file()) {
            // Each line is a URL (a CSV row's trailing `,label` only adds a query-like tail).
            let text = std::fs::read(file).expect("readable data file");
            let (mut lines, mut fast) = (0, 0);
            for line in text.split(|&b| b == b'\n') {
                lines += 1;
                fast += usize::from(agrees(line));
            }
            // Most real URLs are plain: the fast path must keep taking them.
            assert!(
                fast * 100 >= lines * 95,
                "{file:?}: {fast} of {lines} on the fast path"
            );
        }
    }

    #[test]
    fn megabyte_inputs_agree() {
        let mega = 1 << 20;
        let long_host = [b"http://".to_vec(), b"a".repeat(mega), b".com/x".to_vec()].concat();
        let long_path = [
            b"evil.com".to_vec(),
            b"/seg".repeat(mega / 4),
            b"?q".to_vec(),
        ]
        .concat();
        let long_escapes = [b"evil.com/".to_vec(), b"%41".repeat(mega / 3)].concat();
        let deep_escape = [
            b"evil.com/%".to_vec(),
            b"25".repeat(mega / 2),
            b"41".to_vec(),
        ]
        .concat();
        let labels = [b"a.".repeat(mega / 2), b"com".to_vec()].concat();
        let long_fragment = [b"evil.com/x#".to_vec(), vec![0xff; mega]].concat();
        let dots = vec![b'.'; mega];
        let digits = vec![b'1'; mega];
        let hex = [b"0x".to_vec(), b"F".repeat(mega)].concat();
        for input in [
            &long_host,
            &long_path,
            &long_escapes,
            &deep_escape,
            &labels,
            &long_fragment,
        ] {
            assert!(agrees(input));
        }
        for input in [&dots, &digits, &hex] {
            agrees(input);
        }
    }

    #[test]
    fn special_bytes_are_found_in_blocks_and_tails() {
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 100] {
            let plain = vec![b'a'; len];
            assert_eq!(first_special(&plain), None);
            for at in 0..len {
                for special in [b'%', b'#', b' ', b'\t', 0, 0x7F, 0x80, 0xFF] {
                    let mut s = plain.clone();
                    s[at] = special;
                    assert_eq!(first_special(&s), Some(at), "{len} {at} {special}");
                    // A second special byte after the first does not move the answer.
                    if at + 1 < len {
                        s[len - 1] = b'%';
                        assert_eq!(first_special(&s), Some(at));
                    }
                }
            }
        }
        for b in 0..=255u8 {
            let want = !(0x21..=0x7E).contains(&b) || b == b'%' || b == b'#';
            assert_eq!(is_special(b), want, "{b}");
        }
    }

    /// Whether [`plain_host`] takes all of `host` (which has no `/` or `?`).
    fn is_plain_host(host: &[u8]) -> bool {
        plain_host(host).is_some_and(|h| h.len == host.len())
    }

    #[test]
    fn hosts_and_paths() {
        for host in [
            "a",
            "a.b",
            "evil.com",
            "x-1.y_2.z",
            "a;b",
            "1a.com",
            "0x.com.",
            "1.2.3.x",
            "a.1",
            "1.2.3.4.5",
        ] {
            assert_eq!(
                is_plain_host(host.as_bytes()),
                !host.ends_with('.'),
                "{host}"
            );
        }
        for host in [
            "", ".", ".a", "a.", "a..b", "u@h", "h:80", "[::1]", "1.2.3.4", "0X7F.1", "1.0x2",
        ] {
            assert!(!is_plain_host(host.as_bytes()), "{host}");
        }
        for path in [
            "", "/", "/a", "/a/", "/.a", "/a./b", "/...", "/..a/", "/a/b.c",
        ] {
            assert_eq!(normal_path(path.as_bytes()), Some(false), "{path}");
        }
        for path in ["//", "/a//b", "/a//", "///a"] {
            assert_eq!(normal_path(path.as_bytes()), Some(true), "{path}");
        }
        for path in [
            "a", "/.", "/./", "/..", "/../a", "/a/.", "/a/..", "/a//./b", "/a//..",
        ] {
            assert_eq!(normal_path(path.as_bytes()), None, "{path}");
        }
    }

    #[test]
    fn ascii_text_is_checked() {
        assert_eq!(ascii_text(b""), Some(""));
        assert_eq!(ascii_text(b"http://a.b/c?d"), Some("http://a.b/c?d"));
        for at in 0..40 {
            let mut s = vec![b'a'; 40];
            s[at] = 0x80;
            assert_eq!(ascii_text(&s), None);
            s[at] = 0x7F;
            assert_eq!(ascii_text(&s), std::str::from_utf8(&s).ok());
        }
        assert_eq!(ascii_text("é".as_bytes()), None);
    }

    #[test]
    fn plain_hosts_and_paths_are_measured() {
        let host = |rest: &str| plain_host(rest.as_bytes()).map(|h| (h.len, h.upper));
        assert_eq!(host("evil.com/x"), Some((8, false)));
        assert_eq!(host("Evil.COM?x/y"), Some((8, true)));
        assert_eq!(
            host("a-very-long-host-name.EXAMPLE.com/a/b"),
            Some((33, true))
        );
        assert_eq!(host("a-very-long-host-name.example.com"), Some((33, false)));
        assert_eq!(host("a-very-long-host-name.example.com./"), None);
        assert_eq!(host("a-very-long-host-name.example.COM."), None);
        assert_eq!(host("UPPER.lower.UPPER.lower.UPPER:80/"), None);
        assert_eq!(host("/x"), None);
        assert_eq!(host("10.0.0.1/"), None);
        assert_eq!(host("10.0.0.a/"), Some((8, false)));
        let path = |after: &str| plain_path(after.as_bytes());
        assert_eq!(path(""), Some((0, false)));
        assert_eq!(path("?a//b"), Some((0, false)));
        assert_eq!(path("/a/b/c.d/e-f-g-h-i-j-k/l?x=/./y"), Some((24, false)));
        assert_eq!(path("/a/b/c.d/e-f-g-h-i-j-k/l//m?x=/./y"), Some((27, true)));
        assert_eq!(path("/a/b/c.d/e-f-g-h-i-j-k/l/./m?x"), None);
        assert_eq!(path("/a/b/c.d/e-f-g-h-i-j-k/l/.m/..."), Some((31, false)));
    }

    #[test]
    fn writes_the_parts() {
        let (mut out, mut scratch) = (String::from("old"), Vec::new());
        let parts = canonicalize_fast(b"HTTP://Evil.COM?Q", &mut out, &mut scratch, None);
        assert_eq!(out, "http://evil.com/?Q");
        assert_eq!(
            parts,
            Some(FastParts {
                scheme_end: 4,
                host_start: 7,
                host_end: 15,
                path_end: 16,
                explicit_path: true
            })
        );
        let parts = canonicalize_fast(b"a.b/C%2fd#%zz", &mut out, &mut scratch, None);
        assert_eq!(out, "http://a.b/C/d");
        assert_eq!(parts.map(|p| (p.host_end, p.path_end)), Some((10, 14)));
        // Not on the fast path: `out` is left alone.
        assert_eq!(
            canonicalize_fast(b"a.b/%20", &mut out, &mut scratch, None),
            None
        );
        assert_eq!(
            canonicalize_fast(b"a.b/x y", &mut out, &mut scratch, None),
            None
        );
        assert_eq!(out, "http://a.b/C/d");
    }
}
