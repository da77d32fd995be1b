//! The container of every blocklist file: a 64-byte header, a table of sections each with its
//! own xxh3-64 checksum, and the sections, each starting on a 64-byte boundary. What the
//! sections hold is [`crate::sections`]' and [`Blocklist`](crate::Blocklist)'s business; this
//! module only lays them out, checks them and reads them back. `docs/FORMAT.md` specifies every
//! byte.
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
//!
//! Writing a file is `writing`'s job (planning the layout, then writing it); reading and
//! checking one is `reading`'s.

use xxhash_rust::xxh3::xxh3_64;

use crate::bytes::ByteReader;

mod reading;
mod writing;

pub use reading::{read_directory, read_section, read_section_vec};
pub use writing::{encode, plan, plan_spilled, write, write_spilled, SectionData, SpilledSection};

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
    /// A compact list's table ([`crate::resolve::CompactTable`]).
    pub const COMPACT: u16 = 13;
    /// The never set: fingerprints no hit is confirmed for (`build --never`).
    pub const NEVER: u16 = 14;
    /// A keyword list's phrase lengths in tokens (what a scan probes).
    pub const KEYWORD_LENGTHS: u16 = 0x10;
    /// A keyword list's exact keywords, sorted by phrase hash, read on hits.
    pub const KEYWORD_INDEX: u16 = 0x11;
    /// A near-duplicate list's fingerprinting parameters, permuted tables and exact hashes.
    pub const NEAR_TABLES: u16 = 0x12;
    /// A near-duplicate list's document names and categories.
    pub const NEAR_DOCS: u16 = 0x13;
    /// A MinHash near-duplicate list's sketches, posting tables and boilerplate shingles.
    pub const NEAR_SKETCHES: u16 = 0x14;
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
    /// Optional: a compact list's gate of its entries' hosts alone (a split-block filter).
    pub const HOSTS_GATE: u16 = 0x8003;
    /// Optional: the fingerprints of a list's domain entries of a single label, which alone
    /// confirm a top-label hit ([`crate::resolve::Resolver::tops`]); without it, no top label
    /// is probed.
    pub const TOPS: u16 = 0x8004;
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
        tag::COMPACT => "compact",
        tag::NEVER => "never-warn",
        tag::TOPS => "top labels",
        tag::KEYWORD_LENGTHS => "phrase lengths",
        tag::KEYWORD_INDEX => "keyword index",
        tag::NEAR_TABLES => "near tables",
        tag::NEAR_DOCS => "near documents",
        tag::NEAR_SKETCHES => "near sketches",
        // Two layouts of one thing: `info` shows the layout on the gate's own line.
        tag::HOST_GATE | tag::SPLIT_HOST_GATE | tag::HOSTS_GATE => "host gate",
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
