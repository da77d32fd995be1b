//! Manku's permuted tables: every stored 64-bit fingerprint within Hamming distance `k` of a
//! query, without comparing against all of them.
//!
//! Source: G. S. Manku, A. Jain, A. Das Sarma, "Detecting Near-Duplicates for Web Crawling",
//! WWW 2007, section 3. Split the 64 bits into `b` blocks. Two fingerprints at distance at most
//! `k` differ in at most `k` blocks, so they agree exactly on at least `b − k` of them. For each
//! choice of `r = b − k` blocks keep one table: every fingerprint permuted so that the chosen
//! blocks come first (its *lead*), sorted. A query permuted the same way finds, in each table,
//! the range of stored values with the same lead — a sorted range, found by a bucket index on
//! the leading bits and a binary search — and checks only those candidates' full distance (a
//! permutation of bits keeps Hamming distance, so the check needs no unpermuting). One of the
//! `C(b, r)` tables holds every true match in its range: the lookup equals brute force.
//!
//! The trade-off is memory against candidates: `C(b, b − k)` tables of `8 n` bytes each, and
//! about `n / 2^lead` candidates per table, where `lead` is the number of bits of the `r` chosen
//! blocks. For `k = 3`, `b = 4` gives 4 tables with 16-bit leads; `b = 6` gives 20 tables
//! with 30- or 32-bit leads (Manku's figures for 2³⁴ fingerprints).
//!
//! Blocks cover the bits from the most significant down, the first `64 mod b` of them one bit
//! wider ([`block_ranges`]). The first table leads with blocks `0 … r − 1` in order, so its
//! permutation is the identity: table 0 is the stored fingerprints, sorted.

use crate::error::{Error, Result};

/// The largest distance a set of tables is built for: beyond it the number of tables
/// `C(b, b − k)` and the candidates per probe grow past any use for near-duplicates (Manku
/// et al. use `k = 3`; the Binomial(64, ½) distance of unrelated fingerprints is 32 ± 4).
pub const MAX_DISTANCE: u32 = 8;

/// The most blocks: 16 blocks of 4 bits still lead with whole bits, and `C(16, 8)` = 12,870
/// tables bounds the memory a hostile file's parameters can ask for up front.
pub const MAX_BLOCKS: u32 = 16;

/// The most tables a file may ask for (each holds every fingerprint).
pub const MAX_TABLES: usize = 64;

/// The bit ranges `(shift, width)` of `blocks` blocks over 64 bits, most significant first:
/// block `i` is `(f >> shift) & (2^width − 1)`.
pub fn block_ranges(blocks: u32) -> Vec<(u32, u32)> {
    let base = 64 / blocks;
    let wider = 64 % blocks;
    let mut top = 64;
    (0..blocks)
        .map(|i| {
            let width = base + u32::from(i < wider);
            top -= width;
            (top, width)
        })
        .collect()
}

/// `C(n, r)`, the number of tables for `n` blocks with leads of `r` (small arguments only).
pub fn tables_for(blocks: u32, distance: u32) -> usize {
    let r = blocks.saturating_sub(distance) as u64;
    let n = blocks as u64;
    // C(n, r) = Π (n − r + i) / i for i in 1..=r, exact at every step.
    (1..=r).fold(1u64, |c, i| c * (n - r + i) / i) as usize
}

/// One table's permutation: the blocks in the order they are laid out, leads first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Permutation {
    /// `(shift, width)` of each block in its new order.
    order: Vec<(u32, u32)>,
    /// Bits in the lead (the first `r` blocks of `order`).
    lead_bits: u32,
}

impl Permutation {
    /// The permutation leading with the blocks `lead` (ascending indices), then the others.
    fn new(ranges: &[(u32, u32)], lead: &[usize]) -> Self {
        let mut order: Vec<(u32, u32)> = lead.iter().map(|&i| ranges[i]).collect();
        let lead_bits = order.iter().map(|&(_, w)| w).sum();
        order.extend(
            ranges
                .iter()
                .enumerate()
                .filter(|(i, _)| !lead.contains(i))
                .map(|(_, &r)| r),
        );
        Permutation { order, lead_bits }
    }

    fn apply(&self, f: u64) -> u64 {
        let mut out = 0u64;
        let mut top = 64;
        for &(shift, width) in &self.order {
            top -= width;
            out |= ((f >> shift) & mask(width)) << top;
        }
        out
    }

    fn invert(&self, p: u64) -> u64 {
        let mut out = 0u64;
        let mut top = 64;
        for &(shift, width) in &self.order {
            top -= width;
            out |= ((p >> top) & mask(width)) << shift;
        }
        out
    }
}

