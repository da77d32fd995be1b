//! Keyword blocklists: keywords and phrases (any language) in one Bloom filter, probed with the
//! n-grams of a text ([`crate::scan`]), plus the two sections that only this kind has.
//!
//! - **Phrase lengths** (tag `0x10`): the phrase lengths, in tokens, that occur in the list,
//!   with the number of keywords of each; a scan probes only those lengths.
//! - **Keyword index** (tag `0x11`, with `build --verify`): the normalized keywords sorted by
//!   their phrase hash, in checksummed blocks of about [`INDEX_BLOCK_BYTES`], behind a small
//!   directory. Opening reads only the directory (32 bytes per block); a Bloom hit reads the one
//!   block its hash falls in with a positioned read and compares the exact phrase, so 10⁸
//!   keywords never need to be in memory, and a non-member costs no read at all. A block whose
//!   checksum does not match (the file was rewritten in place under an open list) is an error,
//!   never a wrong answer; a file replaced by rename keeps answering from the old inode.
//! - **Phrase gate** (tag `0x8001`, optional): the two-token prefixes of the keywords in a small
//!   Bloom filter ([`gate`]), so that a scan probes the longer phrases only at positions whose
//!   first two tokens begin some keyword.
//!
//! Keywords are normalized and tokenized by `phishbloom_text` (NFKC, simple case folding, UAX
//! #29 words, one token per character in scripts written without spaces) and stored as their
//! tokens joined by one space; the filter holds [`phishbloom_text::phrase`]'s phrase hash.
//! Building a keyword list streams through temporary files: that is `phishbloom-blocklist`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash};
use phishbloom_text::phrase::{normalize_phrase, normalized_phrase_hash, MAX_PHRASE_TOKENS};
use phishbloom_text::tokens::Tokens;
use xxhash_rust::xxh3::xxh3_64;

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::format::{self, tag, Directory, SectionEntry, SharedSource, Source, SpilledSection};
use crate::sections::Meta;

pub mod gate;

use gate::PhraseGate;

/// Tokens of a typical document that `--fpp` is stated for, unless told otherwise: the rate is
/// per document of this many tokens, probed at every recorded phrase length. `phishbloom
/// report`'s keyword section measures its texts: the generated e-mails have a median of about
/// 380 tokens (90th percentile about 740), the Debian fortunes 20 (90th percentile 86); 400
/// covers the median e-mail, and a longer document sees `1 − (1 − f)^probes`.
pub const DEFAULT_DOC_TOKENS: u32 = 400;

/// The probes per document a list with `lengths` distinct phrase lengths is sized for by default.
pub fn default_probes_per_doc(lengths: usize) -> u32 {
    DEFAULT_DOC_TOKENS.saturating_mul(lengths.max(1) as u32)
}

/// Target size of a keyword-index block: one page, one positioned read per confirmed hit.
pub const INDEX_BLOCK_BYTES: usize = 4096;

/// The phrase lengths of a list: `(tokens, keywords of that length)`, ascending by length.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PhraseLengths(pub Vec<(u32, u64)>);

impl PhraseLengths {
    /// The lengths as a bit mask (bit `L` set when phrases of `L` tokens occur).
    pub fn mask(&self) -> u64 {
        self.0.iter().fold(0, |mask, &(len, _)| mask | 1 << len)
    }

    /// The longest phrase, in tokens (0 for an empty list).
    pub fn max(&self) -> usize {
        self.0.last().map_or(0, |&(len, _)| len as usize)
    }

    /// Number of distinct lengths.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no length is recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Encodes the phrase-lengths section: count u32, reserved u32, then per length
/// `{tokens u32, reserved u32, keywords u64}`.
pub fn encode_lengths(lengths: &PhraseLengths) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 16 * lengths.0.len());
    out.put_u32(lengths.0.len() as u32);
    out.put_u32(0);
    for &(tokens, keywords) in &lengths.0 {
        out.put_u32(tokens);
        out.put_u32(0);
        out.put_u64(keywords);
    }
    out
}

