//! Near-duplicate lists: known documents (phishing pages, spam runs) found again when a copy
//! has words changed, by one of two methods, each with its section (docs/FORMAT.md,
//! "Near-duplicate sections"):
//!
//! - **MinHash sketches** (the default; tag `0x14`, [`sketches`]): 64 bins of one-permutation
//!   MinHash over 5-word shingles, 4 bits a bin, with 6 posting keys
//!   ([`phishbloom_text::minhash`]): copies with 10 % of their words edited are found, a match
//!   has a stated false-match rate, and shingles shared by many known documents (boilerplate)
//!   are learned at build and dropped.
//! - **SimHash** (tag `0x12`, [`simhash`]): two 64-bit fingerprints a document in Manku's
//!   permuted tables; smaller (16 bytes a document) but blind past a few percent of edits.
//!
//! Both keep **near documents** (tag `0x13`): each document's name and categories, in the
//! order of the method's structure and then of the exact hashes of short documents, so that
//! a position names its document.
//!
//! A document is identified by its name: adding one whose name is held replaces it, removing
//! goes by name. The set fingerprint of the list sums [`doc_term`] over its documents.

mod simhash;
mod sketches;

use std::path::Path;

use phishbloom_filter::near::PermutedTables;
use phishbloom_filter::postings::{top_bits, MIN_BUCKET_BITS};
use phishbloom_text::minhash::{
    Boilerplate, MinHashParams, MinHasher, Sketch, SketchIndex, SketchRecord,
};
use phishbloom_text::simhash::{self as sim, SimHashParams, SimHasher};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::format::tag;
use simhash::SimTables;

/// The distance a SimHash list answers up to unless `build --max-distance` says otherwise:
/// Manku et al.'s `k = 3` for 64-bit fingerprints.
pub const DEFAULT_DISTANCE: u32 = 3;

/// Blocks per fingerprint by default: `distance + 1`, the fewest tables (4 for `k = 3`, 32 bytes
/// per document); `build --blocks` trades memory for fewer candidates per lookup.
pub fn default_blocks(distance: u32) -> u32 {
    distance + 1
}

/// The longest document name kept (bytes of UTF-8); longer names are cut at a character
/// boundary.
pub const MAX_NAME_BYTES: usize = 1024;

/// How a list fingerprints documents and finds near ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NearMethod {
    /// MinHash sketches, with the boilerplate shingles every sketch drops.
    MinHash {
        /// How documents are sketched.
        params: MinHashParams,
        /// The shingles dropped.
        boilerplate: Boilerplate,
    },
    /// SimHash fingerprints in permuted tables.
    SimHash {
        /// How documents are fingerprinted.
        params: SimHashParams,
        /// The largest distance lookups may ask for.
        distance: u32,
        /// Blocks of the permuted tables.
        blocks: u32,
    },
}

impl Default for NearMethod {
    /// MinHash sketches with the default parameters and no boilerplate (a list built from
    /// documents learns its own).
    fn default() -> Self {
        NearMethod::MinHash {
            params: MinHashParams::default(),
            boilerplate: Boilerplate::none(),
        }
    }
}

impl NearMethod {
    /// SimHash with the default parameters and distance.
    pub fn simhash() -> Self {
        NearMethod::SimHash {
            params: SimHashParams::default(),
            distance: DEFAULT_DISTANCE,
            blocks: default_blocks(DEFAULT_DISTANCE),
        }
    }

    /// `minhash` or `simhash`.
    pub fn name(&self) -> &'static str {
        match self {
            NearMethod::MinHash { .. } => "minhash",
            NearMethod::SimHash { .. } => "simhash",
        }
    }

    /// The print of a document's text under this method.
    pub fn print(&self, text: &str, hasher: &mut NearHasher) -> Print {
        match self {
            NearMethod::SimHash { params, .. } => hasher.sim.fingerprint(text, params).0.into(),
            NearMethod::MinHash {
                params,
                boilerplate,
            } => sketch_print(text, params, boilerplate, hasher),
        }
    }
}

