//! Reading a [`Blocklist`] from a file image: every section checked, whichever kind it holds.

use std::path::{Path, PathBuf};

use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::{AnyFilter, BloomFilter, Filter, HashStrategy, LayoutKind};

use crate::engine::cabf::{CabfEngine, Split};
use crate::engine::gate::HostGate;
use crate::engine::urls::UrlFilter;
use crate::error::{Error, Result};
use crate::format::{self, tag, Directory, SharedSource, Source};
use crate::keys::KeyScheme;
use crate::keywords::gate::PhraseGate;
use crate::keywords::KeywordEngine;
use crate::kind::Kind;
use crate::near::NearEngine;
use crate::resolve::{Category, Exceptions, Resolver, Verification};
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
        let layer_tag = match kind {
            Kind::Classic | Kind::Blocked | Kind::Split | Kind::Cabf | Kind::Near => tag::FILTER,
            Kind::Cuckoo => tag::CUCKOO,
            Kind::Counting => tag::COUNTERS,
        };
        for entry in &directory.sections {
            let expected = match entry.tag {
                _ if kind == Kind::Near => {
                    matches!(
                        entry.tag,
                        tag::META | tag::CATEGORIES | tag::NEAR_TABLES | tag::NEAR_DOCS
                    ) && entry.index == 0
                }
                tag::META | tag::VERIFY | tag::CATEGORIES | tag::CATEGORY_SETS => entry.index == 0,
                tag::EXCEPTIONS => entry.index == 0,
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
            Kind::Near => {
                if meta.scheme != KeyScheme::Near {
                    return Err(Error::invalid(
                        path,
                        "metadata key scheme",
                        format!("{} in a near-duplicate list", meta.scheme.name()),
                    ));
                }
                let section = |tag: u16, section: &'static str| -> Result<Vec<u8>> {
                    let entry = directory.find(tag, 0).ok_or(Error::MissingSection {
                        path: path.to_path_buf(),
                        section,
                    })?;
                    format::read_section_vec(path, source, entry)
                };
                let categories = match directory.find(tag::CATEGORIES, 0) {
                    Some(entry) => sections::decode_categories(
                        path,
                        &format::read_section_vec(path, source, entry)?,
                    )?
                    .len(),
                    None => 1,
                };
                Engine::Near(NearEngine::decode(
                    path,
                    &section(tag::NEAR_TABLES, "near tables")?,
                    &section(tag::NEAR_DOCS, "near documents")?,
                    categories,
                )?)
            }
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
                let static_count = directory
                    .sections
                    .iter()
                    .filter(|s| s.tag == tag::STATIC_PATCH)
                    .count();
                let mut static_patches = Vec::with_capacity(static_count);
                for index in 0..static_count {
                    let entry =
                        directory
                            .find(tag::STATIC_PATCH, index as u16)
                            .ok_or_else(|| {
                                Error::invalid(
                                    path,
                                    "static patch numbering",
                                    format!("no static patch {index}"),
                                )
                            })?;
                    static_patches.push(sections::decode_static_patch(
                        path,
                        &format::read_section_vec(path, source, entry)?,
                    )?);
                }
                let layers = Layers::from_parts(kind, layers, grows, patches, static_patches);
                match meta.scheme {
                    KeyScheme::Expressions => {
                        // A gate beside delta patches could not vouch for the patches' entries
                        // (no writer makes one: applying a delta drops the gate).
                        let patched =
                            !layers.patches().is_empty() || !layers.static_patches().is_empty();
                        // A file holds one gate: split-block (this version's) or blocked
                        // (written before).
                        let gate = match patched {
                            true => None,
                            false => match read_gate(
                                path,
                                source,
                                &directory,
                                tag::SPLIT_HOST_GATE,
                                "host gate",
                                LayoutKind::Split,
                                HostGate::from_filter,
                            )? {
                                Some(gate) => Some(gate),
                                None => read_gate(
                                    path,
                                    source,
                                    &directory,
                                    tag::HOST_GATE,
                                    "host gate",
                                    LayoutKind::Blocked,
                                    HostGate::from_filter,
                                )?,
                            },
                        };
                        Engine::Urls(UrlFilter::new(layers, gate))
                    }
                    KeyScheme::Exact | KeyScheme::Folded | KeyScheme::Url => Engine::Keys(layers),
                    KeyScheme::Near => {
                        return Err(Error::invalid(
                            path,
                            "metadata key scheme",
                            format!("near-duplicates in a {kind} blocklist"),
                        ))
                    }
                    KeyScheme::Keywords => {
                        let filter = layers.into_single_bloom().ok_or_else(|| {
                            Error::invalid(path, "keyword list", "not one Bloom filter")
                        })?;
                        Engine::Keywords(
                            KeywordEngine::read(path, source, &directory, filter)?.with_gate(
                                read_gate(
                                    path,
                                    source,
                                    &directory,
                                    tag::PHRASE_GATE,
                                    "phrase gate",
                                    LayoutKind::Blocked,
                                    |filter| match filter {
                                        AnyFilter::Blocked(filter) => {
                                            Some(PhraseGate::from_filter(filter))
                                        }
                                        _ => None,
                                    },
                                )?,
                            ),
                        )
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
}

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