/// Decodes the phrase-lengths section, checking that lengths are in `1..=32`, strictly
/// ascending, and that the section has exactly the declared entries.
pub fn decode_lengths(path: &Path, bytes: &[u8]) -> Result<PhraseLengths> {
    let bad = |value: String| Error::invalid(path, "phrase lengths", value);
    let mut reader = ByteReader::new(bytes);
    let (Some(count), Some(0)) = (reader.u32(), reader.u32()) else {
        return Err(bad(
            "header shorter than 8 bytes or reserved bytes not zero".into(),
        ));
    };
    if reader.rest().len() != count as usize * 16 || count == 0 {
        return Err(bad(format!(
            "{count} lengths in {} bytes",
            reader.rest().len()
        )));
    }
    let mut lengths = Vec::with_capacity(count as usize);
    for _ in 0..count {
        // The length check above guarantees 16 bytes per entry.
        let (tokens, reserved, keywords) = (
            reader.u32().unwrap_or_default(),
            reader.u32().unwrap_or(1),
            reader.u64().unwrap_or_default(),
        );
        let previous = lengths.last().map_or(0, |&(len, _)| len);
        if reserved != 0 || tokens <= previous || tokens as usize > MAX_PHRASE_TOKENS {
            return Err(bad(format!(
                "length {tokens} after {previous} (lengths are 1 to {MAX_PHRASE_TOKENS}, \
                 ascending)"
            )));
        }
        lengths.push((tokens, keywords));
    }
    Ok(PhraseLengths(lengths))
}

/// Length of the keyword index's header.
const INDEX_HEADER: usize = 64;
/// Length of one directory entry.
const INDEX_ENTRY: usize = 32;

/// One block of the keyword index, as its directory lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IndexBlock {
    /// The `h1` of the block's first keyword (blocks never split keywords of equal `h1`).
    first_h1: u64,
    /// Offset of the block from the start of the section.
    offset: u64,
    /// Bytes in the block.
    len: u32,
    /// Keywords in the block.
    entries: u32,
    /// xxh3-64 of the block's bytes.
    checksum: u64,
}

/// Where the index's blocks are read from on a hit.
#[derive(Clone, Debug)]
enum IndexData {
    /// Not attached yet (a blocklist being read; whoever read it attaches the source).
    Detached,
    /// The whole section in memory (a list read from bytes or a pipe).
    Bytes(Arc<Vec<u8>>),
    /// The open file (or any shared source), and the section's offset in it.
    Shared(SharedSource, u64),
    /// A list just built: the header and directory in memory, the blocks in an unnamed
    /// temporary file (removed when the last handle closes), where the block at section offset
    /// `o` starts at `o − head.len()`.
    Spilled {
        /// Header and directory.
        head: Arc<Vec<u8>>,
        /// The blocks.
        blocks: SharedSource,
    },
}

/// The exact keywords behind the filter, read only on hits.
#[derive(Clone, Debug)]
pub struct KeywordIndex {
    path: PathBuf,
    entries: u64,
    section_len: u64,
    blocks: Vec<IndexBlock>,
    data: IndexData,
}

/// What `info` shows about a keyword index.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IndexInfo {
    /// Keywords in the index.
    pub keywords: u64,
    /// Blocks.
    pub blocks: u64,
    /// Bytes of the section on disk.
    pub bytes: u64,
    /// Bytes held in memory while scanning (the block directory).
    pub resident_bytes: u64,
}

impl KeywordIndex {
    /// Whether the normalized `phrase` (whose hash is `hash`) is a keyword of the list: reads
    /// the one block `hash.h1` falls in and compares exactly. An unreadable or changed block is
    /// an error naming the file.
    pub fn contains(&self, phrase: &str, hash: KeyHash) -> Result<bool> {
        let at = self.blocks.partition_point(|b| b.first_h1 <= hash.h1);
        let Some(block) = at.checked_sub(1).map(|i| self.blocks[i]) else {
            return Ok(false);
        };
        let mut buffer = vec![0u8; block.len as usize];
        let bytes = self.block_bytes(&block, &mut buffer)?;
        let mut found = false;
        self.each_keyword(&block, bytes, |keyword| {
            found |= keyword == phrase.as_bytes()
        })?;
        Ok(found)
    }

