//! Part (a) of "Lists that change": bits per key against p (10⁻¹ … 10⁻⁶) of the classic,
//! blocked, cuckoo and counting structures (structure bytes × 8 / n), each with its
//! false-positive rate measured on fixed-seed non-members, beside the static binary fuse
//! filters of `xorf` as a reference.

use phishbloom_filter::counting::CountingFilter;
use phishbloom_filter::cuckoo::{CuckooFilter, TARGET_LOAD};
use phishbloom_filter::{Blocked, Bloom, Classic, Filter};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::Result;
use crate::keys::{sum_parallel, InlineKey, KeySpace, MEMBERS, NON_MEMBERS};
use crate::measure::contenders::{cuckoo_filled, Contender, Structure};
use crate::measure::{sizing_error, Settings};
use crate::stats::Measurement;
use crate::theory;

/// The rates of the bits-per-key sweep: one per decade from 10⁻¹ to 10⁻⁶.
pub const RATES: [f64; 6] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
/// Query-index blocks per measured point: 2^34 indices each, more than any query count, so no
/// two points share a non-member.
const STRUCTURE_STRIDE_BITS: u32 = 34;

/// One measured point of the bits-per-key sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BitsPoint {
    /// The structure.
    pub structure: Structure,
    /// The rate it was sized for (a binary fuse filter's own 2^−f).
    pub p: f64,
    /// Keys inserted.
    pub n: u64,
    /// Bytes of its bits, slots, counters or fingerprints.
    pub bytes: u64,
    /// bytes × 8 / n.
    pub bits_per_key: f64,
    /// The bits per key its formula gives for p (and n, for binary fuse).
    pub formula_bits_per_key: f64,
    /// The load factor a cuckoo filter was sized for (95 %, lower if a build was refused).
    pub load: Option<f64>,
    /// Members answered "absent" (must be 0).
    pub false_negatives: u64,
    /// The rate on fresh non-members, against the structure's own predicted rate (for the
    /// cuckoo filter, the paper's upper bound 2bα/2^f).
    pub measured: Measurement,
}

/// The formula's bits per key of a structure at rate `p` and `n` keys.
pub fn formula_bits_per_key(structure: Structure, p: f64, n: u64) -> f64 {
    match structure {
        Structure::Classic | Structure::Blocked | Structure::Fastbloom => {
            theory::bloom_bits_per_key(p)
        }
        Structure::Cuckoo | Structure::CuckoofilterCrate => {
            theory::cuckoo_bits_per_key_continuous(p, TARGET_LOAD)
        }
        Structure::Counting => phishbloom_filter::counting::counting_bits_per_key(p),
        Structure::BinaryFuse8 => theory::binary_fuse_bits_per_key(8, n),
        Structure::BinaryFuse16 => theory::binary_fuse_bits_per_key(16, n),
    }
}

/// Inserts keys `0..n` of [`MEMBERS`] into a contender; `false` if one was refused.
fn insert_members<C: Contender>(filter: &mut C, n: u64) -> bool {
    let mut key = InlineKey::default();
    (0..n).all(|i| filter.insert(MEMBERS.write(i, &mut key)))
}

/// Counts the keys of `space` in `range` that a contender answers "present" for, on
/// `threads` threads.
fn count_present<C: Contender>(
    filter: &C,
    space: KeySpace,
    range: std::ops::Range<u64>,
    threads: usize,
) -> u64 {
    sum_parallel(range, threads, |part| {
        let mut key = InlineKey::default();
        part.filter(|&i| filter.contains(space.write(i, &mut key)))
            .count() as u64
    })
}

/// The points of the bits-per-key sweep at `n` keys, each queried on its own block of
/// non-members.
struct Sweep<'a> {
    settings: &'a Settings,
    n: u64,
    /// The first query index of the last point's block: each point moves it to the next
    /// block, so no two points share a non-member.
    offset: u64,
}

impl Sweep<'_> {
    /// Measures a built contender sized for rate `p`: members re-queried, then non-members
    /// from the next block, as many as `theoretical` (its predicted rate) asks for.
    fn point<C: Contender>(
        &mut self,
        structure: Structure,
        filter: &C,
        p: f64,
        load: Option<f64>,
        theoretical: f64,
    ) -> BitsPoint {
        let (settings, n) = (self.settings, self.n);
        self.offset += 1 << STRUCTURE_STRIDE_BITS;
        let offset = self.offset;
        let sizes = &settings.sizes;
        let queries = theory::queries_for(
            theoretical,
            sizes.changes_target_false_positives,
            sizes.changes_min_queries,
            sizes.changes_max_queries,
        );
        let false_negatives = n - count_present(filter, MEMBERS, 0..n, settings.threads);
        let hits = count_present(
            filter,
            NON_MEMBERS,
            offset..offset + queries,
            settings.threads,
        );
        let bytes = filter.bytes();
        BitsPoint {
            structure,
            p,
            n,
            bytes,
            bits_per_key: bytes as f64 * 8.0 / n as f64,
            formula_bits_per_key: formula_bits_per_key(structure, p, n),
            load,
            false_negatives,
            measured: Measurement::new(hits, queries, theoretical),
        }
    }

    /// Inserts the `n` members into `filter`, built for rate `p`, and measures it
    /// ([`Sweep::point`]) against the rate `theoretical` predicts for it at `n` keys.
    fn filled<C: Contender>(
        &mut self,
        structure: Structure,
        mut filter: C,
        p: f64,
        theoretical: fn(&C, u64) -> f64,
    ) -> BitsPoint {
        insert_members(&mut filter, self.n);
        let theoretical = theoretical(&filter, self.n);
        self.point(structure, &filter, p, None, theoretical)
    }
}

