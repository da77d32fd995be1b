//! The lists a running server answers from, re-read when their files change: each query takes
//! the [`Policy`] in hand (an `Arc`), and a reload builds a whole new one and swaps it in, so a
//! query never sees half a change and none is dropped. A file that cannot be read keeps the
//! policy in hand (the error is reported, the next change tried again).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::Blocklist;

use crate::error::{Error, Result};
use crate::policy::{BlockWith, Named, Policy};
use phishbloom_core::keys::KeyScheme;

/// What identifies a file's content cheaply: its inode, status-change time, modification time
/// and length (a file replaced by a rename, as `sync` and `publish` replace them, is another
/// inode even when its length and times are the old one's).
type Stamp = Option<(u64, i64, i64, SystemTime, u64)>;

/// The stamp of the file at `path` now (`None` when it cannot be read).
fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.modified().ok()?,
        meta.len(),
    ))
}

/// The lists' files, how they are read, and the policy in hand.
pub struct Lists {
    paths: Vec<PathBuf>,
    categories: Vec<String>,
    block_with: BlockWith,
    current: RwLock<Arc<Policy>>,
    stamps: Mutex<Vec<Stamp>>,
}

impl Lists {
    /// Opens the lists at `paths` (named by their file stems), keeping only `categories` when
    /// any are given.
    pub fn open(paths: &[PathBuf], categories: &[String], block_with: BlockWith) -> Result<Self> {
        let stamps = paths.iter().map(|p| stamp(p)).collect();
        let policy = read(paths, categories, block_with)?;
        Ok(Lists {
            paths: paths.to_vec(),
            categories: categories.to_vec(),
            block_with,
            current: RwLock::new(Arc::new(policy)),
            stamps: Mutex::new(stamps),
        })
    }

    /// The policy in hand.
    pub fn policy(&self) -> Arc<Policy> {
        // A poisoned lock means a reload panicked while swapping an `Arc`: the value is whole.
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Reads the lists again when a file changed (or always, `force`): `Ok(true)` when the
    /// policy was replaced, `Ok(false)` when nothing changed, the error (and the policy in
    /// hand kept) when a file cannot be read. Reloads run one at a time (the stamps' lock is
    /// held until the new policy is in), so an older read never replaces a newer one.
    pub fn reload(&self, force: bool) -> Result<bool> {
        let now: Vec<Stamp> = self.paths.iter().map(|p| stamp(p)).collect();
        let mut stamps = self.stamps.lock().unwrap_or_else(|p| p.into_inner());
        if !force && *stamps == now {
            return Ok(false);
        }
        // Remembered before reading: a file that fails is tried again only when it changes.
        *stamps = now;
        let policy = read(&self.paths, &self.categories, self.block_with)?;
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(policy);
        drop(stamps);
        Ok(true)
    }
}

/// The policy of the lists at `paths`.
fn read(paths: &[PathBuf], categories: &[String], block_with: BlockWith) -> Result<Policy> {
    let mut lists = Vec::with_capacity(paths.len());
    for path in paths {
        let mut list = Blocklist::open(path)?;
        // Only URL entries read `http://NAME/` as `check` does: the name, then its parents.
        if list.meta().scheme != KeyScheme::Expressions {
            return Err(Error::Scheme {
                path: path.clone(),
                scheme: list.meta().scheme.name(),
            });
        }
        if !categories.is_empty() {
            list.keep_categories(categories, path)?;
        }
        let name = path.file_stem().map_or_else(
            || list.meta().name.clone(),
            |s| s.to_string_lossy().into_owned(),
        );
        lists.push(Named { name, list });
    }
    Ok(Policy::new(lists, block_with).filtered(!categories.is_empty()))
}
