//! [`RedisBlocklist`]: checks items against a list in Redis with the verdicts of the local file.
//!
//! Items are normalized (whole keys) or canonicalized and expanded into their probe hashes (URL
//! entries) here, with the blocklist crate's own functions. Each probe's block is fetched with
//! one `GETRANGE` of 64 bytes; a batch's `GETRANGE`s and a read of the version pointer go out as
//! one pipeline (one round trip), and the blocks are probed here. Every probe that hits becomes a
//! candidate entry, and the blocklist crate's [`Resolver`] — built once per version from the
//! pushed file's categories, verification table and exceptions — decides the verdict exactly as
//! it does for the file: confirmation, categories, exceptions, the most specific entry. A
//! candidate the table does not hold may be a key `add` inserted: the resolver says which such
//! candidates could change a verdict, and those are looked up in the set of added keys in a
//! second round trip that only they cost.
//!
//! A batch answers from one version: the one whose chunks it read. If the pointer shows that a
//! newer version went live, or a chunk is gone because its version expired, the batch re-reads
//! the pointer and is retried once on the live version; a second switch, a missing list or a
//! damaged chunk is an error, never a clean verdict.

use std::cell::RefCell;
use std::collections::HashMap;

use phishbloom_blocklist::check::Answerer;
use phishbloom_core::engine::fingerprint;
use phishbloom_core::engine::probes::UrlProbes;
use phishbloom_core::hits::Candidate;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::prepare::{Preparer, Query};
use phishbloom_core::resolve::Verdict;
use phishbloom_core::resolve::{Category, CompactTable, Resolver, Verification};
use phishbloom_filter::{Block, Blocked, KeyHash};
use phishbloom_url::CanonicalUrl;
use redis::{cmd, Cmd, Value};

use crate::error::{Error, Result};
use crate::layout::{Keys, BLOCK_BYTES};
use crate::meta::RemoteMeta;
use crate::store::{Store, Target};
use crate::stored::load_resolver;

/// A list in Redis, checked through one connection (one per thread: checks take `&mut self`).
pub struct RedisBlocklist {
    store: Store,
    keys: Keys,
    meta: RemoteMeta,
    /// The live version's categories, verification table and exceptions.
    resolver: Resolver,
    /// The categories asked for ([`RedisBlocklist::keep_categories`]), applied to every version.
    kept: Option<Vec<String>>,
    /// The live version's chunk keys, named once per version rather than once per probe.
    chunk_keys: Vec<String>,
}

/// One checked item, prepared locally.
enum Item {
    /// Never listed: a blank line.
    Clean,
    /// A line a list of URL entries cannot read: the reason.
    Invalid(String),
    /// A whole key (normalized, for the verdict's text): one probe.
    Key(KeyHash, Box<[u8]>),
    /// A URL: every probe of its expressions, in order.
    Url(Box<(CanonicalUrl, UrlProbes)>),
}

impl Item {
    fn hashes(&self) -> &[KeyHash] {
        match self {
            Item::Clean | Item::Invalid(_) => &[],
            Item::Key(hash, _) => std::slice::from_ref(hash),
            Item::Url(url) => url.1.hashes(),
        }
    }

    /// The candidate entries of the probes that hit (`hits`: their indexes, in probe order),
    /// as the local engine lists them.
    fn candidates(&self, hits: &[usize]) -> Found {
        match self {
            Item::Clean | Item::Invalid(_) => Found::Key(false),
            Item::Key(..) => Found::Key(!hits.is_empty()),
            Item::Url(url) => Found::Url(
                hits.iter()
                    .filter_map(|&index| {
                        let expression = url.1.expression(&url.0, index)?;
                        Some(Candidate::new(
                            fingerprint(url.1.hashes()[index]),
                            expression,
                        ))
                    })
                    .collect(),
            ),
        }
    }

