//! Manku's tables at 10⁷ fingerprints: random 64-bit fingerprints (what SimHash gives unrelated
//! documents), queried with planted near ones (a stored fingerprint with 1…3 bits flipped, which
//! must be found) and with random ones; for 4 tables (`b = 4, k = 3`) and 20 tables
//! (`b = 6, k = 3`): build time, the bytes of the near-tables section (tables × 8 × n), memory
//! with the bucket indices, candidates compared per lookup, and lookup time beside brute force
//! in the same run.
//!
//! The timed lookups here are the report's; the criterion bench `near` of the filter crate
//! (`cargo bench -p phishbloom-filter --bench near`) measures the same lookups beside brute
//! force under criterion.

use std::time::Instant;

use phishbloom_filter::near::{brute_force, PermutedTables};
use phishbloom_filter::rng::SplitMix64;

use super::{NearSizes, K};
use crate::error::{Error, Result};
use crate::measure::Settings;

/// Blocks of the two shapes measured (4 and 20 tables for `k = 3`).
pub const BLOCKS: [u32; 2] = [4, 6];

/// One table shape at scale.
#[derive(Clone, Debug)]
pub struct ScaleRow {
    /// Fingerprints stored.
    pub fingerprints: u64,
    /// Distance answered.
    pub distance: u32,
    /// Blocks.
    pub blocks: u32,
    /// Tables.
    pub tables: u64,
    /// Seconds to build every table (permute, sort, index).
    pub build_seconds: f64,
    /// Bytes of the near-tables section's values: tables × 8 × n.
    pub section_bytes: u64,
    /// Bytes held in memory, values and bucket indices.
    pub memory_bytes: u64,
    /// Mean candidates compared per lookup (random queries).
    pub candidates: f64,
    /// Lookups timed.
    pub queries: u64,
    /// Microseconds per lookup (planted and random queries, interleaved).
    pub query_us: f64,
    /// Planted queries found (of `queries / 2`).
    pub planted_found: u64,
    /// Microseconds per brute-force lookup, measured in the same run.
    pub brute_us: f64,
    /// Brute-force lookups timed.
    pub brute_queries: u64,
}

impl ScaleRow {
    /// Brute-force time ÷ table time.
    pub fn speedup(&self) -> f64 {
        self.brute_us / self.query_us.max(f64::MIN_POSITIVE)
    }

    /// The section's bytes at `n` fingerprints with these tables: tables × 8 × n.
    pub fn section_bytes_at(&self, n: u64) -> u64 {
        self.tables * 8 * n
    }
}

/// `value` with `bits` distinct random bits flipped.
pub fn flip_bits(value: u64, bits: u32, rng: &mut SplitMix64) -> u64 {
    let mut out = value;
    let mut flipped = 0;
    while flipped < bits {
        let bit = 1u64 << rng.below(64);
        if (out ^ value) & bit == 0 {
            out ^= bit;
            flipped += 1;
        }
    }
    out
}

/// Random fingerprints and, interleaved, queries: planted ones (a stored fingerprint with 1…3
/// bits flipped) at even positions, random ones at odd positions.
pub fn workload(n: usize, queries: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
    let mut rng = SplitMix64::new(seed);
    let stored: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let queries = (0..queries)
        .map(|i| {
            if i % 2 == 0 {
                let base = stored[rng.below(n as u64) as usize];
                flip_bits(base, 1 + rng.below(3) as u32, &mut rng)
            } else {
                rng.next_u64()
            }
        })
        .collect();
    (stored, queries)
}

/// Runs both shapes.
pub fn run(settings: &Settings, sizes: &NearSizes) -> Result<Vec<ScaleRow>> {
    let n = sizes.scale_fingerprints;
    let (stored, queries) = workload(n, sizes.scale_queries, super::SEED ^ 0x5ca1e);
    // Brute force once, on the first queries (it reads all n fingerprints per lookup).
    let brute: Vec<u64> = queries
        .iter()
        .copied()
        .take(sizes.scale_brute_queries)
        .collect();
    let mut rows = Vec::new();
    for blocks in BLOCKS {
        settings
            .progress
            .say(&format!("near: {n} fingerprints, {blocks} blocks"));
        let started = Instant::now();
        let tables = PermutedTables::build(&stored, K, blocks)?;
        let build_seconds = started.elapsed().as_secs_f64();
        let random: Vec<u64> = queries.iter().skip(1).step_by(2).copied().collect();
        let candidates = random.iter().map(|&q| tables.candidates(q)).sum::<usize>() as f64
            / random.len().max(1) as f64;
        let mut out = Vec::new();
        let mut planted_found = 0u64;
        let started = Instant::now();
        for (i, &q) in queries.iter().enumerate() {
            tables.within(q, K, &mut out)?;
            planted_found += u64::from(i % 2 == 0 && !out.is_empty());
        }
        let query_us = started.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
        // Brute force right after, in the same run and on the same data, checking the answers.
        let started = Instant::now();
        let mut brute_answers = Vec::with_capacity(brute.len());
        for &q in &brute {
            brute_answers.push(brute_force(&stored, q, K));
        }
        let brute_us = started.elapsed().as_secs_f64() * 1e6 / brute.len().max(1) as f64;
        for (&q, expected) in brute.iter().zip(&brute_answers) {
            tables.within(q, K, &mut out)?;
            if &out != expected {
                return Err(Error::Unbuildable {
                    experiment: "near at scale",
                    reason: format!("the tables and brute force disagree on {q:#018x}"),
                });
            }
        }
        rows.push(ScaleRow {
            fingerprints: n as u64,
            distance: K,
            blocks,
            tables: tables.tables() as u64,
            build_seconds,
            section_bytes: 8 * (tables.tables() * n) as u64,
            memory_bytes: tables.memory_bytes() as u64,
            candidates,
            queries: queries.len() as u64,
            query_us,
            planted_found,
            brute_us,
            brute_queries: brute.len() as u64,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_exactly_the_bits_asked() {
        let mut rng = SplitMix64::new(1);
        for bits in 0..=8 {
            let v = rng.next_u64();
            assert_eq!((flip_bits(v, bits, &mut rng) ^ v).count_ones(), bits);
        }
    }

    #[test]
    fn small_scale_run_finds_every_planted_query() {
        let settings = Settings::new("unused.csv".into(), true, 1, false);
        let sizes = NearSizes {
            max_documents: 0,
            scale_fingerprints: 20_000,
            scale_queries: 200,
            scale_brute_queries: 10,
        };
        let rows = run(&settings, &sizes).expect("valid shapes");
        assert_eq!(rows[0].tables, 4);
        assert_eq!(rows[1].tables, 20);
        for row in &rows {
            assert_eq!(row.planted_found, 100);
            assert_eq!(row.section_bytes, row.tables * 8 * 20_000);
        }
        // 16-bit leads: about 20,000 / 2^16 candidates per table.
        assert!(rows[0].candidates < 4.0, "{}", rows[0].candidates);
    }
}