/// The low `width` bits set (`width` ≤ 64).
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// One sorted table and the index of its leading bits.
#[derive(Clone, Debug)]
struct Table {
    permutation: Permutation,
    values: Vec<u64>,
    /// `starts[x]` is the first position whose top `bucket_bits` bits are at least `x`;
    /// `starts.len() = 2^bucket_bits + 1`.
    starts: Vec<u32>,
    bucket_bits: u32,
}

impl Table {
    fn new(permutation: Permutation, values: Vec<u64>) -> Self {
        // About one value per bucket, at most 2^24 buckets (64 MiB of offsets at 10⁸ values)
        // and never more bits than the lead, so a bucket never mixes leads it should keep apart.
        let wanted = (values.len().max(1) as f64).log2().ceil() as u32;
        let bucket_bits = wanted.clamp(1, 24).min(permutation.lead_bits.max(1));
        let mut starts = vec![0u32; (1usize << bucket_bits) + 1];
        for &v in &values {
            starts[(v >> (64 - bucket_bits)) as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        Table {
            permutation,
            values,
            starts,
            bucket_bits,
        }
    }

    /// Appends to `out` the stored fingerprints (unpermuted) within `distance` of `query`.
    fn probe(&self, query: u64, distance: u32, out: &mut Vec<u64>) {
        let p = self.permutation.apply(query);
        let bucket = (p >> (64 - self.bucket_bits)) as usize;
        let (mut lo, mut hi) = (
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        );
        let lead = self.permutation.lead_bits;
        if lead > self.bucket_bits {
            let key = p >> (64 - lead);
            let range = &self.values[lo..hi];
            let first = range.partition_point(|&v| (v >> (64 - lead)) < key);
            let last = first + range[first..].partition_point(|&v| (v >> (64 - lead)) == key);
            (lo, hi) = (lo + first, lo + last);
        }
        for &v in &self.values[lo..hi] {
            if (v ^ p).count_ones() <= distance {
                out.push(self.permutation.invert(v));
            }
        }
    }
}

/// Tables of 64-bit fingerprints answering "which are within distance `k`?" (module docs).
#[derive(Clone, Debug)]
pub struct PermutedTables {
    distance: u32,
    blocks: u32,
    tables: Vec<Table>,
}

impl PermutedTables {
    /// Checks `distance` and `blocks`: `blocks` > `distance` (at least one block must agree),
    /// `distance` ≤ [`MAX_DISTANCE`], `blocks` ≤ [`MAX_BLOCKS`], tables ≤ [`MAX_TABLES`].
    pub fn check_shape(distance: u32, blocks: u32) -> Result<usize> {
        if distance > MAX_DISTANCE || blocks <= distance || blocks > MAX_BLOCKS {
            return Err(Error::NearShape {
                distance,
                blocks,
                problem: format!(
                    "the distance must be at most {MAX_DISTANCE} and the blocks more than the \
                     distance and at most {MAX_BLOCKS} (Manku et al. use distance 3 with 4 or 6 \
                     blocks)"
                ),
            });
        }
        let tables = tables_for(blocks, distance);
        if tables > MAX_TABLES {
            return Err(Error::NearShape {
                distance,
                blocks,
                problem: format!(
                    "{tables} tables, more than {MAX_TABLES}: use fewer blocks (distance + 1 \
                     gives distance + 1 tables)"
                ),
            });
        }
        Ok(tables)
    }

    /// The permutation of every table, leads in lexicographic order of block indices (the
    /// first is the identity).
    fn permutations(distance: u32, blocks: u32) -> Vec<Permutation> {
        let ranges = block_ranges(blocks);
        let r = (blocks - distance) as usize;
        let mut out = Vec::new();
        let mut lead: Vec<usize> = (0..r).collect();
        loop {
            out.push(Permutation::new(&ranges, &lead));
            // The next r-combination of 0..blocks in lexicographic order.
            let n = blocks as usize;
            let Some(i) = (0..r).rev().find(|&i| lead[i] < n - r + i) else {
                return out;
            };
            lead[i] += 1;
            for j in i + 1..r {
                lead[j] = lead[j - 1] + 1;
            }
        }
    }

    /// Tables for `fingerprints` (any order, duplicates kept) answering distances up to
    /// `distance`, with `blocks` blocks ([`PermutedTables::check_shape`]).
    pub fn build(fingerprints: &[u64], distance: u32, blocks: u32) -> Result<Self> {
        Self::check_shape(distance, blocks)?;
        let tables = Self::permutations(distance, blocks)
            .into_iter()
            .map(|permutation| {
                let mut values: Vec<u64> =
                    fingerprints.iter().map(|&f| permutation.apply(f)).collect();
                values.sort_unstable();
                Table::new(permutation, values)
            })
            .collect();
        Ok(PermutedTables {
            distance,
            blocks,
            tables,
        })
    }

    /// Tables from stored, already permuted and sorted values (one `Vec` per table, in the
    /// order [`PermutedTables::table_values`] gives them). Refuses a shape out of bounds, a
    /// wrong number of tables, tables of unequal length, unsorted values, or a table that is
    /// not a permutation of table 0 (checked by an order-free sum of the unpermuted values).
    pub fn from_tables(distance: u32, blocks: u32, values: Vec<Vec<u64>>) -> Result<Self> {
        let count = Self::check_shape(distance, blocks)?;
        let invalid = |problem: String| Error::NearTables { problem };
        if values.len() != count {
            return Err(invalid(format!(
                "{} tables for distance {distance} with {blocks} blocks, expected {count}",
                values.len()
            )));
        }
        let permutations = Self::permutations(distance, blocks);
        let n = values[0].len();
        let mut reference = None;
        let mut tables = Vec::with_capacity(count);
        for (i, (permutation, values)) in permutations.into_iter().zip(values).enumerate() {
            if values.len() != n {
                return Err(invalid(format!(
                    "table {i} holds {} values, table 0 {n}",
                    values.len()
                )));
            }
            if values.windows(2).any(|w| w[0] > w[1]) {
                return Err(invalid(format!("table {i} is not sorted")));
            }
            // Σ v and Σ v² (wrapping) of the unpermuted values agree for permutations of one
            // multiset; a corrupt table that passed its checksum would still be caught here.
            let sums = values.iter().fold((0u64, 0u64), |(a, b), &v| {
                let f = permutation.invert(v);
                (a.wrapping_add(f), b.wrapping_add(f.wrapping_mul(f)))
            });
            match reference {
                None => reference = Some(sums),
                Some(sums0) if sums0 != sums => {
                    return Err(invalid(format!(
                        "table {i} does not hold the same fingerprints as table 0"
                    )))
                }
                Some(_) => {}
            }
            tables.push(Table::new(permutation, values));
        }
        Ok(PermutedTables {
            distance,
            blocks,
            tables,
        })
    }

    /// The distance the tables answer up to.
    pub fn distance(&self) -> u32 {
        self.distance
    }

    /// The blocks the 64 bits are split into.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Number of tables.
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// Fingerprints held (each table holds all of them).
    pub fn len(&self) -> usize {
        self.tables[0].values.len()
    }

    /// Whether no fingerprint is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stored fingerprints, sorted (table 0, whose permutation is the identity).
    pub fn sorted(&self) -> &[u64] {
        &self.tables[0].values
    }

    /// Each table's permuted, sorted values, as they are stored.
    pub fn table_values(&self) -> impl Iterator<Item = &[u64]> + '_ {
        self.tables.iter().map(|t| t.values.as_slice())
    }

    /// Bytes held: the values of every table and their bucket indices.
    pub fn memory_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| 8 * t.values.len() + 4 * t.starts.len())
            .sum()
    }

    /// Every stored fingerprint within `distance` of `query` (at most the tables' distance:
    /// larger is an error), sorted and without repeats, into `out` (cleared first).
    pub fn within(&self, query: u64, distance: u32, out: &mut Vec<u64>) -> Result<()> {
        if distance > self.distance {
            return Err(Error::NearDistance {
                asked: distance,
                built: self.distance,
            });
        }
        out.clear();
        for table in &self.tables {
            table.probe(query, distance, out);
        }
        out.sort_unstable();
        out.dedup();
        Ok(())
    }

    /// Candidates the tables would compare for `query` (the sum of the lead ranges): the cost
    /// of a lookup, for measurements.
    pub fn candidates(&self, query: u64) -> usize {
        let mut out = Vec::new();
        self.tables
            .iter()
            .map(|t| {
                out.clear();
                t.probe(query, 64, &mut out);
                out.len()
            })
            .sum()
    }
}

