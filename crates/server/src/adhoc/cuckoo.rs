//! [`ScalingCuckoo`]: RedisBloom's cuckoo filter — 8-bit fingerprints in buckets of
//! `BUCKETSIZE` slots, a power-of-two bucket count, at most `MAXITERATIONS` evictions per
//! insert, and a new filter `EXPANSION` times larger when one is full. Adding an item twice
//! stores its fingerprint twice (`CF.COUNT` says 2, two `CF.DEL`s succeed), as RedisBloom does.

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::KeyHash;

use super::dump::Header;
use super::{FilterError, Result, MAX_FILTER_BYTES};

/// RedisBloom's defaults for a cuckoo filter created by `CF.ADD` or `CF.INSERT`.
pub const CF_DEFAULT_CAPACITY: u64 = 1024;
/// Slots per bucket unless `BUCKETSIZE` says otherwise.
pub const CF_DEFAULT_BUCKET_SIZE: u16 = 2;
/// Evictions per insert unless `MAXITERATIONS` says otherwise.
pub const CF_DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Growth factor unless `EXPANSION` says otherwise.
pub const CF_DEFAULT_EXPANSION: u16 = 1;

/// One layer of a [`ScalingCuckoo`]: `num_buckets × bucket_size` one-byte fingerprints (0 is
/// an empty slot).
#[derive(Clone, Debug)]
struct CuckooLayer {
    slots: Vec<u8>,
    num_buckets: u64,
}

/// RedisBloom's cuckoo filter (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScalingCuckoo {
    layers: Vec<CuckooLayer>,
    capacity: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
    items: u64,
    deleted: u64,
    rng: SplitMix64,
}

/// A fingerprint and the first bucket's hash of one item.
#[derive(Clone, Copy)]
struct Fingerprint {
    fp: u8,
    h: u64,
}

impl Fingerprint {
    fn of(item: &[u8]) -> Self {
        let hash = KeyHash::of(item);
        Fingerprint {
            // 1..=255: 0 marks an empty slot.
            fp: (hash.h2 % 255 + 1) as u8,
            h: hash.h1,
        }
    }
}

/// The other bucket of fingerprint `fp` in bucket `i` of `num_buckets` (a power of two): an
/// involution, so a fingerprint moves without its item.
fn alternate(i: u64, fp: u8, num_buckets: u64) -> u64 {
    (i ^ u64::from(fp).wrapping_mul(0x5bd1_e995)) & (num_buckets - 1)
}

/// Seed of the eviction path's generator.
const KICK_SEED: u64 = 0x6366_6b69_636b; // "cfkick"

impl CuckooLayer {
    fn new(num_buckets: u64, bucket_size: u16, used: u64) -> Result<Self> {
        let bytes = num_buckets.saturating_mul(u64::from(bucket_size));
        if used.saturating_add(bytes) > MAX_FILTER_BYTES {
            return Err(FilterError::TooLarge {
                bytes: used.saturating_add(bytes),
            });
        }
        // Under MAX_FILTER_BYTES, so it fits in usize on the 64-bit targets served; the
        // allocation may still fail, and says so.
        let mut slots = Vec::new();
        slots
            .try_reserve_exact(bytes as usize)
            .map_err(|_| FilterError::TooLarge { bytes })?;
        slots.resize(bytes as usize, 0);
        Ok(CuckooLayer { slots, num_buckets })
    }

    fn buckets(&self, f: Fingerprint) -> (u64, u64) {
        let i1 = f.h & (self.num_buckets - 1);
        (i1, alternate(i1, f.fp, self.num_buckets))
    }

    fn bucket(&mut self, i: u64, size: u16) -> &mut [u8] {
        let start = i as usize * usize::from(size);
        &mut self.slots[start..start + usize::from(size)]
    }

    fn count(&self, f: Fingerprint, size: u16) -> u64 {
        let (i1, i2) = self.buckets(f);
        let size = usize::from(size);
        let in_bucket = |i: u64| {
            let start = i as usize * size;
            self.slots[start..start + size]
                .iter()
                .filter(|&&s| s == f.fp)
                .count() as u64
        };
        in_bucket(i1) + if i2 != i1 { in_bucket(i2) } else { 0 }
    }

