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
//! - [`AdHoc`] — the filters by name, and [`Filter`] — either type.
//!
//! Every filter can be dumped in chunks and loaded back ([`Filter::dump_chunk`],
//! [`Filter::from_header`] and [`Filter::load_chunk`]: RedisBloom's `SCANDUMP`/`LOADCHUNK`
//! iterator), in this server's own format. These filters are not served blocklists: the HTTP
//! check never asks them, `/v1/lists` shows them as ad hoc, and they are lost when the server
//! stops.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{math, BloomFilter, KeyHash};

/// The largest filter (all its layers) this server creates or loads: 1 GiB.
pub const MAX_FILTER_BYTES: u64 = 1 << 30;

/// Bytes of filter data per `SCANDUMP` chunk (RedisBloom sends up to 16 MiB; smaller chunks
/// keep a reply well under the client's and this server's bulk limits).
pub const DUMP_CHUNK: usize = 1 << 20;

/// RedisBloom's error-rate factor between one Bloom layer and the next.
const TIGHTENING: f64 = 0.5;

/// RedisBloom's defaults for a cuckoo filter created by `CF.ADD` or `CF.INSERT`.
pub const CF_DEFAULT_CAPACITY: u64 = 1024;
/// Slots per bucket unless `BUCKETSIZE` says otherwise.
pub const CF_DEFAULT_BUCKET_SIZE: u16 = 2;
/// Evictions per insert unless `MAXITERATIONS` says otherwise.
pub const CF_DEFAULT_MAX_ITERATIONS: u16 = 20;
/// Growth factor unless `EXPANSION` says otherwise.
pub const CF_DEFAULT_EXPANSION: u16 = 1;

/// The first bytes of a dump's header, then one byte for the type.
const MAGIC: &[u8; 8] = b"PBADHOC1";

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

/// One layer of a [`ScalingBloom`].
#[derive(Clone, Debug)]
struct BloomLayer {
    filter: BloomFilter,
    capacity: u64,
    count: u64,
    fpp: f64,
}

impl BloomLayer {
    fn new(capacity: u64, fpp: f64, used: u64) -> Result<Self> {
        let bits = math::optimal_num_bits(capacity, fpp)?;
        let bytes = phishbloom_filter::data_len(bits);
        if used.saturating_add(bytes) > MAX_FILTER_BYTES {
            return Err(FilterError::TooLarge {
                bytes: used.saturating_add(bytes),
            });
        }
        Ok(BloomLayer {
            filter: BloomFilter::new(capacity, fpp)?,
            capacity,
            count: 0,
            fpp,
        })
    }

    fn bytes(&self) -> u64 {
        self.filter.bit_bytes().len() as u64
    }
}

/// RedisBloom's scalable Bloom filter (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScalingBloom {
    layers: Vec<BloomLayer>,
    error_rate: f64,
    /// `None`: non-scaling.
    expansion: Option<u32>,
    items: u64,
}

impl ScalingBloom {
    /// An empty filter for `capacity` items at `error_rate`, growing by `expansion` when full
    /// (`None`: refusing new items instead).
    pub fn new(error_rate: f64, capacity: u64, expansion: Option<u32>) -> Result<Self> {
        let first = BloomLayer::new(capacity.max(1), error_rate * TIGHTENING, 0)?;
        Ok(ScalingBloom {
            layers: vec![first],
            error_rate,
            expansion,
            items: 0,
        })
    }

    /// Adds `item`: `Ok(true)` if it was new, `Ok(false)` if the filter already answered for it.
    pub fn add(&mut self, item: &[u8]) -> Result<bool> {
        let hash = KeyHash::of(item);
        if self.layers.iter().any(|l| l.filter.contains_hash(hash)) {
            return Ok(false);
        }
        let full = self.newest().count >= self.newest().capacity;
        if full {
            let Some(expansion) = self.expansion else {
                return Err(FilterError::BloomFull);
            };
            let newest = self.newest();
            let capacity = newest.capacity.saturating_mul(u64::from(expansion));
            let layer = BloomLayer::new(capacity, newest.fpp * TIGHTENING, self.bytes())?;
            self.layers.push(layer);
        }
        let newest = self.newest_mut();
        newest.filter.insert_hash(hash);
        newest.count += 1;
        self.items += 1;
        Ok(true)
    }

    /// Whether `item` may have been added.
    pub fn contains(&self, item: &[u8]) -> bool {
        let hash = KeyHash::of(item);
        self.layers.iter().any(|l| l.filter.contains_hash(hash))
    }

    fn newest(&self) -> &BloomLayer {
        // Every constructor makes at least one layer, and none are removed.
        &self.layers[self.layers.len() - 1]
    }

