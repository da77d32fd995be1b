//! Writing a file: the directory (offsets, lengths, checksums) its sections give, then the
//! header, table and padded sections, from memory or copied from spilled sources.

use std::io::Write;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::bytes::PutLe;

use super::{Directory, SectionEntry, Source, ALIGN, ENTRY_LEN, FORMAT_VERSION, HEADER_LEN, MAGIC};

/// A section to write: its tag, index, and its bytes as consecutive parts (so a filter's
/// parameter block and its bit array need not be copied together).
pub struct SectionData<'a> {
    /// The tag.
    pub tag: u16,
    /// The index.
    pub index: u16,
    /// The bytes, in order.
    pub parts: Vec<&'a [u8]>,
}

impl SectionData<'_> {
    fn len(&self) -> u64 {
        self.parts.iter().map(|p| p.len() as u64).sum()
    }

    fn checksum(&self) -> u64 {
        let mut hasher = Xxh3::new();
        for part in &self.parts {
            hasher.update(part);
        }
        hasher.digest()
    }
}

/// Rounds `offset` up to the next multiple of [`ALIGN`] (`None` on overflow).
pub(super) fn align_up(offset: u64) -> Option<u64> {
    offset.checked_next_multiple_of(ALIGN)
}

/// A section too large to hold in memory (a keyword index spilled to a temporary file or read
/// from an open list): its bytes are read, piece by piece, from sources when the file is
/// planned (to checksum them) and written (to copy them).
pub struct SpilledSection<'a> {
    /// The tag.
    pub tag: u16,
    /// The index.
    pub index: u16,
    /// The bytes, in order: `(source, offset, length)`.
    pub parts: Vec<(&'a dyn Source, u64, u64)>,
}

/// Bytes copied per read of a spilled section.
const SPILL_CHUNK: usize = 1 << 20;

impl SpilledSection<'_> {
    fn len(&self) -> u64 {
        self.parts.iter().map(|p| p.2).sum()
    }

    /// Calls `visit` with the section's bytes, a chunk at a time.
    fn for_each_chunk(
        &self,
        mut visit: impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut buffer = vec![0u8; SPILL_CHUNK];
        for &(source, offset, len) in &self.parts {
            let mut done = 0;
            while done < len {
                let take = (len - done).min(SPILL_CHUNK as u64) as usize;
                source.read_exact_at(&mut buffer[..take], offset + done)?;
                visit(&buffer[..take])?;
                done += take as u64;
            }
        }
        Ok(())
    }
}

