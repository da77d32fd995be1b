//! Longest-prefix lookup with parallel Bloom filters: the length-grouped baselines BBF−/BBF+
//! and the cardinality-adaptive CaBF−/CaBF of Zhou, Fu, Song & Liu ("CaBF: a cardinality-adaptive
//! parallel Bloom filter for URL lookup"), with its correlation check.
//!
//! A key is a sequence of components (for URLs: host labels, path segments, the query; the
//! blocklist crate decides how a URL is cut); a list entry is a prefix of the sequences it covers.
//! [`Bbf`] stores whole prefixes, one filter per component count. [`Cabf`] stores the i-th
//! component of every entry in the i-th filter (the last filter takes the joined tail beyond
//! p − 1 components) and a correlation check value `V` per entry, so that components of different
//! entries cannot combine into a match. "−" variants split memory equally with one global k; the
//! others give each filter memory in proportion to its element count (`m_i/n_i = m/n`, equal k).

use std::collections::HashSet;

use crate::error::Result;
use crate::filter::{BloomFilter, Filter};
use crate::hash::{double_hashing, KeyHash};

/// The hash of a component sequence's prefix of length `len + 1`, chained so that every prefix of
/// a query is hashed once: `h(c₀)`, then `h(prefixᵢ) = h(prefixᵢ₋₁) ⊕ h(cᵢ)` with
/// [`KeyHash::combine`].
fn prefix_hashes(components: &[String]) -> Vec<KeyHash> {
    let mut out: Vec<KeyHash> = Vec::with_capacity(components.len());
    for (i, component) in components.iter().enumerate() {
        let hash = KeyHash::of(component.as_bytes());
        out.push(if i == 0 {
            hash
        } else {
            out[i - 1].combine(hash)
        });
    }
    out
}

/// Memory split and hash count of a parallel-filter structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// Every filter gets `m / filters` bits and the global `k = round((m/n)·ln 2)` ("−").
    Equal,
    /// Filter i gets `m·nᵢ/n` bits and `kᵢ = round((mᵢ/nᵢ)·ln 2)`, equal for all ("+", CaBF).
    Proportional,
}

/// Sizes `(bits, hashes)` for filters holding `counts` elements within `total_bits`; `fixed_k`
/// overrides the hash count (for the k sweep).
fn allocate(
    counts: &[u64],
    total_bits: u64,
    allocation: Allocation,
    fixed_k: Option<u32>,
) -> Vec<(u64, u32)> {
    let n: u64 = counts.iter().sum::<u64>().max(1);
    let global_k = crate::math::optimal_num_hashes(n, total_bits);
    counts
        .iter()
        .map(|&count| {
            let bits = match allocation {
                Allocation::Equal => total_bits / counts.len() as u64,
                Allocation::Proportional => {
                    (total_bits as f64 * count as f64 / n as f64).round() as u64
                }
            }
            .max(64);
            let k = match allocation {
                Allocation::Equal => global_k,
                Allocation::Proportional => crate::math::optimal_num_hashes(count.max(1), bits),
            };
            (bits, fixed_k.unwrap_or(k))
        })
        .collect()
}

fn new_filter((bits, hashes): (u64, u32)) -> Result<BloomFilter> {
    BloomFilter::with_num_bits(bits, hashes)
}

/// What a structure answers for one query: `candidates[L − 1]` says whether the prefix of
/// length L passed (it may be a false positive).
pub trait PrefixFilter: Send + Sync {
    /// A short name for experiment output.
    fn name(&self) -> String;
    /// Total bits of all its filters.
    fn bits(&self) -> u64;
    /// Fills `candidates` with one answer per prefix length of `components`.
    fn probe(&self, components: &[String], candidates: &mut Vec<bool>);
}

/// The length-grouped baseline: filter g holds the whole prefixes of g + 1 components (the last
/// filter every prefix of p or more).
pub struct Bbf {
    filters: Vec<BloomFilter>,
    allocation: Allocation,
}

impl Bbf {
    /// Builds from entry component sequences with `p` filters and `total_bits` bits.
    pub fn build(
        entries: &[Vec<String>],
        p: usize,
        total_bits: u64,
        allocation: Allocation,
        fixed_k: Option<u32>,
    ) -> Result<Self> {
        let p = p.max(1);
        // An empty sequence is no prefix of anything: skip it.
        let entries: Vec<&Vec<String>> = entries.iter().filter(|e| !e.is_empty()).collect();
        let group = |len: usize| len.min(p) - 1;
        let mut counts = vec![0u64; p];
        for entry in &entries {
            counts[group(entry.len())] += 1;
        }
        let mut filters = allocate(&counts, total_bits, allocation, fixed_k)
            .into_iter()
            .map(new_filter)
            .collect::<Result<Vec<_>>>()?;
        for entry in &entries {
            if let Some(&hash) = prefix_hashes(entry).last() {
                filters[group(entry.len())].insert_hash(hash);
            }
        }
        Ok(Bbf {
            filters,
            allocation,
        })
    }
}

