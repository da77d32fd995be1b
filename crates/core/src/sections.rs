//! The contents of each section of a blocklist file, encoded and decoded: metadata, Bloom
//! filters, the verification table and CaBF's parameters (docs/FORMAT.md, "Sections").
//! Decoding checks every field's range, so that a file which passed its checksums but was not
//! written by phishbloom is still refused with a named error.

use std::path::Path;

use phishbloom_filter::counting::{CountingFilter, CountingParams};
use phishbloom_filter::cuckoo::{CuckooFilter, CuckooParams};
use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::ribbon::RibbonFilter;
use phishbloom_filter::{AnyFilter, BloomParams, HashStrategy, LayoutKind};

use crate::bytes::{ByteReader, PutLe};
use crate::engine::Fingerprints;
use crate::error::{Error, Result};
use crate::format::{self, SectionEntry, Source};
use crate::keys::KeyScheme;
use crate::resolve::{Category, CategorySets, Exceptions, Verification, MAX_CATEGORIES};
use crate::structure::Layer;

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

/// Length of a filter section's parameter block (the bits follow, 64-byte aligned).
pub const FILTER_PARAMS: usize = 64;

/// Encodes a filter section's parameter block.
pub fn encode_filter_params(params: &BloomParams) -> Vec<u8> {
    let mut out = Vec::with_capacity(FILTER_PARAMS);
    out.push(params.layout.code());
    out.push(params.strategy.code());
    out.put_u16(0);
    out.put_u32(params.num_hashes);
    out.put_u64(params.num_bits);
    out.put_u64(params.items);
    out.put_u64(params.expected_items);
    out.put_u64(params.target_fpp.map_or(NO_RATE, f64::to_bits));
    out.resize(FILTER_PARAMS, 0);
    out
}

/// Decodes a filter section's parameter block.
fn decode_filter_params(path: &Path, block: &[u8; FILTER_PARAMS]) -> Result<BloomParams> {
    let mut reader = ByteReader::new(block);
    // The block has 64 bytes: every read below succeeds.
    let layout_code = reader.u8().unwrap_or(u8::MAX);
    let strategy_code = reader.u8().unwrap_or(u8::MAX);
    let reserved = reader.u16().unwrap_or(1);
    let num_hashes = reader.u32().unwrap_or_default();
    let num_bits = reader.u64().unwrap_or_default();
    let items = reader.u64().unwrap_or_default();
    let expected_items = reader.u64().unwrap_or_default();
    let target_fpp = reader.f64().unwrap_or_default();
    let layout = LayoutKind::from_code(layout_code)
        .ok_or_else(|| Error::invalid(path, "filter layout", layout_code))?;
    let strategy = HashStrategy::from_code(strategy_code)
        .ok_or_else(|| Error::invalid(path, "filter hash strategy", strategy_code))?;
    if reserved != 0 || reader.rest().iter().any(|&b| b != 0) {
        return Err(Error::invalid(path, "filter reserved bytes", "not zero"));
    }
    Ok(BloomParams {
        layout,
        strategy,
        num_bits,
        num_hashes,
        items,
        expected_items,
        target_fpp: decode_fpp(path, "filter target rate", target_fpp)?,
    })
}

/// Whether the section's bytes match its checksum, read in 64 KiB pieces (used to tell a
/// corrupted section from one that is intact but holds values no writer produces).
fn section_intact(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<bool> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut offset = entry.offset;
    let end = entry.offset + entry.len;
    while offset < end {
        let len = (end - offset).min(buffer.len() as u64) as usize;
        source
            .read_exact_at(&mut buffer[..len], offset)
            .map_err(|e| Error::read(path, "read", e))?;
        hasher.update(&buffer[..len]);
        offset += len as u64;
    }
    Ok(hasher.digest() == entry.checksum)
}

/// The error for a field that failed to decode: a checksum mismatch if the section is damaged
/// (the likelier cause), else the field's own error.
fn field_or_checksum(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    error: Error,
) -> Error {
    match section_intact(path, source, entry) {
        Ok(true) => error,
        Ok(false) => Error::ChecksumMismatch {
            path: path.to_path_buf(),
            section: entry.describe(),
            stored: entry.checksum,
            computed: 0,
        },
        Err(io) => io,
    }
}

