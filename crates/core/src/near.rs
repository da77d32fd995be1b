//! Near-duplicate lists: known documents (phishing pages, spam runs) by their SimHash, found
//! again when a copy has a few words changed, with the two sections only this kind has
//! (docs/FORMAT.md, "Near-duplicate sections").
//!
//! - **Near tables** (tag `0x12`): how documents are fingerprinted ([`SimHashParams`]), the
//!   largest distance the tables answer, and Manku's permuted tables
//!   ([`phishbloom_filter::near`]) of the SimHash fingerprints — table 0 is the fingerprints
//!   sorted — then the exact hashes of the short documents, sorted.
//! - **Near documents** (tag `0x13`): each document's name and categories, in the order of
//!   table 0 and then of the exact hashes, so that a fingerprint's position names its
//!   documents.
//!
//! A document is identified by its name: adding one whose name is held replaces it, removing
//! goes by name. The set fingerprint of the list sums [`doc_term`] over its documents.

use std::path::Path;

use phishbloom_filter::near::PermutedTables;
use phishbloom_text::simhash::{Fingerprint, SimHashParams, SimHasher, Weighting, MAX_SHINGLE};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};

/// The distance a list answers up to unless `build --max-distance` says otherwise: Manku et
/// al.'s `k = 3` for 64-bit fingerprints.
pub const DEFAULT_DISTANCE: u32 = 3;

/// Blocks per fingerprint by default: `distance + 1`, the fewest tables (4 for `k = 3`, 32 bytes
/// per document); `build --blocks` trades memory for fewer candidates per lookup.
pub fn default_blocks(distance: u32) -> u32 {
    distance + 1
}

/// The longest document name kept (bytes of UTF-8); longer names are cut at a character
/// boundary.
pub const MAX_NAME_BYTES: usize = 1024;

/// Length of the near-tables section's header.
const TABLES_HEADER: usize = 64;

/// One known document: its fingerprint, name and categories (indices into the list's
/// categories).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearDoc {
    /// SimHash, or the exact hash of a short document.
    pub fingerprint: Fingerprint,
    /// File name, Message-ID, or `FILE:LINE`.
    pub name: String,
    /// Category ids, ascending.
    pub categories: Vec<u16>,
}

/// The set-fingerprint term of a document: xxh3-64 of its name, a kind byte (0 SimHash, 1
/// exact), its lookup fingerprint's (or exact hash's) 8 little-endian bytes and, for a
/// SimHash, its check fingerprint's 8.
pub fn doc_term(name: &str, fingerprint: Fingerprint) -> u64 {
    let mut bytes = Vec::with_capacity(name.len() + 17);
    bytes.extend_from_slice(name.as_bytes());
    match fingerprint {
        Fingerprint::Sim { key, check } => {
            bytes.push(0);
            bytes.extend_from_slice(&key.to_le_bytes());
            bytes.extend_from_slice(&check.to_le_bytes());
        }
        Fingerprint::Exact(hash) => {
            bytes.push(1);
            bytes.extend_from_slice(&hash.to_le_bytes());
        }
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// A known document within the distance asked, as a lookup answers it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NearMatch {
    /// The known document's name.
    pub name: String,
    /// Hamming distance of the lookup fingerprints (0 for an exact match of a short document).
    pub distance: u32,
    /// Hamming distance of the check fingerprints, when the list has them.
    pub check_distance: Option<u32>,
    /// The known document's categories.
    pub categories: Vec<String>,
    /// Whether the match is by the exact hash of a short document.
    pub exact: bool,
}

/// What `info` says about a near-duplicate list.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NearInfo {
    /// Documents held.
    pub documents: u64,
    /// Of which fingerprinted exactly (shorter than `min_tokens`).
    pub exact: u64,
    /// Tokens per shingle of the lookup fingerprint.
    pub shingle: u32,
    /// Tokens per shingle of the check fingerprint (0: none).
    pub check_shingle: u32,
    /// The largest check distance of a match.
    pub check_distance: u32,
    /// The exact-hash threshold, in tokens.
    pub min_tokens: u32,
    /// `tf` or `set`.
    pub weighting: &'static str,
    /// The largest distance lookups may ask for.
    pub max_distance: u32,
    /// Blocks of 64 bits.
    pub blocks: u32,
    /// Permuted tables.
    pub tables: usize,
    /// Bytes the tables and exact hashes take in memory (with the tables' bucket indices).
    pub memory_bytes: u64,
}

