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

use phishbloom_filter::{AnyFilter, BloomFilter, Filter, HashStrategy, KeyHash, LayoutKind};
use phishbloom_url::{CanonicalUrl, Entry};

use crate::atomic::AtomicFile;
use crate::engine::cabf::{CabfEngine, Split};
use crate::engine::urls::{expression_hash, UrlFilter};
use crate::engine::{
    fingerprint, per_item_fpp, per_probe_fpp, Fingerprints, Hit, Matcher, Scratch,
};
use crate::error::{Error, Result};
use crate::format::{self, tag, Directory, SectionData, Source};
use crate::keys::KeyScheme;
use crate::keywords::{KeywordEngine, KeywordsInfo};
use crate::sections::{self, Meta, SetFingerprint};
use crate::source::KeyList;

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
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 3] = [Kind::Classic, Kind::Blocked, Kind::Cabf];

    /// The code stored in the file header.
    pub fn code(self) -> u16 {
        match self {
            Kind::Classic => 1,
            Kind::Blocked => 2,
            Kind::Cabf => 3,
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
        }
    }

    /// The Bloom layout of a single-filter kind.
    pub fn layout(self) -> Option<LayoutKind> {
        match self {
            Kind::Classic => Some(LayoutKind::Classic),
            Kind::Blocked => Some(LayoutKind::Blocked),
            Kind::Cabf => None,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The structure that answers queries.
pub enum Engine {
    /// Whole keys (exact or URL-normalized) in one Bloom filter.
    Keys(AnyFilter),
    /// URL entries in one Bloom filter, probed with every lookup expression.
    Urls(UrlFilter),
    /// URL entries in CaBF.
    Cabf(CabfEngine),
    /// Keywords and phrases, found inside text by `scan`.
    Keywords(KeywordEngine),
}

/// The answer for one checked item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the item is listed (for a Bloom filter without verification: possibly listed,
    /// wrong with the list's false-positive rate; never wrong when it says `false`).
    pub listed: bool,
    /// For URL entries: the entry it matched.
    pub hit: Option<Hit>,
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

/// A blocklist: metadata, the engine, and the optional verification table.
pub struct Blocklist {
    kind: Kind,
    meta: Meta,
    engine: Engine,
    verify: Option<Fingerprints>,
    directory: Option<Directory>,
}

impl Blocklist {
    /// Builds a blocklist of whole keys (passwords, tokens, e-mail addresses: `scheme` says how
    /// they were normalized). The filter is sized for the keys' count at `options.fpp` per key.
    pub fn from_keys(keys: &KeyList, scheme: KeyScheme, options: &BuildOptions) -> Result<Self> {
        let Some(layout) = options.kind.layout() else {
            return Err(Error::WrongScheme {
                path: PathBuf::from(&options.name),
                problem: "a CaBF blocklist holds URL entries, not whole keys; build it as a \
                          blocked or classic filter"
                    .into(),
            });
        };
        let mut filter = AnyFilter::new(
            layout,
            keys.len().max(1) as u64,
            options.fpp,
            options.strategy,
        )?;
        filter.insert_parallel(&keys.as_slices(), options.threads);
        let verify = options
            .verify
            .then(|| Fingerprints::new(keys.iter().map(|k| fingerprint(KeyHash::of(k))).collect()));
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme,
            probes_per_item: 1,
            entries: keys.len() as u64,
            fingerprint: SetFingerprint::of(keys.iter()),
            target_fpp: Some(options.fpp),
        };
        Ok(Blocklist {
            kind: options.kind,
            meta,
            engine: Engine::Keys(filter),
            verify,
            directory: None,
        })
    }

    /// Builds a blocklist of URL entries (distinct), sized so that a URL with up to
    /// `options.expression_bound` expressions is a false positive with probability at most
    /// `options.fpp`.
    pub fn from_entries(entries: &[Entry], options: &BuildOptions) -> Result<Self> {
        phishbloom_filter::math::validate_fpp(options.fpp)?;
        let keys: Vec<String> = entries.iter().map(Entry::to_key_string).collect();
        let fingerprint_of_set = SetFingerprint::of(keys.iter().map(|k| k.as_bytes()));
        let (engine, fingerprints) = match options.kind.layout() {
            Some(layout) => {
                let probe = per_probe_fpp(options.fpp, options.expression_bound);
                let mut filter = AnyFilter::new(
                    layout,
                    entries.len().max(1) as u64,
                    probe,
                    HashStrategy::Xxh3,
                )?;
                let hashes: Vec<KeyHash> =
                    entries.iter().map(|e| expression_hash(e.key())).collect();
                for &hash in &hashes {
                    filter.insert_hash(hash);
                }
                let fingerprints = hashes.into_iter().map(fingerprint).collect();
                (Engine::Urls(UrlFilter::new(filter)), fingerprints)
            }
            None => {
                let (engine, fingerprints) =
                    CabfEngine::build(entries, options.fpp, options.expression_bound)?;
                (Engine::Cabf(engine), fingerprints)
            }
        };
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme: KeyScheme::Expressions,
            probes_per_item: options.expression_bound.max(1),
            entries: entries.len() as u64,
            fingerprint: fingerprint_of_set,
            target_fpp: Some(options.fpp),
        };
        Ok(Blocklist {
            kind: options.kind,
            meta,
            engine,
            verify: options.verify.then(|| Fingerprints::new(fingerprints)),
            directory: None,
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

    /// A blocklist from its parts (the keyword builder's).
    pub(crate) fn from_parts(kind: Kind, meta: Meta, engine: Engine) -> Self {
        Blocklist {
            kind,
            meta,
            engine,
            verify: None,
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
        for entry in &directory.sections {
            let expected = match entry.tag {
                tag::META | tag::VERIFY => entry.index == 0,
                tag::FILTER => true,
                tag::CABF => kind == Kind::Cabf && entry.index == 0,
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
            .filter(|s| s.tag == tag::FILTER)
            .count();
        let engine = match kind.layout() {
            Some(layout) => {
                if filter_count != 1 {
                    return Err(Error::invalid(
                        path,
                        "filter sections",
                        format!("{filter_count} in a {kind} blocklist, expected 1"),
                    ));
                }
                let filter = filter_at(0)?;
                if filter.layout() != layout {
                    return Err(Error::invalid(
                        path,
                        "filter layout",
                        format!("{} in a {kind} blocklist", filter.layout()),
                    ));
                }
                match meta.scheme {
                    KeyScheme::Expressions => {
                        if filter.hash_strategy() != HashStrategy::Xxh3 {
                            return Err(Error::invalid(
                                path,
                                "filter hash strategy",
                                "URL entries are hashed with xxh3",
                            ));
                        }
                        Engine::Urls(UrlFilter::new(filter))
                    }
                    KeyScheme::Exact | KeyScheme::Url => Engine::Keys(filter),
                    KeyScheme::Keywords => {
                        Engine::Keywords(KeywordEngine::read(path, source, &directory, filter)?)
                    }
                }
            }
            None => {
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
        let verify = match directory.find(tag::VERIFY, 0) {
            Some(entry) => Some(sections::read_verify(path, source, entry)?),
            None => None,
        };
        Ok(Blocklist {
            kind,
            meta,
            engine,
            verify,
            directory: Some(directory),
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
        let mut blocks: Vec<(u16, Vec<u8>, &[u8])> = Vec::new();
        let mut extra: Vec<(u16, Vec<u8>)> = Vec::new();
        match &self.engine {
            Engine::Keys(filter) => blocks.push((
                0,
                sections::encode_filter_params(&filter.params()),
                filter.bit_bytes(),
            )),
            Engine::Urls(urls) => {
                let filter = urls.filter();
                blocks.push((
                    0,
                    sections::encode_filter_params(&filter.params()),
                    filter.bit_bytes(),
                ));
            }
            Engine::Cabf(engine) => {
                extra.push((
                    tag::CABF,
                    sections::encode_cabf(engine.split().code(), engine.component_filters() as u32),
                ));
                for (index, filter) in engine.filters().enumerate() {
                    blocks.push((
                        index as u16,
                        sections::encode_filter_params(&filter.params()),
                        filter.bit_bytes(),
                    ));
                }
            }
            Engine::Keywords(engine) => {
                let filter = engine.filter();
                blocks.push((
                    0,
                    sections::encode_filter_params(&filter.params()),
                    filter.bit_bytes(),
                ));
                extra.push((tag::KEYWORD_LENGTHS, engine.encode_lengths()));
            }
        }
        // Ascending (tag, index) order, as the format requires.
        let mut data = vec![SectionData {
            tag: tag::META,
            index: 0,
            parts: vec![&meta],
        }];
        for (index, params, bits) in &blocks {
            data.push(SectionData {
                tag: tag::FILTER,
                index: *index,
                parts: vec![params, bits],
            });
        }
        if let Some(table) = &self.verify {
            data.push(SectionData {
                tag: tag::VERIFY,
                index: 0,
                parts: vec![sections::encode_verify(table)],
            });
        }
        for (tag, bytes) in &extra {
            data.push(SectionData {
                tag: *tag,
                index: 0,
                parts: vec![bytes],
            });
        }
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
    pub fn verification(&self) -> Option<&Fingerprints> {
        self.verify.as_ref()
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

    /// The single Bloom filter of a classic or blocked blocklist (`None` for CaBF).
    pub fn filter(&self) -> Option<&AnyFilter> {
        match &self.engine {
            Engine::Keys(filter) => Some(filter),
            Engine::Urls(urls) => Some(urls.filter()),
            Engine::Cabf(_) => None,
            Engine::Keywords(engine) => Some(engine.filter()),
        }
    }

    /// The entry that lists a canonical URL, for blocklists of URL entries; `None` for whole
    /// keys, which have no URL semantics. Hits are confirmed when the list has verification.
    pub fn find_url(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        let matcher: &dyn Matcher = match &self.engine {
            Engine::Keys(_) | Engine::Keywords(_) => return None,
            Engine::Urls(urls) => urls,
            Engine::Cabf(cabf) => cabf,
        };
        matcher.find(url, scratch, self.verify.as_ref())
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
            out.extend(items.iter().map(|item| Verdict {
                listed: engine.check_phrase(item),
                hit: None,
            }));
            return;
        }
        if let Engine::Keys(filter) = &self.engine {
            self.check_keys(filter, items, scratch, out);
            return;
        }
        out.extend(
            items
                .iter()
                .map(|item| match phishbloom_url::canonicalize(item) {
                    Ok(url) => {
                        let hit = self.find_url(&url, scratch);
                        Verdict {
                            listed: hit.is_some(),
                            hit,
                        }
                    }
                    Err(_) => Verdict::default(),
                }),
        );
    }

    /// Whole-key verdicts: normalize every item into one arena, then one batched query.
    fn check_keys(
        &self,
        filter: &AnyFilter,
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
        filter.contains_batch(&keys, &mut scratch.answers);
        let confirm = self.verify.as_ref();
        out.extend(
            keys.iter()
                .zip(&scratch.answers)
                .map(|(key, &hit)| Verdict {
                    // An empty key (a blank line) is never listed: no list entry is empty.
                    listed: hit
                        && !key.is_empty()
                        && confirm.is_none_or(|t| t.contains(fingerprint(KeyHash::of(key)))),
                    hit: None,
                }),
        );
    }
}

fn kind_of(path: &Path, directory: &Directory) -> Result<Kind> {
    Kind::from_code(directory.kind).ok_or(Error::UnknownKind {
        path: path.to_path_buf(),
        code: directory.kind,
    })
}

fn read_meta(path: &Path, source: &dyn Source, directory: &Directory) -> Result<Meta> {
    let entry = directory.find(tag::META, 0).ok_or(Error::MissingSection {
        path: path.to_path_buf(),
        section: "metadata",
    })?;
    sections::decode_meta(path, &format::read_section_vec(path, source, entry)?)
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
    /// The filters (one, or CaBF's components then its check filter).
    pub filters: Vec<FilterInfo>,
    /// CaBF's split, for a CaBF blocklist.
    pub split: Option<&'static str>,
    /// Fingerprints in the verification section, if there is one.
    pub verification: Option<u64>,
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
            kind: self.kind.code(),
            file_len: 0,
            checksum: 0,
            sections: Vec::new(),
        });
        let (filters, split, probe_target) = match &self.engine {
            Engine::Keys(filter) => (vec![FilterInfo::of(&**filter)], None, filter.target_fpp()),
            Engine::Urls(urls) => (
                vec![FilterInfo::of(&**urls.filter())],
                None,
                urls.filter().target_fpp(),
            ),
            Engine::Cabf(engine) => (
                engine.filters().map(|f| FilterInfo::of(f)).collect(),
                Some(engine.split().name()),
                None,
            ),
            Engine::Keywords(engine) => (
                vec![FilterInfo::of(&**engine.filter())],
                None,
                engine.filter().target_fpp(),
            ),
        };
        Description {
            kind: self.kind,
            format_version: format::FORMAT_VERSION,
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
            split,
            verification: self.verify.as_ref().map(|t| t.len() as u64),
            keywords: match &self.engine {
                Engine::Keywords(engine) => Some(engine.info(&self.meta)),
                _ => None,
            },
        }
    }
}
