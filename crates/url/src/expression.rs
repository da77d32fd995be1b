//! Lookup expressions of a canonical URL: borrowed (host suffix, path prefix) pairs that a matcher hashes and looks up.
//!
//! This follows the "Suffix/Prefix Expressions" section of
//! <https://developers.google.com/safe-browsing/v4/urls-hashing#suffixprefix-expressions>
//! (host suffixes; the path with and without query; directory prefixes from
//! the root), with these phishbloom semantics on top:
//!
//! * **Host suffixes**: the full host, every suffix of two labels or more
//!   (`a.b.evil.com`, `b.evil.com`, `evil.com`) and the top label alone
//!   (`com`), which stands for a domain entry only (see below). A
//!   single-label host and an IP host give only themselves (Safe Browsing:
//!   "These additional hostnames should not be checked if the host is an IP
//!   address"). Safe Browsing stops at five hosts and never tries the top
//!   label; phishbloom keeps every suffix of at most
//!   [`MAX_HOST_SUFFIX_LABELS`] labels plus the full host and the top label,
//!   so at most [`MAX_HOST_SUFFIXES`].
//! * **The top label** is tried because blocklists hold domains of a single
//!   label (`iclexofmarket`, an intranet name) and mean every host under them,
//!   as UT1, hosts files and AdBlock `||name^` rules mean it of any domain.
//!   It has only its domain expression: a URL entry's host is matched from
//!   two labels, as Safe Browsing matches it. (An entry that is a public
//!   suffix, `com`, would list a whole registry; `build` warns about those.)
//! * **Path prefixes**: the path with its query (if there is a query, even an
//!   empty one), the path without query, then each directory prefix from `/`
//!   down, at `/` boundaries. Paths without query drop their trailing `/`
//!   (unless the path is `/`), so `/a/b/` and `/a/b` give the same key; the
//!   path-with-query form is kept exactly. Safe Browsing stops at six paths;
//!   phishbloom keeps directory prefixes up to depth [`MAX_ENTRY_PATH_DEPTH`],
//!   so at most [`MAX_PATH_PREFIXES`].
//! * **Expressions**: for each host suffix, one *domain* expression
//!   `(suffix, "")` (the key of a domain entry) and one *URL* expression
//!   `(suffix, prefix)` per path prefix, but the top label's. So
//!   `expression_count() = S × (1 + P) − T × P` with `S` host suffixes, `P`
//!   path prefixes and `T` top labels (0 or 1), at most `1 + 16 × 65 = 1041`.
//!
//! The caps bound the work hostile URLs can cause (a host of 500 000 labels)
//! without losing matches: [`crate::Entry::parse`] rejects entries deeper than
//! the caps, and every entry within them is matched by every URL below it.

use std::fmt;

use crate::CanonicalUrl;

/// Longest host suffix (in labels) tried besides the full host.
///
/// Blocklist matching cares most about short suffixes (`evil.com` of
/// `login.secure.evil.com`), so a host with more labels keeps its shortest
/// suffixes (2..=16 labels) plus the full host. 16 labels is far beyond
/// registrable domains (public suffixes have at most 5 labels).
pub const MAX_HOST_SUFFIX_LABELS: usize = 16;

/// Most host suffixes one URL yields: the top label, suffixes of 2..=16 labels (15) and the
/// full host.
pub const MAX_HOST_SUFFIXES: usize = MAX_HOST_SUFFIX_LABELS + 1;

/// Most labels an entry's host may have so that every subdomain URL finds it:
/// the entry host must be among the URL's kept suffixes.
pub const MAX_ENTRY_HOST_LABELS: usize = MAX_HOST_SUFFIX_LABELS;

/// Most path prefixes one URL yields: path with query, path, and directory
/// prefixes of depth 0 (`/`) to [`MAX_ENTRY_PATH_DEPTH`].
pub const MAX_PATH_PREFIXES: usize = 64;

