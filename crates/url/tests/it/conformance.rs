//! Runs every Safe Browsing canonicalization and lookup-expression vector written by others (seven
//! clients, `../shared/conformance/safebrowsing/`, read in place when present; see its SOURCES.md
//! for the format) against this crate, and holds the differences to a checked-in list:
//! `conformance_differences.tsv` names each case where phishbloom deliberately differs, with the
//! sentence of the spec that decides it.
//!
//! The test fails when a case differs and is not listed, when a listed case no longer differs
//! (the list must stay exact), or when phishbloom's answer for a listed case changes. Expression
//! cases are compared as "every expected expression is produced": phishbloom also tries host
//! suffixes beyond Safe Browsing's five ("For the host, the client will try at most five
//! different strings") so that domain entries of deep hosts match, never fewer.
//!
//! `PHISHBLOOM_PRINT_DIFFERENCES=1 cargo test -p phishbloom-url --test conformance -- --nocapture`
//! prints every differing case as a row of the list, to review a change.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use phishbloom_url::{canonicalize, CanonicalUrl, ExpressionKind};

/// The suites' folder, seen from this crate.
fn suites() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/safebrowsing");
    dir.join("SOURCES.md").is_file().then_some(dir)
}

/// A suite's INPUT column: `\t \r \n \\ \xNN` (and other one-letter escapes) become bytes, as
/// SOURCES.md describes; every other byte (UTF-8 included) is itself.
fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let next = bytes[i + 1];
            let hex = || u8::from_str_radix(text.get(i + 2..i + 4)?, 16).ok();
            match next {
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'n' => out.push(b'\n'),
                b'0' => out.push(0),
                b'\\' | b'\'' | b'"' => out.push(next),
                b'x' if hex().is_some() => {
                    out.push(hex().unwrap_or_default());
                    i += 4;
                    continue;
                }
                _ => {
                    out.push(b'\\');
                    i += 1;
                    continue;
                }
            }
            i += 2;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// What phishbloom answers: the canonical URL, or `ERROR`.
fn answer(input: &[u8]) -> Result<CanonicalUrl, ()> {
    canonicalize(input).map_err(|_| ())
}

fn shown(result: &Result<CanonicalUrl, ()>) -> String {
    match result {
        Ok(url) => url.as_str().to_string(),
        Err(()) => "ERROR".to_string(),
    }
}

/// `scheme://host/path?query` → (host, path, query).
fn components(url: &CanonicalUrl) -> (String, String, Option<String>) {
    (
        url.host().to_string(),
        url.path().to_string(),
        url.query().map(str::to_string),
    )
}

/// Whether a canonical-form case matches: a whole URL, `host=… path=… query=…` components (any
/// subset; `query=` accepts an empty or absent query), or `ERROR`.
fn canon_matches(got: &Result<CanonicalUrl, ()>, expected: &str) -> bool {
    let Ok(url) = got else {
        return expected == "ERROR";
    };
    if expected == "ERROR" {
        return false;
    }
    let first = expected.split('=').next().unwrap_or("");
    if !matches!(first, "host" | "path" | "query") {
        return url.as_str() == expected;
    }
    let (host, path, query) = components(url);
    expected.split(' ').all(|token| {
        let (name, value) = token.split_once('=').unwrap_or((token, ""));
        match name {
            "host" => host == value,
            "path" => path == value,
            "query" if value.is_empty() => query.as_deref().is_none_or(str::is_empty),
            "query" => query.as_deref() == Some(value),
            _ => false,
        }
    })
}

/// A Google "host/path" expression as phishbloom writes the key: a path prefix without a query
/// drops its trailing `/` (`a.b.c/1/` → `a.b.c/1`), except the root (`a.b.c/`).
fn google_to_key(expression: &str) -> String {
    match expression.find('/') {
        None => expression.to_string(),
        Some(slash) => {
            let (host, path) = expression.split_at(slash);
            let path = if !path.contains('?') && path != "/" {
                path.strip_suffix('/').unwrap_or(path)
            } else {
                path
            };
            format!("{host}{path}")
        }
    }
}