    /// Reads every block and checks its checksum and its keywords' framing (`info` verifies
    /// the whole file with it; a check or scan reads only the blocks it needs).
    pub fn verify(&self) -> Result<()> {
        let mut buffer = Vec::new();
        for block in &self.blocks {
            buffer.resize(block.len as usize, 0);
            let bytes = self.block_bytes(block, &mut buffer)?;
            self.each_keyword(block, bytes, |_| {})?;
        }
        Ok(())
    }

    /// Calls `each` with every keyword of `block` (its `bytes`); a truncated block is an error.
    fn each_keyword(
        &self,
        block: &IndexBlock,
        bytes: &[u8],
        mut each: impl FnMut(&[u8]),
    ) -> Result<()> {
        let mut reader = ByteReader::new(bytes);
        for _ in 0..block.entries {
            let keyword = reader
                .u16()
                .and_then(|len| reader.take(len as usize))
                .ok_or_else(|| Error::invalid(&self.path, "keyword index block", "truncated"))?;
            each(keyword);
        }
        Ok(())
    }

    /// The bytes of `block` (read into `buffer`, of its length, when they are not in memory),
    /// their checksum checked.
    fn block_bytes<'a>(&'a self, block: &IndexBlock, buffer: &'a mut [u8]) -> Result<&'a [u8]> {
        let read = |source: &SharedSource, at: u64, buffer: &mut [u8]| {
            source
                .read_exact_at(buffer, at)
                .map_err(|e| Error::read(&self.path, "read the keyword index of", e))
        };
        let bytes: &[u8] = match &self.data {
            IndexData::Bytes(section) => {
                // The block lies inside the section (checked when the directory was read).
                let start = block.offset as usize;
                &section[start..start + block.len as usize]
            }
            IndexData::Shared(file, offset) => {
                read(file, offset + block.offset, buffer)?;
                buffer
            }
            IndexData::Spilled { head, blocks } => {
                // Blocks lie after the header and directory (checked when it was read).
                read(blocks, block.offset - head.len() as u64, buffer)?;
                buffer
            }
            IndexData::Detached => {
                return Err(Error::invalid(
                    &self.path,
                    "keyword index",
                    "not attached to its file",
                ))
            }
        };
        let computed = xxh3_64(bytes);
        if computed != block.checksum {
            return Err(Error::ChecksumMismatch {
                path: self.path.clone(),
                section: format!("keyword index block at offset {}", block.offset),
                stored: block.checksum,
                computed,
            });
        }
        Ok(bytes)
    }

    /// The index just written by an [`IndexWriter`]: its header and directory `head` in
    /// memory, its blocks (`blocks_len` bytes) in `blocks`; `path` names it in errors.
    pub fn spilled(
        path: &Path,
        head: Vec<u8>,
        blocks: SharedSource,
        blocks_len: u64,
    ) -> Result<Self> {
        let entry = SectionEntry {
            tag: tag::KEYWORD_INDEX,
            index: 0,
            offset: 0,
            len: head.len() as u64 + blocks_len,
            checksum: 0,
        };
        // Reading the directory touches only the head.
        let mut index = KeywordIndex::read(path, &head.as_slice(), &entry)?;
        index.data = IndexData::Spilled {
            head: Arc::new(head),
            blocks,
        };
        Ok(index)
    }

    /// The facts `info` shows.
    pub fn info(&self) -> IndexInfo {
        IndexInfo {
            keywords: self.entries,
            blocks: self.blocks.len() as u64,
            bytes: self.section_len,
            resident_bytes: (self.blocks.len() * std::mem::size_of::<IndexBlock>()) as u64,
        }
    }

