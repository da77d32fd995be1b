//! Blocklist entries (domain and URL entries) parsed from list lines, and their lookup keys.
//!
//! Semantics, decided for phishbloom (Safe Browsing lists store hashes of
//! expressions; these are the plain-text equivalents):
//!
//! * A line **without path or query** (`evil.com`, `http://evil.com`,
//!   `evil.com:8080`) is a **domain entry**: it matches URLs on that host and
//!   on every subdomain at any depth (`www.evil.com`, `a.b.evil.com`), never
//!   `notevil.com`. Its key is `(host, "")`.
//! * A line **with a path** (`evil.com/a/b`, `http://evil.com/a/b/`) is a
//!   **URL entry**: it matches that URL and every URL below it at a `/`
//!   boundary (`evil.com/a/b/c?x`, not `evil.com/a/bc`), on that host and its
//!   subdomains. The path's trailing `/` is dropped unless the path is `/`,
//!   so `evil.com/a/b/` and `evil.com/a/b` are the same entry.
//! * **`evil.com/`** is a URL entry with path `/` (key `evil.com/`). It
//!   matches every page on `evil.com` and, through host suffixes, on its
//!   subdomains: the same URLs as the domain entry `evil.com`, under a
//!   different key. Lines are kept distinct so a list round-trips.
//! * A line **with a query** (`evil.com/a?x=1`, also `evil.com?x=1`, whose
//!   path is `/`) matches exactly that URL (with the query) on that host and
//!   its subdomains. Its path is kept as written (trailing `/` included),
//!   because a URL's path-with-query expression is its exact path and query.
//! * A fragment is ignored; entries go through [`crate::canonicalize`] like URLs.
//! * A domain entry of a single label (`intranet`, `iclexofmarket`) matches that host and
//!   every host under it, like any domain entry. A URL entry of a single-label host
//!   (`localhost/a`) or an IP host matches only that exact host.

use std::fmt;
use std::str::FromStr;

use crate::canonical::parse;
use crate::error::{snippet, Error};
use crate::expression::{Expression, ExpressionKind, MAX_ENTRY_HOST_LABELS, MAX_ENTRY_PATH_DEPTH};
use crate::CanonicalUrl;

/// One blocklist entry: a domain or a URL (prefix), in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entry {
    /// Matches the host and all its subdomains. Key: `(host, "")`.
    Domain {
        /// Canonical host, e.g. `evil.com`.
        host: String,
    },
    /// Matches the URL and URLs below it (or exactly it, with a query), on
    /// the host and its subdomains. Key: `(host, path_and_query)`.
    Url {
        /// Canonical host, e.g. `evil.com`.
        host: String,
        /// Canonical path, trailing `/` dropped unless it is `/` (when there
        /// is no query), plus `?query` if the entry has one, e.g. `/a/b`.
        path_and_query: String,
    },
}

impl Entry {
    /// Parses a blocklist line such as `evil.com`, `evil.com/a/b` or
    /// `http://evil.com/a?x=1` (bytes; need not be UTF-8).
    ///
    /// # Errors
    ///
    /// Any [`crate::canonicalize`] error; [`Error::EntryHostTooDeep`] if the
    /// host has more than [`MAX_ENTRY_HOST_LABELS`] labels and
    /// [`Error::EntryPathTooDeep`] if a query-less path is deeper than
    /// [`MAX_ENTRY_PATH_DEPTH`]: lookups would miss URLs below such entries.
    ///
    /// # Examples
    ///
    /// ```
    /// use phishbloom_url::Entry;
    /// let entry = Entry::parse(b"HTTP://Evil.com/Login/")?;
    /// assert_eq!(entry.to_key_string(), "evil.com/Login");
    /// # Ok::<(), phishbloom_url::Error>(())
    /// ```
    pub fn parse(line: &[u8]) -> Result<Entry, Error> {
        let parsed = parse(line)?;
        // `http://user:pass@evil.example/login` is a URL (its user info dropped, as when it
        // is checked); `user@evil.example` without a scheme is an address.
        if parsed.userinfo && !parsed.named_scheme {
            return Err(Error::EntryUserinfo {
                input: snippet(line),
            });
        }
        let url = parsed.url;
        let labels = url.host_label_count();
        if labels > MAX_ENTRY_HOST_LABELS {
            return Err(Error::EntryHostTooDeep {
                input: snippet(line),
                labels,
                max: MAX_ENTRY_HOST_LABELS,
            });
        }
        let host = url.host().to_owned();
        if !parsed.explicit_path {
            return Ok(Entry::Domain { host });
        }
        let path_and_query = if url.query().is_some() {
            // Matched only by the URL's exact path-and-query expression.
            url.path_and_query().to_owned()
        } else {
            let path = url.path_without_trailing_slash();
            // Depth = number of segments: `/` is 0, `/a/b` is 2.
            let depth = if path == "/" {
                0
            } else {
                path.bytes().filter(|&b| b == b'/').count()
            };
            if depth > MAX_ENTRY_PATH_DEPTH {
                return Err(Error::EntryPathTooDeep {
                    input: snippet(line),
                    depth,
                    max: MAX_ENTRY_PATH_DEPTH,
                });
            }
            path.to_owned()
        };
        Ok(Entry::Url {
            host,
            path_and_query,
        })
    }

