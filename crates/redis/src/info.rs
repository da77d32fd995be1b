//! `info`: what a list in Redis holds — version, size, chunks, the file's metadata, categories
//! and exceptions, keys added since the push — after reading every chunk back and verifying its
//! checksum; and [`pull`], the live bits as a local filter.

use phishbloom_core::resolve::Category;
use phishbloom_core::FilterInfo;
use phishbloom_filter::{AnyFilter, BloomParams, HashStrategy, LayoutKind};
use redis::cmd;

use crate::blocklist::{load_meta, load_version_meta};
use crate::error::{length_problem, Error, Result};
use crate::layout::{BitSum, Keys};
use crate::meta::RemoteMeta;
use crate::push::PIPELINE_BYTES;
use crate::store::Store;
use crate::stored::load_resolver;

/// Everything `info` reports about a list in Redis.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Info {
    /// The server (password hidden).
    pub url: String,
    /// The live version's metadata.
    pub meta: RemoteMeta,
    /// Chunks of the bit array whose checksum was verified (all of them, or `info` fails).
    pub chunks_verified: u64,
    /// Verification-table fingerprints read and verified (0 without a table).
    pub verification_verified: u64,
    /// Whether the table records each entry's categories (a list of several categories).
    pub verification_categories: bool,
    /// The categories and their entry counts, as pushed.
    pub categories: Vec<Category>,
    /// Exception entries.
    pub exceptions: u64,
    /// Distinct keys `add` inserted into this version.
    pub added: u64,
    /// The filter as it is in Redis: fill, estimated items, rate from the bits (`None` for a
    /// compact version, which has no bits).
    pub filter: Option<FilterInfo>,
    /// A compact version's table: its prefixes (read and verified whole).
    pub compact_prefixes: Option<u64>,
}

/// Reads list `name`'s live version whole and verifies it: every chunk's length and checksum,
/// and the verification table, categories and exceptions (decoded as a reader does).
pub fn info(store: &mut Store, name: &str) -> Result<Info> {
    crate::validate_name(name)?;
    let keys = Keys::new(name);
    let meta = load_meta(store, &keys)?;
    let (meta, filter) = match meta.is_compact() {
        true => (meta, None),
        false => {
            let (meta, filter) = pull_version(store, &keys, meta)?;
            (meta, Some(FilterInfo::of(&*filter)))
        }
    };
    let resolver = load_resolver(store, &keys, &meta)?;
    let table = resolver.verification();
    let added_key = keys.added(meta.version);
    let added: u64 = store.query(
        cmd("SCARD").arg(&added_key).clone(),
        &added_key,
        "count the added keys",
    )?;
    Ok(Info {
        url: store.shown().to_string(),
        chunks_verified: meta.chunking.chunks(),
        verification_verified: table.map_or(0, |t| t.len() as u64),
        verification_categories: table.is_some_and(|t| !t.set_of().is_empty()),
        categories: resolver.categories().to_vec(),
        exceptions: resolver.exceptions().len() as u64,
        added,
        filter,
        compact_prefixes: resolver.compact().map(|t| t.len()),
        meta,
    })
}

/// List `name`'s live bits as a local filter (every chunk verified), with the metadata.
pub fn pull(store: &mut Store, name: &str) -> Result<(RemoteMeta, AnyFilter)> {
    crate::validate_name(name)?;
    let keys = Keys::new(name);
    let meta = load_meta(store, &keys)?;
    if meta.is_compact() {
        return Err(Error::Compact {
            url: store.shown().to_string(),
            name: name.to_string(),
            version: meta.version,
            action: "give its bits",
        });
    }
    pull_version(store, &keys, meta)
}

