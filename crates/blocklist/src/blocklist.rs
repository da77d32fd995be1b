//! [`Blocklist`]: a list in one self-describing file — whichever kind it holds — built from
//! keys or entries, saved atomically, opened whole into memory, and asked about items.
//!
//! Opening reads the entire file into memory with positioned reads and checks every checksum,
//! so a file replaced, truncated or rewritten in place while a `Blocklist` built from it is in
//! use changes nothing and faults nothing: the blocklist answers from its own copy. Replace a
//! served file by renaming a new one over it (which [`Blocklist::save`] does); a reader that
//! opens during a rewrite in place gets a checksum error, never torn data.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::{AnyFilter, BloomFilter, Filter, HashStrategy, KeyHash, LayoutKind};

use crate::structure::{Layer, LayerInfo, Layers};
use phishbloom_url::{CanonicalUrl, Entry};

use crate::atomic::AtomicFile;
use crate::delta::{Additions, Delta, ListState};
use crate::engine::cabf::{CabfEngine, Split};
use crate::engine::urls::{expression_hash, UrlFilter};
use crate::engine::{fingerprint, per_item_fpp, per_probe_fpp, Hit, Matcher, Scratch};
use crate::entries::EntrySet;
use crate::error::{Error, Result};
use crate::format::{self, tag, Directory, SectionData, Source};
use crate::keys::KeyScheme;
use crate::keywords::{KeywordEngine, KeywordsInfo};
use crate::resolve::{Category, Exceptions, Resolver, Verdict, Verification};
use crate::sections::{self, Meta, SetFingerprint};
use crate::source::KeyList;
use crate::stream::HashedKeys;

/// What structure a blocklist file holds (the header's kind code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One textbook Bloom filter: k bits anywhere in the array.
    Classic,
    /// One cache-line blocked Bloom filter: k bits in one 512-bit block.
    Blocked,
    /// Seed 003's CaBF: parallel component filters and a check filter (URL entries only).
    Cabf,
    /// A cuckoo filter (Fan et al. 2014): deletes; never evicts a resident fingerprint.
    Cuckoo,
    /// A counting Bloom filter with 4-bit counters: deletes; four times a Bloom filter's memory.
    Counting,
    /// One split-block Bloom filter (Parquet's SBBF): one bit in each 32-bit word of a 256-bit
    /// block, a branch-free probe; its 64-bit hash is the `h1` half of the key's [`KeyHash`].
    Split,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 6] = [
        Kind::Classic,
        Kind::Blocked,
        Kind::Cabf,
        Kind::Cuckoo,
        Kind::Counting,
        Kind::Split,
    ];

    /// The code stored in the file header.
    pub fn code(self) -> u16 {
        match self {
            Kind::Classic => 1,
            Kind::Blocked => 2,
            Kind::Cabf => 3,
            Kind::Cuckoo => 4,
            Kind::Counting => 5,
            Kind::Split => 6,
        }
    }

    /// The kind of a header code, if it is one.
    pub fn from_code(code: u16) -> Option<Self> {
        Kind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The name users see (`blocked`, `classic`, `cabf`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Classic => "classic",
            Kind::Blocked => "blocked",
            Kind::Cabf => "cabf",
            Kind::Cuckoo => "cuckoo",
            Kind::Counting => "counting",
            Kind::Split => "split",
        }
    }

    /// The Bloom layout of a Bloom kind.
    pub fn layout(self) -> Option<LayoutKind> {
        match self {
            Kind::Classic => Some(LayoutKind::Classic),
            Kind::Blocked => Some(LayoutKind::Blocked),
            Kind::Split => Some(LayoutKind::Split),
            _ => None,
        }
    }

    /// Whether lists of this kind can delete entries.
    pub fn deletes(self) -> bool {
        matches!(self, Kind::Cuckoo | Kind::Counting)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The structure that answers queries.
pub enum Engine {
    /// Whole keys (exact or URL-normalized) in the list's structure.
    Keys(Layers),
    /// URL entries in the list's structure, probed with every lookup expression.
    Urls(UrlFilter),
    /// URL entries in CaBF.
    Cabf(CabfEngine),
    /// Keywords and phrases, found inside text by `scan`.
    Keywords(KeywordEngine),
}

/// How to build a blocklist.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The structure.
    pub kind: Kind,
    /// Target false-positive rate per checked item (per URL for URL entries, per key otherwise).
    pub fpp: f64,
    /// Probes per checked URL the filter is sized for (E); keys use 1.
    pub expression_bound: u32,
    /// Hash strategy (whole keys only; URL entries always use xxh3).
    pub strategy: HashStrategy,
    /// Whether to store the verification section.
    pub verify: bool,
    /// Threads for inserting.
    pub threads: usize,
    /// The list's name.
    pub name: String,
    /// The list version.
    pub version: u64,
    /// Creation time (seconds since the Unix epoch).
    pub created: u64,
    /// Size the structure for this many entries when the list has fewer (room to add, or
    /// shards built apart that can be merged); with `grow`, the first layer's size.
    pub capacity: Option<u64>,
    /// Grow when full: add layers of twice the capacity at half the rate (RedisBloom's
    /// scalable scheme), so a list of unknown size keeps its rate.
    pub grow: bool,
}

impl BuildOptions {
    /// The entry count the structure (its first layer, for a list that grows) is sized for:
    /// the list's, or the capacity if larger — or, for a list that grows, the capacity as
    /// given (the layers added as it fills take the rest).
    pub fn sized_for(&self, entries: usize) -> u64 {
        match self.capacity {
            Some(capacity) if self.grow => capacity.max(1),
            capacity => (entries as u64).max(capacity.unwrap_or(0)).max(1),
        }
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            kind: Kind::Blocked,
            fpp: 0.01,
            expression_bound: crate::engine::DEFAULT_EXPRESSION_BOUND,
            strategy: HashStrategy::Xxh3,
            verify: false,
            threads: 1,
            name: String::from("list"),
            version: 1,
            created: now(),
            capacity: None,
            grow: false,
        }
    }
}

/// The list's structure for `entries` entries at per-probe rate `fpp`, filled by `insert`. A
/// cuckoo filter that cannot take every key at 95 % load is rebuilt with more buckets (a few
/// times, 5 % more each) before the list is reported full.
fn fill(
    options: &BuildOptions,
    entries: usize,
    fpp: f64,
    insert: impl Fn(&mut Layers) -> Result<()>,
) -> Result<Layers> {
    let capacity = options.sized_for(entries);
    let mut headroom = 1.0;
    loop {
        let sized = (capacity as f64 * headroom).ceil() as u64;
        let mut layers = Layers::new(options.kind, sized, fpp, options.strategy, options.grow)?;
        match insert(&mut layers) {
            Err(Error::Full { .. }) if options.kind == Kind::Cuckoo && headroom < 1.3 => {
                headroom *= 1.05;
            }
            other => return other.map(|()| layers),
        }
    }
}

/// Seconds since the Unix epoch: `SOURCE_DATE_EPOCH` when set (reproducible builds), else the
/// clock.
pub fn now() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
}

/// A blocklist: metadata, the engine, and what turns its hits into verdicts (verification
/// table, categories, exceptions).
pub struct Blocklist {
    kind: Kind,
    meta: Meta,
    engine: Engine,
    resolver: Resolver,
    directory: Option<Directory>,
    /// The file it was read from (its name for a list built in memory), for messages.
    origin: PathBuf,
}