impl PrefixFilter for Bbf {
    fn name(&self) -> String {
        match self.allocation {
            Allocation::Equal => "BBF-".into(),
            Allocation::Proportional => "BBF+".into(),
        }
    }

    fn bits(&self) -> u64 {
        self.filters.iter().map(|f| f.num_bits()).sum()
    }

    fn probe(&self, components: &[String], candidates: &mut Vec<bool>) {
        let p = self.filters.len();
        candidates.clear();
        candidates.extend(
            prefix_hashes(components)
                .iter()
                .enumerate()
                .map(|(i, &hash)| self.filters[i.min(p - 1)].contains_hash(hash)),
        );
    }
}

/// Where CaBF keeps the correlation check values of the listed entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckStore {
    /// No correlation check (to measure what it buys).
    None,
    /// An exact set of the 128-bit values (memory not counted in the filters' budget).
    Exact,
    /// A Bloom filter sized like one more parallel filter (its bits count in the budget).
    Bloom,
}

/// The cardinality-adaptive parallel Bloom filter of seed 003.
pub struct Cabf {
    filters: Vec<BloomFilter>,
    check_filter: Option<BloomFilter>,
    check_set: HashSet<u128>,
    store: CheckStore,
    allocation: Allocation,
}

/// Scale of the fixed-point correlation value: `v = Σⱼ H_j / 2^j` is kept as
/// `Σⱼ H_j · 2^(64 − j)` in a `u128`. With positions `H < 2^40` (the filter crate's bit limit),
/// `j ≥ 1` and `k ≤ 64` the terms stay below `2^103` and a sum over up to 2^24 components below
/// `2^127`: the value is exact — no rounding — and identical on every machine, unlike an `f64`
/// sum, whose rounding would depend on the order of additions.
const CHECK_SCALE_BITS: u32 = 64;

/// The key under which a check value is stored in the check filter: the value's xxh3, since the
/// value itself is a weighted sum of positions, far from uniformly distributed.
fn check_hash(value: u128) -> KeyHash {
    KeyHash::of(&value.to_le_bytes())
}

/// The hash of an element as filter `i` sees it: each filter has its own hash function (the
/// component's hash combined with the filter's index), as the paper's independent per-filter
/// hash families. With one shared function, two filters of equal size would map a component to
/// the same positions, and the check value of `a/b` would equal that of `b/a`.
fn in_filter(i: usize, hash: KeyHash) -> KeyHash {
    hash.combine(KeyHash {
        h1: i as u64,
        h2: !(i as u64),
    })
}

impl Cabf {
    /// The component (or tail) that filter `i` holds for a sequence: component i for i < p − 1;
    /// for the last filter, components p − 1 .. len joined (hash-chained).
    fn element_hashes(components: &[String], p: usize) -> Vec<KeyHash> {
        let head = components.len().min(p - 1);
        let mut out: Vec<KeyHash> = components[..head]
            .iter()
            .enumerate()
            .map(|(i, c)| in_filter(i, KeyHash::of(c.as_bytes())))
            .collect();
        out.extend(
            prefix_hashes(&components[head..])
                .last()
                .map(|&t| in_filter(p - 1, t)),
        );
        out
    }

    /// Distinct elements over all `p` filters for these entries (Σ nᵢ).
    pub fn element_count(entries: &[Vec<String>], p: usize) -> u64 {
        let p = p.max(1);
        let mut distinct: Vec<HashSet<KeyHash>> = vec![HashSet::new(); p];
        for entry in entries {
            for (i, hash) in Self::element_hashes(entry, p).into_iter().enumerate() {
                distinct[i].insert(hash);
            }
        }
        distinct.iter().map(|d| d.len() as u64).sum()
    }

