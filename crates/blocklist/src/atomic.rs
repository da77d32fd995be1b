//! Atomic file replacement, the one way phishbloom writes files: a temporary file in the
//! destination's directory, fsync, rename over the destination, fsync of the directory. A reader
//! sees the old file or the new one, never a mixture; a failure leaves the destination untouched
//! and removes the temporary file.
//!
//! Before anything is written, the destination is checked: it must be a regular file or not
//! exist yet — never a directory, device, FIFO, socket or symbolic link — and it must not be one
//! of the command's inputs (`build list.txt -o list.txt` would destroy the list).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// Distinguishes concurrent temporary files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Checks that `path` may be replaced: it does not exist, or it is a regular file that is none
/// of `inputs` (compared by device and inode, so another name or a hard link of an input is
/// caught too). Inputs that do not exist are ignored.
pub fn check_output(path: &Path, inputs: &[PathBuf]) -> Result<()> {
    if path.file_name().is_none() {
        return Err(Error::OutputNotAFile {
            path: path.to_path_buf(),
            what: "a path that names no file",
        });
    }
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(Error::io(path, "inspect the output path", error)),
    };
    let kind = metadata.file_type();
    let what = if kind.is_symlink() {
        return Err(Error::OutputIsSymlink {
            path: path.to_path_buf(),
            target: std::fs::read_link(path).unwrap_or_default(),
        });
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_file() {
        for input in inputs {
            if let Ok(other) = std::fs::metadata(input) {
                if (other.dev(), other.ino()) == (metadata.dev(), metadata.ino()) {
                    return Err(Error::OutputIsInput {
                        path: path.to_path_buf(),
                        input: input.clone(),
                    });
                }
            }
        }
        return Ok(());
    } else {
        "something that is not a regular file"
    };
    Err(Error::OutputNotAFile {
        path: path.to_path_buf(),
        what,
    })
}

/// A file being written to a temporary name, to be renamed over its destination by
/// [`AtomicFile::commit`]. Dropped without a commit, it removes the temporary file.
pub struct AtomicFile {
    destination: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
    /// Whether the temporary file was renamed onto the destination (until then, dropping
    /// removes it — also after a failed commit: a full disk must not keep the partial file).
    renamed: bool,
}