    /// Puts `fp` in an empty slot of bucket `i`, if there is one.
    fn place(&mut self, i: u64, fp: u8, size: u16) -> bool {
        match self.bucket(i, size).iter_mut().find(|s| **s == 0) {
            Some(slot) => {
                *slot = fp;
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, f: Fingerprint, size: u16) -> bool {
        let (i1, i2) = self.buckets(f);
        for i in [i1, i2] {
            if let Some(slot) = self.bucket(i, size).iter_mut().find(|s| **s == f.fp) {
                *slot = 0;
                return true;
            }
        }
        false
    }

    /// Inserts by evicting along a random path of at most `max` moves; on failure every move is
    /// undone (no resident fingerprint is dropped).
    fn kick_insert(&mut self, f: Fingerprint, size: u16, max: u16, rng: &mut SplitMix64) -> bool {
        let (i1, i2) = self.buckets(f);
        let mut bucket = if rng.next_u64() & 1 == 0 { i1 } else { i2 };
        let mut carried = f.fp;
        let mut path: Vec<(u64, usize, u8)> = Vec::with_capacity(usize::from(max));
        for _ in 0..max {
            let slot = rng.below(u64::from(size)) as usize;
            let cell = &mut self.bucket(bucket, size)[slot];
            let evicted = std::mem::replace(cell, carried);
            path.push((bucket, slot, evicted));
            carried = evicted;
            bucket = alternate(bucket, carried, self.num_buckets);
            if self.place(bucket, carried, size) {
                return true;
            }
        }
        for (bucket, slot, evicted) in path.into_iter().rev() {
            self.bucket(bucket, size)[slot] = evicted;
        }
        false
    }
}

/// What a cuckoo insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuckooAdd {
    /// The fingerprint was stored (again, for a present item without `NX`).
    Added,
    /// `NX` and the item may be present already: nothing stored.
    Exists,
}

impl ScalingCuckoo {
    /// An empty filter for `capacity` items (RedisBloom's sizing: the next power of two of
    /// `capacity / bucket_size` buckets) that grows `expansion` times (rounded up to a power of
    /// two; 0: never grows).
    pub fn new(
        capacity: u64,
        bucket_size: u16,
        max_iterations: u16,
        expansion: u16,
    ) -> Result<Self> {
        let bucket_size = bucket_size.max(1);
        let buckets = (capacity / u64::from(bucket_size)).max(1);
        let num_buckets = buckets
            .checked_next_power_of_two()
            .ok_or(FilterError::TooLarge { bytes: u64::MAX })?;
        let expansion = if expansion == 0 {
            0
        } else {
            expansion.checked_next_power_of_two().unwrap_or(1 << 15)
        };
        Ok(ScalingCuckoo {
            layers: vec![CuckooLayer::new(num_buckets, bucket_size, 0)?],
            capacity,
            bucket_size,
            max_iterations: max_iterations.max(1),
            expansion,
            items: 0,
            deleted: 0,
            rng: SplitMix64::new(KICK_SEED),
        })
    }

    /// RedisBloom's defaults (`CF.ADD` to a new key), or `capacity` items.
    pub fn with_capacity(capacity: u64) -> Result<Self> {
        Self::new(
            capacity,
            CF_DEFAULT_BUCKET_SIZE,
            CF_DEFAULT_MAX_ITERATIONS,
            CF_DEFAULT_EXPANSION,
        )
    }

    /// Adds `item`; with `nx`, only if no layer may hold it yet.
    pub fn add(&mut self, item: &[u8], nx: bool) -> Result<CuckooAdd> {
        let f = Fingerprint::of(item);
        let size = self.bucket_size;
        if nx && self.layers.iter().any(|l| l.count(f, size) > 0) {
            return Ok(CuckooAdd::Exists);
        }
        // A free slot in any layer, newest first; then evictions in the newest; then a new layer.
        let placed = self.layers.iter_mut().rev().any(|layer| {
            let (i1, i2) = layer.buckets(f);
            layer.place(i1, f.fp, size) || layer.place(i2, f.fp, size)
        });
        let newest = self.layers.len() - 1;
        let placed =
            placed || self.layers[newest].kick_insert(f, size, self.max_iterations, &mut self.rng);
        if !placed {
            if self.expansion == 0 {
                return Err(FilterError::CuckooFull);
            }
            let growth = u64::from(self.expansion).saturating_pow(self.layers.len() as u32);
            let num_buckets = self.layers[0].num_buckets.saturating_mul(growth);
            if !num_buckets.is_power_of_two() {
                return Err(FilterError::CuckooFull);
            }
            let mut layer = CuckooLayer::new(num_buckets, size, self.bytes())
                .map_err(|_| FilterError::CuckooFull)?;
            let (i1, _) = layer.buckets(f);
            // An empty layer has room in the first bucket.
            layer.place(i1, f.fp, size);
            self.layers.push(layer);
        }
        self.items += 1;
        Ok(CuckooAdd::Added)
    }

