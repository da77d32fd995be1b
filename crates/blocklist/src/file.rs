//! Blocklist and delta files on disk: opened whole into memory with positioned reads (every
//! checksum verified, so a file replaced or rewritten while in use cannot disturb a running
//! check), and written atomically (a temporary file beside it, fsync, rename). The clock that
//! stamps a written file is here too: the core has none.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Error, Result};
use phishbloom_core::delta::{AnyDelta, Delta};
use phishbloom_core::format::{Directory, Source};
use phishbloom_core::sections::Meta;
use phishbloom_core::{Blocklist, Kind};

use crate::atomic::AtomicFile;

/// Bytes available to this user on the file system holding `path` (a file or directory; for a
/// file not yet there, its directory), or `None` when the system cannot tell.
pub fn free_space(path: &Path) -> Option<u64> {
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        }
    };
    let c_path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `stat` points to
    // writable memory of the structure's size; statvfs(3) only writes it.
    let result = unsafe { libc::statvfs(c_path.as_ptr(), stat.as_mut_ptr()) };
    if result != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the whole structure.
    let stat = unsafe { stat.assume_init() };
    // The field types are 32 bits wide on some targets (64 here): widen them.
    #[allow(clippy::unnecessary_cast)]
    let (blocks, block_bytes) = (stat.f_bavail as u64, stat.f_frsize as u64);
    Some(blocks.saturating_mul(block_bytes))
}

/// A lower bound of the bytes `list`'s file takes: its filters and verification table (the
/// rest — header, metadata, categories — is small next to them).
pub fn file_bytes_at_least(list: &Blocklist) -> u64 {
    let description = list.describe();
    let filters: u64 = description.filters.iter().map(|f| f.bytes).sum();
    filters.saturating_add(description.verification.unwrap_or(0).saturating_mul(8))
}

/// Refuses to write `list` to `path` when its file cannot fit in the free space there (checked
/// before writing, so that a build of gigabytes fails at once, not after filling the disk).
pub fn check_room(list: &Blocklist, path: &Path) -> Result<()> {
    let needed = file_bytes_at_least(list);
    match free_space(path) {
        Some(available) if needed > available => Err(Error::NoRoom {
            path: path.to_path_buf(),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

/// Seconds since the Unix epoch: `SOURCE_DATE_EPOCH` when set (reproducible builds), else the
/// clock.
pub fn now() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
}

/// An open file as a [`Source`]: positioned reads, nothing mapped.
#[derive(Debug)]
pub struct FileSource(pub File);

impl Source for FileSource {
    fn source_len(&self) -> std::io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        FileExt::read_exact_at(&self.0, buf, offset)
    }
}

/// Blocklist files: open, read the metadata of, and save a [`Blocklist`].
pub trait BlocklistFile: Sized {
    /// Opens the blocklist file at `path`, whichever kind it holds, reading it whole into
    /// memory and checking every checksum and field. A regular file is read with positioned
    /// reads (a keyword list's index stays on disk and is read on hits); anything else that can
    /// be opened (a pipe such as `<(curl …)`, a character device) is read to its end first.
    fn open(path: impl AsRef<Path>) -> Result<Self>;

    /// Reads only the metadata of the blocklist file at `path` (header, table and metadata
    /// section, checksums verified): cheap even for a large file. Only for regular files (a
    /// FIFO would block the open).
    fn read_meta(path: impl AsRef<Path>) -> Result<(Kind, Meta)>;

    /// Writes the blocklist to `path` atomically (a temporary file beside it, fsync, rename),
    /// refusing an output that is not a regular file or is one of `inputs`; a list whose time
    /// is unknown (built without one, or changed and not stamped since) is stamped with the
    /// time it is written. Returns the new file's directory (its sections and checksum).
    fn save(&self, path: &Path, inputs: &[PathBuf]) -> Result<Directory>;
}

impl BlocklistFile for Blocklist {
    fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let metadata = file.metadata().map_err(|e| Error::io(path, "open", e))?;
        if metadata.is_dir() {
            return Err(Error::IsADirectory {
                path: path.to_path_buf(),
            });
        }
        if metadata.is_file() {
            let source = FileSource(file);
            let list = Blocklist::read_from(path, &source)?;
            return Ok(list.attach_keyword_source(Arc::new(source)));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|e| Error::io(path, "read", e))?;
        Ok(Blocklist::from_bytes(path, &bytes)?)
    }

    fn read_meta(path: impl AsRef<Path>) -> Result<(Kind, Meta)> {
        let path = path.as_ref();
        let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, "open", e))?;
        if !metadata.is_file() {
            return Err(Error::NotAFile { path: path.into() });
        }
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        Ok(Blocklist::meta_from(path, &FileSource(file))?)
    }

    fn save(&self, path: &Path, inputs: &[PathBuf]) -> Result<Directory> {
        let mut file = AtomicFile::create(path, inputs)?;
        let created = (self.meta().created == 0).then(now);
        let directory = self
            .write_to(&mut file, created)
            .map_err(|e| Error::io(path, "write", e))?;
        file.commit()?;
        Ok(directory)
    }
}

/// Delta files: open a [`Delta`].
pub trait DeltaFile: Sized {
    /// Reads the delta file at `path`, every checksum verified.
    fn open(path: &Path) -> Result<Self>;
}

/// Reads the file at `path` and decodes it with `decode`.
fn read_delta<T>(path: &Path, decode: fn(&Path, &[u8]) -> phishbloom_core::Result<T>) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, "read", e))?;
    Ok(decode(path, &bytes)?)
}

impl DeltaFile for Delta {
    fn open(path: &Path) -> Result<Self> {
        read_delta(path, Delta::from_bytes)
    }
}

impl DeltaFile for AnyDelta {
    fn open(path: &Path) -> Result<Self> {
        read_delta(path, AnyDelta::from_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_is_known_here_and_a_list_needs_at_least_its_filter() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_space(dir.path()).is_some_and(|b| b > 0));
        assert!(free_space(&dir.path().join("not-yet.bloom")).is_some());
        let set = phishbloom_core::EntrySet::uncategorized(
            vec![phishbloom_url::Entry::parse(b"evil.com").unwrap()],
            "x",
        );
        let list =
            Blocklist::from_entries(&set, &phishbloom_core::BuildOptions::default()).unwrap();
        assert!(file_bytes_at_least(&list) >= 64);
        assert!(check_room(&list, &dir.path().join("l.bloom")).is_ok());
    }
}
