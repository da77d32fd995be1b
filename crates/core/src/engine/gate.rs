//! The host gate of a list of URL entries: a small Bloom filter of the hosts its entries name,
//! asked before a URL's expressions are hashed and probed.
//!
//! A URL has up to 5 host suffixes and up to 6 path prefixes per suffix: up to 30 expressions,
//! each the combination of two hashes, each a probe of the list's filter. An expression can hold
//! an entry only if its host suffix is the host of some entry, and an expression with a path
//! only if that host has an entry with a path. The gate holds two keys, both from the
//! xxh3-128 of a host (the hash [`crate::keys::expression_hash`] already starts from): the hash
//! itself for the host of every entry, and the hash with its halves swapped ([`path_key`]) for
//! the host of every entry with a path. So a URL pays one hash and one or two probes of a small,
//! cache-resident filter per host suffix ([`HostGate::pass`]); a suffix that is no entry's host
//! has no expression probed, one that is only a domain entry's host has its domain expression
//! probed, and only the others have their path prefixes hashed and probed. For clean traffic
//! that is almost no suffix; for a URL below a domain entry, one probe.
//!
//! **No false negatives.** The gate is asked only whether a suffix *may* be an entry's host; a
//! Bloom filter never says "no" for a host inserted into it, and every writer inserts the host
//! of every entry it adds (build, `add`). A change whose entries' hosts are unknown — a delta
//! (it names entries by fingerprint only) or a merge with a list without a gate — drops the gate
//! ([`super::urls::UrlFilter::layers_mut`]); the list then probes every expression, as a list
//! without a gate always does. Removing entries leaves their hosts in the gate: a stale host
//! costs time, never an answer. A crafted host that collides in the gate likewise only costs the
//! full probe. So the gate can only lower the false-positive rate a list was sized for (its hits
//! still go through the same filter and verification), never raise it.

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{
    AnyFilter, BlockedBloomFilter, Error as FilterError, Filter, HashStrategy, KeyHash,
    SplitBlockBloomFilter,
};

use phishbloom_url::{is_top_label, HostSuffixes};

use crate::error::Result;
use crate::format::tag;

/// The gate's false-positive rate per host suffix: 2 %. A clean URL with 4 host suffixes then
/// probes its expressions for one of them with probability ≈ 8 %, which adds a few percent to
/// its cost, for about 10 bits per distinct host (a split-block filter at 2 %) — small beside
/// the list's own filter (≈ 17 bits per entry at its default rate) and verification (64 bits).
pub const HOST_GATE_FPP: f64 = 0.02;

/// What the gate lets through of one host suffix ([`HostGate::pass`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// No entry has this host: none of the suffix's expressions is probed.
    Nothing,
    /// Only entries without a path may have this host: its domain expression is probed.
    Domain,
    /// Entries with a path may have this host: every expression of the suffix is probed.
    All,
    /// Entries may have this host: its domain expression is probed, and each path prefix whose
    /// length the gate holds for it ([`HostGate::passes_path`]).
    ByLength,
}

/// A host suffix a gate let through ([`HostGate::each_passing`]): what the walk of a URL's
/// expressions needs of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    /// Where the suffix starts in the host.
    pub start: u32,
    /// Its xxh3-128 ([`KeyHash::of`]), which the gate's keys and its expressions' hashes start
    /// from.
    pub hash: KeyHash,
    /// What the gate let through of it (never [`Pass::Nothing`]).
    pub pass: Pass,
}

/// The blocked gate's key of "an entry with a path has this host": the host's hash with its
/// halves swapped, an independent 128-bit value (the halves of xxh3-128 are), so it lands in
/// another block.
#[inline]
pub fn path_key(host: KeyHash) -> KeyHash {
    KeyHash {
        h1: host.h2,
        h2: host.h1,
    }
}

/// The split-block gate's key of "an entry whose path is `len` bytes long has this host": the
/// SplitMix64 output ([`SplitMix64`], a bijection whose every output bit depends on every input
/// bit) of the host hash's second half — independent of the first half, which keys the host
/// itself — XOR the length. The split-block layout reads only `h1`.
#[inline]
pub fn length_key(host: KeyHash, len: u32) -> KeyHash {
    KeyHash {
        h1: SplitMix64::new(host.h2 ^ u64::from(len)).next_u64(),
        h2: 0,
    }
}