    /// Copies of `item`'s fingerprint in its buckets, over every layer (an upper bound of the
    /// times it was added and not deleted).
    pub fn count(&self, item: &[u8]) -> u64 {
        let f = Fingerprint::of(item);
        self.layers
            .iter()
            .map(|l| l.count(f, self.bucket_size))
            .sum()
    }

    /// Whether `item` may be in the filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.count(item) > 0
    }

    /// Removes one copy of `item`'s fingerprint (newest layer first); `false` if none is there.
    pub fn delete(&mut self, item: &[u8]) -> bool {
        let f = Fingerprint::of(item);
        let size = self.bucket_size;
        let removed = self.layers.iter_mut().rev().any(|l| l.remove(f, size));
        if removed {
            self.items -= 1;
            self.deleted += 1;
        }
        removed
    }

    /// RedisBloom's `CF.COMPACT`: every fingerprint of a later layer that an earlier layer has
    /// a free slot for moves there, a last layer left empty is dropped, and the count of
    /// deletions starts again. Layers have a power of two of buckets, each at least as many as
    /// the one before, so a fingerprint's bucket masked to an earlier layer's size is one of its
    /// two buckets there (the alternate is an XOR below the mask too): a move keeps it findable.
    pub fn compact(&mut self) {
        let size = self.bucket_size;
        for later in (1..self.layers.len()).rev() {
            let (earlier, rest) = self.layers.split_at_mut(later);
            let layer = &mut rest[0];
            for bucket in 0..layer.num_buckets {
                for slot in 0..usize::from(size) {
                    let fp = layer.bucket(bucket, size)[slot];
                    if fp == 0 {
                        continue;
                    }
                    let moved = earlier.iter_mut().any(|target| {
                        let i = bucket & (target.num_buckets - 1);
                        target.place(i, fp, size)
                            || target.place(alternate(i, fp, target.num_buckets), fp, size)
                    });
                    if moved {
                        layer.bucket(bucket, size)[slot] = 0;
                    }
                }
            }
        }
        while self.layers.len() > 1
            && self
                .layers
                .last()
                .is_some_and(|l| l.slots.iter().all(|&s| s == 0))
        {
            self.layers.pop();
        }
        self.deleted = 0;
    }

