//! `add`: inserts keys into the live version in Redis, one `BITFIELD … SET u1 …` per key (a
//! key's k bits share one block, so one atomic command sets them all).
//!
//! Three round trips for any number of keys:
//! 1. each key's verification fingerprint joins `NAME:vV:added` (so a reader that sees the new
//!    bits also confirms them), and the length of every chunk written to is checked (a
//!    `BITFIELD` on a missing chunk would create a short, zero-filled one);
//! 2. the `BITFIELD`s, which answer the bits' old values, and a read of the pointer;
//! 3. each chunk's checksum (`sum:I` of the metadata) grows by the weights of the bits that
//!    went from 0 to 1 (`HINCRBY`), so that `info` still verifies every chunk.
//!
//! If the pointer moved meanwhile, the keys went into a version being replaced: they are added
//! again to the live one, once. Keys added to the live version are not in the file it was
//! pushed from: add them to the list and rebuild before the next push, or they are gone when it
//! replaces this version. A domain of a single label added here lists its own host; the hosts
//! under it once it is in a pushed file (whose top-labels section is what makes readers probe
//! top labels).

use std::collections::BTreeMap;

use phishbloom_core::engine::fingerprint;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::prepare;
use phishbloom_filter::{Blocked, KeyHash};
use redis::{cmd, Cmd, Value};

use crate::blocklist::{load_meta, load_version_meta, read_pointer};
use crate::error::{length_problem, Error, Result};
use crate::layout::{redis_bit_offset, BitSum, Keys};
use crate::meta::RemoteMeta;
use crate::store::Store;
use crate::stored::load_resolver;

/// What an add did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The version the keys went into.
    pub version: u64,
    /// Keys given.
    pub keys: u64,
    /// Keys whose bits were all set already (present, or a false positive before the add).
    pub already_set: u64,
    /// Bits turned from 0 to 1.
    pub new_bits: u64,
}

/// The hash a key of a list with `scheme` is inserted under ([`prepare::entry`], as every front
/// end prepares an entry): the normalized key's for whole keys, the entry key's for URL entries
/// (`evil.com`, `evil.com/login`); `None` for a blank key.
pub fn key_hash(scheme: KeyScheme, key: &[u8]) -> Result<Option<KeyHash>> {
    match prepare::entry(scheme, key) {
        Ok(entry) => Ok(entry.map(|e| e.hash)),
        Err(phishbloom_core::Error::InvalidItem { item, error }) => {
            Err(Error::NotAnEntry { key: item, error })
        }
        Err(other) => Err(other.into()),
    }
}

/// Inserts `keys` into list `name`'s live version (see the module documentation), in
/// `category` — the list's only category when `None` ([`prepare::join_category`], the rule of
/// every add path); a list of several categories needs one of its categories named.
pub fn add(store: &mut Store, name: &str, keys: &[&[u8]], category: Option<&str>) -> Result<Added> {
    crate::validate_name(name)?;
    let names = Keys::new(name);
    let mut meta = load_meta(store, &names)?;
    if meta.is_compact() {
        return Err(Error::Compact {
            url: store.shown().to_string(),
            name: name.to_string(),
            version: meta.version,
            action: "take keys",
        });
    }
    let mut hashes = Vec::with_capacity(keys.len());
    for key in keys {
        hashes.extend(key_hash(meta.list.scheme, key)?);
    }
    for retry in [false, true] {
        // The capacity rule first, as every add path asks it: then the category.
        refuse_if_full(store, &names, &meta, &hashes)?;
        let category = category_id(store, &names, &meta, category)?;
        let added = add_hashes(store, &names, &meta, &hashes, category)?;
        let live = read_pointer(store, &names)?;
        if live == meta.version {
            return Ok(added);
        }
        // A push replaced the version meanwhile: the keys this add created for it expire with
        // it, not never.
        expire_with_version(store, &names, meta.version)?;
        if retry {
            return Ok(added);
        }
        meta = load_version_meta(store, &names, live)?;
    }
    unreachable!("the retry loop returns")
}

/// Gives the added-key set and category hash of a replaced `version` the expiry its metadata
/// has (a push gives every key of the version it replaces the grace expiry; these may have been
/// created after that).
fn expire_with_version(store: &mut Store, names: &Keys, version: u64) -> Result<()> {
    let meta_key = names.meta(version);
    let ttl: i64 = store.query(
        cmd("PTTL").arg(&meta_key).clone(),
        &meta_key,
        "read the replaced version's expiry",
    )?;
    let keys = [names.added(version), names.added_categories(version)];
    let commands: Vec<Cmd> = keys
        .iter()
        .map(|key| match ttl {
            // Expiring: the same time left.
            ttl if ttl > 0 => cmd("PEXPIRE").arg(key).arg(ttl).clone(),
            // Still without expiry (the push has not expired it yet): it will give these keys
            // their expiry as it does the others.
            -1 => cmd("PTTL").arg(key).clone(),
            // Gone: so are these.
            _ => cmd("DEL").arg(key).clone(),
        })
        .collect();
    store
        .run(commands, "expire the replaced version's added keys")
        .map(|_: Vec<Value>| ())
}