/// Whether an expression case matches: every expected expression (or host suffix, or path
/// prefix) is produced, or `ERROR` and the input is refused.
fn expressions_match(got: &Result<CanonicalUrl, ()>, expected: &str) -> bool {
    let Ok(url) = got else {
        return expected == "ERROR";
    };
    if expected == "ERROR" {
        return false;
    }
    let mut urls = BTreeSet::new();
    let mut domains = BTreeSet::new();
    for expression in url.expressions() {
        let key = expression.to_key_string();
        match expression.kind() {
            ExpressionKind::Domain => domains.insert(key),
            ExpressionKind::Url => urls.insert(key),
        };
    }
    if let Some(hosts) = expected.strip_prefix("hosts:") {
        return hosts.split_whitespace().all(|h| domains.contains(h));
    }
    if let Some(paths) = expected.strip_prefix("paths:") {
        let host = url.host();
        return paths
            .split_whitespace()
            .all(|p| urls.contains(&google_to_key(&format!("{host}{p}"))));
    }
    expected
        .split_whitespace()
        .all(|e| urls.contains(&google_to_key(e)))
}

/// One row of the checked-in list.
struct Difference {
    got: String,
    reason: String,
}

/// `conformance_differences.tsv`: FILE, INPUT, EXPECTED, GOT, REASON per line; `#` comments.
fn listed_differences() -> HashMap<(String, String), Difference> {
    let text = include_str!("conformance_differences.tsv");
    let mut listed = HashMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            fields.len(),
            5,
            "conformance_differences.tsv line {}",
            number + 1
        );
        assert!(
            fields[4].contains('"'),
            "line {}: the reason must quote the spec's sentence",
            number + 1
        );
        let previous = listed.insert(
            (fields[0].to_string(), fields[1].to_string()),
            Difference {
                got: fields[3].to_string(),
                reason: fields[4].to_string(),
            },
        );
        assert!(previous.is_none(), "line {} is listed twice", number + 1);
    }
    listed
}

#[test]
fn every_vector_matches_or_is_a_listed_deliberate_difference() {
    let Some(dir) = suites() else {
        eprintln!("skipped: ../shared/conformance/safebrowsing is not present");
        return;
    };
    let listed = listed_differences();
    let print = std::env::var_os("PHISHBLOOM_PRINT_DIFFERENCES").is_some();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tsv"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{} suite files", files.len());
    let (mut cases, mut differing) = (0, 0);
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let expressions = name.contains("expressions");
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().filter(|l| !l.is_empty()) {
            let Some((input, expected)) = line.split_once('\t') else {
                continue;
            };
            cases += 1;
            let got = answer(&unescape(input));
            let matches = if expressions {
                expressions_match(&got, expected)
            } else {
                canon_matches(&got, expected)
            };
            let key = (name.clone(), input.to_string());
            match (matches, listed.get(&key)) {
                (true, None) => {}
                (true, Some(_)) => problems.push(format!(
                    "{name}: {input:?} now matches; drop it from the list"
                )),
                (false, listed_as) => {
                    differing += 1;
                    seen.insert(key.clone());
                    if print {
                        println!("{name}\t{input}\t{expected}\t{}\t?", shown(&got));
                    }
                    match listed_as {
                        None => problems.push(format!(
                            "{name}: {input:?}: expected {expected:?}, got {:?}, and the \
                             difference is not listed",
                            shown(&got)
                        )),
                        Some(difference) if difference.got != shown(&got) => {
                            problems.push(format!(
                                "{name}: {input:?}: now {:?}, listed as {:?} ({})",
                                shown(&got),
                                difference.got,
                                difference.reason
                            ))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }
    for key in listed.keys() {
        if !seen.contains(key) && !problems.iter().any(|p| p.contains(&key.1)) {
            problems.push(format!(
                "{}: {:?} is listed but not in the suites",
                key.0, key.1
            ));
        }
    }
    println!("{cases} cases, {differing} deliberate differences");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(cases >= 600, "{cases}");
}

#[test]
fn the_three_fixed_deviations_hold_without_the_suites() {
    // Unescaped before splitting.
    assert_eq!(
        canonicalize(b"http%3A%2F%2Fwackyurl.com:80/")
            .unwrap()
            .as_str(),
        "http://wackyurl.com/"
    );
    // Not web URLs: after a `:`, a port is digits.
    for input in [
        "javascript:alert()",
        "data:text/html;x",
        "mailto:x@google.com",
        "gopher:google.com",
    ] {
        assert!(canonicalize(input.as_bytes()).is_err(), "{input}");
    }
    // A single leading `/` starts a path: no host.
    for input in ["/blah", "/blah?query#ref"] {
        assert!(canonicalize(input.as_bytes()).is_err(), "{input}");
    }
}
