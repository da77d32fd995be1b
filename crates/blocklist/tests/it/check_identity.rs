//! Byte identity of `check`'s zero-allocation line path (`Blocklist::write_checks`, what the
//! stream checker, the server's batches and the squid helper use) with the owned-verdict path
//! kept in the library as the reference: every URL's candidates found as owned strings by the
//! engine's `Matcher` of the same list built without its host gate, decided by
//! `Resolver::url_verdict`, printed by `write_verdict` — a walk of every expression that shares
//! neither the gate nor the borrowed decisions with the line path — in TSV and in JSON.
//!
//! 10⁶ generated lines against a verified list of several categories with exceptions, so that
//! every kind of line is met: listed (domain and URL entries, one or two categories), allowed,
//! clean, invalid, blank, messy spellings (case, escapes, dots, slash runs, ports, fragments,
//! IP hosts, `\r`). Ignored in an unoptimized test run (minutes there); CI runs it in its
//! optimized test profile: `cargo test --profile ci -p phishbloom-blocklist --test it
//! check_identity -- --ignored`.

use phishbloom_core::engine::{Matcher, Scratch};
use phishbloom_core::printer::{write_verdict, Output};
use phishbloom_core::resolve::Verdict;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Engine, Kind};
use phishbloom_url::{Canonicalizer, Entry};

/// A small reproducible generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "login",
    "index.html",
    "a",
    "b",
    "verify",
    "account",
    "img",
    "static",
    "x.php",
    "Secure",
];
const TLDS: &[&str] = &["com", "net", "org", "info", "de", "fr", "co.uk", "io"];

fn label(rng: &mut Rng) -> String {
    (0..3 + rng.below(8))
        .map(|_| (b'a' + rng.below(26) as u8) as char)
        .collect()
}

/// Block entries (domains and URLs), their categories, and exceptions below some of them.
fn entry_set(rng: &mut Rng) -> EntrySet {
    let mut entries = Vec::new();
    let mut membership = Vec::new();
    let mut exceptions = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in 0..3000 {
        let host = format!("{}.{}", label(rng), rng.pick(TLDS));
        let line = match i % 3 {
            0 => host.clone(),
            1 => format!("{host}/{}", rng.pick(WORDS)),
            _ => format!(
                "{}.{host}/{}/{}",
                label(rng),
                rng.pick(WORDS),
                rng.pick(WORDS)
            ),
        };
        let entry = Entry::parse(line.as_bytes()).expect("generated entries parse");
        if !seen.insert(entry.to_key_string()) {
            continue;
        }
        entries.push(entry);
        membership.push(
            match rng.below(4) {
                0 => vec![0, 2],
                1 => vec![1],
                2 => vec![2],
                _ => vec![0],
            }
            .into(),
        );
        if i % 17 == 0 {
            let allow = format!("docs.{host}");
            exceptions.push(Entry::parse(allow.as_bytes()).expect("generated exceptions parse"));
        }
    }
    EntrySet {
        entries,
        categories: vec!["phishing".into(), "malware".into(), "gambling".into()],
        membership,
        exceptions,
    }
}

/// One line to check: below an entry, messy, random, or not a URL.
fn url_line(rng: &mut Rng, set: &EntrySet) -> String {
    let entry = set.entries[rng.below(set.entries.len())].to_key_string();
    let path: Vec<&str> = (0..rng.below(3)).map(|_| rng.pick(WORDS)).collect();
    let path = path.join("/");
    match rng.below(12) {
        0..=3 => format!("http://www.{entry}/{path}?id={}", rng.below(1000)),
        4 => format!("HTTPS://DOCS.{}/{path}#frag", entry.to_uppercase()),
        5 => format!("{entry}//{path}/./x/../y?q=%41%2f"),
        6 => format!("http://{entry}:8080/{path}\r"),
        7 => format!(
            "http://{}.{}.{}.{}/{path}",
            rng.below(256),
            rng.below(256),
            rng.below(256),
            rng.below(256)
        ),
        8 => match rng.below(5) {
            0 => String::new(),
            1 => "javascript:alert(1)".into(),
            2 => "http://".into(),
            3 => format!("  {entry} "),
            _ => format!("http://{entry}/%zz\t%00é"),
        },
        _ => {
            let scheme = rng.pick(&["http://", "https://", ""]);
            format!("{scheme}{}.{}/{path}", label(rng), rng.pick(TLDS))
        }
    }
}

