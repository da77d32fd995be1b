//! The lists the peers are measured on: UT1's `phishing` and `malware` folders read in place
//! (two categories, most URLs in both), and synthetic domain lists made the way
//! `crates/blocklist/bench/gen_domains.py` makes them (the benchmarks' lists), with a fixed seed;
//! and the split of a list into the version before 1,000 additions and the additions.

use std::collections::HashSet;
use std::path::Path;

use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_core::{EntrySet, Membership};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::Entry;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::Result;
use crate::measure::changes::edits::random_positions;

/// The UT1 folders read, in this order (their names are the categories).
pub const UT1_FOLDERS: [&str; 2] = ["phishing", "malware"];

/// The category of a synthetic domain list's entries.
pub const DOMAIN_CATEGORY: &str = "blocked";

/// Syllables of the registrable names (`gen_domains.py`'s, in its order).
const SYLLABLES: &[&str] = &[
    "ba", "be", "bi", "bo", "bu", "ca", "ce", "ci", "co", "cu", "da", "de", "di", "do", "du", "fa",
    "fe", "fi", "fo", "ga", "ge", "go", "ha", "he", "hi", "ho", "ka", "ke", "ki", "ko", "la", "le",
    "li", "lo", "lu", "ma", "me", "mi", "mo", "mu", "na", "ne", "ni", "no", "nu", "pa", "pe", "pi",
    "po", "pu", "ra", "re", "ri", "ro", "ru", "sa", "se", "si", "so", "su", "ta", "te", "ti", "to",
    "tu", "va", "ve", "vi", "vo", "za", "ze", "zo", "bank", "pay", "shop", "mail", "secure",
    "login", "verify", "account", "update", "online", "web", "net", "cloud", "app", "store",
    "free", "win", "bet", "cash", "coin", "wallet", "trade", "click", "track", "ads", "stat",
    "cdn", "media", "news", "info", "host", "serve", "data", "link",
];

/// Top-level domains with the weights of the `.com`-heavy zone distribution
/// (`gen_domains.py`'s).
const TLDS: &[(&str, u64)] = &[
    ("com", 46),
    ("net", 6),
    ("org", 5),
    ("ru", 4),
    ("de", 4),
    ("info", 3),
    ("xyz", 3),
    ("top", 3),
    ("uk", 2),
    ("co.uk", 2),
    ("cn", 2),
    ("br", 2),
    ("fr", 2),
    ("it", 1),
    ("nl", 1),
    ("pl", 1),
    ("io", 1),
    ("online", 1),
    ("site", 1),
    ("club", 1),
    ("tk", 1),
    ("ml", 1),
    ("ga", 1),
    ("cf", 1),
    ("gq", 1),
    ("in", 1),
    ("jp", 1),
    ("es", 1),
    ("biz", 1),
];

/// Subdomain labels put in front of a fifth of the names.
const SUBDOMAINS: &[&str] = &[
    "www", "mail", "cdn", "login", "secure", "m", "api", "static", "img", "app",
];

/// Letters of the random tokens in front of an eighth of the names.
const TOKEN_LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A uniform number in `[0, 1)` from 53 random bits.
pub(crate) fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// One of `items`, uniformly.
pub(crate) fn pick<T: Copy>(rng: &mut SplitMix64, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

/// Fewest characters of a registrable name: see [`word`].
const SHORTEST_LABEL: usize = 4;

/// A registrable name of one to three syllable-words, sometimes with digits or a hyphen. A name
/// of one syllable gets an `x`, and one of three letters or fewer `x`s up to
/// [`SHORTEST_LABEL`]: registries sell names under short words (`co.uk`, `za.com`, `mail.pl`),
/// and such a name would be a public suffix itself, which no blocklist lists.
fn word(rng: &mut SplitMix64) -> String {
    let parts = pick(rng, &[1, 2, 2, 3]);
    let mut name: String = (0..parts).map(|_| pick(rng, SYLLABLES)).collect();
    if parts == 1 {
        name.push('x');
    }
    while name.len() < SHORTEST_LABEL {
        name.push('x');
    }
    let roll = unit(rng);
    if roll < 0.15 {
        name.push_str(&(1 + rng.below(999)).to_string());
    } else if roll < 0.25 {
        name.push('-');
        name.push_str(pick(rng, SYLLABLES));
    }
    name
}

/// A TLD drawn with the weights of [`TLDS`].
fn tld(rng: &mut SplitMix64) -> &'static str {
    let total: u64 = TLDS.iter().map(|t| t.1).sum();
    let mut at = rng.below(total);
    for &(name, weight) in TLDS {
        if at < weight {
            return name;
        }
        at -= weight;
    }
    TLDS[0].0
}

/// One name as `gen_domains.py` makes it: a word under a TLD, a fifth of them behind a common
/// subdomain label and an eighth behind a random 8-character token.
fn domain(rng: &mut SplitMix64) -> String {
    let mut name = format!("{}.{}", word(rng), tld(rng));
    let roll = unit(rng);
    if roll < 0.2 {
        name = format!("{}.{name}", pick(rng, SUBDOMAINS));
    } else if roll < 0.33 {
        let token: String = (0..8)
            .map(|_| char::from(pick(rng, TOKEN_LETTERS)))
            .collect();
        name = format!("{token}.{name}");
    }
    name
}

