//! `publish`: a list as a static directory any web server or CDN can host — the whole file,
//! the deltas that lead to it, and `index.json` (docs/SYNC.md) — kept current by running it
//! again after every change.
//!
//! ```text
//! DIR/index.json                       what is published (signed with --sign)
//! DIR/files/v12-0a1b2c3d4e5f.bloom      the whole file of version 12
//! DIR/deltas/11-12-9f3a0c1d2e4b.delta   from version 11 to 12, one per publish (a chain)
//! ```
//!
//! Every file is written atomically, and the files an index names are written before it, so a
//! client never reads a half-written file or an index naming one that is not there yet. Files
//! the new index no longer names stay until the next publish (a client that read the previous
//! index can still fetch them), then go.
//!
//! The chain is pruned as CRLite's publisher does: a delta goes when more than `--keep` follow
//! it, when it is older than `--max-chain-age`, or when the chain from it costs more bytes than
//! the whole file (a client that far behind fetches the file). A list without a verification
//! section (no entry fingerprints, so no delta can be computed) is published as whole files.
//!
//! What clients get is, by default, the list's compact form ([`Ship::Compact`]): its entries'
//! fingerprint prefixes in a universe kept while a chain of deltas lasts (so each delta merges
//! into the copy a client holds, and every copy of a version is the same table), about a third
//! of a verified file; the list published stays the publisher's own.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use phishbloom_blocklist::atomic::{write_atomic, EditLock, DEFAULT_LOCK_TIMEOUT};
use phishbloom_core::delta::{Delta, DiffOptions, ListView};
use phishbloom_core::engine::per_probe_fpp;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::chain_universe;
use phishbloom_core::sync::rotation::Rotation;
use phishbloom_core::sync::{DeltaLink, Download, Index, IndexBody, SecretKey};
use phishbloom_core::{Blocklist, Kind};

use crate::error::{Error, Result};

/// The index's file name in a publish directory.
pub const INDEX: &str = "index.json";

/// The key hand-overs kept in a publish directory (a JSON array of rotations).
pub const ROTATIONS: &str = "rotations.json";

/// What clients get of a list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ship {
    /// The list's compact form at this false-positive rate per checked item, when it has one
    /// (a list with a verification section, of URLs or keys); the file as it is otherwise.
    Compact {
        /// The rate per checked item.
        fpp: f64,
    },
    /// The file as it is.
    File,
}

/// How to publish.
pub struct PublishOptions {
    /// What clients get.
    pub ship: Ship,
    /// Deltas kept at most (the last ones of the chain).
    pub keep: usize,
    /// The least seconds between a client's polls, written into the index.
    pub min_interval: u64,
    /// Deltas older than this many seconds are dropped (`None`: no age limit).
    pub max_chain_age: Option<u64>,
    /// The key that signs the index.
    pub sign: Option<SecretKey>,
    /// The key `sign` takes over from: its hand-over to `sign` is kept in the directory
    /// (`rotations.json`) and carried by every index from then on, so that clients trusting it
    /// follow to `sign` (docs/SYNC.md, "Rotating the key").
    pub rotate_from: Option<SecretKey>,
    /// Publish a version older than the published one (clients need `--allow-rollback`).
    pub allow_rollback: bool,
    /// Now, in seconds since the Unix epoch.
    pub now: u64,
    /// Seconds the index stays current after `now` (`None`: it never expires): clients refuse
    /// it afterwards, so publish again within it, changed or not.
    pub expires: Option<u64>,
}

/// What a publish did.
#[derive(Debug)]
pub struct Published {
    /// The index written.
    pub index: IndexBody,
    /// The version published before, if any.
    pub previous: Option<u64>,
    /// The delta made from it, if one could be.
    pub delta: Option<DeltaLink>,
    /// Why no delta was made, when a previous version was published.
    pub no_delta: Option<String>,
    /// Files removed (named by no index any more).
    pub removed: usize,
    /// Whether clients get the list's compact form.
    pub compact: bool,
    /// Why they get the file as it is though compact shipping was asked for.
    pub not_compact: Option<String>,
}

