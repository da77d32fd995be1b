//! The contents of each section of a blocklist file, encoded and decoded: metadata, Bloom
//! filters, the verification table and CaBF's parameters (docs/FORMAT.md, "Sections").
//! Decoding checks every field's range, so that a file which passed its checksums but was not
//! written by phishbloom is still refused with a named error.
//!
//! `filters` holds the structures' sections (filters, cuckoo and counting parameters,
//! patches); `entries` what confirms and names entries (verification table, categories,
//! category sets, exceptions); `compact` a compact list's table; this file the list's metadata, growth and CaBF parameters.

use std::path::Path;

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::keys::KeyScheme;

mod compact;
mod entries;
mod filters;

pub use compact::{encode_compact, read_compact};
pub use entries::{
    decode_categories, decode_category_sets, decode_exceptions, encode_categories,
    encode_category_sets, encode_exceptions, encode_verify, read_fingerprint_table, read_verify,
};
pub use filters::{
    decode_patch, decode_static_patch, encode_counting_params, encode_cuckoo_params,
    encode_filter_params, encode_layer, encode_patch, encode_static_patch, read_counting,
    read_cuckoo, read_filter, read_layer, FILTER_PARAMS,
};

/// The set fingerprint of a list: `Σ xxh3-128(v) mod 2^128` over its distinct entries, where `v`
/// is an entry's 64-bit fingerprint (the value its verification section holds, derived from the
/// xxh3-128 of its key) written as 8 little-endian bytes — seed 001's order-free set fingerprint
/// `FP(S) = FP(e₁) + … + FP(eₙ)`. Adding or removing an entry adds or subtracts its term, so it
/// is maintained in O(changes), and anyone holding the fingerprints — a verification section, a
/// delta — can compute it without the keys. Two sets with the same fingerprint are the same set
/// unless two of their entries share a 64-bit fingerprint (probability about n²/2^65) or the
/// 128-bit sums collide. It detects divergence, not tampering: anyone can compute it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SetFingerprint(pub u128);

impl SetFingerprint {
    /// The term of the entry of fingerprint `v`.
    pub fn term(v: u64) -> u128 {
        xxhash_rust::xxh3::xxh3_128(&v.to_le_bytes())
    }

    /// The fingerprint of a set of distinct entry fingerprints.
    pub fn of(fingerprints: impl IntoIterator<Item = u64>) -> Self {
        let mut set = SetFingerprint::default();
        for v in fingerprints {
            set.add(v);
        }
        set
    }

    /// Adds an entry (that was not in the set).
    pub fn add(&mut self, v: u64) {
        self.0 = self.0.wrapping_add(Self::term(v));
    }

    /// Removes an entry (that was in the set).
    pub fn remove(&mut self, v: u64) {
        self.0 = self.0.wrapping_sub(Self::term(v));
    }
}

impl std::fmt::Display for SetFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl serde::Serialize for SetFingerprint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What a blocklist is, beyond its structure: the metadata section.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Meta {
    /// The list's name (a server names lists by it; by default the output file's stem).
    pub name: String,
    /// The list version: 1 for a new list, one more at every rebuild, add, remove or delta.
    pub version: u64,
    /// When the file was written, in seconds since the Unix epoch.
    pub created: u64,
    /// How items become keys.
    pub scheme: KeyScheme,
    /// Probes per checked item the filter was sized for (E: expressions per URL; 1 for keys).
    pub probes_per_item: u32,
    /// Distinct entries in the list.
    pub entries: u64,
    /// The list's set fingerprint.
    pub fingerprint: SetFingerprint,
    /// The false-positive rate per checked item the list was built for.
    pub target_fpp: Option<f64>,
    /// Whether `entries` and `fingerprint` are exact. They stop being exact when an item is
    /// added to a list without a verification section and its filter already answered for it:
    /// it may have been new (a false positive hid it) or not.
    pub exact_count: bool,
}

/// Length of the metadata section's fixed part (the name follows).
const META_FIXED: usize = 64;

/// The longest list name (bytes of UTF-8).
pub const MAX_NAME_BYTES: usize = 255;

/// Encodes the metadata section.
pub fn encode_meta(meta: &Meta) -> Vec<u8> {
    let name = &meta.name.as_bytes()[..meta.name.len().min(MAX_NAME_BYTES)];
    let mut out = Vec::with_capacity(META_FIXED + name.len());
    out.put_u64(meta.version);
    out.put_u64(meta.created);
    out.put_u128(meta.fingerprint.0);
    out.put_u64(meta.entries);
    out.put_u64(meta.target_fpp.map_or(NO_RATE, f64::to_bits));
    out.put_u32(meta.probes_per_item);
    out.push(meta.scheme.code());
    // Flags: bit 0 set when the count and set fingerprint are approximate.
    out.push(u8::from(!meta.exact_count));
    out.put_u16(name.len() as u16);
    out.put_u64(0);
    out.extend_from_slice(name);
    out
}

