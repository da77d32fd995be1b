//! `sync`'s client: brings a local blocklist file to the version a publisher offers — the
//! whole file the first time, then the cheapest chain of deltas — checking every download
//! against the index (its SHA-256, signed with the index when a key is trusted), applying,
//! confirming the promised version and set fingerprint, then replacing the file atomically (a
//! `serve` or `squid-helper` reading it reloads as usual). Any failure along a chain falls back
//! to the whole file; a publisher going backwards is refused unless allowed.

use std::path::{Path, PathBuf};

use phishbloom_blocklist::atomic::{write_atomic, EditLock, DEFAULT_LOCK_TIMEOUT};
use phishbloom_blocklist::now;
use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::delta::AnyDelta;
use phishbloom_core::sync::{check_expiry, Index, LocalState, Plan, PublicKey, MAX_INDEX_BYTES};
use phishbloom_core::Blocklist;

use crate::error::{Error, Result};
use crate::fetch::{Fetch, Fetched};

/// The index's path relative to a list's base.
pub const INDEX_PATH: &str = "index.json";

/// What a client keeps of the last index it read.
struct LastIndex {
    /// Its `ETag`, for the next conditional request.
    etag: String,
    /// The version the file had then.
    version: u64,
    /// Its expiry (0: none).
    expires: u64,
}

impl LastIndex {
    fn of(etag: String, index: &Index) -> Self {
        LastIndex {
            etag,
            version: index.body.version,
            expires: index.body.expires,
        }
    }
}

/// How to sync.
#[derive(Default)]
pub struct SyncOptions {
    /// Refuse indexes not signed by this key.
    pub trust: Option<PublicKey>,
    /// Accept a published version older than the local one.
    pub allow_rollback: bool,
}

/// How a copy was brought up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// The whole file.
    Whole,
    /// A chain of this many deltas.
    Deltas(usize),
    /// The whole file, after a chain failed for this reason.
    WholeAfter(String),
}

/// What one sync did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The local copy is the published version.
    Current {
        /// The list's name.
        name: String,
        /// Its version.
        version: u64,
    },
    /// The local copy was replaced.
    Updated {
        /// The list's name.
        name: String,
        /// The version held before (none: no copy).
        from: Option<u64>,
        /// The version now held.
        to: u64,
        /// Bytes downloaded, index included.
        bytes: u64,
        /// How.
        via: Via,
    },
}

/// A client keeping one local file current from one published list.
pub struct Client {
    fetch: Box<dyn Fetch>,
    file: PathBuf,
    options: SyncOptions,
    /// The key the user trusts (`options.trust` as given); `options.trust` is the key trusted
    /// now, which a rotation from it moved on ([`crate::trust`]).
    root: Option<PublicKey>,
    /// The last index read: its `ETag`, the version the file had then, and its expiry (an
    /// index the server says is not modified is still refused once it expires).
    last: Option<LastIndex>,
    /// The least seconds between polls the last index asked for.
    min_interval: Option<u64>,
}

impl Client {
    /// A client of `fetch` keeping `file` current.
    pub fn new(fetch: Box<dyn Fetch>, file: &Path, mut options: SyncOptions) -> Client {
        let root = options.trust.take();
        options.trust = root
            .as_ref()
            .map(|root| crate::trust::effective(file, root));
        Client {
            fetch,
            file: file.to_path_buf(),
            options,
            root,
            last: None,
            min_interval: None,
        }
    }

    /// The least seconds between polls the publisher asked for in the last index read.
    pub fn min_interval(&self) -> Option<u64> {
        self.min_interval
    }

    /// One sync: fetch the index and whatever brings the file to it. A download that is not
    /// what the index named (the list changed between the index and the download, as a live
    /// `serve` list does) reads the index again, once.
    pub fn sync_once(&mut self) -> Result<Outcome> {
        match self.sync_attempt() {
            Err(Error::List(phishbloom_blocklist::Error::Core(
                phishbloom_core::Error::Download { .. }
                | phishbloom_core::Error::NotPromised { .. },
            )))
            | Err(Error::Status { status: 404, .. }) => {
                self.last = None;
                self.sync_attempt()
            }
            other => other,
        }
    }

