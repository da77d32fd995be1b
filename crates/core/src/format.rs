//! The container of every blocklist file: a 64-byte header, a table of sections each with its
//! own xxh3-64 checksum, and the sections, each starting on a 64-byte boundary. What the
//! sections hold is [`crate::sections`]' and [`crate::list`]'s business; this module only lays them out, checks
//! them and reads them back. `docs/FORMAT.md` specifies every byte.
//!
//! ```text
//! header   magic 89 'P' 'H' 'B' 'L' 'O' 'M' 0a · version u32 · kind u16 · reserved u16
//!          section count u32 · reserved u32 · file length u64 · file checksum u64
//!          reserved 16 bytes · header checksum u64            (64 bytes)
//! table    count × { tag u16 · index u16 · reserved u32 · offset u64 · length u64 ·
//!                    checksum u64 }                           (32 bytes each)
//! sections zero padding to a multiple of 64, then each section, padded the same way
//! ```
//!
//! The file checksum is the xxh3-64 of the table, which holds every section's checksum, so one
//! number identifies the whole content (an HTTP `ETag`, a Redis chunk set). Reading checks, in
//! order: magic (recognizing the first format's files), version, header checksum, file length,
//! table checksum, section placement and zero padding; each section's checksum when it is read.
//! Nothing here panics or allocates more than the file's real length, whatever the bytes are.

use std::io::Write;
use std::path::Path;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};

/// The first eight bytes of every blocklist file (PNG-style: a high-bit byte and a newline, so
/// 7-bit or line-ending-mangling copies fail the magic check).
pub const MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'L', b'O', b'M', 0x0a];

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 3;

/// The oldest format version this build reads: version 2 differs only in the set fingerprint's
/// definition (Σ xxh3-128 of entry keys), which a reader recomputes from the verification
/// section or marks approximate (docs/FORMAT.md, "Compatibility policy").
pub const OLDEST_READ: u32 = 2;

/// Length of the header.
pub const HEADER_LEN: usize = 64;

/// Length of one section-table entry.
pub const ENTRY_LEN: usize = 32;

/// Every section starts at a multiple of this (a cache line: filter bits are used in place).
pub const ALIGN: u64 = 64;

/// The most sections a file may declare: far above what any kind writes (CaBF writes 11), and
/// low enough that a hostile count cannot make the reader allocate a large table.
pub const MAX_SECTIONS: u32 = 1024;

/// Magic bytes of the first format's fingerprint table (`FILE.verify`).
const OLD_VERIFY_MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'V', b'F', b'Y', 0x0a];
/// Magic bytes of the first format's CaBF file.
const OLD_CABF_MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'C', b'A', b'B', b'F'];

/// Section tags. Tags below [`OPTIONAL_TAGS`] must be understood by a reader; tags at or above
/// it may be skipped by a reader that does not know them (the compatibility policy in
/// docs/FORMAT.md).
pub mod tag {
    /// List name, version, creation time, key scheme, entry count, set fingerprint.
    pub const META: u16 = 1;
    /// A Bloom filter: its parameters, then its bits.
    pub const FILTER: u16 = 2;
    /// The entries' sorted 64-bit fingerprints, confirming filter hits.
    pub const VERIFY: u16 = 3;
    /// CaBF's split and component-filter count.
    pub const CABF: u16 = 4;
    /// The list's categories: names and entry counts.
    pub const CATEGORIES: u16 = 5;
    /// The category set of each fingerprint of the verification section.
    pub const CATEGORY_SETS: u16 = 6;
    /// Exception entries, exact.
    pub const EXCEPTIONS: u16 = 7;
    /// A cuckoo filter: its parameters, then its packed fingerprint slots.
    pub const CUCKOO: u16 = 8;
    /// A counting Bloom filter: its parameters, then its 4-bit counters.
    pub const COUNTERS: u16 = 9;
    /// A growing list's growth factors (present only in lists that grow).
    pub const GROWTH: u16 = 10;
    /// A patch: Golomb-coded prefixes of fingerprints a delta added to a Bloom list.
    pub const PATCH: u16 = 11;
    /// A static patch: a ribbon filter of fingerprints a compact delta added to a Bloom list.
    pub const STATIC_PATCH: u16 = 12;
    /// A keyword list's phrase lengths in tokens (what a scan probes).
    pub const KEYWORD_LENGTHS: u16 = 0x10;
    /// A keyword list's exact keywords, sorted by phrase hash, read on hits.
    pub const KEYWORD_INDEX: u16 = 0x11;
    /// A near-duplicate list's fingerprinting parameters, permuted tables and exact hashes.
    pub const NEAR_TABLES: u16 = 0x12;
    /// A near-duplicate list's document names and categories.
    pub const NEAR_DOCS: u16 = 0x13;
    /// Tags from here on are optional.
    pub const OPTIONAL_TAGS: u16 = 0x8000;
    /// A list of URL entries' host gate: a blocked Bloom filter of its entries' hosts
    /// ([`crate::engine::gate::HostGate`]), optional; written before [`SPLIT_HOST_GATE`].
    pub const HOST_GATE: u16 = 0x8000;
    /// A keyword list's phrase gate: a blocked Bloom filter of its keywords' two-token
    /// prefixes ([`crate::keywords::gate::PhraseGate`]), optional.
    pub const PHRASE_GATE: u16 = 0x8001;
    /// A list of URL entries' host gate in the split-block layout (what this version writes;
    /// [`HOST_GATE`] is the blocked one files written before hold), optional.
    pub const SPLIT_HOST_GATE: u16 = 0x8002;
}