/// Publishes the list `file` into `dir` (created if missing).
pub fn publish(file: &Path, dir: &Path, options: &PublishOptions) -> Result<Published> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, "read", e))?;
    let list = Blocklist::from_bytes(file, &bytes)?;
    for sub in ["files", "deltas"] {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, "create", e))?;
    }
    // One publisher at a time (`DIR.lock` beside the directory): two would remove each other's
    // new files.
    let _lock = EditLock::acquire(dir, DEFAULT_LOCK_TIMEOUT)?;
    let previous = read_index(dir)?;
    // Signing, the chain carried over is re-checked: the previous index must carry this key's
    // signature and every kept delta on disk its SHA-256, so that whoever can write into the
    // hosted directory cannot have a change of theirs signed. Otherwise the chain restarts.
    let previous = match (previous, &options.sign) {
        (Some(prev), Some(key)) => {
            Some(trusted_chain(dir, prev, key, options.rotate_from.as_ref()))
        }
        (previous, _) => previous,
    };
    let (list, bytes, not_compact) = match shipped(list, dir, previous.as_ref(), options.ship)? {
        Shipped::Compact(list) => {
            let bytes = list.to_bytes();
            (list, bytes, None)
        }
        Shipped::File(list, why) => (list, bytes, why),
    };
    let compact = list.kind() == Kind::Compact;
    let chain = extend_chain(dir, file, &list, previous.as_ref(), options)?;
    let mut deltas = chain.deltas;
    let whole = write_whole(dir, &bytes, list.meta().version)?;
    prune(&mut deltas, whole.bytes, options);

    let mut body = IndexBody::describe(&list, whole, deltas);
    body.published = options.now;
    body.min_interval = options.min_interval;
    body.expires = options
        .expires
        .map_or(0, |after| options.now.saturating_add(after));
    let rotations = match &options.sign {
        Some(key) => rotations(dir, key, options.rotate_from.as_ref())?,
        None => Vec::new(),
    };
    let json = body.to_json_with(options.sign.as_ref(), &rotations);
    write_atomic(&dir.join(INDEX), &[], &[&json])?;

    // The files named by this index or the one before it stay; the rest go.
    let mut keep: HashSet<PathBuf> = HashSet::new();
    for index in [Some(&body), previous.as_ref().map(|p| &p.body)]
        .into_iter()
        .flatten()
    {
        keep.insert(dir.join(&index.file.path));
        keep.extend(index.deltas.iter().map(|d| dir.join(&d.file.path)));
    }
    let removed = remove_unnamed(dir, &keep)?;
    Ok(Published {
        previous: previous.map(|p| p.body.version),
        index: body,
        delta: chain.made,
        no_delta: chain.no_delta,
        removed,
        compact,
        not_compact,
    })
}

/// The list clients get.
enum Shipped {
    /// Its compact form.
    Compact(Blocklist),
    /// The list as it is, and why not compact when that was asked for.
    File(Blocklist, Option<String>),
}

/// The list clients get of `list` as `ship` says: its compact form in the universe of the
/// published chain while that keeps the rate ([`chain_universe`]), or in a new one.
fn shipped(list: Blocklist, dir: &Path, previous: Option<&Index>, ship: Ship) -> Result<Shipped> {
    let Ship::Compact { fpp } = ship else {
        return Ok(Shipped::File(list, None));
    };
    let why = match list.kind() {
        Kind::Compact => Some("the file is compact already: deltas need the verified list"),
        Kind::Near | Kind::Cabf => Some("its kind has no compact form"),
        _ if list.verification().is_none() => {
            Some("it has no verification section (build it with --verify)")
        }
        _ if list.meta().scheme == KeyScheme::Keywords => {
            Some("a keyword list has no compact form")
        }
        _ => None,
    };
    if let Some(why) = why {
        return Ok(Shipped::File(list, Some(why.to_string())));
    }
    let per_probe = per_probe_fpp(fpp, list.meta().probes_per_item.max(1));
    let current = previous.and_then(|prev| published_universe(dir, &prev.body.file));
    let universe = chain_universe(list.meta().entries, per_probe, current);
    Ok(Shipped::Compact(list.to_compact(universe, fpp)?))
}

