//! Filters created over the Redis protocol (`BF.RESERVE`, `CF.RESERVE`, `BF.ADD` or `CF.ADD`
//! to a new key, `BF.LOADCHUNK`): RedisBloom's own two types, held in memory, apart from the
//! served blocklists.
//!
//! - [`ScalingBloom`] — RedisBloom's scalable Bloom filter: a chain of classic Bloom filters,
//!   each new one `EXPANSION` times the capacity of the last at half its error rate (the first
//!   at half the rate asked, so the chain stays under it), or one filter that refuses new items
//!   when full (`NONSCALING`).
//! - [`ScalingCuckoo`] — RedisBloom's cuckoo filter: 8-bit fingerprints in buckets of
//!   `BUCKETSIZE` slots, a power-of-two bucket count, at most `MAXITERATIONS` evictions per
//!   insert, and a new filter `EXPANSION` times larger when one is full. Adding an item twice
//!   stores its fingerprint twice (`CF.COUNT` says 2, two `CF.DEL`s succeed), as RedisBloom does.
//! - [`AdHoc`] — the filters by name, and [`Filter`] — either type (this file).
//!
//! Every filter can be dumped in chunks and loaded back ([`Filter::dump_chunk`],
//! [`Filter::from_header`] and [`Filter::load_chunk`]: RedisBloom's `SCANDUMP`/`LOADCHUNK`
//! iterator), in this server's own format (the `dump` module). These filters are not served
//! blocklists: the HTTP check never asks them, `/v1/lists` shows them as ad hoc, and they are
//! lost when the server stops.

mod bloom;
mod cuckoo;
mod dump;

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

pub use bloom::ScalingBloom;
pub use cuckoo::{
    CuckooAdd, ScalingCuckoo, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_CAPACITY, CF_DEFAULT_EXPANSION,
    CF_DEFAULT_MAX_ITERATIONS,
};
pub use dump::DUMP_CHUNK;

/// The largest filter (all its layers) this server creates or loads: 1 GiB.
pub const MAX_FILTER_BYTES: u64 = 1 << 30;

/// What can go wrong with an ad-hoc filter; each message is the RESP error line (RedisBloom's
/// words where it has some).
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// A non-scaling Bloom filter holds as many items as it was sized for.
    #[error("ERR non scaling filter is full")]
    BloomFull,
    /// A cuckoo filter found no slot and may not grow (or growing would pass the size cap).
    #[error("ERR Filter is full")]
    CuckooFull,
    /// The filter would be larger than [`MAX_FILTER_BYTES`].
    #[error("ERR a filter of {bytes} bytes is over the {MAX_FILTER_BYTES}-byte limit of filters created over this protocol")]
    TooLarge {
        /// Bytes the filter would take.
        bytes: u64,
    },
    /// Parameters the filter library refuses (a rate it cannot reach, say).
    #[error("ERR {0}")]
    Params(#[from] phishbloom_filter::Error),
    /// A `LOADCHUNK` header or chunk that does not fit the filter.
    #[error("ERR invalid chunk: {0}")]
    BadChunk(&'static str),
}

/// Result of ad-hoc filter operations.
pub type Result<T> = std::result::Result<T, FilterError>;

/// A filter created over the Redis protocol: RedisBloom's Bloom or cuckoo type.
#[derive(Clone, Debug)]
pub enum Filter {
    /// `MBbloom--`.
    Bloom(ScalingBloom),
    /// `MBbloomCF`.
    Cuckoo(ScalingCuckoo),
}

impl Filter {
    /// RedisBloom's type name (`TYPE`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Filter::Bloom(_) => "MBbloom--",
            Filter::Cuckoo(_) => "MBbloomCF",
        }
    }

    /// The Bloom filter, if this is one.
    pub fn bloom(&self) -> Option<&ScalingBloom> {
        match self {
            Filter::Bloom(bloom) => Some(bloom),
            Filter::Cuckoo(_) => None,
        }
    }

    /// The Bloom filter, if this is one, to change.
    pub fn bloom_mut(&mut self) -> Option<&mut ScalingBloom> {
        match self {
            Filter::Bloom(bloom) => Some(bloom),
            Filter::Cuckoo(_) => None,
        }
    }

    /// The cuckoo filter, if this is one.
    pub fn cuckoo(&self) -> Option<&ScalingCuckoo> {
        match self {
            Filter::Cuckoo(cuckoo) => Some(cuckoo),
            Filter::Bloom(_) => None,
        }
    }

    /// The cuckoo filter, if this is one, to change.
    pub fn cuckoo_mut(&mut self) -> Option<&mut ScalingCuckoo> {
        match self {
            Filter::Cuckoo(cuckoo) => Some(cuckoo),
            Filter::Bloom(_) => None,
        }
    }
}