/// Decodes the metadata section.
pub fn decode_meta(path: &Path, bytes: &[u8]) -> Result<Meta> {
    let short = || Error::invalid(path, "metadata section", "shorter than 64 bytes");
    let mut reader = ByteReader::new(bytes);
    let version = reader.u64().ok_or_else(short)?;
    let created = reader.u64().ok_or_else(short)?;
    let fingerprint = SetFingerprint(reader.u128().ok_or_else(short)?);
    let entries = reader.u64().ok_or_else(short)?;
    let target_fpp = reader.f64().ok_or_else(short)?;
    let probes_per_item = reader.u32().ok_or_else(short)?;
    let scheme_code = reader.u8().ok_or_else(short)?;
    let flags = reader.u8().ok_or_else(short)?;
    let name_len = reader.u16().ok_or_else(short)? as usize;
    let reserved = reader.u64().ok_or_else(short)?;
    let scheme = KeyScheme::from_code(scheme_code)
        .ok_or_else(|| Error::invalid(path, "metadata key scheme", scheme_code))?;
    if flags > 1 || reserved != 0 {
        return Err(Error::invalid(path, "metadata reserved bytes", "not zero"));
    }
    if version == 0 {
        return Err(Error::invalid(path, "metadata list version", 0));
    }
    if probes_per_item == 0 {
        return Err(Error::invalid(path, "metadata probes per item", 0));
    }
    let target_fpp = decode_fpp(path, "metadata target rate", target_fpp)?;
    if name_len > MAX_NAME_BYTES || reader.rest().len() != name_len {
        return Err(Error::invalid(
            path,
            "metadata name length",
            format!(
                "{name_len}, with {} bytes after the fixed fields",
                reader.rest().len()
            ),
        ));
    }
    let name = std::str::from_utf8(reader.rest())
        .map_err(|_| Error::invalid(path, "metadata name", "not UTF-8"))?
        .to_string();
    Ok(Meta {
        name,
        version,
        created,
        scheme,
        probes_per_item,
        entries,
        fingerprint,
        target_fpp,
        exact_count: flags & 1 == 0,
    })
}

/// How "no rate" is stored: the one NaN bit pattern writers use (`f64::NAN`), so that every file
/// that reads has exactly one encoding.
const NO_RATE: u64 = 0x7ff8_0000_0000_0000;

/// A stored rate: [`NO_RATE`] for none, else strictly inside (0, 1).
fn decode_fpp(path: &Path, field: &'static str, value: f64) -> Result<Option<f64>> {
    if value.to_bits() == NO_RATE {
        Ok(None)
    } else if value > 0.0 && value < 1.0 {
        Ok(Some(value))
    } else {
        Err(Error::invalid(path, field, value))
    }
}

/// The growth section: the capacity factor and tightening ratio of a growing list.
pub fn encode_growth(expansion: u32, tightening: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.put_u32(expansion);
    out.put_u32(0);
    out.put_f64(tightening);
    out
}

/// Decodes the growth section; only the factors this version grows by are accepted.
pub fn decode_growth(path: &Path, bytes: &[u8]) -> Result<(u32, f64)> {
    let mut reader = ByteReader::new(bytes);
    let (Some(expansion), Some(0), Some(tightening), true) =
        (reader.u32(), reader.u32(), reader.f64(), bytes.len() == 16)
    else {
        return Err(Error::invalid(
            path,
            "growth section",
            format!("{} bytes", bytes.len()),
        ));
    };
    if u64::from(expansion) != crate::structure::EXPANSION
        || tightening != crate::structure::TIGHTENING
    {
        return Err(Error::invalid(
            path,
            "growth parameters",
            format!(
                "expansion {expansion}, tightening {tightening}; this version grows by {} at {}",
                crate::structure::EXPANSION,
                crate::structure::TIGHTENING
            ),
        ));
    }
    Ok((expansion, tightening))
}

/// CaBF's parameters: the split code and the number of component filters.
pub fn encode_cabf(split: u8, filters: u32) -> Vec<u8> {
    let mut out = vec![split, 0, 0, 0];
    out.put_u32(filters);
    out.resize(64, 0);
    out
}

/// Decodes CaBF's parameters (split code, component filters).
pub fn decode_cabf(path: &Path, bytes: &[u8]) -> Result<(u8, u32)> {
    if bytes.len() != 64 {
        return Err(Error::invalid(path, "CaBF section length", bytes.len()));
    }
    let mut reader = ByteReader::new(bytes);
    let split = reader.u8().unwrap_or(u8::MAX);
    let reserved = reader.take(3).unwrap_or_default();
    let filters = reader.u32().unwrap_or_default();
    if reserved.iter().chain(reader.rest()).any(|&b| b != 0) {
        return Err(Error::invalid(path, "CaBF reserved bytes", "not zero"));
    }
    Ok((split, filters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_fingerprint_is_order_free_and_updatable() {
        let keys: [u64; 3] = [7, 1 << 40, u64::MAX];
        let forward = SetFingerprint::of(keys);
        let backward = SetFingerprint::of(keys.iter().rev().copied());
        assert_eq!(forward, backward);
        let mut edited = SetFingerprint::of(keys[..2].iter().copied());
        edited.add(u64::MAX);
        assert_eq!(edited, forward);
        edited.remove(7);
        assert_eq!(edited, SetFingerprint::of(keys[1..].iter().copied()));
        assert_eq!(forward.to_string().len(), 32);
    }

    #[test]
    fn meta_round_trips_and_checks_its_fields() {
        let meta = Meta {
            name: "phishing-ü".into(),
            version: 7,
            created: 1_790_000_000,
            scheme: KeyScheme::Expressions,
            probes_per_item: 20,
            entries: 10_317,
            fingerprint: SetFingerprint(u128::MAX - 5),
            target_fpp: Some(0.01),
            exact_count: false,
        };
        let bytes = encode_meta(&meta);
        assert_eq!(bytes.len(), 64 + "phishing-ü".len());
        assert_eq!(decode_meta(Path::new("m"), &bytes).unwrap(), meta);
        let mut bad = bytes.clone();
        bad[52] = 99;
        assert!(decode_meta(Path::new("m"), &bad).is_err());
        assert!(decode_meta(Path::new("m"), &bytes[..63]).is_err());
        assert!(decode_meta(Path::new("m"), &bytes[..bytes.len() - 1]).is_err());
    }
}