    /// One pass of [`Client::sync_once`].
    fn sync_attempt(&mut self) -> Result<Outcome> {
        let local = self.read_local();
        let local_state = local.as_ref().map(LocalState::of);
        // Ask for the index conditionally only while the file is the version it was when
        // that index was read (an edited or replaced file needs the index again).
        let etag = match (&self.last, &local_state) {
            (Some(last), Some(state)) if last.version == state.version => Some(last.etag.as_str()),
            _ => None,
        };
        let fetched = self.fetch.get(INDEX_PATH, MAX_INDEX_BYTES as u64, etag)?;
        let (index_bytes, etag) = match fetched {
            Fetched::NotModified => {
                // Only asked with a local copy: the file is the version last synced.
                let (list, version) = match (&local, &local_state) {
                    (Some(list), Some(state)) => (list, state.version),
                    _ => unreachable!("a conditional request is only made with a local copy"),
                };
                // Asked only while `last` is set, by the match above.
                let expires = self.last.as_ref().map_or(0, |last| last.expires);
                let origin = self.fetch.locate(INDEX_PATH);
                check_expiry(&origin, &list.meta().name, expires, now())?;
                return Ok(Outcome::Current {
                    name: list.meta().name.clone(),
                    version,
                });
            }
            Fetched::Body { bytes, etag } => (bytes, etag),
        };
        let origin = self.fetch.locate(INDEX_PATH);
        let index = Index::from_json(&origin, &index_bytes, self.options.trust.as_ref())?;
        index.check_current(&origin, now())?;
        self.adopt_rotation(&index)?;
        self.min_interval = Some(index.body.min_interval);
        let plan = index.plan(local_state.clone(), self.options.allow_rollback)?;
        let mut bytes = index_bytes.len() as u64;
        let via = match plan {
            Plan::Current => {
                self.last = etag.map(|etag| LastIndex::of(etag, &index));
                return Ok(Outcome::Current {
                    name: index.body.name.clone(),
                    version: index.body.version,
                });
            }
            Plan::Whole(_) => {
                bytes += self.fetch_whole(&index, local_state.as_ref())?;
                Via::Whole
            }
            Plan::Chain(links) => {
                // `local` is Some: a chain is only planned from a local version.
                let list = local.expect("a chain starts from the local copy");
                match self.follow(&index, list, &links) {
                    Ok(fetched) => {
                        bytes += fetched;
                        Via::Deltas(links.len())
                    }
                    Err((fetched, why)) => {
                        bytes += fetched + self.fetch_whole(&index, local_state.as_ref())?;
                        Via::WholeAfter(why.to_string())
                    }
                }
            }
        };
        self.last = etag.map(|etag| LastIndex::of(etag, &index));
        Ok(Outcome::Updated {
            name: index.body.name.clone(),
            from: local_state.map(|s| s.version),
            to: index.body.version,
            bytes,
            via,
        })
    }

    /// Trusts from now on the key a verified index's rotations led to, when it is not the key
    /// trusted so far (the old key alone is then refused).
    fn adopt_rotation(&mut self, index: &Index) -> Result<()> {
        let (Some(root), Some(key)) = (&self.root, &index.verified_by) else {
            return Ok(());
        };
        if self.options.trust.as_ref() != Some(key) {
            crate::trust::adopt(&self.file, root, key)?;
            self.options.trust = Some(key.clone());
        }
        Ok(())
    }

    /// The local copy, if there is a readable one (a damaged copy is replaced by the whole
    /// file, as if there were none).
    fn read_local(&self) -> Option<Blocklist> {
        Blocklist::open(&self.file).ok()
    }

    /// Downloads the whole file, checks it and puts it in place; the bytes downloaded.
    fn fetch_whole(&self, index: &Index, expected: Option<&LocalState>) -> Result<u64> {
        let file = &index.body.file;
        let bytes = match self.fetch.get(&file.path, file.bytes, None)? {
            Fetched::Body { bytes, .. } => bytes,
            Fetched::NotModified => unreachable!("an unconditional request is never 304"),
        };
        file.check(&bytes)?;
        let list = Blocklist::from_bytes(self.fetch.locate(&file.path), &bytes)?;
        index.confirm(&list)?;
        self.replace(expected, |path| write_atomic(path, &[], &[&bytes]))?;
        Ok(bytes.len() as u64)
    }

    /// Downloads and applies a chain of deltas to `list`, confirms and saves it; the bytes
    /// downloaded, or those and why the chain failed.
    fn follow(
        &self,
        index: &Index,
        mut list: Blocklist,
        links: &[phishbloom_core::sync::DeltaLink],
    ) -> std::result::Result<u64, (u64, Error)> {
        let expected = LocalState::of(&list);
        let mut fetched = 0u64;
        for link in links {
            let bytes = match self.fetch.get(&link.file.path, link.file.bytes, None) {
                Ok(Fetched::Body { bytes, .. }) => bytes,
                Ok(Fetched::NotModified) => unreachable!("an unconditional request is never 304"),
                Err(e) => return Err((fetched, e)),
            };
            fetched += bytes.len() as u64;
            let step = (|| -> Result<()> {
                link.file.check(&bytes)?;
                let locate = self.fetch.locate(&link.file.path);
                let delta = AnyDelta::from_bytes(Path::new(&locate), &bytes)?;
                list.apply_any(&delta)?;
                Ok(())
            })();
            step.map_err(|e| (fetched, e))?;
        }
        index.confirm(&list).map_err(|e| (fetched, e.into()))?;
        self.replace(Some(&expected), |path| list.save(path, &[]).map(drop))
            .map_err(|e| (fetched, e))?;
        Ok(fetched)
    }

    /// Replaces the local file by `write`, under its edit lock when it exists (so a
    /// concurrent `add` or `apply` of the same file runs before or after, never between),
    /// unless the file changed since it was read as `expected` (its list, version and set;
    /// `None`: there was no readable copy): that change would be lost, so the sync fails and
    /// the next one starts from the new file.
    fn replace(
        &self,
        expected: Option<&LocalState>,
        write: impl FnOnce(&Path) -> phishbloom_blocklist::Result<()>,
    ) -> Result<()> {
        let _lock = if self.file.exists() {
            Some(EditLock::acquire(&self.file, DEFAULT_LOCK_TIMEOUT)?)
        } else {
            None
        };
        let now = self.read_local().map(|list| LocalState::of(&list));
        if now.as_ref() != expected {
            return Err(Error::Changed {
                path: self.file.clone(),
            });
        }
        write(&self.file)?;
        Ok(())
    }
}
