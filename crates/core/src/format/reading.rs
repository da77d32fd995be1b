//! Reading a file: its header and section table checked field by field (magic, version,
//! checksums, lengths, placement, padding), then each section's bytes against its checksum.

use std::path::Path;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::bytes::ByteReader;
use crate::error::{Error, Result};

use super::writing::align_up;
use super::{
    Directory, SectionEntry, Source, ALIGN, ENTRY_LEN, FORMAT_VERSION, HEADER_LEN, MAGIC,
    MAX_SECTIONS, OLDEST_READ, OLD_CABF_MAGIC, OLD_VERIFY_MAGIC,
};

/// Reads `buf` at `offset`; a short source is [`Error::Truncated`] (the file shrank or lies
/// about its length), anything else an I/O error naming `path`.
fn read_at(path: &Path, source: &dyn Source, buf: &mut [u8], offset: u64, len: u64) -> Result<()> {
    source.read_exact_at(buf, offset).map_err(|error| {
        if error.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::Truncated {
                path: path.to_path_buf(),
                expected: offset.saturating_add(buf.len() as u64),
                got: source.source_len().unwrap_or(len),
            }
        } else {
            Error::read(path, "read", error)
        }
    })
}

/// A printable rendering of a file's first bytes, for "not a blocklist" messages.
fn escaped(bytes: &[u8]) -> String {
    let text: String = bytes
        .iter()
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    format!("\"{text}\"")
}

/// Reads and checks the header and section table of `source` (named `path` in errors):
/// magic, version, checksums, the file's length, and that every section lies inside the file,
/// aligned, in order, without overlap, with zero padding between.
pub fn read_directory(path: &Path, source: &dyn Source) -> Result<Directory> {
    let file_len = source
        .source_len()
        .map_err(|e| Error::read(path, "read the length of", e))?;
    let header = read_header(path, source, file_len)?;
    let table_len = header.count as usize * ENTRY_LEN;
    let table_end = (HEADER_LEN + table_len) as u64;
    if table_end > file_len {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            expected: table_end,
            got: file_len,
        });
    }
    let mut table = vec![0u8; table_len];
    read_at(path, source, &mut table, HEADER_LEN as u64, file_len)?;
    let computed = xxh3_64(&table);
    if computed != header.checksum {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            section: "section table".into(),
            stored: header.checksum,
            computed,
        });
    }
    let (sections, end) = read_table(path, source, &table, header.count, file_len)?;
    let expected_len = align_up(end).unwrap_or(u64::MAX);
    if expected_len != file_len {
        return Err(Error::invalid(
            path,
            "file length",
            format!("{file_len} bytes, but the sections end at {expected_len}"),
        ));
    }
    check_padding(path, source, end, file_len, file_len)?;
    Ok(Directory {
        version: header.version,
        kind: header.kind,
        file_len,
        checksum: header.checksum,
        sections,
    })
}

/// The header fields a reader keeps, checked.
struct Header {
    version: u32,
    kind: u16,
    /// Entries in the section table.
    count: u32,
    /// The table's checksum.
    checksum: u64,
}

/// Reads and checks the 64-byte header of a source of `file_len` bytes: magic (recognizing the
/// first format's files), version, checksum, reserved bytes, declared length, section count.
fn read_header(path: &Path, source: &dyn Source, file_len: u64) -> Result<Header> {
    let mut header = [0u8; HEADER_LEN];
    let available = file_len.min(HEADER_LEN as u64) as usize;
    read_at(path, source, &mut header[..available], 0, file_len)?;
    check_magic(path, &header[..available.min(8)])?;
    if available < HEADER_LEN {
        // The first format's files were at least 72 bytes: a short file is a truncated one.
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            expected: HEADER_LEN as u64,
            got: file_len,
        });
    }
    let mut reader = ByteReader::new(&header[8..]);
    // `header` has 64 bytes, so every field below is present.
    let field = |value: Option<u64>| value.unwrap_or_default();
    let version = field(reader.u32().map(u64::from)) as u32;
    check_version(path, version)?;
    let stored = u64::from_le_bytes(header[HEADER_LEN - 8..].try_into().unwrap_or_default());
    let computed = xxh3_64(&header[..HEADER_LEN - 8]);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            section: "header".into(),
            stored,
            computed,
        });
    }
    let kind = field(reader.u16().map(u64::from)) as u16;
    let reserved_a = field(reader.u16().map(u64::from));
    let count = field(reader.u32().map(u64::from)) as u32;
    let reserved_b = field(reader.u32().map(u64::from));
    let declared_len = field(reader.u64());
    let checksum = field(reader.u64());
    let reserved_c = reader.take(16).unwrap_or_default();
    if reserved_a != 0 || reserved_b != 0 || reserved_c.iter().any(|&b| b != 0) {
        return Err(Error::invalid(path, "header reserved bytes", "not zero"));
    }
    check_declared_len(path, declared_len, file_len)?;
    if count > MAX_SECTIONS {
        return Err(Error::invalid(path, "section count", count));
    }
    Ok(Header {
        version,
        kind,
        count,
        checksum,
    })
}