    fn newest_mut(&mut self) -> &mut BloomLayer {
        let last = self.layers.len() - 1;
        &mut self.layers[last]
    }

    /// Items added (RedisBloom's `BF.CARD` and "Number of items inserted").
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The items all layers are sized for (RedisBloom's "Capacity").
    pub fn capacity(&self) -> u64 {
        self.layers.iter().map(|l| l.capacity).sum()
    }

    /// Bytes of the layers' bits (RedisBloom's "Size").
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(BloomLayer::bytes).sum()
    }

    /// How many layers there are (RedisBloom's "Number of filters").
    pub fn filters(&self) -> usize {
        self.layers.len()
    }

    /// The growth factor, `None` for a non-scaling filter (RedisBloom's "Expansion rate").
    pub fn expansion(&self) -> Option<u32> {
        self.expansion
    }

    /// `BF.DEBUG`'s lines: the item count, then one line per layer.
    pub fn debug(&self) -> Vec<String> {
        let mut lines = vec![format!("size:{}", self.items)];
        for layer in &self.layers {
            let params = layer.filter.params();
            lines.push(format!(
                "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
                layer.bytes(),
                params.num_bits,
                params.num_hashes,
                layer.capacity,
                layer.count,
                layer.fpp
            ));
        }
        lines
    }
}

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
}

/// A filter created over the Redis protocol: RedisBloom's Bloom or cuckoo type.
#[derive(Clone, Debug)]
pub enum Filter {
    /// `MBbloom--`.
    Bloom(ScalingBloom),
    /// `MBbloomCF`.
    Cuckoo(ScalingCuckoo),
}

/// Little-endian writer and reader of a dump header.
struct Header<'a>(&'a [u8]);

impl Header<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(FilterError::BadChunk("the header is cut short"))?;
        self.0 = rest;
        Ok(*head)
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.take()?))
    }
}

/// Layers a dump header may describe (RedisBloom's chains stay far below).
const MAX_LAYERS: u32 = 64;

