//! The saved-filter file format: a 64-byte header, the bit array, an xxh3-64 checksum.
//!
//! ```text
//! offset  size  field
//!      0     8  magic  89 'P' 'H' 'B' 'L' 'O' 'M' 0a   (PNG-style: a high-bit byte and a
//!                     newline, so 7-bit or line-ending-mangling copies fail the magic check)
//!      8     4  format version, u32 LE (this build: 1)
//!     12     1  layout: 0 classic, 1 blocked
//!     13     1  hash strategy: 0 xxh3, 1 sha256
//!     14     1  key scheme: how the writer normalized keys before hashing (opaque here;
//!                     phishbloom's lookup crate defines the codes), 0 = raw bytes
//!     15     1  reserved, zero
//!     16     8  m, number of bits, u64 LE
//!     24     4  k, number of hashes, u32 LE
//!     28     4  key parameter, u32 LE: a number the key scheme needs (opaque here; for
//!                     phishbloom's URL expressions, the expressions per URL it was sized for)
//!     32     8  items inserted, u64 LE
//!     40     8  target fpp, f64 LE (NaN: built from explicit m and k)
//!     48     8  expected items the filter was sized for, u64 LE (0: explicit m and k)
//!     56     8  length of the bit array in bytes, u64 LE (= ceil(m / 512) · 64)
//!     64     …  the bit array: little-endian u64 words, 64-byte aligned
//!    end-8   8  xxh3-64 (seed 0) of every byte before it, u64 LE
//! ```
//!
//! Loading checks, in order: magic, version, the bit-array length against m, the file length
//! against the header, the checksum, then every field's range. Each failure is its own
//! [`Error`] variant. Files are written to a temporary file in the destination directory,
//! fsynced and renamed over the destination, so a reader sees the old file or the new one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::bits::BLOCK_BYTES;
use crate::error::{Error, Result};
use crate::hash::HashStrategy;
use crate::layout::LayoutKind;
use crate::math::{BLOCK_BITS, MAX_NUM_BITS, MAX_NUM_HASHES};

/// The first eight bytes of every filter file.
pub const MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'L', b'O', b'M', 0x0a];

/// The format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Length of the header; also the offset of the bit array (a multiple of 64, for alignment).
pub const HEADER_LEN: usize = 64;

/// Length of the checksum trailer.
pub const TRAILER_LEN: usize = 8;

/// The parameters a file header records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// Bit layout.
    pub layout: LayoutKind,
    /// Hash strategy.
    pub strategy: HashStrategy,
    /// m.
    pub num_bits: u64,
    /// k.
    pub num_hashes: u32,
    /// Keys inserted (insert calls, duplicates included).
    pub items: u64,
    /// The fpp the filter was sized for, if it was sized from one.
    pub target_fpp: Option<f64>,
    /// The item count the filter was sized for (0 when built from explicit m and k).
    pub expected_items: u64,
    /// The caller's key normalization code (0: keys hashed as given).
    pub key_scheme: u8,
    /// A parameter of the key scheme (opaque to this crate).
    pub key_param: u32,
}

impl Header {
    /// Length of the bit array for `num_bits`: whole 64-byte blocks.
    pub fn data_len(num_bits: u64) -> u64 {
        num_bits.div_ceil(BLOCK_BITS) * BLOCK_BYTES as u64
    }

    /// The 64 header bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..8].copy_from_slice(&MAGIC);
        out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out[12] = self.layout.code();
        out[13] = self.strategy.code();
        out[14] = self.key_scheme;
        out[16..24].copy_from_slice(&self.num_bits.to_le_bytes());
        out[24..28].copy_from_slice(&self.num_hashes.to_le_bytes());
        out[28..32].copy_from_slice(&self.key_param.to_le_bytes());
        out[32..40].copy_from_slice(&self.items.to_le_bytes());
        out[40..48].copy_from_slice(&self.target_fpp.unwrap_or(f64::NAN).to_le_bytes());
        out[48..56].copy_from_slice(&self.expected_items.to_le_bytes());
        out[56..64].copy_from_slice(&Self::data_len(self.num_bits).to_le_bytes());
        out
    }
}