/// `count` distinct synthetic domain entries from `seed`, in the single category
/// [`DOMAIN_CATEGORY`] (distinct by a 64-bit hash of the name, as the script keeps them).
pub fn synthetic_domains(count: u64, seed: u64) -> EntrySet {
    let mut rng = SplitMix64::new(seed);
    let mut seen = HashSet::with_capacity(count as usize);
    let mut entries = Vec::with_capacity(count as usize);
    while (entries.len() as u64) < count {
        let name = domain(&mut rng);
        if !seen.insert(xxh3_64(name.as_bytes())) {
            continue;
        }
        // Every generated name is a valid domain entry; one that were not would be skipped.
        if let Ok(entry) = Entry::parse(name.as_bytes()) {
            entries.push(entry);
        }
    }
    EntrySet::uncategorized(entries, DOMAIN_CATEGORY)
}

/// UT1's `phishing` and `malware` folders under `root`, read in place, or `None` when either is
/// missing.
pub fn ut1_list(root: &Path) -> Result<Option<EntrySet>> {
    let folders: Vec<_> = UT1_FOLDERS.iter().map(|f| root.join(f)).collect();
    if !folders.iter().all(|f| f.join("urls").is_file()) {
        return Ok(None);
    }
    let sources: Vec<EntrySource> = folders.into_iter().map(EntrySource::Ut1).collect();
    let (set, _) = read_entries(&sources)?;
    Ok(Some(set))
}

/// The entries of `set` at the ascending `positions`, and the others: (taken, kept).
fn partition(set: &EntrySet, positions: &[usize]) -> (EntrySet, EntrySet) {
    let empty = || EntrySet {
        entries: Vec::new(),
        categories: set.categories.clone(),
        membership: Vec::new(),
        exceptions: set.exceptions.clone(),
    };
    let (mut taken, mut kept) = (empty(), empty());
    let mut chosen = positions.iter().peekable();
    for (i, (entry, ids)) in set.entries.iter().zip(&set.membership).enumerate() {
        let side = if chosen.next_if_eq(&&i).is_some() {
            &mut taken
        } else {
            &mut kept
        };
        side.entries.push(entry.clone());
        side.membership.push(ids.clone());
    }
    (taken, kept)
}

/// The list before `count` additions and the additions: `count` entries of `set` chosen with
/// `seed` are the additions, the rest the version before them. So the additions have the
/// list's own mix of kinds and category sets.
pub fn before_additions(set: &EntrySet, count: usize, seed: u64) -> (EntrySet, EntrySet) {
    let positions = random_positions(set.entries.len(), count, seed);
    let (added, before) = partition(set, &positions);
    (before, added)
}

/// The entries of each distinct category set, in order of first appearance: what the
/// information bound's entropy term and the peers' category tables are sized by.
pub fn set_counts(membership: &[Membership]) -> Vec<(Vec<u16>, u64)> {
    let mut counts: Vec<(Vec<u16>, u64)> = Vec::new();
    for ids in membership {
        match counts.iter_mut().find(|(set, _)| set[..] == ids[..]) {
            Some((_, count)) => *count += 1,
            None => counts.push((ids.to_vec(), 1)),
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_domains_are_distinct_repeatable_and_look_like_the_script_s() {
        let set = synthetic_domains(5_000, 37);
        assert_eq!(set.entries.len(), 5_000);
        assert_eq!(set.categories, [DOMAIN_CATEGORY]);
        let keys: HashSet<String> = set.entries.iter().map(Entry::to_key_string).collect();
        assert_eq!(keys.len(), 5_000);
        assert_eq!(
            synthetic_domains(5_000, 37).entries[..10],
            set.entries[..10]
        );
        assert!(set.entries.iter().all(|e| e.key().path.is_empty()));
        // P(.com) = 46/100 before distinctness removes a few: 2,300 ± 5 σ (5 σ = 176).
        let com = keys.iter().filter(|k| k.ends_with(".com")).count();
        assert!((2_124..=2_476).contains(&com), "{com}");
    }

    #[test]
    fn the_version_before_additions_and_the_additions_make_the_list() {
        let set = synthetic_domains(2_000, 5);
        let (before, added) = before_additions(&set, 300, 9);
        assert_eq!((before.entries.len(), added.entries.len()), (1_700, 300));
        let mut all: Vec<String> = before
            .entries
            .iter()
            .chain(&added.entries)
            .map(Entry::to_key_string)
            .collect();
        all.sort();
        let mut original: Vec<String> = set.entries.iter().map(Entry::to_key_string).collect();
        original.sort();
        assert_eq!(all, original);
        assert_eq!(set_counts(&set.membership), vec![(vec![0u16], 2_000)]);
    }
}
