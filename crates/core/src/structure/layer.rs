//! One layer of a list's structure: a Bloom, cuckoo or counting filter, built for a capacity
//! and rate, asked by key hash or entry fingerprint.

use phishbloom_filter::counting::CountingFilter;
use phishbloom_filter::cuckoo::CuckooFilter;
use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash};

use crate::error::Result;
use crate::kind::Kind;
use crate::resolve::CompactTable;

use super::fingerprint_hash;

/// One structure.
#[derive(Clone, Debug)]
pub enum Layer {
    /// A Bloom filter (blocked, classic or split).
    Bloom(AnyFilter),
    /// A cuckoo filter.
    Cuckoo(CuckooFilter),
    /// A counting Bloom filter.
    Counting(CountingFilter),
    /// A compact list's table (shared with its resolver, which confirms with it).
    Compact(std::sync::Arc<CompactTable>),
}

impl Layer {
    /// An empty layer of `kind` for `capacity` keys at per-probe rate `fpp`, at cuckoo load
    /// `load`.
    pub(super) fn new(
        kind: Kind,
        capacity: u64,
        fpp: f64,
        strategy: HashStrategy,
        load: f64,
    ) -> Result<Self> {
        Ok(match kind {
            Kind::Blocked | Kind::Classic | Kind::Split => {
                // Every Bloom kind has a layout.
                let layout = kind.layout().expect("a Bloom kind");
                Layer::Bloom(AnyFilter::new(layout, capacity, fpp, strategy)?)
            }
            Kind::Cuckoo => Layer::Cuckoo(CuckooFilter::with_load(capacity, fpp, load)?),
            Kind::Counting => Layer::Counting(CountingFilter::new(capacity, fpp)?),
            Kind::Cabf | Kind::Near | Kind::Compact => {
                unreachable!(
                    "CaBF, near-duplicate and compact lists are not built from empty layers"
                )
            }
        })
    }

    /// Whether it may hold a key of hash `hash` and entry fingerprint `v = fingerprint(hash)`.
    #[inline]
    pub fn contains(&self, hash: KeyHash, v: u64) -> bool {
        match self {
            Layer::Bloom(filter) => filter.contains_hash(hash),
            Layer::Cuckoo(filter) => filter.contains_hash(fingerprint_hash(v)),
            Layer::Counting(filter) => filter.contains_hash(fingerprint_hash(v)),
            Layer::Compact(table) => table.contains(v),
        }
    }

    /// Whether it may hold the entry of fingerprint `v` (cuckoo and counting layers; a Bloom
    /// layer cannot tell from a fingerprint and answers `false`).
    #[inline]
    pub fn contains_fingerprint(&self, v: u64) -> bool {
        match self {
            Layer::Bloom(_) => false,
            Layer::Cuckoo(filter) => filter.contains_hash(fingerprint_hash(v)),
            Layer::Counting(filter) => filter.contains_hash(fingerprint_hash(v)),
            Layer::Compact(table) => table.contains(v),
        }
    }

    /// Keys it holds.
    pub fn items(&self) -> u64 {
        match self {
            Layer::Bloom(filter) => filter.items(),
            Layer::Cuckoo(filter) => filter.items(),
            Layer::Counting(filter) => filter.items(),
            Layer::Compact(table) => table.len(),
        }
    }

    /// Keys it was sized for.
    pub fn capacity(&self) -> u64 {
        match self {
            Layer::Bloom(filter) => filter.expected_items().unwrap_or(0),
            Layer::Cuckoo(filter) => filter.params().expected_items,
            Layer::Counting(filter) => filter.params().expected_items,
            Layer::Compact(table) => table.len(),
        }
    }

    /// The per-probe rate it was sized for.
    pub fn target_fpp(&self) -> Option<f64> {
        match self {
            Layer::Bloom(filter) => filter.target_fpp(),
            Layer::Cuckoo(filter) => filter.params().target_fpp,
            Layer::Counting(filter) => filter.params().target_fpp,
            // Its prefix width is chosen for the rate: the rate it holds is its target.
            Layer::Compact(table) => Some(table.map().expected_fpp()),
        }
    }

    /// The rate its contents imply now.
    pub fn expected_fpp(&self) -> f64 {
        match self {
            Layer::Bloom(filter) => filter.expected_fpp(),
            Layer::Cuckoo(filter) => filter.expected_fpp(),
            Layer::Counting(filter) => filter.expected_fpp(),
            Layer::Compact(table) => table.map().expected_fpp(),
        }
    }

    /// Bytes of its bits, slots or counters.
    pub fn size_in_bytes(&self) -> u64 {
        match self {
            Layer::Bloom(filter) => filter.size_in_bytes(),
            Layer::Cuckoo(filter) => filter.size_in_bytes(),
            Layer::Counting(filter) => filter.size_in_bytes(),
            Layer::Compact(table) => table.size_in_bytes(),
        }
    }
}