pub use tag::OPTIONAL_TAGS;

/// The name of a section tag, as messages and `info` print it.
pub fn tag_name(tag: u16) -> &'static str {
    match tag {
        tag::META => "metadata",
        tag::FILTER => "filter",
        tag::VERIFY => "verification",
        tag::CABF => "CaBF",
        tag::CATEGORIES => "categories",
        tag::CATEGORY_SETS => "category sets",
        tag::EXCEPTIONS => "exceptions",
        tag::CUCKOO => "cuckoo",
        tag::COUNTERS => "counting",
        tag::GROWTH => "growth",
        tag::PATCH => "patch",
        tag::STATIC_PATCH => "static patch",
        tag::KEYWORD_LENGTHS => "phrase lengths",
        tag::KEYWORD_INDEX => "keyword index",
        tag::NEAR_TABLES => "near tables",
        tag::NEAR_DOCS => "near documents",
        // Two layouts of one thing: `info` shows the layout on the gate's own line.
        tag::HOST_GATE | tag::SPLIT_HOST_GATE => "host gate",
        tag::PHRASE_GATE => "phrase gate",
        t if t >= OPTIONAL_TAGS => "optional",
        _ => "unknown",
    }
}

/// One entry of the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SectionEntry {
    /// What the section holds ([`tag`]).
    pub tag: u16,
    /// Which one, when a kind stores several of a tag (CaBF's filters: 0, 1, …).
    pub index: u16,
    /// Byte offset of the section from the start of the file (a multiple of [`ALIGN`]).
    pub offset: u64,
    /// Length of the section in bytes (padding excluded).
    pub len: u64,
    /// xxh3-64 (seed 0) of the section's bytes.
    pub checksum: u64,
}

impl SectionEntry {
    /// `filter section 3`, `metadata section`: how messages name the section.
    pub fn describe(&self) -> String {
        match (self.tag, self.index) {
            (tag::FILTER | tag::CUCKOO | tag::COUNTERS | tag::PATCH | tag::STATIC_PATCH, index) => {
                format!("{} section {index}", tag_name(self.tag))
            }
            (tag, 0) => format!("{} section", tag_name(tag)),
            (tag, index) => format!("{} section {index}", tag_name(tag)),
        }
    }
}

/// The header and section table of a file: everything but the sections' contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directory {
    /// The format version the file was written in.
    pub version: u32,
    /// The blocklist kind code (see [`crate::Kind`]).
    pub kind: u16,
    /// Total length of the file.
    pub file_len: u64,
    /// xxh3-64 of the section table: identifies the whole content.
    pub checksum: u64,
    /// The sections, in file order.
    pub sections: Vec<SectionEntry>,
}