/// A line of `/v1/lists` for an ad-hoc filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The key.
    pub name: String,
    /// `bloom` or `cuckoo`.
    pub kind: &'static str,
    /// Items held.
    pub items: u64,
    /// Items the first layer (cuckoo) or all layers (Bloom) are sized for.
    pub capacity: u64,
    /// Bytes of its filters.
    pub bytes: u64,
    /// Layers.
    pub filters: usize,
    /// Whether it adds layers when full.
    pub grows: bool,
}

/// The ad-hoc filters by key.
#[derive(Debug, Default)]
pub struct AdHoc {
    filters: RwLock<HashMap<Vec<u8>, Filter>>,
}

impl AdHoc {
    /// `read` of the filter `key`, if there is one.
    pub fn read<T>(&self, key: &[u8], read: impl FnOnce(&Filter) -> T) -> Option<T> {
        // A panicking writer leaves a whole filter (every change is one step), so a poisoned
        // lock is used as it is.
        let filters = self.filters.read().unwrap_or_else(PoisonError::into_inner);
        filters.get(key).map(read)
    }

    /// `write` on the filter `key`, if there is one.
    pub fn write<T>(&self, key: &[u8], write: impl FnOnce(&mut Filter) -> T) -> Option<T> {
        let mut filters = self.filters.write().unwrap_or_else(PoisonError::into_inner);
        filters.get_mut(key).map(write)
    }

    /// `write` on the filter `key`, made by `make` first if there is none.
    pub fn write_or_create<T>(
        &self,
        key: &[u8],
        make: impl FnOnce() -> Result<Filter>,
        write: impl FnOnce(&mut Filter) -> T,
    ) -> Result<T> {
        let mut filters = self.filters.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(filter) = filters.get_mut(key) {
            return Ok(write(filter));
        }
        let mut filter = make()?;
        let result = write(&mut filter);
        filters.insert(key.to_vec(), filter);
        Ok(result)
    }

    /// Adds `filter` as `key`; `false` (and nothing changed) if the key is taken.
    pub fn create(&self, key: &[u8], filter: Filter) -> bool {
        let mut filters = self.filters.write().unwrap_or_else(PoisonError::into_inner);
        if filters.contains_key(key) {
            return false;
        }
        filters.insert(key.to_vec(), filter);
        true
    }

    /// Removes the filter `key`; whether there was one.
    pub fn remove(&self, key: &[u8]) -> bool {
        let mut filters = self.filters.write().unwrap_or_else(PoisonError::into_inner);
        filters.remove(key).is_some()
    }

    /// Removes every filter (`FLUSHDB`); how many there were.
    pub fn clear(&self) -> usize {
        let mut filters = self.filters.write().unwrap_or_else(PoisonError::into_inner);
        let removed = filters.len();
        filters.clear();
        removed
    }

    /// How many filters there are.
    pub fn len(&self) -> usize {
        self.filters
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every filter, by name.
    pub fn summaries(&self) -> Vec<Summary> {
        let filters = self.filters.read().unwrap_or_else(PoisonError::into_inner);
        let mut out: Vec<Summary> = filters
            .iter()
            .map(|(name, filter)| {
                let name = String::from_utf8_lossy(name).into_owned();
                match filter {
                    Filter::Bloom(b) => Summary {
                        name,
                        kind: "bloom",
                        items: b.items(),
                        capacity: b.capacity(),
                        bytes: b.bytes(),
                        filters: b.filters(),
                        grows: b.expansion().is_some(),
                    },
                    Filter::Cuckoo(c) => Summary {
                        name,
                        kind: "cuckoo",
                        items: c.items(),
                        capacity: c.capacity(),
                        bytes: c.bytes(),
                        filters: c.filters(),
                        grows: c.expansion() > 0,
                    },
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adhoc_filters_by_key() {
        let adhoc = AdHoc::default();
        let bloom = || Ok(Filter::Bloom(ScalingBloom::new(0.01, 10, Some(2))?));
        assert!(adhoc.create(b"a", bloom().unwrap()));
        assert!(!adhoc.create(b"a", bloom().unwrap()));
        let added = adhoc
            .write_or_create(b"b", bloom, |f| f.bloom_mut().map(|b| b.add(b"x")))
            .unwrap();
        assert!(matches!(added, Some(Ok(true))));
        assert!(adhoc.read(b"b", |f| f.cuckoo().is_none()).unwrap());
        assert_eq!(adhoc.len(), 2);
        assert_eq!(adhoc.summaries()[1].items, 1);
        assert!(adhoc.remove(b"a"));
        assert!(!adhoc.remove(b"a"));
        assert_eq!(adhoc.read(b"a", |_| ()), None);
    }
}