impl Blocklist {
    /// Builds a blocklist of whole keys (passwords, tokens, e-mail addresses: `scheme` says how
    /// they were normalized), one group of distinct keys per category (a key may be in several).
    /// The filter is sized for the distinct keys' count at `options.fpp` per key.
    pub fn from_keys(
        groups: &[(String, KeyList)],
        scheme: KeyScheme,
        options: &BuildOptions,
    ) -> Result<Self> {
        if options.kind == Kind::Cabf {
            return Err(Error::WrongScheme {
                path: PathBuf::from(&options.name),
                problem: "a CaBF blocklist holds URL entries, not whole keys; build it as a \
                          blocked, classic, split, cuckoo or counting filter"
                    .into(),
            });
        }
        // Distinct keys across the groups, by entry fingerprint. One group is distinct already.
        let v_of = |key: &[u8]| fingerprint(KeyHash::of(key));
        let mut counts = vec![0u64; groups.len()];
        let mut set_fingerprint = SetFingerprint::default();
        let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for (id, (_, keys)) in groups.iter().enumerate() {
            counts[id] = keys.len() as u64;
            if groups.len() == 1 {
                set_fingerprint = SetFingerprint::of(keys.iter().map(v_of));
            } else {
                for key in keys.iter() {
                    let v = v_of(key);
                    if seen.insert(v) {
                        set_fingerprint.add(v);
                    }
                }
            }
        }
        let entries = match groups.len() {
            1 => groups[0].1.len(),
            _ => seen.len(),
        };
        let layers = fill(options, entries, options.fpp, |layers| {
            let key_hashing = layers.key_hashing_bloom().is_some();
            match layers.single_bloom_mut() {
                // One Bloom filter of known size that hashes keys as the list does: every core
                // inserts (a key twice sets its bits twice, which changes nothing).
                Some(filter) if !options.grow && key_hashing => {
                    for (_, keys) in groups {
                        filter.insert_parallel(&keys.as_slices(), options.threads);
                    }
                    Ok(())
                }
                // Each distinct key once (a cuckoo filter would store a second copy).
                _ => {
                    let mut inserted = std::collections::HashSet::new();
                    groups
                        .iter()
                        .flat_map(|(_, keys)| keys.iter())
                        .filter(|key| groups.len() == 1 || inserted.insert(v_of(key)))
                        .try_for_each(|key| layers.insert_key(key))
                }
            }
        })?;
        let verification = options.verify.then(|| {
            let pairs = groups
                .iter()
                .enumerate()
                .flat_map(|(id, (_, keys))| keys.iter().map(move |k| (v_of(k), vec![id as u16])))
                .collect();
            Verification::new(pairs, groups.len() > 1)
        });
        let categories = groups
            .iter()
            .zip(counts)
            .map(|((name, _), entries)| Category {
                name: name.clone(),
                entries,
            })
            .collect();
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme,
            probes_per_item: 1,
            entries: entries as u64,
            fingerprint: set_fingerprint,
            target_fpp: Some(options.fpp),
            exact_count: true,
        };
        Ok(Blocklist {
            kind: options.kind,
            meta,
            engine: Engine::Keys(layers),
            resolver: Resolver::new(categories, verification, Exceptions::default()),
            directory: None,
            origin: PathBuf::from(&options.name),
        })
    }

    /// Whether [`Blocklist::from_hashed_keys`] builds what `options` ask for: a blocked,
    /// classic or counting filter that does not grow, hashed with xxh3. Those are filled the
    /// same whatever the order of their keys; a cuckoo filter places its keys by insertion
    /// order (list order, not hash order), the layers of a list that grows fill in list order,
    /// and the sha256 strategy hashes the keys themselves.
    pub fn builds_from_hashes(options: &BuildOptions) -> bool {
        matches!(options.kind, Kind::Blocked | Kind::Classic | Kind::Counting)
            && !options.grow
            && options.strategy == HashStrategy::Xxh3
    }

    /// Builds a blocklist of whole keys from their distinct hashes ([`HashedKeys`], a streamed
    /// read), one category named `category`: bit for bit the file [`Blocklist::from_keys`]
    /// builds from the same keys in one group (same count, same bits, same fingerprint).
    /// Refused unless [`Blocklist::builds_from_hashes`] accepts `options`.
    pub fn from_hashed_keys(
        keys: &HashedKeys,
        category: &str,
        scheme: KeyScheme,
        options: &BuildOptions,
    ) -> Result<Self> {
        if !Self::builds_from_hashes(options) {
            return Err(Error::Unsupported {
                what: "building from key hashes",
                why: "a cuckoo filter and a list that grows fill in list order, and the sha256 \
                      strategy hashes the keys themselves: build these from a KeyList \
                      (Blocklist::from_keys)",
            });
        }
        let entries = keys.len() as usize;
        let layers = fill(options, entries, options.fpp, |layers| {
            match layers.single_bloom_mut() {
                // Ascending hashes fill a blocked filter block range by block range.
                Some(AnyFilter::Blocked(filter)) => keys.try_for_each(|hash| {
                    filter.insert_hash(hash);
                    Ok(())
                }),
                Some(AnyFilter::Classic(filter)) => keys.try_for_each(|hash| {
                    filter.insert_hash(hash);
                    Ok(())
                }),
                // Counting (and any other kind `builds_from_hashes` admits) through the
                // layers' own insert.
                Some(_) | None => keys.try_for_each(|hash| layers.insert_hash(hash)),
            }
        })?;
        let verification = options.verify.then(|| {
            let mut pairs = Vec::with_capacity(entries);
            keys.try_for_each(|hash| {
                // One category: the table keeps no category sets, so no ids are needed.
                pairs.push((fingerprint(hash), Vec::new()));
                Ok(())
            })
            .map(|()| Verification::new(pairs, false))
        });
        let verification = verification.transpose()?;
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme,
            probes_per_item: 1,
            entries: keys.len(),
            fingerprint: keys.fingerprint(),
            target_fpp: Some(options.fpp),
            exact_count: true,
        };
        let categories = vec![Category {
            name: category.to_string(),
            entries: keys.len(),
        }];
        Ok(Blocklist {
            kind: options.kind,
            meta,
            engine: Engine::Keys(layers),
            resolver: Resolver::new(categories, verification, Exceptions::default()),
            directory: None,
            origin: PathBuf::from(&options.name),
        })
    }

    /// Builds a blocklist of URL entries (distinct, with their categories and the exceptions),
    /// sized so that a URL with up to `options.expression_bound` expressions is a false
    /// positive with probability at most `options.fpp`.
    pub fn from_entries(set: &EntrySet, options: &BuildOptions) -> Result<Self> {
        phishbloom_filter::math::validate_fpp(options.fpp)?;
        let entries = &set.entries;
        let (engine, fingerprints) = match options.kind {
            Kind::Cabf => {
                let (engine, fingerprints) =
                    CabfEngine::build(entries, options.fpp, options.expression_bound)?;
                (Engine::Cabf(engine), fingerprints)
            }
            _ => {
                let probe = per_probe_fpp(options.fpp, options.expression_bound);
                let hashes: Vec<KeyHash> =
                    entries.iter().map(|e| expression_hash(e.key())).collect();
                let layers = fill(options, entries.len(), probe, |layers| {
                    hashes.iter().try_for_each(|&hash| layers.insert_hash(hash))
                })?;
                let fingerprints: Vec<u64> = hashes.into_iter().map(fingerprint).collect();
                (Engine::Urls(UrlFilter::new(layers)), fingerprints)
            }
        };
        // Of the entries' own fingerprints, whatever the kind (CaBF's verification section
        // holds fingerprints of its component sequences instead).
        let fingerprint_of_set = SetFingerprint::of(
            entries
                .iter()
                .map(|e| fingerprint(expression_hash(e.key()))),
        );
        let verification = options.verify.then(|| {
            let pairs = fingerprints
                .into_iter()
                .zip(&set.membership)
                .map(|(f, ids)| (f, ids.clone()))
                .collect();
            Verification::new(pairs, set.categories.len() > 1)
        });
        let categories = set
            .categories
            .iter()
            .enumerate()
            .map(|(id, name)| Category {
                name: name.clone(),
                entries: set.count_in(id as u16),
            })
            .collect();
        let exceptions = Exceptions::new(set.exceptions.iter().map(Entry::to_key_string));
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme: KeyScheme::Expressions,
            probes_per_item: options.expression_bound.max(1),
            entries: entries.len() as u64,
            fingerprint: fingerprint_of_set,
            target_fpp: Some(options.fpp),
            exact_count: true,
        };
        Ok(Blocklist {
            kind: options.kind,
            meta,
            engine,
            resolver: Resolver::new(categories, verification, exceptions),
            directory: None,
            origin: PathBuf::from(&options.name),
        })
    }

    /// Opens the blocklist file at `path`, whichever kind it holds, reading it whole into
    /// memory and checking every checksum and field.
    ///
    /// A regular file is read with positioned reads; anything else that can be opened (a pipe
    /// such as `<(curl …)`, a character device) is read to its end first.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let metadata = file.metadata().map_err(|e| Error::io(path, "open", e))?;
        if metadata.is_dir() {
            return Err(Error::IsADirectory {
                path: path.to_path_buf(),
            });
        }
        if metadata.is_file() {
            return Self::read(path, &file).map(|list| list.attach_keyword_file(file));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|e| Error::io(path, "read", e))?;
        Self::from_bytes(path, &bytes)
    }

    /// Reads only the metadata of the blocklist file at `path` (header, table and metadata
    /// section, checksums verified): cheap even for a large file. Only for regular files (a FIFO
    /// would block the open).
    pub fn read_meta(path: impl AsRef<Path>) -> Result<(Kind, Meta)> {
        let path = path.as_ref();
        let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, "open", e))?;
        if !metadata.is_file() {
            return Err(Error::invalid(path, "file type", "not a regular file"));
        }
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let directory = format::read_directory(path, &file)?;
        let kind = kind_of(path, &directory)?;
        Ok((kind, read_meta(path, &file, &directory)?))
    }

    /// A blocklist from a whole file image held in memory, with every check of
    /// [`Blocklist::open`]; `name` labels errors.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: &[u8]) -> Result<Self> {
        Self::read(name.as_ref(), &bytes).map(|list| list.attach_keyword_bytes(bytes))
    }

    /// A blocklist from its parts (the keyword builder's: one category, named after the list).
    pub(crate) fn from_parts(kind: Kind, meta: Meta, engine: Engine) -> Self {
        let categories = vec![Category {
            name: meta.name.clone(),
            entries: meta.entries,
        }];
        Blocklist {
            origin: PathBuf::from(&meta.name),
            kind,
            meta,
            engine,
            resolver: Resolver::new(categories, None, Exceptions::default()),
            directory: None,
        }
    }

    /// Hands a keyword list's index the open file it reads blocks from on hits.
    fn attach_keyword_file(mut self, file: File) -> Self {
        if let (Engine::Keywords(engine), Some(directory)) = (&mut self.engine, &self.directory) {
            engine.attach_file(file, directory);
        }
        self
    }

    /// Hands a keyword list's index its blocks from a whole file image.
    fn attach_keyword_bytes(mut self, image: &[u8]) -> Self {
        if let (Engine::Keywords(engine), Some(directory)) = (&mut self.engine, &self.directory) {
            engine.attach_bytes(image, directory);
        }
        self
    }

    fn read(path: &Path, source: &dyn Source) -> Result<Self> {
        let directory = format::read_directory(path, source)?;
        let kind = kind_of(path, &directory)?;
        let layer_tag = match kind {
            Kind::Classic | Kind::Blocked | Kind::Split | Kind::Cabf => tag::FILTER,
            Kind::Cuckoo => tag::CUCKOO,
            Kind::Counting => tag::COUNTERS,
        };
        for entry in &directory.sections {
            let expected = match entry.tag {
                tag::META | tag::VERIFY | tag::CATEGORIES | tag::CATEGORY_SETS => entry.index == 0,
                tag::EXCEPTIONS => entry.index == 0,
                tag::FILTER | tag::CUCKOO | tag::COUNTERS => entry.tag == layer_tag,
                tag::CABF => kind == Kind::Cabf && entry.index == 0,
                tag::GROWTH => kind != Kind::Cabf && entry.index == 0,
                tag::PATCH => kind.layout().is_some(),
                tag::KEYWORD_LENGTHS | tag::KEYWORD_INDEX => kind != Kind::Cabf && entry.index == 0,
                t if t >= format::OPTIONAL_TAGS => true,
                t => {
                    return Err(Error::UnknownSection {
                        path: path.to_path_buf(),
                        tag: t,
                    })
                }
            };
            if !expected {
                return Err(Error::invalid(
                    path,
                    "section table",
                    format!("a {} in a {kind} blocklist", entry.describe()),
                ));
            }
        }
        let meta = read_meta(path, source, &directory)?;
        let filter_at = |index: u16| -> Result<AnyFilter> {
            let entry = directory
                .find(tag::FILTER, index)
                .ok_or(Error::MissingSection {
                    path: path.to_path_buf(),
                    section: "filter",
                })?;
            sections::read_filter(path, source, entry)
        };
        let filter_count = directory
            .sections
            .iter()
            .filter(|s| s.tag == layer_tag)
            .count();
        let engine = match kind {
            Kind::Classic | Kind::Blocked | Kind::Split | Kind::Cuckoo | Kind::Counting => {
                let grows = match directory.find(tag::GROWTH, 0) {
                    Some(entry) => {
                        sections::decode_growth(
                            path,
                            &format::read_section_vec(path, source, entry)?,
                        )?;
                        true
                    }
                    None => false,
                };
                if filter_count == 0 || (filter_count > 1 && !grows) {
                    return Err(Error::invalid(
                        path,
                        "filter sections",
                        format!(
                            "{filter_count} in a {kind} blocklist that does not grow, expected 1"
                        ),
                    ));
                }
                let mut layers = Vec::with_capacity(filter_count);
                for index in 0..filter_count {
                    // Indices are unique (the table is checked) and, being as many as the
                    // sections, run 0..n exactly when each is found.
                    let entry = directory.find(layer_tag, index as u16).ok_or_else(|| {
                        Error::invalid(path, "layer numbering", format!("no layer {index}"))
                    })?;
                    let layer = sections::read_layer(path, source, entry)?;
                    if let Layer::Bloom(filter) = &layer {
                        if Some(filter.layout()) != kind.layout() {
                            return Err(Error::invalid(
                                path,
                                "filter layout",
                                format!("{} in a {kind} blocklist", filter.layout()),
                            ));
                        }
                        let xxh3_only = grows || meta.scheme == KeyScheme::Expressions;
                        if xxh3_only && filter.hash_strategy() != HashStrategy::Xxh3 {
                            return Err(Error::invalid(
                                path,
                                "filter hash strategy",
                                "URL entries and growing lists are hashed with xxh3",
                            ));
                        }
                    }
                    layers.push(layer);
                }
                let mut patches: Vec<PrefixSet> = Vec::new();
                let patch_count = directory
                    .sections
                    .iter()
                    .filter(|s| s.tag == tag::PATCH)
                    .count();
                for index in 0..patch_count {
                    let entry = directory.find(tag::PATCH, index as u16).ok_or_else(|| {
                        Error::invalid(path, "patch numbering", format!("no patch {index}"))
                    })?;
                    let patch = sections::decode_patch(
                        path,
                        &format::read_section_vec(path, source, entry)?,
                    )?;
                    // One patch per prefix width, in ascending order: one encoding per list.
                    if patches.last().is_some_and(|p| p.bits() >= patch.bits()) {
                        return Err(Error::invalid(path, "patch order", patch.bits()));
                    }
                    patches.push(patch);
                }
                let layers = Layers::from_parts(kind, layers, grows, patches);
                match meta.scheme {
                    KeyScheme::Expressions => Engine::Urls(UrlFilter::new(layers)),
                    KeyScheme::Exact | KeyScheme::Folded | KeyScheme::Url => Engine::Keys(layers),
                    KeyScheme::Keywords => {
                        let filter = layers.into_single_bloom().ok_or_else(|| {
                            Error::invalid(path, "keyword list", "not one Bloom filter")
                        })?;
                        Engine::Keywords(KeywordEngine::read(path, source, &directory, filter)?)
                    }
                }
            }
            Kind::Cabf => {
                let params = directory.find(tag::CABF, 0).ok_or(Error::MissingSection {
                    path: path.to_path_buf(),
                    section: "CaBF",
                })?;
                let (split_code, count) =
                    sections::decode_cabf(path, &format::read_section_vec(path, source, params)?)?;
                let split = Split::from_code(split_code)
                    .ok_or_else(|| Error::invalid(path, "CaBF split", split_code))?;
                if !(1..=64).contains(&count) || filter_count != count as usize + 1 {
                    return Err(Error::invalid(
                        path,
                        "CaBF filter count",
                        format!("{count} component filters, {filter_count} filter sections"),
                    ));
                }
                if meta.scheme != KeyScheme::Expressions {
                    return Err(Error::invalid(
                        path,
                        "metadata key scheme",
                        "CaBF holds URL entries only",
                    ));
                }
                let mut filters = Vec::with_capacity(count as usize + 1);
                for index in 0..=count as u16 {
                    match filter_at(index)? {
                        AnyFilter::Classic(filter)
                            if filter.hash_strategy() == HashStrategy::Xxh3 =>
                        {
                            filters.push(filter)
                        }
                        _ => {
                            return Err(Error::invalid(
                                path,
                                "CaBF filter",
                                format!("filter {index} is not a classic xxh3 filter"),
                            ))
                        }
                    }
                }
                // `count ≥ 1`, so the check filter (the last) exists.
                let check: BloomFilter = filters.pop().ok_or(Error::MissingSection {
                    path: path.to_path_buf(),
                    section: "CaBF check filter",
                })?;
                Engine::Cabf(CabfEngine::from_parts(split, filters, check))
            }
        };
        let resolver = read_resolver(path, source, &directory, &meta)?;
        let mut meta = meta;
        if directory.version < 3 {
            // Version 2 summed the xxh3-128 of entry keys: the fingerprint of this version is
            // recomputed from the entries' fingerprints where the file has them, else it is
            // marked approximate (a delta then refuses the file until it is rebuilt).
            match (kind, resolver.verification()) {
                (Kind::Cabf, _) | (_, None) => meta.exact_count = false,
                (_, Some(table)) => {
                    meta.fingerprint =
                        SetFingerprint::of(table.fingerprints().as_slice().iter().copied());
                }
            }
        }
        Ok(Blocklist {
            kind,
            meta,
            engine,
            resolver,
            directory: Some(directory),
            origin: path.to_path_buf(),
        })
    }

    /// Writes the blocklist to `path` atomically (a temporary file beside it, fsync, rename),
    /// refusing an output that is not a regular file or is one of `inputs`; returns the new
    /// file's directory (its sections and checksum).
    pub fn save(&self, path: &Path, inputs: &[PathBuf]) -> Result<Directory> {
        let mut file = AtomicFile::create(path, inputs)?;
        let directory = self
            .write_to(&mut file)
            .map_err(|e| Error::io(path, "write", e))?;
        file.commit()?;
        Ok(directory)
    }

    /// The whole file image [`Blocklist::save`] writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    fn write_to(&self, out: &mut impl Write) -> std::io::Result<Directory> {
        let meta = sections::encode_meta(&self.meta);
        let categories = sections::encode_categories(self.resolver.categories());
        let category_sets = self
            .resolver
            .verification()
            .filter(|v| !v.set_of().is_empty())
            .map(sections::encode_category_sets);
        let exceptions = (!self.resolver.exceptions().is_empty())
            .then(|| sections::encode_exceptions(self.resolver.exceptions()));
        // (tag, index, parameter block, data) of each structure section.
        let mut blocks: Vec<(u16, u16, Vec<u8>, &[u8])> = Vec::new();
        let mut extra: Vec<(u16, Vec<u8>)> = Vec::new();
        let mut patch_parts: Vec<(u16, Vec<u8>, Vec<u8>)> = Vec::new();
        let layers = match &self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => Some(urls.layers()),
            Engine::Cabf(engine) => {
                extra.push((
                    tag::CABF,
                    sections::encode_cabf(engine.split().code(), engine.component_filters() as u32),
                ));
                for (index, filter) in engine.filters().enumerate() {
                    blocks.push((
                        tag::FILTER,
                        index as u16,
                        sections::encode_filter_params(&filter.params()),
                        filter.bit_bytes(),
                    ));
                }
                None
            }
            Engine::Keywords(engine) => {
                let filter = engine.filter();
                blocks.push((
                    tag::FILTER,
                    0,
                    sections::encode_filter_params(&filter.params()),
                    filter.bit_bytes(),
                ));
                extra.push((tag::KEYWORD_LENGTHS, engine.encode_lengths()));
                None
            }
        };
        if let Some(layers) = layers {
            for (index, layer) in layers.layers().iter().enumerate() {
                let (tag, params, bytes) = sections::encode_layer(layer);
                blocks.push((tag, index as u16, params, bytes));
            }
            for (index, patch) in layers.patches().iter().enumerate() {
                let (block, coded) = sections::encode_patch(patch);
                patch_parts.push((index as u16, block, coded));
            }
            if layers.grows() {
                extra.push((
                    tag::GROWTH,
                    sections::encode_growth(
                        crate::structure::EXPANSION as u32,
                        crate::structure::TIGHTENING,
                    ),
                ));
            }
        }
        let mut data = vec![SectionData {
            tag: tag::META,
            index: 0,
            parts: vec![&meta],
        }];
        for (index, block, coded) in &patch_parts {
            data.push(SectionData {
                tag: tag::PATCH,
                index: *index,
                parts: vec![block, coded],
            });
        }
        for (tag, index, params, bits) in &blocks {
            data.push(SectionData {
                tag: *tag,
                index: *index,
                parts: vec![params, bits],
            });
        }
        if let Some(table) = self.resolver.verification() {
            data.push(SectionData {
                tag: tag::VERIFY,
                index: 0,
                parts: vec![sections::encode_verify(table.fingerprints())],
            });
        }
        for (tag, bytes) in &extra {
            data.push(SectionData {
                tag: *tag,
                index: 0,
                parts: vec![bytes],
            });
        }
        data.push(SectionData {
            tag: tag::CATEGORIES,
            index: 0,
            parts: vec![&categories],
        });
        if let Some(bytes) = &category_sets {
            data.push(SectionData {
                tag: tag::CATEGORY_SETS,
                index: 0,
                parts: vec![bytes],
            });
        }
        if let Some(bytes) = &exceptions {
            data.push(SectionData {
                tag: tag::EXCEPTIONS,
                index: 0,
                parts: vec![bytes],
            });
        }
        // Ascending (tag, index) order, as the format requires.
        data.sort_by_key(|section| (section.tag, section.index));
        let spilled: Vec<format::SpilledSection<'_>> = match &self.engine {
            Engine::Keywords(engine) => engine.spilled_sections(),
            _ => Vec::new(),
        };
        let directory = format::plan_spilled(self.kind.code(), &data, &spilled)?;
        format::write_spilled(out, &directory, &data, &spilled)?;
        Ok(directory)
    }

    /// The structure.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The verification table, if the blocklist has one.
    pub fn verification(&self) -> Option<&Verification> {
        self.resolver.verification()
    }

    /// What turns hits into verdicts: categories, verification, exceptions.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        self.resolver.categories()
    }

    /// Answers only for entries of the named categories from now on; an unknown name is an
    /// error listing the list's categories. `path` names the file in that error.
    pub fn keep_categories(&mut self, names: &[String], path: &Path) -> Result<()> {
        let ids = self.resolver.category_ids(names, path)?;
        self.resolver.set_filter(ids);
        Ok(())
    }

    /// The file's header and section table, for a blocklist read from a file.
    pub fn directory(&self) -> Option<&Directory> {
        self.directory.as_ref()
    }

    /// The per-checked-item false-positive rate implied by the filter's per-probe target at
    /// the probes per item it was sized for.
    pub fn per_item_target(&self) -> Option<f64> {
        self.meta.target_fpp
    }

    /// The single Bloom filter of a classic, blocked or split blocklist that does not grow (`None`
    /// for the other kinds).
    pub fn filter(&self) -> Option<&AnyFilter> {
        match &self.engine {
            Engine::Keywords(engine) => Some(engine.filter()),
            _ => self.layers().and_then(Layers::single_bloom),
        }
    }

    /// The verdict for a canonical URL, for blocklists of URL entries (whole keys have no URL
    /// semantics: clean). Hits are confirmed when the list has verification; categories,
    /// exceptions and the most specific entry decide the rest (see [`crate::resolve`]).
    pub fn check_url(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Verdict {
        let matcher: &dyn Matcher = match &self.engine {
            Engine::Keys(_) | Engine::Keywords(_) => return Verdict::default(),
            Engine::Urls(urls) => urls,
            Engine::Cabf(cabf) => cabf,
        };
        let mut candidates = std::mem::take(&mut scratch.found);
        candidates.clear();
        matcher.candidates(url, scratch, &mut candidates);
        let verdict = self
            .resolver
            .url_verdict(url, &mut candidates, &mut scratch.key);
        scratch.found = candidates;
        verdict
    }

    /// The entry that lists a canonical URL (not allowed by an exception), if any.
    pub fn find_url(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        let verdict = self.check_url(url, scratch);
        if verdict.listed() {
            verdict.hit
        } else {
            None
        }
    }

    /// Answers one item (a line without its terminator).
    pub fn check(&self, item: &[u8], scratch: &mut Scratch) -> Verdict {
        let mut out = Vec::with_capacity(1);
        self.check_batch(&[item], scratch, &mut out);
        out.pop().unwrap_or_default()
    }

    /// Answers many items, appending one verdict each to `out`, in order. Whole keys are
    /// probed as one prefetched batch; URLs are canonicalized (a line that is not a URL is never
    /// listed) and matched through their expressions.
    pub fn check_batch(&self, items: &[&[u8]], scratch: &mut Scratch, out: &mut Vec<Verdict>) {
        out.reserve(items.len());
        if let Engine::Keywords(engine) = &self.engine {
            out.extend(items.iter().map(|item| {
                let listed = engine.check_phrase(item);
                self.resolver.key_verdict(item, listed, 0)
            }));
            return;
        }
        if let Engine::Keys(layers) = &self.engine {
            self.check_keys(layers, items, scratch, out);
            return;
        }
        // Taken out of `scratch` while it lends each URL, then put back: `check_url` needs the
        // rest of `scratch` at the same time.
        let mut canonicalizer = std::mem::take(&mut scratch.canonicalizer);
        out.extend(
            items
                .iter()
                .map(|item| match canonicalizer.canonicalize(item) {
                    Ok(url) => self.check_url(url, scratch),
                    Err(_) => Verdict::default(),
                }),
        );
        scratch.canonicalizer = canonicalizer;
    }

    /// Whole-key verdicts: normalize every item into one arena, then one batched query.
    fn check_keys(
        &self,
        layers: &Layers,
        items: &[&[u8]],
        scratch: &mut Scratch,
        out: &mut Vec<Verdict>,
    ) {
        let scheme = self.meta.scheme;
        scratch.key.clear();
        let mut ends = Vec::with_capacity(items.len());
        for item in items {
            scheme.append_key(item, &mut scratch.key);
            ends.push(scratch.key.len());
        }
        let mut start = 0;
        let keys: Vec<&[u8]> = ends
            .iter()
            .map(|&end| {
                let key = &scratch.key[start..end];
                start = end;
                key
            })
            .collect();
        scratch.answers.clear();
        layers.contains_key_batch(&keys, &mut scratch.answers);
        out.extend(keys.iter().zip(&scratch.answers).map(|(key, &hit)| {
            // The fingerprint only matters for a hit; hashing is skipped for the rest.
            let print = if hit {
                fingerprint(KeyHash::of(key))
            } else {
                0
            };
            self.resolver.key_verdict(key, hit, print)
        }));
    }
}