/// A text's sketch, or the exact hash of its tokens when it has too few features.
fn sketch_print(
    text: &str,
    params: &MinHashParams,
    boilerplate: &Boilerplate,
    hasher: &mut NearHasher,
) -> Print {
    match hasher.min.sketch(text, params, boilerplate) {
        Some(sketch) => Print::Sketch(Box::new(sketch)),
        None => Print::Exact(hasher.min.exact_hash()),
    }
}

/// Buffers for printing documents, kept between them.
#[derive(Clone, Debug, Default)]
pub struct NearHasher {
    sim: SimHasher,
    min: MinHasher,
}

impl NearHasher {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

/// What a near-duplicate list stores of a document, and what it looks up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Print {
    /// The SimHashes of a document (SimHash lists).
    Sim {
        /// The lookup fingerprint.
        key: u64,
        /// The check fingerprint (0 without one).
        check: u64,
    },
    /// A document's MinHash sketch, as made from its text (MinHash lists).
    Sketch(Box<Sketch>),
    /// A sketch as a list keeps it: its bins, and its keys' buckets only.
    Stored(Box<SketchRecord>),
    /// The hash of a short document's whole token sequence (both methods).
    Exact(u64),
}

impl From<sim::Fingerprint> for Print {
    fn from(fingerprint: sim::Fingerprint) -> Self {
        match fingerprint {
            sim::Fingerprint::Sim { key, check } => Print::Sim { key, check },
            sim::Fingerprint::Exact(hash) => Print::Exact(hash),
        }
    }
}

impl Print {
    /// Whether the print is the exact hash of a short document.
    pub fn is_exact(&self) -> bool {
        matches!(self, Print::Exact(_))
    }

    /// The record a sketch is filed under, if the print is a sketch.
    pub(crate) fn record(&self) -> Option<SketchRecord> {
        match self {
            Print::Sketch(sketch) => Some(sketch.record()),
            Print::Stored(record) => Some((**record).clone()),
            _ => None,
        }
    }
}

/// One known document: its print, name and categories (indices into the list's categories).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearDoc {
    /// Its print under the list's method.
    pub fingerprint: Print,
    /// File name, Message-ID, or `FILE:LINE`.
    pub name: String,
    /// Category ids, ascending.
    pub categories: Vec<u16>,
}

/// The set-fingerprint term of a document: xxh3-64 of its name, a kind byte (0 SimHash, 1
/// exact, 2 sketch) and its print's little-endian bytes — the lookup and check fingerprints
/// of a SimHash, the exact hash, or a sketch's packed bins and the top
/// [`MIN_BUCKET_BITS`] bits of each key's prefix (what every list keeps of a sketch whatever
/// its size, so that a delta's record cannot lose a document's buckets unnoticed).
pub fn doc_term(name: &str, fingerprint: &Print) -> u64 {
    let mut bytes = Vec::with_capacity(name.len() + 33);
    bytes.extend_from_slice(name.as_bytes());
    match fingerprint {
        Print::Sim { key, check } => {
            bytes.push(0);
            bytes.extend_from_slice(&key.to_le_bytes());
            bytes.extend_from_slice(&check.to_le_bytes());
        }
        Print::Exact(hash) => {
            bytes.push(1);
            bytes.extend_from_slice(&hash.to_le_bytes());
        }
        Print::Sketch(_) | Print::Stored(_) => {
            bytes.push(2);
            if let Some(record) = fingerprint.record() {
                for word in &record.packed {
                    bytes.extend_from_slice(&word.to_le_bytes());
                }
                for &prefix in &record.prefixes {
                    let top = top_bits(prefix, MIN_BUCKET_BITS) as u16;
                    bytes.extend_from_slice(&top.to_le_bytes());
                }
            }
        }
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// A known document near a query, as a lookup answers it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NearMatch {
    /// The known document's name.
    pub name: String,
    /// How far it is: bits of the lookup fingerprints (SimHash), bins that disagree (MinHash),
    /// 0 for an exact match of a short document.
    pub distance: u32,
    /// Hamming distance of the check fingerprints, when the list has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_distance: Option<u32>,
    /// The resemblance estimated from the sketches (MinHash lists): the share of shingles the
    /// two documents have in common, 0 to 1, to three decimals (the estimate's standard error
    /// is several hundredths).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resemblance: Option<f64>,
    /// The known document's categories.
    pub categories: Vec<String>,
    /// Whether the match is by the exact hash of a short document.
    pub exact: bool,
}

/// One document a lookup found: its position, distance, and what else the method measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    /// The document's position.
    pub index: usize,
    /// Its distance (see [`NearMatch::distance`]).
    pub distance: u32,
    /// The check fingerprints' distance (SimHash lists with a check).
    pub check_distance: Option<u32>,
    /// The estimated resemblance (MinHash lists).
    pub resemblance: Option<f64>,
}