/// Deepest directory prefix tried, in segments (`/` is depth 0, `/a/b` depth 2).
/// `MAX_PATH_PREFIXES - 3` so that 62 directory prefixes plus the two full
/// paths make [`MAX_PATH_PREFIXES`]. URL entries may be at most this deep.
pub const MAX_ENTRY_PATH_DEPTH: usize = MAX_PATH_PREFIXES - 3;

/// Whether an expression (or an entry key) is a domain key or a URL key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpressionKind {
    /// A host alone (empty path): the key of a domain entry.
    Domain,
    /// A host and a path (starting with `/`), possibly with a query.
    Url,
}

/// A lookup key as two borrowed slices; its bytes are `host` then `path`.
///
/// Because a host never contains `/` and a non-empty path always starts with
/// `/`, the concatenation determines the pair: no two different expressions
/// have the same key bytes, and a domain key never equals a URL key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expression<'a> {
    /// A host suffix (or the full host).
    pub host: &'a str,
    /// `""` for a domain key, else a path prefix starting with `/`, possibly with `?query`.
    pub path: &'a str,
}

impl<'a> Expression<'a> {
    /// Domain or URL expression, from whether the path is empty.
    pub fn kind(&self) -> ExpressionKind {
        if self.path.is_empty() {
            ExpressionKind::Domain
        } else {
            ExpressionKind::Url
        }
    }

    /// Length of the key in bytes (`host.len() + path.len()`).
    pub fn key_len(&self) -> usize {
        self.host.len() + self.path.len()
    }

    /// Appends the key bytes (`host` then `path`) to `out`.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(self.path.as_bytes());
    }

    /// The key as a new string, e.g. `evil.com/a/b`.
    pub fn to_key_string(&self) -> String {
        let mut s = String::with_capacity(self.key_len());
        s.push_str(self.host);
        s.push_str(self.path);
        s
    }
}

impl fmt::Display for Expression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.host)?;
        f.write_str(self.path)
    }
}

/// Iterator over a canonical URL's host suffixes, shortest first (the top label alone), then
/// the full host.
///
/// E.g. `a.b.evil.com` gives `com`, `evil.com`, `b.evil.com`, `a.b.evil.com`; the top label
/// stands for a domain entry only ([`is_top_label`]).
/// No allocation; total work is linear in the host length (each label is read once, from the
/// end).
#[derive(Clone, Debug)]
pub struct HostSuffixes<'a> {
    host: &'a str,
    /// The dots before the last suffix yielded (at first, from the host's last dot with the top
    /// label, else from the one before), bit `i` for byte `i`, when the host fits one mask
    /// ([`DOT_MASK_BYTES`]); each next suffix starts after the highest.
    dots: u64,
    /// Longer hosts: the dot before the last suffix yielded, from which the search for the
    /// next goes back (`usize::MAX` for a host that fits one mask).
    dot: usize,
    /// How many more suffixes of more labels may come before the full host (0: it is next).
    more: usize,
    /// Whether the full host was yielded: the end.
    done: bool,
}

/// Hosts of at most this many bytes (nearly all) have their dots found at once, as one 64-bit
/// mask ([`crate::scan::each_mask`]); each suffix is then the mask's highest remaining bit.
const DOT_MASK_BYTES: usize = 64;

impl<'a> HostSuffixes<'a> {
    /// The suffixes of a canonical `host` ([`CanonicalUrl::host`]; an IP address, `is_ip`, has
    /// only itself): what [`CanonicalUrl::host_suffixes`] yields, for a host known without the
    /// whole URL (such as [`crate::written_host`]'s).
    #[inline(always)]
    pub fn of_host(host: &'a str, is_ip: bool) -> Self {
        HostSuffixes::of_host_with(host, is_ip, true)
    }