fn kind_of(path: &Path, directory: &Directory) -> Result<Kind> {
    Kind::from_code(directory.kind).ok_or(Error::UnknownKind {
        path: path.to_path_buf(),
        code: directory.kind,
    })
}

/// The categories, verification table (with its category sets) and exceptions of a file.
fn read_resolver(
    path: &Path,
    source: &dyn Source,
    directory: &Directory,
    meta: &Meta,
) -> Result<Resolver> {
    let categories = match directory.find(tag::CATEGORIES, 0) {
        Some(entry) => {
            sections::decode_categories(path, &format::read_section_vec(path, source, entry)?)?
        }
        None => vec![Category {
            name: meta.name.clone(),
            entries: meta.entries,
        }],
    };
    let verification = match directory.find(tag::VERIFY, 0) {
        Some(entry) => {
            let fingerprints = sections::read_verify(path, source, entry)?;
            let (set_of, sets) = match directory.find(tag::CATEGORY_SETS, 0) {
                Some(sets) => sections::decode_category_sets(
                    path,
                    &format::read_section_vec(path, source, sets)?,
                    fingerprints.len(),
                    categories.len(),
                )?,
                None => Default::default(),
            };
            Some(Verification::from_parts(fingerprints, set_of, sets))
        }
        None if directory.find(tag::CATEGORY_SETS, 0).is_some() => {
            return Err(Error::invalid(
                path,
                "category sets section",
                "without a verification section",
            ))
        }
        None => None,
    };
    let exceptions = match directory.find(tag::EXCEPTIONS, 0) {
        Some(_) if meta.scheme != KeyScheme::Expressions => {
            return Err(Error::invalid(
                path,
                "exceptions section",
                "in a list of whole keys",
            ))
        }
        Some(entry) => {
            sections::decode_exceptions(path, &format::read_section_vec(path, source, entry)?)?
        }
        None => Exceptions::default(),
    };
    Ok(Resolver::new(categories, verification, exceptions))
}

