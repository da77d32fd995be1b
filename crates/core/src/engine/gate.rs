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

use phishbloom_filter::{BlockedBloomFilter, HashStrategy, KeyHash};

use crate::error::Result;

/// The gate's false-positive rate per host suffix: 2 %. A clean URL with 4 host suffixes then
/// probes its expressions for one of them with probability ≈ 8 %, which adds a few percent to
/// its cost, for about 8.5 bits per distinct host (a blocked filter at 2 %) — small beside the
/// list's own filter (≈ 17 bits per entry at its default rate) and verification (64 bits).
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
}

/// The key of "an entry with a path has this host": the host's hash with its halves swapped,
/// an independent 128-bit value (the halves of xxh3-128 are), so it lands in another block.
#[inline]
pub fn path_key(host: KeyHash) -> KeyHash {
    KeyHash {
        h1: host.h2,
        h2: host.h1,
    }
}

/// The hosts of a list's entries, in a cache-line-blocked Bloom filter keyed by each host's
/// xxh3-128 ([`KeyHash::of`]), and the hosts of its entries with a path, keyed by
/// [`path_key`].
#[derive(Clone, Debug)]
pub struct HostGate {
    filter: BlockedBloomFilter,
}

impl HostGate {
    /// A gate holding the hosts of `entries` (`(host, whether the entry has a path)`), sized
    /// for `capacity` keys (or for the distinct keys given, if more). A list sizes its gate for
    /// the entries its structure was sized for, so that two shards built with the same ample
    /// capacity have gates of the same size, which merge.
    pub fn of_entries<'a>(
        entries: impl IntoIterator<Item = (&'a str, bool)>,
        capacity: u64,
    ) -> Result<Self> {
        let mut keys: Vec<KeyHash> = Vec::new();
        for (host, with_path) in entries {
            let hash = KeyHash::of(host.as_bytes());
            keys.push(hash);
            if with_path {
                keys.push(path_key(hash));
            }
        }
        keys.sort_unstable_by_key(|h| (h.h1, h.h2));
        keys.dedup();
        let capacity = (keys.len() as u64).max(capacity).max(1);
        let mut filter =
            BlockedBloomFilter::with_strategy(capacity, HOST_GATE_FPP, HashStrategy::Xxh3)?;
        for key in keys {
            filter.insert_hash(key);
        }
        Ok(HostGate { filter })
    }

    /// A gate read from a file (its filter section).
    pub fn from_filter(filter: BlockedBloomFilter) -> Self {
        HostGate { filter }
    }

    /// Adds the host of a new entry, which has a path or not.
    pub fn insert(&mut self, host: &str, with_path: bool) {
        let hash = KeyHash::of(host.as_bytes());
        self.filter.insert_hash(hash);
        if with_path {
            self.filter.insert_hash(path_key(hash));
        }
    }

    /// What to probe of a host suffix whose [`KeyHash::of`] is `host`: [`Pass::Nothing`] and
    /// [`Pass::Domain`] are certain (no entry, or no entry with a path, has the host).
    #[inline]
    pub fn pass(&self, host: KeyHash) -> Pass {
        if !self.filter.contains_hash(host) {
            Pass::Nothing
        } else if self.filter.contains_hash(path_key(host)) {
            Pass::All
        } else {
            Pass::Domain
        }
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

    fn pass(gate: &HostGate, host: &str) -> Pass {
        gate.pass(KeyHash::of(host.as_bytes()))
    }

    #[test]
    fn every_inserted_host_passes_as_its_entries_need_and_most_others_do_not() {
        let hosts: Vec<String> = (0..10_000).map(|i| format!("host{i}.example")).collect();
        // Even hosts have a path entry, odd ones only domain entries.
        let entries = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), i % 2 == 0));
        let mut gate = HostGate::of_entries(entries, 15_100).unwrap();
        gate.insert("added.example", false);
        gate.insert("added-path.example", true);
        for (i, host) in hosts.iter().enumerate() {
            let got = pass(&gate, host);
            match i % 2 {
                0 => assert_eq!(got, Pass::All, "{host}"),
                _ => assert_ne!(got, Pass::Nothing, "{host}"),
            }
        }
        assert_ne!(pass(&gate, "added.example"), Pass::Nothing);
        assert_eq!(pass(&gate, "added-path.example"), Pass::All);
        // 20,000 strangers at 2 %: 400 expected, σ ≈ 20; 600 is 10 σ above. Domain-only hosts
        // widened to every expression at 2 %: 100 expected of 5,000, σ ≈ 10; 200 is 10 σ above.
        let passed = (0..20_000)
            .filter(|i| pass(&gate, &format!("stranger{i}.test")) != Pass::Nothing)
            .count();
        assert!(passed < 600, "{passed} of 20,000 strangers passed");
        let widened = hosts
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|h| pass(&gate, h) == Pass::All)
            .count();
        assert!(
            widened < 200,
            "{widened} of 5,000 domain-only hosts probed with paths"
        );
    }

    #[test]
    fn duplicates_are_sized_once_and_an_empty_list_has_a_gate() {
        let once = HostGate::of_entries([("a.example", false); 1000], 0).unwrap();
        let single = HostGate::of_entries([("a.example", false)], 0).unwrap();
        assert_eq!(
            once.filter().params().num_bits,
            single.filter().params().num_bits
        );
        let sized = HostGate::of_entries([("a.example", true)], 1000).unwrap();
        assert!(sized.filter().params().num_bits > 1000 * 8);
        let empty = HostGate::of_entries([], 0).unwrap();
        assert_eq!(pass(&empty, "a.example"), Pass::Nothing);
    }

    #[test]
    fn a_union_holds_both_sides() {
        let mut left = HostGate::of_entries([("a.example", true)], 10).unwrap();
        let right = HostGate::of_entries([("b.example", false)], 10).unwrap();
        left.union(&right).unwrap();
        assert_eq!(pass(&left, "a.example"), Pass::All);
        assert_ne!(pass(&left, "b.example"), Pass::Nothing);
    }
}