    /// Builds from entry component sequences with `p` filters and `total_bits` bits.
    pub fn build(
        entries: &[Vec<String>],
        p: usize,
        total_bits: u64,
        allocation: Allocation,
        store: CheckStore,
        fixed_k: Option<u32>,
    ) -> Result<Self> {
        // At least one filter: p = 0 would leave nowhere to put a component.
        let p = p.max(1);
        // Distinct elements per filter: what each filter holds (its cardinality n_i).
        let mut distinct: Vec<HashSet<KeyHash>> = vec![HashSet::new(); p];
        for entry in entries {
            for (i, hash) in Self::element_hashes(entry, p).into_iter().enumerate() {
                distinct[i].insert(hash);
            }
        }
        let mut counts: Vec<u64> = distinct.iter().map(|d| d.len() as u64).collect();
        if store == CheckStore::Bloom {
            counts.push(entries.len() as u64);
        }
        let mut sizes = allocate(&counts, total_bits, allocation, fixed_k);
        let check_filter = (store == CheckStore::Bloom)
            .then(|| sizes.pop().map(new_filter))
            .flatten()
            .transpose()?;
        let mut filters = sizes
            .into_iter()
            .map(new_filter)
            .collect::<Result<Vec<_>>>()?;
        for (filter, elements) in filters.iter_mut().zip(&distinct) {
            for &hash in elements {
                filter.insert_hash(hash);
            }
        }
        let mut cabf = Cabf {
            filters,
            check_filter,
            check_set: HashSet::new(),
            store,
            allocation,
        };
        for entry in entries {
            // An empty sequence has no check value (and no prefix to match).
            let Some(&value) = cabf.check_values(&Self::element_hashes(entry, p)).last() else {
                continue;
            };
            match cabf.check_filter.as_mut() {
                Some(filter) => filter.insert_hash(check_hash(value)),
                None if store == CheckStore::Exact => {
                    cabf.check_set.insert(value);
                }
                None => {}
            }
        }
        Ok(cabf)
    }

    /// The component filters and the check filter (for saving).
    pub fn parts(&self) -> (&[BloomFilter], Option<&BloomFilter>) {
        (&self.filters, self.check_filter.as_ref())
    }

    /// A CaBF with a Bloom check store from saved parts.
    pub fn from_parts(filters: Vec<BloomFilter>, check_filter: BloomFilter) -> Self {
        Cabf {
            filters,
            check_filter: Some(check_filter),
            check_set: HashSet::new(),
            store: CheckStore::Bloom,
            allocation: Allocation::Proportional,
        }
    }

    /// `v_i = Σⱼ H_{i,j} / 2^j` in fixed point, for element `hash` of filter `i`.
    fn component_value(&self, i: usize, hash: KeyHash) -> u128 {
        let filter = &self.filters[i];
        let mut value = 0u128;
        let mut j = 0;
        double_hashing(hash, filter.num_bits(), filter.num_hashes(), |position| {
            j += 1;
            value += u128::from(position) << (CHECK_SCALE_BITS - j);
        });
        value
    }

    /// Running sums `V_L = Σ_{i ≤ L} v_i` over a sequence's elements.
    fn check_values(&self, elements: &[KeyHash]) -> Vec<u128> {
        let mut total = 0u128;
        elements
            .iter()
            .enumerate()
            .map(|(i, &hash)| {
                total = total.wrapping_add(self.component_value(i, hash));
                total
            })
            .collect()
    }

    fn check_passes(&self, value: u128) -> bool {
        match self.store {
            CheckStore::None => true,
            CheckStore::Exact => self.check_set.contains(&value),
            CheckStore::Bloom => self
                .check_filter
                .as_ref()
                .is_some_and(|f| f.contains_hash(check_hash(value))),
        }
    }
}

impl PrefixFilter for Cabf {
    fn name(&self) -> String {
        let base = match self.allocation {
            Allocation::Equal => "CaBF-",
            Allocation::Proportional => "CaBF",
        };
        match self.store {
            CheckStore::None => format!("{base} (no check)"),
            CheckStore::Exact => format!("{base} (exact check)"),
            CheckStore::Bloom => base.to_string(),
        }
    }

    fn bits(&self) -> u64 {
        self.filters
            .iter()
            .chain(&self.check_filter)
            .map(|f| f.num_bits())
            .sum()
    }

    fn probe(&self, components: &[String], candidates: &mut Vec<bool>) {
        let p = self.filters.len();
        candidates.clear();
        // Components before the last filter are probed once and shared by every prefix.
        let head = components.len().min(p - 1);
        let head_hashes: Vec<KeyHash> = components[..head]
            .iter()
            .enumerate()
            .map(|(i, c)| in_filter(i, KeyHash::of(c.as_bytes())))
            .collect();
        let head_values = self.check_values(&head_hashes);
        let mut all_present = true;
        for (i, &hash) in head_hashes.iter().enumerate() {
            all_present &= self.filters[i].contains_hash(hash);
            candidates.push(all_present && self.check_passes(head_values[i]));
        }
        // Longer prefixes: the joined tail in the last filter.
        let tails = prefix_hashes(&components[head..]);
        let base = head_values.last().copied().unwrap_or(0);
        for tail in tails.into_iter().map(|t| in_filter(p - 1, t)) {
            let present = all_present && self.filters[p - 1].contains_hash(tail);
            let value = base.wrapping_add(self.component_value(p - 1, tail));
            candidates.push(present && self.check_passes(value));
        }
    }
}