    /// The section as a spilled section of a file being written: read from where it lies,
    /// never whole into memory.
    fn spilled_section(&self) -> Option<SpilledSection<'_>> {
        let parts: Vec<(&dyn Source, u64, u64)> = match &self.data {
            IndexData::Bytes(section) => vec![(&**section, 0, self.section_len)],
            IndexData::Shared(file, offset) => {
                vec![(&**file as &dyn Source, *offset, self.section_len)]
            }
            IndexData::Spilled { head, blocks } => vec![
                (&**head, 0, head.len() as u64),
                (&**blocks, 0, self.section_len - head.len() as u64),
            ],
            IndexData::Detached => return None,
        };
        Some(SpilledSection {
            tag: tag::KEYWORD_INDEX,
            index: 0,
            parts,
        })
    }

    /// Reads the header and directory of the index section `entry` (checked by their own
    /// checksum; the blocks are checked when read).
    fn read(path: &Path, source: &dyn Source, entry: &SectionEntry) -> Result<Self> {
        let bad = |value: String| Error::invalid(path, "keyword index", value);
        if entry.len < INDEX_HEADER as u64 {
            return Err(bad(format!("section of {} bytes", entry.len)));
        }
        let mut header = [0u8; INDEX_HEADER];
        source
            .read_exact_at(&mut header, entry.offset)
            .map_err(|e| Error::read(path, "read", e))?;
        let mut reader = ByteReader::new(&header);
        // The header has 64 bytes: every read below succeeds.
        let entries = reader.u64().unwrap_or_default();
        let count = reader.u64().unwrap_or(u64::MAX);
        let stored = reader.u64().unwrap_or_default();
        if reader.rest().iter().any(|&b| b != 0) {
            return Err(bad("reserved header bytes not zero".into()));
        }
        let directory_len = count
            .checked_mul(INDEX_ENTRY as u64)
            .filter(|&len| len <= entry.len - INDEX_HEADER as u64)
            .ok_or_else(|| bad(format!("{count} blocks in a {}-byte section", entry.len)))?;
        let mut directory = vec![0u8; directory_len as usize];
        source
            .read_exact_at(&mut directory, entry.offset + INDEX_HEADER as u64)
            .map_err(|e| Error::read(path, "read", e))?;
        let computed = directory_checksum(&header, &directory);
        if computed != stored {
            return Err(Error::ChecksumMismatch {
                path: path.to_path_buf(),
                section: "keyword index directory".into(),
                stored,
                computed,
            });
        }
        let mut reader = ByteReader::new(&directory);
        let mut blocks = Vec::with_capacity(count as usize);
        let mut next = INDEX_HEADER as u64 + directory_len;
        let mut keywords = 0u64;
        for _ in 0..count {
            // The directory holds exactly `count` entries of 32 bytes.
            let block = IndexBlock {
                first_h1: reader.u64().unwrap_or_default(),
                offset: reader.u64().unwrap_or_default(),
                len: reader.u32().unwrap_or_default(),
                entries: reader.u32().unwrap_or_default(),
                checksum: reader.u64().unwrap_or_default(),
            };
            let ordered = blocks
                .last()
                .is_none_or(|b: &IndexBlock| b.first_h1 < block.first_h1);
            if block.offset != next || !ordered || block.entries == 0 {
                return Err(bad(format!(
                    "block {} at offset {} (expected {next}, ascending first hashes)",
                    blocks.len(),
                    block.offset
                )));
            }
            next += u64::from(block.len);
            keywords += u64::from(block.entries);
            blocks.push(block);
        }
        if next != entry.len || keywords != entries {
            return Err(bad(format!(
                "blocks end at {next} of {} bytes, hold {keywords} of {entries} keywords",
                entry.len
            )));
        }
        Ok(KeywordIndex {
            path: path.to_path_buf(),
            entries,
            section_len: entry.len,
            blocks,
            data: IndexData::Detached,
        })
    }
}

/// xxh3-64 of the index header's first 16 bytes and the directory: what the header's third
/// field stores.
fn directory_checksum(header: &[u8; INDEX_HEADER], directory: &[u8]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&header[..16]);
    hasher.update(directory);
    hasher.digest()
}

