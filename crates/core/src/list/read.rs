//! Reading a [`Blocklist`] from a file image: every section checked, whichever kind it holds.

use std::path::{Path, PathBuf};

use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::ribbon::RibbonFilter;
use phishbloom_filter::{AnyFilter, BloomFilter, Filter, HashStrategy, LayoutKind};

use crate::engine::cabf::{CabfEngine, Split};
use crate::engine::gate::HostGate;
use crate::engine::urls::UrlFilter;
use crate::error::{Error, Result};
use crate::format::{self, tag, Directory, SectionEntry, SharedSource, Source};
use crate::keys::KeyScheme;
use crate::keywords::gate::PhraseGate;
use crate::keywords::KeywordEngine;
use crate::kind::Kind;
use crate::near::NearEngine;
use crate::resolve::{Category, CompactTable, Exceptions, Resolver, Verification};
use crate::sections::{self, Meta, SetFingerprint};
use crate::structure::{Layer, Layers};

use super::model::{Blocklist, Engine};

impl Blocklist {
    /// A blocklist from a whole file image held in memory, every checksum and field checked;
    /// `name` labels errors.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: &[u8]) -> Result<Self> {
        Self::read_from(name.as_ref(), &bytes).map(|list| list.attach_keyword_bytes(bytes))
    }

    /// The kind and metadata of a file image read through `source` (header, table and metadata
    /// section, checksums verified): cheap even for a large file.
    pub fn meta_from(path: &Path, source: &dyn Source) -> Result<(Kind, Meta)> {
        let directory = format::read_directory(path, source)?;
        let kind = kind_of(path, &directory)?;
        Ok((kind, read_meta(path, source, &directory)?))
    }

    /// A blocklist from its parts (the keyword builder's: one category, named after the list).
    pub fn from_parts(kind: Kind, meta: Meta, engine: Engine) -> Self {
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

    /// Hands a keyword list's index the source (the open file) it reads blocks from on hits;
    /// a list of another kind is returned as it is.
    pub fn attach_keyword_source(mut self, source: SharedSource) -> Self {
        if let (Engine::Keywords(engine), Some(directory)) = (&mut self.engine, &self.directory) {
            engine.attach_source(source, directory);
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

    /// A blocklist read through `source` (a file image, or an open file read with positioned
    /// reads), every checksum and field checked; `path` labels errors. A keyword list's index
    /// is read on hits: attach its source with [`Blocklist::attach_keyword_source`].
    pub fn read_from(path: &Path, source: &dyn Source) -> Result<Self> {
        let directory = format::read_directory(path, source)?;
        let kind = kind_of(path, &directory)?;
        check_sections(path, &directory, kind)?;
        let mut meta = read_meta(path, source, &directory)?;
        let file = File {
            path,
            source,
            directory: &directory,
            kind,
            meta: &meta,
        };
        let mut resolver = read_resolver(path, source, &directory, &meta, kind)?;
        let engine = match kind {
            Kind::Near => file.near_engine()?,
            Kind::Classic | Kind::Blocked | Kind::Split | Kind::Cuckoo | Kind::Counting => {
                file.layered_engine()?
            }
            Kind::Cabf => file.cabf_engine()?,
            Kind::Compact => {
                let mut table = file.compact_table(resolver.categories().len())?;
                // A list of domains probes a few host suffixes a URL: the bits would cost a
                // fifth of its memory for little.
                if directory.find(tag::HOSTS_GATE, 0).is_none() && !table.domains_only() {
                    table = table.with_occupancy();
                }
                let table = std::sync::Arc::new(table);
                resolver = resolver.with_compact(table.clone());
                file.keyed_engine(Layers::compact(table))?
            }
        };
        if directory.version < 3 {
            recompute_fingerprint(kind, &resolver, &mut meta);
        }
        let tops = resolver.tops().clone();
        let mut list = Blocklist {
            kind,
            meta,
            engine,
            resolver,
            directory: Some(directory),
            origin: path.to_path_buf(),
        };
        // The engine probes top labels only for a list that has single-label domains.
        list.set_tops(tops);
        Ok(list)
    }
}

/// The section tag of a kind's structure layers.
fn layer_tag(kind: Kind) -> u16 {
    match kind {
        Kind::Classic | Kind::Blocked | Kind::Split | Kind::Cabf | Kind::Near => tag::FILTER,
        Kind::Cuckoo => tag::CUCKOO,
        Kind::Counting => tag::COUNTERS,
        Kind::Compact => tag::COMPACT,
    }
}

/// Refuses a section of a required tag this version does not know, or one a `kind` file does
/// not hold (or holds once, and this is not index 0).
fn check_sections(path: &Path, directory: &Directory, kind: Kind) -> Result<()> {
    let layer_tag = layer_tag(kind);
    for entry in &directory.sections {
        let expected = match entry.tag {
            _ if kind == Kind::Near => {
                matches!(
                    entry.tag,
                    tag::META
                        | tag::CATEGORIES
                        | tag::NEAR_TABLES
                        | tag::NEAR_SKETCHES
                        | tag::NEAR_DOCS
                ) && entry.index == 0
            }
            _ if kind == Kind::Compact => {
                entry.tag >= format::OPTIONAL_TAGS
                    || matches!(
                        entry.tag,
                        tag::META
                            | tag::CATEGORIES
                            | tag::CATEGORY_SETS
                            | tag::EXCEPTIONS
                            | tag::COMPACT
                    ) && entry.index == 0
            }
            tag::META | tag::VERIFY | tag::CATEGORIES | tag::CATEGORY_SETS => entry.index == 0,
            tag::EXCEPTIONS => entry.index == 0,
            tag::NEVER => kind != Kind::Cabf && entry.index == 0,
            tag::FILTER | tag::CUCKOO | tag::COUNTERS => entry.tag == layer_tag,
            tag::CABF => kind == Kind::Cabf && entry.index == 0,
            tag::GROWTH => kind != Kind::Cabf && entry.index == 0,
            tag::PATCH | tag::STATIC_PATCH => kind.layout().is_some(),
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
    Ok(())
}

/// Version 2 summed the xxh3-128 of entry keys: the fingerprint of this version is recomputed
/// from the entries' fingerprints where the file has them, else it is marked approximate (a
/// delta then refuses the file until it is rebuilt).
fn recompute_fingerprint(kind: Kind, resolver: &Resolver, meta: &mut Meta) {
    match (kind, resolver.verification()) {
        (Kind::Cabf, _) | (_, None) => meta.exact_count = false,
        (_, Some(table)) => {
            meta.fingerprint = SetFingerprint::of(table.fingerprints().as_slice().iter().copied());
        }
    }
}

/// A file being read: where from, its directory, kind and metadata.
struct File<'a> {
    path: &'a Path,
    source: &'a dyn Source,
    directory: &'a Directory,
    kind: Kind,
    meta: &'a Meta,
}

impl File<'_> {
    /// The bytes of section `tag` (index 0), which must be there (`section` names it).
    fn required(&self, tag: u16, section: &'static str) -> Result<Vec<u8>> {
        let entry = self.directory.find(tag, 0).ok_or(Error::MissingSection {
            path: self.path.to_path_buf(),
            section,
        })?;
        format::read_section_vec(self.path, self.source, entry)
    }

    /// The bytes of section `tag` (index 0), if the file has it.
    fn optional(&self, tag: u16) -> Result<Option<Vec<u8>>> {
        self.directory
            .find(tag, 0)
            .map(|entry| format::read_section_vec(self.path, self.source, entry))
            .transpose()
    }

    /// How many sections of `tag` the file has.
    fn count(&self, tag: u16) -> usize {
        self.directory
            .sections
            .iter()
            .filter(|s| s.tag == tag)
            .count()
    }

    /// The section of `tag` numbered `index`: indices are unique (the table is checked) and,
    /// being as many as the sections, run 0..n exactly when each is found (`what` names the
    /// numbering in errors).
    fn numbered(&self, tag: u16, index: usize, what: Numbering) -> Result<&SectionEntry> {
        self.directory.find(tag, index as u16).ok_or_else(|| {
            Error::invalid(self.path, what.field, format!("no {} {index}", what.item))
        })
    }

    /// A near-duplicate list's engine.
    fn near_engine(&self) -> Result<Engine> {
        let path = self.path;
        if self.meta.scheme != KeyScheme::Near {
            return Err(Error::invalid(
                path,
                "metadata key scheme",
                format!("{} in a near-duplicate list", self.meta.scheme.name()),
            ));
        }
        let categories = match self.optional(tag::CATEGORIES)? {
            Some(bytes) => sections::decode_categories(path, &bytes)?.len(),
            None => 1,
        };
        // A list has one method's section: sketches (MinHash) or tables (SimHash).
        let (lookup_tag, lookup) = match self.optional(tag::NEAR_SKETCHES)? {
            Some(bytes) if self.directory.find(tag::NEAR_TABLES, 0).is_none() => {
                (tag::NEAR_SKETCHES, bytes)
            }
            Some(_) => {
                return Err(Error::invalid(
                    path,
                    "near sections",
                    "both near tables and near sketches",
                ))
            }
            None => (
                tag::NEAR_TABLES,
                self.required(tag::NEAR_TABLES, "near tables or near sketches")?,
            ),
        };
        Ok(Engine::Near(NearEngine::decode(
            path,
            lookup_tag,
            &lookup,
            &self.required(tag::NEAR_DOCS, "near documents")?,
            categories,
        )?))
    }

    /// A compact list's table: its compact section, whose set indices point into its category
    /// sets section (of ids below `categories`).
    fn compact_table(&self, categories: usize) -> Result<CompactTable> {
        let sets = self.required(tag::CATEGORY_SETS, "category sets")?;
        let (_, sets) = sections::decode_category_sets(self.path, &sets, 0, categories)?;
        let entry = self
            .directory
            .find(tag::COMPACT, 0)
            .ok_or(Error::MissingSection {
                path: self.path.to_path_buf(),
                section: "compact",
            })?;
        sections::read_compact(self.path, self.source, entry, sets)
    }

    /// The engine of a list of layers (Bloom, cuckoo or counting), by its key scheme.
    fn layered_engine(&self) -> Result<Engine> {
        self.keyed_engine(self.layers()?)
    }

    /// The engine over `layers`, by the list's key scheme.
    fn keyed_engine(&self, layers: Layers) -> Result<Engine> {
        let path = self.path;
        if self.kind == Kind::Compact && self.meta.scheme == KeyScheme::Keywords {
            return Err(Error::invalid(
                path,
                "metadata key scheme",
                "keywords in a compact list",
            ));
        }
        Ok(match self.meta.scheme {
            KeyScheme::Expressions => Engine::Urls(self.url_filter(layers)?),
            KeyScheme::Exact | KeyScheme::Folded | KeyScheme::Url => Engine::Keys(layers),
            KeyScheme::Near => {
                return Err(Error::invalid(
                    path,
                    "metadata key scheme",
                    format!("near-duplicates in a {} blocklist", self.kind),
                ))
            }
            KeyScheme::Keywords => {
                let filter = layers
                    .into_single_bloom()
                    .ok_or_else(|| Error::invalid(path, "keyword list", "not one Bloom filter"))?;
                let engine = KeywordEngine::read(path, self.source, self.directory, filter)?;
                let gate = read_gate(
                    path,
                    self.source,
                    self.directory,
                    tag::PHRASE_GATE,
                    "phrase gate",
                    LayoutKind::Blocked,
                    |filter| match filter {
                        AnyFilter::Blocked(filter) => Some(PhraseGate::from_filter(filter)),
                        _ => None,
                    },
                )?;
                Engine::Keywords(engine.with_gate(gate))
            }
        })
    }

    /// The layers of a Bloom, cuckoo or counting list, with its patches.
    fn layers(&self) -> Result<Layers> {
        let grows = match self.optional(tag::GROWTH)? {
            Some(bytes) => {
                sections::decode_growth(self.path, &bytes)?;
                true
            }
            None => false,
        };
        let layers = self.structure_layers(grows)?;
        let patches = self.patches()?;
        let static_patches = self.static_patches()?;
        Ok(Layers::from_parts(
            self.kind,
            layers,
            grows,
            patches,
            static_patches,
        ))
    }

    /// The structure's layers: one, or several in a list that `grows`; Bloom layers of the
    /// kind's layout, hashed with xxh3 where the list needs it.
    fn structure_layers(&self, grows: bool) -> Result<Vec<Layer>> {
        let (path, kind) = (self.path, self.kind);
        let layer_tag = layer_tag(kind);
        let filter_count = self.count(layer_tag);
        if filter_count == 0 || (filter_count > 1 && !grows) {
            return Err(Error::invalid(
                path,
                "filter sections",
                format!("{filter_count} in a {kind} blocklist that does not grow, expected 1"),
            ));
        }
        let mut layers = Vec::with_capacity(filter_count);
        for index in 0..filter_count {
            let entry = self.numbered(layer_tag, index, LAYER)?;
            let layer = sections::read_layer(path, self.source, entry)?;
            if let Layer::Bloom(filter) = &layer {
                if Some(filter.layout()) != kind.layout() {
                    return Err(Error::invalid(
                        path,
                        "filter layout",
                        format!("{} in a {kind} blocklist", filter.layout()),
                    ));
                }
                let xxh3_only = grows || self.meta.scheme == KeyScheme::Expressions;
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
        Ok(layers)
    }

    /// The patches deltas added: one per prefix width, in ascending order (one encoding per
    /// list).
    fn patches(&self) -> Result<Vec<PrefixSet>> {
        let mut patches: Vec<PrefixSet> = Vec::new();
        for index in 0..self.count(tag::PATCH) {
            let entry = self.numbered(tag::PATCH, index, PATCH)?;
            let bytes = format::read_section_vec(self.path, self.source, entry)?;
            let patch = sections::decode_patch(self.path, &bytes)?;
            if patches.last().is_some_and(|p| p.bits() >= patch.bits()) {
                return Err(Error::invalid(self.path, "patch order", patch.bits()));
            }
            patches.push(patch);
        }
        Ok(patches)
    }

    /// The static patches (ribbon filters) compact deltas added.
    fn static_patches(&self) -> Result<Vec<RibbonFilter>> {
        let count = self.count(tag::STATIC_PATCH);
        let mut static_patches = Vec::with_capacity(count);
        for index in 0..count {
            let entry = self.numbered(tag::STATIC_PATCH, index, STATIC_PATCH)?;
            let bytes = format::read_section_vec(self.path, self.source, entry)?;
            static_patches.push(sections::decode_static_patch(self.path, &bytes)?);
        }
        Ok(static_patches)
    }

    /// A list of URL entries' filter: its layers and, when it has no delta patches, its host
    /// gate (a gate beside patches could not vouch for the patches' entries; no writer makes
    /// one: applying a delta drops the gate). A file holds one gate: split-block (this
    /// version's) or blocked (written before).
    fn url_filter(&self, layers: Layers) -> Result<UrlFilter> {
        let patched = !layers.patches().is_empty() || !layers.static_patches().is_empty();
        let gate = |tag: u16, layout: LayoutKind| {
            read_gate(
                self.path,
                self.source,
                self.directory,
                tag,
                "host gate",
                layout,
                HostGate::from_filter,
            )
        };
        let gate = match patched {
            true => None,
            false if self.kind == Kind::Compact => read_gate(
                self.path,
                self.source,
                self.directory,
                tag::HOSTS_GATE,
                "host gate",
                LayoutKind::Split,
                HostGate::hosts_from_filter,
            )?,
            false => match gate(tag::SPLIT_HOST_GATE, LayoutKind::Split)? {
                Some(gate) => Some(gate),
                None => gate(tag::HOST_GATE, LayoutKind::Blocked)?,
            },
        };
        Ok(UrlFilter::new(layers, gate))
    }

    /// A CaBF list's engine: its parameters, component filters and check filter.
    fn cabf_engine(&self) -> Result<Engine> {
        let path = self.path;
        let filter_count = self.count(tag::FILTER);
        let (split_code, count) = sections::decode_cabf(path, &self.required(tag::CABF, "CaBF")?)?;
        let split = Split::from_code(split_code)
            .ok_or_else(|| Error::invalid(path, "CaBF split", split_code))?;
        if !(1..=64).contains(&count) || filter_count != count as usize + 1 {
            return Err(Error::invalid(
                path,
                "CaBF filter count",
                format!("{count} component filters, {filter_count} filter sections"),
            ));
        }
        if self.meta.scheme != KeyScheme::Expressions {
            return Err(Error::invalid(
                path,
                "metadata key scheme",
                "CaBF holds URL entries only",
            ));
        }
        let mut filters = Vec::with_capacity(count as usize + 1);
        for index in 0..=count as u16 {
            let entry = self
                .directory
                .find(tag::FILTER, index)
                .ok_or(Error::MissingSection {
                    path: path.to_path_buf(),
                    section: "filter",
                })?;
            match sections::read_filter(path, self.source, entry)? {
                AnyFilter::Classic(filter) if filter.hash_strategy() == HashStrategy::Xxh3 => {
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
        Ok(Engine::Cabf(CabfEngine::from_parts(split, filters, check)))
    }
}

/// How a numbered section is named in errors: the field, and one item.
struct Numbering {
    field: &'static str,
    item: &'static str,
}

const LAYER: Numbering = Numbering {
    field: "layer numbering",
    item: "layer",
};
const PATCH: Numbering = Numbering {
    field: "patch numbering",
    item: "patch",
};
const STATIC_PATCH: Numbering = Numbering {
    field: "static patch numbering",
    item: "static patch",
};

/// The gate under `tag` (a list of URL entries' host gate, [`tag::SPLIT_HOST_GATE`] or
/// [`tag::HOST_GATE`], or a keyword list's phrase gate, [`tag::PHRASE_GATE`]; `what` names it in
/// errors), if the file has one: a filter of `layout` hashed with xxh3, wrapped by `gate`.
fn read_gate<G>(
    path: &Path,
    source: &dyn Source,
    directory: &Directory,
    tag: u16,
    what: &'static str,
    layout: LayoutKind,
    gate: impl FnOnce(AnyFilter) -> Option<G>,
) -> Result<Option<G>> {
    let Some(entry) = directory.find(tag, 0) else {
        return Ok(None);
    };
    let filter = sections::read_filter(path, source, entry)?;
    let params = filter.params();
    if params.layout == layout && params.strategy == HashStrategy::Xxh3 {
        if let Some(gate) = gate(filter) {
            return Ok(Some(gate));
        }
    }
    Err(Error::invalid(
        path,
        what,
        format!(
            "a {} filter hashed with {}, not a {layout} one hashed with xxh3",
            params.layout, params.strategy
        ),
    ))
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
    kind: Kind,
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
        // A compact list's sets are its table's (read with it).
        None if kind != Kind::Compact && directory.find(tag::CATEGORY_SETS, 0).is_some() => {
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
    let mut resolver = Resolver::new(categories, verification, exceptions);
    if let Some(entry) = directory.find(tag::TOPS, 0) {
        resolver.set_tops(sections::read_fingerprint_table(
            path,
            source,
            entry,
            "top-labels section",
        )?);
    }
    if let Some(entry) = directory.find(tag::NEVER, 0) {
        resolver.set_never(sections::read_fingerprint_table(
            path,
            source,
            entry,
            "never-warn section",
        )?);
    }
    Ok(resolver)
}

fn read_meta(path: &Path, source: &dyn Source, directory: &Directory) -> Result<Meta> {
    let entry = directory.find(tag::META, 0).ok_or(Error::MissingSection {
        path: path.to_path_buf(),
        section: "metadata",
    })?;
    sections::decode_meta(path, &format::read_section_vec(path, source, entry)?)
}