/// The structure of a near-duplicate list: fingerprinting parameters, tables, documents.
#[derive(Clone, Debug)]
pub struct NearEngine {
    params: SimHashParams,
    tables: PermutedTables,
    /// Check fingerprints, in table 0's order (empty without a check).
    checks: Vec<u64>,
    /// Exact hashes of short documents, sorted.
    exact: Vec<u64>,
    /// Names and categories: table 0's order, then `exact`'s.
    docs: Vec<(String, Vec<u16>)>,
}

impl NearEngine {
    /// The engine for `docs` (names unique), answering distances up to `distance` with
    /// `blocks` blocks.
    pub fn build(
        params: SimHashParams,
        distance: u32,
        blocks: u32,
        mut docs: Vec<NearDoc>,
    ) -> Result<Self> {
        // SimHash documents first, by fingerprint (table 0's order), then exact ones by hash;
        // ties by name, so that a list's bytes do not depend on input order.
        docs.sort_by(|a, b| (a.fingerprint, &a.name).cmp(&(b.fingerprint, &b.name)));
        let sims: Vec<u64> = docs
            .iter()
            .filter_map(|d| match d.fingerprint {
                Fingerprint::Sim { key, .. } => Some(key),
                Fingerprint::Exact(_) => None,
            })
            .collect();
        let checks: Vec<u64> = match params.check_shingle {
            0 => Vec::new(),
            _ => docs
                .iter()
                .filter_map(|d| match d.fingerprint {
                    Fingerprint::Sim { check, .. } => Some(check),
                    Fingerprint::Exact(_) => None,
                })
                .collect(),
        };
        let exact: Vec<u64> = docs
            .iter()
            .filter_map(|d| match d.fingerprint {
                Fingerprint::Exact(v) => Some(v),
                Fingerprint::Sim { .. } => None,
            })
            .collect();
        let tables = PermutedTables::build(&sims, distance, blocks)?;
        Ok(NearEngine {
            params,
            tables,
            checks,
            exact,
            docs: docs.into_iter().map(|d| (d.name, d.categories)).collect(),
        })
    }

    /// How documents are fingerprinted.
    pub fn params(&self) -> &SimHashParams {
        &self.params
    }

    /// The permuted tables of the SimHash fingerprints.
    pub fn tables(&self) -> &PermutedTables {
        &self.tables
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document is held.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Documents fingerprinted exactly (shorter than the threshold).
    pub fn exact_len(&self) -> usize {
        self.exact.len()
    }

    /// Every document, with its fingerprint.
    pub fn docs(&self) -> impl Iterator<Item = NearDoc> + '_ {
        let sims = self.tables.sorted().iter().enumerate().map(|(i, &key)| {
            let check = self.checks.get(i).copied().unwrap_or_default();
            Fingerprint::Sim { key, check }
        });
        let exact = self.exact.iter().map(|&v| Fingerprint::Exact(v));
        sims.chain(exact)
            .zip(&self.docs)
            .map(|(fingerprint, (name, categories))| NearDoc {
                fingerprint,
                name: name.clone(),
                categories: categories.clone(),
            })
    }

    /// The fingerprint of a document's text under this list's parameters.
    pub fn fingerprint(&self, text: &str, hasher: &mut SimHasher) -> Fingerprint {
        hasher.fingerprint(text, &self.params).0
    }

    /// The check fingerprints' distance of document `index` from `check`, when the list has
    /// check fingerprints.
    pub fn check_distance(&self, index: usize, check: u64) -> Option<u32> {
        self.checks.get(index).map(|&c| (c ^ check).count_ones())
    }