/// The universe of the compact table published as `file` in `dir`, if it is one.
fn published_universe(dir: &Path, file: &Download) -> Option<u64> {
    let path = dir.join(&file.path);
    let bytes = std::fs::read(&path).ok()?;
    file.check(&bytes).ok()?;
    let list = Blocklist::from_bytes(&path, &bytes).ok()?;
    Some(list.resolver().compact()?.map().universe())
}

/// The chain of deltas a publish starts from, before pruning.
struct Chain {
    /// The deltas, oldest first.
    deltas: Vec<DeltaLink>,
    /// The delta made by this publish, if one could be.
    made: Option<DeltaLink>,
    /// Why no delta was made, when a previous version was published.
    no_delta: Option<String>,
}

/// The previous chain carried over: unchanged when `list` is the version published already,
/// extended by a delta from it when `list` is newer (written into `dir`), restarted on a
/// rollback (refused unless allowed) or when no delta can be made.
fn extend_chain(
    dir: &Path,
    file: &Path,
    list: &Blocklist,
    previous: Option<&Index>,
    options: &PublishOptions,
) -> Result<Chain> {
    let mut chain = Chain {
        deltas: Vec::new(),
        made: None,
        no_delta: None,
    };
    let Some(prev) = previous else {
        return Ok(chain);
    };
    let meta = list.meta();
    let fingerprint = meta.fingerprint.to_string();
    let same = prev.body.version == meta.version && prev.body.set_fingerprint == fingerprint;
    if same {
        chain.deltas = prev.body.deltas.clone();
    } else if prev.body.version >= meta.version {
        if !options.allow_rollback {
            return Err(Error::Rollback {
                file: file.to_path_buf(),
                version: meta.version,
                published: prev.body.version,
            });
        }
        chain.no_delta = Some("a rollback starts a new chain".to_string());
    } else {
        match delta_from(dir, &prev.body.file, list, file, options.now) {
            Ok(delta) => {
                let link = write_delta(dir, prev.body.version, meta.version, &delta, options.now)?;
                chain.deltas = prev.body.deltas.clone();
                chain.deltas.push(link.clone());
                chain.made = Some(link);
            }
            Err(why) => chain.no_delta = Some(why),
        }
    }
    Ok(chain)
}

/// Writes the delta from version `from` to `to` into `dir`; answers its link.
fn write_delta(dir: &Path, from: u64, to: u64, delta: &[u8], now: u64) -> Result<DeltaLink> {
    // Named by content too: a CDN never serves a stale delta of that name.
    let sha = phishbloom_core::sync::sha256_hex(delta);
    let path = format!("deltas/{from}-{to}-{}.delta", &sha[..12]);
    write_atomic(&dir.join(&path), &[], &[delta])?;
    Ok(DeltaLink {
        from,
        to,
        published: now,
        file: Download::of(path, delta),
    })
}

/// Writes the whole file of `version` into `dir` (once: its name holds its content's hash);
/// answers its download.
fn write_whole(dir: &Path, bytes: &[u8], version: u64) -> Result<Download> {
    let sha = phishbloom_core::sync::sha256_hex(bytes);
    let file_path = format!("files/v{version}-{}.bloom", &sha[..12]);
    let whole = Download {
        path: file_path.clone(),
        bytes: bytes.len() as u64,
        sha256: sha,
    };
    if !dir.join(&file_path).exists() {
        write_atomic(&dir.join(&file_path), &[], &[bytes])?;
    }
    Ok(whole)
}