fn read_meta(path: &Path, source: &dyn Source, directory: &Directory) -> Result<Meta> {
    let entry = directory.find(tag::META, 0).ok_or(Error::MissingSection {
        path: path.to_path_buf(),
        section: "metadata",
    })?;
    sections::decode_meta(path, &format::read_section_vec(path, source, entry)?)
}

/// What an [`Blocklist::add`] or [`Blocklist::remove`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// Items newly in the list (added) or no longer in it (removed).
    pub changed: u64,
    /// Items that were in the list already (add) — or, for a list without a verification
    /// section, that its filter already answered for (they may or may not have been new).
    pub unchanged: u64,
}

/// What [`Blocklist::apply`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// Entries added.
    pub added: u64,
    /// Entries removed.
    pub removed: u64,
    /// Entries the delta removes that a Bloom file without a verification section keeps (it
    /// cannot forget them): they answer as false positives until the file is rebuilt.
    pub kept: u64,
    /// Entries whose categories changed.
    pub recategorized: u64,
    /// The list version now.
    pub version: u64,
}

/// One item to add or remove, prepared: its entry key (for the set fingerprint), its filter
/// hash and its verification fingerprint.
struct Prepared {
    key: Vec<u8>,
    hash: KeyHash,
    fingerprint: u64,
}