    /// The canonical host of the entry.
    pub fn host(&self) -> &str {
        match self {
            Entry::Domain { host } | Entry::Url { host, .. } => host,
        }
    }

    /// Whether this is a domain or a URL entry.
    pub fn kind(&self) -> ExpressionKind {
        match self {
            Entry::Domain { .. } => ExpressionKind::Domain,
            Entry::Url { .. } => ExpressionKind::Url,
        }
    }

    /// The lookup key in the same `(host, path)` form as URL expressions.
    pub fn key(&self) -> Expression<'_> {
        match self {
            Entry::Domain { host } => Expression { host, path: "" },
            Entry::Url {
                host,
                path_and_query,
            } => Expression {
                host,
                path: path_and_query,
            },
        }
    }

    /// Appends the key bytes (`host` then path) to `out`.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        self.key().write_key(out);
    }

    /// The key as a string, e.g. `evil.com` or `evil.com/a/b`.
    pub fn to_key_string(&self) -> String {
        self.key().to_key_string()
    }

    /// Whether `url` is listed by this entry: one of its expressions equals the key.
    ///
    /// A reference implementation of matching (linear scan of the
    /// expressions); a real matcher hashes the expressions instead.
    pub fn matches(&self, url: &CanonicalUrl) -> bool {
        let key = self.key();
        url.expressions().any(|e| e == key)
    }
}

impl FromStr for Entry {
    type Err = Error;

    fn from_str(s: &str) -> Result<Entry, Error> {
        Entry::parse(s.as_bytes())
    }
}

impl fmt::Display for Entry {
    /// Writes the key, which parses back to the same entry.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.key().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonicalize;

    fn entry(s: &str) -> Entry {
        Entry::parse(s.as_bytes()).expect("test entry is valid")
    }

    fn hits(entry_line: &str, url: &str) -> bool {
        let u = canonicalize(url.as_bytes()).expect("test URL is valid");
        entry(entry_line).matches(&u)
    }

    #[test]
    fn parse_kinds_and_keys() {
        let cases = [
            ("evil.com", ExpressionKind::Domain, "evil.com"),
            ("HTTP://Evil.COM:80", ExpressionKind::Domain, "evil.com"),
            ("evil.com#frag", ExpressionKind::Domain, "evil.com"),
            ("evil.com/", ExpressionKind::Url, "evil.com/"),
            ("evil.com/a/b", ExpressionKind::Url, "evil.com/a/b"),
            ("http://evil.com/a/b/", ExpressionKind::Url, "evil.com/a/b"),
            ("evil.com/a/./b//", ExpressionKind::Url, "evil.com/a/b"),
            ("evil.com/a?x=1", ExpressionKind::Url, "evil.com/a?x=1"),
            ("evil.com/a/?x=1", ExpressionKind::Url, "evil.com/a/?x=1"),
            ("evil.com?x=1", ExpressionKind::Url, "evil.com/?x=1"),
            ("3279880203", ExpressionKind::Domain, "195.127.0.11"),
        ];
        for (line, kind, key) in cases {
            let e = entry(line);
            assert_eq!(
                (e.kind(), e.to_key_string().as_str()),
                (kind, key),
                "{line}"
            );
            assert_eq!(e.key().kind(), kind);
            assert_eq!(e.to_string(), key);
            // The key parses back to the same entry.
            assert_eq!(entry(&e.to_string()), e, "{line}");
        }
        assert_eq!(entry("evil.com/x").host(), "evil.com");
        let mut buf = Vec::new();
        entry("evil.com/x").write_key(&mut buf);
        assert_eq!(buf, b"evil.com/x");
        assert_eq!("evil.com".parse::<Entry>(), Ok(entry("evil.com")));
    }

    #[test]
    fn domain_entries() {
        for url in [
            "HTTP://Evil.COM:80/login/../a/./b#x",
            "evil.com/a/b",
            "http://www.evil.com/a/b/c?x=1",
            "https://a.b.c.d.evil.com",
            "evil.com.",
        ] {
            assert!(hits("evil.com", url), "{url}");
        }
        for url in [
            "notevil.com",
            "evil.com.au",
            "evil.co",
            "com",
            "evil.org/evil.com",
        ] {
            assert!(!hits("evil.com", url), "{url}");
        }
    }

