//! The table of a `compact` list: each entry's fingerprint cut to a prefix in a universe of `u`
//! values and the index of its category set, in a [`PrefixMap`] — near the information bound of a list that answers like a
//! verified one (listed or not, which entry, which categories), where a verified list spends 64
//! bits of fingerprint and 32 of set index per entry beside its filter.
//!
//! A compact list has no filter: the table is both what a probe asks and what confirms a hit.
//! A probe's fingerprint matches when its prefix is an entry's, so a stranger matches with
//! probability `n / u`; `u` is chosen so that this is the per-probe share of the list's per-URL
//! rate ([`compact_universe`]).

use phishbloom_filter::prefix_map::{self, universe_for, PrefixMap};

use super::CategorySets;
use crate::error::{Error, Result};

/// The prefix universe for `entries` entries at per-probe rate `per_probe`: `⌈n / q⌉`
/// ([`phishbloom_filter::prefix_map::universe_for`]).
pub fn compact_universe(entries: u64, per_probe: f64) -> u64 {
    universe_for(entries, per_probe)
}

/// Room a published compact table leaves for entries that deltas add: its universe is sized
/// for `1 + 1/8` times the entries it starts with, which costs `log₂(9/8)` ≈ 0.17 bit per
/// entry and lets a chain of deltas add an eighth more entries before the rate would pass
/// the list's.
pub const CHAIN_HEADROOM: f64 = 0.125;

/// The least room, in entries, a published compact table leaves (see [`CHAIN_HEADROOM`]):
/// a small list's chain lasts for as many additions as a list of 8,192 entries' would, and
/// the room costs at most `1024 · log₂ e` bits (185 bytes) however small the list.
pub const CHAIN_MIN_ROOM: u64 = 1024;

/// The universe a published compact table of `entries` entries at per-probe rate `per_probe`
/// uses: `current` (the universe of the chain of deltas it would extend) while it keeps the
/// rate (`n ≤ q·u`) and is not more than twice as large as a new one would be (a list that
/// shrank to half pays a bit per entry for it); otherwise a new one with
/// [`CHAIN_HEADROOM`] (at least [`CHAIN_MIN_ROOM`]), which starts a new chain.
pub fn chain_universe(entries: u64, per_probe: f64, current: Option<u64>) -> u64 {
    let room = ((entries as f64 * CHAIN_HEADROOM).ceil() as u64).max(CHAIN_MIN_ROOM);
    let fresh = universe_for(entries.saturating_add(room), per_probe);
    match current {
        Some(u) if entries as f64 <= u as f64 * per_probe && u / 2 <= fresh => u,
        _ => fresh,
    }
}

/// The information bound, in bits per entry, of a list that answers like a verified one at
/// per-probe rate `per_probe` with these category sets' shares of the entries: `log₂(1/q)`
/// for telling entries from strangers (Carter et al. 1978: a set of `n` keys queried at rate
/// `q` needs `n log₂(1/q)` bits) plus the Shannon entropy of the entries' category sets (what
/// naming each entry's categories takes, Shannon 1948).
pub fn bound_bits_per_entry(per_probe: f64, set_counts: &[u64]) -> f64 {
    let total: u64 = set_counts.iter().sum();
    let entropy: f64 = set_counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let share = c as f64 / total as f64;
            -share * share.log2()
        })
        .sum();
    (1.0 / per_probe).log2() + entropy
}

/// How a [`CompactTable`] names each entry's category set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetCoding {
    /// Each entry's set index in the main map, at `⌈log₂ S⌉` bits.
    InMap,
    /// One set for every entry but those of a side map, keyed by the entry's rank in the main
    /// map (a universe of `n`), with their set indices: about `log₂(n/m) + 2 + c` bits for
    /// each of the `m` others — a fraction of a bit per entry where most entries share a set
    /// (UT1's phishing and malware folders list most URLs in both).
    Majority {
        /// The set of every entry the side map does not hold.
        set: u32,
        /// Ranks of the other entries, with their set indices.
        others: PrefixMap,
    },
}