impl Blocklist {
    /// Prepares items as this list's key scheme reads them: URL entries are parsed (an item
    /// that is not an entry is an error naming it), keys normalized; blank items are skipped.
    fn prepare(&self, items: &[&[u8]]) -> Result<Vec<Prepared>> {
        let mut prepared = Vec::with_capacity(items.len());
        for item in items {
            let item = item.strip_suffix(b"\r").unwrap_or(item);
            match self.meta.scheme {
                KeyScheme::Expressions => {
                    if item.trim_ascii().is_empty() {
                        continue;
                    }
                    let entry = Entry::parse(item).map_err(|error| Error::InvalidItem {
                        item: String::from_utf8_lossy(item).into_owned(),
                        error,
                    })?;
                    let hash = expression_hash(entry.key());
                    prepared.push(Prepared {
                        key: entry.to_key_string().into_bytes(),
                        hash,
                        fingerprint: fingerprint(hash),
                    });
                }
                scheme => {
                    let mut key = Vec::new();
                    if !scheme.normalize_into(item, &mut key) {
                        continue;
                    }
                    let hash = KeyHash::of(&key);
                    prepared.push(Prepared {
                        key,
                        hash,
                        fingerprint: fingerprint(hash),
                    });
                }
            }
        }
        // One change per distinct item.
        let mut seen = std::collections::HashSet::new();
        prepared.retain(|p| seen.insert(p.fingerprint));
        Ok(prepared)
    }

    /// Whether [`Blocklist::remove`] can work: a cuckoo or counting list with a verification
    /// section, or a Bloom list with one.
    pub fn supports_remove(&self) -> bool {
        self.layers().is_some() && self.resolver.verification().is_some()
    }

