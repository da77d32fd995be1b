//! [`RedisBlocklist`]: checks items against a list in Redis with the verdicts of the local file.
//!
//! Items are normalized (whole keys) or canonicalized and expanded into their probe hashes (URL
//! entries) here, with the blocklist crate's own functions. Each probe's block is fetched with
//! one `GETRANGE` of 64 bytes; a batch's `GETRANGE`s and a read of the version pointer go out as
//! one pipeline (one round trip), and the blocks are probed here. Hits are confirmed against the
//! verification table, read once per version, and — for a hit the table does not hold — against
//! the set of keys `add` inserted, in a second round trip that only such hits cost.
//!
//! A batch answers from one version: the one whose chunks it read. If the pointer shows that a
//! newer version went live, or a chunk is gone because its version expired, the batch re-reads
//! the pointer and is retried once on the live version; a second switch, a missing list or a
//! damaged chunk is an error, never a clean verdict.

use std::collections::HashMap;

use phishbloom_blocklist::engine::urls::UrlProbes;
use phishbloom_blocklist::engine::{fingerprint, Fingerprints, Hit};
use phishbloom_blocklist::{KeyScheme, Verdict};
use phishbloom_filter::{Block, Blocked, KeyHash};
use phishbloom_url::CanonicalUrl;
use redis::{cmd, Cmd, Value};

use crate::error::{Error, Result};
use crate::layout::{Keys, BLOCK_BYTES};
use crate::meta::RemoteMeta;
use crate::store::{Store, Target};

/// A list in Redis, checked through one connection (one per thread: checks take `&mut self`).
pub struct RedisBlocklist {
    store: Store,
    keys: Keys,
    meta: RemoteMeta,
    verify: Option<Fingerprints>,
    /// The live version's chunk keys, named once per version rather than once per probe.
    chunk_keys: Vec<String>,
}

/// One checked item, prepared locally.
enum Item {
    /// Never listed: a blank key, or a line that is not a URL.
    Clean,
    /// A whole key: one probe.
    Key(KeyHash),
    /// A URL: every probe of its expressions, in order.
    Url(Box<(CanonicalUrl, UrlProbes)>),
}

impl Item {
    fn hashes(&self) -> &[KeyHash] {
        match self {
            Item::Clean => &[],
            Item::Key(hash) => std::slice::from_ref(hash),
            Item::Url(url) => url.1.hashes(),
        }
    }
}

/// How one attempt at a batch ended.
enum Attempt {
    Done,
    /// The pointer names another version (or a chunk of ours is gone and the pointer moved).
    Switched(u64),
}

impl RedisBlocklist {
    /// Connects to `target` and opens list `name`'s live version.
    pub fn open(target: &Target, name: &str) -> Result<Self> {
        Self::from_store(target.connect()?, name)
    }

    /// Opens list `name`'s live version through an existing connection.
    pub fn from_store(mut store: Store, name: &str) -> Result<Self> {
        crate::validate_name(name)?;
        let keys = Keys::new(name);
        let meta = load_meta(&mut store, &keys)?;
        let verify = load_verification(&mut store, &keys, &meta)?;
        let chunk_keys = chunk_keys(&keys, &meta);
        Ok(RedisBlocklist {
            store,
            keys,
            meta,
            verify,
            chunk_keys,
        })
    }

    /// The live version's metadata (as of the last batch).
    pub fn meta(&self) -> &RemoteMeta {
        &self.meta
    }

    /// The version answering (as of the last batch).
    pub fn version(&self) -> u64 {
        self.meta.version
    }

    /// The verification table, if the list has one.
    pub fn verification(&self) -> Option<&Fingerprints> {
        self.verify.as_ref()
    }

    /// The connection.
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Whether `item` (a line without its terminator) is listed.
    pub fn contains(&mut self, item: &[u8]) -> Result<bool> {
        Ok(self.check(item)?.listed)
    }