    /// The verdict for what the filter found, confirming a candidate the verification table
    /// does not hold when `extra` vouches for its fingerprint (with its categories' ids, or
    /// none when unknown). `key` is scratch space.
    fn verdict(
        &self,
        resolver: &Resolver,
        found: &mut Found,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
        key: &mut Vec<u8>,
    ) -> Verdict {
        match (self, found) {
            (Item::Key(hash, normalized), Found::Key(hit)) => {
                // The fingerprint only matters for a hit; hashing is skipped for the rest.
                let print = if *hit { fingerprint(*hash) } else { 0 };
                resolver.key_verdict_with(normalized, *hit, print, extra)
            }
            (Item::Url(url), Found::Url(candidates)) => {
                resolver.url_verdict_with(&url.0, candidates, key, extra)
            }
            (Item::Invalid(reason), _) => Verdict::invalid(reason),
            _ => Verdict::default(),
        }
    }
}

/// What the filter found for one item: whether a whole key hit, or a URL's candidate entries.
enum Found {
    Key(bool),
    Url(Vec<Candidate>),
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
        let resolver = load_resolver(&mut store, &keys, &meta)?;
        let chunk_keys = chunk_keys(&keys, &meta);
        Ok(RedisBlocklist {
            store,
            keys,
            meta,
            resolver,
            kept: None,
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

    /// The verification table (with each entry's categories), if the list has one.
    pub fn verification(&self) -> Option<&Verification> {
        self.resolver.verification()
    }

    /// Refuses a version without a verification table, for a caller that wants every hit
    /// confirmed exactly.
    pub fn require_verification(&self) -> Result<()> {
        match self.verification() {
            Some(_) => Ok(()),
            None => Err(Error::NoVerification {
                url: self.store.shown().to_string(),
                name: self.keys.name().to_string(),
                version: self.version(),
            }),
        }
    }

    /// What decides verdicts: the live version's categories, verification table and exceptions.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        self.resolver.categories()
    }

    /// Answers only for entries of the named categories from now on, in this version and every
    /// later one; a name the list does not have is an error listing those it has.
    pub fn keep_categories(&mut self, names: &[String]) -> Result<()> {
        let ids = self.category_ids(&self.resolver, self.meta.version, names)?;
        self.resolver.set_filter(ids);
        self.kept = Some(names.to_vec());
        Ok(())
    }

    /// The ids of the named categories in `resolver`, version `version`'s.
    fn category_ids(
        &self,
        resolver: &Resolver,
        version: u64,
        names: &[String],
    ) -> Result<Vec<u16>> {
        let categories = resolver.categories();
        names
            .iter()
            .map(|name| {
                categories
                    .iter()
                    .position(|c| c.name == *name)
                    .map(|id| id as u16)
                    .ok_or_else(|| Error::UnknownCategory {
                        url: self.store.shown().to_string(),
                        name: self.keys.name().to_string(),
                        version,
                        category: name.clone(),
                        available: categories
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
            })
            .collect()
    }

    /// The connection.
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Whether `item` (a line without its terminator) is listed.
    pub fn contains(&mut self, item: &[u8]) -> Result<bool> {
        Ok(self.check(item)?.listed())
    }

    /// The verdict for one item.
    pub fn check(&mut self, item: &[u8]) -> Result<Verdict> {
        let mut out = Vec::with_capacity(1);
        self.check_batch(&[item], &mut out)?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Appends one verdict per item to `out`, in order, exactly as
    /// `phishbloom_core::Blocklist::check_batch` answers on the pushed file: one round trip
    /// for the blocks (plus one for hits the verification table does not confirm). On error,
    /// `out` is left as it was.
    pub fn check_batch(&mut self, items: &[&[u8]], out: &mut Vec<Verdict>) -> Result<()> {
        let scheme = self.meta.list.scheme;
        let mut preparer = Preparer::default();
        let mut tops = !self.resolver.tops().is_empty();
        let mut prepared: Vec<Item> = items
            .iter()
            .map(|item| prepare(&mut preparer, scheme, tops, item))
            .collect();
        let start = out.len();
        for retry in [false, true] {
            let from = self.meta.version;
            let wanted = !self.resolver.tops().is_empty();
            if tops != wanted {
                // The version switched to one that probes top labels, or no longer does.
                tops = wanted;
                prepared = items
                    .iter()
                    .map(|item| prepare(&mut preparer, scheme, tops, item))
                    .collect();
            }
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

    /// Re-reads the pointer and opens the version it names (wholly, or not at all: on error the
    /// version in hand stays, and the next batch finds the pointer moved again).
    fn reload(&mut self) -> Result<()> {
        let meta = load_meta(&mut self.store, &self.keys)?;
        if meta.version != self.meta.version {
            let mut resolver = load_resolver(&mut self.store, &self.keys, &meta)?;
            if let Some(names) = &self.kept {
                resolver.set_filter(self.category_ids(&resolver, meta.version, names)?);
            }
            self.resolver = resolver;
            self.chunk_keys = chunk_keys(&self.keys, &meta);
            self.meta = meta;
        }
        Ok(())
    }

    /// One try at a batch on the version in hand.
    fn attempt(&mut self, items: &[Item], out: &mut Vec<Verdict>) -> Result<Attempt> {
        if let Some(table) = self.resolver.compact_arc() {
            return self.attempt_compact(&table, items, out);
        }
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
                return self.short_block(chunk);
            }
            blocks.push(block_of(&bytes));
        }
        // For each item, the candidates of its probes that hit, in probe order.
        let k = self.meta.num_hashes;
        let mut found: Vec<Found> = items
            .iter()
            .zip(&slots)
            .map(|(item, item_slots)| {
                let hits: Vec<usize> = item
                    .hashes()
                    .iter()
                    .zip(item_slots)
                    .enumerate()
                    .filter(|(_, (&hash, &slot))| Blocked::probe_block(&blocks[slot], k, hash))
                    .map(|(index, _)| index)
                    .collect();
                item.candidates(&hits)
            })
            .collect();
        self.finish(items, &mut found, out)
    }

    /// The verdicts of what the probes `found` for `items`, appended to `out` ([`Attempt::Done`]),
    /// or the version the pointer moved to meanwhile.
    fn finish(
        &mut self,
        items: &[Item],
        found: &mut [Found],
        out: &mut Vec<Verdict>,
    ) -> Result<Attempt> {
        match self.decide(items, found)? {
            Ok(verdicts) => {
                out.extend(verdicts);
                Ok(Attempt::Done)
            }
            Err(live) => Ok(Attempt::Switched(live)),
        }
    }

    /// One try at a batch on a compact version: its table, read whole with the version, is
    /// probed here; the round trip only reads the pointer, so that the batch answers from the
    /// live version.
    fn attempt_compact(
        &mut self,
        table: &CompactTable,
        items: &[Item],
        out: &mut Vec<Verdict>,
    ) -> Result<Attempt> {
        let pointer = self.store.run(
            vec![cmd("GET").arg(self.keys.current()).clone()],
            "read the live version",
        )?;
        if let Some(live) = self.pointer(pointer.into_iter().next())? {
            return Ok(Attempt::Switched(live));
        }
        let mut found: Vec<Found> = items
            .iter()
            .map(|item| {
                let hits: Vec<usize> = (0..item.hashes().len())
                    .filter(|&i| table.contains(fingerprint(item.hashes()[i])))
                    .collect();
                item.candidates(&hits)
            })
            .collect();
        self.finish(items, &mut found, out)
    }

    /// What a chunk that did not answer a whole block means: a version that expired under us
    /// shows as missing chunks, so a newer live version is switched to; otherwise the chunk is
    /// bad.
    fn short_block(&mut self, chunk: u64) -> Result<Attempt> {
        let key = &self.chunk_keys[chunk as usize];
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
        let len: u64 = self
            .store
            .convert(answers.next().unwrap_or(Value::Nil), key, "STRLEN")?;
        Err(self.bad_chunk(chunk, key, len))
    }

    /// The verdicts for what the filter found. The resolver decides each item, first with no
    /// added key confirmed, noting every candidate it would have accepted had it been added
    /// (candidates missing from the verification table, more specific than the entry that
    /// decided). Only if there are such candidates is the set of added keys asked about them —
    /// one round trip for the batch — and those items decided again with the answers.
    /// `Err(version)` if the pointer moved.
    fn decide(
        &mut self,
        items: &[Item],
        found: &mut [Found],
    ) -> Result<std::result::Result<Vec<Verdict>, u64>> {
        let mut key = Vec::new();
        let asked: RefCell<Vec<u64>> = RefCell::new(Vec::new());
        let note = |print: u64| {
            asked.borrow_mut().push(print);
            None
        };
        let mut again: Vec<usize> = Vec::new();
        let mut verdicts: Vec<Verdict> = Vec::with_capacity(items.len());
        for (i, (item, item_found)) in items.iter().zip(found.iter_mut()).enumerate() {
            let before = asked.borrow().len();
            verdicts.push(item.verdict(&self.resolver, item_found, &note, &mut key));
            if asked.borrow().len() > before {
                again.push(i);
            }
        }
        if again.is_empty() {
            return Ok(Ok(verdicts));
        }
        let mut prints = asked.into_inner();
        prints.sort_unstable();
        prints.dedup();
        let added = self.keys.added(self.meta.version);
        let added_categories = self.keys.added_categories(self.meta.version);
        let mut commands = vec![cmd("GET").arg(self.keys.current()).clone()];
        for &print in &prints {
            commands.push(cmd("SISMEMBER").arg(&added).arg(print).clone());
            commands.push(cmd("HGET").arg(&added_categories).arg(print).clone());
        }
        let mut answers = self
            .store
            .run(commands, "look up added keys (SISMEMBER, HGET)")?
            .into_iter();
        if let Some(live) = self.pointer(answers.next())? {
            return Ok(Err(live));
        }
        let mut members: HashMap<u64, Vec<u16>> = HashMap::new();
        for &print in &prints {
            let (Some(member), Some(ids)) = (answers.next(), answers.next()) else {
                break;
            };
            let ids: Option<String> = self.store.convert(ids, &added_categories, "HGET")?;
            if self.store.convert(member, &added, "SISMEMBER")? {
                members.insert(print, parse_ids(ids.as_deref().unwrap_or("")));
            }
        }
        if members.is_empty() {
            return Ok(Ok(verdicts));
        }
        let member = |print: u64| members.get(&print).cloned();
        for i in again {
            verdicts[i] = items[i].verdict(&self.resolver, &mut found[i], &member, &mut key);
        }
        Ok(Ok(verdicts))
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

/// Items per pipeline (one round trip): large enough to amortize the round trip, small enough
/// that a batch's pipeline (up to E `GETRANGE`s per URL) stays a few hundred KiB.
pub const BATCH_ITEMS: usize = 1000;

/// A list in Redis as one worker of the stream checker (`check --redis`): the stream's chunks
/// go out [`BATCH_ITEMS`] at a time.
impl Answerer for RedisBlocklist {
    type Error = Error;

    fn answer(&mut self, items: &[&[u8]], out: &mut Vec<Verdict>) -> Result<()> {
        for batch in items.chunks(BATCH_ITEMS) {
            self.check_batch(batch, out)?;
        }
        Ok(())
    }
}

/// One item as the local blocklist prepares it ([`phishbloom_core::prepare`]), with its
/// probes computed (its top label's only with `tops`: the list has single-label domains).
fn prepare(preparer: &mut Preparer, scheme: KeyScheme, tops: bool, item: &[u8]) -> Item {
    match preparer.query(scheme, item) {
        Query::Url(url) => {
            let mut probes = UrlProbes::default();
            probes.compute_gated(url, None, (false, tops));
            Item::Url(Box::new((url.clone(), probes)))
        }
        Query::Invalid(error) => Item::Invalid(error.to_string()),
        Query::Blank => Item::Clean,
        // An empty key (a blank line) is never listed: no list entry is empty.
        Query::Key([]) => Item::Clean,
        Query::Key(key) => Item::Key(scheme.key_hash(key), key.into()),
        Query::Phrase(line) => {
            let mut key = Vec::new();
            if scheme.append_key(line, &mut key) == 0 {
                Item::Clean
            } else {
                Item::Key(scheme.key_hash(&key), key.into())
            }
        }
    }
}

/// The category ids of an added key, as `add` records them (`"0,3"`); unreadable parts are
/// skipped, so a damaged field answers with fewer (or, empty, the possible) categories.
pub(crate) fn parse_ids(text: &str) -> Vec<u16> {
    text.split(',')
        .filter_map(|id| id.trim().parse().ok())
        .collect()
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
