//! Deltas of near-duplicate lists (delta format 5): the documents removed, by name, and the
//! documents added, each with its name, categories and print — a sketch's packed bins and its
//! keys' buckets, or SimHash fingerprints, or an exact hash — so that `publish` and `sync`
//! carry a few dozen bytes a changed document instead of the whole list.
//!
//! A document whose print or categories changed is removed and added again. The receiver
//! refuses a delta whose base (version, documents, set fingerprint) or method is not its list's,
//! and, before changing anything, one whose removals and additions do not lead to the set
//! fingerprint it promises (docs/FORMAT.md, "Near-duplicate deltas").

use std::collections::BTreeMap;
use std::path::Path;

use phishbloom_filter::postings::MIN_KNOWN_BITS;
use phishbloom_text::minhash::{SketchRecord, MAX_BINS, MAX_POSTINGS};

use super::{MAGIC, NEAR_VERSION};
use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::near::{doc_term, Print, MAX_NAME_BYTES};
use crate::sections::SetFingerprint;

/// The most categories a document carries in a delta (as a list numbers them).
const MAX_DOC_CATEGORIES: u64 = crate::resolve::MAX_CATEGORIES as u64;

/// A document as a delta carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearEntry {
    /// Its name.
    pub name: String,
    /// Its categories, by name.
    pub categories: Vec<String>,
    /// Its print under the list's method.
    pub print: Print,
}

/// The state a near delta starts from or leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NearState {
    /// The list version.
    pub version: u64,
    /// Documents held.
    pub entries: u64,
    /// The set fingerprint.
    pub fingerprint: SetFingerprint,
}

/// The change between two versions of a near-duplicate list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearDelta {
    /// Seconds since the Unix epoch.
    pub created: u64,
    /// The version, documents and set fingerprint the delta applies to.
    pub base: NearState,
    /// The version and set fingerprint it leads to (its documents follow from the changes).
    pub target_version: u64,
    /// The set fingerprint it leads to.
    pub target_fingerprint: SetFingerprint,
    /// The list's method: 0 SimHash, 1 MinHash (a delta of one never applies to the other).
    pub method: u8,
    /// Names of the documents removed (or replaced), ascending.
    pub removed: Vec<String>,
    /// The documents added (or replacing one of the same name), by name.
    pub added: Vec<NearEntry>,
}

/// A print as a delta compares it: what a list keeps (a sketch as its record).
fn comparable(print: &Print) -> Print {
    match print.record() {
        Some(record) => Print::Stored(Box::new(record)),
        None => print.clone(),
    }
}

impl NearDelta {
    /// The delta from `old` to `new`: each state with its documents (names unique), under the
    /// list method `method`.
    pub fn between(
        old: (NearState, &[NearEntry]),
        new: (NearState, &[NearEntry]),
        method: u8,
        created: u64,
    ) -> Self {
        let before: BTreeMap<&str, &NearEntry> =
            old.1.iter().map(|e| (e.name.as_str(), e)).collect();
        let after: BTreeMap<&str, &NearEntry> =
            new.1.iter().map(|e| (e.name.as_str(), e)).collect();
        let same = |a: &NearEntry, b: &NearEntry| {
            a.categories == b.categories
                && doc_term(&a.name, &a.print) == doc_term(&b.name, &b.print)
        };
        let removed = before
            .iter()
            .filter(|(name, e)| after.get(*name).is_none_or(|n| !same(e, n)))
            .map(|(name, _)| name.to_string())
            .collect();
        let added = after
            .iter()
            .filter(|(name, e)| before.get(*name).is_none_or(|o| !same(o, e)))
            .map(|(_, e)| NearEntry {
                name: e.name.clone(),
                categories: e.categories.clone(),
                print: comparable(&e.print),
            })
            .collect();
        NearDelta {
            created,
            base: old.0,
            target_version: new.0.version,
            target_fingerprint: new.0.fingerprint,
            method,
            removed,
            added,
        }
    }

    /// The set fingerprint the delta leads to from `base`, given the removed documents' prints
    /// as the receiver holds them.
    pub fn fingerprint_after(&self, removed: &[(String, Print)]) -> SetFingerprint {
        let mut fingerprint = self.base.fingerprint;
        for (name, print) in removed {
            fingerprint.remove(doc_term(name, print));
        }
        for entry in &self.added {
            fingerprint.add(doc_term(&entry.name, &entry.print));
        }
        fingerprint
    }