/// Every fingerprint of `all` within `distance` of `query`, sorted and without repeats: the
/// brute-force reference the tables must equal.
pub fn brute_force(all: &[u64], query: u64, distance: u32) -> Vec<u64> {
    let mut out: Vec<u64> = all
        .iter()
        .copied()
        .filter(|&f| (f ^ query).count_ones() <= distance)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use proptest::prelude::*;

    #[test]
    fn blocks_cover_the_64_bits_once() {
        for blocks in 1..=MAX_BLOCKS {
            let ranges = block_ranges(blocks);
            let covered = ranges.iter().fold(0u64, |acc, &(shift, width)| {
                let bits = mask(width) << shift;
                assert_eq!(acc & bits, 0, "blocks {blocks} overlap");
                acc | bits
            });
            assert_eq!(covered, u64::MAX);
        }
    }

    #[test]
    fn table_counts_follow_the_binomial() {
        assert_eq!(tables_for(4, 3), 4);
        assert_eq!(tables_for(6, 3), 20);
        assert_eq!(tables_for(5, 3), 10);
        assert_eq!(tables_for(1, 0), 1);
        assert_eq!(PermutedTables::permutations(3, 6).len(), 20);
        assert!(PermutedTables::check_shape(3, 3).is_err());
        assert!(PermutedTables::check_shape(9, 12).is_err());
        assert!(PermutedTables::check_shape(8, 16).is_err()); // C(16, 8) tables
    }

    #[test]
    fn permutations_invert_and_the_first_is_the_identity() {
        let mut rng = SplitMix64::new(7);
        for (k, b) in [(3, 4), (3, 6), (2, 5), (0, 1), (4, 7)] {
            let perms = PermutedTables::permutations(k, b);
            for (i, p) in perms.iter().enumerate() {
                for _ in 0..100 {
                    let f = rng.next_u64();
                    assert_eq!(p.invert(p.apply(f)), f);
                    if i == 0 {
                        assert_eq!(p.apply(f), f);
                    }
                }
            }
        }
    }

    #[test]
    fn stored_tables_are_read_back_and_tampering_is_refused() {
        let mut rng = SplitMix64::new(11);
        let fps: Vec<u64> = (0..1000).map(|_| rng.next_u64()).collect();
        let tables = PermutedTables::build(&fps, 3, 5).unwrap();
        let stored: Vec<Vec<u64>> = tables.table_values().map(<[u64]>::to_vec).collect();
        let back = PermutedTables::from_tables(3, 5, stored.clone()).unwrap();
        assert_eq!(back.sorted(), tables.sorted());
        let mut bad = stored.clone();
        bad[2][10] ^= 1 << 40;
        bad[2].sort_unstable();
        assert!(PermutedTables::from_tables(3, 5, bad).is_err());
        let mut unsorted = stored.clone();
        unsorted[1].swap(0, 1);
        assert!(PermutedTables::from_tables(3, 5, unsorted).is_err());
        assert!(PermutedTables::from_tables(3, 5, stored[..9].to_vec()).is_err());
    }

    #[test]
    fn a_distance_beyond_the_tables_is_an_error() {
        let tables = PermutedTables::build(&[1, 2, 3], 2, 3).unwrap();
        let mut out = Vec::new();
        assert!(tables.within(0, 3, &mut out).is_err());
        tables.within(0, 2, &mut out).unwrap();
        assert_eq!(out, vec![1, 2, 3]);
    }

    /// Queries near stored fingerprints (0 to k + 1 bits flipped) and random ones.
    fn queries(stored: &[u64], rng: &mut SplitMix64, count: usize, k: u32) -> Vec<u64> {
        (0..count)
            .map(|i| {
                if i % 4 == 3 {
                    return rng.next_u64();
                }
                let mut q = stored[rng.next_u64() as usize % stored.len()];
                for _ in 0..(rng.next_u64() % (u64::from(k) + 2)) {
                    q ^= 1 << (rng.next_u64() % 64);
                }
                q
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4))]
        /// The tables equal brute force on 10⁵ random fingerprints, for every distance k up to 4
        /// (with k + 1 to k + 3 blocks, drawn per case), at every query distance ≤ k.
        #[test]
        fn lookup_equals_brute_force(seed in any::<u64>(), extra in 0u32..=2) {
            let mut rng = SplitMix64::new(seed);
            // Clustered values too: a few fingerprints share long leads.
            let mut fps: Vec<u64> = (0..100_000).map(|_| rng.next_u64()).collect();
            for i in 1..1000 {
                fps[i] = fps[0] ^ (1 << (i % 64)) ^ (1 << ((i * 7) % 64));
            }
            let mut sorted = fps.clone();
            sorted.sort_unstable();
            let mut out = Vec::new();
            for k in 0..=4 {
                let blocks = k + 1 + extra;
                let tables = PermutedTables::build(&fps, k, blocks).unwrap();
                prop_assert_eq!(tables.sorted(), sorted.as_slice());
                for q in queries(&fps, &mut rng, 40, k) {
                    for d in 0..=k {
                        tables.within(q, d, &mut out).unwrap();
                        prop_assert_eq!(&out, &brute_force(&fps, q, d), "k {} b {} d {}", k, blocks, d);
                    }
                }
            }
        }
    }
}
