//! `xorf`'s binary fuse filters as the peer of a compact list, with a side table that names an
//! entry's categories: static filters of the entries' 64-bit fingerprints
//! (`fingerprint(expression_hash(key))`, what phishbloom's lists hash), built once.
//!
//! The side table: most entries of a list share one category set (UT1's phishing and malware
//! folders list most URLs in both; a domain list has one category), so a hit of the main
//! filter is named that *majority* set unless the entry is one of the others. Each other set
//! has a `BinaryFuse8` of its entries, asked in turn after a main hit (about 9 bits per entry
//! of those sets); an entry that a filter of another set answers for as well (about 1 in 256
//! per filter) is kept in a sorted override table of exact fingerprints with its set, asked
//! first. So every entry gets exactly its own set, and a stranger costs one probe of the main
//! filter per expression.
//!
//! `xorf` fills the cells no key uses with random values (its default `uniform-random`, which
//! keeps a stranger whose fingerprint is 0 at the filter's rate), so the false positives of a
//! filter, and with them the override table's size, differ a little from one build to the
//! next; the filters' sizes do not.

use phishbloom_core::keys::{expression_hash, fingerprint};
use phishbloom_url::CanonicalUrl;
use xorf::{BinaryFuse16, BinaryFuse32, BinaryFuse8, DmaSerializable, Filter};

use crate::error::{Error, Result};

/// A binary fuse filter of 64-bit keys, built once from distinct keys.
pub trait Fuse: Filter<u64> + DmaSerializable + Sized {
    /// Bits per fingerprint.
    const BITS: u32;
    /// The filter of these distinct keys (`xorf`'s reason when it cannot be built).
    fn build(keys: &[u64]) -> std::result::Result<Self, &'static str>;
    /// Bytes it serializes to: its descriptor and fingerprints.
    fn bytes(&self) -> u64 {
        (Self::DESCRIPTOR_LEN + self.dma_fingerprints().len()) as u64
    }
}

/// [`Fuse`] for `xorf` filters built from a slice of keys with `f`-bit fingerprints.
macro_rules! fuse {
    ($filter:ty, $bits:expr) => {
        impl Fuse for $filter {
            const BITS: u32 = $bits;
            fn build(keys: &[u64]) -> std::result::Result<Self, &'static str> {
                <$filter>::try_from(keys)
            }
        }
    };
}

fuse!(BinaryFuse8, 8);
fuse!(BinaryFuse16, 16);
fuse!(BinaryFuse32, 32);

/// Bytes an override costs: the 64-bit fingerprint and a 32-bit set index.
const OVERRIDE_BYTES: u64 = 12;

/// A binary fuse filter of a list's entries with the side table of their category sets (see
/// the module documentation).
pub struct FuseTable<F> {
    /// Every entry.
    main: F,
    /// The set of entries no side filter or override names.
    majority: u32,
    /// Each other set with the filter of its entries, largest first.
    side: Vec<(u32, BinaryFuse8)>,
    /// Entries the side filters would misname, by fingerprint, with their sets.
    overrides: Vec<(u64, u32)>,
    /// The category ids of each set.
    sets: Vec<Vec<u16>>,
}

/// The error for a filter `xorf` could not build.
fn unbuildable(reason: &'static str) -> Error {
    Error::Unbuildable {
        experiment: "binary fuse peer",
        reason: reason.to_string(),
    }
}