    /// [`HostSuffixes::of_host`], the top label only with `top`: a list without domain entries
    /// of a single label does not probe it (such a probe could stand for no entry).
    // Inlined: the walk is a few bit operations per suffix, and a call returns the whole
    // iterator through memory.
    #[inline(always)]
    pub fn of_host_with(host: &'a str, is_ip: bool, top: bool) -> Self {
        if is_ip {
            return HostSuffixes::starting(host, None, 0, usize::MAX, top);
        }
        if host.len() > DOT_MASK_BYTES {
            return HostSuffixes::searching(host, top);
        }
        let mut dots = 0;
        crate::scan::each_mask(host.as_bytes(), b'.', |_, mask| {
            dots = mask;
            false
        });
        let last = highest_bit(dots);
        // With the top label, the walk starts at the last dot; without, at the one before.
        let start = match last {
            Some(last) if !top => dots ^ (1 << last),
            _ => dots,
        };
        HostSuffixes::starting(host, last, start, usize::MAX, top)
    }

    /// The suffixes of `host` found by searching back from each dot: what hosts longer than one
    /// mask get (and the reference of the masked walk's test).
    fn searching(host: &'a str, top: bool) -> Self {
        // The top-level label is short: found from the end in a few bytes.
        let last = host.bytes().rposition(|b| b == b'.');
        // With the top label, the search starts from the end (and finds the last dot first).
        let dot = if top { host.len() } else { last.unwrap_or(0) };
        HostSuffixes::starting(host, last, 0, dot, top)
    }

    /// The walk of `host` whose last dot is `last` (none: only the full host), with the
    /// [`HostSuffixes`] fields `dots` and `dot` to start from: suffixes of one label (with
    /// `top`) or two, and more, then the full host.
    #[inline(always)]
    fn starting(host: &'a str, last: Option<usize>, dots: u64, dot: usize, top: bool) -> Self {
        HostSuffixes {
            host,
            dots,
            dot,
            more: if last.is_some() {
                MAX_HOST_SUFFIX_LABELS - 1 + usize::from(top)
            } else {
                0
            },
            done: false,
        }
    }
}

/// Whether `suffix`, one of [`HostSuffixes`] of `host`, is its top label alone — a suffix
/// that stands for a domain entry only (see the module docs): a suffix with no dot, shorter
/// than the host.
#[inline(always)]
pub fn is_top_label(host: &str, suffix: &str) -> bool {
    suffix.len() < host.len() && !suffix.as_bytes().contains(&b'.')
}

/// The index of the highest set bit of `mask`, if any.
#[inline(always)]
fn highest_bit(mask: u64) -> Option<usize> {
    (mask != 0).then(|| 63 - mask.leading_zeros() as usize)
}

impl<'a> Iterator for HostSuffixes<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.more > 0 {
            // One label more: from the dot before the last suffix's, if there is one.
            let before = if self.dot == usize::MAX {
                highest_bit(self.dots).inspect(|&before| self.dots ^= 1 << before)
            } else {
                self.host.as_bytes()[..self.dot]
                    .iter()
                    .rposition(|&b| b == b'.')
                    .inspect(|&before| self.dot = before)
            };
            if let Some(before) = before {
                self.more -= 1;
                return Some(&self.host[before + 1..]);
            }
            self.more = 0;
        }
        if self.done {
            return None;
        }
        self.done = true;
        Some(self.host)
    }
}

/// Iterator over a canonical URL's path prefixes: path with query (if any),
/// path without query (trailing `/` dropped), then directory prefixes `/`,
/// `/a`, `/a/b`, … shorter than the path, up to depth [`MAX_ENTRY_PATH_DEPTH`].
///
/// E.g. `/1/2.html?param=1` gives `/1/2.html?param=1`, `/1/2.html`, `/`, `/1`.
#[derive(Clone, Debug)]
pub struct PathPrefixes<'a> {
    /// The path and query of the URL.
    path_and_query: &'a str,
    /// Whether the path-with-query form is still to be yielded.
    with_query_pending: bool,
    /// Whether the full path is still to be yielded.
    full_pending: bool,
    /// Length of the path without trailing slash.
    full_len: usize,
    /// Where to search for the next `/`; 0 before `/` (depth 0) was yielded.
    search_from: usize,
    /// Depth of the last directory prefix yielded.
    depth: usize,
}