/// The structures of seed 003's comparison, plus CaBF without its correlation check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structure {
    /// Length-grouped filters, equal memory, one global k.
    BbfMinus,
    /// Length-grouped filters, memory in proportion to group size.
    BbfPlus,
    /// Component filters, equal memory, one global k, check values in a Bloom filter.
    CabfMinus,
    /// Component filters sized by cardinality, check values in a Bloom filter (the paper's CaBF).
    Cabf,
    /// CaBF without the correlation check.
    CabfNoCheck,
}

impl Structure {
    /// The four structures the paper compares.
    pub const PAPER: [Structure; 4] = [
        Structure::BbfMinus,
        Structure::BbfPlus,
        Structure::CabfMinus,
        Structure::Cabf,
    ];

    /// The name used in experiment output (the same as its [`PrefixFilter::name`]).
    pub fn name(self) -> &'static str {
        match self {
            Structure::BbfMinus => "BBF-",
            Structure::BbfPlus => "BBF+",
            Structure::CabfMinus => "CaBF-",
            Structure::Cabf => "CaBF",
            Structure::CabfNoCheck => "CaBF (no check)",
        }
    }

    /// Builds this structure over `entries` with `p` filters and `bits` bits in all;
    /// `fixed_k` forces the hash count of every filter.
    pub fn build(
        self,
        entries: &[Vec<String>],
        p: usize,
        bits: u64,
        fixed_k: Option<u32>,
    ) -> Result<Box<dyn PrefixFilter>> {
        use Allocation::{Equal, Proportional};
        Ok(match self {
            Structure::BbfMinus => Box::new(Bbf::build(entries, p, bits, Equal, fixed_k)?),
            Structure::BbfPlus => Box::new(Bbf::build(entries, p, bits, Proportional, fixed_k)?),
            Structure::CabfMinus => Box::new(Cabf::build(
                entries,
                p,
                bits,
                Equal,
                CheckStore::Bloom,
                fixed_k,
            )?),
            Structure::Cabf => Box::new(Cabf::build(
                entries,
                p,
                bits,
                Proportional,
                CheckStore::Bloom,
                fixed_k,
            )?),
            Structure::CabfNoCheck => Box::new(Cabf::build(
                entries,
                p,
                bits,
                Proportional,
                CheckStore::None,
                fixed_k,
            )?),
        })
    }
}

/// The exact prefix table: every entry's components, for verification and as the oracle.
#[derive(Default)]
pub struct PrefixTable {
    prefixes: HashSet<Vec<String>>,
}

impl PrefixTable {
    /// A table of `entries`.
    pub fn new(entries: &[Vec<String>]) -> Self {
        PrefixTable {
            prefixes: entries.iter().cloned().collect(),
        }
    }

    /// Whether the prefix of `components` of length `len` is listed.
    pub fn contains(&self, components: &[String], len: usize) -> bool {
        self.prefixes.contains(&components[..len])
    }

    /// The longest listed prefix length of `components` (0 if none).
    pub fn longest(&self, components: &[String]) -> usize {
        (1..=components.len())
            .rev()
            .find(|&len| self.contains(components, len))
            .unwrap_or(0)
    }
}

/// Longest-prefix lookup: the longest candidate the filter reports, confirmed by `table` when
/// given (candidates are tried longest first, as the paper describes).
pub fn longest_prefix(
    filter: &dyn PrefixFilter,
    table: Option<&PrefixTable>,
    components: &[String],
    candidates: &mut Vec<bool>,
) -> usize {
    longest_confirmed(filter, components, candidates, |len| {
        table.is_none_or(|t| t.contains(components, len))
    })
}

