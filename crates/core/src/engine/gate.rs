//! The host gate of a list of URL entries: a small Bloom filter of the hosts its entries name,
//! asked before a URL's expressions are hashed and probed.
//!
//! A URL has up to 5 host suffixes and up to 6 path prefixes per suffix: up to 30 expressions,
//! each the combination of two hashes, each a probe of the list's filter. An expression can hold
//! an entry only if its host suffix is the host of some entry. The gate holds the xxh3-128 of
//! every entry's host (the hash [`crate::keys::expression_hash`] already starts from), so a URL
//! pays one hash and one probe of a small, cache-resident filter per host suffix; only the
//! suffixes the gate lets through have their expressions combined and probed. For clean traffic
//! that is almost none of them.
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

use phishbloom_filter::{BlockedBloomFilter, HashStrategy, KeyHash};

use crate::error::Result;

/// The gate's false-positive rate per host suffix: 2 %. A clean URL with 4 host suffixes then
/// probes its expressions for one of them with probability ≈ 8 %, which adds a few percent to
/// its cost, for about 8.5 bits per distinct host (a blocked filter at 2 %) — small beside the
/// list's own filter (≈ 17 bits per entry at its default rate) and verification (64 bits).
pub const HOST_GATE_FPP: f64 = 0.02;

/// The hosts of a list's entries, in a cache-line-blocked Bloom filter keyed by each host's
/// xxh3-128 ([`KeyHash::of`]).
#[derive(Clone, Debug)]
pub struct HostGate {
    filter: BlockedBloomFilter,
}

impl HostGate {
    /// A gate holding `hosts`, sized for `capacity` hosts (or for the distinct hosts given, if
    /// more). A list sizes its gate for the entries its structure was sized for, so that two
    /// shards built with the same capacity have gates of the same size, which merge.
    pub fn of_hosts<'a>(hosts: impl IntoIterator<Item = &'a str>, capacity: u64) -> Result<Self> {
        let mut hashes: Vec<KeyHash> = hosts
            .into_iter()
            .map(|host| KeyHash::of(host.as_bytes()))
            .collect();
        hashes.sort_unstable_by_key(|h| (h.h1, h.h2));
        hashes.dedup();
        let capacity = (hashes.len() as u64).max(capacity).max(1);
        let mut filter =
            BlockedBloomFilter::with_strategy(capacity, HOST_GATE_FPP, HashStrategy::Xxh3)?;
        for hash in hashes {
            filter.insert_hash(hash);
        }
        Ok(HostGate { filter })
    }

    /// A gate read from a file (its filter section).
    pub fn from_filter(filter: BlockedBloomFilter) -> Self {
        HostGate { filter }
    }

    /// Adds the host of a new entry.
    pub fn insert(&mut self, host: &str) {
        self.filter.insert_hash(KeyHash::of(host.as_bytes()));
    }

    /// Whether a host suffix whose [`KeyHash::of`] is `host` may be the host of an entry:
    /// `false` is certain.
    #[inline]
    pub fn may_hold(&self, host: KeyHash) -> bool {
        self.filter.contains_hash(host)
    }

    /// Adds every host of `other` (a gate of the same size: two lists built alike).
    pub fn union(&mut self, other: &HostGate) -> Result<()> {
        Ok(self.filter.union(&other.filter)?)
    }

    /// The filter, as a file stores it.
    pub fn filter(&self) -> &BlockedBloomFilter {
        &self.filter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_inserted_host_passes_and_most_others_do_not() {
        let hosts: Vec<String> = (0..10_000).map(|i| format!("host{i}.example")).collect();
        let mut gate = HostGate::of_hosts(hosts.iter().map(String::as_str), 10_100).unwrap();
        gate.insert("added.example");
        for host in hosts.iter().map(String::as_str).chain(["added.example"]) {
            assert!(gate.may_hold(KeyHash::of(host.as_bytes())), "{host}");
        }
        // 20,000 strangers at 2 %: 400 expected, σ ≈ 20; 600 is 10 σ above.
        let passed = (0..20_000)
            .filter(|i| gate.may_hold(KeyHash::of(format!("stranger{i}.test").as_bytes())))
            .count();
        assert!(passed < 600, "{passed} of 20,000 strangers passed");
    }

    #[test]
    fn duplicates_are_sized_once_and_an_empty_list_has_a_gate() {
        let once = HostGate::of_hosts(["a.example"; 1000], 0).unwrap();
        let single = HostGate::of_hosts(["a.example"], 0).unwrap();
        assert_eq!(
            once.filter().params().num_bits,
            single.filter().params().num_bits
        );
        let sized = HostGate::of_hosts(["a.example"], 1000).unwrap();
        assert!(sized.filter().params().num_bits > 1000 * 8);
        let empty = HostGate::of_hosts([], 0).unwrap();
        assert!(!empty.may_hold(KeyHash::of(b"a.example")));
    }

    #[test]
    fn a_union_holds_both_sides() {
        let mut left = HostGate::of_hosts(["a.example"], 10).unwrap();
        let right = HostGate::of_hosts(["b.example"], 10).unwrap();
        left.union(&right).unwrap();
        assert!(left.may_hold(KeyHash::of(b"a.example")));
        assert!(left.may_hold(KeyHash::of(b"b.example")));
    }
}