    #[test]
    fn url_entries() {
        let e = "sig2fa.wixsite.com/sig2faverify";
        for url in [
            "sig2fa.wixsite.com/sig2faverify",
            "sig2fa.wixsite.com/sig2faverify/",
            "sig2fa.wixsite.com/sig2faverify/x?y=1",
            "sig2fa.wixsite.com/sig2faverify?y=1",
            "www.sig2fa.wixsite.com/sig2faverify",
            "http://SIG2FA.wixsite.com:80/a/../sig2faverify#f",
        ] {
            assert!(hits(e, url), "{url}");
        }
        for url in [
            "sig2fa.wixsite.com/other",
            "sig2fa.wixsite.com/sig2faverifyX",
            "sig2fa.wixsite.com/",
            "wixsite.com/sig2faverify",
            "other.wixsite.com/sig2faverify",
        ] {
            assert!(!hits(e, url), "{url}");
        }
        assert!(hits("evil.com/a/b/", "evil.com/a/b/c?x"));
        assert!(!hits("evil.com/a/b", "evil.com/a/bc"));
    }

    #[test]
    fn root_and_query_entries() {
        // `evil.com/` matches every page on evil.com and its subdomains.
        for url in ["evil.com", "evil.com/x/y?z", "www.evil.com/q"] {
            assert!(hits("evil.com/", url), "{url}");
        }
        assert!(!hits("evil.com/", "notevil.com/"));
        // Query entries match exactly that URL.
        assert!(hits("evil.com/a?x=1", "http://www.evil.com/a?x=1#f"));
        assert!(!hits("evil.com/a?x=1", "evil.com/a?x=12"));
        assert!(!hits("evil.com/a?x=1", "evil.com/a"));
        assert!(!hits("evil.com/a?x=1", "evil.com/a/b?x=1"));
        assert!(hits("evil.com?x", "evil.com/?x"));
    }

    #[test]
    fn ip_and_single_label_hosts() {
        assert!(hits("1.2.3.4", "http://0x01020304/a"));
        assert!(!hits("2.3.4", "http://1.2.3.4/"));
        assert!(hits("localhost/a", "localhost/a/b"));
        assert!(hits("com", "evil.com"));
        assert!(hits("intranet", "http://a.b.intranet/x"));
        assert!(!hits("localhost/a", "x.localhost/a"));
        assert!(!hits("evil", "evil.com"));
        assert!(hits("[::1]/a", "http://[::1]:80/a/b"));
    }

    #[test]
    fn depth_limits() {
        let deep_host = (0..=MAX_ENTRY_HOST_LABELS)
            .map(|i| format!("l{i}"))
            .collect::<Vec<_>>();
        let err = Entry::parse(deep_host.join(".").as_bytes());
        assert!(
            matches!(
                err,
                Err(Error::EntryHostTooDeep {
                    labels: 17,
                    max: 16,
                    ..
                })
            ),
            "{err:?}"
        );
        let ok_host = deep_host[1..].join(".");
        assert!(hits(&ok_host, &format!("x.y.z.{ok_host}/a")));

        let deep_path: String = (0..=MAX_ENTRY_PATH_DEPTH)
            .map(|i| format!("/s{i}"))
            .collect();
        let err = Entry::parse(format!("evil.com{deep_path}").as_bytes());
        assert!(
            matches!(
                err,
                Err(Error::EntryPathTooDeep {
                    depth: 62,
                    max: 61,
                    ..
                })
            ),
            "{err:?}"
        );
        // With a query the depth does not matter: it is an exact match.
        let line = format!("evil.com{deep_path}?q");
        assert!(hits(&line, &format!("www.{line}")));
        let ok_path: String = (0..MAX_ENTRY_PATH_DEPTH)
            .map(|i| format!("/s{i}"))
            .collect();
        let line = format!("evil.com{ok_path}");
        assert!(hits(&line, &format!("{line}/more/and/more/x/y/z?q")));
    }

    #[test]
    fn errors_propagate() {
        assert!(matches!(Entry::parse(b""), Err(Error::EmptyInput)));
        assert!(matches!(
            Entry::parse(b"http:///"),
            Err(Error::EmptyHost { .. })
        ));
        assert!(matches!(
            Entry::parse(b"javascript:alert(1)"),
            Err(Error::NotAWebUrl { .. })
        ));
    }

    #[test]
    fn addresses_are_not_entries() {
        // `other@evil.com` as an entry would list all of evil.com: refused, it is a whole key.
        for line in ["spammer@evil.com", "a%40evil.com", "//user@evil.com/x"] {
            assert!(
                matches!(
                    Entry::parse(line.as_bytes()),
                    Err(Error::EntryUserinfo { .. })
                ),
                "{line}"
            );
        }
        // As a query, user info is dropped like the port: the URL is still checked.
        let url = crate::canonicalize(b"http://user@evil.com/x").unwrap();
        assert_eq!(url.host(), "evil.com");
        // A URL that names its scheme is a URL with or without user info:
        // listed as the same entry a query without the user info finds.
        for line in ["http://user:pw@evil.com/x", "HTTPS://a@b@evil.com:8443/x"] {
            let entry = Entry::parse(line.as_bytes()).unwrap();
            assert_eq!(entry.to_key_string(), "evil.com/x", "{line}");
        }
    }
}