/// The previous index with only what `key` (or the key it takes over from) vouches for:
/// unchanged if it carries such a valid signature and every delta it names is on disk with its
/// SHA-256; with no deltas otherwise (a new chain starts from the file it names).
fn trusted_chain(dir: &Path, mut prev: Index, key: &SecretKey, from: Option<&SecretKey>) -> Index {
    let path = dir.join(INDEX);
    let signed = std::fs::read(&path).is_ok_and(|bytes| {
        [Some(key), from].into_iter().flatten().any(|k| {
            Index::from_json(&path.display().to_string(), &bytes, Some(&k.public())).is_ok()
        })
    });
    let intact = prev.body.deltas.iter().all(|d| {
        std::fs::read(dir.join(&d.file.path)).is_ok_and(|bytes| d.file.check(&bytes).is_ok())
    });
    if !(signed && intact) {
        prev.body.deltas.clear();
    }
    prev
}

/// The key hand-overs kept in `dir`: those of `rotations.json`, with `from`'s hand-over to
/// `key` added (and the file rewritten) when it is new. Each leads to the next key, ending at
/// `key`; a hand-over to any other key is refused (it would lead clients past `key`).
fn rotations(dir: &Path, key: &SecretKey, from: Option<&SecretKey>) -> Result<Vec<Rotation>> {
    let path = dir.join(ROTATIONS);
    let mut kept: Vec<Rotation> = match std::fs::read(&path) {
        Ok(bytes) => {
            phishbloom_core::sync::rotation::from_json(&path.display().to_string(), &bytes)?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(&path, "read", e)),
    };
    if let Some(from) = from {
        let hand_over = from.hand_over(&key.public());
        if !kept.contains(&hand_over) {
            kept.push(hand_over);
            write_atomic(
                &path,
                &[],
                &[&phishbloom_core::sync::rotation::to_json(&kept)],
            )?;
        }
    }
    // The chain must end at the signing key, so that a client following it checks this index.
    if kept
        .last()
        .is_some_and(|last| last.key != key.public().to_hex())
    {
        return Err(Error::Directory {
            path: dir.to_path_buf(),
            problem: format!(
                "its key rotations ({}) do not end at the signing key {}: sign with the last \
                 key rotated to, or rotate to this one with --rotate-from",
                path.display(),
                key.public().id()
            ),
        });
    }
    Ok(kept)
}

/// The index published in `dir`, if there is one.
pub fn read_index(dir: &Path) -> Result<Option<Index>> {
    let path = dir.join(INDEX);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, "read", e)),
    };
    let index = Index::from_json(&path.display().to_string(), &bytes, None).map_err(|e| {
        Error::Directory {
            path: dir.to_path_buf(),
            problem: format!(
                "{e}; publish into an empty directory, or remove the damaged index to start over"
            ),
        }
    })?;
    Ok(Some(index))
}