    /// The verdict for one item.
    pub fn check(&mut self, item: &[u8]) -> Result<Verdict> {
        let mut out = Vec::with_capacity(1);
        self.check_batch(&[item], &mut out)?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Appends one verdict per item to `out`, in order, exactly as
    /// `phishbloom_blocklist::Blocklist::check_batch` answers on the pushed file: one round trip
    /// for the blocks (plus one for hits the verification table does not confirm). On error,
    /// `out` is left as it was.
    pub fn check_batch(&mut self, items: &[&[u8]], out: &mut Vec<Verdict>) -> Result<()> {
        let scheme = self.meta.list.scheme;
        let mut key = Vec::new();
        let prepared: Vec<Item> = items
            .iter()
            .map(|item| prepare(scheme, item, &mut key))
            .collect();
        let start = out.len();
        for retry in [false, true] {
            let from = self.meta.version;
            match self.attempt(&prepared, out) {
                Ok(Attempt::Done) => return Ok(()),
                Ok(Attempt::Switched(to)) => {
                    out.truncate(start);
                    if retry {
                        return Err(Error::VersionSwitched {
                            url: self.store.shown().to_string(),
                            name: self.keys.name().to_string(),
                            from,
                            to,
                        });
                    }
                    self.reload()?;
                }
                Err(error) => {
                    out.truncate(start);
                    return Err(error);
                }
            }
        }
        // The loop returns on its second pass whatever happens.
        unreachable!("the retry loop returns")
    }

    /// Re-reads the pointer and opens the version it names.
    fn reload(&mut self) -> Result<()> {
        let meta = load_meta(&mut self.store, &self.keys)?;
        if meta.version != self.meta.version {
            self.verify = load_verification(&mut self.store, &self.keys, &meta)?;
            self.chunk_keys = chunk_keys(&self.keys, &meta);
            self.meta = meta;
        }
        Ok(())
    }

    /// One try at a batch on the version in hand.
    fn attempt(&mut self, items: &[Item], out: &mut Vec<Verdict>) -> Result<Attempt> {
        let chunking = self.meta.chunking;
        let num_bits = self.meta.num_bits;
        let probes: usize = items.iter().map(|i| i.hashes().len()).sum();
        let mut commands: Vec<Cmd> = Vec::with_capacity(probes + 1);
        commands.push(cmd("GET").arg(self.keys.current()).clone());
        let mut fetched: Vec<u64> = Vec::with_capacity(probes);
        // Probes that share a block (rare) share one GETRANGE.
        let mut slot_of: HashMap<u64, usize> = HashMap::with_capacity(probes);
        let mut slots: Vec<Vec<usize>> = Vec::with_capacity(items.len());
        for item in items {
            let mut item_slots = Vec::with_capacity(item.hashes().len());
            for &hash in item.hashes() {
                let block = Blocked::block_index(num_bits, hash) as u64;
                let slot = *slot_of.entry(block).or_insert_with(|| {
                    let (chunk, offset) = chunking.locate(block);
                    let mut getrange = cmd("GETRANGE");
                    getrange
                        .arg(&self.chunk_keys[chunk as usize])
                        .arg(offset)
                        .arg(offset + BLOCK_BYTES - 1);
                    commands.push(getrange);
                    fetched.push(chunk);
                    fetched.len() - 1
                });
                item_slots.push(slot);
            }
            slots.push(item_slots);
        }
        let mut answers = self
            .store
            .run(commands, "fetch the probed blocks (GETRANGE)")?
            .into_iter();
        if let Some(live) = self.pointer(answers.next())? {
            return Ok(Attempt::Switched(live));
        }
        let mut blocks = Vec::with_capacity(fetched.len());
        for (&chunk, answer) in fetched.iter().zip(answers) {
            let key = &self.chunk_keys[chunk as usize];
            let bytes: Vec<u8> = match answer {
                Value::BulkString(bytes) => bytes,
                other => self.store.convert(other, key, "GETRANGE")?,
            };
            if bytes.len() as u64 != BLOCK_BYTES {
                // A version that expired under us shows as missing chunks: is a newer one live?
                let mut answers = self
                    .store
                    .run(
                        vec![
                            cmd("GET").arg(self.keys.current()).clone(),
                            cmd("STRLEN").arg(key).clone(),
                        ],
                        "look at a chunk that did not answer a whole block",
                    )?
                    .into_iter();
                if let Some(live) = self.pointer(answers.next())? {
                    return Ok(Attempt::Switched(live));
                }
                let len: u64 =
                    self.store
                        .convert(answers.next().unwrap_or(Value::Nil), key, "STRLEN")?;
                return Err(self.bad_chunk(chunk, key, len));
            }
            blocks.push(block_of(&bytes));
        }
        // For each item, the indexes of its probes that hit, in probe order.
        let k = self.meta.num_hashes;
        let hits: Vec<Vec<usize>> = items
            .iter()
            .zip(&slots)
            .map(|(item, item_slots)| {
                item.hashes()
                    .iter()
                    .zip(item_slots)
                    .enumerate()
                    .filter(|(_, (&hash, &slot))| Blocked::probe_block(&blocks[slot], k, hash))
                    .map(|(index, _)| index)
                    .collect()
            })
            .collect();
        let confirmed = match self.confirm(items, &hits)? {
            Ok(confirmed) => confirmed,
            Err(live) => return Ok(Attempt::Switched(live)),
        };
        out.extend(items.iter().zip(confirmed).map(|(item, index)| {
            let hit = match (item, index) {
                (_, None) => return Verdict::default(),
                (Item::Url(url), Some(index)) => url.1.expression(&url.0, index).map(Hit::of),
                (_, Some(_)) => {
                    return Verdict {
                        listed: true,
                        hit: None,
                    }
                }
            };
            Verdict {
                listed: hit.is_some(),
                hit,
            }
        }));
        Ok(Attempt::Done)
    }

    /// For each item, its first probe that hit and is confirmed: by the verification table, or
    /// failing that by the set of added keys (one round trip for all such probes of the batch);
    /// every hit counts when the list has no table. `Err(version)` if the pointer moved.
    fn confirm(
        &mut self,
        items: &[Item],
        hits: &[Vec<usize>],
    ) -> Result<std::result::Result<Vec<Option<usize>>, u64>> {
        let Some(table) = &self.verify else {
            return Ok(Ok(hits.iter().map(|h| h.first().copied()).collect()));
        };
        // Per item: the hits before its first table-confirmed one need the added set.
        let mut asks: Vec<(usize, usize, u64)> = Vec::new();
        let mut first_in_table: Vec<Option<usize>> = Vec::with_capacity(items.len());
        for (i, (item, item_hits)) in items.iter().zip(hits).enumerate() {
            let mut found = None;
            for &index in item_hits {
                let print = fingerprint(item.hashes()[index]);
                if table.contains(print) {
                    found = Some(index);
                    break;
                }
                asks.push((i, index, print));
            }
            first_in_table.push(found);
        }
        if asks.is_empty() {
            return Ok(Ok(first_in_table));
        }
        let added = self.keys.added(self.meta.version);
        let mut commands = vec![cmd("GET").arg(self.keys.current()).clone()];
        commands.extend(
            asks.iter()
                .map(|&(_, _, print)| cmd("SISMEMBER").arg(&added).arg(print).clone()),
        );
        let mut answers = self
            .store
            .run(commands, "look up added keys (SISMEMBER)")?
            .into_iter();
        if let Some(live) = self.pointer(answers.next())? {
            return Ok(Err(live));
        }
        let mut confirmed = first_in_table;
        // `asks` is in item order and, per item, in probe order: the first member wins, and it
        // comes before the item's table-confirmed probe.
        for (&(item, index, _), answer) in asks.iter().zip(answers) {
            let member: bool = self.store.convert(answer, &added, "SISMEMBER")?;
            if member && confirmed[item].is_none_or(|c| index < c) {
                confirmed[item] = Some(index);
            }
        }
        Ok(Ok(confirmed))
    }

    /// `Some(live)` when the pointer answer names another version than ours.
    fn pointer(&self, answer: Option<Value>) -> Result<Option<u64>> {
        let pointer = self.keys.current();
        let live: Option<u64> =
            self.store
                .convert(answer.unwrap_or(Value::Nil), &pointer, "GET")?;
        match live {
            None => Err(no_list(&self.store, &self.keys)),
            Some(live) if live != self.meta.version => Ok(Some(live)),
            Some(_) => Ok(None),
        }
    }

    fn bad_chunk(&self, chunk: u64, key: &str, len: u64) -> Error {
        Error::BadChunk {
            url: self.store.shown().to_string(),
            name: self.keys.name().to_string(),
            version: self.meta.version,
            chunk,
            key: key.to_string(),
            problem: if len == 0 {
                "missing".to_string()
            } else {
                format!(
                    "shorter than its metadata says ({len} bytes, not {})",
                    self.meta.chunking.len_of(chunk)
                )
            },
        }
    }
}

/// The chunk keys of the version `meta` describes, in chunk order.
fn chunk_keys(keys: &Keys, meta: &RemoteMeta) -> Vec<String> {
    (0..meta.chunking.chunks())
        .map(|i| keys.chunk(meta.version, i))
        .collect()
}

/// Normalizes or canonicalizes one item and computes its probes, as the local blocklist does.
fn prepare(scheme: KeyScheme, item: &[u8], key: &mut Vec<u8>) -> Item {
    match scheme {
        KeyScheme::Expressions => match phishbloom_url::canonicalize(item) {
            Ok(url) => {
                let mut probes = UrlProbes::default();
                probes.compute(&url);
                Item::Url(Box::new((url, probes)))
            }
            Err(_) => Item::Clean,
        },
        KeyScheme::Exact | KeyScheme::Url | KeyScheme::Keywords => {
            key.clear();
            // An empty key (a blank line) is never listed: no list entry is empty.
            if scheme.append_key(item, key) == 0 {
                Item::Clean
            } else {
                Item::Key(scheme.key_hash(key))
            }
        }
    }
}

/// A fetched 64-byte block as the filter's words (little-endian).
fn block_of(bytes: &[u8]) -> Block {
    // `bytes` is 64 long (checked by the caller), so every 8-byte window exists.
    Block(std::array::from_fn(|w| {
        u64::from_le_bytes(std::array::from_fn(|b| bytes[w * 8 + b]))
    }))
}

fn no_list(store: &Store, keys: &Keys) -> Error {
    Error::NoList {
        url: store.shown().to_string(),
        name: keys.name().to_string(),
        key: keys.current(),
    }
}

/// The live version of the list, or [`Error::NoList`].
pub(crate) fn read_pointer(store: &mut Store, keys: &Keys) -> Result<u64> {
    let pointer = keys.current();
    let live: Option<u64> = store.query(
        cmd("GET").arg(&pointer).clone(),
        &pointer,
        "read the version pointer",
    )?;
    live.ok_or_else(|| no_list(store, keys))
}

/// The live version's metadata.
pub(crate) fn load_meta(store: &mut Store, keys: &Keys) -> Result<RemoteMeta> {
    let version = read_pointer(store, keys)?;
    load_version_meta(store, keys, version)
}

/// Version `version`'s metadata.
pub(crate) fn load_version_meta(
    store: &mut Store,
    keys: &Keys,
    version: u64,
) -> Result<RemoteMeta> {
    let key = keys.meta(version);
    let fields: HashMap<String, String> =
        store.query(cmd("HGETALL").arg(&key).clone(), &key, "read the metadata")?;
    if fields.is_empty() {
        return Err(Error::MissingMeta {
            url: store.shown().to_string(),
            name: keys.name().to_string(),
            version,
            key,
        });
    }
    let meta = RemoteMeta::from_fields(store.shown(), &key, &fields)?;
    if meta.version != version || meta.list.name != keys.name() {
        return Err(Error::BadMeta {
            url: store.shown().to_string(),
            key,
            field: "version".into(),
            problem: format!(
                "version {} of list `{}`, under the key of version {version} of `{}`",
                meta.version,
                meta.list.name,
                keys.name()
            ),
        });
    }
    Ok(meta)
}

/// Reads and checks version `meta`'s verification table (every chunk's length and xxh3).
pub(crate) fn load_verification(
    store: &mut Store,
    keys: &Keys,
    meta: &RemoteMeta,
) -> Result<Option<Fingerprints>> {
    let Some(verify) = &meta.verify else {
        return Ok(None);
    };
    let version = meta.version;
    let chunk_keys: Vec<String> = (0..verify.chunking.chunks())
        .map(|j| keys.verify_chunk(version, j))
        .collect();
    let mut table = Vec::with_capacity(verify.count as usize);
    // A few MiB per round trip, as a push writes them.
    let per_trip = (crate::push::PIPELINE_BYTES / verify.chunking.chunk_bytes).max(1) as usize;
    for (group, group_keys) in chunk_keys.chunks(per_trip).enumerate() {
        let answers = store.run(
            group_keys
                .iter()
                .map(|k| cmd("GET").arg(k).clone())
                .collect(),
            "read the verification table",
        )?;
        for (offset, (key, answer)) in group_keys.iter().zip(answers).enumerate() {
            let j = (group * per_trip + offset) as u64;
            let bytes: Option<Vec<u8>> = store.convert(answer, key, "GET")?;
            let bytes = bytes.unwrap_or_default();
            let bad = |problem: String| Error::BadChunk {
                url: store.shown().to_string(),
                name: keys.name().to_string(),
                version,
                chunk: j,
                key: key.clone(),
                problem,
            };
            if bytes.len() as u64 != verify.chunking.len_of(j) {
                return Err(bad(if bytes.is_empty() {
                    "missing".into()
                } else {
                    format!("{} bytes, not {}", bytes.len(), verify.chunking.len_of(j))
                }));
            }
            let computed = xxhash_rust::xxh3::xxh3_64(&bytes);
            if computed != verify.sums[j as usize] {
                return Err(Error::ChecksumMismatch {
                    url: store.shown().to_string(),
                    name: keys.name().to_string(),
                    version,
                    chunk: j,
                    key: key.clone(),
                    stored: verify.sums[j as usize],
                    computed,
                });
            }
            table.extend(
                bytes
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(std::array::from_fn(|b| w[b]))),
            );
        }
    }
    Fingerprints::from_sorted(table)
        .map(Some)
        .ok_or_else(|| Error::BadMeta {
            url: store.shown().to_string(),
            key: keys.meta(version),
            field: "verify-count".into(),
            problem: "describing a table that is not sorted strictly ascending".into(),
        })
}
