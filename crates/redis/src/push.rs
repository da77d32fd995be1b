//! `push`: writes a blocked-layout blocklist into Redis as a new version, then makes it live.
//! A compact list is pushed the same way without a bit array: its table goes out as a section
//! that each reader reads whole and answers from, as it answers from a verification table.
//!
//! 1. `INCR NAME:seq` draws the version number V.
//! 2. The bit array goes out as chunks `NAME:vV:I`, the sections that decide verdicts as
//!    `NAME:vV:SECTION:J` (the verification table, categories, category sets and exceptions,
//!    each the bytes the file itself holds: [`Section`]), then the metadata hash — all with a
//!    staging expiry ([`STAGING_TTL_SECS`]), so that a push that dies midway leaves nothing
//!    behind for long.
//! 3. Every key's length is read back (a server out of memory or evicting is caught here, not by
//!    a reader), then the staging expiry is removed.
//! 4. One script sets `NAME:current` to V unless a newer version is live already: readers switch
//!    at that instant, never seeing a half-written version.
//! 5. The version that was live gets an expiry of the grace period, so readers in the middle of
//!    a batch finish on it; they re-read the pointer at their next batch.

use std::path::{Path, PathBuf};

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::Resolver;
use phishbloom_core::sections::{self, Meta};
use phishbloom_core::{Blocklist, Kind};
use phishbloom_filter::{AnyFilter, BloomParams, HashStrategy, LayoutKind};
use redis::{cmd, Cmd, Value};

use crate::error::{Error, Result};
use crate::layout::{BitSum, Chunking, Keys, Section, BLOCK_BYTES, MAX_CHUNK_BYTES};
use crate::meta::{RemoteMeta, Stored, VerifyMeta};
use crate::store::Store;

/// Expiry of a version's keys while it is being written (one day): far longer than any push
/// takes, short enough that an abandoned push does not hold memory for long.
pub const STAGING_TTL_SECS: u64 = 24 * 3600;

/// The grace period a replaced version lives on, unless told otherwise (five minutes): longer
/// than any batch a reader has in flight.
pub const DEFAULT_GRACE_SECS: u64 = 300;

/// Bytes sent per round trip of a push (16 MiB): large enough to keep the connection busy,
/// small enough to bound the client's and server's buffers.
pub const PIPELINE_BYTES: u64 = 16 << 20;

/// Sets the pointer to `ARGV[1]` unless it already holds a version at least as new; answers
/// `{1, previous}` when it switched and `{0, live}` when it did not (versions are far below 2⁵³,
/// so Lua's numbers hold them exactly).
const SWITCH_SCRIPT: &str = r"
local live = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > live then
  redis.call('SET', KEYS[1], ARGV[1])
  return {1, live}
end
return {0, live}
";

/// Refuses a push that would drop keys added to the live version since it was pushed (`redis
/// add` records each added key's fingerprint in `NAME:vV:added`): those not in the file's
/// verification table — all of them, for a file without one — would answer clean.
fn refuse_lost_adds(
    store: &mut Store,
    keys: &Keys,
    name: &str,
    source: &PushSource<'_>,
) -> Result<()> {
    let current = keys.current();
    let live: Option<u64> = store.query(
        cmd("GET").arg(&current).clone(),
        &current,
        "read the live version",
    )?;
    let Some(live) = live else {
        return Ok(());
    };
    let added_key = keys.added(live);
    let added: Vec<u64> = store.query(
        cmd("SMEMBERS").arg(&added_key).clone(),
        &added_key,
        "read the keys added to the live version",
    )?;
    let lost = match (source.resolver.verification(), source.resolver.compact()) {
        (Some(table), _) => added
            .iter()
            .filter(|&&v| !table.fingerprints().contains(v))
            .count(),
        (None, Some(table)) => added.iter().filter(|&&v| !table.contains(v)).count(),
        (None, None) => added.len(),
    };
    if lost > 0 {
        return Err(Error::WouldLoseAdds {
            path: source.path.clone(),
            name: name.to_string(),
            live,
            lost: lost as u64,
            checked: source.resolver.verification().is_some(),
        });
    }
    Ok(())
}

