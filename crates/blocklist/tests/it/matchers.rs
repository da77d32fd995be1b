//! The engines against real (UT1) or generated lists: zero false negatives for URLs below every
//! entry in every kind, exact agreement with verification, and the per-URL false-positive rate
//! on foreign URLs.

use std::path::PathBuf;

use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_blocklist::source::{Input, ListOptions};
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{Matcher, Scratch};
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::{canonicalize, CanonicalUrl, Entry, ExpressionKind};

/// `../shared/data/ut1` seen from this crate, when present (set `PHISHBLOOM_TEST_GENERATED` to
/// run on generated lists as a machine without the data does).
fn ut1() -> Option<PathBuf> {
    if std::env::var_os("PHISHBLOOM_TEST_GENERATED").is_some() {
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ut1");
    dir.join("phishing/urls").is_file().then_some(dir)
}

/// Reads UT1 categories, or generates a list of the same shape when the data is absent.
fn entries(categories: &[&str], generated: usize, seed: u64) -> Vec<Entry> {
    if let Some(dir) = ut1() {
        let sources: Vec<_> = categories
            .iter()
            .map(|c| EntrySource::Ut1(dir.join(c)))
            .collect();
        return read_entries(&sources).unwrap().0.entries;
    }
    let mut rng = SplitMix64::new(seed);
    (0..generated)
        .map(|i| {
            let host = format!("{}.{}.com", word(&mut rng), word(&mut rng));
            let line = match i % 3 {
                0 => host,
                1 => format!("{host}/{}", word(&mut rng)),
                _ => format!("{host}/{}/{}.php", word(&mut rng), word(&mut rng)),
            };
            Entry::parse(line.as_bytes()).unwrap()
        })
        .collect()
}

fn word(rng: &mut SplitMix64) -> String {
    (0..3 + rng.below(8))
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

/// URLs below an entry that must be listed: deeper paths, a query, uppercase host, default
/// port, fragment, `www.` for domain entries, tabs and CR/LF inside.
fn urls_below(entry: &Entry) -> Vec<String> {
    let key = entry.to_key_string();
    let (host, path) = match key.find('/') {
        Some(at) => key.split_at(at),
        None => (key.as_str(), ""),
    };
    if path.contains('?') {
        // A query entry matches exactly that URL.
        return vec![format!("HTTP://{}:80{path}#frag", host.to_uppercase())];
    }
    let path = path.trim_end_matches('/');
    let mut urls = vec![
        format!("http://{host}{path}/extra/seg?x=1"),
        format!("HTTP://{}:80{path}#frag", host.to_uppercase()),
        format!("https://{host}{path}/a\t/b\r\n"),
    ];
    if entry.kind() == ExpressionKind::Domain {
        urls.push(format!("www.{host}/deep/path/"));
        urls.push(format!("a.b.{host}"));
    }
    urls
}

/// A blocklist of `list` of `kind` at `fpp` per URL (E = 20).
fn blocklist(list: &[Entry], kind: Kind, fpp: f64, verify: bool) -> Blocklist {
    built(list, kind, fpp, verify, true)
}

/// [`blocklist`], with or without the host gate.
fn built(list: &[Entry], kind: Kind, fpp: f64, verify: bool, host_gate: bool) -> Blocklist {
    let options = BuildOptions {
        kind,
        fpp,
        verify,
        host_gate,
        ..BuildOptions::default()
    };
    Blocklist::from_entries(&EntrySet::uncategorized(list.to_vec(), "test"), &options).unwrap()
}

#[test]
fn no_false_negatives_below_any_entry() {
    let list = entries(&["phishing", "malware", "bank"], 20_000, 1);
    let exact = ExactMatcher::new(&list);
    let kinds: Vec<Blocklist> = [Kind::Blocked, Kind::Classic, Kind::Cabf]
        .into_iter()
        .map(|kind| blocklist(&list, kind, 0.01, true))
        .collect();
    let mut scratch = Scratch::default();
    for entry in &list {
        for raw in urls_below(entry) {
            let url = canonicalize(raw.as_bytes()).unwrap();
            assert!(
                exact.find(&url, &mut scratch).is_some(),
                "exact missed {raw:?} for {entry}"
            );
            for list in &kinds {
                assert!(
                    list.find_url(&url, &mut scratch).is_some(),
                    "{} missed {raw:?} for {entry}",
                    list.kind()
                );
            }
        }
    }
}

/// URLs of other categories plus random ones, canonicalized.
fn foreign_urls(count: usize, seed: u64) -> Vec<CanonicalUrl> {
    let mut urls: Vec<CanonicalUrl> = entries(&["gambling"], 0, seed)
        .iter()
        .flat_map(|e| urls_below(e).into_iter().take(1))
        .filter_map(|u| canonicalize(u.as_bytes()).ok())
        .collect();
    let dataset =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/dataset.csv");
    if dataset.is_file() {
        let options = ListOptions {
            label: phishbloom_blocklist::source::LabelFilter::Equals {
                column: "isMalicious".into(),
                value: "1".into(),
            },
            scheme: phishbloom_core::keys::KeyScheme::Exact,
            ..ListOptions::default()
        };
        let (benign, _) =
            phishbloom_blocklist::source::read_list(&Input::Path(dataset), &options, &mut |_| {})
                .unwrap();
        urls.extend(benign.iter().filter_map(|u| canonicalize(u).ok()));
    }
    let mut rng = SplitMix64::new(seed);
    while urls.len() < count {
        let raw = format!(
            "http://{}.{}.net/{}/{}",
            word(&mut rng),
            word(&mut rng),
            word(&mut rng),
            word(&mut rng)
        );
        urls.push(canonicalize(raw.as_bytes()).unwrap());
    }
    urls
}

/// URLs below every third entry, then 60,000 foreign URLs (generated from `seed`).
fn mixed_stream(list: &[Entry], seed: u64) -> Vec<CanonicalUrl> {
    let mut stream: Vec<CanonicalUrl> = list
        .iter()
        .step_by(3)
        .flat_map(urls_below)
        .filter_map(|u| canonicalize(u.as_bytes()).ok())
        .collect();
    stream.extend(foreign_urls(60_000, seed));
    stream
}

#[test]
fn verified_bloom_agrees_with_exact_on_a_mixed_stream() {
    let list = entries(&["phishing", "malware"], 20_000, 2);
    let exact = ExactMatcher::new(&list);
    // A loose filter (5 % per URL) so that many Bloom hits need the verification stage; without
    // the host gate, which would spare most foreign URLs their probes.
    let verified = built(&list, Kind::Blocked, 0.05, true, false);
    let unverified = built(&list, Kind::Blocked, 0.05, false, false);
    let mut scratch = Scratch::default();
    let stream = mixed_stream(&list, 3);
    let (mut listed, mut rejected_by_verification) = (0, 0);
    for url in &stream {
        let want = exact.find(url, &mut scratch);
        let got = verified.find_url(url, &mut scratch);
        assert_eq!(got.is_some(), want.is_some(), "{}", url.as_str());
        if let (Some(got), Some(want)) = (&got, &want) {
            // The same entry as the exact matcher's first match would be ideal, but a URL may
            // match several entries; the reported one must be an entry that lists the URL.
            assert!(
                url.expressions()
                    .any(|e| e.to_key_string() == got.expression),
                "{} reported {got:?}, exact {want:?}",
                url.as_str()
            );
        }
        listed += usize::from(want.is_some());
        rejected_by_verification +=
            usize::from(want.is_none() && unverified.find_url(url, &mut scratch).is_some());
    }
    assert!(listed > 1000, "{listed}");
    // The stream exercised the verification stage: without it, some of these were listed.
    assert!(rejected_by_verification > 100, "{rejected_by_verification}");
}

#[test]
fn the_host_gate_finds_every_listed_url_and_only_removes_false_positives() {
    let list = entries(&["phishing", "malware"], 20_000, 5);
    let exact = ExactMatcher::new(&list);
    let mut scratch = Scratch::default();
    let stream = mixed_stream(&list, 6);
    for kind in [Kind::Blocked, Kind::Split, Kind::Counting] {
        // Loose and unverified, so that the ungated list answers many foreign URLs listed.
        let gated = built(&list, kind, 0.05, false, true);
        let open = built(&list, kind, 0.05, false, false);
        assert!(gated.url_gate().is_some() && open.url_gate().is_none());
        // Saved and read back, the gate answers the same.
        let gated = Blocklist::from_bytes("gated", &gated.to_bytes()).unwrap();
        assert!(gated.url_gate().is_some());
        let (mut listed, mut gated_extra, mut open_extra) = (0, 0, 0);
        for url in &stream {
            let want = exact.find(url, &mut scratch).is_some();
            let with_gate = gated.find_url(url, &mut scratch).is_some();
            let without = open.find_url(url, &mut scratch).is_some();
            // Exact ⊆ gated ⊆ ungated: the gate never hides an entry, and lets through only
            // what the filter alone would have answered.
            assert!(with_gate || !want, "{kind}: {} missed", url.as_str());
            assert!(without || !with_gate, "{kind}: {} only gated", url.as_str());
            listed += usize::from(want);
            gated_extra += usize::from(with_gate && !want);
            open_extra += usize::from(without && !want);
        }
        assert!(listed > 1000, "{listed}");
        // At 5 % per URL the ungated list has thousands of false positives; the gate (2 % per
        // host suffix, then the same filter) removes most of them.
        assert!(open_extra > 500, "{kind}: {open_extra}");
        assert!(
            gated_extra * 5 < open_extra,
            "{kind}: {gated_extra} vs {open_extra}"
        );
    }
}

#[test]
fn per_url_false_positive_rate_on_foreign_urls_meets_the_target() {
    let list = entries(&["phishing", "malware"], 20_000, 4);
    let exact = ExactMatcher::new(&list);
    let target = 0.01;
    let bloom = blocklist(&list, Kind::Blocked, target, false);
    let mut scratch = Scratch::default();
    let (mut queries, mut false_positives) = (0u64, 0u64);
    for url in foreign_urls(200_000, 5) {
        // Only URLs with at most E expressions carry the per-URL promise.
        if url.expression_count() > 20 || exact.find(&url, &mut scratch).is_some() {
            continue;
        }
        queries += 1;
        false_positives += u64::from(bloom.find_url(&url, &mut scratch).is_some());
    }
    let rate = false_positives as f64 / queries as f64;
    let sigma = (target * (1.0 - target) / queries as f64).sqrt();
    assert!(queries > 50_000, "{queries}");
    assert!(
        rate <= target + 4.0 * sigma,
        "{false_positives}/{queries} = {rate}"
    );
}
