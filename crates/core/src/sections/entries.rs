//! The sections that confirm and name entries: the verification table, the categories, the
//! category set of each verified entry, and the exceptions.

use std::path::Path;

use crate::bytes::{ByteReader, PutLe};
use crate::engine::Fingerprints;
use crate::error::{Error, Result};
use crate::format::{self, SectionEntry, Source};
use crate::resolve::{Category, CategorySets, Exceptions, MAX_CATEGORIES};

use super::MAX_NAME_BYTES;

/// Encodes the verification section: the fingerprints, little-endian, ascending.
pub fn encode_verify(table: &Fingerprints) -> &[u8] {
    // Little-endian targets only (the filter crate refuses big-endian ones), so the in-memory
    // words are their own encoding.
    bytemuck::cast_slice(table.as_slice())
}

/// Reads the verification section.
pub fn read_verify(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<Fingerprints> {
    read_fingerprint_table(path, source, entry, "verification section")
}

/// Reads a section of fingerprints, little-endian, strictly ascending (the verification
/// section; the never-warn section); `what` names it in errors.
pub fn read_fingerprint_table(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    what: &'static str,
) -> Result<Fingerprints> {
    if !entry.len.is_multiple_of(8) {
        return Err(Error::invalid(path, what, format!("{} bytes", entry.len)));
    }
    let bytes = format::read_section_vec(path, source, entry)?;
    let words: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    Fingerprints::from_sorted(words)
        .ok_or_else(|| Error::invalid(path, what, "fingerprints not strictly ascending"))
}

/// Encodes the categories section: count, then per category its entry count and name.
pub fn encode_categories(categories: &[Category]) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_u32(categories.len() as u32);
    for category in categories {
        let name = &category.name.as_bytes()[..category.name.len().min(MAX_NAME_BYTES)];
        out.put_u64(category.entries);
        out.put_u16(name.len() as u16);
        out.extend_from_slice(name);
    }
    out
}

/// Decodes the categories section.
pub fn decode_categories(path: &Path, bytes: &[u8]) -> Result<Vec<Category>> {
    let short = || Error::invalid(path, "categories section", "shorter than its counts");
    let mut reader = ByteReader::new(bytes);
    let count = reader.u32().ok_or_else(short)? as usize;
    if count > MAX_CATEGORIES || count > bytes.len() / 10 {
        return Err(Error::invalid(path, "category count", count));
    }
    let mut categories = Vec::with_capacity(count);
    for _ in 0..count {
        let entries = reader.u64().ok_or_else(short)?;
        let len = reader.u16().ok_or_else(short)? as usize;
        let name = std::str::from_utf8(reader.take(len).ok_or_else(short)?)
            .map_err(|_| Error::invalid(path, "category name", "not UTF-8"))?;
        if name.is_empty()
            || len > MAX_NAME_BYTES
            || categories.iter().any(|c: &Category| c.name == name)
        {
            return Err(Error::invalid(path, "category name", format!("{name:?}")));
        }
        categories.push(Category {
            name: name.to_string(),
            entries,
        });
    }
    if !reader.rest().is_empty() {
        return Err(Error::invalid(
            path,
            "categories section",
            "bytes after the last category",
        ));
    }
    Ok(categories)
}

/// Encodes the category sets section: the interned sets (count, then each as a member count
/// and ids), then one `u32` set index per fingerprint of the verification section (none for a
/// compact list, whose table holds its entries' set indices).
pub fn encode_category_sets(sets: &CategorySets, set_of: &[u32]) -> Vec<u8> {
    let sets = sets.all();
    let mut out = Vec::new();
    out.put_u32(sets.len() as u32);
    for set in sets {
        out.put_u16(set.len() as u16);
        for &id in set {
            out.put_u16(id);
        }
    }
    for &index in set_of {
        out.put_u32(index);
    }
    out
}

/// Decodes the category sets section for a table of `fingerprints` entries and `categories`
/// categories: `(set of each fingerprint, the sets)`.
pub fn decode_category_sets(
    path: &Path,
    bytes: &[u8],
    fingerprints: usize,
    categories: usize,
) -> Result<(Vec<u32>, CategorySets)> {
    let short = || Error::invalid(path, "category sets section", "shorter than its counts");
    let mut reader = ByteReader::new(bytes);
    let count = reader.u32().ok_or_else(short)? as usize;
    if count > bytes.len() / 2 {
        return Err(Error::invalid(path, "category set count", count));
    }
    let mut sets = Vec::with_capacity(count);
    for _ in 0..count {
        let len = reader.u16().ok_or_else(short)? as usize;
        let ids: Vec<u16> = (0..len)
            .map(|_| reader.u16().ok_or_else(short))
            .collect::<Result<_>>()?;
        let sorted = ids.windows(2).all(|w| w[0] < w[1]);
        if ids.is_empty() || !sorted || ids.iter().any(|&id| id as usize >= categories) {
            return Err(Error::invalid(path, "category set", format!("{ids:?}")));
        }
        sets.push(ids);
    }
    if reader.rest().len() != fingerprints * 4 {
        return Err(Error::invalid(
            path,
            "category sets section",
            format!(
                "{} bytes of set indexes for {fingerprints} fingerprints",
                reader.rest().len()
            ),
        ));
    }
    let set_of: Vec<u32> = (0..fingerprints)
        .map(|_| reader.u32().ok_or_else(short))
        .collect::<Result<_>>()?;
    if set_of.iter().any(|&i| i as usize >= count) {
        return Err(Error::invalid(
            path,
            "category set index",
            "beyond the sets",
        ));
    }
    Ok((set_of, CategorySets::from_sets(sets)))
}

/// Encodes the exceptions section: the entry keys, sorted, one per line.
pub fn encode_exceptions(exceptions: &Exceptions) -> Vec<u8> {
    exceptions.sorted_keys().join("\n").into_bytes()
}

/// Decodes the exceptions section.
pub fn decode_exceptions(path: &Path, bytes: &[u8]) -> Result<Exceptions> {
    let bad = |what: &str| Error::invalid(path, "exceptions section", what);
    if bytes.is_empty() {
        return Err(bad("empty"));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not ASCII"))?;
    let keys: Vec<&str> = text.split('\n').collect();
    // Canonical keys are printable ASCII without spaces (canonicalization escapes the rest).
    if keys
        .iter()
        .any(|k| k.is_empty() || !k.bytes().all(|b| (0x21..0x7f).contains(&b)))
    {
        return Err(bad("a key that is not a canonical entry"));
    }
    if !keys.windows(2).all(|w| w[0] < w[1]) {
        return Err(bad("keys not strictly ascending"));
    }
    Ok(Exceptions::new(keys.into_iter().map(str::to_string)))
}