impl AtomicFile {
    /// Checks `destination` with [`check_output`] and creates the temporary file beside it
    /// (with the destination's permissions, when it exists).
    pub fn create(destination: &Path, inputs: &[PathBuf]) -> Result<Self> {
        check_output(destination, inputs)?;
        let directory = match destination.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // `check_output` refused paths without a file name.
        let name = destination
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        remove_dead_temporaries(&directory, &name);
        let temp = directory.join(format!(
            ".{name}.tmp.{}.{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| Error::io(destination, "create a temporary file beside", e))?;
        if let Ok(existing) = std::fs::metadata(destination) {
            // Best effort: a file system without permissions keeps its defaults.
            let _ = file.set_permissions(existing.permissions());
        }
        Ok(AtomicFile {
            destination: destination.to_path_buf(),
            temp,
            // 1 MiB: large sequential writes without a second copy of a big filter in memory.
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            renamed: false,
        })
    }

    /// Flushes, fsyncs and renames the file over its destination, then fsyncs the directory.
    pub fn commit(mut self) -> Result<()> {
        let destination = self.destination.clone();
        let writer = self.writer.take().ok_or_else(|| {
            Error::io(
                &destination,
                "write",
                std::io::Error::other("already committed"),
            )
        })?;
        let file = writer
            .into_inner()
            .map_err(|e| Error::io(&destination, "write", e.into_error()))?;
        file.sync_all()
            .map_err(|e| Error::io(&destination, "fsync", e))?;
        drop(file);
        std::fs::rename(&self.temp, &destination)
            .map_err(|e| Error::io(&destination, "rename the temporary file onto", e))?;
        self.renamed = true;
        // Persist the rename itself. Some file systems cannot fsync a directory; the data is
        // already durable, so that failure is not worth failing the write for.
        let directory = match destination.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        if let Ok(dir) = File::open(directory) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The destination path (for error messages).
    pub fn destination(&self) -> &Path {
        &self.destination
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.writer {
            Some(writer) => writer.write(buf),
            None => Err(std::io::Error::other("the file was already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.writer {
            Some(writer) => writer.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.renamed {
            // Not committed, or the commit failed: the destination stays as it was. The
            // removal is best effort (the directory may have gone away).
            drop(self.writer.take());
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Removes the temporary files of `name` in `directory` (`.NAME.tmp.PID.N`) left by writers
/// that are gone — killed, or out of disk before they could clean up — so that their
/// leftovers do not fill the disk for the next write. A temporary file of a live process is
/// left alone. Only where `/proc` tells which processes live (Linux); best effort.
fn remove_dead_temporaries(directory: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!(".{name}.tmp.");
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// An exclusive lock for changing a file in place (read, change, rename a new file over it):
/// an advisory lock on `FILE.lock` beside it, held until dropped, so that two `add`s, `remove`s
/// or `apply`s of one list run one after the other and neither loses the other's change. (The
/// file itself cannot carry the lock: the rename replaces it.) The lock file stays, empty.
pub struct EditLock {
    _file: File,
}

impl EditLock {
    /// Takes the lock of `path`, waiting at most `timeout` for another writer to release it
    /// (a stopped writer holds it for as long as it is stopped); then [`Error::Locked`],
    /// naming the holder's PID, which every holder writes into the lock file.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<Self> {
        // No lock file beside a file that is not there (the open that follows would fail).
        std::fs::metadata(path).map_err(|e| Error::io(path, "open", e))?;
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let lock = path.with_file_name(name);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&lock)
            .map_err(|e| Error::io(&lock, "create the lock file", e))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        let mut text = String::new();
                        let _ = file.read_to_string(&mut text);
                        return Err(Error::Locked {
                            path: path.to_path_buf(),
                            holder: text.trim().parse().ok(),
                            waited: timeout.as_secs_f64(),
                        });
                    }
                    std::thread::sleep(LOCK_POLL);
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io(&lock, "lock", e));
                }
            }
        }
        // Ours now: say who holds it, for a writer that times out waiting (best effort).
        let _ = file
            .set_len(0)
            .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()));
        Ok(EditLock { _file: file })
    }
}

/// How often a writer waiting for the edit lock tries again: short next to a write (tens of
/// milliseconds to seconds), long enough to cost nothing while waiting.
const LOCK_POLL: Duration = Duration::from_millis(20);

/// How long a writer waits for the edit lock by default (`--lock-timeout`): far longer than
/// any change of a list takes, short enough that a stuck writer is reported, not waited on.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Writes `parts` to `destination` atomically (see [`AtomicFile`]).
pub fn write_atomic(destination: &Path, inputs: &[PathBuf], parts: &[&[u8]]) -> Result<()> {
    let mut file = AtomicFile::create(destination, inputs)?;
    for part in parts {
        file.write_all(part)
            .map_err(|e| Error::io(destination, "write", e))?;
    }
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_atomically_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bloom");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, &[], &[b"new ", b"content"]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new content");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_commit_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bloom");
        let mut file = AtomicFile::create(&path, &[]).unwrap();
        file.write_all(b"content").unwrap();
        // The rename cannot replace a directory that holds a file.
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"x").unwrap();
        assert!(file.commit().is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.bloom"], "a temporary file was left");
    }

    #[test]
    fn the_next_writer_removes_temporaries_of_dead_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bloom");
        // PIDs never exceed 2^22 on Linux: 99,999,999 is no process.
        let dead = dir.path().join(".out.bloom.tmp.99999999.3");
        let alive = dir
            .path()
            .join(format!(".out.bloom.tmp.{}.77", std::process::id()));
        let other = dir.path().join(".other.bloom.tmp.99999999.0");
        for leftover in [&dead, &alive, &other] {
            std::fs::write(leftover, b"partial").unwrap();
        }
        write_atomic(&path, &[], &[b"new"]).unwrap();
        assert!(!dead.exists(), "a dead writer's temporary file stayed");
        assert!(alive.exists(), "a live writer's temporary file was removed");
        assert!(other.exists(), "another file's temporary was touched");
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bloom");
        std::fs::write(&path, b"old").unwrap();
        {
            let mut file = AtomicFile::create(&path, &[]).unwrap();
            file.write_all(b"half").unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_what_is_not_a_regular_file_or_is_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("list.txt");
        std::fs::write(&list, b"evil.com\n").unwrap();
        let link = dir.path().join("link.bloom");
        std::os::unix::fs::symlink(&list, &link).unwrap();
        let hard = dir.path().join("hard.txt");
        std::fs::hard_link(&list, &hard).unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());

        let refused = |path: &Path| check_output(path, std::slice::from_ref(&list)).unwrap_err();
        assert!(matches!(
            refused(dir.path()),
            Error::OutputNotAFile {
                what: "a directory",
                ..
            }
        ));
        assert!(matches!(
            refused(&fifo),
            Error::OutputNotAFile { what: "a FIFO", .. }
        ));
        assert!(matches!(
            refused(Path::new("/dev/null")),
            Error::OutputNotAFile {
                what: "a character device",
                ..
            }
        ));
        assert!(matches!(refused(&link), Error::OutputIsSymlink { .. }));
        assert!(matches!(refused(&list), Error::OutputIsInput { .. }));
        assert!(matches!(refused(&hard), Error::OutputIsInput { .. }));
        assert!(check_output(&dir.path().join("new.bloom"), std::slice::from_ref(&list)).is_ok());
        // Nothing was touched.
        assert_eq!(std::fs::read(&list).unwrap(), b"evil.com\n");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(write_atomic(&fifo, &[], &[b"x"]).is_err());
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }
}