/// The id of the category added keys join, when the list has several (with one, every key is in
/// it and no id is stored).
fn category_id(
    store: &mut Store,
    names: &Keys,
    meta: &RemoteMeta,
    given: Option<&str>,
) -> Result<Option<u16>> {
    let resolver = load_resolver(store, names, meta)?;
    let categories = resolver.categories();
    let available = || {
        categories
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let joined = match prepare::join_category(given, categories, &meta.list.name) {
        Ok(joined) => joined,
        Err(phishbloom_core::Error::CategoryNeeded { .. }) => {
            return Err(Error::CategoryNeeded {
                url: store.shown().to_string(),
                name: names.name().to_string(),
                available: available(),
            })
        }
        Err(other) => return Err(other.into()),
    };
    match categories.iter().position(|c| c.name == joined) {
        _ if categories.len() <= 1 && given.is_none() => Ok(None),
        Some(id) if categories.len() > 1 => Ok(Some(id as u16)),
        Some(_) => Ok(None),
        // A new category would need the pushed metadata changed: add it to the list file.
        None => Err(Error::UnknownCategory {
            url: store.shown().to_string(),
            name: names.name().to_string(),
            version: meta.version,
            category: joined,
            available: available(),
        }),
    }
}

/// Where one bit of a key goes: its Redis bit offset in the chunk, and the byte of the chunk
/// and the bit in that byte (counted from the least significant) that the checksum weighs.
type BitPlace = (u64, u64, u32);

/// Where each key's bits go: its chunk, and its bits' places.
fn targets_of(meta: &RemoteMeta, hashes: &[KeyHash]) -> Vec<(u64, Vec<BitPlace>)> {
    hashes
        .iter()
        .map(|&hash| {
            let block = Blocked::block_index(meta.num_bits, hash) as u64;
            let (chunk, offset) = meta.chunking.locate(block);
            let mut bits = Vec::with_capacity(meta.num_hashes as usize);
            Blocked::block_bits(meta.num_hashes, hash, |bit| {
                bits.push((
                    redis_bit_offset(offset, bit),
                    offset + bit / 8,
                    (bit % 8) as u32,
                ));
            });
            (chunk, bits)
        })
        .collect()
}

/// The three round trips of an add into the version `meta` describes.
fn add_hashes(
    store: &mut Store,
    names: &Keys,
    meta: &RemoteMeta,
    hashes: &[KeyHash],
    category: Option<u16>,
) -> Result<Added> {
    let version = meta.version;
    let targets = targets_of(meta, hashes);
    let added_key = names.added(version);
    let first: Vec<Cmd> = hashes
        .iter()
        .map(|&h| cmd("SADD").arg(&added_key).arg(fingerprint(h)).clone())
        .collect();
    if let Some(id) = category {
        record_categories(store, names, version, hashes, id)?;
    }
    check_chunks(store, names, meta, &targets, first)?;
    let mut added = Added {
        version,
        keys: hashes.len() as u64,
        ..Added::default()
    };
    let deltas = set_bits(store, names, version, &targets, &mut added)?;
    let meta_key = names.meta(version);
    let increments: Vec<Cmd> = deltas
        .iter()
        .map(|(chunk, delta)| {
            cmd("HINCRBY")
                .arg(&meta_key)
                .arg(format!("sum:{chunk}"))
                .arg(*delta)
                .clone()
        })
        .collect();
    store.run(increments, "update the chunk checksums (HINCRBY)")?;
    Ok(added)
}

/// Sends `first` (the keys' `SADD`s) with a `STRLEN` of every chunk the keys' bits go into,
/// and refuses a chunk missing or of another length than `meta` says.
fn check_chunks(
    store: &mut Store,
    names: &Keys,
    meta: &RemoteMeta,
    targets: &[(u64, Vec<BitPlace>)],
    mut first: Vec<Cmd>,
) -> Result<()> {
    let version = meta.version;
    let recorded = first.len();
    let chunks: Vec<u64> = {
        let mut chunks: Vec<u64> = targets.iter().map(|t| t.0).collect();
        chunks.sort_unstable();
        chunks.dedup();
        chunks
    };
    first.extend(
        chunks
            .iter()
            .map(|&c| cmd("STRLEN").arg(names.chunk(version, c)).clone()),
    );
    let answers = store.run(first, "record the added keys (SADD) and check their chunks")?;
    for (&chunk, answer) in chunks.iter().zip(&answers[recorded..]) {
        let key = names.chunk(version, chunk);
        let len: u64 = store.convert(answer.clone(), &key, "STRLEN")?;
        if len != meta.chunking.len_of(chunk) {
            return Err(Error::BadChunk {
                url: store.shown().to_string(),
                name: names.name().to_string(),
                version,
                chunk,
                key,
                problem: length_problem(len, meta.chunking.len_of(chunk)),
            });
        }
    }
    Ok(())
}

/// Sets the keys' bits (`BITFIELD`), counting in `added` the bits turned on and the keys whose
/// bits were all set already; answers each chunk's checksum increase.
fn set_bits(
    store: &mut Store,
    names: &Keys,
    version: u64,
    targets: &[(u64, Vec<BitPlace>)],
    added: &mut Added,
) -> Result<BTreeMap<u64, u64>> {
    let sums = BitSum::default();
    let bitfields: Vec<Cmd> = targets
        .iter()
        .map(|(chunk, bits)| {
            let mut bitfield = cmd("BITFIELD");
            bitfield.arg(names.chunk(version, *chunk));
            for &(offset, _, _) in bits {
                bitfield.arg("SET").arg("u1").arg(offset).arg(1);
            }
            bitfield
        })
        .collect();
    let answers = store.run(bitfields, "set the keys' bits (BITFIELD)")?;
    let mut deltas: BTreeMap<u64, u64> = BTreeMap::new();
    for ((chunk, bits), answer) in targets.iter().zip(answers) {
        let key = names.chunk(version, *chunk);
        let old: Vec<u8> = store.convert(answer, &key, "BITFIELD")?;
        let mut any = false;
        for (&(_, byte, bit), &was) in bits.iter().zip(&old) {
            // A key's k positions may repeat: BITFIELD answers 0 only for the first SET of a bit.
            if was == 0 {
                any = true;
                added.new_bits += 1;
                *deltas.entry(*chunk).or_default() += sums.weight(byte, bit);
            }
        }
        added.already_set += u64::from(!any);
    }
    Ok(deltas)
}

/// Records that the keys of `hashes` are in category `id`: each fingerprint's field of
/// `NAME:vV:added-categories` gains the id (read, merged, written: two round trips; two adds of
/// one key racing in different categories may keep only one of them, never a wrong one). Written
/// before the key's bits, so a reader that sees the bits also finds the category.
fn record_categories(
    store: &mut Store,
    names: &Keys,
    version: u64,
    hashes: &[KeyHash],
    id: u16,
) -> Result<()> {
    let key = names.added_categories(version);
    let prints: Vec<u64> = hashes.iter().map(|&h| fingerprint(h)).collect();
    let reads: Vec<Cmd> = prints
        .iter()
        .map(|print| cmd("HGET").arg(&key).arg(print).clone())
        .collect();
    let answers = store.run(reads, "read the added keys' categories (HGET)")?;
    let mut writes = Vec::with_capacity(prints.len());
    for (print, answer) in prints.iter().zip(answers) {
        let old: Option<String> = store.convert(answer, &key, "HGET")?;
        let mut ids = crate::blocklist::parse_ids(old.as_deref().unwrap_or(""));
        if !ids.contains(&id) {
            ids.push(id);
            ids.sort_unstable();
        }
        let value = ids.iter().map(u16::to_string).collect::<Vec<_>>().join(",");
        writes.push(cmd("HSET").arg(&key).arg(print).arg(value).clone());
    }
    store
        .run(writes, "record the added keys' categories (HSET)")
        .map(|_: Vec<Value>| ())
}

/// The one capacity rule of every add path, for a list in Redis (blocked, never growing): it
/// takes new keys only while it holds fewer than it was sized for (the pushed file's keys and
/// those added since), and refuses a batch that would pass that whole, writing nothing. A key
/// whose bits are all set already is not new. Costs one `SCARD` per add, and one
/// `BITFIELD … GET` per key only when the batch might not fit.
fn refuse_if_full(
    store: &mut Store,
    names: &Keys,
    meta: &RemoteMeta,
    hashes: &[KeyHash],
) -> Result<()> {
    if meta.sized_for == 0 {
        // A filter whose capacity was not recorded never counts as full.
        return Ok(());
    }
    let added_key = names.added(meta.version);
    let added: u64 = store.query(
        cmd("SCARD").arg(&added_key).clone(),
        &added_key,
        "count the added keys",
    )?;
    let held = meta.items.saturating_add(added);
    if held.saturating_add(hashes.len() as u64) <= meta.sized_for {
        return Ok(());
    }
    let targets = targets_of(meta, hashes);
    let gets: Vec<Cmd> = targets
        .iter()
        .map(|(chunk, bits)| {
            let mut get = cmd("BITFIELD");
            get.arg(names.chunk(meta.version, *chunk));
            for &(offset, _, _) in bits {
                get.arg("GET").arg("u1").arg(offset);
            }
            get
        })
        .collect();
    let answers = store.run(
        gets,
        "read the keys' bits of a nearly full list (BITFIELD GET)",
    )?;
    let mut new = 0u64;
    for ((chunk, _), answer) in targets.iter().zip(answers) {
        let key = names.chunk(meta.version, *chunk);
        let bits: Vec<u8> = store.convert(answer, &key, "BITFIELD")?;
        new += u64::from(bits.contains(&0));
    }
    if held.saturating_add(new) > meta.sized_for {
        return Err(phishbloom_core::Error::Full {
            path: format!("{} (list `{}` in Redis)", store.shown(), names.name()).into(),
            kind: phishbloom_core::Kind::Blocked,
            items: held,
        }
        .into());
    }
    Ok(())
}
