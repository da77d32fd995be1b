//! Building a [`Blocklist`] in memory: from whole keys, from key hashes, from URL entries.

use std::path::PathBuf;
use std::sync::Arc;

use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash};
use phishbloom_url::Entry;

use crate::contents::{EntrySet, KeyList};
use crate::engine::cabf::CabfEngine;
use crate::engine::gate::{HostGate, COMPACT_GATE_FPP};
use crate::engine::urls::UrlFilter;
use crate::error::{Error, Result};
use crate::keys::{expression_hash, fingerprint, KeyScheme};
use crate::kind::Kind;
use crate::rates::per_probe_fpp;
use crate::resolve::{
    compact_universe, intern_run, Category, CategorySets, CompactTable, Exceptions, Resolver,
    Verification,
};
use crate::sections::{Meta, SetFingerprint};
use crate::structure::Layers;

use super::model::{Blocklist, Engine};

/// The distinct 128-bit hashes of a list's whole keys, visited in ascending order: what
/// [`Blocklist::from_hashed_keys`] builds from without holding the keys.
pub trait KeyHashes {
    /// Distinct keys.
    fn len(&self) -> u64;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The set fingerprint of the distinct keys.
    fn fingerprint(&self) -> SetFingerprint;
    /// What a visit can fail with: the core's errors, and whatever reading the hashes can
    /// fail with (a spill file's I/O, for a streamed read).
    type Error: From<Error>;
    /// Calls `visit` with every distinct hash, ascending by `(h1, h2)`; stops at its first error.
    fn try_for_each(
        &self,
        visit: &mut dyn FnMut(KeyHash) -> Result<(), Self::Error>,
    ) -> Result<(), Self::Error>;
}

/// The threads a build inserts with: as asked, but one on WebAssembly, which has none to spawn
/// (the core itself starts no thread; the filter crate's parallel insert does when asked).
fn build_threads(options: &BuildOptions) -> usize {
    if cfg!(target_family = "wasm") {
        1
    } else {
        options.threads.max(1)
    }
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
    /// Creation time (seconds since the Unix epoch; 0 is unknown, stamped by the file writer).
    pub created: u64,
    /// Size the structure for this many entries when the list has fewer (room to add, or
    /// shards built apart that can be merged); with `grow`, the first layer's size.
    pub capacity: Option<u64>,
    /// Grow when full: add layers of twice the capacity at half the rate (RedisBloom's
    /// scalable scheme), so a list of unknown size keeps its rate.
    pub grow: bool,
    /// Build even with a capacity over `MAX_CAPACITY_RATIO` times the entries (refused
    /// otherwise: a typo such as `3e9` for `3e6` makes a file of gigabytes).
    pub force: bool,
    /// Store the host gate of a list of URL entries ([`crate::engine::gate`]): a small filter of
    /// the entries' hosts that spares the expressions of every other host suffix. On by default;
    /// off saves about 10 bits per distinct host and probes every expression.
    pub host_gate: bool,
}

/// The largest capacity a build takes without `force`, as a multiple of its entries: room for
/// a list to grow a thousandfold is far beyond any real plan; more is a typo.
pub const MAX_CAPACITY_RATIO: u64 = 1000;

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
            created: 0,
            capacity: None,
            grow: false,
            force: false,
            host_gate: true,
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
    let mut headroom = 1.0;
    loop {
        let mut layers = sized_layers(options, entries, fpp, headroom)?;
        match insert(&mut layers) {
            Err(Error::Full { .. }) if options.kind == Kind::Cuckoo && headroom < 1.3 => {
                headroom *= 1.05;
            }
            other => return other.map(|()| layers),
        }
    }
}

/// Empty layers for `entries` at `fpp`, with `headroom` times the room `options` asks for;
/// refused when that room is more than [`MAX_CAPACITY_RATIO`] times the entries (unless
/// forced).
fn sized_layers(options: &BuildOptions, entries: usize, fpp: f64, headroom: f64) -> Result<Layers> {
    let capacity = options.sized_for(entries);
    let most = MAX_CAPACITY_RATIO.saturating_mul((entries as u64).max(1));
    if capacity > most && !options.force {
        return Err(Error::CapacityTooLarge {
            capacity,
            entries: entries as u64,
            ratio: MAX_CAPACITY_RATIO,
        });
    }
    let sized = (capacity as f64 * headroom).ceil() as u64;
    Layers::new(options.kind, sized, fpp, options.strategy, options.grow)
}