/// [`longest_prefix`] with any confirmation: candidates longest first, the first `confirm`ed wins.
pub fn longest_confirmed(
    filter: &dyn PrefixFilter,
    components: &[String],
    candidates: &mut Vec<bool>,
    confirm: impl Fn(usize) -> bool,
) -> usize {
    filter.probe(components, candidates);
    (1..=components.len())
        .rev()
        .filter(|&len| candidates[len - 1])
        .find(|&len| confirm(len))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component sequence from `/`-separated text (`"com/evil//a"` → `["com", "evil", "/a"]`).
    fn seq(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn check_values_are_fixed_and_order_sensitive() {
        let entries = vec![seq("a b")];
        let cabf = Cabf::build(
            &entries,
            8,
            1 << 12,
            Allocation::Proportional,
            CheckStore::Exact,
            None,
        )
        .unwrap();
        let element = |i: usize, c: &[u8]| in_filter(i, KeyHash::of(c));
        let values = cabf.check_values(&[element(0, b"a"), element(1, b"b")]);
        // The check filter of a saved CaBF holds hashes of these values, so they are part of the
        // file format: recorded when the format was specified (docs/FORMAT.md), they must never
        // change, or every saved CaBF would answer "clean" for its entries.
        assert_eq!(values.len(), 2);
        assert_eq!(values, GOLDEN_CHECK_VALUES);
        // The same components in the other order give another value.
        let swapped = cabf.check_values(&[element(0, b"b"), element(1, b"a")]);
        assert_ne!(swapped[1], values[1]);
        // A running sum: the second value extends the first.
        assert!(values[1] > values[0]);
    }

    /// See `check_values_are_fixed_and_order_sensitive`.
    const GOLDEN_CHECK_VALUES: [u128; 2] = [
        15_733_930_328_825_082_239_332,
        29_689_631_418_992_290_424_197,
    ];

    fn structures(entries: &[Vec<String>], bits: u64) -> Vec<Box<dyn PrefixFilter>> {
        let mut all: Vec<Box<dyn PrefixFilter>> = Structure::PAPER
            .iter()
            .chain(&[Structure::CabfNoCheck])
            .map(|s| s.build(entries, 8, bits, None).unwrap())
            .collect();
        all.push(Box::new(
            Cabf::build(
                entries,
                8,
                bits,
                Allocation::Proportional,
                CheckStore::Exact,
                None,
            )
            .unwrap(),
        ));
        all
    }

    #[test]
    fn empty_sequences_are_skipped_not_a_panic() {
        let entries = vec![Vec::new(), vec!["evil.com".to_string()]];
        for structure in Structure::PAPER {
            let filter = structure.build(&entries, 8, 1024, None).unwrap();
            let mut candidates = Vec::new();
            assert_eq!(
                longest_prefix(&*filter, None, &entries[1], &mut candidates),
                1
            );
        }
    }

    #[test]
    fn structure_names_match_the_built_filters() {
        let entries = vec![vec!["evil.com".to_string()]];
        for structure in Structure::PAPER.iter().chain(&[Structure::CabfNoCheck]) {
            assert_eq!(
                structure.build(&entries, 8, 1024, None).unwrap().name(),
                structure.name()
            );
        }
    }

    #[test]
    fn every_structure_finds_every_listed_prefix() {
        // Sequences as the blocklist cuts URLs: reversed host labels, `/`, `/segment`s, `?query`.
        let entries: Vec<Vec<String>> = [
            "com evil",
            "org example h g f e d c b a / /1 /2 /3 /4 /5 /6 /7 /8 /9",
            "net x / /a ?q=1",
            "net x / /a /b",
        ]
        .iter()
        .map(|s| seq(s))
        .collect();
        let table = PrefixTable::new(&entries);
        for structure in structures(&entries, 4096) {
            let mut candidates = Vec::new();
            for components in &entries {
                let found = longest_prefix(&*structure, Some(&table), components, &mut candidates);
                assert_eq!(
                    found,
                    components.len(),
                    "{} {components:?}",
                    structure.name()
                );
            }
            // Below an entry: the entry is the longest listed prefix.
            let query = seq("com evil www / /deeper /path ?z");
            assert_eq!(
                longest_prefix(&*structure, Some(&table), &query, &mut candidates),
                2,
                "{}",
                structure.name()
            );
            // Not below any entry.
            let other = seq("com notevil / /a");
            assert_eq!(
                longest_prefix(&*structure, Some(&table), &other, &mut candidates),
                0
            );
        }
    }

    #[test]
    fn the_correlation_check_rejects_unlisted_prefixes_of_a_member() {
        let entry = seq("com evil / /a");
        for store in [CheckStore::Exact, CheckStore::Bloom] {
            let cabf = Cabf::build(
                std::slice::from_ref(&entry),
                8,
                1 << 16,
                Allocation::Proportional,
                store,
                None,
            )
            .unwrap();
            let mut candidates = Vec::new();
            cabf.probe(&entry, &mut candidates);
            assert_eq!(candidates, [false, false, false, true], "{store:?}");
        }
    }
}