    /// Items held (added and not deleted; RedisBloom's "Number of items inserted").
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Items deleted (RedisBloom's "Number of items deleted").
    pub fn deleted(&self) -> u64 {
        self.deleted
    }

    /// Bytes of all layers' slots (RedisBloom's "Size").
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.slots.len() as u64).sum()
    }

    /// Buckets of the first layer (RedisBloom's "Number of buckets").
    pub fn buckets(&self) -> u64 {
        self.layers[0].num_buckets
    }

    /// How many layers there are.
    pub fn filters(&self) -> usize {
        self.layers.len()
    }

    /// Slots per bucket.
    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    /// Evictions per insert.
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    /// The growth factor (0: never grows).
    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    /// The capacity it was made for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The layers' slots, in order: what a dump carries after its header.
    pub(super) fn segments(&self) -> Vec<&[u8]> {
        self.layers.iter().map(|l| &l.slots[..]).collect()
    }

    /// The layers' slots, to load a dump into.
    pub(super) fn segments_mut(&mut self) -> Vec<&mut [u8]> {
        self.layers.iter_mut().map(|l| &mut l.slots[..]).collect()
    }

    /// Its part of a dump header: the parameters, the counts and each layer's bucket count.
    pub(super) fn write_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.bucket_size.to_le_bytes());
        out.extend_from_slice(&self.max_iterations.to_le_bytes());
        out.extend_from_slice(&self.expansion.to_le_bytes());
        out.extend_from_slice(&self.items.to_le_bytes());
        out.extend_from_slice(&self.deleted.to_le_bytes());
        out.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        for l in &self.layers {
            out.extend_from_slice(&l.num_buckets.to_le_bytes());
        }
    }

    /// The filter [`ScalingCuckoo::write_header`] described, its slots all empty; every
    /// parameter checked, and the size capped.
    pub(super) fn read_header(h: &mut Header) -> Result<Self> {
        let capacity = h.u64()?;
        let (bucket_size, max_iterations, expansion) = (h.u16()?, h.u16()?, h.u16()?);
        let (items, deleted) = (h.u64()?, h.u64()?);
        let out_of_range = "a parameter out of range";
        let n = h.layers(out_of_range)?;
        if bucket_size == 0 || max_iterations == 0 {
            return Err(FilterError::BadChunk(out_of_range));
        }
        let mut layers = Vec::with_capacity(n as usize);
        let mut used = 0u64;
        for _ in 0..n {
            let num_buckets = h.u64()?;
            if !num_buckets.is_power_of_two() {
                return Err(FilterError::BadChunk("a bucket count not a power of two"));
            }
            let layer = CuckooLayer::new(num_buckets, bucket_size, used)?;
            used += layer.slots.len() as u64;
            layers.push(layer);
        }
        Ok(ScalingCuckoo {
            layers,
            capacity,
            bucket_size,
            max_iterations,
            expansion,
            items,
            deleted,
            rng: SplitMix64::new(KICK_SEED),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuckoo_counts_every_add() {
        let mut c = ScalingCuckoo::with_capacity(1000).unwrap();
        assert_eq!(c.add(b"x", false).unwrap(), CuckooAdd::Added);
        assert_eq!(c.add(b"x", false).unwrap(), CuckooAdd::Added);
        assert_eq!(c.add(b"x", true).unwrap(), CuckooAdd::Exists);
        assert_eq!(c.count(b"x"), 2);
        assert!(c.delete(b"x"));
        assert_eq!(c.count(b"x"), 1);
        assert!(c.delete(b"x"));
        assert!(!c.delete(b"x"));
        assert_eq!((c.items(), c.deleted()), (0, 2));
    }

    #[test]
    fn cuckoo_grows_or_refuses_and_never_loses_an_item() {
        let mut grows = ScalingCuckoo::new(8, 2, 20, 2).unwrap();
        for i in 0..100 {
            grows.add(format!("k{i}").as_bytes(), false).unwrap();
        }
        assert!(grows.filters() > 1);
        assert!((0..100).all(|i| grows.contains(format!("k{i}").as_bytes())));

        let mut fixed = ScalingCuckoo::new(8, 2, 20, 0).unwrap();
        let mut added = Vec::new();
        for i in 0..100 {
            match fixed.add(format!("k{i}").as_bytes(), false) {
                Ok(_) => added.push(i),
                Err(error) => assert!(matches!(error, FilterError::CuckooFull)),
            }
        }
        assert!(added.len() < 100 && fixed.filters() == 1);
        assert!(added
            .iter()
            .all(|i| fixed.contains(format!("k{i}").as_bytes())));
    }

    #[test]
    fn compact_moves_items_into_earlier_layers_and_drops_an_empty_last_one() {
        let mut c = ScalingCuckoo::new(8, 2, 20, 2).unwrap();
        for i in 0..40 {
            c.add(format!("k{i}").as_bytes(), false).unwrap();
        }
        let grown = c.filters();
        assert!(grown > 2);
        // Deleting most of the early items frees room below the later layers.
        for i in 0..30 {
            assert!(c.delete(format!("k{i}").as_bytes()));
        }
        c.compact();
        assert!(c.filters() < grown, "{} of {grown}", c.filters());
        assert_eq!((c.items(), c.deleted()), (10, 0));
        assert!((30..40).all(|i| c.contains(format!("k{i}").as_bytes())));
        for i in 30..40 {
            assert!(
                c.delete(format!("k{i}").as_bytes()),
                "k{i} is findable after the move"
            );
        }
    }
}
