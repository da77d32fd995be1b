//! The URLs the peers are asked: clean URLs of random hosts (the third kind of
//! `crates/blocklist/bench/gen_urls.py`, with a fixed seed) and URLs below a list's entries;
//! which clean URLs no entry lists (the truth, by exact fingerprints), and how many expressions
//! each has (what turns a per-probe rate into a per-URL one).

use std::collections::HashMap;

use phishbloom_core::keys::{expression_hash, fingerprint};
use phishbloom_core::rates::per_item_fpp;
use phishbloom_core::{EntrySet, KeyList};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::{Canonicalizer, Entry, Expression};

use super::lists::{pick, unit};
use crate::measure::changes::edits::random_positions;

/// Path segments of the generated URLs (`gen_urls.py`'s).
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
];
/// Top-level domains of the clean URLs (`gen_urls.py`'s).
const TLDS: &[&str] = &["com", "net", "org", "info", "de", "fr", "co.uk", "io"];
/// Schemes of the clean URLs: none is a bare `host/path` line, as lists and logs have them.
const SCHEMES: &[&str] = &["http://", "https://", ""];
/// Letters of the random hosts.
const HOST_LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Most expressions a generated clean URL has: 3 host suffixes (a subdomain, the name, and
/// `co.uk`) × (1 + 5 path prefixes) = 18, within the lists' bound of 20 (the top label is
/// probed only by a list with single-label domains, none here).
pub const MAX_CLEAN_EXPRESSIONS: usize = 18;

/// `count` clean URLs from `seed`: a random host of 5–15 letters and digits under one of
/// [`TLDS`], a third of them behind `www.`, a path of up to three of [`WORDS`], a query on a
/// quarter of them, each with one of [`SCHEMES`]. Random hosts are not on any list; which ones
/// a list does hold all the same is [`clean_urls_of`]'s to say.
pub fn clean_urls(count: u64, seed: u64) -> KeyList {
    let mut rng = SplitMix64::new(seed);
    let mut urls = KeyList::default();
    let mut url = String::new();
    for i in 0..count {
        url.clear();
        url.push_str(pick(&mut rng, SCHEMES));
        if unit(&mut rng) < 1.0 / 3.0 {
            url.push_str("www.");
        }
        let letters = 5 + rng.below(11);
        url.extend((0..letters).map(|_| char::from(pick(&mut rng, HOST_LETTERS))));
        url.push('.');
        url.push_str(pick(&mut rng, TLDS));
        url.push('/');
        let depth = rng.below(4);
        let path: Vec<&str> = (0..depth).map(|_| pick(&mut rng, WORDS)).collect();
        url.push_str(&path.join("/"));
        if rng.below(4) == 0 {
            url.push_str(&format!("?id={i}"));
        }
        urls.push(url.as_bytes());
    }
    urls
}

/// `count` URLs below entries of `set` chosen with `seed`: `http://` and the entry's key, and
/// below a domain entry a path of one or two [`WORDS`]. Each is listed by its entry.
pub fn listed_urls(set: &EntrySet, count: usize, seed: u64) -> KeyList {
    let mut rng = SplitMix64::new(seed);
    let mut urls = KeyList::default();
    for position in random_positions(set.entries.len(), count, seed) {
        let entry = &set.entries[position];
        let mut url = format!("http://{}", entry.to_key_string());
        if entry.key().path.is_empty() {
            url.push('/');
            url.push_str(pick(&mut rng, WORDS));
            if rng.below(2) == 0 {
                url.push('/');
                url.push_str(pick(&mut rng, WORDS));
            }
        }
        urls.push(url.as_bytes());
    }
    urls
}

/// What the generated clean URLs are for one list.
#[derive(Clone, Debug, Default)]
pub struct CleanUrls {
    /// Which are clean for the list: no expression is an entry's (by exact 64-bit
    /// fingerprints: two distinct expressions share one with probability 2⁻⁶⁴), and the URL
    /// canonicalizes.
    pub mask: Vec<bool>,
    /// How many clean ones have each number of expressions (index = expressions).
    pub expressions: Vec<u64>,
    /// The same for the strings Safe Browsing hashes, which are fewer: the path `/` of each host
    /// suffix is the host's own string ([`v4_skips`]).
    pub v4_expressions: Vec<u64>,
    /// Entries that list at least 1 % of the generated URLs, with how many they list: why a
    /// list holds some of them.
    pub broad: Vec<(String, u64)>,
}

/// Whether an expression of a URL on `host` has no string of its own for Safe Browsing: the
/// path `/` of a host suffix gives `host/`, the string of the host alone, and the top label
/// alone is never checked there.
pub fn v4_skips(host: &str, expression: &Expression<'_>) -> bool {
    expression.path == "/" || phishbloom_url::is_top_label(host, expression.host)
}

/// Adds one URL with `count` expressions to a histogram.
fn count_in(histogram: &mut Vec<u64>, count: usize) {
    if count >= histogram.len() {
        histogram.resize(count + 1, 0);
    }
    histogram[count] += 1;
}

/// Which of `urls` are clean for the list of `entries`, and their expression counts (see
/// [`CleanUrls`]).
pub fn clean_urls_of(urls: &KeyList, entries: &[Entry]) -> CleanUrls {
    let index: HashMap<u64, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (fingerprint(expression_hash(e.key())), i))
        .collect();
    let mut canonicalizer = Canonicalizer::new();
    let mut clean = CleanUrls {
        expressions: vec![0; MAX_CLEAN_EXPRESSIONS + 1],
        v4_expressions: vec![0; MAX_CLEAN_EXPRESSIONS + 1],
        ..CleanUrls::default()
    };
    let mut listing: HashMap<usize, u64> = HashMap::new();
    for line in urls.iter() {
        let Ok(url) = canonicalizer.canonicalize(line) else {
            clean.mask.push(false);
            continue;
        };
        let listed = url
            .expressions()
            .find_map(|e| index.get(&fingerprint(expression_hash(e))));
        if let Some(&entry) = listed {
            *listing.entry(entry).or_default() += 1;
            clean.mask.push(false);
            continue;
        }
        clean.mask.push(true);
        // The top label is probed only by a list with single-label domains (none here).
        count_in(&mut clean.expressions, url.expression_count_without_top());
        let v4 = url
            .expressions()
            .filter(|e| !v4_skips(url.host(), e))
            .count();
        count_in(&mut clean.v4_expressions, v4);
    }
    let least = (urls.len() as u64).div_ceil(100);
    clean.broad = listing
        .into_iter()
        .filter(|&(_, count)| count >= least)
        .map(|(entry, count)| (entries[entry].to_key_string(), count))
        .collect();
    clean
        .broad
        .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    clean
}

