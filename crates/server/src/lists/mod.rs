//! [`Lists`]: the served blocklists by name, each swapped atomically on reload.
//!
//! Every list lives in a [`Slot`] whose current [`Served`] value sits behind an
//! [`arc_swap::ArcSwap`]: a request takes the `Arc` once and answers from it to the end, so a
//! reload (SIGHUP, or the file replaced by rename) that swaps a new `Served` in never disturbs a
//! request in flight, and a new file that cannot be opened is refused while the old one keeps
//! serving. Writes (add, remove) are serialized per slot and change the current
//! list in place under its lock, then save it over its file (atomically, by rename) so a later
//! reload reads them back.
//!
//! This file holds the lists by name ([`Lists`], [`Registry`]), reloads and writes, and what
//! one version of a list is ([`Served`], [`State`], [`FileImage`]); `slot` holds one name's
//! versions and the sync protocol over them ([`Slot`]: deltas, the index).

mod slot;

use phishbloom_blocklist::BlocklistFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use bytes::Bytes;
use phishbloom_core::sections::Meta;
use phishbloom_core::Blocklist;
use phishbloom_core::Change;
use phishbloom_core::Kind;

use crate::adhoc::AdHoc;
use crate::error::{Error, Result};
use crate::metrics::{ListLabels, Metrics};
pub use slot::Slot;
use slot::Stamp;

/// One list argument: `FILE` (named by its stem) or `NAME=FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListSpec {
    /// The name clients use (`list=` in HTTP, the key in the Redis protocol).
    pub name: String,
    /// The blocklist file.
    pub path: PathBuf,
}

impl ListSpec {
    /// Parses `FILE` or `NAME=FILE`. A path that exists is taken whole even if it holds `=`.
    pub fn parse(arg: &str) -> Result<Self> {
        let bad = || Error::BadListSpec {
            spec: arg.to_owned(),
        };
        if let Some((name, path)) = arg.split_once('=') {
            if !Path::new(arg).exists() {
                if name.is_empty() || path.is_empty() {
                    return Err(bad());
                }
                return Ok(ListSpec {
                    name: name.to_owned(),
                    path: PathBuf::from(path),
                });
            }
        }
        let path = PathBuf::from(arg);
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .ok_or_else(bad)?
            .to_owned();
        Ok(ListSpec { name, path })
    }
}

/// A served list: the blocklist, and what RedisBloom's commands ask of it.
pub struct State {
    /// The blocklist.
    pub list: Blocklist,
}

impl State {
    fn of(list: Blocklist) -> Self {
        State { list }
    }

    /// Whether the list adds layers as it fills (RedisBloom's scaling filters).
    pub fn grows(&self) -> bool {
        self.list.layers().is_some_and(|l| l.grows())
    }

    /// The entries its structure holds room for, over all its layers (RedisBloom's capacity);
    /// for CaBF, its entries.
    pub fn capacity(&self) -> u64 {
        match self.list.layers() {
            Some(layers) => layers.layers().iter().map(|l| l.capacity()).sum(),
            None => self.list.meta().entries,
        }
    }

    /// Bytes of its filters, and how many there are (RedisBloom's Size and Number of filters).
    pub fn filters(&self) -> (u64, usize) {
        match self.list.layers() {
            Some(layers) => (layers.size_in_bytes(), layers.layers().len()),
            None => {
                let description = self.list.describe();
                (
                    description.filters.iter().map(|f| f.bytes).sum(),
                    description.filters.len(),
                )
            }
        }
    }
}

/// A served blocklist file image: the bytes `GET /v1/lists/{name}/file` sends and its `ETag`.
pub struct FileImage {
    /// The file.
    pub bytes: Bytes,
    /// The file checksum (xxh3-64 of the section table) as 16 hex digits, unquoted.
    pub checksum: String,
    /// The kind and metadata these bytes hold (the list may change after the image is made:
    /// what describes the image is this, not the list).
    pub described: (Kind, Meta),
}

/// One version of a served list.
pub struct Served {
    state: RwLock<State>,
    /// When it was loaded or created (seconds since the Unix epoch).
    pub loaded_at: u64,
    image: Mutex<Option<Arc<FileImage>>>,
    /// The checksum of the file this version was last saved as (a list changed over HTTP or
    /// RESP has no directory of its own until read again).
    saved: Mutex<Option<u64>>,
}

impl Served {
    fn new(state: State, image: Option<FileImage>) -> Self {
        Served {
            state: RwLock::new(state),
            loaded_at: unix_now(),
            image: Mutex::new(image.map(Arc::new)),
            saved: Mutex::new(None),
        }
    }