impl<'a> Iterator for PathPrefixes<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.with_query_pending {
            self.with_query_pending = false;
            return Some(self.path_and_query);
        }
        if self.full_pending {
            self.full_pending = false;
            return Some(&self.path_and_query[..self.full_len]);
        }
        if self.search_from == 0 {
            // "/" is a proper prefix unless the path is "/".
            self.search_from = 1;
            return (self.full_len > 1).then(|| &self.path_and_query[..1]);
        }
        if self.depth >= MAX_ENTRY_PATH_DEPTH {
            return None;
        }
        let rest = self.path_and_query.as_bytes()[..self.full_len].get(self.search_from..)?;
        let slash = self.search_from + rest.iter().position(|&b| b == b'/')?;
        self.depth += 1;
        self.search_from = slash + 1;
        Some(&self.path_and_query[..slash])
    }
}

/// Iterator over all expressions of a URL: for each host suffix, the domain
/// expression `(suffix, "")` then one URL expression per path prefix (none for the top label).
#[derive(Clone, Debug)]
pub struct Expressions<'a> {
    suffixes: HostSuffixes<'a>,
    template: PathPrefixes<'a>,
    /// The suffix whose expressions are being yielded, and its path prefixes still to come
    /// (`None`: the top label, which has none).
    current: Option<(&'a str, Option<PathPrefixes<'a>>)>,
}

impl<'a> Iterator for Expressions<'a> {
    type Item = Expression<'a>;

    fn next(&mut self) -> Option<Expression<'a>> {
        if let Some((host, Some(ref mut prefixes))) = self.current {
            if let Some(path) = prefixes.next() {
                return Some(Expression { host, path });
            }
        }
        let host = self.suffixes.next()?;
        let prefixes = (!is_top_label(self.suffixes.host, host)).then(|| self.template.clone());
        self.current = Some((host, prefixes));
        Some(Expression { host, path: "" })
    }
}