/// Entries' fingerprint prefixes with their category sets (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactTable {
    map: PrefixMap,
    /// Which cells of the fingerprint space hold an entry, for a list without a hosts gate
    /// ([`CompactTable::with_occupancy`]): what rejects most strangers before the map is
    /// searched.
    occupied: Option<Occupancy>,
    coding: SetCoding,
    sets: CategorySets,
    /// Every entry is a domain (no path): a URL's path prefixes need no probe.
    domains_only: bool,
}

impl CompactTable {
    /// The table of `(fingerprint, category ids)` pairs, in any order, with prefixes in a
    /// universe of `universe`: entries whose prefixes are equal (distinct entries do so with
    /// probability about `n² / 2u`) become one, their categories united — a hit on either then
    /// names both entries' categories, an error within the list's rate.
    pub fn build(pairs: Vec<(u64, Vec<u16>)>, universe: u64) -> Result<Self> {
        let (interned, sets) = intern_all(pairs);
        Self::build_interned(interned, sets, universe)
    }

    /// [`CompactTable::build`] of `(fingerprint, set index)` pairs whose sets are interned in
    /// `sets` already: 16 bytes a pair while building, for lists of 10⁷ entries.
    pub fn build_interned(
        mut pairs: Vec<(u64, u32)>,
        sets: CategorySets,
        universe: u64,
    ) -> Result<Self> {
        for pair in &mut pairs {
            pair.0 = prefix_map::prefix_in(pair.0, universe);
        }
        Self::of_prefixes_interned(pairs, sets, universe)
    }

    /// The table of `(prefix, category ids)` pairs whose prefixes are of `universe` already
    /// (a table's own, changed by a delta), in any order; equal prefixes become one as in
    /// [`CompactTable::build`].
    pub fn of_prefixes(mut pairs: Vec<(u64, Vec<u16>)>, universe: u64) -> Result<Self> {
        // Interned in prefix order: the same pairs in any order give the same set indices.
        pairs.sort_unstable();
        let (interned, sets) = intern_all(pairs);
        Self::of_prefixes_interned(interned, sets, universe)
    }

    /// The table of `(prefix, set index)` pairs of `universe`, in any order.
    fn of_prefixes_interned(
        mut pairs: Vec<(u64, u32)>,
        mut sets: CategorySets,
        universe: u64,
    ) -> Result<Self> {
        pairs.sort_unstable();
        let mut indexed: Vec<(u64, u32)> = Vec::with_capacity(pairs.len());
        for (prefix, set) in pairs {
            match indexed.last_mut() {
                Some(last) if last.0 == prefix && last.1 != set => {
                    let mut united = sets.get(last.1).to_vec();
                    united.extend_from_slice(sets.get(set));
                    united.sort_unstable();
                    united.dedup();
                    last.1 = sets.intern(&united);
                }
                Some(last) if last.0 == prefix => {}
                _ => indexed.push((prefix, set)),
            }
        }
        let (map, coding) = code_sets(&indexed, universe, sets.all().len() as u64)?;
        Ok(CompactTable {
            occupied: None,
            map,
            coding,
            sets,
            domains_only: false,
        })
    }

    /// The table with occupancy bits ([`OCCUPANCY_CELLS_PER_ENTRY`] an entry, in memory only),
    /// for a list that has no hosts gate: without them each of a URL's expressions searches
    /// the map; with them about one in eight does. A list with a gate, which spares most
    /// expressions already, gains 5 % of its instructions from them and goes without, as does
    /// a list of domains (a URL probes only its few host suffixes there).
    pub fn with_occupancy(mut self) -> Self {
        self.occupied = Some(Occupancy::of(&self.map));
        self
    }

    /// Marks every entry a domain (URL entries without a path; a reader then probes no path).
    pub fn with_domains_only(mut self, domains_only: bool) -> Self {
        self.domains_only = domains_only;
        self
    }

    /// Whether every entry is a domain.
    pub fn domains_only(&self) -> bool {
        self.domains_only
    }