/// Refuses a file whose first bytes (up to 8) are not the magic, naming the first format's
/// files by theirs.
fn check_magic(path: &Path, magic: &[u8]) -> Result<()> {
    if magic == &MAGIC[..magic.len()] {
        return Ok(());
    }
    Err(match () {
        _ if magic == OLD_VERIFY_MAGIC => Error::OldFormat {
            path: path.to_path_buf(),
            what: "a verification table (FILE.verify)",
        },
        _ if magic == OLD_CABF_MAGIC => Error::OldFormat {
            path: path.to_path_buf(),
            what: "a CaBF file",
        },
        _ => Error::NotABlocklist {
            path: path.to_path_buf(),
            found: escaped(magic),
        },
    })
}

/// Refuses the first format's filter files and versions this build does not read.
fn check_version(path: &Path, version: u32) -> Result<()> {
    if version == 1 {
        return Err(Error::OldFormat {
            path: path.to_path_buf(),
            what: "a filter file",
        });
    }
    if !(OLDEST_READ..=FORMAT_VERSION).contains(&version) {
        return Err(Error::Version {
            path: path.to_path_buf(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

/// Refuses a file shorter or longer than its header says.
fn check_declared_len(path: &Path, declared_len: u64, file_len: u64) -> Result<()> {
    if declared_len > file_len {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            expected: declared_len,
            got: file_len,
        });
    }
    if declared_len < file_len {
        return Err(Error::TrailingBytes {
            path: path.to_path_buf(),
            expected: declared_len,
            got: file_len,
        });
    }
    Ok(())
}

/// The `count` entries of `table` (its checksum checked), each checked against the file and
/// the one before it, with the end of the last section.
fn read_table(
    path: &Path,
    source: &dyn Source,
    table: &[u8],
    count: u32,
    file_len: u64,
) -> Result<(Vec<SectionEntry>, u64)> {
    let mut reader = ByteReader::new(table);
    let mut sections: Vec<SectionEntry> = Vec::with_capacity(count as usize);
    let mut end = (HEADER_LEN + table.len()) as u64;
    for _ in 0..count {
        // The table holds exactly `count` entries of 32 bytes.
        let (Some(tag), Some(index), Some(reserved), Some(offset), Some(len), Some(checksum)) = (
            reader.u16(),
            reader.u16(),
            reader.u32(),
            reader.u64(),
            reader.u64(),
            reader.u64(),
        ) else {
            return Err(Error::invalid(
                path,
                "section table",
                "shorter than its count",
            ));
        };
        let entry = SectionEntry {
            tag,
            index,
            offset,
            len,
            checksum,
        };
        if reserved != 0 {
            return Err(Error::invalid(
                path,
                "section table reserved bytes",
                "not zero",
            ));
        }
        let section_end = check_placement(path, &entry, end, file_len)?;
        check_padding(path, source, end, offset, file_len)?;
        if let Some(previous) = sections.last() {
            check_order(path, previous, &entry)?;
        }
        sections.push(entry);
        end = section_end;
    }
    Ok((sections, end))
}

/// Refuses a section that does not start at the first aligned offset after `end` (the end of
/// the one before) or does not end inside the file; returns where it ends.
fn check_placement(path: &Path, entry: &SectionEntry, end: u64, file_len: u64) -> Result<u64> {
    let offset = entry.offset;
    let expected_offset = align_up(end);
    if Some(offset) != expected_offset {
        return Err(Error::invalid(
            path,
            "section offset",
            format!(
                "{} at {offset}, expected {}",
                entry.describe(),
                expected_offset.unwrap_or(u64::MAX)
            ),
        ));
    }
    let section_end = offset.checked_add(entry.len).filter(|&e| e <= file_len);
    section_end.ok_or_else(|| Error::Truncated {
        path: path.to_path_buf(),
        expected: offset.saturating_add(entry.len),
        got: file_len,
    })
}

/// Refuses sections out of ascending (tag, index) order.
fn check_order(path: &Path, previous: &SectionEntry, entry: &SectionEntry) -> Result<()> {
    if (previous.tag, previous.index) >= (entry.tag, entry.index) {
        return Err(Error::invalid(
            path,
            "section table",
            format!(
                "{} after {}: sections are in ascending (tag, index) order",
                entry.describe(),
                previous.describe()
            ),
        ));
    }
    Ok(())
}

/// Checks that the bytes in `from..to` (under 64 of them) are zero.
fn check_padding(
    path: &Path,
    source: &dyn Source,
    from: u64,
    to: u64,
    file_len: u64,
) -> Result<()> {
    let mut padding = [0u8; ALIGN as usize];
    let len = to.saturating_sub(from).min(ALIGN) as usize;
    read_at(path, source, &mut padding[..len], from, file_len)?;
    if padding[..len].iter().any(|&b| b != 0) {
        return Err(Error::BadPadding {
            path: path.to_path_buf(),
            offset: from,
        });
    }
    Ok(())
}

/// Reads the section `entry` of `source` into `parts` (whose lengths must add up to the
/// section's length; the caller checked) and verifies its checksum.
pub fn read_section(
    path: &Path,
    source: &dyn Source,
    entry: &SectionEntry,
    parts: &mut [&mut [u8]],
) -> Result<()> {
    let total: u64 = parts.iter().map(|p| p.len() as u64).sum();
    if total != entry.len {
        return Err(Error::invalid(
            path,
            "section length",
            format!(
                "{} is {} bytes, expected {total}",
                entry.describe(),
                entry.len
            ),
        ));
    }
    let mut hasher = Xxh3::new();
    let mut offset = entry.offset;
    for part in parts.iter_mut() {
        read_at(path, source, part, offset, entry.offset + entry.len)?;
        hasher.update(part);
        offset += part.len() as u64;
    }
    let computed = hasher.digest();
    if computed != entry.checksum {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            section: entry.describe(),
            stored: entry.checksum,
            computed,
        });
    }
    Ok(())
}

/// Reads a whole section into a new buffer (for the small sections).
pub fn read_section_vec(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<Vec<u8>> {
    // `read_directory` checked that the section lies inside the source, so its length is real.
    let mut bytes = vec![
        0u8;
        usize::try_from(entry.len).map_err(|_| Error::invalid(
            path,
            "section length",
            entry.len
        ))?
    ];
    read_section(path, source, entry, &mut [&mut bytes])?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::super::writing::tests::sample;
    use super::*;

    #[test]
    fn every_single_bit_flip_and_truncation_is_an_error() {
        let bytes = sample();
        let reads = |image: &[u8]| -> Result<()> {
            let directory = read_directory(Path::new("x"), &image)?;
            for entry in &directory.sections {
                read_section_vec(Path::new("x"), &image, entry)?;
            }
            Ok(())
        };
        reads(&bytes).unwrap();
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut image = bytes.clone();
                image[at] ^= 1 << bit;
                assert!(
                    reads(&image).is_err(),
                    "flip of bit {bit} at {at} went unnoticed"
                );
            }
        }
        for len in 0..bytes.len() {
            assert!(
                reads(&bytes[..len]).is_err(),
                "truncation to {len} went unnoticed"
            );
        }
    }

    #[test]
    fn first_format_files_are_recognized() {
        let mut v1 = MAGIC.to_vec();
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.resize(200, 0);
        assert!(matches!(
            read_directory(Path::new("x"), &&v1[..]),
            Err(Error::OldFormat {
                what: "a filter file",
                ..
            })
        ));
        let mut verify = OLD_VERIFY_MAGIC.to_vec();
        verify.resize(48, 0);
        assert!(matches!(
            read_directory(Path::new("x"), &&verify[..]),
            Err(Error::OldFormat { .. })
        ));
        assert!(matches!(
            read_directory(Path::new("x"), &&OLD_CABF_MAGIC[..]),
            Err(Error::OldFormat { .. })
        ));
        let mut v9 = MAGIC.to_vec();
        v9.extend_from_slice(&9u32.to_le_bytes());
        v9.resize(64, 0);
        assert!(matches!(
            read_directory(Path::new("x"), &&v9[..]),
            Err(Error::Version { found: 9, .. })
        ));
        let error = read_directory(Path::new("x"), &&b"url,isMalicious\n"[..]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("not a phishbloom blocklist file"),
            "{error}"
        );
    }
}
