//! The compact section (tag 13) of a `compact` list: its table's parameters, then the
//! Elias–Fano coded prefixes, and the entries' category set indices — in the map, or a majority
//! set and a side map of the others (docs/FORMAT.md, "Compact").

use std::path::Path;

use phishbloom_filter::prefix_map::{
    stored_words, PrefixMap, PrefixMapParts, MAX_LEN, MAX_VALUE_BITS,
};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::format::{self, SectionEntry, Source};
use crate::resolve::{CategorySets, CompactTable, SetCoding};

use super::filters::{field_or_checksum, read_block};
use super::FILTER_PARAMS;

/// Encodes the compact section: a 64-byte parameter block — universe u, value bits c, coding,
/// prefixes n; for the majority coding the side map's entries m, the majority set and the side
/// map's value bits — then the main map's unary part, low parts and values, then the side
/// map's, each in little-endian words.
pub fn encode_compact(table: &CompactTable) -> Vec<u8> {
    let main = table.map().parts();
    let side = match table.coding() {
        SetCoding::InMap => None,
        SetCoding::Majority { set, others } => Some((*set, others.parts())),
    };
    let mut out = Vec::with_capacity(FILTER_PARAMS + 8 * words(&main));
    out.put_u64(main.universe);
    out.put_u32(main.value_bits);
    out.push(u8::from(side.is_some()));
    out.resize(16, 0);
    out.put_u64(main.len);
    match &side {
        Some((set, others)) => {
            out.put_u64(others.len);
            out.put_u32(*set);
            out.put_u32(others.value_bits);
        }
        None => out.resize(40, 0),
    }
    out.put_u32(u32::from(table.domains_only()));
    out.resize(FILTER_PARAMS, 0);
    for parts in std::iter::once(&main).chain(side.as_ref().map(|(_, others)| others)) {
        for word in parts.upper.iter().chain(&parts.lower).chain(&parts.values) {
            out.put_u64(*word);
        }
    }
    out
}

/// Words of a map's stored parts.
fn words(parts: &PrefixMapParts) -> usize {
    parts.upper.len() + parts.lower.len() + parts.values.len()
}

/// The parameter block of a compact section, checked.
struct Params {
    universe: u64,
    value_bits: u32,
    len: u64,
    /// Coding 1: the side map's entries, the majority set, the side map's value bits.
    side: Option<(u64, u32, u32)>,
    domains_only: bool,
}

impl Params {
    /// Words of the main map's three parts, then of the side map's (zeros without one).
    fn words(&self) -> [usize; 6] {
        let [a, b, c] = stored_words(self.len, self.universe, self.value_bits);
        let [d, e, f] = self.side.map_or([0; 3], |(m, _, bits)| {
            stored_words(m, self.len.max(1), bits)
        });
        [a, b, c, d, e, f]
    }
}

/// Reads and checks the parameter block.
fn parse_params(path: &Path, block: &[u8]) -> Result<Params> {
    let bad = |what: String| Error::invalid(path, "compact section", what);
    let mut reader = ByteReader::new(block);
    // The block has 64 bytes: every read below succeeds.
    let universe = reader.u64().unwrap_or_default();
    let value_bits = reader.u32().unwrap_or_default();
    let coding = reader.u32().unwrap_or(u32::MAX);
    let len = reader.u64().unwrap_or_default();
    let side_len = reader.u64().unwrap_or_default();
    let majority = reader.u32().unwrap_or_default();
    let side_bits = reader.u32().unwrap_or_default();
    let flags = reader.u32().unwrap_or(u32::MAX);
    let reserved = flags > 1 || reader.rest().iter().any(|&b| b != 0);
    let side = match coding {
        0 if side_len == 0 && majority == 0 && side_bits == 0 => None,
        1 if value_bits == 0 => Some((side_len, majority, side_bits)),
        _ => return Err(bad(format!("coding {coding:#x}"))),
    };
    let shape_ok = |n: u64, u: u64, c: u32| u > 0 && n <= MAX_LEN && n <= u && c <= MAX_VALUE_BITS;
    let side_ok = side.is_none_or(|(m, _, c)| shape_ok(m, len.max(1), c));
    if reserved || !shape_ok(len, universe, value_bits) || !side_ok {
        return Err(bad(format!(
            "{len} prefixes of a universe of {universe} with {value_bits}-bit values"
        )));
    }
    Ok(Params {
        universe,
        value_bits,
        len,
        side,
        domains_only: flags == 1,
    })
}