    /// The known documents within `distance` of `fingerprint` (at most the list's distance)
    /// whose check fingerprints, when the list has them, are within the check distance too;
    /// nearest first, then by name, as `(document index, distance)`.
    pub fn lookup(&self, fingerprint: Fingerprint, distance: u32) -> Result<Vec<(usize, u32)>> {
        let mut out = Vec::new();
        match fingerprint {
            Fingerprint::Sim { key, check } => {
                let mut found = Vec::new();
                self.tables.within(key, distance, &mut found)?;
                let sorted = self.tables.sorted();
                for f in found {
                    let first = sorted.partition_point(|&v| v < f);
                    let last = sorted.partition_point(|&v| v <= f);
                    out.extend(
                        (first..last)
                            .filter(|&i| {
                                self.check_distance(i, check)
                                    .is_none_or(|d| d <= self.params.check_distance)
                            })
                            .map(|i| (i, (f ^ key).count_ones())),
                    );
                }
            }
            Fingerprint::Exact(hash) => {
                if distance > self.tables.distance() {
                    // The same refusal a SimHash query would get, whatever the document.
                    self.tables.within(0, distance, &mut Vec::new())?;
                }
                let base = self.tables.len();
                let first = self.exact.partition_point(|&v| v < hash);
                let last = self.exact.partition_point(|&v| v <= hash);
                out.extend((first..last).map(|i| (base + i, 0)));
            }
        }
        out.sort_by(|a, b| (a.1, &self.docs[a.0].0).cmp(&(b.1, &self.docs[b.0].0)));
        Ok(out)
    }

    /// A document's name and category ids.
    pub fn doc(&self, index: usize) -> (&str, &[u16]) {
        let (name, categories) = &self.docs[index];
        (name, categories)
    }

    /// Whether the document at `index` is fingerprinted exactly.
    pub fn is_exact(&self, index: usize) -> bool {
        index >= self.tables.len()
    }

    /// What `info` says.
    pub fn info(&self) -> NearInfo {
        NearInfo {
            documents: self.docs.len() as u64,
            exact: self.exact.len() as u64,
            shingle: self.params.shingle,
            check_shingle: self.params.check_shingle,
            check_distance: self.params.check_distance,
            min_tokens: self.params.min_tokens,
            weighting: self.params.weighting.name(),
            max_distance: self.tables.distance(),
            blocks: self.tables.blocks(),
            tables: self.tables.tables(),
            memory_bytes: (self.tables.memory_bytes() + 8 * (self.checks.len() + self.exact.len()))
                as u64,
        }
    }

    /// Encodes the near-tables section (module docs; docs/FORMAT.md).
    pub fn encode_tables(&self) -> Vec<u8> {
        let sims = self.tables.len();
        let mut out = Vec::with_capacity(
            TABLES_HEADER
                + 8 * (self.tables.tables() * sims + self.checks.len() + self.exact.len()),
        );
        out.put_u32(self.params.shingle);
        out.put_u32(self.params.min_tokens);
        out.push(self.params.weighting.code());
        out.push(self.tables.distance() as u8);
        out.push(self.tables.blocks() as u8);
        out.push(self.params.check_shingle as u8);
        out.put_u32(self.tables.tables() as u32);
        out.put_u64(sims as u64);
        out.put_u64(self.exact.len() as u64);
        out.put_u32(self.params.check_distance);
        out.resize(TABLES_HEADER, 0);
        for table in self.tables.table_values() {
            for &v in table {
                out.put_u64(v);
            }
        }
        for &v in self.checks.iter().chain(&self.exact) {
            out.put_u64(v);
        }
        out
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

    /// Decodes both sections, checking every field: parameters in range, lengths exact,
    /// tables consistent and sorted, exact hashes sorted, names UTF-8 and within
    /// [`MAX_NAME_BYTES`], category ids below `categories`.
    pub fn decode(path: &Path, tables: &[u8], docs: &[u8], categories: usize) -> Result<Self> {
        let header = TablesHeader::read(path, tables)?;
        let (stored, checks, exact) = header.values(tables);
        if exact.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::invalid(path, "near exact hashes", "not sorted"));
        }
        let permuted = PermutedTables::from_tables(header.distance, header.blocks, stored)
            .map_err(|e| Error::invalid(path, "near tables", e))?;
        let sims = header.sims as usize;
        let docs = decode_docs(path, docs, (sims + exact.len()) as u64, categories)?;
        Ok(NearEngine {
            params: header.params,
            tables: permuted,
            checks,
            exact,
            docs,
        })
    }
}