/// What `info` says about a near-duplicate list.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NearInfo {
    /// `minhash` or `simhash`.
    pub method: &'static str,
    /// Documents held.
    pub documents: u64,
    /// Of which printed exactly (too short for the method).
    pub exact: u64,
    /// Tokens per shingle (of the lookup fingerprint, for SimHash).
    pub shingle: u32,
    /// The largest distance lookups may ask for.
    pub max_distance: u32,
    /// Bytes the lookup structures and exact hashes take in memory.
    pub memory_bytes: u64,
    /// The method's own parameters.
    #[serde(flatten)]
    pub detail: NearDetail,
}

/// The parameters `info` shows of each method.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum NearDetail {
    /// A MinHash list.
    MinHash {
        /// Bins a sketch.
        bins: u32,
        /// Bits a bin.
        bits: u32,
        /// Posting keys a sketch.
        postings: u32,
        /// Features a document needs to be sketched (fewer: exact hash).
        min_features: u32,
        /// Agreeing bins a match needs.
        threshold: u32,
        /// Boilerplate shingles dropped.
        boilerplate: u64,
        /// Bytes a sketched document takes in the index: its bins and its posting entries.
        bytes_per_document: u64,
        /// Bytes of the posting tables' bucket starts (about one a document in a large list,
        /// at least 4 KiB a table in a small one).
        bucket_start_bytes: u64,
    },
    /// A SimHash list.
    SimHash {
        /// Tokens per shingle of the check fingerprint (0: none).
        check_shingle: u32,
        /// The largest check distance of a match.
        check_distance: u32,
        /// The exact-hash threshold, in tokens.
        min_tokens: u32,
        /// `tf` or `set`.
        weighting: &'static str,
        /// Blocks of 64 bits.
        blocks: u32,
        /// Permuted tables.
        tables: usize,
    },
}

/// The method's lookup structure.
#[derive(Clone, Debug)]
enum Lookup {
    MinHash {
        params: MinHashParams,
        boilerplate: Boilerplate,
        index: SketchIndex,
    },
    SimHash {
        params: SimHashParams,
        sim: SimTables,
    },
}

/// The structure of a near-duplicate list: its method's lookup structure, exact hashes,
/// documents.
#[derive(Clone, Debug)]
pub struct NearEngine {
    lookup: Lookup,
    /// Exact hashes of short documents, sorted.
    exact: Vec<u64>,
    /// Names and categories: the lookup structure's order, then `exact`'s.
    docs: Vec<(String, Vec<u16>)>,
}