/// Reads a filter section straight into a new filter (no intermediate copy of the bits).
pub fn read_filter(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<AnyFilter> {
    read_sized(
        path,
        source,
        entry,
        "filter",
        |block| {
            let params = decode_filter_params(path, block)?;
            Ok((params, params.data_len()))
        },
        |params| {
            AnyFilter::from_params(params).map_err(|e| Error::invalid(path, "filter parameters", e))
        },
        |filter| filter.bit_bytes_mut(),
    )
}

/// Reads a section made of a 64-byte parameter block and the data it sizes: `decode` reads the
/// block's parameters and the data length they imply, which must be the section's rest; only
/// then does `make` allocate the empty structure, whose `data` is read straight from the file
/// while the checksum is verified.
fn read_sized<P, T>(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    what: &'static str,
    decode: impl FnOnce(&[u8; FILTER_PARAMS]) -> Result<(P, u64)>,
    make: impl FnOnce(&P) -> Result<T>,
    data: impl FnOnce(&mut T) -> &mut [u8],
) -> Result<T> {
    let mut block = [0u8; FILTER_PARAMS];
    if entry.len < FILTER_PARAMS as u64 {
        return Err(Error::invalid(
            path,
            "section length",
            format!("{what}: {}", entry.len),
        ));
    }
    source
        .read_exact_at(&mut block, entry.offset)
        .map_err(|e| Error::read(path, "read", e))?;
    // The data length is checked against the section's before anything is allocated, and the
    // section lies inside the file: no allocation exceeds the file's own length.
    let decoded = decode(&block).and_then(|(params, data_len)| {
        let expected = (FILTER_PARAMS as u64).saturating_add(data_len);
        if entry.len == expected {
            make(&params)
        } else {
            Err(Error::invalid(
                path,
                "section size",
                format!(
                    "the {what} parameters need a {expected}-byte section, found {}",
                    entry.len
                ),
            ))
        }
    });
    let mut structure = decoded.map_err(|error| field_or_checksum(path, source, entry, error))?;
    format::read_section(path, source, entry, &mut [&mut block, data(&mut structure)])?;
    Ok(structure)
}

/// Encodes a cuckoo section's parameter block.
pub fn encode_cuckoo_params(params: &CuckooParams) -> Vec<u8> {
    encode_sized_block(&SizedBlock {
        width: params.fingerprint_bits,
        size: params.num_buckets,
        items: params.items,
        expected_items: params.expected_items,
        target_fpp: params.target_fpp,
    })
}

/// Encodes a counting section's parameter block.
pub fn encode_counting_params(params: &CountingParams) -> Vec<u8> {
    encode_sized_block(&SizedBlock {
        width: params.num_hashes,
        size: params.num_counters,
        items: params.items,
        expected_items: params.expected_items,
        target_fpp: params.target_fpp,
    })
}

fn encode_sized_block(block: &SizedBlock) -> Vec<u8> {
    let mut out = Vec::with_capacity(FILTER_PARAMS);
    out.put_u32(block.width);
    out.put_u32(0);
    out.put_u64(block.size);
    out.put_u64(block.items);
    out.put_u64(block.expected_items);
    out.put_u64(block.target_fpp.map_or(NO_RATE, f64::to_bits));
    out.resize(FILTER_PARAMS, 0);
    out
}

/// The common shape of the cuckoo and counting blocks: a u32 (fingerprint bits, or k), zero,
/// then size, items, sized-for items and the target rate.
struct SizedBlock {
    width: u32,
    size: u64,
    items: u64,
    expected_items: u64,
    target_fpp: Option<f64>,
}

fn decode_sized_block(
    path: &Path,
    what: &'static str,
    block: &[u8; FILTER_PARAMS],
) -> Result<SizedBlock> {
    let mut reader = ByteReader::new(block);
    // The block has 64 bytes: every read below succeeds.
    let width = reader.u32().unwrap_or_default();
    let reserved = reader.u32().unwrap_or(1);
    let size = reader.u64().unwrap_or_default();
    let items = reader.u64().unwrap_or_default();
    let expected_items = reader.u64().unwrap_or_default();
    let target_fpp = reader.f64().unwrap_or_default();
    if reserved != 0 || reader.rest().iter().any(|&b| b != 0) {
        return Err(Error::invalid(
            path,
            "reserved bytes",
            format!("{what}: not zero"),
        ));
    }
    Ok(SizedBlock {
        width,
        size,
        items,
        expected_items,
        target_fpp: decode_fpp(path, "target rate", target_fpp)?,
    })
}

/// Reads a cuckoo section (its parameters, then its packed slots).
pub fn read_cuckoo(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<CuckooFilter> {
    read_sized(
        path,
        source,
        entry,
        "cuckoo",
        |block| {
            let b = decode_sized_block(path, "cuckoo", block)?;
            let params = CuckooParams {
                num_buckets: b.size,
                fingerprint_bits: b.width,
                items: b.items,
                expected_items: b.expected_items,
                target_fpp: b.target_fpp,
            };
            if params.items > params.num_buckets.saturating_mul(4) {
                return Err(Error::invalid(path, "cuckoo item count", params.items));
            }
            Ok((params, params.data_len()))
        },
        |params| {
            CuckooFilter::with_params(params)
                .map_err(|e| Error::invalid(path, "cuckoo parameters", e))
        },
        CuckooFilter::bytes_mut,
    )
}

/// Reads a counting section (its parameters, then its 4-bit counters).
pub fn read_counting(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
) -> Result<CountingFilter> {
    read_sized(
        path,
        source,
        entry,
        "counting",
        |block| {
            let b = decode_sized_block(path, "counting", block)?;
            let params = CountingParams {
                num_counters: b.size,
                num_hashes: b.width,
                items: b.items,
                expected_items: b.expected_items,
                target_fpp: b.target_fpp,
            };
            Ok((params, params.data_len()))
        },
        |params| {
            CountingFilter::with_params(params)
                .map_err(|e| Error::invalid(path, "counting parameters", e))
        },
        CountingFilter::bytes_mut,
    )
}

/// Reads layer `entry` of a list (a filter, cuckoo or counting section).
pub fn read_layer(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<Layer> {
    Ok(match entry.tag {
        format::tag::CUCKOO => Layer::Cuckoo(read_cuckoo(path, source, entry)?),
        format::tag::COUNTERS => Layer::Counting(read_counting(path, source, entry)?),
        _ => Layer::Bloom(read_filter(path, source, entry)?),
    })
}

/// A layer's section: its tag, parameter block and data.
pub fn encode_layer(layer: &Layer) -> (u16, Vec<u8>, &[u8]) {
    match layer {
        Layer::Bloom(filter) => (
            format::tag::FILTER,
            encode_filter_params(&filter.params()),
            filter.bit_bytes(),
        ),
        Layer::Cuckoo(filter) => (
            format::tag::CUCKOO,
            encode_cuckoo_params(&filter.params()),
            filter.bytes(),
        ),
        Layer::Counting(filter) => (
            format::tag::COUNTERS,
            encode_counting_params(&filter.params()),
            filter.bytes(),
        ),
    }
}

/// A patch section (prefixes of fingerprints added by deltas to a Bloom list): a 64-byte block
/// (prefix bits u32, Rice parameter u32, count u64, zeros), then the Golomb–Rice coded prefixes.
pub fn encode_patch(patch: &PrefixSet) -> (Vec<u8>, Vec<u8>) {
    let (r, coded) = patch.encode();
    let mut block = Vec::with_capacity(FILTER_PARAMS);
    block.put_u32(patch.bits());
    block.put_u32(r);
    block.put_u64(patch.len() as u64);
    block.resize(FILTER_PARAMS, 0);
    (block, coded)
}

/// Decodes a patch section.
pub fn decode_patch(path: &Path, bytes: &[u8]) -> Result<PrefixSet> {
    let (Some(block), Some(coded)) = (bytes.get(..FILTER_PARAMS), bytes.get(FILTER_PARAMS..))
    else {
        return Err(Error::invalid(path, "patch section length", bytes.len()));
    };
    let mut reader = ByteReader::new(block);
    // The block has 64 bytes: every read below succeeds.
    let bits = reader.u32().unwrap_or_default();
    let r = reader.u32().unwrap_or(u32::MAX);
    let count = reader.u64().unwrap_or_default();
    if reader.rest().iter().any(|&b| b != 0) || count == 0 {
        return Err(Error::invalid(
            path,
            "patch parameters",
            format!("{count} prefixes"),
        ));
    }
    PrefixSet::decode(bits, count, r, coded).map_err(|e| Error::invalid(path, "patch", e))
}

/// A static patch section (a ribbon filter of fingerprints a compact delta added to a Bloom
/// list): a 64-byte block (result bits u32, zero u32, slots u64, keys u64, seed u64, zeros),
/// then the solution (`⌈f·m/8⌉` bytes, see [`RibbonFilter::solution`]).
pub fn encode_static_patch(patch: &RibbonFilter) -> (Vec<u8>, Vec<u8>) {
    let mut block = Vec::with_capacity(FILTER_PARAMS);
    block.put_u32(patch.bits());
    block.put_u32(0);
    block.put_u64(patch.slots());
    block.put_u64(patch.len());
    block.put_u64(patch.seed());
    block.resize(FILTER_PARAMS, 0);
    (block, patch.solution())
}

/// Decodes a static patch section.
pub fn decode_static_patch(path: &Path, bytes: &[u8]) -> Result<RibbonFilter> {
    let (Some(block), Some(solution)) = (bytes.get(..FILTER_PARAMS), bytes.get(FILTER_PARAMS..))
    else {
        return Err(Error::invalid(
            path,
            "static patch section length",
            bytes.len(),
        ));
    };
    let mut reader = ByteReader::new(block);
    // The block has 64 bytes: every read below succeeds.
    let bits = reader.u32().unwrap_or_default();
    let zero = reader.u32().unwrap_or(u32::MAX);
    let slots = reader.u64().unwrap_or_default();
    let items = reader.u64().unwrap_or_default();
    let seed = reader.u64().unwrap_or_default();
    if zero != 0 || reader.rest().iter().any(|&b| b != 0) || items == 0 {
        return Err(Error::invalid(
            path,
            "static patch parameters",
            format!("{items} keys in {slots} slots of {bits} bits"),
        ));
    }
    RibbonFilter::from_solution(bits, slots, seed, items, solution)
        .map_err(|e| Error::invalid(path, "static patch", e))
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

/// Encodes the verification section: the fingerprints, little-endian, ascending.
pub fn encode_verify(table: &Fingerprints) -> &[u8] {
    // Little-endian targets only (the filter crate refuses big-endian ones), so the in-memory
    // words are their own encoding.
    bytemuck::cast_slice(table.as_slice())
}

/// Reads the verification section.
pub fn read_verify(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<Fingerprints> {
    if !entry.len.is_multiple_of(8) {
        return Err(Error::invalid(
            path,
            "verification section length",
            entry.len,
        ));
    }
    let bytes = format::read_section_vec(path, source, entry)?;
    let words: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    Fingerprints::from_sorted(words).ok_or_else(|| {
        Error::invalid(
            path,
            "verification section",
            "fingerprints not strictly ascending",
        )
    })
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
/// and ids), then one `u32` set index per fingerprint of the verification section.
pub fn encode_category_sets(verification: &Verification) -> Vec<u8> {
    let sets = verification.sets().all();
    let mut out = Vec::new();
    out.put_u32(sets.len() as u32);
    for set in sets {
        out.put_u16(set.len() as u16);
        for &id in set {
            out.put_u16(id);
        }
    }
    for &index in verification.set_of() {
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

    #[test]
    fn filter_params_round_trip() {
        let params = BloomParams {
            layout: LayoutKind::Blocked,
            strategy: HashStrategy::Sha256,
            num_bits: 1024,
            num_hashes: 6,
            items: 3,
            expected_items: 100,
            target_fpp: None,
        };
        let block: [u8; FILTER_PARAMS] = encode_filter_params(&params).try_into().unwrap();
        assert_eq!(
            decode_filter_params(Path::new("f"), &block).unwrap(),
            params
        );
    }
}