impl CanonicalUrl {
    /// The expression of the host suffix from byte `host_start` of [`CanonicalUrl::host`] and
    /// the first `path_len` bytes of [`CanonicalUrl::path_and_query`] (either `""` if beyond
    /// its part): where a walk of the expressions found an entry, named without searching
    /// again.
    #[inline]
    pub fn expression_at(&self, host_start: usize, path_len: usize) -> Expression<'_> {
        let (host, path_and_query) = self.host_span();
        Expression {
            host: if host_start <= host.len() {
                self.part(host.start + host_start, host.end)
            } else {
                ""
            },
            path: if path_len <= path_and_query.len() {
                self.part(path_and_query.start, path_and_query.start + path_len)
            } else {
                ""
            },
        }
    }

    /// The host suffixes to look up, shortest first then the full host; see the module docs.
    #[inline]
    pub fn host_suffixes(&self) -> HostSuffixes<'_> {
        HostSuffixes::of_host(self.host(), self.is_ip_host())
    }

    /// The path prefixes to look up (never the empty domain path); see the module docs.
    #[inline]
    pub fn path_prefixes(&self) -> PathPrefixes<'_> {
        PathPrefixes {
            path_and_query: self.path_and_query(),
            with_query_pending: self.query().is_some(),
            full_pending: true,
            full_len: self.path_without_trailing_slash().len(),
            search_from: 0,
            depth: 0,
        }
    }

    /// The lengths of the [`CanonicalUrl::path_prefixes`] (each a prefix of
    /// [`CanonicalUrl::path_and_query`]), longest first, into `out` (replaced): the order in
    /// which a walk by specificity probes them, found without the iterator's byte-by-byte search
    /// (the slashes of 64 bytes at once, [`crate::scan::each_mask`]).
    pub fn path_prefix_lengths(&self, out: &mut Vec<u32>) {
        out.clear();
        let base = self.path_and_query().as_bytes();
        let full_len = self.path_without_trailing_slash().len();
        // Paths are at most a line long, far below 4 GiB (lines are capped).
        if self.query().is_some() {
            out.push(base.len() as u32);
        }
        out.push(full_len as u32);
        if full_len <= 1 {
            return;
        }
        // The directory prefixes: the path up to each slash after the first byte (the first
        // `MAX_ENTRY_PATH_DEPTH`), found shortest first and reversed.
        let dirs = out.len();
        let mut depth = 0;
        crate::scan::each_mask(&base[..full_len], b'/', |piece, mut slashes| {
            if piece == 0 {
                // Byte 0 is the leading `/`: the prefix `/` itself, pushed last.
                slashes &= !1;
            }
            while slashes != 0 {
                if depth == MAX_ENTRY_PATH_DEPTH {
                    return false;
                }
                depth += 1;
                out.push((64 * piece + slashes.trailing_zeros() as usize) as u32);
                slashes &= slashes - 1;
            }
            true
        });
        out[dirs..].reverse();
        out.push(1);
    }

    /// All lookup expressions: domain and URL expressions for each host suffix.
    ///
    /// The URL matches a blocklist entry iff one of these equals the entry's
    /// [`crate::Entry::key`].
    pub fn expressions(&self) -> Expressions<'_> {
        Expressions {
            suffixes: self.host_suffixes(),
            template: self.path_prefixes(),
            current: None,
        }
    }

    /// `S × (1 + P) − T × P`: the number of items [`CanonicalUrl::expressions`] yields, with
    /// `S = host_suffixes().count()` (<= [`MAX_HOST_SUFFIXES`]),
    /// `P = path_prefixes().count()` (<= [`MAX_PATH_PREFIXES`]) and `T` 1 when the host has
    /// a top label apart from itself (more than one label, not an IP address).
    pub fn expression_count(&self) -> usize {
        let paths = self.path_prefixes().count();
        let top = usize::from(self.has_top_label());
        self.host_suffixes().count() * (1 + paths) - top * paths
    }

    /// Whether the host suffixes include the top label apart from the host (a host of more
    /// than one label that is not an IP address): one of [`CanonicalUrl::expressions`], a
    /// domain expression, is then the top label's.
    pub fn has_top_label(&self) -> bool {
        !self.is_ip_host() && self.host().contains('.')
    }

    /// The expressions a list without domain entries of a single label probes: all but the top
    /// label's ([`CanonicalUrl::expression_count`] less one when [`CanonicalUrl::has_top_label`]).
    pub fn expression_count_without_top(&self) -> usize {
        self.expression_count() - usize::from(self.has_top_label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonicalize;

    fn url(s: &str) -> CanonicalUrl {
        canonicalize(s.as_bytes()).expect("test URL is valid")
    }

    fn keys(s: &str) -> Vec<String> {
        url(s).expressions().map(|e| e.to_key_string()).collect()
    }

    /// An expression named by where it lies is the one the walk yields there; a place beyond
    /// its part names nothing of it.
    #[test]
    fn expressions_named_by_place() {
        let u = url("http://a.b.evil.com/1/2.html?param=1");
        for e in u.expressions() {
            let at = u.expression_at(u.host().len() - e.host.len(), e.path.len());
            assert_eq!(at, e);
        }
        let beyond = u.expression_at(u.host().len() + 1, u.path_and_query().len() + 1);
        assert_eq!((beyond.host, beyond.path), ("", ""));
    }

    #[test]
    fn suffixes_and_prefixes() {
        let u = url("http://a.b.evil.com/1/2.html?param=1");
        let s: Vec<_> = u.host_suffixes().collect();
        assert_eq!(s, ["com", "evil.com", "b.evil.com", "a.b.evil.com"]);
        let p: Vec<_> = u.path_prefixes().collect();
        assert_eq!(p, ["/1/2.html?param=1", "/1/2.html", "/", "/1"]);
        // The top label has its domain expression alone.
        assert_eq!(u.expression_count(), 1 + 3 * 5);
        assert_eq!(u.expressions().count(), u.expression_count());

        assert_eq!(
            url("localhost/x").host_suffixes().collect::<Vec<_>>(),
            ["localhost"]
        );
        assert_eq!(
            url("1.2.3.4/x").host_suffixes().collect::<Vec<_>>(),
            ["1.2.3.4"]
        );
        assert_eq!(
            url("[::1]/x").host_suffixes().collect::<Vec<_>>(),
            ["[::1]"]
        );
        assert_eq!(
            url("evil.com").host_suffixes().collect::<Vec<_>>(),
            ["com", "evil.com"]
        );
        assert_eq!(url("evil.com").path_prefixes().collect::<Vec<_>>(), ["/"]);
        assert_eq!(
            url("evil.com/?").path_prefixes().collect::<Vec<_>>(),
            ["/?", "/"]
        );
        assert_eq!(
            url("evil.com/a/b/").path_prefixes().collect::<Vec<_>>(),
            ["/a/b", "/", "/a"]
        );
        assert_eq!(
            url("evil.com/a/b/?x").path_prefixes().collect::<Vec<_>>(),
            ["/a/b/?x", "/a/b", "/", "/a"]
        );
    }

    /// The worked examples of the Safe Browsing page's "Suffix/Prefix
    /// Expressions" section, as sets (phishbloom drops trailing slashes of
    /// directory prefixes, adds domain expressions and keeps more suffixes).
    #[test]
    fn safe_browsing_expression_examples() {
        let k = keys("http://a.b.c/1/2.html?param=1");
        for want in [
            "a.b.c/1/2.html?param=1",
            "a.b.c/1/2.html",
            "a.b.c/",
            "a.b.c/1",
            "b.c/1/2.html?param=1",
            "b.c/1/2.html",
            "b.c/",
            "b.c/1",
        ] {
            assert!(k.iter().any(|x| x == want), "{want} missing from {k:?}");
        }
        let k = keys("http://1.2.3.4/1/");
        assert_eq!(k, ["1.2.3.4", "1.2.3.4/1", "1.2.3.4/"]);
        let k = keys("http://a.b.c.d.e.f.g/1.html");
        assert!(k.iter().any(|x| x == "f.g/1.html"));
        assert!(k.iter().any(|x| x == "a.b.c.d.e.f.g/"));
    }

    #[test]
    fn expression_order_and_kinds() {
        let got: Vec<_> = url("http://www.evil.com/a?x")
            .expressions()
            .map(|e| (e.to_key_string(), e.kind()))
            .collect();
        use ExpressionKind::*;
        let want = [
            ("com", Domain),
            ("evil.com", Domain),
            ("evil.com/a?x", Url),
            ("evil.com/a", Url),
            ("evil.com/", Url),
            ("www.evil.com", Domain),
            ("www.evil.com/a?x", Url),
            ("www.evil.com/a", Url),
            ("www.evil.com/", Url),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(k, kind)| (k.to_string(), *kind))
            .collect();
        assert_eq!(got, want);
        let e = Expression {
            host: "evil.com",
            path: "/a",
        };
        let mut buf = b"x".to_vec();
        e.write_key(&mut buf);
        assert_eq!(buf, b"xevil.com/a");
        assert_eq!(e.key_len(), 10);
        assert_eq!(e.to_string(), "evil.com/a");
    }

    #[test]
    fn caps_bound_hostile_urls() {
        // 40 labels: the top label, suffixes of 2..=16 labels and the full host.
        let labels: Vec<String> = (0..40).map(|i| format!("l{i}")).collect();
        let host = labels.join(".");
        let u = url(&format!("http://{host}/"));
        let s: Vec<_> = u.host_suffixes().collect();
        assert_eq!(s.len(), MAX_HOST_SUFFIXES);
        assert_eq!(s[0], "l39");
        assert_eq!(s[1], "l38.l39");
        assert_eq!(s[15], labels[24..].join("."));
        assert_eq!(s[16], host);
        // Exactly 16 labels: the top label and all 15 suffixes, the last the full host.
        let host16 = labels[..16].join(".");
        let u16 = url(&format!("{host16}/"));
        let s: Vec<_> = u16.host_suffixes().collect();
        assert_eq!(s.len(), 16);
        assert_eq!(s[15], host16);

        // 200 segments: path with query, path, and depths 0..=61.
        let path: String = (0..200).map(|i| format!("/s{i}")).collect();
        let u = url(&format!("evil.com{path}?q"));
        let p: Vec<_> = u.path_prefixes().collect();
        assert_eq!(p.len(), MAX_PATH_PREFIXES);
        assert_eq!(p[2], "/");
        let deepest: String = (0..MAX_ENTRY_PATH_DEPTH)
            .map(|i| format!("/s{i}"))
            .collect();
        assert_eq!(p[63], deepest);
        assert_eq!(u.expression_count(), 2 + MAX_PATH_PREFIXES);

        // A megabyte of labels and segments stays within the caps.
        let huge = format!("{}evil.com/{}", "a.".repeat(500_000), "b/".repeat(500_000));
        let u = url(&huge);
        assert_eq!(u.expression_count(), MAX_HOST_SUFFIXES * (1 + 63) - 63);
        assert_eq!(u.expressions().count(), u.expression_count());
    }

    /// The suffixes by the rule, from the host's labels (a reference apart from both walks):
    /// the last label alone when there are more, the last 2, 3, … labels, at most
    /// [`MAX_HOST_SUFFIX_LABELS`] and fewer than all, then the whole host.
    fn suffixes_by_labels(host: &str) -> Vec<&str> {
        let labels: Vec<&str> = host.split('.').collect();
        let n = labels.len();
        let first = if n > 1 { 1 } else { 2 };
        let mut suffixes: Vec<&str> = (first..=MAX_HOST_SUFFIX_LABELS.min(n.saturating_sub(1)))
            .map(|k| {
                let len = labels[n - k..].iter().map(|l| l.len() + 1).sum::<usize>() - 1;
                &host[host.len() - len..]
            })
            .collect();
        suffixes.push(host);
        suffixes
    }

    proptest::proptest! {
        /// Hosts of up to one mask's length (and longer ones, which search) give the suffixes
        /// the rule gives: dots anywhere, in a row, first or last.
        #[test]
        fn walked_suffixes_are_the_rules(
            host in proptest::collection::vec(proptest::sample::select(vec!['a', 'b', '.']), 1..90)
        ) {
            let host: String = host.into_iter().collect();
            let masked: Vec<&str> = HostSuffixes::of_host(&host, false).collect();
            let rule = suffixes_by_labels(&host);
            proptest::prop_assert_eq!(&masked, &rule);
            // Without the top label: the same walk but its first suffix, when it is one.
            let without: Vec<&str> = HostSuffixes::of_host_with(&host, false, false).collect();
            let skip = usize::from(rule.len() > 1);
            proptest::prop_assert_eq!(&without[..], &rule[skip..]);
        }

        /// The lengths, longest first, are those of the prefixes the iterator yields.
        #[test]
        fn prefix_lengths_are_the_prefixes_longest_first(
            path in proptest::collection::vec(proptest::sample::select(vec!["a", "/", "b/", "?", "x.y"]), 0..80)
        ) {
            let u = url(&format!("http://evil.com/{}", path.concat()));
            let mut expected: Vec<u32> = u.path_prefixes().map(|p| p.len() as u32).collect();
            expected.sort_unstable_by(|a, b| b.cmp(a));
            let mut lengths = vec![7];
            u.path_prefix_lengths(&mut lengths);
            proptest::prop_assert_eq!(lengths, expected);
        }
    }

    #[test]
    fn prefix_lengths_of_deep_paths_stop_at_the_cap() {
        let path: String = (0..200).map(|i| format!("/s{i}")).collect();
        let u = url(&format!("evil.com{path}?q"));
        let mut expected: Vec<u32> = u.path_prefixes().map(|p| p.len() as u32).collect();
        expected.sort_unstable_by(|a, b| b.cmp(a));
        let mut lengths = Vec::new();
        u.path_prefix_lengths(&mut lengths);
        assert_eq!(lengths.len(), MAX_PATH_PREFIXES);
        assert_eq!(lengths, expected);
        let long_host = format!("{}evil.com", "label.".repeat(20));
        assert_eq!(
            HostSuffixes::of_host(&long_host, false).collect::<Vec<_>>(),
            suffixes_by_labels(&long_host)
        );
    }
}