/// Writes the keyword index: entries arrive sorted by hash; blocks are cut at
/// [`INDEX_BLOCK_BYTES`], never between two keywords of equal `h1`, and go to `out` as they
/// are cut, so only the current block and the directory are in memory.
pub struct IndexWriter<W: std::io::Write> {
    out: W,
    blocks: Vec<IndexBlock>,
    /// The current block.
    block: Vec<u8>,
    /// Bytes of blocks written before the current one.
    written: u64,
    block_entries: u32,
    last_h1: Option<u64>,
    entries: u64,
}

impl<W: std::io::Write> IndexWriter<W> {
    /// A writer whose blocks go to `out`.
    pub fn new(out: W) -> Self {
        IndexWriter {
            out,
            blocks: Vec::new(),
            block: Vec::with_capacity(2 * INDEX_BLOCK_BYTES),
            written: 0,
            block_entries: 0,
            last_h1: None,
            entries: 0,
        }
    }

    /// Appends a keyword (in ascending hash order).
    pub fn push(&mut self, hash: KeyHash, keyword: &[u8]) -> std::io::Result<()> {
        let full = self.block.len() >= INDEX_BLOCK_BYTES;
        if self.block_entries > 0 && full && self.last_h1 != Some(hash.h1) {
            self.cut()?;
        }
        if self.block_entries == 0 {
            self.blocks.push(IndexBlock {
                first_h1: hash.h1,
                offset: self.written,
                len: 0,
                entries: 0,
                checksum: 0,
            });
        }
        // Keywords are at most u16::MAX bytes: longer normalized lines were refused when read.
        self.block.put_u16(keyword.len() as u16);
        self.block.extend_from_slice(keyword);
        self.block_entries += 1;
        self.last_h1 = Some(hash.h1);
        self.entries += 1;
        Ok(())
    }

    fn cut(&mut self) -> std::io::Result<()> {
        if let Some(block) = self.blocks.last_mut() {
            block.len = self.block.len() as u32;
            block.entries = self.block_entries;
            block.checksum = xxh3_64(&self.block);
        }
        self.out.write_all(&self.block)?;
        self.written += self.block.len() as u64;
        self.block.clear();
        self.block_entries = 0;
        Ok(())
    }

    /// The header and directory (the blocks went to the writer, which is returned).
    /// The header and directory, and the output the blocks went to.
    pub fn finish(mut self) -> std::io::Result<(Vec<u8>, W)> {
        if self.block_entries > 0 {
            self.cut()?;
        }
        let base = (INDEX_HEADER + INDEX_ENTRY * self.blocks.len()) as u64;
        let mut directory = Vec::with_capacity(INDEX_ENTRY * self.blocks.len());
        for block in &self.blocks {
            directory.put_u64(block.first_h1);
            directory.put_u64(base + block.offset);
            directory.put_u32(block.len);
            directory.put_u32(block.entries);
            directory.put_u64(block.checksum);
        }
        let mut header = [0u8; INDEX_HEADER];
        header[..8].copy_from_slice(&self.entries.to_le_bytes());
        header[8..16].copy_from_slice(&(self.blocks.len() as u64).to_le_bytes());
        let checksum = directory_checksum(&header, &directory);
        header[16..24].copy_from_slice(&checksum.to_le_bytes());
        let mut head = header.to_vec();
        head.extend_from_slice(&directory);
        Ok((head, self.out))
    }
}

/// A keyword list: the filter of phrase hashes, the phrase lengths, the optional index.
#[derive(Clone, Debug)]
pub struct KeywordEngine {
    filter: AnyFilter,
    lengths: PhraseLengths,
    index: Option<KeywordIndex>,
    gate: Option<PhraseGate>,
}

impl KeywordEngine {
    /// The Bloom filter of phrase hashes.
    pub fn filter(&self) -> &AnyFilter {
        &self.filter
    }

    /// The phrase lengths that occur in the list.
    pub fn lengths(&self) -> &PhraseLengths {
        &self.lengths
    }