impl NearEngine {
    /// The engine for `docs` (names unique) under `method`. A document whose print is not the
    /// method's is refused.
    pub fn build(method: &NearMethod, mut docs: Vec<NearDoc>) -> Result<Self> {
        let wrong = |doc: &NearDoc| Error::NearPrint {
            name: doc.name.clone(),
            method: method.name(),
        };
        // Printed documents first, then exact ones by hash; SimHash ones by fingerprint
        // (table 0's order), sketches by name; so that a list's bytes do not depend on input
        // order.
        let rank = |d: &NearDoc| -> (u8, u64, u64) {
            match d.fingerprint {
                Print::Sim { key, check } => (0, key, check),
                Print::Exact(hash) => (1, hash, 0),
                _ => (0, 0, 0),
            }
        };
        docs.sort_by(|a, b| (rank(a), &a.name).cmp(&(rank(b), &b.name)));
        let split = docs.partition_point(|d| !d.fingerprint.is_exact());
        let exact: Vec<u64> = docs[split..]
            .iter()
            .map(|d| match d.fingerprint {
                Print::Exact(v) => v,
                _ => 0,
            })
            .collect();
        let printed = &docs[..split];
        let lookup = match method {
            NearMethod::SimHash {
                params,
                distance,
                blocks,
            } => {
                let mut keys = Vec::with_capacity(printed.len());
                let mut checks = Vec::new();
                for doc in printed {
                    let Print::Sim { key, check } = doc.fingerprint else {
                        return Err(wrong(doc));
                    };
                    keys.push(key);
                    if params.check_shingle != 0 {
                        checks.push(check);
                    }
                }
                let tables = PermutedTables::build(&keys, *distance, *blocks)?;
                Lookup::SimHash {
                    params: *params,
                    sim: SimTables { tables, checks },
                }
            }
            NearMethod::MinHash {
                params,
                boilerplate,
            } => {
                let records = printed
                    .iter()
                    .map(|doc| doc.fingerprint.record().ok_or_else(|| wrong(doc)))
                    .collect::<Result<Vec<_>>>()?;
                let index = SketchIndex::from_records(*params, &records)
                    .map_err(|e| Error::NearSketches(e.to_string()))?;
                Lookup::MinHash {
                    params: *params,
                    boilerplate: boilerplate.clone(),
                    index,
                }
            }
        };
        Ok(NearEngine {
            lookup,
            exact,
            docs: docs.into_iter().map(|d| (d.name, d.categories)).collect(),
        })
    }

    /// How the list prints documents.
    pub fn method(&self) -> NearMethod {
        match &self.lookup {
            Lookup::MinHash {
                params,
                boilerplate,
                ..
            } => NearMethod::MinHash {
                params: *params,
                boilerplate: boilerplate.clone(),
            },
            Lookup::SimHash { params, sim } => NearMethod::SimHash {
                params: *params,
                distance: sim.tables.distance(),
                blocks: sim.tables.blocks(),
            },
        }
    }

    /// The largest distance lookups may ask for: the SimHash tables' distance, or the bins a
    /// MinHash match may disagree on (bins − threshold).
    pub fn max_distance(&self) -> u32 {
        match &self.lookup {
            Lookup::SimHash { sim, .. } => sim.tables.distance(),
            Lookup::MinHash { index, params, .. } => params.bins.saturating_sub(index.threshold()),
        }
    }

    /// Documents printed by the method (not exactly).
    fn printed(&self) -> usize {
        match &self.lookup {
            Lookup::SimHash { sim, .. } => sim.tables.len(),
            Lookup::MinHash { index, .. } => index.len(),
        }
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document is held.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Documents printed exactly (too short for the method).
    pub fn exact_len(&self) -> usize {
        self.exact.len()
    }

    /// Every document, with its print.
    pub fn docs(&self) -> impl Iterator<Item = NearDoc> + '_ {
        let printed: Vec<Print> = match &self.lookup {
            Lookup::SimHash { sim, .. } => sim
                .tables
                .sorted()
                .iter()
                .enumerate()
                .map(|(i, &key)| Print::Sim {
                    key,
                    check: sim.checks.get(i).copied().unwrap_or_default(),
                })
                .collect(),
            Lookup::MinHash { index, .. } => index
                .records()
                .into_iter()
                .map(|r| Print::Stored(Box::new(r)))
                .collect(),
        };
        let exact = self.exact.iter().map(|&v| Print::Exact(v));
        printed
            .into_iter()
            .chain(exact)
            .zip(&self.docs)
            .map(|(fingerprint, (name, categories))| NearDoc {
                fingerprint,
                name: name.clone(),
                categories: categories.clone(),
            })
    }

    /// The print of a document's text under this list's method.
    pub fn print(&self, text: &str, hasher: &mut NearHasher) -> Print {
        match &self.lookup {
            Lookup::SimHash { params, .. } => hasher.sim.fingerprint(text, params).0.into(),
            Lookup::MinHash {
                params,
                boilerplate,
                ..
            } => sketch_print(text, params, boilerplate, hasher),
        }
    }

