//! MinHash sketches at 10⁷ known documents: build time, bytes a document, candidates compared
//! and lookup time, beside the SimHash permuted tables (4 tables, `k = 3`) holding as many
//! fingerprints, in the same run.
//!
//! The stored sketches stand for unrelated documents: random bins and random posting keys
//! (what one permutation hashing gives documents that share no shingle). Among them are
//! planted sketches of real feature sets (300 random shingles); the queries are copies of
//! those keeping 59 % of their features (a resemblance of 0.42, what editing 10 % of a text's
//! words leaves of its 5-word shingles), which must be found, interleaved with sketches of
//! new feature sets, which must not be. Sketching a query is not timed (the corpora's table
//! times it on real text).

use std::time::Instant;

use phishbloom_filter::near::PermutedTables;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::minhash::{MinHashParams, MinHasher, Sketch, SketchIndex};

use super::scale::flip_bits;
use super::{NearSizes, K};
use crate::error::{Error, Result};

/// Features of a planted document.
pub const PLANTED_FEATURES: usize = 300;

/// Features a planted document's copy keeps (the rest are new): 2R/(1 + R) of them for a
/// resemblance R = 0.42.
pub const KEPT_FEATURES: usize = 177;

/// The sketches at scale beside the SimHash tables.
#[derive(Clone, Debug)]
pub struct SketchScale {
    /// Documents stored.
    pub documents: u64,
    /// Seconds to build the sketch index from the sketches.
    pub build_seconds: f64,
    /// Bytes the index holds, a document.
    pub bytes_per_document: f64,
    /// Mean candidates compared per lookup.
    pub candidates: f64,
    /// Lookups timed (copies and strangers, interleaved).
    pub queries: u64,
    /// Microseconds per lookup.
    pub query_us: f64,
    /// Copies found (of `queries / 2`), naming their document.
    pub copies_found: u64,
    /// Strangers matched (of `queries / 2`).
    pub strangers_matched: u64,
    /// The SimHash tables' microseconds per lookup in the same run (planted and random).
    pub simhash_us: f64,
    /// The SimHash tables' bytes a document (4 tables and their bucket indices).
    pub simhash_bytes_per_document: f64,
}

/// Random features.
fn features(rng: &mut SplitMix64, n: usize) -> Vec<u64> {
    (0..n).map(|_| rng.next_u64()).collect()
}

/// Runs the measurement at `sizes.scale_fingerprints` documents.
pub fn run(sizes: &NearSizes) -> Result<SketchScale> {
    let params = MinHashParams::default();
    let n = sizes.scale_fingerprints;
    let planted = (sizes.scale_queries / 2).min(n);
    let mut rng = SplitMix64::new(super::SEED ^ 0x5ca1e);
    let mut hasher = MinHasher::new();
    let mut sketches: Vec<Sketch> = (0..n)
        .map(|_| Sketch {
            packed: features(&mut rng, params.words()),
            keys: features(&mut rng, params.postings as usize),
            features: PLANTED_FEATURES as u32,
        })
        .collect();
    let mut plants = Vec::with_capacity(planted);
    // One plant in each of `planted` equal stretches of the documents: no two at one place.
    let stretch = (n / planted.max(1)).max(1);
    for i in 0..planted {
        let f = features(&mut rng, PLANTED_FEATURES);
        let at = i * stretch + rng.below(stretch as u64) as usize;
        let Some(sketch) = hasher.of_features(f.clone(), &params) else {
            continue;
        };
        sketches[at] = sketch;
        plants.push((at, f));
    }
    let started = Instant::now();
    let index = SketchIndex::build(params, &sketches).map_err(|e| Error::Unbuildable {
        experiment: "near sketches at scale",
        reason: e.to_string(),
    })?;
    let build_seconds = started.elapsed().as_secs_f64();
    drop(sketches);
    // Queries: copies of the planted documents and strangers, interleaved.
    let mut queries = Vec::with_capacity(2 * plants.len());
    for (at, f) in &plants {
        let mut copy = f[..KEPT_FEATURES].to_vec();
        copy.extend(features(&mut rng, PLANTED_FEATURES - KEPT_FEATURES));
        queries.push((Some(*at), hasher.of_features(copy, &params)));
        queries.push((
            None,
            hasher.of_features(features(&mut rng, PLANTED_FEATURES), &params),
        ));
    }
    let (mut found, mut matched, mut compared) = (0u64, 0u64, 0usize);
    let started = Instant::now();
    for (at, query) in &queries {
        let Some(query) = query else { continue };
        let hit = index.nearest(query);
        match at {
            Some(at) => found += u64::from(hit.is_some_and(|m| m.document as usize == *at)),
            None => matched += u64::from(hit.is_some()),
        }
    }
    let query_us = started.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
    for (_, query) in queries.iter().take(2_000) {
        if let Some(query) = query {
            compared += index.compared(query).len();
        }
    }
    let (simhash_us, simhash_bytes) = simhash_peer(n, sizes.scale_queries, &mut rng)?;
    Ok(SketchScale {
        documents: n as u64,
        build_seconds,
        bytes_per_document: index.bytes() as f64 / n.max(1) as f64,
        candidates: compared as f64 / queries.len().clamp(1, 2_000) as f64,
        queries: queries.len() as u64,
        query_us,
        copies_found: found,
        strangers_matched: matched,
        simhash_us,
        simhash_bytes_per_document: simhash_bytes as f64 / n.max(1) as f64,
    })
}

/// The SimHash peer: 4 permuted tables (`k = 3`) of `n` random fingerprints, looked up with
/// planted (1–3 bits flipped) and random queries, interleaved: microseconds a lookup, bytes.
fn simhash_peer(n: usize, queries: usize, rng: &mut SplitMix64) -> Result<(f64, u64)> {
    let stored: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let tables = PermutedTables::build(&stored, K, K + 1)?;
    let asked: Vec<u64> = (0..queries)
        .map(|i| match i % 2 {
            0 => flip_bits(
                stored[rng.below(n as u64) as usize],
                1 + (i as u32 / 2) % K,
                rng,
            ),
            _ => rng.next_u64(),
        })
        .collect();
    let mut out = Vec::new();
    let started = Instant::now();
    for &q in &asked {
        tables.within(q, K, &mut out)?;
    }
    let us = started.elapsed().as_secs_f64() * 1e6 / asked.len().max(1) as f64;
    Ok((us, tables.memory_bytes() as u64 + 8 * n as u64))
}