/// A whole key's entry fingerprint.
fn key_fingerprint(key: &[u8]) -> u64 {
    fingerprint(KeyHash::of(key))
}

/// The keys in each group, the set fingerprint of the distinct keys across the groups (by
/// entry fingerprint) and their count. One group is distinct already.
fn count_distinct(groups: &[(String, KeyList)]) -> (Vec<u64>, SetFingerprint, usize) {
    let mut counts = vec![0u64; groups.len()];
    let mut set_fingerprint = SetFingerprint::default();
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    for (id, (_, keys)) in groups.iter().enumerate() {
        counts[id] = keys.len() as u64;
        if groups.len() == 1 {
            set_fingerprint = SetFingerprint::of(keys.iter().map(key_fingerprint));
        } else {
            for key in keys.iter() {
                let v = key_fingerprint(key);
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
    (counts, set_fingerprint, entries)
}

/// Inserts the keys of every group into `layers`.
fn insert_groups(
    options: &BuildOptions,
    groups: &[(String, KeyList)],
    layers: &mut Layers,
) -> Result<()> {
    let key_hashing = layers.key_hashing_bloom().is_some();
    match layers.single_bloom_mut() {
        // One Bloom filter of known size that hashes keys as the list does: every core
        // inserts (a key twice sets its bits twice, which changes nothing).
        Some(filter) if !options.grow && key_hashing => {
            for (_, keys) in groups {
                filter.insert_parallel(&keys.as_slices(), build_threads(options));
            }
            Ok(())
        }
        // Each distinct key once (a cuckoo filter would store a second copy).
        _ => {
            let mut inserted = std::collections::HashSet::new();
            groups
                .iter()
                .flat_map(|(_, keys)| keys.iter())
                .filter(|key| groups.len() == 1 || inserted.insert(key_fingerprint(key)))
                .try_for_each(|key| layers.insert_key(key))
        }
    }
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
        refuse_near(options)?;
        let (counts, set_fingerprint, entries) = count_distinct(groups);
        let pairs = || -> Vec<(u64, Vec<u16>)> {
            groups
                .iter()
                .enumerate()
                .flat_map(|(id, (_, keys))| {
                    keys.iter()
                        .map(move |k| (key_fingerprint(k), vec![id as u16]))
                })
                .collect()
        };
        if options.kind == Kind::Compact {
            let table = compact_table(options, pairs(), 1)?;
            let list = Self::of_keys(
                options,
                scheme,
                Layers::compact(table.clone()),
                (entries as u64, set_fingerprint),
                categories_of(groups, counts),
                None,
            );
            return Ok(list.with_compact(table));
        }
        let layers = fill(options, entries, options.fpp, |layers| {
            insert_groups(options, groups, layers)
        })?;
        let verification = options
            .verify
            .then(|| Verification::new(pairs(), groups.len() > 1));
        Ok(Self::of_keys(
            options,
            scheme,
            layers,
            (entries as u64, set_fingerprint),
            categories_of(groups, counts),
            verification,
        ))
    }

    /// The list with `table` as the resolver's confirmation (a compact list's).
    fn with_compact(mut self, table: Arc<CompactTable>) -> Self {
        self.resolver = self.resolver.with_compact(table);
        self
    }

    /// A list of whole keys from its built parts: `held` is its distinct entry count and set
    /// fingerprint.
    fn of_keys(
        options: &BuildOptions,
        scheme: KeyScheme,
        layers: Layers,
        held: (u64, SetFingerprint),
        categories: Vec<Category>,
        verification: Option<Verification>,
    ) -> Self {
        let meta = Meta {
            name: options.name.clone(),
            version: options.version,
            created: options.created,
            scheme,
            probes_per_item: 1,
            entries: held.0,
            fingerprint: held.1,
            target_fpp: Some(options.fpp),
            exact_count: true,
        };
        Blocklist {
            kind: options.kind,
            meta,
            engine: Engine::Keys(layers),
            resolver: Resolver::new(categories, verification, Exceptions::default()),
            directory: None,
            origin: PathBuf::from(&options.name),
        }
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

    /// Builds a blocklist of whole keys from their distinct hashes ([`KeyHashes`], such as a
    /// streamed read spilled to temporary files), one category named `category`: bit for bit the file [`Blocklist::from_keys`]
    /// builds from the same keys in one group (same count, same bits, same fingerprint).
    /// Refused unless [`Blocklist::builds_from_hashes`] accepts `options`.
    pub fn from_hashed_keys<K: KeyHashes>(
        keys: &K,
        category: &str,
        scheme: KeyScheme,
        options: &BuildOptions,
    ) -> Result<Self, K::Error> {
        refuse_near(options)?;
        if !Self::builds_from_hashes(options) {
            return Err(Error::Unsupported {
                what: "building from key hashes",
                why: "a cuckoo filter and a list that grows fill in list order, and the sha256 \
                      strategy hashes the keys themselves: build these from a KeyList \
                      (Blocklist::from_keys)",
            }
            .into());
        }
        let entries = keys.len() as usize;
        // No cuckoo filter here (refused above), so no retry with more headroom.
        let mut layers = sized_layers(options, entries, options.fpp, 1.0)?;
        match layers.single_bloom_mut() {
            // Ascending hashes fill a blocked filter block range by block range.
            Some(AnyFilter::Blocked(filter)) => keys.try_for_each(&mut |hash| {
                filter.insert_hash(hash);
                Ok(())
            })?,
            Some(AnyFilter::Classic(filter)) => keys.try_for_each(&mut |hash| {
                filter.insert_hash(hash);
                Ok(())
            })?,
            // Counting (and any other kind `builds_from_hashes` admits) through the
            // layers' own insert.
            Some(_) | None => keys.try_for_each(&mut |hash| Ok(layers.insert_hash(hash)?))?,
        }
        let verification = if options.verify {
            let mut pairs = Vec::with_capacity(entries);
            keys.try_for_each(&mut |hash| {
                // One category: the table keeps no category sets, so no ids are needed.
                pairs.push((fingerprint(hash), Vec::new()));
                Ok(())
            })?;
            Some(Verification::new(pairs, false))
        } else {
            None
        };
        let categories = vec![Category {
            name: category.to_string(),
            entries: keys.len(),
        }];
        Ok(Self::of_keys(
            options,
            scheme,
            layers,
            (keys.len(), keys.fingerprint()),
            categories,
            verification,
        ))
    }

    /// Builds a blocklist of URL entries (distinct, with their categories and the exceptions),
    /// sized so that a URL with up to `options.expression_bound` expressions is a false
    /// positive with probability at most `options.fpp`.
    pub fn from_entries(set: &EntrySet, options: &BuildOptions) -> Result<Self> {
        phishbloom_filter::math::validate_fpp(options.fpp)?;
        refuse_near(options)?;
        let entries = &set.entries;
        let mut compact = None;
        let (engine, fingerprints) = match options.kind {
            Kind::Cabf => {
                let (engine, fingerprints) =
                    CabfEngine::build(entries, options.fpp, options.expression_bound)?;
                (Engine::Cabf(engine), fingerprints)
            }
            Kind::Compact => {
                let (engine, table) = compact_engine(set, options)?;
                compact = Some(table);
                (engine, Vec::new())
            }
            _ => {
                let probe = per_probe_fpp(options.fpp, options.expression_bound);
                let hashes: Vec<KeyHash> =
                    entries.iter().map(|e| expression_hash(e.key())).collect();
                let layers = fill(options, entries.len(), probe, |layers| {
                    hashes.iter().try_for_each(|&hash| layers.insert_hash(hash))
                })?;
                let fingerprints: Vec<u64> = hashes.into_iter().map(fingerprint).collect();
                // Sized for the entries the structure was sized for, each of which may bring a
                // new host (a list that grows fills its gate past its size: the gate then lets
                // more suffixes through, which costs time, never an answer).
                let capacity = options.sized_for(entries.len());
                let gate = options
                    .host_gate
                    .then(|| {
                        let hosts = entries.iter().map(|e| {
                            let key = e.key();
                            (key.host, key.path.len())
                        });
                        HostGate::of_entries(hosts, capacity)
                    })
                    .transpose()?;
                (Engine::Urls(UrlFilter::new(layers, gate)), fingerprints)
            }
        };
        // Of the entries' own fingerprints, whatever the kind (CaBF's verification section
        // holds fingerprints of its component sequences instead).
        let fingerprint_of_set = SetFingerprint::of(
            entries
                .iter()
                .map(|e| fingerprint(expression_hash(e.key()))),
        );
        let verification = (options.verify && compact.is_none()).then(|| {
            let pairs = fingerprints
                .into_iter()
                .zip(&set.membership)
                .map(|(f, ids)| (f, ids.to_vec()))
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
        let mut list = Blocklist {
            kind: options.kind,
            meta,
            engine,
            resolver: Resolver::new(categories, verification, exceptions),
            directory: None,
            origin: PathBuf::from(&options.name),
        };
        list.note_tops(entries);
        Ok(match compact {
            Some(table) => list.with_compact(table),
            None => list,
        })
    }
}

/// A compact list's engine over the entries of `set`, and its table (shared with the
/// resolver): a hosts gate when entries have paths, occupancy bits when there is none.
fn compact_engine(set: &EntrySet, options: &BuildOptions) -> Result<(Engine, Arc<CompactTable>)> {
    let entries = &set.entries;
    let mut sets = CategorySets::default();
    let mut last = None;
    let pairs: Vec<(u64, u32)> = entries
        .iter()
        .zip(&set.membership)
        .map(|(e, ids)| {
            let v = fingerprint(expression_hash(e.key()));
            (v, intern_run(&mut sets, &mut last, ids.to_vec()))
        })
        .collect();
    // A list of domains probes no path: it needs no gate to spare path probes, and a gate of
    // its hosts would cost as many bits per entry as a fifth of the table.
    let domains_only = entries.iter().all(|e| e.key().path.is_empty());
    let universe = compact_universe_for(options, pairs.len(), options.expression_bound)?;
    let gate = (options.host_gate && !domains_only)
        .then(|| {
            let hosts = entries.iter().map(|e| e.key().host);
            HostGate::of_hosts(hosts, COMPACT_GATE_FPP)
        })
        .transpose()?;
    let mut table = CompactTable::build_interned(pairs, sets, universe)?;
    if gate.is_none() && !domains_only {
        table = table.with_occupancy();
    }
    let table = Arc::new(table.with_domains_only(domains_only));
    let layers = Layers::compact(table.clone());
    Ok((Engine::Urls(UrlFilter::new(layers, gate)), table))
}

/// A compact list's table of `(fingerprint, category ids)` pairs (see
/// [`compact_universe_for`]).
fn compact_table(
    options: &BuildOptions,
    pairs: Vec<(u64, Vec<u16>)>,
    probes: u32,
) -> Result<Arc<CompactTable>> {
    let universe = compact_universe_for(options, pairs.len(), probes)?;
    // Whole keys have no hosts gate: the occupancy bits spare most searches instead.
    Ok(Arc::new(
        CompactTable::build(pairs, universe)?.with_occupancy(),
    ))
}

/// The prefix universe of a compact list of `entries` entries, as large as the list's rate
/// per item over `probes` probes needs; refused for a list that grows (a compact list is
/// static).
fn compact_universe_for(options: &BuildOptions, entries: usize, probes: u32) -> Result<u64> {
    if options.grow {
        return Err(Error::Unsupported {
            what: "growing",
            why: "a compact list is built once for its entries; build it again when they change",
        });
    }
    let per_probe = per_probe_fpp(options.fpp, probes);
    Ok(compact_universe(entries as u64, per_probe))
}

/// The categories of groups of keys, with their key counts.
fn categories_of(groups: &[(String, KeyList)], counts: Vec<u64>) -> Vec<Category> {
    groups
        .iter()
        .zip(counts)
        .map(|((name, _), entries)| Category {
            name: name.clone(),
            entries,
        })
        .collect()
}
/// Refuses [`Kind::Near`] for a list of keys or entries: near-duplicate lists hold documents
/// ([`Blocklist::from_near`]).
fn refuse_near(options: &BuildOptions) -> Result<()> {
    if options.kind == Kind::Near {
        return Err(Error::WrongScheme {
            path: PathBuf::from(&options.name),
            problem: "a near-duplicate list holds documents, not keys or entries; build it from \
                      documents (Blocklist::from_near, `phishbloom build --near`)"
                .into(),
        });
    }
    Ok(())
}