    /// The known documents within `distance` of `print` (at most the list's distance):
    /// nearest first, then by name.
    pub fn lookup(&self, print: &Print, distance: u32) -> Result<Vec<Found>> {
        let max = self.max_distance();
        if distance > max {
            return Err(Error::Filter(phishbloom_filter::Error::NearDistance {
                asked: distance,
                built: max,
            }));
        }
        let mut out = Vec::new();
        match (print, &self.lookup) {
            (Print::Sim { key, check }, Lookup::SimHash { params, sim }) => {
                let mut found = Vec::new();
                sim.tables.within(*key, distance, &mut found)?;
                let sorted = sim.tables.sorted();
                for f in found {
                    let first = sorted.partition_point(|&v| v < f);
                    let last = sorted.partition_point(|&v| v <= f);
                    for i in first..last {
                        let check_distance = sim.checks.get(i).map(|&c| (c ^ check).count_ones());
                        if check_distance.is_none_or(|d| d <= params.check_distance) {
                            out.push(Found {
                                index: i,
                                distance: (f ^ key).count_ones(),
                                check_distance,
                                resemblance: None,
                            });
                        }
                    }
                }
            }
            (Print::Sketch(sketch), Lookup::MinHash { params, index, .. }) => {
                let min_agree = params.bins - distance;
                out.extend(index.within(sketch, min_agree).into_iter().map(|m| Found {
                    index: m.document as usize,
                    distance: params.bins - m.agree,
                    check_distance: None,
                    // Three decimals: what the estimate can tell (its standard deviation with
                    // 64 bins is about 0.06), and what a reader wants to see.
                    resemblance: Some((m.resemblance * 1000.0).round() / 1000.0),
                }));
            }
            (Print::Exact(hash), _) => {
                let base = self.printed();
                let first = self.exact.partition_point(|&v| v < *hash);
                let last = self.exact.partition_point(|&v| v <= *hash);
                out.extend((first..last).map(|i| Found {
                    index: base + i,
                    distance: 0,
                    check_distance: None,
                    resemblance: None,
                }));
            }
            // A print of the other method (or a stored sketch) finds nothing.
            _ => {}
        }
        out.sort_by(|a, b| {
            (a.distance, &self.docs[a.index].0).cmp(&(b.distance, &self.docs[b.index].0))
        });
        Ok(out)
    }

    /// A document's name and category ids.
    pub fn doc(&self, index: usize) -> (&str, &[u16]) {
        let (name, categories) = &self.docs[index];
        (name, categories)
    }

    /// Whether the document at `index` is printed exactly.
    pub fn is_exact(&self, index: usize) -> bool {
        index >= self.printed()
    }

    /// What `info` says.
    pub fn info(&self) -> NearInfo {
        let exact_bytes = 8 * self.exact.len() as u64;
        let (shingle, memory_bytes, detail) = match &self.lookup {
            Lookup::SimHash { params, sim } => (
                params.shingle,
                (sim.tables.memory_bytes() + 8 * sim.checks.len()) as u64,
                NearDetail::SimHash {
                    check_shingle: params.check_shingle,
                    check_distance: params.check_distance,
                    min_tokens: params.min_tokens,
                    weighting: params.weighting.name(),
                    blocks: sim.tables.blocks(),
                    tables: sim.tables.tables(),
                },
            ),
            Lookup::MinHash {
                params,
                boilerplate,
                index,
            } => (
                params.shingle,
                index.bytes() as u64,
                NearDetail::MinHash {
                    bins: params.bins,
                    bits: params.bits,
                    postings: params.postings,
                    min_features: params.min_features,
                    threshold: index.threshold(),
                    boilerplate: boilerplate.len() as u64,
                    bytes_per_document: (8 * params.words() + 4 * params.postings as usize) as u64,
                    bucket_start_bytes: index
                        .tables()
                        .iter()
                        .map(|t| 4 * t.starts().len() as u64)
                        .sum(),
                },
            ),
        };
        NearInfo {
            method: self.method().name(),
            documents: self.docs.len() as u64,
            exact: self.exact.len() as u64,
            shingle,
            max_distance: self.max_distance(),
            memory_bytes: memory_bytes + exact_bytes,
            detail,
        }
    }