/// The hosts of a list's entries, keyed by each host's xxh3-128 ([`KeyHash::of`]), in a Bloom
/// filter of one of two layouts:
///
/// - **split-block** (what this version writes, [`tag::SPLIT_HOST_GATE`]): one 256-bit block and
///   eight bits per key, from the key's first half — a probe is a few vector instructions, about
///   half the blocked probe's. Beside each host, the lengths of its entries' paths
///   ([`length_key`]): a URL's path prefix of another length is neither hashed nor probed.
/// - **blocked** (what files written before it hold, [`tag::HOST_GATE`]): one 512-bit block per
///   key, six bits inside; beside each host, whether it has an entry with a path
///   ([`path_key`]). Read, added to and merged as before.
#[derive(Clone, Debug)]
pub struct HostGate {
    filter: GateFilter,
}

/// The filter of a [`HostGate`], in its layout.
#[derive(Clone, Debug)]
enum GateFilter {
    Blocked(BlockedBloomFilter),
    Split(SplitBlockBloomFilter),
    /// Hosts alone, split-block (a compact list's: [`tag::HOSTS_GATE`]); a host it holds has
    /// every expression probed.
    Hosts(SplitBlockBloomFilter),
}

/// The rate of a compact list's gate per host suffix: 1/32. It holds hosts alone, at about 8
/// bits per distinct host — a fifth of a compact table's bits per entry for a list of several
/// entries a host, where the 2 % gate of the other kinds ([`HOST_GATE_FPP`], with its
/// path-length keys) would add a third — and a clean URL of 3 host suffixes is probed in full
/// about a tenth of the time.
pub const COMPACT_GATE_FPP: f64 = 1.0 / 32.0;

impl HostGate {
    /// A gate holding the hosts of `entries` (`(host, length of the entry's path)`, 0 for a
    /// domain entry), sized for `capacity` keys (or for the distinct keys given, if more), in the
    /// split-block layout. A list sizes its gate for the entries its structure was sized for, so
    /// that two shards built with the same ample capacity have gates of the same size, which
    /// merge.
    pub fn of_entries<'a>(
        entries: impl IntoIterator<Item = (&'a str, usize)>,
        capacity: u64,
    ) -> Result<Self> {
        let mut keys: Vec<KeyHash> = Vec::new();
        for (host, path_len) in entries {
            let hash = KeyHash::of(host.as_bytes());
            keys.push(hash);
            if path_len > 0 {
                keys.push(length_key(hash, key_length(path_len)));
            }
        }
        keys.sort_unstable_by_key(|h| (h.h1, h.h2));
        keys.dedup();
        let capacity = (keys.len() as u64).max(capacity).max(1);
        let mut filter =
            SplitBlockBloomFilter::with_strategy(capacity, HOST_GATE_FPP, HashStrategy::Xxh3)?;
        for key in keys {
            filter.insert_hash(key);
        }
        Ok(HostGate {
            filter: GateFilter::Split(filter),
        })
    }