    /// The structure of a list that is not CaBF.
    pub fn layers(&self) -> Option<&Layers> {
        match &self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => Some(urls.layers()),
            Engine::Cabf(_) | Engine::Keywords(_) => None,
        }
    }

    fn layers_mut(&mut self) -> Option<&mut Layers> {
        match &mut self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => Some(urls.layers_mut()),
            Engine::Cabf(_) | Engine::Keywords(_) => None,
        }
    }

    /// Whether the structure may hold a prepared item.
    fn structure_holds(layers: &Layers, scheme: KeyScheme, item: &Prepared) -> bool {
        match scheme {
            KeyScheme::Expressions => layers.contains_hash(item.hash),
            _ => layers.contains_key(&item.key),
        }
    }

    /// Adds items (URL entries, or keys for a list of keys) in category `category` (a new name
    /// adds a category; `None` is the list's category when it has one, and an error naming
    /// them when it has several), and moves the list version forward. With a verification section an item
    /// already listed is counted `unchanged` and the set fingerprint stays exact; without one,
    /// an item the filter already answers for is counted `unchanged` (RedisBloom's `BF.ADD`
    /// rule) and the count and fingerprint are marked approximate.
    ///
    /// On an error (a full cuckoo filter that does not grow) the blocklist in memory may hold
    /// some of the items: save nothing and start again from the file.
    pub fn add(&mut self, items: &[&[u8]], category: Option<&str>) -> Result<Change> {
        let origin = self.origin();
        if self.layers().is_none() {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "add to",
            });
        }
        let prepared = self.prepare(items)?;
        let id = self.resolver.category_id(&self.category_for_add(category)?);
        let with_sets = self.resolver.categories().len() > 1;
        let scheme = self.meta.scheme;
        let mut change = Change::default();
        let mut table_added = Vec::new();
        for item in &prepared {
            // A table without category sets belongs to a one-category list: category 0.
            let listed: Option<Option<Vec<u16>>> = self.resolver.verification().map(|table| {
                table.lookup(item.fingerprint).map(|ids| {
                    if ids.is_empty() {
                        vec![0]
                    } else {
                        ids.to_vec()
                    }
                })
            });
            let known = match listed {
                Some(Some(ids)) if ids.contains(&id) => Some(true),
                // Listed in another category: it joins this one too, the set is unchanged.
                Some(Some(ids)) => {
                    table_added.push((item.fingerprint, ids.into_iter().chain([id]).collect()));
                    self.resolver.count_entries(id, 1);
                    change.unchanged += 1;
                    continue;
                }
                Some(None) => Some(false),
                None => None,
            };
            // `layers()` was checked above.
            let Some(layers) = self.layers_mut() else {
                break;
            };
            match known {
                Some(true) => {
                    change.unchanged += 1;
                    continue;
                }
                None if Self::structure_holds(layers, scheme, item) => {
                    self.meta.exact_count = false;
                    change.unchanged += 1;
                    continue;
                }
                _ => {}
            }
            let inserted = match scheme {
                KeyScheme::Expressions => layers.insert_hash(item.hash),
                _ => layers.insert_key(&item.key),
            };
            inserted.map_err(|e| e.with_path(&origin))?;
            table_added.push((item.fingerprint, vec![id]));
            self.meta.fingerprint.add(item.fingerprint);
            self.meta.entries += 1;
            self.resolver.count_entries(id, 1);
            change.changed += 1;
        }
        let with_sets = with_sets || self.resolver.categories().len() > 1;
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &[], with_sets);
        }
        self.touch();
        Ok(change)
    }

    /// The category items join: the one given, else the list's only one.
    fn category_for_add(&self, category: Option<&str>) -> Result<String> {
        match (category, self.resolver.categories()) {
            (Some(name), _) => Ok(name.to_string()),
            (None, [only]) => Ok(only.name.clone()),
            (None, []) => Ok(self.meta.name.clone()),
            (None, several) => Err(Error::CategoryNeeded {
                path: self.origin(),
                available: several
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Removes items from a list with a verification section: from category `category` only if
    /// given (an entry left in no category leaves the list), else from the list. Every item is
    /// checked against the verification section first, and the call changes nothing unless all
    /// of them are listed: removing a key that is not in a cuckoo or counting structure would
    /// take another key's fingerprint or counters and turn it clean. A cuckoo or counting
    /// structure forgets the entry; a Bloom filter cannot, so its bits stay and the section,
    /// which no longer confirms them, makes the entry answer clean. A Bloom list without a
    /// verification section cannot remove at all.
    pub fn remove(&mut self, items: &[&[u8]], category: Option<&str>) -> Result<Change> {
        let origin = self.origin();
        let cannot = Error::CannotChange {
            path: self.origin(),
            kind: self.kind,
            action: "remove from",
        };
        let Some(layers) = self.layers() else {
            return Err(cannot);
        };
        let Some(table) = self.resolver.verification() else {
            return Err(if self.kind.deletes() {
                Error::RemoveNeedsVerification {
                    path: self.origin(),
                }
            } else {
                cannot
            });
        };
        let prepared = self.prepare(items)?;
        let category_id = match category {
            Some(name) => Some(
                self.resolver
                    .category_ids(&[name.to_string()], &self.origin())?[0],
            ),
            None => None,
        };
        // Check everything before changing anything.
        let mut missing = prepared
            .iter()
            .filter(|item| table.lookup(item.fingerprint).is_none());
        if let Some(first) = missing.next() {
            return Err(Error::NotListed {
                path: self.origin(),
                count: 1 + missing.count(),
                first: String::from_utf8_lossy(&first.key).into_owned(),
            });
        }
        // Per item: its categories, and whether it leaves the structure.
        let mut plan: Vec<(&Prepared, Vec<u16>, bool)> = Vec::with_capacity(prepared.len());
        let mut unchanged = 0;
        for item in &prepared {
            let ids = match table.lookup(item.fingerprint) {
                Some([]) | None => vec![0],
                Some(ids) => ids.to_vec(),
            };
            let leaves = match category_id {
                Some(id) if !ids.contains(&id) => {
                    unchanged += 1;
                    continue;
                }
                Some(_) => ids.len() == 1,
                None => true,
            };
            if leaves && self.kind.deletes() {
                let holders = layers.holders(item.fingerprint);
                if holders > 1 {
                    return Err(Error::AmbiguousRemoval {
                        path: self.origin(),
                        layers: holders,
                    });
                }
            }
            plan.push((item, ids, leaves));
        }
        let with_sets = self.resolver.categories().len() > 1;
        let mut table_added = Vec::new();
        let mut table_removed = Vec::new();
        for (item, ids, leaves) in &plan {
            let gone: Vec<u16> = match category_id {
                Some(id) => vec![id],
                None => ids.clone(),
            };
            for &id in &gone {
                self.resolver.count_entries(id, -1);
            }
            table_removed.push(item.fingerprint);
            if !leaves {
                table_added.push((
                    item.fingerprint,
                    ids.iter().copied().filter(|i| !gone.contains(i)).collect(),
                ));
                continue;
            }
            // Checked above: a kind that deletes has the item in one layer; a Bloom filter
            // keeps its bits, settled by the verification section from now on.
            if let Some(layers) = self.layers_mut() {
                if !layers
                    .forget(item.fingerprint)
                    .map_err(|e| e.with_path(&origin))?
                {
                    return Err(Error::invalid(
                        self.origin(),
                        "filter",
                        format!(
                            "`{}` is in the verification section but not in the filter",
                            String::from_utf8_lossy(&item.key)
                        ),
                    ));
                }
            }
            self.meta.fingerprint.remove(item.fingerprint);
            self.meta.entries = self.meta.entries.saturating_sub(1);
        }
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &table_removed, with_sets);
        }
        self.touch();
        Ok(Change {
            changed: plan.len() as u64,
            unchanged,
        })
    }

    /// Applies a delta made from this list's version (see [`crate::delta`]): checks the base,
    /// works out — before changing anything — the set fingerprint and entry count the change
    /// leads to and refuses the delta unless they are the ones it promises, then changes the
    /// structure, verification section, categories and exceptions. Exact additions go into a
    /// cuckoo or counting structure, or into a Bloom list's exact patch; compact ones (prefixes)
    /// into a Bloom list's patch. Removals need a kind that deletes and a verification section.
    ///
    /// On an error after the checks (a full cuckoo filter that does not grow) the blocklist in
    /// memory may be partly changed: save nothing and start again from the file.
    pub fn apply(&mut self, delta: &Delta) -> Result<Applied> {
        let path = self.origin();
        let unsuitable = |problem: String| Error::DeltaUnsuitable {
            path: path.clone(),
            problem,
        };
        if self.layers().is_none() {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "apply a delta to",
            });
        }
        let meta = &self.meta;
        if delta.scheme != meta.scheme || delta.probes_per_item != meta.probes_per_item {
            return Err(unsuitable(format!(
                "the delta is for a list of {} sized for {} probes per item, the file holds {} \
                 sized for {}",
                delta.scheme.name(),
                delta.probes_per_item,
                meta.scheme.name(),
                meta.probes_per_item
            )));
        }
        let found = ListState {
            version: meta.version,
            entries: meta.entries,
            fingerprint: meta.fingerprint,
        };
        let base = delta.base;
        let categories_differ = delta.base_categories as usize != self.resolver.categories().len();
        if !meta.exact_count
            || base.fingerprint != found.fingerprint
            || base.entries != found.entries
            || (base.version != 0 && base.version != found.version)
            || categories_differ
        {
            let describe = |state: ListState, categories: usize| {
                format!(
                    "{} ({} entries, {} {}, set fingerprint {})",
                    if state.version == 0 {
                        "a version".to_string()
                    } else {
                        format!("version {}", state.version)
                    },
                    crate::fmt::count(state.entries),
                    categories,
                    if categories == 1 {
                        "category"
                    } else {
                        "categories"
                    },
                    state.fingerprint
                )
            };
            let mut found_text = describe(found, self.resolver.categories().len());
            if !meta.exact_count {
                found_text.push_str(" (approximate: entries were added without verification)");
            }
            return Err(Error::DeltaBase {
                path,
                expected: describe(base, delta.base_categories as usize),
                found: found_text,
            });
        }
        let table = self.resolver.verification();
        if matches!(delta.added, Additions::Prefixes { .. })
            && (table.is_some() || self.kind.deletes())
        {
            return Err(unsuitable(format!(
                "the delta is compact (fingerprint prefixes, for Bloom files without a \
                 verification section), and this {} file{} needs whole fingerprints: make the \
                 delta without --compact",
                self.kind,
                if table.is_some() {
                    " with a verification section"
                } else {
                    ""
                }
            )));
        }
        // Removed entries: read from the file's own table, or — a Bloom file without one
        // cannot forget them — left in place, answering as false positives until the next full
        // file, while the version and fingerprint follow the list.
        let removed: Vec<u64> = match table {
            Some(table) => {
                let fingerprints = table.fingerprints().as_slice();
                let removed: Vec<u64> = delta
                    .removed
                    .iter()
                    .map(|&p| fingerprints.get(p as usize).copied())
                    .collect::<Option<_>>()
                    .ok_or_else(|| Error::DeltaCheck {
                        path: path.clone(),
                        detail: "a removal past the end of the verification section".into(),
                    })?;
                let terms = removed
                    .iter()
                    .fold(0u128, |sum, &v| sum.wrapping_add(SetFingerprint::term(v)));
                if removed.len() as u64 != delta.removed_count || terms != delta.removed_terms {
                    return Err(Error::DeltaCheck {
                        path,
                        detail: "the entries it removes are not the ones at those positions of \
                                 the verification section"
                            .into(),
                    });
                }
                removed
            }
            None if delta.removed_count > 0 && self.kind.deletes() => {
                return Err(unsuitable(format!(
                    "the delta removes {} entries, and a {} file needs its verification section \
                     to find them; fetch the full file (build lists that change with --verify)",
                    delta.removed_count, self.kind
                )))
            }
            None => Vec::new(),
        };
        let recategorized: Vec<(u64, Vec<u16>)> = match table {
            Some(table) => delta
                .recategorized
                .iter()
                .map(|(p, ids)| {
                    Some((
                        *table.fingerprints().as_slice().get(*p as usize)?,
                        ids.clone(),
                    ))
                })
                .collect::<Option<_>>()
                .ok_or_else(|| Error::DeltaCheck {
                    path: path.clone(),
                    detail: "a recategorized entry past the end of the verification section".into(),
                })?,
            // Without a table, categories are not kept per entry: the counts say it all.
            None => Vec::new(),
        };
        // The set the change leads to, before anything changes.
        let mut fingerprint = self.meta.fingerprint;
        fingerprint.0 = fingerprint
            .0
            .wrapping_sub(delta.removed_terms)
            .wrapping_add(delta.added_terms);
        let entries = (self.meta.entries + delta.added.len() as u64)
            .checked_sub(delta.removed_count)
            .unwrap_or(u64::MAX);
        if fingerprint != delta.target.fingerprint || entries != delta.target.entries {
            return Err(Error::DeltaCheck {
                path,
                detail: format!(
                    "{entries} entries with set fingerprint {fingerprint}, promised {} with {}",
                    delta.target.entries, delta.target.fingerprint
                ),
            });
        }
        let category_count = delta.base_categories as usize + delta.new_categories.len();
        let ids_ok = delta
            .added_categories
            .iter()
            .chain(delta.recategorized.iter().map(|(_, ids)| ids))
            .flatten()
            .chain(delta.counts.iter().map(|(id, _)| id))
            .all(|&id| (id as usize) < category_count);
        if !ids_ok || category_count > crate::resolve::MAX_CATEGORIES {
            return Err(Error::DeltaCheck {
                path,
                detail: "a category id beyond the list's categories".into(),
            });
        }
        if let Some(layers) = self.layers().filter(|_| self.kind.deletes()) {
            if let Some(&v) = removed.iter().find(|&&v| layers.holders(v) > 1) {
                return Err(Error::AmbiguousRemoval {
                    path: path.clone(),
                    layers: layers.holders(v),
                });
            }
        }
        // Checked: change everything.
        for name in &delta.new_categories {
            self.resolver.category_id(name);
        }
        let with_sets = self.resolver.categories().len() > 1;
        let layers = self
            .layers_mut()
            .ok_or_else(|| unsuitable("no structure".into()))?;
        for &v in &removed {
            if !layers.forget(v).map_err(|e| e.with_path(&path))? {
                return Err(Error::DeltaCheck {
                    path,
                    detail: format!(
                        "entry {v:016x} is in the verification section, not the filter"
                    ),
                });
            }
        }
        let mut table_added: Vec<(u64, Vec<u16>)> = Vec::new();
        match &delta.added {
            Additions::Exact(values) => {
                for (i, &v) in values.iter().enumerate() {
                    layers
                        .insert_fingerprint(v)
                        .map_err(|e| e.with_path(&path))?;
                    let ids = delta
                        .added_categories
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| vec![0]);
                    table_added.push((v, ids));
                }
            }
            Additions::Prefixes { bits, prefixes } => layers.patch(*bits, prefixes.clone())?,
        }
        let mut table_removed = removed.clone();
        for (v, ids) in &recategorized {
            table_removed.push(*v);
            table_added.push((*v, ids.clone()));
        }
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &table_removed, with_sets);
        }
        for &(id, change) in &delta.counts {
            self.resolver.count_entries(id, change);
        }
        if let Some(keys) = &delta.exceptions {
            self.resolver
                .set_exceptions(Exceptions::new(keys.iter().cloned()));
        }
        let version = match delta.target.version {
            0 => self.meta.version + 1,
            version => version,
        };
        self.meta.entries = entries;
        self.meta.fingerprint = fingerprint;
        self.touch();
        self.meta.version = version;
        Ok(Applied {
            added: delta.added.len() as u64,
            removed: removed.len() as u64,
            kept: delta.removed_count - removed.len() as u64,
            recategorized: recategorized.len() as u64,
            version,
        })
    }

    /// Adds every entry of `other` — a list of the same kind, key scheme and sizing (shards
    /// built apart with the same `--capacity`, or two versions) — and moves the version on.
    ///
    /// With verification sections in both, the result is the union of the two sets: entries
    /// are matched by fingerprint (an entry in both is kept once, in the categories of both),
    /// cuckoo and counting structures take only the other's new entries, Bloom bits are OR-ed,
    /// and the set fingerprint and counts are exact. Without them, the structures are combined
    /// as they are (Bloom bits OR-ed, cuckoo fingerprints inserted, counters added) and the entry
    /// count and set fingerprint — sums, exact only if the lists are disjoint — are marked
    /// approximate.
    pub fn merge(&mut self, other: &Blocklist) -> Result<()> {
        let origin = self.origin();
        let differs = |parameter: &'static str, left: String, right: String| Error::Incompatible {
            parameter,
            left,
            right,
        };
        if self.kind != other.kind {
            return Err(differs(
                "kind",
                self.kind.to_string(),
                other.kind.to_string(),
            ));
        }
        if self.meta.scheme != other.meta.scheme {
            return Err(differs(
                "key scheme",
                self.meta.scheme.name().into(),
                other.meta.scheme.name().into(),
            ));
        }
        if self.meta.probes_per_item != other.meta.probes_per_item {
            return Err(differs(
                "probes per item (--expressions)",
                self.meta.probes_per_item.to_string(),
                other.meta.probes_per_item.to_string(),
            ));
        }
        let (Some(mine), Some(theirs)) = (self.layers(), other.layers()) else {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "merge into",
            });
        };
        if mine.grows() != theirs.grows() {
            return Err(differs(
                "growth (--grow)",
                mine.grows().to_string(),
                theirs.grows().to_string(),
            ));
        }
        // Same parameters (layer by layer). Cuckoo and counting lists with verification take
        // the other's new entries one by one; the others take the union, computed aside.
        let verified = self.resolver.verification().is_some() && other.verification().is_some();
        let union = if verified && self.kind.deletes() {
            mine.check_compatible(theirs)?;
            None
        } else {
            let mut union = mine.clone();
            union.union(theirs).map_err(|e| e.with_path(&origin))?;
            Some(union)
        };
        // The other's category ids, as this list numbers them (new names appended).
        let ids: Vec<u16> = other
            .categories()
            .iter()
            .map(|c| self.resolver.category_id(&c.name))
            .collect();
        let exceptions: Vec<String> = self
            .resolver
            .exceptions()
            .sorted_keys()
            .into_iter()
            .chain(other.resolver.exceptions().sorted_keys())
            .map(str::to_string)
            .collect();
        match (self.resolver.verification(), other.resolver.verification()) {
            (Some(_), Some(table)) => {
                let with_sets = self.resolver.categories().len() > 1;
                let mut added: Vec<(u64, Vec<u16>)> = Vec::new();
                let mut new_entries = Vec::new();
                let fingerprints = table.fingerprints().as_slice();
                for (i, &v) in fingerprints.iter().enumerate() {
                    let theirs_ids: Vec<u16> = match table.set_of().get(i) {
                        Some(&set) => table
                            .sets()
                            .get(set)
                            .iter()
                            .map(|&id| ids[id as usize])
                            .collect(),
                        None => vec![ids[0]],
                    };
                    match self.resolver.verification().and_then(|t| t.lookup(v)) {
                        Some(existing) => {
                            let mut all: Vec<u16> = if existing.is_empty() {
                                vec![0]
                            } else {
                                existing.to_vec()
                            };
                            all.extend(theirs_ids);
                            added.push((v, all));
                        }
                        None => {
                            new_entries.push(v);
                            added.push((v, theirs_ids));
                        }
                    }
                }
                let layers = self.layers_mut().ok_or(Error::CannotChange {
                    path: origin.clone(),
                    kind: other.kind,
                    action: "merge into",
                })?;
                match union {
                    Some(union) => *layers = union,
                    None => {
                        for &v in &new_entries {
                            layers
                                .insert_fingerprint(v)
                                .map_err(|e| e.with_path(&origin))?;
                        }
                    }
                }
                let with_sets = with_sets || self.resolver.categories().len() > 1;
                if let Some(table) = self.resolver.verification_mut() {
                    table.update(&added, &[], with_sets);
                }
                self.recount();
            }
            (None, None) => {
                let layers = self.layers_mut().ok_or(Error::CannotChange {
                    path: origin.clone(),
                    kind: other.kind,
                    action: "merge into",
                })?;
                if let Some(union) = union {
                    *layers = union;
                }
                for (category, &id) in other.categories().iter().zip(&ids) {
                    self.resolver.count_entries(id, category.entries as i64);
                }
                self.meta.entries += other.meta.entries;
                self.meta.fingerprint.0 = self
                    .meta
                    .fingerprint
                    .0
                    .wrapping_add(other.meta.fingerprint.0);
                self.meta.exact_count = false;
            }
            (mine, _) => {
                let which = if mine.is_some() {
                    "the second"
                } else {
                    "the first"
                };
                return Err(Error::DeltaUnsuitable {
                    path: self.origin(),
                    problem: format!(
                        "{which} list has no verification section, so the entries of the two \
                         cannot be matched; build both with --verify, or both without"
                    ),
                });
            }
        }
        self.resolver.set_exceptions(Exceptions::new(exceptions));
        self.meta.version = self.meta.version.max(other.meta.version);
        self.touch();
        Ok(())
    }

    /// Recomputes the entry count, set fingerprint and per-category counts from the
    /// verification section.
    fn recount(&mut self) {
        let Some(table) = self.resolver.verification() else {
            return;
        };
        let fingerprints = table.fingerprints().as_slice();
        let mut counts = vec![0i64; self.resolver.categories().len()];
        for i in 0..fingerprints.len() {
            match table.set_of().get(i) {
                Some(&set) => {
                    for &id in table.sets().get(set) {
                        counts[id as usize] += 1;
                    }
                }
                None => counts[0] += 1,
            }
        }
        self.meta.entries = fingerprints.len() as u64;
        self.meta.fingerprint = SetFingerprint::of(fingerprints.iter().copied());
        self.meta.exact_count = true;
        let current: Vec<u64> = self
            .resolver
            .categories()
            .iter()
            .map(|c| c.entries)
            .collect();
        for (id, (count, now)) in counts.into_iter().zip(current).enumerate() {
            self.resolver.count_entries(id as u16, count - now as i64);
        }
    }

    /// A new version: the version goes up by one, the time is now, the old directory is gone.
    fn touch(&mut self) {
        self.meta.version += 1;
        self.meta.created = now();
        self.directory = None;
    }

    /// The file the blocklist was read from, or its name if it was built in memory.
    pub fn origin(&self) -> PathBuf {
        self.origin.clone()
    }
}