/// How to push.
#[derive(Clone, Debug)]
pub struct PushOptions {
    /// Bytes per chunk: a multiple of 64 up to [`MAX_CHUNK_BYTES`].
    pub chunk_bytes: u64,
    /// Seconds a replaced version lives on (0 deletes it at once).
    pub grace_secs: u64,
    /// Push even when keys added to the live version (`redis add`) are not in the file:
    /// they then answer clean.
    pub force: bool,
}

impl Default for PushOptions {
    fn default() -> Self {
        PushOptions {
            chunk_bytes: MAX_CHUNK_BYTES,
            grace_secs: DEFAULT_GRACE_SECS,
            force: false,
        }
    }
}

/// What a push writes: a blocked-layout filter, the list's metadata and what decides its
/// verdicts — categories, the optional verification table (with each entry's categories) and
/// exceptions (a blocklist file's parts, or a filter built in memory).
pub struct PushSource<'a> {
    /// The list's metadata.
    pub meta: &'a Meta,
    /// The filter (blocked layout, xxh3 hashing); `None` for a compact list, whose table is
    /// the resolver's.
    pub filter: Option<&'a AnyFilter>,
    /// The categories, verification table and exceptions.
    pub resolver: &'a Resolver,
    /// The file's checksum, hex, if it came from a file.
    pub file_checksum: Option<String>,
    /// The file (or a label), for messages.
    pub path: PathBuf,
}

impl<'a> PushSource<'a> {
    /// The parts of a blocklist opened from `path`; refuses every kind but the blocked layout
    /// with xxh3 hashing, the one whose k bits of a key share one block, and compact lists.
    pub fn of(blocklist: &'a Blocklist, path: &Path) -> Result<Self> {
        let cannot = |problem: String| Error::CannotPush {
            path: path.to_path_buf(),
            problem,
        };
        let kind = blocklist.kind();
        let filter = match (kind, blocklist.filter()) {
            (Kind::Compact, _) => None,
            (Kind::Blocked, Some(filter)) => Some(filter),
            _ => {
                let what = if blocklist.layers().is_some_and(|l| l.grows()) {
                    format!("a growing {kind} blocklist")
                } else {
                    format!("a {kind} blocklist")
                };
                return Err(Error::WrongKind {
                    path: path.to_path_buf(),
                    what,
                });
            }
        };
        if let Some(filter) = filter.filter(|f| {
            f.layout() != LayoutKind::Blocked || f.hash_strategy() != HashStrategy::Xxh3
        }) {
            return Err(cannot(format!(
                "its filter hashes with {}, and Redis lists are probed with xxh3 block \
                 positions; rebuild it with the xxh3 hash (the default)",
                filter.hash_strategy()
            )));
        }
        Ok(PushSource {
            meta: blocklist.meta(),
            filter,
            resolver: blocklist.resolver(),
            file_checksum: blocklist
                .directory()
                .map(|d| format!("{:016x}", d.checksum)),
            path: path.to_path_buf(),
        })
    }
}

/// What a push did.
#[derive(Clone, Debug)]
pub struct Pushed {
    /// The metadata of the version written (now live).
    pub meta: RemoteMeta,
    /// The version that was live before (now expiring), if any.
    pub previous: Option<u64>,
}