/// Reads the little-endian u64 at `offset` (the caller checked `offset + 8 <= bytes.len()`).
fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(word)
}

/// Reads the little-endian u32 at `offset` (the caller checked `offset + 4 <= bytes.len()`).
fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

/// Validates a whole file image and returns its header. The bit array is
/// `bytes[HEADER_LEN..HEADER_LEN + Header::data_len(num_bits)]`. `path` only names the input in
/// errors. Never panics, whatever `bytes` holds.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Header> {
    let path_buf = || path.to_path_buf();
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(Error::BadMagic {
            path: path_buf(),
            expected: MAGIC,
            found: bytes[..magic_len].to_vec(),
        });
    }
    let minimum = (HEADER_LEN + TRAILER_LEN) as u64;
    if (bytes.len() as u64) < minimum {
        return Err(Error::Truncated {
            path: path_buf(),
            expected: minimum,
            got: bytes.len() as u64,
        });
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(Error::Version {
            path: path_buf(),
            expected: FORMAT_VERSION,
            got: version,
        });
    }
    let num_bits = u64_at(bytes, 16);
    if num_bits == 0 || num_bits > MAX_NUM_BITS {
        return Err(Error::InvalidHeader {
            path: path_buf(),
            field: "num_bits",
            value: num_bits,
        });
    }
    let data_len = u64_at(bytes, 56);
    let expected_data = Header::data_len(num_bits);
    if data_len != expected_data {
        return Err(Error::SizeMismatch {
            path: path_buf(),
            what: "bit array length in the header",
            num_bits,
            expected: expected_data,
            got: data_len,
        });
    }
    let expected_len = minimum + expected_data;
    let got_len = bytes.len() as u64;
    if got_len < expected_len {
        return Err(Error::Truncated {
            path: path_buf(),
            expected: expected_len,
            got: got_len,
        });
    }
    if got_len > expected_len {
        return Err(Error::SizeMismatch {
            path: path_buf(),
            what: "file length",
            num_bits,
            expected: expected_len,
            got: got_len,
        });
    }
    let body = bytes.len() - TRAILER_LEN;
    let stored = u64_at(bytes, body);
    let computed = xxh3_64(&bytes[..body]);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            path: path_buf(),
            expected: stored,
            got: computed,
        });
    }
    decode_fields(path, bytes, num_bits)
}

/// Decodes the checksummed header's remaining fields and checks their ranges.
fn decode_fields(path: &Path, bytes: &[u8], num_bits: u64) -> Result<Header> {
    let invalid = |field: &'static str, value: u64| Error::InvalidHeader {
        path: path.to_path_buf(),
        field,
        value,
    };
    let layout =
        LayoutKind::from_code(bytes[12]).ok_or_else(|| invalid("layout", u64::from(bytes[12])))?;
    let strategy = HashStrategy::from_code(bytes[13])
        .ok_or_else(|| invalid("hash strategy", u64::from(bytes[13])))?;
    let reserved = u64::from(bytes[15]);
    if reserved != 0 {
        return Err(invalid("reserved", reserved));
    }
    let num_hashes = u32_at(bytes, 24);
    if num_hashes == 0 || num_hashes > MAX_NUM_HASHES {
        return Err(invalid("num_hashes", u64::from(num_hashes)));
    }
    if layout == LayoutKind::Blocked && num_bits % BLOCK_BITS != 0 {
        return Err(invalid(
            "num_bits (blocked layout needs whole 512-bit blocks)",
            num_bits,
        ));
    }
    let fpp = f64::from_le_bytes(u64_at(bytes, 40).to_le_bytes());
    let target_fpp = if fpp.is_nan() {
        None
    } else if fpp > 0.0 && fpp < 1.0 {
        Some(fpp)
    } else {
        return Err(invalid("target fpp (bits)", fpp.to_bits()));
    };
    Ok(Header {
        layout,
        strategy,
        num_bits,
        num_hashes,
        items: u64_at(bytes, 32),
        target_fpp,
        expected_items: u64_at(bytes, 48),
        key_scheme: bytes[14],
        key_param: u32_at(bytes, 28),
    })
}