    /// A gate of `hosts` alone (each host once or more) at `fpp` per host suffix, split-block:
    /// a host it holds has all its expressions probed ([`Pass::All`]).
    pub fn of_hosts<'a>(hosts: impl IntoIterator<Item = &'a str>, fpp: f64) -> Result<Self> {
        let mut keys: Vec<u64> = hosts
            .into_iter()
            .map(|host| KeyHash::of(host.as_bytes()).h1)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut filter = SplitBlockBloomFilter::with_strategy(
            (keys.len() as u64).max(1),
            fpp,
            HashStrategy::Xxh3,
        )?;
        for h1 in keys {
            filter.insert_hash(KeyHash { h1, h2: 0 });
        }
        Ok(HostGate {
            filter: GateFilter::Hosts(filter),
        })
    }

    /// A hosts-only gate read from a file ([`tag::HOSTS_GATE`], a split-block xxh3 filter);
    /// `None` for another layout.
    pub fn hosts_from_filter(filter: AnyFilter) -> Option<Self> {
        match filter {
            AnyFilter::Split(filter) => Some(HostGate {
                filter: GateFilter::Hosts(filter),
            }),
            _ => None,
        }
    }

    /// A gate read from a file: its filter section ([`tag::HOST_GATE`] holds a blocked one,
    /// [`tag::SPLIT_HOST_GATE`] a split-block one; both hashed with xxh3, which the reader
    /// checks). `None` for another layout.
    pub fn from_filter(filter: AnyFilter) -> Option<Self> {
        let filter = match filter {
            AnyFilter::Blocked(filter) => GateFilter::Blocked(filter),
            AnyFilter::Split(filter) => GateFilter::Split(filter),
            AnyFilter::Classic(_) => return None,
        };
        Some(HostGate { filter })
    }

    /// Adds the host of a new entry whose path is `path_len` bytes long (0: a domain entry).
    pub fn insert(&mut self, host: &str, path_len: usize) {
        let hash = KeyHash::of(host.as_bytes());
        match &mut self.filter {
            GateFilter::Blocked(filter) => {
                filter.insert_hash(hash);
                if path_len > 0 {
                    filter.insert_hash(path_key(hash));
                }
            }
            GateFilter::Split(filter) => {
                filter.insert_hash(hash);
                if path_len > 0 {
                    filter.insert_hash(length_key(hash, key_length(path_len)));
                }
            }
            GateFilter::Hosts(filter) => filter.insert_hash(hash),
        }
    }

    /// Asks the gate about each suffix of the canonical `host` (an IP address, `is_ip`, has
    /// only itself; the top label only with `tops`), in [`HostSuffixes`] order, and calls
    /// `keep` for each it lets through ([`HostGate::pass`]): a suffix left out is certainly no
    /// entry's host.
    #[inline]
    pub fn each_passing(&self, host: &str, is_ip: bool, tops: bool, mut keep: impl FnMut(Kept)) {
        // Only the first suffix can be the top label.
        let mut first = tops;
        for suffix in HostSuffixes::of_host_with(host, is_ip, tops) {
            let hash = KeyHash::of(suffix.as_bytes());
            let pass = match self.pass(hash) {
                // The top label stands for a domain entry only.
                Pass::All | Pass::ByLength if first && is_top_label(host, suffix) => Pass::Domain,
                pass => pass,
            };
            first = false;
            if pass != Pass::Nothing {
                keep(Kept {
                    // Hosts are at most a line long, far below 4 GiB (lines are capped).
                    start: (host.len() - suffix.len()) as u32,
                    hash,
                    pass,
                });
            }
        }
    }

    /// What to probe of a host suffix whose [`KeyHash::of`] is `host`: [`Pass::Nothing`] and
    /// [`Pass::Domain`] are certain (no entry, or no entry with a path, has the host).
    /// ([`Pass::ByLength`]: the split-block gate, which answers for each path length.)
    #[inline(always)]
    pub fn pass(&self, host: KeyHash) -> Pass {
        match &self.filter {
            GateFilter::Blocked(filter) if !filter.contains_hash(host) => Pass::Nothing,
            GateFilter::Blocked(filter) if filter.contains_hash(path_key(host)) => Pass::All,
            GateFilter::Blocked(_) => Pass::Domain,
            GateFilter::Split(filter) if !filter.contains_hash(host) => Pass::Nothing,
            GateFilter::Split(_) => Pass::ByLength,
            GateFilter::Hosts(filter) if !filter.contains_hash(host) => Pass::Nothing,
            GateFilter::Hosts(_) => Pass::All,
        }
    }

    /// Whether an entry whose host hashes to `host` may have a path of `len` bytes (asked for
    /// a suffix that [`HostGate::pass`] answered [`Pass::ByLength`] for; a blocked gate, which
    /// does not know lengths, says yes). `false` is certain.
    #[inline(always)]
    pub fn passes_path(&self, host: KeyHash, len: u32) -> bool {
        match &self.filter {
            GateFilter::Blocked(_) | GateFilter::Hosts(_) => true,
            GateFilter::Split(filter) => filter.contains_hash(length_key(host, len)),
        }
    }

    /// Adds every host of `other` (a gate of the same layout and size: two lists built alike).
    pub fn union(&mut self, other: &HostGate) -> Result<()> {
        match (&mut self.filter, &other.filter) {
            (GateFilter::Blocked(mine), GateFilter::Blocked(theirs)) => Ok(mine.union(theirs)?),
            (GateFilter::Split(mine), GateFilter::Split(theirs)) => Ok(mine.union(theirs)?),
            (GateFilter::Hosts(mine), GateFilter::Hosts(theirs)) => Ok(mine.union(theirs)?),
            (mine, theirs) => Err(FilterError::Incompatible {
                parameter: "host gate layout",
                left: mine.layout().to_owned(),
                right: theirs.layout().to_owned(),
            }
            .into()),
        }
    }

    /// The filter, as a file stores it.
    pub fn filter(&self) -> &dyn Filter {
        match &self.filter {
            GateFilter::Blocked(filter) => filter,
            GateFilter::Split(filter) | GateFilter::Hosts(filter) => filter,
        }
    }

    /// The section tag a file stores the gate under ([`tag::HOST_GATE`] for a blocked gate,
    /// [`tag::SPLIT_HOST_GATE`] for a split-block one).
    pub fn section_tag(&self) -> u16 {
        match &self.filter {
            GateFilter::Blocked(_) => tag::HOST_GATE,
            GateFilter::Split(_) => tag::SPLIT_HOST_GATE,
            GateFilter::Hosts(_) => tag::HOSTS_GATE,
        }
    }
}