    /// The list, for reading. A lock poisoned by a panicking writer still holds a whole list
    /// (writers change it through the library's own methods), so it is used as it is.
    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The file image (built from the list when it changed since it was read or last built).
    pub fn image(&self) -> Result<Arc<FileImage>> {
        let mut cached = self.image.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(image) = &*cached {
            return Ok(image.clone());
        }
        let bytes = self.read().list.to_bytes();
        // Reading the image back gives its directory, hence its checksum, with every check the
        // file reader makes.
        let copy = Blocklist::from_bytes("<served list>", &bytes)?;
        let checksum = copy
            .directory()
            .map(|d| format!("{:016x}", d.checksum))
            .unwrap_or_default();
        let image = Arc::new(FileImage {
            bytes: Bytes::from(bytes),
            checksum,
            described: (copy.kind(), copy.meta().clone()),
        });
        *cached = Some(image.clone());
        Ok(image)
    }

    fn invalidate_image(&self) {
        *self.image.lock().unwrap_or_else(PoisonError::into_inner) = None;
        *self.saved.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The file checksum (xxh3-64 of its section table) of this version: the one it was read
    /// with, or the one it was last saved with; `None` for a list held only in memory.
    pub fn file_checksum(&self) -> Option<u64> {
        let read = self.read().list.directory().map(|d| d.checksum);
        read.or(*self.saved.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The served lists, in the order given, by name.
#[derive(Default)]
pub struct Registry {
    order: Vec<Arc<Slot>>,
    index: HashMap<Vec<u8>, usize>,
}

impl Registry {
    /// Every slot, in order.
    pub fn slots(&self) -> &[Arc<Slot>] {
        &self.order
    }

    /// The slot named `name`.
    pub fn get(&self, name: &[u8]) -> Option<&Arc<Slot>> {
        self.index.get(name).map(|&i| &self.order[i])
    }

    fn with(&self, slot: Arc<Slot>) -> Registry {
        let mut order = self.order.clone();
        let mut index = self.index.clone();
        index.insert(slot.name.as_bytes().to_vec(), order.len());
        order.push(slot);
        Registry { order, index }
    }
}

/// What a reload pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Lists swapped to a new file.
    pub reloaded: Vec<String>,
    /// Lists whose new file was refused, with why.
    pub failed: Vec<(String, String)>,
}

/// Every served list, and the metrics they report to.
pub struct Lists {
    registry: ArcSwap<Registry>,
    metrics: Arc<Metrics>,
    /// Whether a reload may load an older list version than the one served.
    allow_rollback: AtomicBool,
    /// Filters created over the Redis protocol: apart from the served lists.
    adhoc: AdHoc,
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Opens the file at `path` with every check of [`Blocklist::open`].
fn open(path: &Path) -> Result<(State, FileImage)> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::io(format!("cannot read the blocklist {}", path.display()), e))?;
    let list = Blocklist::from_bytes(path, &bytes)?;
    let checksum = list
        .directory()
        .map(|d| format!("{:016x}", d.checksum))
        .unwrap_or_default();
    let described = (list.kind(), list.meta().clone());
    Ok((
        State::of(list),
        FileImage {
            bytes: Bytes::from(bytes),
            checksum,
            described,
        },
    ))
}

impl Lists {
    /// Opens every file (all of them, or an error naming the first that fails).
    pub fn open(specs: &[ListSpec], metrics: Arc<Metrics>) -> Result<Self> {
        let mut registry = Registry::default();
        for spec in specs {
            if registry.get(spec.name.as_bytes()).is_some() {
                return Err(Error::DuplicateName {
                    name: spec.name.clone(),
                });
            }
            let stamp = Stamp::of(&spec.path);
            let (state, image) = open(&spec.path)?;
            let served = Served::new(state, Some(image));
            let slot = Slot::new(spec.name.clone(), spec.path.clone(), served, stamp);
            registry = registry.with(Arc::new(slot));
        }
        let lists = Lists {
            registry: ArcSwap::from_pointee(registry),
            metrics,
            allow_rollback: AtomicBool::new(false),
            adhoc: AdHoc::default(),
        };
        for slot in lists.registry().slots() {
            lists.report(slot);
        }
        Ok(lists)
    }

    /// Lets reloads load a file of an older list version than the one served (refused and
    /// counted otherwise: clients holding the newer version would refuse its deltas).
    pub fn set_allow_rollback(&self, allow: bool) {
        self.allow_rollback.store(allow, Ordering::Relaxed);
    }

    /// The filters created over the Redis protocol (never asked by the HTTP check).
    pub fn adhoc(&self) -> &AdHoc {
        &self.adhoc
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The lists now.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.load_full()
    }

    /// The slot named `name`.
    pub fn get(&self, name: &[u8]) -> Option<Arc<Slot>> {
        self.registry.load().get(name).cloned()
    }

    /// The slot named `name`, or [`Error::UnknownList`].
    pub fn require(&self, name: &str) -> Result<Arc<Slot>> {
        self.get(name.as_bytes()).ok_or_else(|| Error::UnknownList {
            name: name.to_owned(),
        })
    }

    fn report(&self, slot: &Slot) {
        let served = slot.load();
        let state = served.read();
        let meta = state.list.meta();
        let bytes = slot
            .path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        self.metrics
            .set_list(&slot.name, meta.version, meta.entries, bytes);
    }

    /// Reloads the lists whose file changed on disk since it was last read (or every list
    /// with a file, if `force`), each in turn; a file that cannot be opened is refused,
    /// logged and counted, and the old list keeps serving.
    pub fn reload(&self, force: bool) -> ReloadReport {
        let mut report = ReloadReport::default();
        for slot in self.registry().slots() {
            let Some(path) = &slot.path else { continue };
            let stamp = Stamp::of(path);
            if !force && stamp == slot.stamp() {
                continue;
            }
            // Open without the writer lock: requests and writes go on meanwhile.
            let opened = open(path);
            let _writer = slot.lock_writer();
            let labels = ListLabels {
                list: slot.name.clone(),
            };
            let opened = opened.and_then(|(state, image)| {
                let (old, new) = (slot.load().read().list.meta().clone(), state.list.meta());
                // A rebuild of the same set under a fresh version number is not a rollback.
                let rollback = new.version < old.version && new.fingerprint != old.fingerprint;
                if rollback && !self.allow_rollback.load(Ordering::Relaxed) {
                    self.metrics.reload_rollbacks.get_or_create(&labels).inc();
                    return Err(Error::Rollback {
                        name: slot.name.clone(),
                        found: new.version,
                        served: old.version,
                    });
                }
                Ok((state, image))
            });
            match opened {
                Ok((state, image)) => {
                    let served = Arc::new(Served::new(state, Some(image)));
                    slot.remember(&served);
                    slot.current.store(served);
                    slot.set_stamp(stamp);
                    slot.set_problem(None);
                    self.metrics.reloads.get_or_create(&labels).inc();
                    tracing::info!(list = %slot.name, path = %path.display(), "reloaded");
                    report.reloaded.push(slot.name.clone());
                }
                Err(error) => {
                    // Remember the refused version so it is not retried until it changes again.
                    slot.set_stamp(stamp);
                    slot.set_problem(Some(error.to_string()));
                    self.metrics.reload_failures.get_or_create(&labels).inc();
                    tracing::error!(list = %slot.name, %error, "reload refused; the old list keeps serving");
                    report.failed.push((slot.name.clone(), error.to_string()));
                }
            }
            drop(_writer);
            self.report(slot);
        }
        report
    }

    /// Adds items to list `name` (in `category`, or the list's own), saving it over its file.
    pub fn add(&self, name: &str, items: &[&[u8]], category: Option<&str>) -> Result<Change> {
        let slot = self.require(name)?;
        self.change(&slot, |state| Ok(state.list.add(items, category)?))
    }

    /// Removes items from list `name` (for kinds that can delete), saving it over its file.
    pub fn remove(&self, name: &str, items: &[&[u8]]) -> Result<Change> {
        let slot = self.require(name)?;
        self.change(&slot, |state| Ok(state.list.remove(items, None)?))
    }

    /// Runs `apply` on the slot's current list under its locks, then saves it to its file. If
    /// `apply` fails, the list may hold part of the change (the library's rule): nothing is
    /// saved, and a list read from a file is read again from it.
    pub fn change<T>(&self, slot: &Slot, apply: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
        let _writer = slot.lock_writer();
        let served = slot.load();
        let result = {
            let mut state = served.write();
            let result = apply(&mut state);
            // The version just made: the image served and the file saved carry one time.
            if result.is_ok() && state.list.directory().is_none() {
                state.list.stamp(phishbloom_blocklist::now());
            }
            result
        };
        served.invalidate_image();
        if let Some(path) = &slot.path {
            match &result {
                Ok(_) => {
                    let directory = served.read().list.save(path, &[])?;
                    *served.saved.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(directory.checksum);
                    slot.set_stamp(Stamp::of(path));
                    slot.remember(&served);
                }
                Err(_) => {
                    if let Ok((state, image)) = open(path) {
                        slot.current
                            .store(Arc::new(Served::new(state, Some(image))));
                        slot.set_stamp(Stamp::of(path));
                    }
                }
            }
        }
        drop(_writer);
        self.report(slot);
        result
    }
}

/// Adds one item the way RedisBloom's `BF.ADD` does: `Ok(true)` if it was new, `Ok(false)` if
/// the list already answered for it, [`Error::Full`] if it is new and a list that does not grow
/// holds as many entries as it was sized for (the list's own rule, as every add path has it).
pub fn add_item(state: &mut State, item: &[u8]) -> Result<bool> {
    match state.list.add(&[item], None) {
        Ok(change) => Ok(change.changed > 0),
        Err(error) => Err(Error::from_list(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::engine::Scratch;
    use phishbloom_core::keys::KeyScheme;
    use phishbloom_core::{BuildOptions, KeyList};

    fn keys_file(dir: &Path, name: &str, keys: &[&str]) -> PathBuf {
        let mut list = KeyList::default();
        for key in keys {
            list.push(key.as_bytes());
        }
        let options = BuildOptions {
            name: name.into(),
            verify: true,
            // Room to add: a list sized for exactly its keys is full.
            capacity: Some(16),
            ..BuildOptions::default()
        };
        let blocklist =
            Blocklist::from_keys(&[(name.into(), list)], KeyScheme::Exact, &options).unwrap();
        let path = dir.join(format!("{name}.bloom"));
        blocklist.save(&path, &[]).unwrap();
        path
    }

    #[test]
    fn specs_name_lists_by_stem_or_prefix() {
        assert_eq!(
            ListSpec::parse("dir/phish.bloom").unwrap(),
            ListSpec {
                name: "phish".into(),
                path: "dir/phish.bloom".into()
            }
        );
        assert_eq!(
            ListSpec::parse("p=dir/x.bloom").unwrap(),
            ListSpec {
                name: "p".into(),
                path: "dir/x.bloom".into()
            }
        );
        assert!(ListSpec::parse("=x").is_err());
        assert!(ListSpec::parse("p=").is_err());
    }

    #[test]
    fn reload_swaps_changed_files_and_refuses_corrupt_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = keys_file(dir.path(), "k", &["a"]);
        let metrics = Arc::new(Metrics::new());
        let lists =
            Lists::open(&[ListSpec::parse(path.to_str().unwrap()).unwrap()], metrics).unwrap();
        let mut scratch = Scratch::default();
        let slot = lists.get(b"k").unwrap();
        let old = slot.load();
        assert!(old.read().list.check(b"a", &mut scratch).listed());
        assert_eq!(lists.reload(false), ReloadReport::default());

        // Replaced by rename: swapped in; the old version still answers for whoever holds it.
        let other = keys_file(dir.path(), "tmp", &["b"]);
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(lists.reload(false).reloaded, vec!["k".to_string()]);
        let new = slot.load();
        assert!(new.read().list.check(b"b", &mut scratch).listed());
        assert!(!new.read().list.check(b"a", &mut scratch).listed());
        assert!(old.read().list.check(b"a", &mut scratch).listed());

        // A corrupt file is refused once, and the list keeps serving.
        std::fs::write(dir.path().join("bad"), b"not a blocklist").unwrap();
        std::fs::rename(dir.path().join("bad"), &path).unwrap();
        let report = lists.reload(false);
        assert_eq!(report.failed.len(), 1);
        assert!(slot.load().read().list.check(b"b", &mut scratch).listed());
        assert_eq!(lists.reload(false), ReloadReport::default());
        assert!(lists
            .metrics()
            .encode()
            .contains("phishbloom_reload_failures_total{list=\"k\"} 1"));
    }

    #[test]
    fn writes_are_saved_and_not_reloaded_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = keys_file(dir.path(), "k", &["a"]);
        let lists = Lists::open(
            &[ListSpec::parse(path.to_str().unwrap()).unwrap()],
            Arc::default(),
        )
        .unwrap();
        let change = lists.add("k", &[b"b", b"a"], None).unwrap();
        assert_eq!(
            change,
            Change {
                changed: 1,
                unchanged: 1
            }
        );
        assert_eq!(lists.reload(false), ReloadReport::default());
        let reopened = Blocklist::open(&path).unwrap();
        assert!(reopened.check(b"b", &mut Scratch::default()).listed());
        let image = lists.get(b"k").unwrap().load().image().unwrap();
        assert_eq!(&image.bytes[..], &std::fs::read(&path).unwrap()[..]);
        assert!(matches!(
            lists.add("nope", &[b"x"], None),
            Err(Error::UnknownList { .. })
        ));
    }

    #[test]
    fn image_of_an_opened_file_is_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = keys_file(dir.path(), "k", &["a", "b"]);
        let bytes = std::fs::read(&path).unwrap();
        let list = Blocklist::open(&path).unwrap();
        assert_eq!(list.to_bytes(), bytes);
    }
}
