//! A delta's extras, the same in every format: new category names, entry-count changes per
//! category, the category sets of added and recategorized entries, and the exceptions — all
//! LEB128 varints but, in format 3, the added entries' sets, which are packed (docs/FORMAT.md,
//! "Packed added sets").

use phishbloom_filter::golomb;
use phishbloom_filter::prefix_map::value_bits;

use crate::bytes::{ByteReader, PutLe};

use super::Delta;

/// How a table delta codes its added entries' set indices (the byte before them).
mod packing {
    /// Every index in `⌈log₂ S⌉` bits.
    pub const EVERY: u8 = 0;
    /// The most common index once, then the ranks of the other entries (Golomb–Rice coded)
    /// and their indices in `⌈log₂ S⌉` bits.
    pub const MAJORITY: u8 = 1;
}

impl Delta {
    /// Categories, counts, category sets and exceptions, as varints; the added sets packed
    /// ([`put_packed_sets`]) when `packed` (the current format), a varint each otherwise; then,
    /// with `tops` (format [`super::TOPS_VERSION`]), the target's top labels.
    pub(super) fn encode_extras(&self, packed: bool, tops: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let put_text = |out: &mut Vec<u8>, text: &str| {
            out.put_varint(text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        };
        out.put_varint(self.new_categories.len() as u64);
        for name in &self.new_categories {
            put_text(&mut out, name);
        }
        out.put_varint(self.counts.len() as u64);
        for &(id, change) in &self.counts {
            out.put_varint(u64::from(id));
            // Zigzag: small magnitudes of either sign take one byte.
            out.put_varint(((change << 1) ^ (change >> 63)) as u64);
        }
        // The distinct category sets, then an index per added and recategorized entry.
        let mut sets: Vec<&Vec<u16>> = self
            .added_categories
            .iter()
            .chain(self.recategorized.iter().map(|(_, ids)| ids))
            .collect();
        sets.sort_unstable();
        sets.dedup();
        let index = |ids: &Vec<u16>| sets.binary_search(&ids).unwrap_or(0) as u64;
        out.put_varint(sets.len() as u64);
        for set in &sets {
            out.put_varint(set.len() as u64);
            for &id in set.iter() {
                out.put_varint(u64::from(id));
            }
        }
        if packed {
            // 0 (no sets: a list of one category) or the added count, then the packing.
            out.put_varint(self.added_categories.len() as u64);
            if !self.added_categories.is_empty() {
                let indices: Vec<u32> = self
                    .added_categories
                    .iter()
                    .map(|ids| index(ids) as u32)
                    .collect();
                put_packed_sets(&mut out, &indices, sets.len() as u64);
            }
        } else {
            out.put_varint(self.added_categories.len() as u64);
            for ids in &self.added_categories {
                out.put_varint(index(ids));
            }
        }
        out.put_varint(self.recategorized.len() as u64);
        let mut previous = 0;
        for (position, ids) in &self.recategorized {
            out.put_varint(position - previous);
            previous = *position;
            out.put_varint(index(ids));
        }
        match &self.exceptions {
            None => out.push(0),
            Some(keys) => {
                out.push(1);
                out.put_varint(keys.len() as u64);
                for key in keys {
                    put_text(&mut out, key);
                }
            }
        }
        if let Some(tops) = self.tops.as_ref().filter(|_| tops) {
            out.put_varint(tops.len() as u64);
            for &v in tops {
                out.put_u64(v);
            }
        }
        out
    }

    /// Reads the extras into the delta — the added sets packed when `packed`, the top labels
    /// after them when `tops` — (`None`: they do not decode, or bytes are left over).
    pub(super) fn decode_extras(&mut self, bytes: &[u8], packed: bool, tops: bool) -> Option<()> {
        let mut r = ByteReader::new(bytes);
        let text = |r: &mut ByteReader<'_>| -> Option<String> {
            let len = r.count()?;
            String::from_utf8(r.take(len)?.to_vec()).ok()
        };
        for _ in 0..r.count()? {
            self.new_categories.push(text(&mut r)?);
        }
        for _ in 0..r.count()? {
            let id = u16::try_from(r.varint()?).ok()?;
            let zigzag = r.varint()?;
            self.counts
                .push((id, ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64)));
        }
        let mut sets: Vec<Vec<u16>> = Vec::new();
        for _ in 0..r.count()? {
            let len = r.count()?;
            let set: Option<Vec<u16>> = (0..len).map(|_| u16::try_from(r.varint()?).ok()).collect();
            sets.push(set?);
        }
        // Packed, a set may take less than a byte: the count is bounded by the additions.
        let added_sets = usize::try_from(r.varint()?).ok()?;
        if added_sets != 0 && added_sets != self.added.len() {
            return None;
        }
        let indices = if packed && added_sets > 0 {
            read_packed_sets(&mut r, added_sets, sets.len() as u64)?
        } else if packed {
            Vec::new()
        } else {
            (0..added_sets)
                .map(|_| u32::try_from(r.varint()?).ok())
                .collect::<Option<Vec<u32>>>()?
        };
        for index in indices {
            self.added_categories
                .push(sets.get(index as usize)?.clone());
        }
        let mut position: u64 = 0;
        for _ in 0..r.count()? {
            position = position.checked_add(r.varint()?)?;
            let set = sets.get(usize::try_from(r.varint()?).ok()?)?.clone();
            self.recategorized.push((position, set));
        }
        match r.u8()? {
            0 => {}
            1 => {
                let mut keys = Vec::new();
                for _ in 0..r.count()? {
                    keys.push(text(&mut r)?);
                }
                self.exceptions = Some(keys);
            }
            _ => return None,
        }
        if tops {
            let count = r.count()?;
            let values: Option<Vec<u64>> = (0..count).map(|_| r.u64()).collect();
            let values = values?;
            // Ascending and distinct, as a list keeps them.
            if !values.windows(2).all(|w| w[0] < w[1]) {
                return None;
            }
            self.tops = Some(values);
        }
        r.rest().is_empty().then_some(())
    }
}