impl Filter {
    /// RedisBloom's type name (`TYPE`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Filter::Bloom(_) => "MBbloom--",
            Filter::Cuckoo(_) => "MBbloomCF",
        }
    }

    fn segments(&self) -> Vec<&[u8]> {
        match self {
            Filter::Bloom(b) => b.layers.iter().map(|l| l.filter.bit_bytes()).collect(),
            Filter::Cuckoo(c) => c.layers.iter().map(|l| &l.slots[..]).collect(),
        }
    }

    fn segments_mut(&mut self) -> Vec<&mut [u8]> {
        match self {
            Filter::Bloom(b) => b
                .layers
                .iter_mut()
                .map(|l| l.filter.bit_bytes_mut())
                .collect(),
            Filter::Cuckoo(c) => c.layers.iter_mut().map(|l| &mut l.slots[..]).collect(),
        }
    }

    /// Bytes of data a dump carries after its header.
    pub fn data_len(&self) -> u64 {
        self.segments().iter().map(|s| s.len() as u64).sum()
    }

    /// The dump header: the type and every parameter and count, without the bits.
    pub fn header(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        match self {
            Filter::Bloom(b) => {
                out.push(b'B');
                out.extend_from_slice(&b.error_rate.to_le_bytes());
                out.extend_from_slice(&b.expansion.unwrap_or(0).to_le_bytes());
                out.push(u8::from(b.expansion.is_some()));
                out.extend_from_slice(&b.items.to_le_bytes());
                out.extend_from_slice(&(b.layers.len() as u32).to_le_bytes());
                for l in &b.layers {
                    let params = l.filter.params();
                    out.extend_from_slice(&params.num_bits.to_le_bytes());
                    out.extend_from_slice(&params.num_hashes.to_le_bytes());
                    out.extend_from_slice(&l.capacity.to_le_bytes());
                    out.extend_from_slice(&l.count.to_le_bytes());
                    out.extend_from_slice(&l.fpp.to_le_bytes());
                }
            }
            Filter::Cuckoo(c) => {
                out.push(b'C');
                out.extend_from_slice(&c.capacity.to_le_bytes());
                out.extend_from_slice(&c.bucket_size.to_le_bytes());
                out.extend_from_slice(&c.max_iterations.to_le_bytes());
                out.extend_from_slice(&c.expansion.to_le_bytes());
                out.extend_from_slice(&c.items.to_le_bytes());
                out.extend_from_slice(&c.deleted.to_le_bytes());
                out.extend_from_slice(&(c.layers.len() as u32).to_le_bytes());
                for l in &c.layers {
                    out.extend_from_slice(&l.num_buckets.to_le_bytes());
                }
            }
        }
        out
    }

    /// A filter of the header's type and parameters, its bits all zero until the chunks are
    /// loaded; every parameter is checked as a new filter's are, and the size capped.
    pub fn from_header(bytes: &[u8]) -> Result<Filter> {
        let rest = bytes
            .strip_prefix(&MAGIC[..])
            .ok_or(FilterError::BadChunk("not a header of this server's dump"))?;
        let (&kind, rest) = rest
            .split_first()
            .ok_or(FilterError::BadChunk("the header is cut short"))?;
        let mut h = Header(rest);
        let filter = match kind {
            b'B' => {
                let error_rate = h.f64()?;
                let expansion = h.u32()?;
                let scaling = h.take::<1>()?[0] != 0;
                let items = h.u64()?;
                let n = h.u32()?;
                if n == 0 || n > MAX_LAYERS {
                    return Err(FilterError::BadChunk("a layer count out of range"));
                }
                let mut layers = Vec::with_capacity(n as usize);
                let mut used = 0u64;
                for _ in 0..n {
                    let (num_bits, num_hashes) = (h.u64()?, h.u32()?);
                    let (capacity, count, fpp) = (h.u64()?, h.u64()?, h.f64()?);
                    let bytes = phishbloom_filter::data_len(num_bits);
                    used = used.saturating_add(bytes);
                    if used > MAX_FILTER_BYTES {
                        return Err(FilterError::TooLarge { bytes: used });
                    }
                    math::validate_fpp(fpp)?;
                    layers.push(BloomLayer {
                        filter: BloomFilter::with_num_bits(num_bits, num_hashes)?,
                        capacity,
                        count,
                        fpp,
                    });
                }
                math::validate_fpp(error_rate)?;
                Filter::Bloom(ScalingBloom {
                    layers,
                    error_rate,
                    expansion: scaling.then_some(expansion),
                    items,
                })
            }
            b'C' => {
                let capacity = h.u64()?;
                let (bucket_size, max_iterations, expansion) = (h.u16()?, h.u16()?, h.u16()?);
                let (items, deleted) = (h.u64()?, h.u64()?);
                let n = h.u32()?;
                if n == 0 || n > MAX_LAYERS || bucket_size == 0 || max_iterations == 0 {
                    return Err(FilterError::BadChunk("a parameter out of range"));
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
                Filter::Cuckoo(ScalingCuckoo {
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
            _ => return Err(FilterError::BadChunk("an unknown filter type")),
        };
        if !h.0.is_empty() {
            return Err(FilterError::BadChunk("bytes after the header"));
        }
        Ok(filter)
    }

    /// One step of the `SCANDUMP` iterator: for `iter` 0, `(1, header)`; then the data from
    /// offset `iter − 1`, at most [`DUMP_CHUNK`] bytes, with the next iterator (`iter` plus
    /// the bytes sent); past the end, `(0, [])`.
    pub fn dump_chunk(&self, iter: u64) -> (u64, Vec<u8>) {
        if iter == 0 {
            return (1, self.header());
        }
        let offset = iter - 1;
        let total = self.data_len();
        if offset >= total {
            return (0, Vec::new());
        }
        let want = (total - offset).min(DUMP_CHUNK as u64) as usize;
        let mut chunk = Vec::with_capacity(want);
        let mut skip = offset;
        for segment in self.segments() {
            if chunk.len() == want {
                break;
            }
            let len = segment.len() as u64;
            if skip >= len {
                skip -= len;
                continue;
            }
            let start = skip as usize;
            skip = 0;
            let end = (start + want - chunk.len()).min(segment.len());
            chunk.extend_from_slice(&segment[start..end]);
        }
        (iter + chunk.len() as u64, chunk)
    }

    /// Loads a data chunk that `SCANDUMP` answered with iterator `iter` (it starts at
    /// `iter − 1 − chunk.len()`).
    pub fn load_chunk(&mut self, iter: u64, chunk: &[u8]) -> Result<()> {
        let offset = iter
            .checked_sub(1 + chunk.len() as u64)
            .ok_or(FilterError::BadChunk(
                "an iterator before the chunk's start",
            ))?;
        if offset.saturating_add(chunk.len() as u64) > self.data_len() {
            return Err(FilterError::BadChunk("past the filter's end"));
        }
        let mut skip = offset;
        let mut rest = chunk;
        for segment in self.segments_mut() {
            if rest.is_empty() {
                break;
            }
            let len = segment.len() as u64;
            if skip >= len {
                skip -= len;
                continue;
            }
            let start = skip as usize;
            skip = 0;
            let n = (segment.len() - start).min(rest.len());
            segment[start..start + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        Ok(())
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
    fn bloom_grows_by_its_expansion_or_fills() {
        let mut b = ScalingBloom::new(0.01, 10, Some(4)).unwrap();
        for i in 0..60 {
            b.add(format!("k{i}").as_bytes()).unwrap();
        }
        assert!((0..60).all(|i| b.contains(format!("k{i}").as_bytes())));
        // 10, then 40, then 160.
        assert_eq!(b.filters(), 3);
        assert_eq!(b.capacity(), 10 + 40 + 160);
        assert_eq!(b.expansion(), Some(4));
        assert!(!b.add(b"k1").unwrap());

        let mut fixed = ScalingBloom::new(0.01, 2, None).unwrap();
        assert!(fixed.add(b"a").unwrap());
        assert!(fixed.add(b"b").unwrap());
        assert!(matches!(fixed.add(b"c"), Err(FilterError::BloomFull)));
        assert_eq!(fixed.items(), 2);
    }

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

    fn round_trip(filter: &Filter) -> Filter {
        let (mut iter, header) = filter.dump_chunk(0);
        let mut copy = Filter::from_header(&header).unwrap();
        loop {
            let (next, chunk) = filter.dump_chunk(iter);
            if next == 0 {
                assert!(chunk.is_empty());
                break;
            }
            copy.load_chunk(next, &chunk).unwrap();
            iter = next;
        }
        copy
    }

    #[test]
    fn dumps_load_back_in_chunks() {
        // Two layers and more than one chunk.
        let mut b = ScalingBloom::new(0.001, 700_000, Some(2)).unwrap();
        for i in 0..700_010u32 {
            b.add(&i.to_le_bytes()).unwrap();
        }
        let bloom = Filter::Bloom(b);
        assert!(bloom.data_len() > DUMP_CHUNK as u64);
        let Filter::Bloom(copy) = round_trip(&bloom) else {
            panic!("a Bloom filter's dump loads as a Bloom filter")
        };
        let Filter::Bloom(b) = &bloom else {
            unreachable!()
        };
        assert_eq!(copy.debug(), b.debug());
        assert!((0..700_010u32).all(|i| copy.contains(&i.to_le_bytes())));

        let mut c = ScalingCuckoo::new(64, 4, 10, 2).unwrap();
        for i in 0..300u32 {
            c.add(&i.to_le_bytes(), false).unwrap();
        }
        let Filter::Cuckoo(copy) = round_trip(&Filter::Cuckoo(c.clone())) else {
            panic!("a cuckoo filter's dump loads as a cuckoo filter")
        };
        assert_eq!((copy.items(), copy.filters()), (c.items(), c.filters()));
        assert!((0..300u32).all(|i| copy.count(&i.to_le_bytes()) == c.count(&i.to_le_bytes())));
    }

    #[test]
    fn bad_headers_and_chunks_are_refused() {
        let bloom = Filter::Bloom(ScalingBloom::new(0.01, 100, Some(2)).unwrap());
        let header = bloom.header();
        assert!(Filter::from_header(&header[..header.len() - 1]).is_err());
        assert!(Filter::from_header(b"nonsense").is_err());
        let mut huge = header.clone();
        // The first layer's bit count, after magic, type, rate, expansion, flag, items, count.
        let at = 8 + 1 + 8 + 4 + 1 + 8 + 4;
        huge[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(matches!(
            Filter::from_header(&huge),
            Err(FilterError::TooLarge { .. })
        ));
        let mut copy = Filter::from_header(&header).unwrap();
        let len = bloom.data_len();
        assert!(copy.load_chunk(len + 2, b"x").is_err());
        assert!(copy.load_chunk(1, b"x").is_err());
    }

    #[test]
    fn adhoc_filters_by_key() {
        let adhoc = AdHoc::default();
        let bloom = || Ok(Filter::Bloom(ScalingBloom::new(0.01, 10, Some(2))?));
        assert!(adhoc.create(b"a", bloom().unwrap()));
        assert!(!adhoc.create(b"a", bloom().unwrap()));
        let added = adhoc
            .write_or_create(b"b", bloom, |f| match f {
                Filter::Bloom(b) => b.add(b"x"),
                Filter::Cuckoo(_) => unreachable!(),
            })
            .unwrap();
        assert!(matches!(added, Ok(true)));
        assert_eq!(adhoc.len(), 2);
        assert_eq!(adhoc.summaries()[1].items, 1);
        assert!(adhoc.remove(b"a"));
        assert!(!adhoc.remove(b"a"));
        assert_eq!(adhoc.read(b"a", |_| ()), None);
    }
}