/// The per-URL rate of a structure whose probes each match a stranger with probability
/// `per_probe`, over URLs with these expression counts: the mean of `1 − (1 − q)^E`.
pub fn per_url_rate(per_probe: f64, histogram: &[u64]) -> f64 {
    let urls: u64 = histogram.iter().sum();
    let sum: f64 = histogram
        .iter()
        .enumerate()
        .map(|(expressions, &count)| count as f64 * per_item_fpp(per_probe, expressions as u32))
        .sum();
    sum / urls.max(1) as f64
}

/// The mean number of expressions of URLs with this histogram.
pub fn mean_expressions(histogram: &[u64]) -> f64 {
    let urls: u64 = histogram.iter().sum();
    let sum: u64 = histogram
        .iter()
        .enumerate()
        .map(|(expressions, &count)| expressions as u64 * count)
        .sum();
    sum as f64 / urls.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::super::lists::synthetic_domains;
    use super::*;

    #[test]
    fn clean_urls_are_valid_clean_and_within_the_expression_bound() {
        let urls = clean_urls(20_000, 15);
        assert_eq!(urls.len(), 20_000);
        assert_eq!(clean_urls(3, 15).get(2), urls.get(2));
        let entries = [Entry::parse(b"evil.com").unwrap()];
        let clean = clean_urls_of(&urls, &entries);
        assert_eq!(clean.mask.iter().filter(|&&clean| clean).count(), 20_000);
        assert!(clean.broad.is_empty());
        let histogram = &clean.expressions;
        assert_eq!(histogram.len(), MAX_CLEAN_EXPRESSIONS + 1);
        assert_eq!(histogram.iter().sum::<u64>(), 20_000);
        // One string fewer for Safe Browsing per host suffix: 1, plus one behind `www.` (a
        // third) and one under `co.uk` (an eighth): 1.46 on average.
        let v4 = mean_expressions(&clean.v4_expressions);
        let mean = mean_expressions(histogram);
        assert!((1.4..1.52).contains(&(mean - v4)), "{mean} {v4}");
        assert!((4.0..12.0).contains(&mean), "{mean}");
        // At 10⁻⁶ per probe a URL of E expressions sees about E · 10⁻⁶.
        let rate = per_url_rate(1e-6, histogram);
        assert!((rate / (mean * 1e-6) - 1.0).abs() < 1e-4, "{rate}");
    }

    #[test]
    fn listed_urls_hit_their_entries_and_broad_entries_are_named() {
        let set = synthetic_domains(1_000, 3);
        let urls = listed_urls(&set, 200, 4);
        assert_eq!(urls.len(), 200);
        let clean = clean_urls_of(&urls, &set.entries);
        assert!(clean.mask.iter().all(|&clean| !clean));
        // A list that holds `co.uk` lists every URL under it: an eighth of the clean ones.
        let urls = clean_urls(8_000, 15);
        let entries = [Entry::parse(b"co.uk").unwrap()];
        let clean = clean_urls_of(&urls, &entries);
        assert_eq!(clean.broad.len(), 1);
        let (name, count) = &clean.broad[0];
        assert_eq!(name, "co.uk");
        // 1,000 expected; 5 σ ≈ 148.
        assert!((852..=1_148).contains(count), "{count}");
        let kept = clean.mask.iter().filter(|&&clean| clean).count() as u64;
        assert_eq!(kept + count, 8_000);
    }
}
