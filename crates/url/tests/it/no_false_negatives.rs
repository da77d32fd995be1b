//! Property tests for blocklist matching: every URL built below a random entry produces an expression equal to the entry's key (zero false negatives), and near-miss URLs do not.

use phishbloom_url::{canonicalize, Entry, ExpressionKind};
use proptest::prelude::*;

/// A label that can never be read as an IPv4 number part (starts with a letter).
fn label() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,7}[a-z0-9]?".prop_filter("no trailing hyphen", |l| !l.ends_with('-'))
}

fn host() -> impl Strategy<Value = String> {
    proptest::collection::vec(label(), 2..5).prop_map(|l| l.join("."))
}

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_~=-]{1,6}"
}

fn segments(max: usize) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(segment(), 0..max)
}

fn query() -> impl Strategy<Value = String> {
    "[a-z0-9=&/?]{0,8}"
}

/// A random entry line: host, optional path (with optional trailing `/`), optional query.
#[derive(Clone, Debug)]
struct EntrySpec {
    host: String,
    /// `None`: domain entry.
    path: Option<Vec<String>>,
    trailing_slash: bool,
    query: Option<String>,
}

impl EntrySpec {
    fn line(&self) -> String {
        let mut s = self.host.clone();
        if let Some(p) = &self.path {
            for seg in p {
                s.push('/');
                s.push_str(seg);
            }
            if p.is_empty() || self.trailing_slash {
                s.push('/');
            }
            if let Some(q) = &self.query {
                s.push('?');
                s.push_str(q);
            }
        }
        s
    }
}

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    (
        host(),
        prop::option::of(segments(4)),
        any::<bool>(),
        prop::option::of(query()),
    )
        .prop_map(|(host, path, trailing_slash, query)| EntrySpec {
            host,
            query: if path.is_some() { query } else { None },
            path,
            trailing_slash,
        })
}

/// How a URL below the entry is decorated.
#[derive(Clone, Debug)]
struct Decoration {
    scheme: Option<&'static str>,
    subdomains: Vec<String>,
    uppercase_host: bool,
    port: bool,
    extra_segments: Vec<String>,
    extra_trailing_slash: bool,
    query: Option<String>,
    fragment: Option<String>,
    /// Positions (as fractions of the length) where tab/CR/LF are inserted.
    noise: Vec<(usize, u8)>,
}

fn decoration() -> impl Strategy<Value = Decoration> {
    (
        prop::option::of(prop::sample::select(vec!["http://", "https://", "HTTP://"])),
        proptest::collection::vec(prop_oneof![Just("www".to_string()), label()], 0..3),
        any::<bool>(),
        any::<bool>(),
        segments(3),
        any::<bool>(),
        prop::option::of(query()),
        prop::option::of("[a-z#/?]{0,5}"),
        proptest::collection::vec(
            (
                0usize..1000,
                prop::sample::select(vec![b'\t', b'\r', b'\n']),
            ),
            0..4,
        ),
    )
        .prop_map(
            |(
                scheme,
                subdomains,
                uppercase_host,
                port,
                extra_segments,
                extra_trailing_slash,
                query,
                fragment,
                noise,
            )| {
                Decoration {
                    scheme,
                    subdomains,
                    uppercase_host,
                    port,
                    extra_segments,
                    extra_trailing_slash,
                    query,
                    fragment,
                    noise,
                }
            },
        )
}

/// Builds a URL string that must be listed by `entry` (a URL at or below it).
fn url_below(entry: &EntrySpec, d: &Decoration) -> Vec<u8> {
    let mut host = d
        .subdomains
        .iter()
        .map(|s| format!("{s}."))
        .collect::<String>();
    host.push_str(&entry.host);
    if d.uppercase_host {
        host = host.to_uppercase();
    }
    let mut s = d.scheme.unwrap_or("").to_string();
    s.push_str(&host);
    if d.port {
        s.push_str(":80");
    }
    match (&entry.path, &entry.query) {
        // Query entries: exactly that URL (decorations that keep it the same).
        (Some(p), Some(q)) => {
            for seg in p {
                s.push('/');
                s.push_str(seg);
            }
            if p.is_empty() || entry.trailing_slash {
                s.push('/');
            }
            s.push('?');
            s.push_str(q);
        }
        // Domain entries and query-less URL entries (entry_spec never gives a
        // query without a path): anything below them.
        (path, _) => {
            for seg in path.iter().flatten().chain(&d.extra_segments) {
                s.push('/');
                s.push_str(seg);
            }
            if d.extra_trailing_slash || (entry.trailing_slash && d.extra_segments.is_empty()) {
                s.push('/');
            }
            if let Some(q) = &d.query {
                s.push('?');
                s.push_str(q);
            }
        }
    }
    if let Some(f) = &d.fragment {
        s.push('#');
        s.push_str(f);
    }
    let mut bytes = s.into_bytes();
    for &(pos, b) in &d.noise {
        let at = pos * bytes.len() / 1000;
        bytes.insert(at, b);
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn urls_below_an_entry_hit_its_key(spec in entry_spec(), d in decoration()) {
        let line = spec.line();
        let entry = Entry::parse(line.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(
            entry.kind(),
            if spec.path.is_some() { ExpressionKind::Url } else { ExpressionKind::Domain }
        );
        let raw = url_below(&spec, &d);
        let url = canonicalize(&raw).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let key = entry.key();
        prop_assert!(
            url.expressions().any(|e| e == key),
            "false negative: entry {:?} (key {}) vs URL {:?} -> {}",
            line, key, String::from_utf8_lossy(&raw), url
        );
    }

    #[test]
    fn lookalike_hosts_do_not_hit(h in host(), prefix in label()) {
        // `notevil.com` is not below `evil.com`.
        let entry = Entry::parse(h.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let url = canonicalize(format!("{prefix}{h}/x").as_bytes())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(!entry.matches(&url));
    }

    #[test]
    fn non_boundary_paths_do_not_hit(h in host(), p in segments(3), last in segment(), tail in segment()) {
        // `host/a/bc` is not below `host/a/b`.
        let path: String = p.iter().map(|s| format!("/{s}")).collect();
        let entry = Entry::parse(format!("{h}{path}/{last}").as_bytes())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let url = canonicalize(format!("{h}{path}/{last}{tail}/x?y").as_bytes())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(!entry.matches(&url), "{} hit {}", entry, url);
    }
}

#[test]
fn fixed_near_misses() {
    let cases = [
        ("evil.com", "notevil.com"),
        ("evil.com", "evil.com.notevil.org"),
        ("host.com/a/b", "host.com/a/bc"),
        ("host.com/a/b", "host.com/a"),
        ("host.com/a/b?x", "host.com/a/b?xy"),
    ];
    for (entry, url) in cases {
        let entry = Entry::parse(entry.as_bytes()).expect("valid entry");
        let url = canonicalize(url.as_bytes()).expect("valid URL");
        assert!(!entry.matches(&url), "{entry} hit {url}");
    }
}