    /// A table as a file stores it: every set index must be one of `sets` (`path` names the
    /// file in the error), and a side map's ranks must be the main map's.
    pub fn from_parts(
        map: PrefixMap,
        coding: SetCoding,
        sets: CategorySets,
        path: &std::path::Path,
    ) -> Result<Self> {
        let count = sets.all().len() as u64;
        let bad = |what: String| Err(Error::invalid(path, "compact table", what));
        let highest = |map: &PrefixMap| map.iter().map(|(_, set)| set).max();
        let indices = match &coding {
            SetCoding::InMap => highest(&map),
            SetCoding::Majority { set, others } => {
                if others.universe() != map.len().max(1) {
                    return bad(format!(
                        "a side map of {} ranks for {} entries",
                        others.universe(),
                        map.len()
                    ));
                }
                highest(others).max(Some(*set))
            }
        };
        if !(map.is_empty() && count == 0) && indices.is_some_and(|i| u64::from(i) >= count) {
            return bad(format!("a category set index beyond the {count} sets"));
        }
        Ok(CompactTable {
            occupied: None,
            map,
            coding,
            sets,
            domains_only: false,
        })
    }

    /// The category ids of the entry whose prefix `fingerprint` has, if any.
    #[inline]
    pub fn lookup(&self, fingerprint: u64) -> Option<&[u16]> {
        if self
            .occupied
            .as_ref()
            .is_some_and(|o| !o.may_hold(fingerprint))
        {
            return None;
        }
        let rank = self.map.rank(self.map.prefix_of(fingerprint))?;
        Some(self.sets.get(self.set_of(rank)))
    }

    /// The set index of the entry of `rank`.
    #[inline]
    fn set_of(&self, rank: u64) -> u32 {
        match &self.coding {
            SetCoding::InMap => self.map.value(rank),
            SetCoding::Majority { set, others } => others.get(rank).unwrap_or(*set),
        }
    }

    /// How set indices are coded.
    pub fn coding(&self) -> &SetCoding {
        &self.coding
    }

    /// Whether `fingerprint`'s prefix is an entry's.
    #[inline]
    pub fn contains(&self, fingerprint: u64) -> bool {
        self.occupied
            .as_ref()
            .is_none_or(|o| o.may_hold(fingerprint))
            && self.map.rank(self.map.prefix_of(fingerprint)).is_some()
    }

    /// The prefixes and their set indices.
    pub fn map(&self) -> &PrefixMap {
        &self.map
    }

    /// Every entry's prefix with its category ids, ascending by prefix.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &[u16])> + '_ {
        self.map
            .iter()
            .enumerate()
            .map(|(rank, (prefix, _))| (prefix, self.sets.get(self.set_of(rank as u64))))
    }

    /// The interned category sets.
    pub fn sets(&self) -> &CategorySets {
        &self.sets
    }

    /// Distinct prefixes held.
    pub fn len(&self) -> u64 {
        self.map.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// How many prefixes point to each set, by set index.
    pub fn set_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.sets.all().len()];
        for rank in 0..self.map.len() {
            counts[self.set_of(rank) as usize] += 1;
        }
        counts
    }

    /// Bytes in memory: the main map, any side map and the occupancy bits.
    pub fn size_in_bytes(&self) -> u64 {
        self.map.size_in_bytes()
            + self
                .occupied
                .as_ref()
                .map_or(0, |o| 8 * o.words.len() as u64)
            + match &self.coding {
                SetCoding::InMap => 0,
                SetCoding::Majority { others, .. } => others.size_in_bytes(),
            }
    }

    /// Bits of the stored table: the main map and any side map.
    pub fn stored_bits(&self) -> u64 {
        self.map.stored_bits()
            + match &self.coding {
                SetCoding::InMap => 0,
                SetCoding::Majority { others, .. } => others.stored_bits(),
            }
    }
}

/// Cells of the fingerprint space per entry in a table's occupancy bits: with 8, a stranger's
/// fingerprint falls in a held cell with probability about `1 − e^(−1/8)` ≈ 12 %, so most
/// probes of a list without a hosts gate (a published one, one that deltas keep, a list of
/// domains) end at one bit instead of an Elias–Fano search, for 8 bits an entry of memory (not
/// stored: built on reading). Measured: 3,535 → 2,755 instructions a URL line.
pub const OCCUPANCY_CELLS_PER_ENTRY: u64 = 8;