/// Writes `source` as a new version of list `name` and makes it live (see the module
/// documentation for the steps).
pub fn push(
    store: &mut Store,
    name: &str,
    source: &PushSource<'_>,
    options: &PushOptions,
) -> Result<Pushed> {
    crate::validate_name(name)?;
    validate(source, options)?;
    let keys = Keys::new(name);
    if !options.force {
        refuse_lost_adds(store, &keys, name, source)?;
    }
    let version: u64 = store.query(
        cmd("INCR").arg(keys.seq()).clone(),
        &keys.seq(),
        "draw a version number",
    )?;
    let bits = source.filter.map_or(&[][..], |f| f.bit_bytes());
    let chunking = Chunking {
        bytes: bits.len() as u64,
        chunk_bytes: options.chunk_bytes,
    };
    let sums = write_chunks(
        store,
        bits,
        chunking,
        |i| keys.chunk(version, i),
        |c| BitSum::default().of(c),
    )?;
    let sections = write_sections(store, &keys, version, source.resolver)?;
    let params = match source.filter {
        Some(filter) => filter.params(),
        None => BloomParams {
            layout: LayoutKind::Blocked,
            strategy: HashStrategy::Xxh3,
            num_bits: 0,
            num_hashes: 0,
            items: source.meta.entries,
            expected_items: 0,
            target_fpp: None,
        },
    };
    let meta = RemoteMeta {
        version,
        // The list is known by its Redis name from now on (the file may call it otherwise).
        list: Meta {
            name: name.to_string(),
            ..source.meta.clone()
        },
        pushed: phishbloom_blocklist::now(),
        num_bits: params.num_bits,
        num_hashes: params.num_hashes,
        items: params.items,
        sized_for: params.expected_items,
        probe_fpp: params.target_fpp,
        chunking,
        sums,
        verify: sections.verify,
        compact: sections.compact,
        categories: sections.categories,
        category_sets: sections.category_sets,
        exceptions: sections.exceptions,
        tops: sections.tops,
        file_checksum: source.file_checksum.clone(),
    };
    write_meta(store, &keys, &meta)?;
    check_lengths(store, &keys, &meta)?;
    let previous = make_live(store, &keys, &meta, options.grace_secs)?;
    Ok(Pushed { meta, previous })
}

/// Refuses chunks of a size Redis lists cannot have, and exceptions in a list of whole keys.
fn validate(source: &PushSource<'_>, options: &PushOptions) -> Result<()> {
    let chunk_bytes = options.chunk_bytes;
    if chunk_bytes == 0 || !chunk_bytes.is_multiple_of(BLOCK_BYTES) || chunk_bytes > MAX_CHUNK_BYTES
    {
        return Err(Error::CannotPush {
            path: source.path.clone(),
            problem: format!(
                "chunks of {chunk_bytes} bytes: a chunk must be a multiple of 64 bytes (whole \
                 blocks) up to {MAX_CHUNK_BYTES}"
            ),
        });
    }
    if source.meta.scheme != KeyScheme::Expressions && !source.resolver.exceptions().is_empty() {
        return Err(Error::CannotPush {
            path: source.path.clone(),
            problem: "exceptions in a list of whole keys, which has no more specific entries for \
                      them to override; drop the exceptions"
                .into(),
        });
    }
    Ok(())
}

/// Where the sections that decide verdicts were written.
struct WrittenSections {
    verify: Option<VerifyMeta>,
    compact: Option<Stored>,
    categories: Stored,
    category_sets: Option<Stored>,
    exceptions: Option<Stored>,
    tops: Option<Stored>,
}

/// Writes the sections that decide verdicts of version `version`, in the file's own encodings.
fn write_sections(
    store: &mut Store,
    keys: &Keys,
    version: u64,
    resolver: &Resolver,
) -> Result<WrittenSections> {
    let write = |store: &mut Store, section: Section, bytes: &[u8]| -> Result<Stored> {
        let chunking = Chunking {
            bytes: bytes.len() as u64,
            chunk_bytes: MAX_CHUNK_BYTES,
        };
        let sums = write_chunks(
            store,
            bytes,
            chunking,
            |j| keys.section(version, section, j),
            xxhash_rust::xxh3::xxh3_64,
        )?;
        Ok(Stored { chunking, sums })
    };
    let verification = resolver.verification();
    let verify = match verification {
        None => None,
        Some(table) => Some(VerifyMeta {
            count: table.len() as u64,
            stored: write(
                store,
                Section::Verify,
                sections::encode_verify(table.fingerprints()),
            )?,
        }),
    };
    let categories = write(
        store,
        Section::Categories,
        &sections::encode_categories(resolver.categories()),
    )?;
    let category_sets = match verification.filter(|v| !v.set_of().is_empty()) {
        None => None,
        Some(table) => Some(write(
            store,
            Section::CategorySets,
            &sections::encode_category_sets(table.sets(), table.set_of()),
        )?),
    };
    let compact = match resolver.compact() {
        None => None,
        Some(table) => Some(write(
            store,
            Section::Compact,
            &sections::encode_compact(table),
        )?),
    };
    let category_sets = match (category_sets, resolver.compact()) {
        (None, Some(table)) => Some(write(
            store,
            Section::CategorySets,
            &sections::encode_category_sets(table.sets(), &[]),
        )?),
        (sets, _) => sets,
    };
    let exceptions = match resolver.exceptions() {
        none if none.is_empty() => None,
        some => Some(write(
            store,
            Section::Exceptions,
            &sections::encode_exceptions(some),
        )?),
    };
    let tops = match resolver.tops() {
        none if none.is_empty() => None,
        some => Some(write(store, Section::Tops, sections::encode_verify(some))?),
    };
    Ok(WrittenSections {
        verify,
        compact,
        categories,
        category_sets,
        exceptions,
        tops,
    })
}

