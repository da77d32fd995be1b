//! A delta's extras, the same in both formats: new category names, entry-count changes per
//! category, the category sets of added and recategorized entries, and the exceptions — all
//! LEB128 varints (docs/FORMAT.md, "Delta files").

use crate::bytes::{ByteReader, PutLe};

use super::Delta;

impl Delta {
    /// Categories, counts, category sets and exceptions, as varints.
    pub(super) fn encode_extras(&self) -> Vec<u8> {
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
        out.put_varint(self.added_categories.len() as u64);
        for ids in &self.added_categories {
            out.put_varint(index(ids));
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
        out
    }

    /// Reads the extras into the delta (`None`: they do not decode, or bytes are left over).
    pub(super) fn decode_extras(&mut self, bytes: &[u8]) -> Option<()> {
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
        let added_sets = r.count()?;
        if added_sets != 0 && added_sets != self.added.len() {
            return None;
        }
        for _ in 0..added_sets {
            self.added_categories
                .push(sets.get(usize::try_from(r.varint()?).ok()?)?.clone());
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
        r.rest().is_empty().then_some(())
    }
}