/// Writes the set `indices` (each below `sets`) of a table delta's additions in whichever of
/// the two [`packing`]s takes fewer bytes: every index in `w = ⌈log₂ S⌉` bits (`n·w` bits), or
/// the most common index and the others' ranks and indices (about `m·(log₂(n/m) + 1.5 + w)`
/// bits for `m` others) — a fraction of a bit per addition when most share one set.
fn put_packed_sets(out: &mut Vec<u8>, indices: &[u32], sets: u64) {
    let width = value_bits(sets);
    let every = pack(indices.iter().copied(), width);
    let mut counts = vec![0usize; sets as usize];
    for &i in indices {
        counts[i as usize] += 1;
    }
    let majority = (0..counts.len()).max_by_key(|&i| (counts[i], std::cmp::Reverse(i)));
    let majority = majority.unwrap_or(0) as u32;
    let ranks: Vec<u64> = (0..indices.len() as u64)
        .filter(|&rank| indices[rank as usize] != majority)
        .collect();
    let r = golomb::best_parameter(&ranks, indices.len().max(1) as u128);
    let coded = golomb::encode(&ranks, r);
    let others = pack(ranks.iter().map(|&rank| indices[rank as usize]), width);
    let mut side = Vec::new();
    side.put_varint(u64::from(majority));
    side.put_varint(ranks.len() as u64);
    side.push(r as u8);
    side.put_varint(coded.len() as u64);
    side.extend_from_slice(&coded);
    side.extend_from_slice(&others);
    if side.len() < every.len() {
        out.push(packing::MAJORITY);
        out.extend_from_slice(&side);
    } else {
        out.push(packing::EVERY);
        out.extend_from_slice(&every);
    }
}

/// Reads what [`put_packed_sets`] wrote for `count` additions of `sets` sets (`None`: it does
/// not decode, or an index is not below `sets`).
fn read_packed_sets(r: &mut ByteReader<'_>, count: usize, sets: u64) -> Option<Vec<u32>> {
    let width = value_bits(sets);
    let indices = match r.u8()? {
        packing::EVERY => unpack(r, count, width)?,
        packing::MAJORITY => {
            let majority = u32::try_from(r.varint()?).ok()?;
            let others = usize::try_from(r.varint()?).ok()?;
            let rice = u32::from(r.u8()?);
            let coded_len = r.count()?;
            if others > count || rice > 63 {
                return None;
            }
            let ranks = golomb::decode(r.take(coded_len)?, others as u64, rice, 64).ok()?;
            let values = unpack(r, others, width)?;
            let mut indices = vec![majority; count];
            let mut previous = None;
            for (rank, value) in ranks.into_iter().zip(values) {
                // Ranks ascend, each an addition's.
                if previous.is_some_and(|p| p >= rank) || rank >= count as u64 {
                    return None;
                }
                previous = Some(rank);
                indices[rank as usize] = value;
            }
            indices
        }
        _ => return None,
    };
    indices
        .iter()
        .all(|&i| u64::from(i) < sets.max(1))
        .then_some(indices)
}

/// `values` in `width` bits each, least significant bit first, in `⌈n·w/8⌉` bytes.
fn pack(values: impl Iterator<Item = u32>, width: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut buffer, mut held) = (0u64, 0u32);
    for value in values {
        buffer |= u64::from(value) << held;
        held += width;
        while held >= 8 {
            out.push(buffer as u8);
            buffer >>= 8;
            held -= 8;
        }
    }
    if held > 0 {
        out.push(buffer as u8);
    }
    out
}

/// Reads `count` values of `width` bits that [`pack`] wrote.
fn unpack(r: &mut ByteReader<'_>, count: usize, width: u32) -> Option<Vec<u32>> {
    let bytes = r.take((count.checked_mul(width as usize)?).div_ceil(8))?;
    let mask = (1u64 << width) - 1;
    Some(
        (0..count)
            .map(|i| {
                let bit = i * width as usize;
                // A value of at most 32 bits starting at bit `bit % 8` lies in 5 bytes; 8 are
                // read (57 usable bits).
                let mut word = 0u64;
                for (k, &b) in bytes[bit / 8..].iter().take(8).enumerate() {
                    word |= u64::from(b) << (8 * k);
                }
                ((word >> (bit % 8)) & mask) as u32
            })
            .collect(),
    )
}