/// What `info` shows about one Bloom filter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FilterInfo {
    /// Bit layout.
    pub layout: String,
    /// Hash strategy.
    pub hash: String,
    /// m.
    pub num_bits: u64,
    /// k.
    pub num_hashes: u32,
    /// Bytes of the bit array.
    pub bytes: u64,
    /// Keys inserted.
    pub items: u64,
    /// The item count it was sized for.
    pub sized_for_items: Option<u64>,
    /// The per-probe rate it was sized for.
    pub target_fpp_per_probe: Option<f64>,
    /// Fraction of bits set.
    pub fill_ratio: f64,
    /// Distinct keys estimated from the fill (Swamidass–Baldi).
    pub estimated_items: f64,
    /// The per-probe false-positive rate the bits imply now.
    pub expected_fpp_now: f64,
    /// The per-probe rate theory predicts at the inserted count.
    pub theoretical_fpp_at_items: f64,
}

impl FilterInfo {
    /// The facts about `filter`.
    pub fn of(filter: &dyn Filter) -> Self {
        FilterInfo {
            layout: filter.layout().to_string(),
            hash: filter.hash_strategy().to_string(),
            num_bits: filter.num_bits(),
            num_hashes: filter.num_hashes(),
            bytes: filter.size_in_bytes(),
            items: filter.items(),
            sized_for_items: filter.expected_items(),
            target_fpp_per_probe: filter.target_fpp(),
            fill_ratio: filter.fill_ratio(),
            estimated_items: filter.estimated_items(),
            expected_fpp_now: filter.expected_fpp(),
            theoretical_fpp_at_items: filter.theoretical_fpp(filter.items() as f64),
        }
    }
}