/// The table of checked parameters and the words of its parts (each with room for one more
/// word, the padding the map adds, so that adding it copies nothing).
fn assemble(
    path: &Path,
    params: &Params,
    words: [Vec<u64>; 6],
    sets: CategorySets,
) -> Result<CompactTable> {
    let bad = |e: phishbloom_filter::Error| Error::invalid(path, "compact section", e);
    let [upper, lower, values, side_upper, side_lower, side_values] = words;
    let main = PrefixMap::from_parts(PrefixMapParts {
        universe: params.universe,
        value_bits: params.value_bits,
        len: params.len,
        upper,
        lower,
        values,
    })
    .map_err(bad)?;
    let coding = match params.side {
        None => SetCoding::InMap,
        Some((m, set, c)) => SetCoding::Majority {
            set,
            others: PrefixMap::from_parts(PrefixMapParts {
                universe: params.len.max(1),
                value_bits: c,
                len: m,
                upper: side_upper,
                lower: side_lower,
                values: side_values,
            })
            .map_err(bad)?,
        },
    };
    Ok(CompactTable::from_parts(main, coding, sets, path)?.with_domains_only(params.domains_only))
}

/// Zeroed words for each part, each with room for one more.
fn part_buffers(words: [usize; 6]) -> [Vec<u64>; 6] {
    words.map(|count| {
        let mut part = Vec::with_capacity(count + 1);
        part.resize(count, 0);
        part
    })
}

/// Reads the compact section of a file straight into the table's words (no copy of the
/// section beside them: a list loaded in a browser holds one copy of its table), checking its
/// checksum as it reads.
pub fn read_compact(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    sets: CategorySets,
) -> Result<CompactTable> {
    let mut block = read_block(path, source, entry, "compact")?;
    // A field that does not decode is reported as the damage it likelier is.
    let damaged = |error: Error| field_or_checksum(path, source, entry, error);
    let params = parse_params(path, &block).map_err(damaged)?;
    let words = params.words();
    let total: u64 = words.iter().map(|&w| w as u64).sum();
    // Checked against the section (which lies in the file) before anything is allocated.
    if entry.len != FILTER_PARAMS as u64 + 8 * total {
        return Err(damaged(Error::invalid(
            path,
            "compact section",
            format!(
                "{} bytes where its parameters need {}",
                entry.len,
                64 + 8 * total
            ),
        )));
    }
    let mut parts = part_buffers(words);
    {
        let mut views: Vec<&mut [u8]> = vec![&mut block];
        views.extend(
            parts
                .iter_mut()
                .map(|p| bytemuck::cast_slice_mut(p.as_mut_slice())),
        );
        format::read_section(path, source, entry, &mut views)?;
    }
    assemble(path, &params, parts, sets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::tag;

    /// The table `bytes` holds, read as a file's compact section made of them.
    fn decode_compact(path: &Path, bytes: &[u8], sets: CategorySets) -> Result<CompactTable> {
        let entry = SectionEntry {
            tag: tag::COMPACT,
            index: 0,
            offset: 0,
            len: bytes.len() as u64,
            checksum: xxhash_rust::xxh3::xxh3_64(bytes),
        };
        read_compact(path, &bytes, &entry, sets)
    }

    /// A table of 300 entries whose sets are `set(i)`.
    fn table(set: impl Fn(u64) -> Vec<u16>) -> CompactTable {
        let pairs = (0..300u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), set(i)))
            .collect();
        CompactTable::build(pairs, 1 << 40).unwrap()
    }

    #[test]
    fn the_section_round_trips_in_both_codings() {
        let even = table(|i| vec![(i % 2) as u16]);
        let mostly = table(|i| if i % 50 == 0 { vec![1] } else { vec![0, 1] });
        assert!(matches!(even.coding(), SetCoding::InMap));
        assert!(matches!(mostly.coding(), SetCoding::Majority { .. }));
        for table in [even, mostly] {
            let bytes = encode_compact(&table);
            let read = decode_compact(Path::new("x"), &bytes, table.sets().clone()).unwrap();
            assert_eq!(read, table);
        }
    }

    #[test]
    fn damaged_sections_are_refused() {
        for table in [
            table(|i| vec![(i % 2) as u16]),
            table(|i| vec![(i % 50 == 0) as u16]),
        ] {
            let bytes = encode_compact(&table);
            let path = Path::new("x");
            let sets = || table.sets().clone();
            assert!(decode_compact(path, &bytes[..bytes.len() - 8], sets()).is_err());
            let mut reserved = bytes.clone();
            reserved[60] = 1;
            assert!(decode_compact(path, &reserved, sets()).is_err());
            let mut huge = bytes.clone();
            huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
            assert!(decode_compact(path, &huge, sets()).is_err());
            let mut coding = bytes.clone();
            coding[12] = 2;
            assert!(decode_compact(path, &coding, sets()).is_err());
            // Set indices that index no set.
            assert!(decode_compact(path, &bytes, CategorySets::from_sets(vec![vec![0]])).is_err());
        }
    }
}