impl Directory {
    /// The section with `tag` and `index`, if present.
    pub fn find(&self, tag: u16, index: u16) -> Option<&SectionEntry> {
        self.sections
            .iter()
            .find(|s| s.tag == tag && s.index == index)
    }
}

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
fn align_up(offset: u64) -> Option<u64> {
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

/// Where a file's bytes are read from: a byte slice here, or an open file (positioned reads, so
/// nothing is mapped and a file changed underneath cannot fault the reader), which
/// `phishbloom-blocklist` provides: this crate reads no file itself.
pub trait Source: std::fmt::Debug {
    /// Length in bytes.
    fn source_len(&self) -> std::io::Result<u64>;
    /// Fills `buf` from `offset`; an `UnexpectedEof` error if the source is shorter.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

/// A source shared by the structures that read from it on demand (a keyword index's blocks).
pub type SharedSource = std::sync::Arc<dyn Source + Send + Sync>;

impl Source for Vec<u8> {
    fn source_len(&self) -> std::io::Result<u64> {
        self.as_slice().source_len()
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        Source::read_exact_at(&self.as_slice(), buf, offset)
    }
}

impl Source for &[u8] {
    fn source_len(&self) -> std::io::Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = usize::try_from(offset).ok();
        let end = start.and_then(|s| s.checked_add(buf.len()));
        match start.zip(end).and_then(|(s, e)| self.get(s..e)) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

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
    let mut header = [0u8; HEADER_LEN];
    let available = file_len.min(HEADER_LEN as u64) as usize;
    read_at(path, source, &mut header[..available], 0, file_len)?;
    let magic = &header[..available.min(8)];
    if magic != &MAGIC[..magic.len()] {
        return Err(match () {
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
        });
    }
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
    if count > MAX_SECTIONS {
        return Err(Error::invalid(path, "section count", count));
    }
    let table_len = count as usize * ENTRY_LEN;
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
    if computed != checksum {
        return Err(Error::ChecksumMismatch {
            path: path.to_path_buf(),
            section: "section table".into(),
            stored: checksum,
            computed,
        });
    }
    let mut reader = ByteReader::new(&table);
    let mut sections = Vec::with_capacity(count as usize);
    let mut end = table_end;
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
        let section_end = offset.checked_add(len).filter(|&e| e <= file_len);
        let Some(section_end) = section_end else {
            return Err(Error::Truncated {
                path: path.to_path_buf(),
                expected: offset.saturating_add(len),
                got: file_len,
            });
        };
        check_padding(path, source, end, offset, file_len)?;
        if let Some(previous) = sections.last() {
            let previous: &SectionEntry = previous;
            if (previous.tag, previous.index) >= (tag, index) {
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
        }
        sections.push(entry);
        end = section_end;
    }
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
        version,
        kind,
        file_len,
        checksum,
        sections,
    })
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

/// Recomputes every checksum of a file image in place — each section's (where the table's
/// offset and length lie inside the image), the table's and the header's — so that an edited
/// image reaches the field checks instead of stopping at a checksum. For tests and fuzzing: it
/// makes deliberately damaged files that only the field checks can catch. Never panics.
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let count =
        u32::from_le_bytes(bytes[16..20].try_into().unwrap_or_default()).min(MAX_SECTIONS) as usize;
    let table_end = (HEADER_LEN + count * ENTRY_LEN).min(bytes.len());
    let entries = (table_end - HEADER_LEN) / ENTRY_LEN;
    for i in 0..entries {
        let at = HEADER_LEN + i * ENTRY_LEN;
        let mut reader = ByteReader::new(&bytes[at + 8..at + 24]);
        let (offset, len) = (
            reader.u64().unwrap_or(u64::MAX),
            reader.u64().unwrap_or(u64::MAX),
        );
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= bytes.len());
        if let Some(range) = range {
            let checksum = xxh3_64(&bytes[range]);
            bytes[at + 24..at + 32].copy_from_slice(&checksum.to_le_bytes());
        }
    }
    let table = xxh3_64(&bytes[HEADER_LEN..HEADER_LEN + entries * ENTRY_LEN]);
    bytes[32..40].copy_from_slice(&table.to_le_bytes());
    let header = xxh3_64(&bytes[..HEADER_LEN - 8]);
    bytes[HEADER_LEN - 8..HEADER_LEN].copy_from_slice(&header.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Section `tag`, index 0, of `parts`.
    fn section<'a>(tag: u16, parts: Vec<&'a [u8]>) -> SectionData<'a> {
        SectionData {
            tag,
            index: 0,
            parts,
        }
    }

    fn sample() -> Vec<u8> {
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