/// The directory a file with these sections has: offsets, lengths, checksums (this reads every
/// section's bytes once, to checksum them). Sections must come in ascending (tag, index) order,
/// as readers require.
pub fn plan(kind: u16, sections: &[SectionData<'_>]) -> Directory {
    let sizes = sections
        .iter()
        .map(|s| (s.tag, s.index, s.len(), s.checksum()))
        .collect();
    plan_sizes(kind, sizes)
}

/// [`plan`] with spilled sections too (read once here, to checksum them); together the
/// sections are placed in ascending (tag, index) order.
pub fn plan_spilled(
    kind: u16,
    sections: &[SectionData<'_>],
    spilled: &[SpilledSection<'_>],
) -> std::io::Result<Directory> {
    let mut sizes: Vec<(u16, u16, u64, u64)> = sections
        .iter()
        .map(|s| (s.tag, s.index, s.len(), s.checksum()))
        .collect();
    for section in spilled {
        let mut hasher = Xxh3::new();
        section.for_each_chunk(|chunk| {
            hasher.update(chunk);
            Ok(())
        })?;
        sizes.push((section.tag, section.index, section.len(), hasher.digest()));
    }
    sizes.sort_by_key(|&(tag, index, _, _)| (tag, index));
    Ok(plan_sizes(kind, sizes))
}

/// The directory of sections with these (tag, index, length, checksum), in order.
fn plan_sizes(kind: u16, sizes: Vec<(u16, u16, u64, u64)>) -> Directory {
    let table_end = (HEADER_LEN + ENTRY_LEN * sizes.len()) as u64;
    // Alignment of in-memory lengths cannot overflow a u64.
    let mut offset = table_end.next_multiple_of(ALIGN);
    let mut entries = Vec::with_capacity(sizes.len());
    for (tag, index, len, checksum) in sizes {
        entries.push(SectionEntry {
            tag,
            index,
            offset,
            len,
            checksum,
        });
        offset = (offset + len).next_multiple_of(ALIGN);
    }
    let table = encode_table(&entries);
    Directory {
        version: FORMAT_VERSION,
        kind,
        file_len: offset,
        checksum: xxh3_64(&table),
        sections: entries,
    }
}

fn encode_table(entries: &[SectionEntry]) -> Vec<u8> {
    let mut table = Vec::with_capacity(entries.len() * ENTRY_LEN);
    for entry in entries {
        table.put_u16(entry.tag);
        table.put_u16(entry.index);
        table.put_u32(0);
        table.put_u64(entry.offset);
        table.put_u64(entry.len);
        table.put_u64(entry.checksum);
    }
    table
}

fn encode_header(directory: &Directory) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(&MAGIC);
    header.put_u32(FORMAT_VERSION);
    header.put_u16(directory.kind);
    header.put_u16(0);
    header.put_u32(directory.sections.len() as u32);
    header.put_u32(0);
    header.put_u64(directory.file_len);
    header.put_u64(directory.checksum);
    header.resize(HEADER_LEN - 8, 0);
    let checksum = xxh3_64(&header);
    header.put_u64(checksum);
    header
}

/// Writes a whole file (header, table, padded sections) for `directory` (from [`plan`] of the
/// same sections) to `out`.
pub fn write(
    out: &mut impl Write,
    directory: &Directory,
    sections: &[SectionData<'_>],
) -> std::io::Result<()> {
    write_spilled(out, directory, sections, &[])
}

/// [`write()`] for a directory from [`plan_spilled`]: spilled sections are copied from their
/// sources in chunks.
pub fn write_spilled(
    out: &mut impl Write,
    directory: &Directory,
    sections: &[SectionData<'_>],
    spilled: &[SpilledSection<'_>],
) -> std::io::Result<()> {
    const ZEROS: [u8; ALIGN as usize] = [0; ALIGN as usize];
    // Zero bytes from `*position` up to `to` (under 64 by construction of `plan`).
    let pad = |out: &mut dyn Write, position: &mut u64, to: u64| -> std::io::Result<()> {
        let gap = to.saturating_sub(*position).min(ALIGN) as usize;
        out.write_all(&ZEROS[..gap])?;
        *position += gap as u64;
        Ok(())
    };
    let table = encode_table(&directory.sections);
    out.write_all(&encode_header(directory))?;
    out.write_all(&table)?;
    let mut position = (HEADER_LEN + table.len()) as u64;
    for entry in &directory.sections {
        pad(out, &mut position, entry.offset)?;
        let key = (entry.tag, entry.index);
        if let Some(section) = sections.iter().find(|s| (s.tag, s.index) == key) {
            for part in &section.parts {
                out.write_all(part)?;
                position += part.len() as u64;
            }
        } else if let Some(section) = spilled.iter().find(|s| (s.tag, s.index) == key) {
            section.for_each_chunk(|chunk| {
                out.write_all(chunk)?;
                position += chunk.len() as u64;
                Ok(())
            })?;
        }
    }
    pad(out, &mut position, directory.file_len)
}

/// The whole file image in memory (for `to_bytes`, tests and fuzzing).
pub fn encode(kind: u16, sections: &[SectionData<'_>]) -> Vec<u8> {
    let directory = plan(kind, sections);
    let mut out = Vec::with_capacity(directory.file_len as usize);
    // Writing into a Vec cannot fail.
    let _ = write(&mut out, &directory, sections);
    out
}

#[cfg(test)]
pub(super) mod tests {
    use std::path::Path;

    use super::super::{read_directory, read_section_vec, tag};
    use super::*;

    /// Section `tag`, index 0, of `parts`.
    pub(in crate::format) fn section<'a>(tag: u16, parts: Vec<&'a [u8]>) -> SectionData<'a> {
        SectionData {
            tag,
            index: 0,
            parts,
        }
    }

    pub(in crate::format) fn sample() -> Vec<u8> {
        let a = [1u8; 10];
        let b = [2u8; 70];
        encode(
            7,
            &[
                section(tag::META, vec![&a]),
                section(tag::FILTER, vec![&b[..30], &b[30..]]),
            ],
        )
    }

    #[test]
    fn layout_is_aligned_and_reads_back() {
        let bytes = sample();
        let directory = read_directory(Path::new("x"), &&bytes[..]).unwrap();
        assert_eq!(directory.kind, 7);
        assert_eq!(directory.file_len, bytes.len() as u64);
        assert_eq!(directory.sections.len(), 2);
        assert_eq!(directory.sections[0].offset, 128);
        assert_eq!(directory.sections[1].offset, 192);
        assert_eq!(bytes.len(), 192 + 128);
        let filter = read_section_vec(Path::new("x"), &&bytes[..], &directory.sections[1]).unwrap();
        assert_eq!(filter, [2u8; 70]);
        assert_eq!(directory.find(tag::META, 0).unwrap().len, 10);
        assert!(directory.find(tag::META, 1).is_none());
    }

    #[test]
    fn spilled_sections_write_the_same_file_as_sections_in_memory() {
        let (a, b, c) = ([1u8; 10], vec![2u8; 3_000_000], [3u8; 5]);
        let in_memory = encode(
            7,
            &[
                section(tag::META, vec![&a]),
                section(tag::FILTER, vec![&b[..100], &b[100..]]),
                section(tag::VERIFY, vec![&c]),
            ],
        );
        let sections = [section(tag::META, vec![&a]), section(tag::VERIFY, vec![&c])];
        let head = b[..100].to_vec();
        let spilled = [SpilledSection {
            tag: tag::FILTER,
            index: 0,
            parts: vec![(&head, 0, 100), (&b, 100, b.len() as u64 - 100)],
        }];
        let directory = plan_spilled(7, &sections, &spilled).unwrap();
        let mut out = Vec::new();
        write_spilled(&mut out, &directory, &sections, &spilled).unwrap();
        assert_eq!(out, in_memory);
        assert_eq!(
            directory,
            read_directory(Path::new("x"), &&out[..]).unwrap()
        );
    }
}