/// Writes the metadata hash of `meta`'s version, with the staging expiry.
fn write_meta(store: &mut Store, keys: &Keys, meta: &RemoteMeta) -> Result<()> {
    let meta_key = keys.meta(meta.version);
    let mut hset = cmd("HSET");
    hset.arg(&meta_key);
    for (field, value) in meta.to_fields() {
        hset.arg(field).arg(value);
    }
    let mut expire = cmd("EXPIRE");
    expire.arg(&meta_key).arg(STAGING_TTL_SECS);
    store.run(
        vec![hset, expire],
        &format!("write the metadata `{meta_key}`"),
    )?;
    Ok(())
}

/// Keeps the written version (removes the staging expiry), switches the pointer to it and
/// expires the version it replaced after `grace_secs`; answers that version, if any. A newer
/// version live already refuses the switch, and this one expires instead.
fn make_live(
    store: &mut Store,
    keys: &Keys,
    meta: &RemoteMeta,
    grace_secs: u64,
) -> Result<Option<u64>> {
    let version = meta.version;
    let written = version_keys(keys, meta);
    store.run(
        written
            .iter()
            .map(|k| cmd("PERSIST").arg(k).clone())
            .collect(),
        "keep the new version (PERSIST)",
    )?;
    let (switched, previous) = switch(store, keys, version)?;
    if !switched {
        expire_keys(store, &written, grace_secs)?;
        return Err(Error::Superseded {
            url: store.shown().to_string(),
            name: meta.list.name.clone(),
            version,
            newer: previous,
        });
    }
    let previous = (previous > 0).then_some(previous);
    if let Some(old) = previous {
        expire_version(store, keys, old, grace_secs)?;
    }
    Ok(previous)
}

/// Writes `bytes` as chunks under `key(i)` with the staging expiry, [`PIPELINE_BYTES`] per
/// round trip; returns each chunk's `checksum`.
fn write_chunks(
    store: &mut Store,
    bytes: &[u8],
    chunking: Chunking,
    key: impl Fn(u64) -> String,
    checksum: impl Fn(&[u8]) -> u64,
) -> Result<Vec<u64>> {
    let mut sums = Vec::with_capacity(chunking.chunks() as usize);
    let mut batch = Vec::new();
    let mut batch_bytes = 0u64;
    let mut first = 0u64;
    for i in 0..chunking.chunks() {
        let start = (i * chunking.chunk_bytes) as usize;
        let chunk = &bytes[start..start + chunking.len_of(i) as usize];
        sums.push(checksum(chunk));
        let mut set = cmd("SET");
        set.arg(key(i)).arg(chunk).arg("EX").arg(STAGING_TTL_SECS);
        batch.push(set);
        batch_bytes += chunk.len() as u64;
        if batch_bytes >= PIPELINE_BYTES || i + 1 == chunking.chunks() {
            let action = format!("write chunks {first}..={i} (`{}` …)", key(first));
            store.run(std::mem::take(&mut batch), &action)?;
            batch_bytes = 0;
            first = i + 1;
        }
    }
    Ok(sums)
}