    /// The method's section: its tag and bytes (near tables or near sketches).
    pub fn encode_lookup(&self) -> (u16, Vec<u8>) {
        match &self.lookup {
            Lookup::SimHash { params, sim } => {
                (tag::NEAR_TABLES, simhash::encode(params, sim, &self.exact))
            }
            Lookup::MinHash {
                boilerplate, index, ..
            } => (
                tag::NEAR_SKETCHES,
                sketches::encode(boilerplate, index, &self.exact),
            ),
        }
    }

    /// Encodes the near-documents section: count u64, reserved u64, then per document name
    /// length u16, category count u16, the category ids (u16 each), the name's UTF-8 bytes.
    pub fn encode_docs(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.put_u64(self.docs.len() as u64);
        out.put_u64(0);
        for (name, categories) in &self.docs {
            out.put_u16(name.len() as u16);
            out.put_u16(categories.len() as u16);
            for &c in categories {
                out.put_u16(c);
            }
            out.extend_from_slice(name.as_bytes());
        }
        out
    }

    /// Decodes the list's sections — the method's (`lookup_tag`: near tables or near
    /// sketches) and the near documents — checking every field: parameters in range, lengths
    /// exact, structures consistent, exact hashes sorted, names UTF-8 and within
    /// [`MAX_NAME_BYTES`], category ids below `categories`.
    pub fn decode(
        path: &Path,
        lookup_tag: u16,
        lookup: &[u8],
        docs: &[u8],
        categories: usize,
    ) -> Result<Self> {
        let (lookup, exact) = if lookup_tag == tag::NEAR_SKETCHES {
            let (params, boilerplate, index, exact) = sketches::decode(path, lookup)?;
            (
                Lookup::MinHash {
                    params,
                    boilerplate,
                    index,
                },
                exact,
            )
        } else {
            let (params, sim, exact) = simhash::decode(path, lookup)?;
            (Lookup::SimHash { params, sim }, exact)
        };
        let mut engine = NearEngine {
            lookup,
            exact,
            docs: Vec::new(),
        };
        let expected = (engine.printed() + engine.exact.len()) as u64;
        engine.docs = decode_docs(path, docs, expected, categories)?;
        Ok(engine)
    }
}

/// The near documents section `docs`: `count` names with their category ids (each below
/// `categories`, ascending).
fn decode_docs(
    path: &Path,
    docs: &[u8],
    expected: u64,
    categories: usize,
) -> Result<Vec<(String, Vec<u16>)>> {
    let bad = |field: &'static str, value: String| Error::invalid(path, field, value);
    let mut reader = ByteReader::new(docs);
    let short = || bad("near documents", "shorter than its counts say".into());
    let count = reader.u64().ok_or_else(short)?;
    if reader.u64().ok_or_else(short)? != 0 {
        return Err(bad("near documents reserved bytes", "not zero".into()));
    }
    if count != expected {
        return Err(bad(
            "near document count",
            format!("{count}, with {expected} fingerprints"),
        ));
    }
    let mut names = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let len = reader.u16().ok_or_else(short)? as usize;
        let cats = reader.u16().ok_or_else(short)? as usize;
        let mut ids = Vec::with_capacity(cats);
        for _ in 0..cats {
            let id = reader.u16().ok_or_else(short)?;
            if id as usize >= categories || ids.last().is_some_and(|&last| last >= id) {
                return Err(bad("near document category", id.to_string()));
            }
            ids.push(id);
        }
        let name = reader.take(len).ok_or_else(short)?;
        let name =
            std::str::from_utf8(name).map_err(|_| bad("near document name", "not UTF-8".into()))?;
        if len > MAX_NAME_BYTES {
            return Err(bad("near document name length", len.to_string()));
        }
        names.push((name.to_string(), ids));
    }
    if !reader.rest().is_empty() {
        return Err(bad(
            "near documents",
            format!("{} bytes after the last document", reader.rest().len()),
        ));
    }
    Ok(names)
}