/// Maps `path` copy-on-write and validates it; returns the mapping and its header.
pub fn map_file(path: &Path) -> Result<(memmap2::MmapMut, Header)> {
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
    if metadata.is_dir() {
        return Err(Error::io(
            path,
            "open",
            std::io::Error::other("is a directory, not a filter file"),
        ));
    }
    if metadata.len() < (HEADER_LEN + TRAILER_LEN) as u64 {
        // Too short to map usefully (and mapping an empty file fails on some systems): read it.
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, "read", e))?;
        return Err(match parse(path, &bytes) {
            Err(error) => error,
            // `parse` rejects every image shorter than a header and trailer; should the file
            // have grown since `stat`, report the length we saw rather than guess.
            Ok(_) => Error::Truncated {
                path: path.to_path_buf(),
                expected: (HEADER_LEN + TRAILER_LEN) as u64,
                got: metadata.len(),
            },
        });
    }
    // SAFETY: a private copy-on-write mapping is unaffected by writes through other mappings of
    // our own, but if another process truncates the file while it is mapped, reads fault
    // (SIGBUS). phishbloom never modifies a filter file in place — `save` writes a new file and
    // renames it — so the mapped inode is never truncated by this program; this is the same
    // contract as `fst::Map::from_path` and every memory-mapped index.
    let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
        .map_err(|e| Error::io(path, "memory-map", e))?;
    let header = parse(path, &map)?;
    Ok((map, header))
}

/// Distinguishes concurrent temporary files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The file image of `header` and `data`: both, then the xxh3-64 of both (as [`write_atomic`]
/// writes them).
pub fn image(header: &Header, data: &[u8]) -> Vec<u8> {
    let header_bytes = header.encode();
    let mut out = Vec::with_capacity(HEADER_LEN + data.len() + TRAILER_LEN);
    out.extend_from_slice(&header_bytes);
    out.extend_from_slice(data);
    let checksum = xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// Writes `header`, `data` and the checksum to `path` atomically (see [`write_atomic_parts`]).
pub fn write_atomic(path: &Path, header: &Header, data: &[u8]) -> Result<()> {
    write_atomic_parts(path, &[&header.encode(), data])
}

/// Writes `parts`, then the xxh3-64 of all their bytes (little-endian), to `path` atomically: a
/// temporary file in the same directory, fsync, rename over `path`, fsync of the directory. On
/// failure the temporary file is removed and `path` is untouched. Other phishbloom file formats
/// use it too.
pub fn write_atomic_parts(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path.file_name().ok_or_else(|| {
        Error::io(
            path,
            "create",
            std::io::Error::other("the path names no file"),
        )
    })?;
    let temp = directory.join(format!(
        ".{}.tmp.{}.{}",
        file_name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write_file(&temp, parts).and_then(|()| {
        std::fs::rename(&temp, path).map_err(|e| Error::io(path, "rename temporary file onto", e))
    });
    if result.is_err() {
        // Best effort: the temporary file may not exist if creating it was what failed.
        let _ = std::fs::remove_file(&temp);
        return result;
    }
    // Persist the rename itself. Some file systems cannot fsync a directory; the data is already
    // durable, so that failure is not worth failing the save for.
    if let Ok(dir) = File::open(&directory) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Writes and fsyncs one complete file at `path`: the parts, then their checksum.
fn write_file(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let file = File::create(path).map_err(|e| Error::io(path, "create", e))?;
    // 1 MiB: large sequential writes without holding a second copy of a big filter in memory.
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    let mut checksum = Xxh3::new();
    let write = |w: &mut BufWriter<File>, bytes: &[u8]| {
        w.write_all(bytes).map_err(|e| Error::io(path, "write", e))
    };
    for part in parts {
        checksum.update(part);
        write(&mut writer, part)?;
    }
    write(&mut writer, &checksum.digest().to_le_bytes())?;
    let file = writer
        .into_inner()
        .map_err(|e| Error::io(path, "write", e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(path, "fsync", e))
}
