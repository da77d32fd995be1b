//! Section 6's measurements, seed 004's memory table: Bloom filters for n = 10⁴…10⁸ at
//! p = 10⁻⁴ and 10⁻⁷ (sized for every n, built and measured where the sizes allow), an exact
//! `HashSet<String>` and seed 001's sorted table of 32-bit fingerprints, all on phone numbers.
//!
//! The hash set's bytes are not measured with an allocator (a library cannot install a global
//! one): [`hashset_heap_bytes`] computes them from the built set's real capacities — its table's
//! and every `String`'s — with the allocator's rounding. The resident-memory growth while
//! building it is recorded beside them as an independent, coarser reading.

use std::collections::HashSet;
use std::time::Instant;

use phishbloom_core::plan::hashset_bytes;
use phishbloom_filter::data_len;
use phishbloom_filter::math::{self, BLOCK_BITS};
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, Layout, LayoutKind};

use crate::error::Result;
use crate::keys::{count_listed, insert_range, sum_parallel, InlineKey, OTHER_PHONES, PHONES};
use crate::measure::machine::{resident_bytes, resident_growth};
use crate::measure::{sizing_error, Settings};
use crate::stats::Measurement;
use crate::theory;

/// Seed 004's target rates.
pub const RATES: [f64; 2] = [1e-4, 1e-7];
/// Bytes of one of seed 004's keys: an 11-digit mobile number.
pub const PHONE_BYTES: u64 = 11;
/// Bits of seed 001's password fingerprints.
pub const FINGERPRINT_BITS: u32 = 32;
/// Members re-queried for false negatives per built filter (a sample at 10⁸).
pub const MEMBER_CHECKS: u64 = 1_000_000;
/// The n whose classic sizes seed 004's printed numbers match (10⁶, 10⁷, 10⁸).
pub const SEED_004_N: [u64; 3] = [1_000_000, 10_000_000, 100_000_000];
/// Most non-members queried against a hash set (it answers exactly; more only costs time).
const HASHSET_QUERIES: u64 = 1_000_000;
/// Query-index blocks per built structure: 2^34 indices each, more than any query count, so
/// no two structures share a non-member.
const STRUCTURE_STRIDE_BITS: u32 = 34;

/// A built and measured filter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BuiltFilter {
    /// Members re-queried (the first `min(n, MEMBER_CHECKS)`).
    pub member_checks: u64,
    /// Of those, answered "not listed" (must be 0).
    pub false_negatives: u64,
    /// The rate on fresh non-members.
    pub measured: Measurement,
    /// Bytes of the built filter's bit array.
    pub bytes: u64,
}

/// One Bloom filter of the table: sized always, built when n allows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FilterRow {
    /// n.
    pub n: u64,
    /// Target rate.
    pub p: f64,
    /// Layout.
    #[serde(serialize_with = "crate::serialize_display")]
    pub layout: LayoutKind,
    /// m.
    pub m: u64,
    /// k.
    pub k: u32,
    /// Bytes of the bit array for m (computed).
    pub bytes: u64,
    /// The rate theory gives for m, k, n.
    pub theory_rate: f64,
    /// The built filter's measurements, when n ≤ the sizes' `memory_build_max`.
    pub built: Option<BuiltFilter>,
}

/// A `HashSet<String>` of phone numbers, built.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HashSetRun {
    /// Heap bytes computed from the built set's real capacities ([`hashset_heap_bytes`]).
    pub heap_bytes: u64,
    /// Growth of the process's resident memory while building it (`None` off Linux).
    pub rss_growth: Option<u64>,
    /// Non-members queried.
    pub queries: u64,
    /// Non-members it answered "present" (an exact set: must be 0).
    pub false_positives: u64,
}

/// Seed 001's sorted table of 32-bit fingerprints, built.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FingerprintRun {
    /// Bytes of the table: its length × 4.
    pub bytes: u64,
    /// The rate on fresh non-members, with `1 − (1 − 2⁻³²)ⁿ` as theory.
    pub measured: Measurement,
}