/// One bit per cell of the fingerprint space, `cells` cells, set where an entry's prefix lies:
/// a fingerprint whose cell (`⌊v·cells / 2⁶⁴⌋`) is clear is no entry's.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Occupancy {
    words: Vec<u64>,
    cells: u64,
}

impl Occupancy {
    /// The cells of `map`'s prefixes. A prefix `p` of universe `u` is the prefix of the
    /// fingerprints in `[p·2⁶⁴/u, (p+1)·2⁶⁴/u)`, whose cells run from `⌊p·c/u⌋` to
    /// `⌊((p+1)·c − 1)/u⌋`: all are set, so no entry's fingerprint meets a clear cell.
    fn of(map: &PrefixMap) -> Self {
        let cells = (map.len() * OCCUPANCY_CELLS_PER_ENTRY)
            .max(64)
            .next_multiple_of(64);
        let mut words = vec![0u64; (cells / 64) as usize];
        let (c, u) = (u128::from(cells), u128::from(map.universe()));
        for (prefix, _) in map.iter() {
            let p = u128::from(prefix);
            let first = (p * c / u) as u64;
            // At least `first`: (p + 1)·c − 1 ≥ p·c since c ≥ 1.
            let last = (((p + 1) * c - 1) / u).min(c - 1) as u64;
            for cell in first..=last {
                words[(cell / 64) as usize] |= 1 << (cell % 64);
            }
        }
        Occupancy { words, cells }
    }

    /// Whether the cell of fingerprint `v` holds an entry's prefix.
    #[inline]
    fn may_hold(&self, v: u64) -> bool {
        let cell = ((u128::from(v) * u128::from(self.cells)) >> 64) as u64;
        // cell < cells = 64 · words.len().
        self.words[(cell / 64) as usize] >> (cell % 64) & 1 == 1
    }
}

/// `pairs` with their category ids interned: `(value, set index)` pairs and the sets.
fn intern_all(pairs: Vec<(u64, Vec<u16>)>) -> (Vec<(u64, u32)>, CategorySets) {
    let mut sets = CategorySets::default();
    let mut last: Option<(Vec<u16>, u32)> = None;
    let interned = pairs
        .into_iter()
        .map(|(v, ids)| (v, intern_run(&mut sets, &mut last, ids)))
        .collect();
    (interned, sets)
}

/// The index of `ids` in `sets`, interned unless it is the set of the pair before (`last`):
/// entries read in runs of one category ask the hash map once a run.
pub(crate) fn intern_run(
    sets: &mut CategorySets,
    last: &mut Option<(Vec<u16>, u32)>,
    ids: Vec<u16>,
) -> u32 {
    if let Some((previous, index)) = last {
        if *previous == ids {
            return *index;
        }
    }
    let index = sets.intern(&ids);
    *last = Some((ids, index));
    index
}