    /// The file's bytes (docs/FORMAT.md, "Near-duplicate deltas").
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        out.put_u32(NEAR_VERSION);
        out.put_varint(self.created);
        out.put_varint(self.base.version);
        out.put_varint(self.base.entries);
        out.put_u128(self.base.fingerprint.0);
        out.put_varint(self.target_version.wrapping_sub(self.base.version));
        out.put_u128(self.target_fingerprint.0);
        out.push(self.method);
        out.put_varint(self.removed.len() as u64);
        for name in &self.removed {
            put_str(&mut out, name);
        }
        out.put_varint(self.added.len() as u64);
        for entry in &self.added {
            put_str(&mut out, &entry.name);
            out.put_varint(entry.categories.len() as u64);
            for category in &entry.categories {
                put_str(&mut out, category);
            }
            put_print(&mut out, &entry.print);
        }
        let checksum = xxhash_rust::xxh3::xxh3_64(&out);
        out.put_u64(checksum);
        out
    }

    /// Reads a near delta, checking every field; `path` names it in errors.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let bad = |field: &'static str, value: String| Error::invalid(path, field, value);
        if bytes.len() < 20 || bytes[..8] != MAGIC {
            return Err(bad("near delta", "not a delta file, or cut short".into()));
        }
        let body = super::read::checked_body(path, bytes)?;
        let mut r = ByteReader::new(&body[8..]);
        let short = || bad("near delta", "shorter than its counts say".into());
        let format = r.u32().ok_or_else(short)?;
        if format != NEAR_VERSION {
            return Err(bad("near delta format", format.to_string()));
        }
        let created = r.varint().ok_or_else(short)?;
        let base = NearState {
            version: r.varint().ok_or_else(short)?,
            entries: r.varint().ok_or_else(short)?,
            fingerprint: SetFingerprint(r.u128().ok_or_else(short)?),
        };
        let target_version = base.version.wrapping_add(r.varint().ok_or_else(short)?);
        let target_fingerprint = SetFingerprint(r.u128().ok_or_else(short)?);
        let method = r.u8().ok_or_else(short)?;
        if method > 1 {
            return Err(bad("near delta method", method.to_string()));
        }
        let removed_count = count(&mut r, 1).ok_or_else(short)?;
        // Counts are bounded by the bytes left, not by what each item takes in memory: grow.
        let mut removed = Vec::with_capacity(removed_count.min(1_024));
        for _ in 0..removed_count {
            removed.push(get_str(&mut r, path)?);
        }
        if removed.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad("near delta removals", "names not ascending".into()));
        }
        let added_count = count(&mut r, 11).ok_or_else(short)?;
        let mut added = Vec::with_capacity(added_count.min(1_024));
        for _ in 0..added_count {
            let name = get_str(&mut r, path)?;
            let categories_count = r.varint().ok_or_else(short)?;
            if categories_count > MAX_DOC_CATEGORIES {
                return Err(bad("near delta categories", categories_count.to_string()));
            }
            let categories = (0..categories_count)
                .map(|_| get_str(&mut r, path))
                .collect::<Result<Vec<_>>>()?;
            let print = get_print(&mut r, path)?;
            added.push(NearEntry {
                name,
                categories,
                print,
            });
        }
        if added.windows(2).any(|w| w[0].name >= w[1].name) {
            return Err(bad("near delta additions", "names not ascending".into()));
        }
        if !r.rest().is_empty() {
            return Err(bad(
                "near delta",
                format!("{} bytes after the last document", r.rest().len()),
            ));
        }
        Ok(NearDelta {
            created,
            base,
            target_version,
            target_fingerprint,
            method,
            removed,
            added,
        })
    }
}

