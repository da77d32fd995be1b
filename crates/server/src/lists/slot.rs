//! [`Slot`]: one served name — its file, the version served now (swapped atomically on
//! reload), the file's [`Stamp`] that tells a changed file, the last reload refused — and the
//! sync protocol over its last versions: deltas between them and the index that lists them
//! (docs/SYNC.md).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use phishbloom_core::delta::{Delta, DiffOptions, ListView};
use phishbloom_core::sync::{DeltaLink, Download, IndexBody, SecretKey};

use super::{unix_now, Served};
use crate::error::{Error, Result};

/// What identifies one version of a file on disk: replacing it by rename changes the inode,
/// rewriting it changes the length or the modification time, and any change of content changes
/// the file's head (its header and checksummed section table), which is hashed too — inode
/// numbers are reused and modification times are coarse, so a file replaced twice within one
/// clock tick is still told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    head: u64,
}

/// Bytes of a file's head hashed into its [`Stamp`]: the header and the section table of any
/// list with a few dozen sections.
const HEAD_BYTES: u64 = 4096;

impl Stamp {
    pub(super) fn of(path: &Path) -> Option<Stamp> {
        use std::hash::{Hash, Hasher};
        use std::io::Read;
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let mut head = Vec::new();
        // Only a regular file is read: opening a FIFO would wait for a writer.
        if m.is_file() {
            let file = std::fs::File::open(path).ok()?;
            file.take(HEAD_BYTES).read_to_end(&mut head).ok()?;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        head.hash(&mut hasher);
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            head: hasher.finish(),
        })
    }
}

/// Delta files by (from, to) version.
type DeltaCache = HashMap<(u64, u64), Arc<Vec<u8>>>;

/// One served name: its file (if any) and its current version.
pub struct Slot {
    /// The name.
    pub name: String,
    /// The file it is read from and saved to (filters created over the Redis protocol are
    /// not slots: see [`crate::adhoc`]).
    pub path: Option<PathBuf>,
    pub(super) current: ArcSwap<Served>,
    /// Serializes writers and reloads of this slot.
    writer: Mutex<()>,
    /// The file version last read or written (or refused).
    stamp: Mutex<Option<Stamp>>,
    /// Views of the last versions served (the current one last), for deltas.
    history: Mutex<VecDeque<Arc<ListView>>>,
    /// The last reload refused and when (seconds since the Unix epoch), until a reload succeeds:
    /// the list then serves an older file than the one on disk.
    problem: Mutex<Option<(String, u64)>>,
    /// Deltas made, by (from, to) version: a delta's bytes carry its creation time, so the one
    /// an index describes (length, SHA-256) must be the one `delta` sends.
    deltas: Mutex<DeltaCache>,
}

impl Slot {
    /// The slot `name`, read from and saved to `path`, serving `served` (read from the file
    /// version `stamp`), its version remembered for deltas.
    pub(super) fn new(name: String, path: PathBuf, served: Served, stamp: Option<Stamp>) -> Slot {
        let slot = Slot {
            name,
            path: Some(path),
            current: ArcSwap::from_pointee(served),
            writer: Mutex::new(()),
            stamp: Mutex::new(stamp),
            history: Mutex::new(VecDeque::new()),
            problem: Mutex::default(),
            deltas: Mutex::default(),
        };
        slot.remember(&slot.load());
        slot
    }

    /// The current version; hold it for the whole request.
    pub fn load(&self) -> Arc<Served> {
        self.current.load_full()
    }