    /// The exact keyword index, if the list has one.
    pub fn index(&self) -> Option<&KeywordIndex> {
        self.index.as_ref()
    }

    /// The phrase gate, if the list has one.
    pub fn gate(&self) -> Option<&PhraseGate> {
        self.gate.as_ref()
    }

    /// The list with this phrase gate (or none). The gate must hold the two-token prefix of
    /// every keyword of the list ([`gate`]).
    pub fn with_gate(mut self, gate: Option<PhraseGate>) -> Self {
        self.gate = gate;
        self
    }

    /// Whether a whole line is a keyword of the list (`check` on a keyword list): its
    /// normalized phrase is probed, and confirmed with the index when there is one. A
    /// confirmation that cannot be read counts as a hit, as it would without an index.
    pub fn check_phrase(&self, item: &[u8]) -> bool {
        let mut phrase = String::new();
        let mut tokens = Tokens::new();
        let text = String::from_utf8_lossy(item);
        match normalize_phrase(&text, &mut tokens, &mut phrase) {
            Ok(count) if count > 0 => {
                let hash = normalized_phrase_hash(&phrase);
                self.filter.contains_hash(hash)
                    && self
                        .index
                        .as_ref()
                        .is_none_or(|index| index.contains(&phrase, hash).unwrap_or(true))
            }
            _ => false,
        }
    }

    /// Reads the keyword sections of a blocklist file (the filter was read by the caller).
    pub(crate) fn read(
        path: &Path,
        source: &dyn Source,
        directory: &Directory,
        filter: AnyFilter,
    ) -> Result<Self> {
        if filter.hash_strategy() != HashStrategy::Xxh3 {
            return Err(Error::invalid(
                path,
                "filter hash strategy",
                "keyword lists are hashed with xxh3",
            ));
        }
        let lengths = directory
            .find(tag::KEYWORD_LENGTHS, 0)
            .ok_or(Error::MissingSection {
                path: path.to_path_buf(),
                section: "phrase lengths",
            })?;
        let lengths = decode_lengths(path, &format::read_section_vec(path, source, lengths)?)?;
        let index = match directory.find(tag::KEYWORD_INDEX, 0) {
            Some(entry) => Some(KeywordIndex::read(path, source, entry)?),
            None => None,
        };
        Ok(KeywordEngine {
            filter,
            lengths,
            index,
            gate: None,
        })
    }

    /// A keyword list from its parts (the keyword builder's).
    pub fn new(filter: AnyFilter, lengths: PhraseLengths, index: Option<KeywordIndex>) -> Self {
        KeywordEngine {
            filter,
            lengths,
            index,
            gate: None,
        }
    }

    /// Gives the index the open file (any shared source) its blocks are read from on hits.
    pub fn attach_source(&mut self, source: SharedSource, directory: &Directory) {
        if let (Some(index), Some(entry)) = (&mut self.index, directory.find(tag::KEYWORD_INDEX, 0))
        {
            index.data = IndexData::Shared(source, entry.offset);
        }
    }

    /// Gives the index its blocks from a whole file image.
    pub(crate) fn attach_bytes(&mut self, image: &[u8], directory: &Directory) {
        if let (Some(index), Some(entry)) = (&mut self.index, directory.find(tag::KEYWORD_INDEX, 0))
        {
            // `read_directory` checked that the section lies inside the image.
            let range = entry.offset as usize..(entry.offset + entry.len) as usize;
            index.data = IndexData::Bytes(Arc::new(image[range].to_vec()));
        }
    }

    /// The phrase-lengths section's bytes.
    pub(crate) fn encode_lengths(&self) -> Vec<u8> {
        encode_lengths(&self.lengths)
    }