/// The main map of `indexed` (ascending prefixes with set indices, of `sets` sets) and the
/// smaller coding of their set indices: in the map at `⌈log₂ S⌉` bits each, or the most
/// common set for all but a side map of the others' ranks ([`SetCoding::Majority`]).
fn code_sets(indexed: &[(u64, u32)], universe: u64, sets: u64) -> Result<(PrefixMap, SetCoding)> {
    let n = indexed.len() as u64;
    let width = prefix_map::value_bits(sets);
    let mut counts = vec![0u64; sets as usize];
    for &(_, set) in indexed {
        counts[set as usize] += 1;
    }
    let (majority, most) = counts
        .iter()
        .enumerate()
        .max_by_key(|(set, count)| (**count, std::cmp::Reverse(*set)))
        .map_or((0, 0), |(set, &count)| (set as u32, count));
    let side_bits = prefix_map::map_bits(n - most, n.max(1), width);
    if side_bits < n * u64::from(width) {
        let others: Vec<(u64, u32)> = indexed
            .iter()
            .enumerate()
            .filter(|(_, &(_, set))| set != majority)
            .map(|(rank, &(_, set))| (rank as u64, set))
            .collect();
        let prefixes: Vec<(u64, u32)> = indexed.iter().map(|&(p, _)| (p, 0)).collect();
        let map = PrefixMap::build(&prefixes, universe, 0)?;
        let others = PrefixMap::build(&others, n.max(1), width)?;
        return Ok((
            map,
            SetCoding::Majority {
                set: majority,
                others,
            },
        ));
    }
    Ok((
        PrefixMap::build(indexed, universe, width)?,
        SetCoding::InMap,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::rng::SplitMix64;

    #[test]
    fn entries_answer_with_their_categories_and_strangers_at_the_rate() {
        let mut rng = SplitMix64::new(11);
        let pairs: Vec<(u64, Vec<u16>)> = (0..5000)
            .map(|i| (rng.next_u64(), vec![(i % 3) as u16]))
            .collect();
        let table = CompactTable::build(pairs.clone(), compact_universe(5000, 1e-3)).unwrap();
        // Each entry is found with its categories (and, for the few whose prefixes equal
        // another's — about n²/2u = 2.5 pairs here — that entry's too).
        let mut united = 0;
        for (v, ids) in &pairs {
            let found = table.lookup(*v).unwrap();
            assert!(ids.iter().all(|id| found.contains(id)));
            united += usize::from(found.len() > 1);
        }
        assert!(united <= 20, "{united} entries with united categories");
        // 10⁵ strangers at q ≤ 10⁻³: at most 100 expected; 3σ of the binomial above is 130.
        let strangers = (0..100_000)
            .filter(|_| table.contains(rng.next_u64()))
            .count();
        assert!(strangers <= 130, "{strangers} strangers matched");
    }

    #[test]
    fn a_chain_keeps_its_universe_until_the_rate_or_the_size_says_otherwise() {
        let q = 1e-6;
        let u = chain_universe(10_000, q, None);
        assert_eq!(u, universe_for(11_250, q));
        assert_eq!(chain_universe(11_000, q, Some(u)), u);
        assert_ne!(chain_universe(11_251, q, Some(u)), u);
        assert_eq!(chain_universe(6_000, q, Some(u)), u);
        assert_ne!(chain_universe(4_000, q, Some(u)), u);
        // A small list keeps room for a thousand additions.
        assert_eq!(chain_universe(100, q, None), universe_for(1124, q));
    }

    #[test]
    fn the_occupancy_bits_never_hide_an_entry_and_reject_most_strangers() {
        let mut rng = SplitMix64::new(12);
        for universe in [100, 1 << 20, 1 << 40, u64::MAX] {
            let pairs: Vec<(u64, Vec<u16>)> = (0..90).map(|_| (rng.next_u64(), vec![0])).collect();
            let table = CompactTable::build(pairs.clone(), universe)
                .unwrap()
                .with_occupancy();
            assert!(
                pairs.iter().all(|(v, _)| table.contains(*v)),
                "u = {universe}"
            );
        }
        let pairs: Vec<(u64, Vec<u16>)> = (0..10_000).map(|_| (rng.next_u64(), vec![0])).collect();
        let table = CompactTable::build(pairs, 1 << 60)
            .unwrap()
            .with_occupancy();
        let occupied = table.occupied.as_ref().unwrap();
        // 10⁵ strangers: about 1 − e^(−1/8) = 11.75 % pass; 5σ of the binomial is 0.5 %.
        let passed = (0..100_000)
            .filter(|_| occupied.may_hold(rng.next_u64()))
            .count();
        assert!((11_250..12_250).contains(&passed), "{passed} of 10⁵ passed");
    }

    #[test]
    fn the_bound_is_the_rate_bits_plus_the_sets_entropy() {
        assert!((bound_bits_per_entry(0.25, &[5]) - 2.0).abs() < 1e-12);
        assert!((bound_bits_per_entry(0.25, &[5, 5]) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn equal_prefixes_unite_their_categories() {
        // In a universe of 2^48 a prefix is the top 48 bits.
        let table =
            CompactTable::build(vec![(0xF0000, vec![0]), (0xF0001, vec![1])], 1 << 48).unwrap();
        assert_eq!(table.len(), 1);
        assert_eq!(table.lookup(0xF0FFF), Some(&[0u16, 1][..]));
    }
}