impl<F: Fuse> FuseTable<F> {
    /// The table of distinct `(fingerprint, category ids)` pairs.
    pub fn build(pairs: &[(u64, Vec<u16>)]) -> Result<Self> {
        let mut sets: Vec<Vec<u16>> = Vec::new();
        let mut members: Vec<Vec<u64>> = Vec::new();
        let mut set_of = Vec::with_capacity(pairs.len());
        for (v, ids) in pairs {
            let index = match sets.iter().position(|s| s == ids) {
                Some(index) => index,
                None => {
                    sets.push(ids.clone());
                    members.push(Vec::new());
                    sets.len() - 1
                }
            };
            members[index].push(*v);
            set_of.push(index as u32);
        }
        let keys: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        let main = F::build(&keys).map_err(unbuildable)?;
        let mut order: Vec<u32> = (0..sets.len() as u32).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(members[s as usize].len()));
        let majority = order.first().copied().unwrap_or(0);
        let side = order
            .iter()
            .skip(1)
            .map(|&s| {
                Ok((
                    s,
                    BinaryFuse8::build(&members[s as usize]).map_err(unbuildable)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut table = FuseTable {
            main,
            majority,
            side,
            overrides: Vec::new(),
            sets,
        };
        let mut overrides: Vec<(u64, u32)> = pairs
            .iter()
            .zip(&set_of)
            .filter(|&((v, _), &set)| table.named(*v) != set)
            .map(|((v, _), &set)| (*v, set))
            .collect();
        overrides.sort_unstable();
        table.overrides = overrides;
        Ok(table)
    }

    /// The set the side filters name for an entry: the first whose filter holds it, else the
    /// majority.
    fn named(&self, v: u64) -> u32 {
        self.side
            .iter()
            .find(|(_, filter)| filter.contains(&v))
            .map_or(self.majority, |&(set, _)| set)
    }

    /// The category set of fingerprint `v`, if the main filter holds it (an entry's own set; a
    /// stranger's false positive gets some set).
    pub fn lookup(&self, v: u64) -> Option<u32> {
        if !self.main.contains(&v) {
            return None;
        }
        Some(
            match self.overrides.binary_search_by_key(&v, |&(key, _)| key) {
                Ok(at) => self.overrides[at].1,
                Err(_) => self.named(v),
            },
        )
    }

    /// The category ids of set `index`.
    pub fn categories(&self, index: u32) -> &[u16] {
        &self.sets[index as usize]
    }

    /// Bytes of the main filter.
    pub fn filter_bytes(&self) -> u64 {
        self.main.bytes()
    }

    /// Bytes of the side table: the side filters, the overrides, the sets' category ids (a
    /// 16-bit length and 16 bits per id) and the majority's index.
    pub fn side_bytes(&self) -> u64 {
        let filters: u64 = self.side.iter().map(|(_, f)| 4 + f.bytes()).sum();
        let sets: u64 = self.sets.iter().map(|s| 2 + 2 * s.len() as u64).sum();
        filters + self.overrides.len() as u64 * OVERRIDE_BYTES + sets + 4
    }

    /// Bytes of the whole structure.
    pub fn bytes(&self) -> u64 {
        self.filter_bytes() + self.side_bytes()
    }

    /// Entries in the override table.
    pub fn overrides(&self) -> usize {
        self.overrides.len()
    }

    /// The set of the first expression of `url` the filter holds.
    pub fn check(&self, url: &CanonicalUrl) -> Option<u32> {
        url.expressions()
            .find_map(|expression| self.lookup(fingerprint(expression_hash(expression))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::rng::SplitMix64;

    /// `n` random fingerprints, each in a set drawn with shares 70 % {0, 1}, 20 % {0}, 10 % {1}.
    fn pairs(n: usize, seed: u64) -> Vec<(u64, Vec<u16>)> {
        let mut rng = SplitMix64::new(seed);
        let mut pairs: Vec<(u64, Vec<u16>)> = (0..n)
            .map(|_| {
                let set = match rng.below(10) {
                    0..=6 => vec![0, 1],
                    7 | 8 => vec![0],
                    _ => vec![1],
                };
                (rng.next_u64(), set)
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup_by_key(|p| p.0);
        pairs
    }

    #[test]
    fn every_entry_gets_exactly_its_own_set() {
        let pairs = pairs(50_000, 3);
        let table = FuseTable::<BinaryFuse16>::build(&pairs).unwrap();
        for (v, ids) in &pairs {
            let set = table.lookup(*v).expect("no false negatives");
            assert_eq!(table.categories(set), &ids[..]);
        }
        // The majority's 70 % are asked of both 8-bit filters and the smallest set's 10 % of
        // the larger one's first: about 1.5 · 50,000 / 256 ≈ 290 overrides; 5 σ is about 85.
        let overrides = table.overrides();
        assert!((100..=400).contains(&overrides), "{overrides}");
        // The side table is about 9 bits per entry of the 30 % in other sets, plus overrides.
        let side_bits = table.side_bytes() as f64 * 8.0 / pairs.len() as f64;
        assert!((2.5..4.5).contains(&side_bits), "{side_bits}");
    }

    #[test]
    fn strangers_hit_at_the_fingerprint_rate() {
        let pairs = pairs(20_000, 5);
        let table = FuseTable::<BinaryFuse16>::build(&pairs).unwrap();
        let mut rng = SplitMix64::new(6);
        let hits = (0..1_000_000)
            .filter(|_| table.lookup(rng.next_u64()).is_some())
            .count();
        // 10⁶ · 2⁻¹⁶ ≈ 15.3 expected; 5 σ ≈ 20.
        assert!(hits <= 36, "{hits}");
        let single: Vec<(u64, Vec<u16>)> = pairs.iter().map(|(v, _)| (*v, vec![0])).collect();
        let one = FuseTable::<BinaryFuse32>::build(&single).unwrap();
        assert_eq!((one.overrides(), one.side.len()), (0, 0));
        assert_eq!(one.side_bytes(), 4 + 4);
        // 32-bit fingerprints at xorf's size factor for this n (whole segments round it up a
        // little).
        let bits = one.filter_bytes() as f64 * 8.0 / single.len() as f64;
        let formula = crate::theory::binary_fuse_bits_per_key(32, single.len() as u64);
        assert!(
            (formula..formula * 1.05).contains(&bits),
            "{bits} vs {formula}"
        );
    }
}