/// The delta from the published file to `list`, or why none can be made.
fn delta_from(
    dir: &Path,
    published: &Download,
    list: &Blocklist,
    file: &Path,
    now: u64,
) -> std::result::Result<Vec<u8>, String> {
    let old_path = dir.join(&published.path);
    let old_bytes = std::fs::read(&old_path).map_err(|e| {
        format!(
            "the published file {} cannot be read: {e}",
            old_path.display()
        )
    })?;
    published.check(&old_bytes).map_err(|e| e.to_string())?;
    let old = Blocklist::from_bytes(&old_path, &old_bytes).map_err(|e| e.to_string())?;
    if old.kind() == Kind::Near && list.kind() == Kind::Near {
        let delta = old.near_delta_to(list, now).map_err(|e| e.to_string())?;
        return Ok(delta.to_bytes());
    }
    let (old, new) = match (old.kind(), list.kind()) {
        (Kind::Compact, Kind::Compact) => (ListView::of_compact(&old), ListView::of_compact(list)),
        (Kind::Compact, _) | (_, Kind::Compact) => {
            return Err("the published file and this one are not both compact".to_string())
        }
        _ => (
            ListView::of_blocklist(&old, &old_path),
            ListView::of_blocklist(list, file),
        ),
    };
    let (old, new) = (
        old.map_err(|e| e.to_string())?,
        new.map_err(|e| e.to_string())?,
    );
    if old.universe != new.universe {
        return Err(
            "the compact table takes a new universe (the list grew or shrank past \
                    its room), so a new chain starts"
                .to_string(),
        );
    }
    let options = DiffOptions {
        compact: false,
        patch_fpp: None,
        fpp: None,
        created: now,
    };
    let delta = Delta::between(&old, &new, &options).map_err(|e| e.to_string())?;
    Ok(delta.to_bytes())
}

/// Drops the deltas the options no longer keep: all but the last `keep`, those older than
/// the chain age, and those whose chain to the newest version costs more than the file.
fn prune(deltas: &mut Vec<DeltaLink>, file_bytes: u64, options: &PublishOptions) {
    deltas.sort_by_key(|d| (d.to, d.from));
    if deltas.len() > options.keep {
        deltas.drain(..deltas.len() - options.keep);
    }
    if let Some(age) = options.max_chain_age {
        deltas.retain(|d| options.now.saturating_sub(d.published) <= age);
    }
    // From the newest back: the bytes of the chain from each delta onwards.
    let mut cost = 0u64;
    let mut first = deltas.len();
    for (i, d) in deltas.iter().enumerate().rev() {
        cost = cost.saturating_add(d.file.bytes);
        if cost >= file_bytes {
            break;
        }
        first = i;
    }
    deltas.drain(..first);
}

/// Removes the files under `files/` and `deltas/` not in `keep`; how many.
fn remove_unnamed(dir: &Path, keep: &HashSet<PathBuf>) -> Result<usize> {
    let mut removed = 0;
    for sub in ["files", "deltas"] {
        let folder = dir.join(sub);
        let entries = std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, "list", e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            // Temporary files of a writer still at work start with a dot: not ours to remove.
            if name.to_string_lossy().starts_with('.') || keep.contains(&path) {
                continue;
            }
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, "remove", e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(from: u64, to: u64, bytes: u64, published: u64) -> DeltaLink {
        DeltaLink {
            from,
            to,
            published,
            file: Download {
                path: format!("deltas/{from}-{to}.delta"),
                bytes,
                sha256: String::new(),
            },
        }
    }

    fn options(keep: usize, max_chain_age: Option<u64>) -> PublishOptions {
        PublishOptions {
            expires: None,
            ship: Ship::File,
            keep,
            min_interval: 60,
            max_chain_age,
            sign: None,
            rotate_from: None,
            allow_rollback: false,
            now: 1000,
        }
    }

    #[test]
    fn the_chain_is_pruned_by_count_age_and_cost() {
        let chain = || {
            (1..=6)
                .map(|v| link(v, v + 1, 100, v * 100))
                .collect::<Vec<_>>()
        };
        let mut deltas = chain();
        prune(&mut deltas, 10_000, &options(4, None));
        assert_eq!(deltas.first().map(|d| d.from), Some(3));
        let mut deltas = chain();
        prune(&mut deltas, 10_000, &options(30, Some(500)));
        assert_eq!(deltas.first().map(|d| d.from), Some(5));
        // A file of 350 bytes: a chain of four deltas (400) costs more, three (300) less.
        let mut deltas = chain();
        prune(&mut deltas, 350, &options(30, None));
        assert_eq!(deltas.len(), 3);
        let mut deltas = chain();
        prune(&mut deltas, 50, &options(30, None));
        assert!(deltas.is_empty());
    }
}