/// Every key of a version but the pointer: metadata, chunks, the sections' chunks.
fn version_keys(keys: &Keys, meta: &RemoteMeta) -> Vec<String> {
    let version = meta.version;
    let mut all = vec![keys.meta(version)];
    all.extend((0..meta.chunking.chunks()).map(|i| keys.chunk(version, i)));
    for (section, stored) in meta.sections() {
        all.extend((0..stored.chunking.chunks()).map(|j| keys.section(version, section, j)));
    }
    all
}

/// Reads back the length of every chunk written: a value the server dropped (out of memory,
/// evicted) fails the push before the version goes live.
fn check_lengths(store: &mut Store, keys: &Keys, meta: &RemoteMeta) -> Result<()> {
    let version = meta.version;
    let mut expected: Vec<(String, u64, u64)> = (0..meta.chunking.chunks())
        .map(|i| (keys.chunk(version, i), i, meta.chunking.len_of(i)))
        .collect();
    for (section, stored) in meta.sections() {
        expected.extend((0..stored.chunking.chunks()).map(|j| {
            (
                keys.section(version, section, j),
                j,
                stored.chunking.len_of(j),
            )
        }));
    }
    let answers = store.run(
        expected
            .iter()
            .map(|(k, _, _)| cmd("STRLEN").arg(k).clone())
            .collect(),
        "read back the chunk lengths",
    )?;
    for ((key, chunk, len), answer) in expected.iter().zip(answers) {
        let got: u64 = store.convert(answer, key, "STRLEN")?;
        if got != *len {
            return Err(Error::BadChunk {
                url: store.shown().to_string(),
                name: keys.name().to_string(),
                version,
                chunk: *chunk,
                key: key.clone(),
                problem: format!("{got} bytes right after writing {len}"),
            });
        }
    }
    Ok(())
}

/// Makes `version` live unless a newer one is; returns whether it did and the version that was
/// (or still is) live, 0 for none.
fn switch(store: &mut Store, keys: &Keys, version: u64) -> Result<(bool, u64)> {
    let pointer = keys.current();
    let mut eval = cmd("EVAL");
    eval.arg(SWITCH_SCRIPT).arg(1).arg(&pointer).arg(version);
    let answer: (u8, u64) = store.query(eval, &pointer, "switch the version pointer")?;
    Ok((answer.0 == 1, answer.1))
}

/// Gives every key of `version` (read from its metadata, if still there) the grace expiry.
fn expire_version(store: &mut Store, keys: &Keys, version: u64, grace_secs: u64) -> Result<()> {
    let meta_key = keys.meta(version);
    let mut hmget = cmd("HMGET");
    hmget.arg(&meta_key).arg("chunks");
    for section in Section::ALL {
        hmget.arg(format!("{}-chunks", section.name()));
    }
    // Absent fields (a section the version lacks, or metadata already gone) count no chunks.
    let counts: Vec<Option<u64>> =
        store.query(hmget, &meta_key, "read the replaced version's chunk counts")?;
    let count = |at: usize| counts.get(at).copied().flatten().unwrap_or(0);
    let mut all = vec![
        meta_key,
        keys.added(version),
        keys.added_categories(version),
    ];
    all.extend((0..count(0)).map(|i| keys.chunk(version, i)));
    for (at, section) in Section::ALL.into_iter().enumerate() {
        all.extend((0..count(at + 1)).map(|j| keys.section(version, section, j)));
    }
    expire_keys(store, &all, grace_secs)
}

/// `EXPIRE` (or, for a grace of 0, `DEL`) on every key.
fn expire_keys(store: &mut Store, all: &[String], grace_secs: u64) -> Result<()> {
    let commands: Vec<Cmd> = all
        .iter()
        .map(|key| {
            if grace_secs == 0 {
                cmd("DEL").arg(key).clone()
            } else {
                cmd("EXPIRE").arg(key).arg(grace_secs).clone()
            }
        })
        .collect();
    store
        .run(commands, "expire the replaced version")
        .map(|_: Vec<Value>| ())
}