/// The near tables section's header, checked against the section's length.
struct TablesHeader {
    params: SimHashParams,
    distance: u32,
    blocks: u32,
    table_count: usize,
    /// Fingerprints in each table.
    sims: u64,
    /// Check fingerprints (one per fingerprint, or none).
    check_count: u64,
}

impl TablesHeader {
    /// Reads and checks the header of the near tables section `tables`.
    fn read(path: &Path, tables: &[u8]) -> Result<Self> {
        let bad = |field: &'static str, value: String| Error::invalid(path, field, value);
        let mut reader = ByteReader::new(tables);
        let short = || bad("near tables", "header shorter than 64 bytes".into());
        let shingle = reader.u32().ok_or_else(short)?;
        let min_tokens = reader.u32().ok_or_else(short)?;
        let weighting = reader.u8().ok_or_else(short)?;
        let distance = u32::from(reader.u8().ok_or_else(short)?);
        let blocks = u32::from(reader.u8().ok_or_else(short)?);
        let check_shingle = u32::from(reader.u8().ok_or_else(short)?);
        let table_count = reader.u32().ok_or_else(short)? as usize;
        let sims = reader.u64().ok_or_else(short)?;
        let exact_count = reader.u64().ok_or_else(short)?;
        let check_distance = reader.u32().ok_or_else(short)?;
        if tables.len() < TABLES_HEADER || tables[36..TABLES_HEADER].iter().any(|&b| b != 0) {
            return Err(short());
        }
        if !(1..=MAX_SHINGLE).contains(&shingle) {
            return Err(bad("near shingle length", shingle.to_string()));
        }
        if check_shingle > MAX_SHINGLE {
            return Err(bad("near check shingle length", check_shingle.to_string()));
        }
        if check_distance > 64 || (check_shingle == 0 && check_distance != 0) {
            return Err(bad("near check distance", check_distance.to_string()));
        }
        let check_count = if check_shingle == 0 { 0 } else { sims };
        let weighting = Weighting::from_code(weighting)
            .ok_or_else(|| bad("near weighting", weighting.to_string()))?;
        let expected_tables = PermutedTables::check_shape(distance, blocks)?;
        if table_count != expected_tables {
            return Err(bad(
                "near table count",
                format!("{table_count}, expected {expected_tables}"),
            ));
        }
        let body = tables.len() - TABLES_HEADER;
        let values = (table_count as u64)
            .checked_mul(sims)
            .and_then(|v| v.checked_add(check_count))
            .and_then(|v| v.checked_add(exact_count))
            .and_then(|v| v.checked_mul(8));
        if values != Some(body as u64) {
            return Err(bad(
                "near tables length",
                format!(
                    "{body} bytes for {table_count} tables of {sims} and {exact_count} exact \
                     hashes"
                ),
            ));
        }
        Ok(TablesHeader {
            params: SimHashParams {
                shingle,
                check_shingle,
                check_distance,
                min_tokens,
                weighting,
            },
            distance,
            blocks,
            table_count,
            sims,
            check_count,
        })
    }