/// Cuts `name` to at most [`MAX_NAME_BYTES`] at a character boundary.
pub fn clip_name(name: &str) -> &str {
    if name.len() <= MAX_NAME_BYTES {
        return name;
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn sim(v: u64) -> Print {
        Print::Sim { key: v, check: v }
    }

    /// Why decoding refuses the method's section `lookup` with byte `at` set to `value` (empty
    /// when it does not).
    fn refusal(
        lookup_tag: u16,
        lookup: &[u8],
        names: &[u8],
        categories: usize,
        at: usize,
        value: u8,
    ) -> String {
        let mut bad = lookup.to_vec();
        bad[at] = value;
        NearEngine::decode(Path::new("k.bloom"), lookup_tag, &bad, names, categories)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    fn docs() -> Vec<NearDoc> {
        let doc = |print: Print, name: &str, categories: Vec<u16>| NearDoc {
            fingerprint: print,
            name: name.into(),
            categories,
        };
        vec![
            doc(sim(0xffff_0000_ffff_0000), "a.txt", vec![0]),
            doc(sim(0x0000_ffff_0000_ffff), "b.txt", vec![0, 1]),
            doc(sim(0xffff_0000_ffff_0000), "a-copy.txt", vec![1]),
            doc(Print::Exact(42), "short.txt", vec![]),
        ]
    }

    #[test]
    fn lookups_name_every_document_within_the_distance() {
        let engine = NearEngine::build(&NearMethod::simhash(), docs()).unwrap();
        let found = engine.lookup(&sim(0xffff_0000_ffff_0007), 3).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|f| (engine.doc(f.index).0, f.distance))
            .collect();
        assert_eq!(names, [("a-copy.txt", 3), ("a.txt", 3)]);
        assert!(engine
            .lookup(&sim(0xffff_0000_ffff_000f), 3)
            .unwrap()
            .is_empty());
        let exact = engine.lookup(&Print::Exact(42), 0).unwrap();
        assert_eq!(exact.len(), 1);
        assert!(engine.is_exact(exact[0].index));
        assert!(engine.lookup(&Print::Exact(42), 4).is_err());
    }

    #[test]
    fn sections_round_trip_and_damage_is_refused() {
        let engine = NearEngine::build(&NearMethod::simhash(), docs()).unwrap();
        let ((lookup_tag, tables), names) = (engine.encode_lookup(), engine.encode_docs());
        assert_eq!(lookup_tag, tag::NEAR_TABLES);
        let path = Path::new("k.bloom");
        let back = NearEngine::decode(path, lookup_tag, &tables, &names, 2).unwrap();
        assert_eq!(
            back.docs().collect::<Vec<_>>(),
            engine.docs().collect::<Vec<_>>()
        );
        assert_eq!(back.method(), engine.method());
        // A category id beyond the list's categories.
        assert!(NearEngine::decode(path, lookup_tag, &tables, &names, 1).is_err());
        // Each header field out of range, and a stored value changed, are refused by name.
        let damaged = |at, value| refusal(lookup_tag, &tables, &names, 2, at, value);
        assert!(damaged(0, 0).contains("shingle"), "{}", damaged(0, 0));
        assert!(damaged(8, 9).contains("weighting"));
        assert!(damaged(9, 4).contains("blocks"), "{}", damaged(9, 4));
        assert!(damaged(11, 17).contains("check shingle"));
        assert!(damaged(32, 65).contains("check distance"));
        assert!(damaged(12, 5).contains("table count"));
        assert!(damaged(16, 9).contains("length"));
        assert!(damaged(50, 1).contains("shorter"));
        let first_value = simhash::TABLES_HEADER + 8 * 4 + 3; // table 1's first value
        assert!(damaged(first_value, tables[first_value] ^ 0x10).contains("tables"));
        let cut = &tables[..tables.len() - 8];
        assert!(NearEngine::decode(path, lookup_tag, cut, &names, 2).is_err());
        let cut = &names[..names.len() - 1];
        assert!(NearEngine::decode(path, lookup_tag, &tables, cut, 2).is_err());
    }

    /// A text of `words` words drawn from a seeded pool, so that two seeds share none.
    pub(crate) fn text(seed: u64, words: usize) -> String {
        let mut rng = phishbloom_filter::rng::SplitMix64::new(seed);
        (0..words)
            .map(|_| format!("w{}x{seed}", rng.below(1_000)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_sketch_list_finds_an_edited_copy_round_trips_and_refuses_damage() {
        let method = NearMethod::default();
        let mut hasher = NearHasher::new();
        let mut known: Vec<NearDoc> = (0..50u64)
            .map(|i| NearDoc {
                fingerprint: method.print(&text(i, 300), &mut hasher),
                name: format!("doc-{i}"),
                categories: vec![0],
            })
            .collect();
        known.push(NearDoc {
            fingerprint: method.print("too short to sketch", &mut hasher),
            name: "short".into(),
            categories: vec![0],
        });
        let engine = NearEngine::build(&method, known).unwrap();
        assert_eq!((engine.len(), engine.exact_len()), (51, 1));
        // Doc 7 with every tenth word replaced: found, nearest, with its resemblance.
        let original = text(7, 300);
        let edited: Vec<&str> = original
            .split(' ')
            .enumerate()
            .map(|(i, w)| if i % 10 == 3 { "changed" } else { w })
            .collect();
        let query = engine.print(&edited.join(" "), &mut hasher);
        let found = engine.lookup(&query, engine.max_distance()).unwrap();
        assert_eq!(engine.doc(found[0].index).0, "doc-7");
        let resemblance = found[0].resemblance.unwrap();
        assert!(resemblance > 0.3 && resemblance < 0.9, "{resemblance}");
        assert!(engine
            .lookup(
                &engine.print(&text(99, 300), &mut hasher),
                engine.max_distance()
            )
            .unwrap()
            .is_empty());
        let short = engine.print("too short to sketch", &mut hasher);
        assert_eq!(engine.lookup(&short, 0).unwrap().len(), 1);
        assert!(engine.lookup(&query, engine.max_distance() + 1).is_err());

        let ((lookup_tag, bytes), names) = (engine.encode_lookup(), engine.encode_docs());
        assert_eq!(lookup_tag, tag::NEAR_SKETCHES);
        let path = Path::new("s.bloom");
        let back = NearEngine::decode(path, lookup_tag, &bytes, &names, 1).unwrap();
        assert_eq!(
            back.docs().collect::<Vec<_>>(),
            engine.docs().collect::<Vec<_>>()
        );
        assert_eq!(back.lookup(&query, back.max_distance()).unwrap(), found);
        // Rebuilt from its own documents (what an edit does), it answers alike.
        let again = NearEngine::build(&back.method(), back.docs().collect()).unwrap();
        assert_eq!(again.lookup(&query, again.max_distance()).unwrap(), found);
        let damaged = |at, value| refusal(lookup_tag, &bytes, &names, 1, at, value);
        assert!(damaged(12, 3).contains("parameters"), "{}", damaged(12, 3));
        assert!(damaged(8, 63).contains("parameters"));
        assert!(damaged(16, 51).contains("length"));
        assert!(damaged(15, 9).contains("tables"), "{}", damaged(15, 9));
        // Fewer bucket bits than any list is built with.
        assert!(damaged(14, 9).contains("tables"), "{}", damaged(14, 9));
        assert!(damaged(45, 1).contains("shorter"));
        for cut in [0, 10, 64, bytes.len() - 1] {
            assert!(NearEngine::decode(path, lookup_tag, &bytes[..cut], &names, 1).is_err());
        }
        // A SimHash print is not a sketch.
        assert!(NearEngine::build(&method, docs()).is_err());
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_NAME_BYTES);
        let cut = clip_name(&long);
        assert!(cut.len() <= MAX_NAME_BYTES && cut.len() >= MAX_NAME_BYTES - 1);
    }
}
