//! The sections of a list's structures: Bloom filter parameters and bits, cuckoo and counting
//! parameter blocks, the layers of a growing list, and the patches deltas add to a Bloom list.

use std::borrow::Cow;
use std::path::Path;

use phishbloom_filter::counting::{CountingFilter, CountingParams};
use phishbloom_filter::cuckoo::{CuckooFilter, CuckooParams};
use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::ribbon::RibbonFilter;
use phishbloom_filter::{AnyFilter, BloomParams, HashStrategy, LayoutKind};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::format::{self, SectionEntry, Source};
use crate::structure::Layer;

use super::{decode_fpp, NO_RATE};

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
pub(super) fn field_or_checksum(
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

/// The 64-byte parameter block that starts section `entry` (`what` names the section in the
/// error for a section shorter than it).
pub(super) fn read_block(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    what: &str,
) -> Result<[u8; FILTER_PARAMS]> {
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
    Ok(block)
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
    let mut block = read_block(path, source, entry, what)?;
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

/// A layer's section: its tag, parameter block and data (a structure's bits in place; a
/// compact table coded afresh, after its parameter block).
pub fn encode_layer(layer: &Layer) -> (u16, Vec<u8>, Cow<'_, [u8]>) {
    match layer {
        Layer::Bloom(filter) => (
            format::tag::FILTER,
            encode_filter_params(&filter.params()),
            Cow::Borrowed(filter.bit_bytes()),
        ),
        Layer::Cuckoo(filter) => (
            format::tag::CUCKOO,
            encode_cuckoo_params(&filter.params()),
            Cow::Borrowed(filter.bytes()),
        ),
        Layer::Counting(filter) => (
            format::tag::COUNTERS,
            encode_counting_params(&filter.params()),
            Cow::Borrowed(filter.bytes()),
        ),
        Layer::Compact(table) => {
            let mut all = super::encode_compact(table);
            let data = all.split_off(FILTER_PARAMS);
            (format::tag::COMPACT, all, Cow::Owned(data))
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