    /// The keyword index as a section of a file being written, if the list has one.
    pub(crate) fn spilled_sections(&self) -> Vec<SpilledSection<'_>> {
        self.index
            .iter()
            .filter_map(KeywordIndex::spilled_section)
            .collect()
    }

    /// What `info` shows.
    pub fn info(&self, meta: &Meta) -> KeywordsInfo {
        let per_probe = self.filter.target_fpp();
        KeywordsInfo {
            lengths: self.lengths.clone(),
            probes_per_doc: meta.probes_per_item,
            per_doc_fpp: meta.target_fpp,
            per_probe_fpp: per_probe,
            index: self.index.as_ref().map(KeywordIndex::info),
        }
    }
}

/// What `info` prints about a keyword list.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KeywordsInfo {
    /// Phrase lengths in tokens, with the keywords of each.
    pub lengths: PhraseLengths,
    /// Probes per document the rate is stated for (P).
    pub probes_per_doc: u32,
    /// The target rate per document of P probes.
    pub per_doc_fpp: Option<f64>,
    /// The per-probe rate the filter was sized for, f = 1 − (1 − p)^{1/P}.
    pub per_probe_fpp: Option<f64>,
    /// The exact keyword index.
    pub index: Option<IndexInfo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip_and_bad_ones_are_named() {
        let lengths = PhraseLengths(vec![(1, 10), (2, 5), (4, 1)]);
        let bytes = encode_lengths(&lengths);
        assert_eq!(decode_lengths(Path::new("x"), &bytes).unwrap(), lengths);
        assert_eq!(lengths.mask(), 0b10110);
        assert_eq!(lengths.max(), 4);
        let unordered = encode_lengths(&PhraseLengths(vec![(2, 1), (1, 1)]));
        assert!(decode_lengths(Path::new("x"), &unordered).is_err());
        let too_long = encode_lengths(&PhraseLengths(vec![(33, 1)]));
        assert!(decode_lengths(Path::new("x"), &too_long).is_err());
        assert!(decode_lengths(Path::new("x"), &bytes[..bytes.len() - 1]).is_err());
        assert!(
            decode_lengths(Path::new("x"), &encode_lengths(&PhraseLengths::default())).is_err()
        );
    }

    #[test]
    fn the_index_finds_every_keyword_and_nothing_else() {
        let mut keywords: Vec<(KeyHash, String)> = (0..5_000)
            .map(|i| format!("keyword {i}"))
            .map(|k| (normalized_phrase_hash(&k), k))
            .collect();
        keywords.sort_by_key(|(h, _)| (h.h1, h.h2));
        let mut writer = IndexWriter::new(Vec::new());
        for (hash, keyword) in &keywords {
            writer.push(*hash, keyword.as_bytes()).unwrap();
        }
        let (head, data) = writer.finish().unwrap();
        let bytes = [head, data].concat();
        let entry = SectionEntry {
            tag: tag::KEYWORD_INDEX,
            index: 0,
            offset: 0,
            len: bytes.len() as u64,
            checksum: 0,
        };
        let mut index = KeywordIndex::read(Path::new("x"), &bytes.as_slice(), &entry).unwrap();
        assert!(index.blocks.len() > 10, "{} blocks", index.blocks.len());
        index.data = IndexData::Bytes(Arc::new(bytes.clone()));
        for (hash, keyword) in &keywords {
            assert!(index.contains(keyword, *hash).unwrap(), "{keyword}");
        }
        for i in 5_000..6_000 {
            let other = format!("keyword {i}");
            assert!(!index
                .contains(&other, normalized_phrase_hash(&other))
                .unwrap());
        }
        // A changed block is an error, never an answer.
        let mut damaged = bytes.clone();
        let last = damaged.len() - 3;
        damaged[last] ^= 1;
        index.data = IndexData::Bytes(Arc::new(damaged));
        let (hash, keyword) = keywords.last().unwrap();
        assert!(matches!(
            index.contains(keyword, *hash),
            Err(Error::ChecksumMismatch { .. })
        ));
        // A damaged directory is refused when read.
        let mut directory = bytes;
        directory[INDEX_HEADER + 3] ^= 1;
        assert!(KeywordIndex::read(Path::new("x"), &directory.as_slice(), &entry).is_err());
    }
}