/// The reference: owned candidates, owned verdicts, the verdict printer.
fn reference(list: &Blocklist, lines: &[&[u8]], output: Output, out: &mut Vec<u8>) {
    let Engine::Urls(matcher) = list.engine() else {
        panic!("a list of URL entries");
    };
    let mut canonicalizer = Canonicalizer::new();
    let mut scratch = Scratch::default();
    let mut key = Vec::new();
    for line in lines {
        let line = phishbloom_text::line::content(line);
        let verdict = if line.trim_ascii().is_empty() {
            Verdict::default()
        } else {
            match canonicalizer.canonicalize(line) {
                Err(error) => Verdict::invalid(error),
                Ok(url) => {
                    let mut candidates = Vec::new();
                    matcher.candidates(url, &mut scratch, &mut candidates);
                    list.resolver().url_verdict(url, &mut candidates, &mut key)
                }
            }
        };
        write_verdict(line, &verdict, output, out);
    }
}

/// The line path of a list of `kind` writes, in `output`, the reference's bytes for a million
/// lines drawn with `seed`, answering for the `keep` category alone when one is given.
fn writes_the_reference_bytes(kind: Kind, output: Output, keep: Option<&str>, seed: u64) {
    let set = entry_set(&mut Rng(23));
    let mut rng = Rng(seed);
    let build = |host_gate: bool| {
        let options = BuildOptions {
            kind,
            // A loose filter, so that false positives reach the verification table.
            fpp: 0.05,
            verify: true,
            host_gate,
            ..BuildOptions::default()
        };
        let built = Blocklist::from_entries(&set, &options).expect("the list builds");
        let mut list = Blocklist::from_bytes("mem", &built.to_bytes()).expect("the list reads");
        if let Some(name) = keep {
            list.keep_categories(&[name.to_owned()], "mem".as_ref())
                .expect("the category is the list's");
        }
        list
    };
    // The line path asks the host gate; the reference probes every expression.
    let (list, reference_list) = (build(true), build(false));
    assert!(list.url_gate().is_some() && reference_list.url_gate().is_none());
    let text: Vec<String> = (0..1_000_000).map(|_| url_line(&mut rng, &set)).collect();
    let lines: Vec<&[u8]> = text.iter().map(|l| l.as_bytes()).collect();
    let (mut want, mut got) = (Vec::new(), Vec::new());
    reference(&reference_list, &lines, output, &mut want);
    let mut scratch = Scratch::default();
    // In pieces, as the stream checker hands out chunks, with the scratch reused.
    let mut counted = 0;
    for piece in lines.chunks(4096) {
        counted += list
            .write_checks(piece.iter().copied(), output, &mut scratch, &mut got)
            .lines;
    }
    assert_eq!(counted, lines.len() as u64);
    let statuses = |out: &[u8], status: &str| {
        let (tsv, json) = (format!("\t{status}"), format!("\"verdict\":\"{status}\""));
        let needle = match output {
            Output::Tsv => tsv.as_bytes(),
            Output::Json => json.as_bytes(),
        };
        out.split(|&b| b == b'\n')
            .filter(|l| l.windows(needle.len()).any(|w| w == needle))
            .count()
    };
    // One category of three keeps fewer of the listed and allowed lines.
    let enough = if keep.is_some() { 100 } else { 1000 };
    for status in ["listed", "allowed", "clean", "invalid"] {
        let count = statuses(&want, status);
        assert!(
            count > enough,
            "{kind:?} {output:?} {keep:?}: too few {status} lines ({count})"
        );
    }
    if want != got {
        let at = want
            .split(|&b| b == b'\n')
            .zip(got.split(|&b| b == b'\n'))
            .position(|(w, g)| w != g)
            .unwrap_or_default();
        panic!(
            "{kind:?}: line {at} differs:\nwant {:?}\ngot  {:?}",
            String::from_utf8_lossy(want.split(|&b| b == b'\n').nth(at).unwrap_or_default()),
            String::from_utf8_lossy(got.split(|&b| b == b'\n').nth(at).unwrap_or_default())
        );
    }
}

#[test]
#[ignore = "10^6 lines: minutes unoptimized; CI runs it in its optimized profile (.ci/run)"]
fn blocked_tsv_lines_are_the_reference_bytes_on_a_million_lines() {
    writes_the_reference_bytes(Kind::Blocked, Output::Tsv, None, 1);
}

#[test]
#[ignore = "10^6 lines: minutes unoptimized; CI runs it in its optimized profile (.ci/run)"]
fn split_tsv_lines_are_the_reference_bytes_on_a_million_lines() {
    writes_the_reference_bytes(Kind::Split, Output::Tsv, None, 2);
}

#[test]
#[ignore = "10^6 lines: minutes unoptimized; CI runs it in its optimized profile (.ci/run)"]
fn blocked_json_lines_are_the_reference_bytes_on_a_million_lines() {
    writes_the_reference_bytes(Kind::Blocked, Output::Json, None, 3);
}

/// Answering for one category: a more specific entry of another category gives way to a less
/// specific one.
#[test]
#[ignore = "10^6 lines: minutes unoptimized; CI runs it in its optimized profile (.ci/run)"]
fn one_category_lines_are_the_reference_bytes_on_a_million_lines() {
    writes_the_reference_bytes(Kind::Blocked, Output::Tsv, Some("malware"), 4);
}
