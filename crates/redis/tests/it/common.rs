//! Shared by the Redis integration tests: the UT1-built list (or a generated one where the data
//! is absent), held-out URLs, local and remote verdicts.

#![allow(dead_code)] // each test file uses its own part of these helpers

use phishbloom_blocklist::BlocklistFile;
use std::path::{Path, PathBuf};

use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{Matcher, Scratch};
use phishbloom_core::resolve::Verdict;
use phishbloom_core::Blocklist;
use phishbloom_core::BuildOptions;
use phishbloom_core::EntrySet;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};
use phishbloom_url::Entry;

/// `../shared/data/ut1` seen from the repository root, read in place when present.
pub fn ut1_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ut1");
    root.join("phishing/urls").is_file().then_some(root)
}

/// The list's entries and held-out query URLs (lines that are not URLs included).
pub struct Lists {
    /// The entries the list is built from.
    pub entries: Vec<Entry>,
    /// Queries that are not entries (some may still be listed through an entry).
    pub held_out: Vec<Vec<u8>>,
    /// Where they came from, for messages.
    pub source: &'static str,
}

/// UT1's phishing URLs as the list and the gambling and games domains and the games and adult
/// URLs as held-out queries (UT1's malware URLs are nearly all phishing ones too); where UT1 is
/// absent, a generated list of the same shape (seeded).
pub fn lists() -> Lists {
    if let Some(root) = ut1_root() {
        let (entries, _) = read_entries(&[EntrySource::Ut1(root.join("phishing"))]).unwrap();
        let mut held_out = Vec::new();
        for file in [
            "gambling/domains",
            "games/domains",
            "games/urls",
            "adult/urls",
        ] {
            let text = std::fs::read(root.join(file)).unwrap_or_default();
            held_out.extend(
                text.split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec),
            );
        }
        return Lists {
            entries: entries.entries,
            held_out,
            source: "UT1 phishing, held out: UT1 gambling, games, adult",
        };
    }
    let mut rng = SplitMix64::new(2026);
    let word = |rng: &mut SplitMix64| -> String {
        (0..6 + rng.below(6))
            .map(|_| char::from(b'a' + rng.below(26) as u8))
            .collect()
    };
    let mut entries = Vec::new();
    for i in 0..8000 {
        let host = format!("{}.{}.example", word(&mut rng), word(&mut rng));
        let line = if i % 3 == 0 {
            host
        } else {
            format!("{host}/{}/{}", word(&mut rng), word(&mut rng))
        };
        entries.push(Entry::parse(line.as_bytes()).unwrap());
    }
    let held_out = (0..20_000)
        .map(|_| {
            format!(
                "http://{}.{}.test/{}?q={}",
                word(&mut rng),
                word(&mut rng),
                word(&mut rng),
                rng.below(1000)
            )
            .into_bytes()
        })
        .collect();
    Lists {
        entries,
        held_out,
        source: "generated (UT1 absent)",
    }
}

/// Builds a blocklist from `entries`, saves it under `dir` and opens the file again.
pub fn build(
    entries: &[Entry],
    fpp: f64,
    verify: bool,
    dir: &Path,
    name: &str,
) -> (Blocklist, PathBuf) {
    let options = BuildOptions {
        fpp,
        verify,
        name: name.to_string(),
        // Room for keys `add` puts in: a list sized for exactly its entries is full.
        capacity: Some(entries.len() as u64 + 16),
        // A list in Redis has no host gate (keys added through Redis could not be vouched
        // for): the file is compared with its filter alone, as Redis probes it.
        host_gate: false,
        ..BuildOptions::default()
    };
    let path = dir.join(format!("{name}.bloom"));
    Blocklist::from_entries(&EntrySet::uncategorized(entries.to_vec(), "test"), &options)
        .unwrap()
        .save(&path, &[])
        .unwrap();
    (Blocklist::open(&path).unwrap(), path)
}

/// The local file's verdicts.
pub fn local_verdicts(list: &Blocklist, items: &[&[u8]]) -> Vec<Verdict> {
    let mut out = Vec::new();
    list.check_batch(items, &mut Scratch::default(), &mut out);
    out
}

/// The verdicts through Redis, `batch` items per round trip.
pub fn remote_verdicts(remote: &mut RedisBlocklist, items: &[&[u8]], batch: usize) -> Vec<Verdict> {
    let mut out = Vec::new();
    for chunk in items.chunks(batch) {
        remote.check_batch(chunk, &mut out).unwrap();
    }
    out
}

/// Whether the exact matcher lists `item` (the truth a false positive is measured against).
pub fn truly_listed(exact: &ExactMatcher, item: &[u8]) -> bool {
    phishbloom_url::canonicalize(item)
        .ok()
        .is_some_and(|url| exact.find(&url, &mut Scratch::default()).is_some())
}

/// Pushes the blocklist `list` (opened from `path`) as `name`.
pub fn push_file(
    target: &Target,
    name: &str,
    list: &Blocklist,
    path: &std::path::Path,
    options: &PushOptions,
) {
    let source = PushSource::of(list, path).unwrap();
    push(&mut target.connect().unwrap(), name, &source, options).unwrap();
}
