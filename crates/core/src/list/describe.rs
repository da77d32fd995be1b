//! What `info` shows about a [`Blocklist`]: [`Description`], filters and sections.

use phishbloom_filter::Filter;

use crate::format::{self, Directory, SectionEntry};
use crate::keywords::KeywordsInfo;
use crate::kind::Kind;
use crate::rates::{per_item_fpp, per_probe_fpp};
use crate::resolve::{bound_bits_per_entry, Category, SetCoding};
use crate::sections::Meta;
use crate::structure::{Layer, LayerInfo, Layers};

use super::model::{Blocklist, Engine};

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
    /// A compact list's table against the information bound.
    pub compact: Option<CompactInfo>,
    /// Fingerprints of the never set (`build --never`): each 64 bits.
    pub never: u64,
    /// The categories and their entry counts.
    pub categories: Vec<Category>,
    /// Exception entries.
    pub exceptions: u64,
    /// A keyword list's phrase lengths, rates per document and per probe, and index.
    pub keywords: Option<KeywordsInfo>,
    /// A near-duplicate list's fingerprinting and tables.
    pub near: Option<crate::near::NearInfo>,
    /// The gate a check or scan asks first, if the list has one: a list of URL entries' host
    /// gate or a keyword list's phrase gate (its fill shows how much of its 2 % it has used).
    pub gate: Option<GateInfo>,
}

/// What `info` shows about a compact list's table: its size per entry against the bound of
/// a list that answers as it does ([`crate::resolve::bound_bits_per_entry`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CompactInfo {
    /// Distinct fingerprint prefixes.
    pub prefixes: u64,
    /// The universe the prefixes are in (`log₂ u` bits of fingerprint each, before coding).
    pub universe: u64,
    /// How set indices are coded: `S-bit indices`, or `one set but for N entries`.
    pub set_coding: String,
    /// Category sets.
    pub sets: u64,
    /// The table's bits per entry, as stored.
    pub table_bits_per_entry: f64,
    /// The whole file's bits per entry (`None` for a list not read from a file).
    pub file_bits_per_entry: Option<f64>,
    /// The per-probe rate the list was built for (its per-item rate over its probes).
    pub target_per_probe: f64,
    /// `log₂(1/q)`: the bits per entry telling entries from strangers takes.
    pub rate_bits: f64,
    /// The entropy of the entries' category sets, in bits per entry.
    pub category_bits: f64,
}

impl CompactInfo {
    /// The bound: `log₂(1/q)` plus the category sets' entropy.
    pub fn bound_bits_per_entry(&self) -> f64 {
        self.rate_bits + self.category_bits
    }
}

/// What `info` shows about a list's gate.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GateInfo {
    /// `host` or `phrase`.
    pub kind: &'static str,
    /// Its Bloom filter.
    pub filter: FilterInfo,
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
    /// A compact list's table against the bound (`file_len` 0: not read from a file).
    fn describe_compact(&self, file_len: u64) -> Option<CompactInfo> {
        let table = self.resolver.compact()?;
        let entries = self.meta.entries.max(1) as f64;
        let per_item = self.meta.target_fpp.unwrap_or(1.0);
        let target_per_probe = per_probe_fpp(per_item, self.meta.probes_per_item);
        let counts = table.set_counts();
        let rate_bits = bound_bits_per_entry(target_per_probe, &[]);
        Some(CompactInfo {
            prefixes: table.len(),
            universe: table.map().universe(),
            set_coding: match table.coding() {
                SetCoding::InMap => format!("{}-bit indices", table.map().value_bits()),
                SetCoding::Majority { others, .. } => {
                    format!("one set but for {} entries", others.len())
                }
            },
            sets: table.sets().all().len() as u64,
            table_bits_per_entry: table.stored_bits() as f64 / entries,
            file_bits_per_entry: (file_len > 0).then(|| file_len as f64 * 8.0 / entries),
            target_per_probe,
            rate_bits,
            category_bits: bound_bits_per_entry(target_per_probe, &counts) - rate_bits,
        })
    }

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
        let (filters, split, probe_target) = self.describe_filters();
        let layers = self.layers().map(Layers::describe).unwrap_or_default();
        let grows = self.layers().is_some_and(Layers::grows);
        Description {
            kind: self.kind,
            format_version: directory.version,
            file_bytes: directory.file_len,
            checksum: format!("{:016x}", directory.checksum),
            sections: directory.sections.iter().map(SectionInfo::of).collect(),
            meta: self.meta.clone(),
            per_item_fpp: probe_target
                .map(|f| per_item_fpp(f, self.meta.probes_per_item))
                .or(self.meta.target_fpp),
            filters,
            layers,
            grows,
            split,
            verification: self.resolver.verification().map(|t| t.len() as u64),
            compact: self.describe_compact(directory.file_len),
            never: self.resolver.never().len() as u64,
            categories: self.resolver.categories().to_vec(),
            exceptions: self.resolver.exceptions().len() as u64,
            keywords: match &self.engine {
                Engine::Keywords(engine) => Some(engine.info(&self.meta)),
                _ => None,
            },
            near: match &self.engine {
                Engine::Near(engine) => Some(engine.info()),
                _ => None,
            },
            gate: self.describe_gate(),
        }
    }

    /// The Bloom filters of the list (each layer's, CaBF's, a keyword list's), the CaBF split,
    /// and the per-probe target of a one-filter list (from which the per-item rate follows).
    fn describe_filters(&self) -> (Vec<FilterInfo>, Option<&'static str>, Option<f64>) {
        match (&self.engine, self.layers()) {
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
        }
    }

    /// The gate of a list of URL entries or a keyword list, if it has one.
    fn describe_gate(&self) -> Option<GateInfo> {
        match &self.engine {
            Engine::Urls(urls) => urls.gate().map(|gate| GateInfo {
                kind: "host",
                filter: FilterInfo::of(gate.filter()),
            }),
            Engine::Keywords(engine) => engine.gate().map(|gate| GateInfo {
                kind: "phrase",
                filter: FilterInfo::of(gate.filter()),
            }),
            _ => None,
        }
    }
}

impl SectionInfo {
    /// A section as the directory lists it.
    fn of(section: &SectionEntry) -> Self {
        SectionInfo {
            name: section.describe(),
            offset: section.offset,
            bytes: section.len,
            checksum: format!("{:016x}", section.checksum),
        }
    }
}
