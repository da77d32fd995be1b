//! What the blocklist tests share: proptest strategies for entry lines and query URLs drawn
//! from a small alphabet (so that random URLs often fall below random entries), and parsing
//! lines into distinct entries.

#![allow(dead_code)] // Each test file uses the part it needs.

use phishbloom_core::EntrySet;
use phishbloom_url::Entry;
use proptest::prelude::*;

/// A host label or path segment.
pub fn label() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "evil", "bad", "docs", "login", "www"])
}

/// An entry line: a host of 1–3 labels under `.com` or `.org`, and 0–2 path segments.
pub fn entry_line() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(label(), 1..4),
        prop::sample::select(vec!["com", "org"]),
        prop::collection::vec(label(), 0..3),
    )
        .prop_map(|(host, tld, path)| {
            let mut line = format!("{}.{tld}", host.join("."));
            for segment in path {
                line.push('/');
                line.push_str(segment);
            }
            line
        })
}

/// A query URL: like an entry, with a scheme, deeper paths and sometimes a query.
pub fn url_line() -> impl Strategy<Value = String> {
    (
        entry_line(),
        prop::collection::vec(label(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(base, deeper, query)| {
            let mut url = format!("http://{base}");
            for segment in deeper {
                url.push('/');
                url.push_str(segment);
            }
            if query {
                url.push_str("?q=1");
            }
            url
        })
}

/// The distinct entries of `lines` (lines that are not entries are skipped).
pub fn entry_list(lines: &[String]) -> Vec<Entry> {
    let mut seen = std::collections::HashSet::new();
    lines
        .iter()
        .filter_map(|l| Entry::parse(l.as_bytes()).ok())
        .filter(|e| seen.insert(e.to_key_string()))
        .collect()
}

/// The entries of `lines` in one category, `test`.
pub fn entries(lines: &[String]) -> EntrySet {
    EntrySet::uncategorized(entry_list(lines), "test")
}