/// A count of items of at least `min_bytes` each, bounded by the bytes left.
fn count(r: &mut ByteReader<'_>, min_bytes: usize) -> Option<usize> {
    let n = r.varint()?;
    (n <= (r.rest().len() / min_bytes) as u64).then_some(n as usize)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.put_varint(s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn get_str(r: &mut ByteReader<'_>, path: &Path) -> Result<String> {
    let bad = |value: String| Error::invalid(path, "near delta name", value);
    let len = r.varint().ok_or_else(|| bad("cut short".into()))?;
    if len > MAX_NAME_BYTES as u64 {
        return Err(bad(format!("{len} bytes")));
    }
    let bytes = r
        .take(len as usize)
        .ok_or_else(|| bad("cut short".into()))?;
    String::from_utf8(bytes.to_vec()).map_err(|_| bad("not UTF-8".into()))
}

/// A print: a tag byte (0 SimHash, 1 exact, 2 sketch), then its values.
fn put_print(out: &mut Vec<u8>, print: &Print) {
    match print {
        Print::Sim { key, check } => {
            out.push(0);
            out.put_u64(*key);
            out.put_u64(*check);
        }
        Print::Exact(hash) => {
            out.push(1);
            out.put_u64(*hash);
        }
        Print::Sketch(_) | Print::Stored(_) => {
            let record = print.record().unwrap_or_else(|| SketchRecord {
                packed: Vec::new(),
                prefixes: Vec::new(),
                known: 0,
            });
            out.push(2);
            out.put_varint(record.packed.len() as u64);
            for &word in &record.packed {
                out.put_u64(word);
            }
            out.push(record.known as u8);
            out.put_varint(record.prefixes.len() as u64);
            for &prefix in &record.prefixes {
                out.put_u32(prefix);
            }
        }
    }
}

fn get_print(r: &mut ByteReader<'_>, path: &Path) -> Result<Print> {
    let bad = |value: String| Error::invalid(path, "near delta print", value);
    let short = || bad("cut short".into());
    match r.u8().ok_or_else(short)? {
        0 => Ok(Print::Sim {
            key: r.u64().ok_or_else(short)?,
            check: r.u64().ok_or_else(short)?,
        }),
        1 => Ok(Print::Exact(r.u64().ok_or_else(short)?)),
        2 => {
            let words = r.varint().ok_or_else(short)?;
            if words == 0 || words > u64::from(MAX_BINS) * 8 / 64 {
                return Err(bad(format!("{words} sketch words")));
            }
            let packed = (0..words)
                .map(|_| r.u64().ok_or_else(short))
                .collect::<Result<Vec<_>>>()?;
            let known = u32::from(r.u8().ok_or_else(short)?);
            let keys = r.varint().ok_or_else(short)?;
            if !(MIN_KNOWN_BITS..=32).contains(&known)
                || keys == 0
                || keys > u64::from(MAX_POSTINGS)
            {
                return Err(bad(format!("{keys} keys of {known} known bits")));
            }
            let prefixes = (0..keys)
                .map(|_| r.u32().ok_or_else(short))
                .collect::<Result<Vec<_>>>()?;
            if prefixes
                .iter()
                .any(|&p| p.checked_shl(known).unwrap_or(0) != 0)
            {
                return Err(bad("a key's bits past the ones it says it knows".into()));
            }
            Ok(Print::Stored(Box::new(SketchRecord {
                packed,
                prefixes,
                known,
            })))
        }
        tag => Err(bad(format!("kind {tag}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, v: u64, category: &str) -> NearEntry {
        NearEntry {
            name: name.into(),
            categories: vec![category.into()],
            print: Print::Stored(Box::new(SketchRecord {
                packed: vec![v, v ^ 1, v ^ 2, v ^ 3],
                prefixes: vec![(v as u32) << 20; 6],
                known: 18,
            })),
        }
    }

    fn state(entries: &[NearEntry], version: u64) -> NearState {
        let mut fingerprint = SetFingerprint::default();
        for e in entries {
            fingerprint.add(doc_term(&e.name, &e.print));
        }
        NearState {
            version,
            entries: entries.len() as u64,
            fingerprint,
        }
    }

    #[test]
    fn a_delta_names_the_changes_round_trips_and_leads_to_the_target() {
        let old = vec![entry("a", 1, "x"), entry("b", 2, "x"), entry("c", 3, "x")];
        let new = vec![
            entry("a", 1, "x"),
            entry("b", 2, "y"),
            entry("d", 4, "x"),
            NearEntry {
                name: "e".into(),
                categories: vec![],
                print: Print::Exact(9),
            },
        ];
        let delta = NearDelta::between((state(&old, 3), &old), (state(&new, 4), &new), 1, 77);
        assert_eq!(delta.removed, ["b", "c"]);
        let names: Vec<&str> = delta.added.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["b", "d", "e"]);
        let bytes = delta.to_bytes();
        let back = NearDelta::from_bytes(Path::new("d"), &bytes).unwrap();
        assert_eq!(back, delta);
        let removed: Vec<(String, Print)> = ["b", "c"]
            .iter()
            .map(|n| {
                let e = old.iter().find(|e| e.name == *n).unwrap();
                (e.name.clone(), e.print.clone())
            })
            .collect();
        assert_eq!(back.fingerprint_after(&removed), state(&new, 4).fingerprint);
        // Damage anywhere is refused by the checksum; a cut copy by its length or checksum.
        for at in [8, 12, 40, bytes.len() / 2, bytes.len() - 9] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            assert!(
                NearDelta::from_bytes(Path::new("d"), &bad).is_err(),
                "byte {at}"
            );
        }
        for cut in [0, 12, 30, bytes.len() - 1] {
            assert!(NearDelta::from_bytes(Path::new("d"), &bytes[..cut]).is_err());
        }
        // A record knowing fewer key bits than any list keeps is refused: taken in, it would
        // cut the receiver's buckets for good.
        let mut thin = delta.clone();
        if let Print::Stored(record) = &mut thin.added[0].print {
            record.known = 12;
        }
        let error = NearDelta::from_bytes(Path::new("d"), &thin.to_bytes()).unwrap_err();
        assert!(error.to_string().contains("known bits"), "{error}");
    }
}