    pub(super) fn lock_writer(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn set_stamp(&self, stamp: Option<Stamp>) {
        *self.stamp.lock().unwrap_or_else(PoisonError::into_inner) = stamp;
    }

    pub(super) fn stamp(&self) -> Option<Stamp> {
        *self.stamp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the version now served, for deltas from it later. Only lists with a verification
    /// section (the record of their entries) and not CaBF have views; the others keep none.
    pub(super) fn remember(&self, served: &Served) {
        let state = served.read();
        let origin = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(&self.name));
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        match ListView::of_blocklist(&state.list, &origin) {
            Ok(view) => {
                if history
                    .back()
                    .is_some_and(|last| last.version == view.version)
                {
                    history.pop_back();
                }
                history.push_back(Arc::new(view));
                while history.len() > DELTA_HISTORY {
                    history.pop_front();
                }
            }
            Err(_) => history.clear(),
        }
    }

    /// The last reload refused and when, if no reload succeeded since.
    pub fn problem(&self) -> Option<(String, u64)> {
        self.problem
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set_problem(&self, problem: Option<String>) {
        *self.problem.lock().unwrap_or_else(PoisonError::into_inner) =
            problem.map(|p| (p, unix_now()));
    }

    /// The versions deltas can start from (the current one included).
    pub fn delta_versions(&self) -> Vec<u64> {
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        history.iter().filter_map(|v| v.version).collect()
    }

    /// The delta from version `from` to the version served now, as a delta file; with `to`,
    /// only if that is the version served now (a client following an index asks for the
    /// version it promised). Made once per pair of versions and kept while both are.
    pub fn delta(&self, from: u64, to: Option<u64>) -> Result<Arc<Vec<u8>>> {
        let (old, new) = {
            let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
            let old = history.iter().find(|v| v.version == Some(from)).cloned();
            (old, history.back().cloned())
        };
        let (Some(old), Some(new)) = (old, new) else {
            return Err(Error::NoDelta {
                name: self.name.clone(),
                from,
                kept: self.delta_versions(),
            });
        };
        let current = new.version.unwrap_or(0);
        if to.is_some_and(|to| to != current) {
            return Err(Error::NoDelta {
                name: self.name.clone(),
                from,
                kept: self.delta_versions(),
            });
        }
        let mut cache = self.deltas.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bytes) = cache.get(&(from, current)) {
            return Ok(bytes.clone());
        }
        let options = DiffOptions {
            compact: false,
            patch_fpp: None,
            fpp: None,
            created: phishbloom_blocklist::now(),
        };
        let bytes = Arc::new(Delta::between(&old, &new, &options)?.to_bytes());
        // Only deltas to the version served now are asked for again.
        cache.retain(|&(_, to), _| to == current);
        cache.insert((from, current), bytes.clone());
        Ok(bytes)
    }

    /// The sync protocol's index of this list (docs/SYNC.md): the file at `file`, a delta at
    /// `delta?from=V&to=W` from every version kept, clients asked to wait `min_interval`
    /// seconds between polls; signed by `signer` when given, with an expiry
    /// ([`signed_index_expiry`] of `now`). Its `ETag` is the second value; the index is not made
    /// (`None`) when `held` says the client holds the index of that tag (its `If-None-Match`),
    /// so that a poll answered 304 costs neither deltas nor a signature.
    pub fn index(
        &self,
        min_interval: u64,
        signer: Option<&SecretKey>,
        now: u64,
        held: impl FnOnce(&str) -> bool,
    ) -> Result<(Option<Vec<u8>>, String)> {
        let served = self.load();
        // Everything the index says is the image's (a write may change the list meanwhile; the
        // file route then serves a newer image, the client's check fails, and it reads the
        // index again).
        let image = served.image()?;
        let (kind, meta) = &image.described;
        let to = meta.version;
        let expires = if signer.is_some() {
            signed_index_expiry(now)
        } else {
            0
        };
        // The expiry is in the tag: a client's 304 never outlives the index it holds.
        let etag = format!("\"index-{to}-{}-{expires}\"", image.checksum);
        if held(&etag) {
            return Ok((None, etag));
        }
        let deltas = self
            .delta_versions()
            .into_iter()
            .filter(|&from| from < to)
            .filter_map(|from| {
                // A version whose delta cannot be made is left out: clients there fetch the file.
                let bytes = self.delta(from, Some(to)).ok()?;
                Some(DeltaLink {
                    from,
                    to,
                    published: served.loaded_at,
                    file: Download::of(format!("delta?from={from}&to={to}"), &bytes),
                })
            })
            .collect();
        let mut body =
            IndexBody::describe_meta(*kind, meta, Download::of("file", &image.bytes), deltas);
        body.published = served.loaded_at;
        body.min_interval = min_interval;
        body.expires = expires;
        Ok((Some(body.to_json(signer)), etag))
    }
}

/// Days a signed index of a served list stays current, at least.
const SIGNED_INDEX_DAYS: u64 = 7;

/// Seconds in a day.
const DAY: u64 = 86_400;

/// The expiry a signed index of a served list names at `now`: the end of the day
/// [`SIGNED_INDEX_DAYS`] days on — between 7 and 8 days ahead, and the same all day, so that the
/// index (and its `ETag`) changes once a day while the list does not, and a client following
/// the server never holds an index near its expiry (a signed index cannot be refreshed by
/// anyone without the key, so a replayed one goes stale within the week).
pub fn signed_index_expiry(now: u64) -> u64 {
    (now / DAY + 1 + SIGNED_INDEX_DAYS) * DAY
}

/// Versions of a list whose views are kept for deltas. A view holds every entry's fingerprint
/// and categories (about 32 bytes an entry), so this bounds the memory deltas cost to four
/// copies of that; a client further behind fetches the whole file.
const DELTA_HISTORY: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_index_expires_at_the_end_of_the_day_a_week_on() {
        let now = 1_795_415_811; // 2026-11-23 06:36:51 UTC
        let expires = signed_index_expiry(now);
        assert_eq!(expires % DAY, 0);
        assert!((now + 7 * DAY..=now + 8 * DAY).contains(&expires));
        // The same all day, so the index changes once a day.
        assert_eq!(signed_index_expiry(now - now % DAY), expires);
        assert_eq!(signed_index_expiry(now - now % DAY + DAY - 1), expires);
    }
}