/// Version `meta.version`'s bits as a local filter, every chunk verified.
fn pull_version(
    store: &mut Store,
    keys: &Keys,
    mut meta: RemoteMeta,
) -> Result<(RemoteMeta, AnyFilter)> {
    let version = meta.version;
    let mut filter = AnyFilter::from_params(&BloomParams {
        layout: LayoutKind::Blocked,
        strategy: HashStrategy::Xxh3,
        num_bits: meta.num_bits,
        num_hashes: meta.num_hashes,
        items: meta.items,
        expected_items: meta.sized_for,
        target_fpp: meta.probe_fpp,
    })
    .map_err(|e| Error::BadMeta {
        url: store.shown().to_string(),
        key: keys.meta(version),
        field: "m".into(),
        problem: e.to_string(),
    })?;
    let chunking = meta.chunking;
    let per_trip = (PIPELINE_BYTES / chunking.chunk_bytes).max(1);
    let mut first = 0;
    while first < chunking.chunks() {
        let last = (first + per_trip).min(chunking.chunks());
        let answers = store.run(
            (first..last)
                .map(|i| cmd("GET").arg(keys.chunk(version, i)).clone())
                .collect(),
            "read the chunks",
        )?;
        for (i, answer) in (first..last).zip(answers) {
            let bytes = verified_chunk(store, keys, &mut meta, i, answer)?;
            let start = (i * chunking.chunk_bytes) as usize;
            filter.bit_bytes_mut()[start..start + bytes.len()].copy_from_slice(&bytes);
        }
        first = last;
    }
    Ok((meta, filter))
}

/// Chunk `i` from its `GET` answer, checked against its length and checksum. A checksum that
/// does not match is read again once with the chunk (an add may have set bits between the
/// reads of the metadata and of the chunk), and kept in `meta`.
fn verified_chunk(
    store: &mut Store,
    keys: &Keys,
    meta: &mut RemoteMeta,
    i: u64,
    answer: redis::Value,
) -> Result<Vec<u8>> {
    let (version, chunking, sums) = (meta.version, meta.chunking, BitSum::default());
    let key = keys.chunk(version, i);
    let bytes: Option<Vec<u8>> = store.convert(answer, &key, "GET")?;
    let mut bytes = bytes.unwrap_or_default();
    let mut computed = sums.of(&bytes);
    if !BitSum::matches(meta.sums[i as usize], computed) && bytes.len() as u64 == chunking.len_of(i)
    {
        let field = format!("sum:{i}");
        let meta_key = keys.meta(version);
        let again = store.run(
            vec![
                cmd("HGET").arg(&meta_key).arg(&field).clone(),
                cmd("GET").arg(&key).clone(),
            ],
            "read a chunk and its checksum again",
        )?;
        let mut again = again.into_iter();
        let stored: Option<u64> =
            store.convert(again.next().unwrap_or(redis::Value::Nil), &meta_key, "HGET")?;
        let reread: Option<Vec<u8>> =
            store.convert(again.next().unwrap_or(redis::Value::Nil), &key, "GET")?;
        meta.sums[i as usize] = stored.unwrap_or(0);
        bytes = reread.unwrap_or_default();
        computed = sums.of(&bytes);
    }
    if bytes.len() as u64 != chunking.len_of(i) {
        return Err(Error::BadChunk {
            url: store.shown().to_string(),
            name: keys.name().to_string(),
            version,
            chunk: i,
            key,
            problem: length_problem(bytes.len() as u64, chunking.len_of(i)),
        });
    }
    if !BitSum::matches(meta.sums[i as usize], computed) {
        return Err(Error::ChecksumMismatch {
            url: store.shown().to_string(),
            name: keys.name().to_string(),
            version,
            chunk: i,
            key,
            stored: meta.sums[i as usize],
            computed,
        });
    }
    Ok(bytes)
}

/// The metadata of version `version` of list `name` (live or still in its grace period).
pub fn version_meta(store: &mut Store, name: &str, version: u64) -> Result<RemoteMeta> {
    crate::validate_name(name)?;
    load_version_meta(store, &Keys::new(name), version)
}