/// A static binary fuse filter over the members' xxh3-64 hashes, as a contender.
struct Fuse<F>(F, u64);

impl<F: xorf::Filter<u64> + Sync> Contender for Fuse<F> {
    fn insert(&mut self, _key: &[u8]) -> bool {
        // Static: built from every key at once.
        false
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(&xxh3_64(key))
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
    fn bytes(&self) -> u64 {
        self.1
    }
    const DELETES: bool = false;
}

/// The binary fuse references at `n` keys: 8- and 16-bit fingerprints.
fn fuse_points(sweep: &mut Sweep<'_>) -> Result<Vec<BitsPoint>> {
    let n = sweep.n;
    let mut key = InlineKey::default();
    let hashes: Vec<u64> = (0..n)
        .map(|i| xxh3_64(MEMBERS.write(i, &mut key)))
        .collect();
    let failed = |reason: &str| crate::Error::Unbuildable {
        experiment: "binary fuse filter",
        reason: format!("xorf could not build it from {n} keys: {reason}"),
    };
    let fuse8 = xorf::BinaryFuse8::try_from(&hashes).map_err(failed)?;
    let bytes8 = fuse8.fingerprints.len() as u64;
    let fuse16 = xorf::BinaryFuse16::try_from(&hashes).map_err(failed)?;
    let bytes16 = fuse16.fingerprints.len() as u64 * 2;
    drop(hashes);
    let (p8, p16) = (theory::binary_fuse_fpp(8), theory::binary_fuse_fpp(16));
    Ok(vec![
        sweep.point(Structure::BinaryFuse8, &Fuse(fuse8, bytes8), p8, None, p8),
        sweep.point(
            Structure::BinaryFuse16,
            &Fuse(fuse16, bytes16),
            p16,
            None,
            p16,
        ),
    ])
}

/// Part (a): every own structure at every rate of [`RATES`], then the binary fuse references,
/// all at the sizes' `changes_bits_keys`.
pub fn bits_per_key(settings: &Settings) -> Result<Vec<BitsPoint>> {
    let n = settings.sizes.changes_bits_keys;
    let mut points = Vec::new();
    let mut sweep = Sweep {
        settings,
        n,
        offset: 0,
    };
    let fill = |filter: &mut CuckooFilter| insert_members(filter, n).then_some(());
    for &p in &RATES {
        settings.progress.say(&format!(
            "lists that change: bits per key at p = {p:e}, n = {n}"
        ));
        let sized = || sizing_error("bits per key", 0, 0);
        let classic = Bloom::<Classic>::new(n, p).map_err(sized())?;
        let fpp = |filter: &Bloom<Classic>, n| filter.theoretical_fpp(n as f64);
        points.push(sweep.filled(Structure::Classic, classic, p, fpp));
        let blocked = Bloom::<Blocked>::new(n, p).map_err(sized())?;
        let fpp = |filter: &Bloom<Blocked>, n| filter.theoretical_fpp(n as f64);
        points.push(sweep.filled(Structure::Blocked, blocked, p, fpp));
        let (cuckoo, load, ()) = cuckoo_filled(n, p, fill)?;
        let theoretical = cuckoo.expected_fpp();
        points.push(sweep.point(Structure::Cuckoo, &cuckoo, p, Some(load), theoretical));
        drop(cuckoo);
        let counting = CountingFilter::new(n, p).map_err(sized())?;
        let fpp = |filter: &CountingFilter, _| filter.expected_fpp();
        points.push(sweep.filled(Structure::Counting, counting, p, fpp));
    }
    settings
        .progress
        .say("lists that change: binary fuse references");
    points.extend(fuse_points(&mut sweep)?);
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::changes::tests::tiny;

    #[test]
    fn bits_per_key_follow_the_formulas_and_rates_stay_binomial() {
        let points = bits_per_key(&tiny()).unwrap();
        assert_eq!(points.len(), RATES.len() * 4 + 2);
        for point in &points {
            assert_eq!(point.false_negatives, 0, "{point:?}");
            let m = &point.measured;
            // The count is binomial around the structure's own rate (an upper bound for the
            // cuckoo filter): 5 σ plus one count, fixed seeds.
            let expected = m.queries as f64 * m.theoretical;
            let sigma = (expected * (1.0 - m.theoretical)).sqrt();
            let excess = m.false_positives as f64 - expected;
            assert!(excess <= 5.0 * sigma + 1.0, "{point:?}");
            if point.structure != Structure::Cuckoo {
                assert!(-excess <= 5.0 * sigma + 1.0, "{point:?}");
            }
            // Measured bytes against the formula: the classic and counting filters round m up;
            // the cuckoo filter rounds f up to whole bits (7 for 6.3 at p = 0.1) and buckets
            // up; binary fuse rounds to whole segments. The blocked layout is sized by its own
            // exact formula, which at small p and n needs far more than 1.44·log₂(1/p).
            let ratio = point.bits_per_key / point.formula_bits_per_key;
            if point.structure == Structure::Blocked {
                let (m, _) = phishbloom_filter::math::blocked_size(point.n, point.p).unwrap();
                assert_eq!(point.bytes, m / 8, "{point:?}");
            } else {
                assert!((0.99..1.2).contains(&ratio), "{point:?}");
            }
        }
    }
}