    /// The permuted tables, check fingerprints and exact hashes of `tables` (whose length
    /// [`TablesHeader::read`] checked).
    fn values(&self, tables: &[u8]) -> (Vec<Vec<u64>>, Vec<u64>, Vec<u64>) {
        let words = |bytes: &[u8]| -> Vec<u64> {
            bytes
                .chunks_exact(8)
                .map(|c| {
                    // `chunks_exact(8)` yields 8-byte slices.
                    u64::from_le_bytes(c.try_into().unwrap_or_default())
                })
                .collect()
        };
        let (sims, table_count) = (self.sims as usize, self.table_count);
        let mut stored = Vec::with_capacity(table_count);
        for t in 0..table_count {
            let start = TABLES_HEADER + 8 * t * sims;
            stored.push(words(&tables[start..start + 8 * sims]));
        }
        let checks_start = TABLES_HEADER + 8 * table_count * sims;
        let checks_end = checks_start + 8 * self.check_count as usize;
        let checks = words(&tables[checks_start..checks_end]);
        let exact = words(&tables[checks_end..]);
        (stored, checks, exact)
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
mod tests {
    use super::*;

    fn docs() -> Vec<NearDoc> {
        vec![
            NearDoc {
                fingerprint: Fingerprint::Sim {
                    key: 0xffff_0000_ffff_0000,
                    check: 0xffff_0000_ffff_0000,
                },
                name: "a.txt".into(),
                categories: vec![0],
            },
            NearDoc {
                fingerprint: Fingerprint::Sim {
                    key: 0x0000_ffff_0000_ffff,
                    check: 0x0000_ffff_0000_ffff,
                },
                name: "b.txt".into(),
                categories: vec![0, 1],
            },
            NearDoc {
                fingerprint: Fingerprint::Sim {
                    key: 0xffff_0000_ffff_0000,
                    check: 0xffff_0000_ffff_0000,
                },
                name: "a-copy.txt".into(),
                categories: vec![1],
            },
            NearDoc {
                fingerprint: Fingerprint::Exact(42),
                name: "short.txt".into(),
                categories: vec![],
            },
        ]
    }

    #[test]
    fn lookups_name_every_document_within_the_distance() {
        let engine = NearEngine::build(SimHashParams::default(), 3, 4, docs()).unwrap();
        let found = engine
            .lookup(
                Fingerprint::Sim {
                    key: 0xffff_0000_ffff_0007,
                    check: 0xffff_0000_ffff_0007,
                },
                3,
            )
            .unwrap();
        let names: Vec<_> = found.iter().map(|&(i, d)| (engine.doc(i).0, d)).collect();
        assert_eq!(names, [("a-copy.txt", 3), ("a.txt", 3)]);
        assert!(engine
            .lookup(
                Fingerprint::Sim {
                    key: 0xffff_0000_ffff_000f,
                    check: 0xffff_0000_ffff_000f
                },
                3
            )
            .unwrap()
            .is_empty());
        let exact = engine.lookup(Fingerprint::Exact(42), 0).unwrap();
        assert_eq!(exact.len(), 1);
        assert!(engine.is_exact(exact[0].0));
        assert!(engine.lookup(Fingerprint::Exact(42), 4).is_err());
    }

    #[test]
    fn sections_round_trip_and_damage_is_refused() {
        let engine = NearEngine::build(SimHashParams::default(), 3, 4, docs()).unwrap();
        let (tables, names) = (engine.encode_tables(), engine.encode_docs());
        let path = Path::new("k.bloom");
        let back = NearEngine::decode(path, &tables, &names, 2).unwrap();
        assert_eq!(
            back.docs().collect::<Vec<_>>(),
            engine.docs().collect::<Vec<_>>()
        );
        assert_eq!(back.params(), engine.params());
        // A category id beyond the list's categories.
        assert!(NearEngine::decode(path, &tables, &names, 1).is_err());
        // Each header field out of range, and a stored value changed, are refused by name.
        let damaged = |at: usize, value: u8| {
            let mut bad = tables.clone();
            bad[at] = value;
            NearEngine::decode(path, &bad, &names, 2)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(damaged(0, 0).contains("shingle"), "{}", damaged(0, 0));
        assert!(damaged(8, 9).contains("weighting"));
        assert!(damaged(9, 4).contains("blocks"), "{}", damaged(9, 4));
        assert!(damaged(11, 17).contains("check shingle"));
        assert!(damaged(32, 65).contains("check distance"));
        assert!(damaged(12, 5).contains("table count"));
        assert!(damaged(16, 9).contains("length"));
        assert!(damaged(50, 1).contains("shorter"));
        let first_value = TABLES_HEADER + 8 * 4 + 3; // table 1's first value
        assert!(damaged(first_value, tables[first_value] ^ 0x10).contains("tables"));
        assert!(NearEngine::decode(path, &tables[..tables.len() - 8], &names, 2).is_err());
        assert!(NearEngine::decode(path, &tables, &names[..names.len() - 1], 2).is_err());
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_NAME_BYTES);
        let cut = clip_name(&long);
        assert!(cut.len() <= MAX_NAME_BYTES && cut.len() >= MAX_NAME_BYTES - 1);
    }
}