/// Everything `info` prints about a blocklist file.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Description {
    /// The structure.
    pub kind: Kind,
    /// The format version of the file.
    pub format_version: u32,
    /// File length in bytes.
    pub file_bytes: u64,
    /// The file checksum (xxh3-64 of the section table), hex.
    pub checksum: String,
    /// The sections: name, offset, length, checksum (hex).
    pub sections: Vec<SectionInfo>,
    /// The metadata.
    pub meta: Meta,
    /// The per-item rate at the probes per item, implied by the filter's per-probe target.
    pub per_item_fpp: Option<f64>,
    /// The Bloom filters (one per layer, or CaBF's components then its check filter).
    pub filters: Vec<FilterInfo>,
    /// The structure's layers (one unless the list grows); empty for CaBF.
    pub layers: Vec<LayerInfo>,
    /// Whether the list grows when full.
    pub grows: bool,
    /// CaBF's split, for a CaBF blocklist.
    pub split: Option<&'static str>,
    /// Fingerprints in the verification section, if there is one.
    pub verification: Option<u64>,
    /// The categories and their entry counts.
    pub categories: Vec<Category>,
    /// Exception entries.
    pub exceptions: u64,
    /// A keyword list's phrase lengths, rates per document and per probe, and index.
    pub keywords: Option<KeywordsInfo>,
}

/// One section as `info` lists it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SectionInfo {
    /// `metadata section`, `filter section 2`, ...
    pub name: String,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// xxh3-64 of the section, hex.
    pub checksum: String,
}

impl Blocklist {
    /// The facts `info` prints (the directory fields are empty for a blocklist not read from a
    /// file).
    pub fn describe(&self) -> Description {
        let directory = self.directory.clone().unwrap_or_else(|| Directory {
            version: format::FORMAT_VERSION,
            kind: self.kind.code(),
            file_len: 0,
            checksum: 0,
            sections: Vec::new(),
        });
        let (filters, split, probe_target) = match (&self.engine, self.layers()) {
            (Engine::Cabf(engine), _) => (
                engine.filters().map(|f| FilterInfo::of(f)).collect(),
                Some(engine.split().name()),
                None,
            ),
            (Engine::Keywords(engine), _) => (
                vec![FilterInfo::of(&**engine.filter())],
                None,
                engine.filter().target_fpp(),
            ),
            (_, Some(layers)) => (
                layers
                    .layers()
                    .iter()
                    .filter_map(|layer| match layer {
                        Layer::Bloom(filter) => Some(FilterInfo::of(&**filter)),
                        _ => None,
                    })
                    .collect(),
                None,
                // A growing list's layers share the per-item budget; its metadata holds it.
                match layers.layers() {
                    [only] if !layers.grows() => only.target_fpp(),
                    _ => None,
                },
            ),
            (_, None) => (Vec::new(), None, None),
        };
        let layers = self.layers().map(Layers::describe).unwrap_or_default();
        let grows = self.layers().is_some_and(Layers::grows);
        Description {
            kind: self.kind,
            format_version: directory.version,
            file_bytes: directory.file_len,
            checksum: format!("{:016x}", directory.checksum),
            sections: directory
                .sections
                .iter()
                .map(|s| SectionInfo {
                    name: s.describe(),
                    offset: s.offset,
                    bytes: s.len,
                    checksum: format!("{:016x}", s.checksum),
                })
                .collect(),
            meta: self.meta.clone(),
            per_item_fpp: probe_target
                .map(|f| per_item_fpp(f, self.meta.probes_per_item))
                .or(self.meta.target_fpp),
            filters,
            layers,
            grows,
            split,
            verification: self.resolver.verification().map(|t| t.len() as u64),
            categories: self.resolver.categories().to_vec(),
            exceptions: self.resolver.exceptions().len() as u64,
            keywords: match &self.engine {
                Engine::Keywords(engine) => Some(engine.info(&self.meta)),
                _ => None,
            },
        }
    }
}