/// The exact structures for one n.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExactRow {
    /// n.
    pub n: u64,
    /// The hash set's bytes by the layout formula ([`hashset_bytes`]), not measured.
    pub hashset_formula_bytes: u64,
    /// The built hash set, when n ≤ the sizes' `hashset_build_max`.
    pub hashset: Option<HashSetRun>,
    /// The fingerprint table's bytes, 4n (computed).
    pub fingerprint_bytes: u64,
    /// The fingerprint table's theoretical rate `1 − (1 − 2⁻³²)ⁿ`.
    pub fingerprint_theory: f64,
    /// The built table, when n ≤ the sizes' `fingerprint_build_max`.
    pub fingerprints: Option<FingerprintRun>,
}

/// Classic m at seed 004's rates for one n (to set beside its printed numbers).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClassicSizes {
    /// n.
    pub n: u64,
    /// m at p = 10⁻⁴.
    pub m_p4: u64,
    /// m at p = 10⁻⁷.
    pub m_p7: u64,
}

/// Section 6's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Memory {
    /// Per n of the sizes' `memory_items`, per rate of [`RATES`]: classic, then blocked.
    pub filters: Vec<FilterRow>,
    /// Per n of the sizes' `memory_items`.
    pub exact: Vec<ExactRow>,
    /// Classic sizes for [`SEED_004_N`].
    pub seed_004: Vec<ClassicSizes>,
}

/// Builds a filter of layout `L` sized for `n` at `p` from phone numbers and measures it with
/// non-members from index `offset` on.
fn build<L: Layout>(settings: &Settings, n: u64, p: f64, offset: u64) -> Result<BuiltFilter> {
    let mut filter = Bloom::<L>::new(n, p).map_err(sizing_error("memory table", 0, 0))?;
    insert_range(&mut filter, PHONES, 0..n, 1);
    let checks = n.min(MEMBER_CHECKS);
    let false_negatives = checks - count_listed(&filter, PHONES, 0..checks, settings.threads);
    let queries = settings.sizes.memory_queries;
    let hits = count_listed(
        &filter,
        OTHER_PHONES,
        offset..offset + queries,
        settings.threads,
    );
    Ok(BuiltFilter {
        member_checks: checks,
        false_negatives,
        measured: Measurement::new(hits, queries, filter.theoretical_fpp(n as f64)),
        bytes: filter.size_in_bytes(),
    })
}

/// Builds the exact hash set of `n` phone numbers, reads its heap bytes and resident-memory
/// growth, and checks that it is exact.
fn build_hashset(settings: &Settings, n: u64) -> HashSetRun {
    let before = resident_bytes();
    let set: HashSet<String> = (0..n).map(|i| PHONES.string(i)).collect();
    let rss_growth = resident_growth(before);
    let heap_bytes = hashset_heap_bytes(&set);
    let queries = settings.sizes.memory_queries.min(HASHSET_QUERIES);
    let false_positives = (0..queries)
        .filter(|&i| set.contains(&OTHER_PHONES.string(i)))
        .count() as u64;
    HashSetRun {
        heap_bytes,
        rss_growth,
        queries,
        false_positives,
    }
}