/// A path length as [`length_key`] takes it: paths are at most a line long, far below 4 GiB
/// (lines are capped), and a longer one would only share its key with others.
fn key_length(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

impl GateFilter {
    /// The layout's name, for messages.
    fn layout(&self) -> &'static str {
        match self {
            GateFilter::Blocked(_) => "blocked",
            GateFilter::Split(_) => "split",
            GateFilter::Hosts(_) => "split, hosts only",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(gate: &HostGate, host: &str) -> Pass {
        gate.pass(KeyHash::of(host.as_bytes()))
    }

    fn passes_path(gate: &HostGate, host: &str, len: u32) -> bool {
        gate.passes_path(KeyHash::of(host.as_bytes()), len)
    }

    #[test]
    fn every_inserted_host_passes_as_its_entries_need_and_most_others_do_not() {
        let hosts: Vec<String> = (0..10_000).map(|i| format!("host{i}.example")).collect();
        // Even hosts have an entry with a 6-byte path (`/login`), odd ones only domain entries.
        let entries = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), if i % 2 == 0 { 6 } else { 0 }));
        let mut gate = HostGate::of_entries(entries, 15_100).unwrap();
        gate.insert("added.example", 0);
        gate.insert("added-path.example", 9);
        for (i, host) in hosts.iter().enumerate() {
            assert_eq!(pass(&gate, host), Pass::ByLength, "{host}");
            if i % 2 == 0 {
                assert!(passes_path(&gate, host, 6), "{host}");
            }
        }
        assert_eq!(pass(&gate, "added.example"), Pass::ByLength);
        assert!(passes_path(&gate, "added-path.example", 9));
        // Each count below is binomial at the gate's 2 %: 20,000 strangers, 400 expected,
        // σ ≈ 20, so 600 is 10 σ above; 5,000 domain-only hosts asked for a 6-byte path and
        // 5,000 path hosts asked for a 7-byte one, 100 expected each, σ ≈ 10, so 200 is 10 σ
        // above. The keys are fixed: the counts are too.
        let passed = (0..20_000)
            .filter(|i| pass(&gate, &format!("stranger{i}.test")) != Pass::Nothing)
            .count();
        assert!(passed < 600, "{passed} of 20,000 strangers passed");
        let widened = hosts
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|h| passes_path(&gate, h, 6))
            .count();
        assert!(
            widened < 200,
            "{widened} of 5,000 domain-only hosts let a path through"
        );
        let other_length = hosts
            .iter()
            .step_by(2)
            .filter(|h| passes_path(&gate, h, 7))
            .count();
        assert!(
            other_length < 200,
            "{other_length} of 5,000 let another length through"
        );
    }

    /// [`HostGate::each_passing`] keeps the suffixes that are an entry's host (and, at the
    /// gate's rate, a few others), where each starts, its xxh3-128 and its pass.
    #[test]
    fn each_passing_keeps_the_entries_hosts_among_a_hosts_suffixes() {
        let gate = HostGate::of_entries([("evil.com", 6), ("b.c.evil.com", 0)], 100).unwrap();
        let mut kept = Vec::new();
        gate.each_passing("a.b.c.evil.com", false, true, |k| kept.push(k));
        for (start, suffix) in [(6, "evil.com"), (2, "b.c.evil.com")] {
            let found = kept.iter().find(|k| k.start == start).expect(suffix);
            assert_eq!(found.hash, KeyHash::of(suffix.as_bytes()));
            assert_eq!(found.pass, Pass::ByLength);
        }
        let mut ip = Vec::new();
        gate.each_passing("1.2.3.4", true, true, |k| ip.push(k.start));
        assert!(ip.iter().all(|&start| start == 0), "an IP is only itself");
    }

    #[test]
    fn duplicates_are_sized_once_and_an_empty_list_has_a_gate() {
        let once = HostGate::of_entries([("a.example", 0); 1000], 0).unwrap();
        let single = HostGate::of_entries([("a.example", 0)], 0).unwrap();
        assert_eq!(
            once.filter().params().num_bits,
            single.filter().params().num_bits
        );
        let sized = HostGate::of_entries([("a.example", 3)], 1000).unwrap();
        assert!(sized.filter().params().num_bits > 1000 * 8);
        let empty = HostGate::of_entries([], 0).unwrap();
        assert_eq!(pass(&empty, "a.example"), Pass::Nothing);
    }

    #[test]
    fn a_union_holds_both_sides() {
        let mut left = HostGate::of_entries([("a.example", 4)], 10).unwrap();
        let right = HostGate::of_entries([("b.example", 0)], 10).unwrap();
        left.union(&right).unwrap();
        assert!(passes_path(&left, "a.example", 4));
        assert_ne!(pass(&left, "b.example"), Pass::Nothing);
    }

    /// A blocked gate (what files written before the split-block gate hold) answers and takes
    /// additions as it always did — with or without paths, whatever their lengths — is stored
    /// under its own tag, and does not merge with a split-block one (a merge then drops the
    /// gate).
    #[test]
    fn a_blocked_gate_still_serves_and_merges_only_with_its_layout() {
        let split = HostGate::of_entries([("a.example", 5), ("b.example", 0)], 100).unwrap();
        assert_eq!(split.section_tag(), tag::SPLIT_HOST_GATE);
        let mut filter =
            BlockedBloomFilter::with_strategy(100, HOST_GATE_FPP, HashStrategy::Xxh3).unwrap();
        for (host, with_path) in [("a.example", true), ("b.example", false)] {
            let hash = KeyHash::of(host.as_bytes());
            filter.insert_hash(hash);
            if with_path {
                filter.insert_hash(path_key(hash));
            }
        }
        let mut blocked = HostGate::from_filter(AnyFilter::Blocked(filter)).unwrap();
        assert_eq!(blocked.section_tag(), tag::HOST_GATE);
        blocked.insert("c.example", 7);
        assert_eq!(pass(&blocked, "a.example"), Pass::All);
        assert_eq!(pass(&blocked, "c.example"), Pass::All);
        assert_ne!(pass(&blocked, "b.example"), Pass::Nothing);
        assert!(passes_path(&blocked, "a.example", 1234));
        assert!(passes_path(&split, "a.example", 5));
        let mut mixed = split.clone();
        assert!(mixed.union(&blocked).is_err());
        assert!(blocked.union(&split).is_err());
        let classic = phishbloom_filter::BloomFilter::with_strategy(10, 0.01, HashStrategy::Xxh3);
        assert!(HostGate::from_filter(AnyFilter::Classic(classic.unwrap())).is_none());
    }

    /// The length key is the format's formula (docs/FORMAT.md, host gate 0x8002), written out.
    #[test]
    fn the_length_key_is_splitmix64_of_the_second_half_and_the_length() {
        let host = KeyHash::of(b"evil.com");
        let mut z = (host.h2 ^ 6).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        assert_eq!(length_key(host, 6).h1, z ^ (z >> 31));
    }
}
