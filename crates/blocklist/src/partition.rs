//! Key hashes sorted into partitions by their top bits, full runs spilled to an unnamed
//! temporary file: what a streamed read of a list ([`crate::source`], [`crate::stream`]) hashes
//! into, in memory bounded by buffers, not by the list.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::{Error, Result};
use phishbloom_filter::KeyHash;

/// A key hash as two words `[h1, h2]`: plain data that can be written to a file as it is, and
/// whose array order is the order of `(h1, h2)`.
pub(crate) type Hash = [u64; 2];

/// Bytes of one [`Hash`].
pub(crate) const HASH_BYTES: usize = std::mem::size_of::<Hash>();

/// log2 of the number of partitions.
pub(crate) const PARTITION_BITS: u32 = 8;

/// Partitions of the hashes, by their top [`PARTITION_BITS`] bits. 256 keeps a partition of a
/// 10⁸-key list at ~6 MB (sorted on one core in tens of milliseconds) and the hashing workers'
/// buffers at 8 MiB each; a 10⁹-key list still sorts ~60 MB at a time.
pub(crate) const PARTITIONS: usize = 1 << PARTITION_BITS;

/// Hashes a partition buffers before they are written out: 32 KiB writes.
pub(crate) const RUN: usize = 2048;

/// The partition of a hash.
#[inline]
pub(crate) fn partition_of(h1: u64) -> usize {
    (h1 >> (64 - PARTITION_BITS)) as usize
}

/// An append-only temporary file of hashes, created on first use and deleted when dropped (an
/// unnamed file: nothing is left behind, even by a crash).
pub(crate) struct Spill {
    dir: PathBuf,
    file: Option<File>,
    len: u64,
}

impl Spill {
    pub(crate) fn new(dir: &Path) -> Self {
        Spill {
            dir: dir.to_path_buf(),
            file: None,
            len: 0,
        }
    }

    fn error(&self, error: std::io::Error) -> Error {
        Error::io(
            &self.dir,
            "write a temporary file of key hashes (set TMPDIR to use another directory)",
            error,
        )
    }

    /// Appends `hashes`; returns their offset.
    pub(crate) fn append(&mut self, hashes: &[Hash]) -> Result<u64> {
        if self.file.is_none() {
            let file = tempfile::tempfile_in(&self.dir).map_err(|e| self.error(e))?;
            self.file = Some(file);
        }
        let bytes: &[u8] = bytemuck::cast_slice(hashes);
        let written = match &mut self.file {
            Some(file) => file.write_all(bytes),
            None => Ok(()),
        };
        written.map_err(|e| self.error(e))?;
        let offset = self.len;
        self.len += bytes.len() as u64;
        Ok(offset)
    }

    /// Appends `count` hashes read at `offset` to `out`.
    pub(crate) fn read(&self, offset: u64, count: usize, out: &mut Vec<Hash>) -> Result<()> {
        let start = out.len();
        out.resize(start + count, [0; 2]);
        let Some(file) = &self.file else {
            return Err(self.error(std::io::Error::other("no temporary file was written")));
        };
        file.read_exact_at(bytemuck::cast_slice_mut(&mut out[start..]), offset)
            .map_err(|e| Error::io(&self.dir, "read back a temporary file of key hashes", e))
    }
}

/// Hashes sorted into partitions: full runs written to a temporary file, the rest in buffers.
pub(crate) struct Partitioner {
    buffers: Vec<Vec<Hash>>,
    /// Per partition, `(offset, count)` of each run in `spill`.
    runs: Vec<Vec<(u64, usize)>>,
    spill: Spill,
    pub(crate) hashed: u64,
}

impl Partitioner {
    pub(crate) fn new(dir: &Path) -> Self {
        Partitioner {
            buffers: vec![Vec::new(); PARTITIONS],
            runs: vec![Vec::new(); PARTITIONS],
            spill: Spill::new(dir),
            hashed: 0,
        }
    }

    /// Adds one key hash.
    #[inline]
    pub(crate) fn push(&mut self, hash: KeyHash) -> Result<()> {
        let partition = partition_of(hash.h1);
        let buffer = &mut self.buffers[partition];
        if buffer.capacity() == 0 {
            buffer.reserve_exact(RUN);
        }
        buffer.push([hash.h1, hash.h2]);
        self.hashed += 1;
        if buffer.len() == RUN {
            let offset = self.spill.append(buffer)?;
            buffer.clear();
            self.runs[partition].push((offset, RUN));
        }
        Ok(())
    }

    /// Appends every hash of `partition` to `out`.
    pub(crate) fn load(&self, partition: usize, out: &mut Vec<Hash>) -> Result<()> {
        for &(offset, count) in &self.runs[partition] {
            self.spill.read(offset, count, out)?;
        }
        out.extend_from_slice(&self.buffers[partition]);
        Ok(())
    }
}