/// Heap bytes of a built `HashSet<String>`, computed from its real capacities (not a
/// measurement by the allocator): hashbrown's one table allocation of `buckets` slots (a
/// `String` plus one control byte each, and one trailing group of 16 control bytes — the SSE2
/// group width; 8 on targets without SSE2, where this overcounts by 8 bytes), with `buckets` the
/// power of two whose 7/8 is the capacity, plus each string's own allocation as glibc's malloc
/// sizes it: capacity + 8-byte header, rounded up to 16, at least 32.
///
/// Source: hashbrown's `RawTableInner` layout (`TableLayout::calculate_layout_for`, load factor
/// 7/8 in `bucket_mask_to_capacity`); glibc malloc's chunk sizes (`request2size`, `MINSIZE`).
pub fn hashset_heap_bytes(set: &HashSet<String>) -> u64 {
    /// hashbrown's SSE2 group width: the trailing control bytes that mirror the first group.
    const GROUP: u64 = 16;
    let slot = std::mem::size_of::<String>() as u64;
    let capacity = set.capacity() as u64;
    let buckets = if capacity == 0 {
        0
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    let table = buckets * (slot + 1) + GROUP;
    let strings: u64 = set.iter().map(|s| malloc_chunk(s.capacity() as u64)).sum();
    table + strings
}

/// Bytes glibc's malloc reserves for a request of `bytes`: `bytes` + an 8-byte size header,
/// rounded up to a multiple of 16, at least 32 (64-bit glibc; `request2size` and `MINSIZE`).
fn malloc_chunk(bytes: u64) -> u64 {
    (bytes + 8).div_ceil(16).max(2) * 16
}

/// A 32-bit fingerprint: the low half of the key's xxh3-64.
fn fingerprint(key: &[u8]) -> u32 {
    xxhash_rust::xxh3::xxh3_64(key) as u32
}

/// Seed 001's sorted fingerprint table of `n` phone numbers, built and queried with
/// non-members from index `offset` on.
fn build_fingerprints(settings: &Settings, n: u64, offset: u64) -> FingerprintRun {
    let mut key = InlineKey::default();
    let mut table: Vec<u32> = (0..n)
        .map(|i| fingerprint(PHONES.write(i, &mut key)))
        .collect();
    table.sort_unstable();
    let queries = settings.sizes.memory_queries;
    let table = &table;
    let hits = sum_parallel(offset..offset + queries, settings.threads, |part| {
        let mut key = InlineKey::default();
        part.filter(|&i| {
            table
                .binary_search(&fingerprint(OTHER_PHONES.write(i, &mut key)))
                .is_ok()
        })
        .count() as u64
    });
    FingerprintRun {
        bytes: table.len() as u64 * 4,
        measured: Measurement::new(hits, queries, theory::fingerprint_fpp(n, FINGERPRINT_BITS)),
    }
}

/// One filter of the table: its size and theory, and — when `n` is small enough to build —
/// the filter built and measured on a fresh block of query indices (`offset` advances).
fn filter_row(
    settings: &Settings,
    (n, p): (u64, f64),
    (layout, m, k): (LayoutKind, u64, u32),
    offset: &mut u64,
) -> Result<FilterRow> {
    let (sizes, progress) = (&settings.sizes, &settings.progress);
    let built = if n <= sizes.memory_build_max {
        progress.say(&format!("memory table: {layout} filter, n = {n}, p = {p}"));
        *offset += 1 << STRUCTURE_STRIDE_BITS;
        let started = Instant::now();
        let built = match layout {
            LayoutKind::Classic => build::<Classic>(settings, n, p, *offset)?,
            _ => build::<Blocked>(settings, n, p, *offset)?,
        };
        progress.say(&format!(
            "  built and measured in {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        Some(built)
    } else {
        None
    };
    let theory_rate = match layout {
        LayoutKind::Classic => math::classic_fpp(m, n as f64, k),
        _ => math::blocked_fpp(m, n as f64, k, BLOCK_BITS),
    };
    let bytes = data_len(m);
    if let Some(b) = &built {
        debug_assert_eq!(b.bytes, bytes, "the built filter has the computed size");
    }
    Ok(FilterRow {
        n,
        p,
        layout,
        m,
        k,
        bytes,
        theory_rate,
        built,
    })
}

/// Runs the section's measurements.
pub fn run(settings: &Settings) -> Result<Memory> {
    let sizes = &settings.sizes;
    let progress = &settings.progress;
    let mut filters = Vec::new();
    let mut exact = Vec::new();
    let mut offset = 0u64;
    for &n in &sizes.memory_items {
        for &p in &RATES {
            let classic_m =
                math::optimal_num_bits(n, p).map_err(sizing_error("memory table", 0, 0))?;
            let classic_k = math::optimal_num_hashes(n, classic_m);
            let (blocked_m, blocked_k) =
                math::blocked_size(n, p).map_err(sizing_error("memory table", 0, 0))?;
            for (layout, m, k) in [
                (LayoutKind::Classic, classic_m, classic_k),
                (LayoutKind::Blocked, blocked_m, blocked_k),
            ] {
                filters.push(filter_row(settings, (n, p), (layout, m, k), &mut offset)?);
            }
        }

        // The exact structures, once per n.
        let hashset = (n <= sizes.hashset_build_max).then(|| {
            progress.say(&format!("memory table: HashSet<String>, n = {n}"));
            build_hashset(settings, n)
        });
        let fingerprints = (n <= sizes.fingerprint_build_max).then(|| {
            progress.say(&format!(
                "memory table: sorted 32-bit fingerprints, n = {n}"
            ));
            // A fresh block of query indices, as for the filters above.
            offset += 1 << STRUCTURE_STRIDE_BITS;
            build_fingerprints(settings, n, offset)
        });
        exact.push(ExactRow {
            n,
            hashset_formula_bytes: hashset_bytes(n, PHONE_BYTES),
            hashset,
            fingerprint_bytes: n * 4,
            fingerprint_theory: theory::fingerprint_fpp(n, FINGERPRINT_BITS),
            fingerprints,
        });
    }
    let mut seed_004 = Vec::new();
    for n in SEED_004_N {
        let sized = |p| math::optimal_num_bits(n, p).map_err(sizing_error("memory table", 0, 0));
        seed_004.push(ClassicSizes {
            n,
            m_p4: sized(1e-4)?,
            m_p7: sized(1e-7)?,
        });
    }
    Ok(Memory {
        filters,
        exact,
        seed_004,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_bytes_of_a_built_set_follow_its_capacities() {
        let n = 10_000u64;
        let set: HashSet<String> = (0..n).map(|i| PHONES.string(i)).collect();
        // Collected with an exact size hint: 10,000 · 8/7 → 16,384 buckets; every string holds
        // its 11 bytes in a 32-byte chunk. That is also what the layout formula assumes.
        let expected = 16_384 * (std::mem::size_of::<String>() as u64 + 1) + 16 + n * 32;
        assert_eq!(hashset_heap_bytes(&set), expected);
        assert_eq!(hashset_heap_bytes(&set), hashset_bytes(n, PHONE_BYTES) + 16);
        // A string with spare capacity costs its capacity, not its length.
        let mut padded = HashSet::with_capacity(set.capacity());
        padded.extend(set.iter().map(|s| {
            let mut s = s.clone();
            s.reserve_exact(40);
            s
        }));
        assert!(hashset_heap_bytes(&padded) >= expected + n * 32);
    }

    #[test]
    fn malloc_chunks_round_to_sixteen_with_a_minimum() {
        assert_eq!(malloc_chunk(0), 32);
        assert_eq!(malloc_chunk(24), 32);
        assert_eq!(malloc_chunk(25), 48);
        assert_eq!(malloc_chunk(11), 32);
    }

    #[test]
    fn fingerprint_rate_is_binomial_around_theory() {
        // 10⁵ fingerprints: theory 1 − (1 − 2⁻³²)^10⁵ ≈ 2.33·10⁻⁵; 2·10⁵ queries expect ≈ 4.7
        // false positives; allow 5 σ of that binomial plus one count.
        let settings = Settings {
            sizes: crate::measure::Sizes {
                memory_queries: 200_000,
                ..crate::measure::Sizes::quick()
            },
            ..Settings::new("unused.csv".into(), true, 2, false)
        };
        let run = build_fingerprints(&settings, 100_000, 1 << 34);
        assert_eq!(run.bytes, 400_000);
        let m = &run.measured;
        let expected = m.queries as f64 * m.theoretical;
        let sigma = (expected * (1.0 - m.theoretical)).sqrt();
        assert!(
            (m.false_positives as f64 - expected).abs() <= 5.0 * sigma + 1.0,
            "{m:?}"
        );
    }
}
