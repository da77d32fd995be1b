//! The Bloom filter type, generic over its bit layout, and the object-safe [`Filter`] trait.
//!
//! [`Bloom<L>`] holds everything the two layouts share — construction, insertion (single,
//! batched, concurrent), queries, union, statistics, save and load; the [`Layout`] parameter
//! decides where a key's bits go. [`BloomFilter`] and [`BlockedBloomFilter`] name the two
//! instances; [`AnyFilter`] holds either, for a file whose layout is known only at run time.

use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bits::{Storage, BLOCK_BYTES};
use crate::error::{Error, Result};
use crate::format::{self, Header, HEADER_LEN};
use crate::hash::{HashStrategy, KeyHash};
use crate::layout::{Blocked, Classic, Layout, LayoutKind};
use crate::math;

/// A Bloom filter with bit layout `L`. Use the aliases [`BloomFilter`] and [`BlockedBloomFilter`].
pub struct Bloom<L: Layout> {
    bits: Storage,
    num_bits: u64,
    num_hashes: u32,
    strategy: HashStrategy,
    items: u64,
    expected_items: u64,
    target_fpp: Option<f64>,
    key_scheme: u8,
    key_param: u32,
    layout: PhantomData<L>,
}

/// The textbook Bloom filter: m bits, k positions per key anywhere in the array.
pub type BloomFilter = Bloom<Classic>;

/// The cache-line Bloom filter: all k bits of a key in one 512-bit block, one cache miss per
/// query; sized so that its true rate (which is higher than a classic filter's at equal m) still
/// meets the target.
pub type BlockedBloomFilter = Bloom<Blocked>;

/// Keys hashed and prefetched ahead of probing in the batched paths. Sixteen misses in flight
/// cover a DRAM latency of ~100 ns at a few ns of hashing per key, and sixteen 16-byte hashes
/// stay in registers and L1.
const BATCH: usize = 16;

/// Filters smaller than this (1 MiB, half this machine's per-core L2) are probed without
/// prefetching: their lines are likely cached already.
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// Below this many keys, threads cost more than they save.
const PARALLEL_MIN_KEYS: usize = 1 << 16;

impl<L: Layout> Bloom<L> {
    /// A filter for `expected_items` keys at false-positive rate `fpp`, hashing with xxh3.
    ///
    /// Classic: `m = ceil(−n·ln p / (ln 2)²)`, `k = max(1, round((m/n)·ln 2))`. Blocked: the
    /// smallest whole number of blocks whose true rate is ≤ p, with the best k for that size
    /// (see [`math::blocked_size`]).
    pub fn new(expected_items: u64, fpp: f64) -> Result<Self> {
        Self::with_strategy(expected_items, fpp, HashStrategy::Xxh3)
    }

    /// Like [`Bloom::new`], with a chosen hash strategy.
    pub fn with_strategy(expected_items: u64, fpp: f64, strategy: HashStrategy) -> Result<Self> {
        let (num_bits, num_hashes) = L::size_for(expected_items, fpp)?;
        let mut filter = Self::with_num_bits_and_strategy(num_bits, num_hashes, strategy)?;
        filter.expected_items = expected_items;
        filter.target_fpp = Some(fpp);
        Ok(filter)
    }

    /// A filter of explicit size: `num_bits` bits (rounded up to whole 512-bit blocks for the
    /// blocked layout) and `num_hashes` positions per key, hashing with xxh3.
    pub fn with_num_bits(num_bits: u64, num_hashes: u32) -> Result<Self> {
        Self::with_num_bits_and_strategy(num_bits, num_hashes, HashStrategy::Xxh3)
    }

    /// Like [`Bloom::with_num_bits`], with a chosen hash strategy.
    pub fn with_num_bits_and_strategy(
        num_bits: u64,
        num_hashes: u32,
        strategy: HashStrategy,
    ) -> Result<Self> {
        math::validate_num_bits(num_bits)?;
        math::validate_num_hashes(num_hashes)?;
        let num_bits = L::round_num_bits(num_bits);
        math::validate_num_bits(num_bits)?;
        let blocks = Header::data_len(num_bits) as usize / BLOCK_BYTES;
        Ok(Bloom {
            bits: Storage::zeroed(blocks),
            num_bits,
            num_hashes,
            strategy,
            items: 0,
            expected_items: 0,
            target_fpp: None,
            key_scheme: 0,
            key_param: 0,
            layout: PhantomData,
        })
    }

    /// Adds `key`.
    #[inline]
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        match self.strategy {
            HashStrategy::Xxh3 => self.insert_hash(KeyHash::of(key)),
            HashStrategy::Sha256 => {
                let words = self.bits.words_mut();
                L::for_each_bit_sha256(self.num_bits, self.num_hashes, key, |w, m| words[w] |= m);
                self.items += 1;
            }
        }
    }

    /// Adds a key by its precomputed [`KeyHash`] (the xxh3 strategy's positions).
    ///
    /// For filters built with [`HashStrategy::Xxh3`]; a [`HashStrategy::Sha256`] filter does not
    /// derive positions from a `KeyHash`, so use only one of the two entry points on it.
    #[inline]
    pub fn insert_hash(&mut self, hash: KeyHash) {
        let words = self.bits.words_mut();
        L::for_each_bit(self.num_bits, self.num_hashes, hash, |w, m| words[w] |= m);
        self.items += 1;
    }

    /// Whether `key` may have been inserted: `false` is certain, `true` is wrong with the
    /// filter's false-positive probability.
    #[inline]
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        let key = key.as_ref();
        match self.strategy {
            HashStrategy::Xxh3 => self.contains_hash(KeyHash::of(key)),
            HashStrategy::Sha256 => {
                let words = self.bits.words();
                let mut all = true;
                L::for_each_bit_sha256(self.num_bits, self.num_hashes, key, |w, m| {
                    all &= words[w] & m != 0
                });
                all
            }
        }
    }

    /// [`Bloom::contains`] for a precomputed [`KeyHash`] (see [`Bloom::insert_hash`]).
    #[inline]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        L::contains_hash(self.bits.blocks(), self.num_bits, self.num_hashes, hash)
    }

    /// Answers many queries: clears `out` and pushes one answer per key, in order.
    ///
    /// Hashes a batch of keys first and prefetches the memory each will probe, then probes: the
    /// cache misses of a filter larger than the cache overlap instead of queueing.
    pub fn contains_batch<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut Vec<bool>) {
        out.clear();
        out.reserve(keys.len());
        if self.strategy == HashStrategy::Sha256 {
            out.extend(keys.iter().map(|key| self.contains(key)));
            return;
        }
        let mut hashes = [KeyHash { h1: 0, h2: 0 }; BATCH];
        for chunk in keys.chunks(BATCH) {
            for (slot, key) in hashes.iter_mut().zip(chunk) {
                *slot = KeyHash::of(key.as_ref());
            }
            self.probe_prefetched(&hashes[..chunk.len()], out);
        }
    }

    /// [`Bloom::contains_batch`] for precomputed hashes: pushes one answer per hash onto `out`
    /// (which is not cleared, so callers can accumulate).
    pub fn contains_hash_batch(&self, hashes: &[KeyHash], out: &mut Vec<bool>) {
        out.reserve(hashes.len());
        for chunk in hashes.chunks(BATCH) {
            self.probe_prefetched(chunk, out);
        }
    }

    /// Prefetches every hash's first cache line, then probes them in order. A filter that fits
    /// in L2 gains nothing from prefetching (measured: batched queries were up to 1.6× slower
    /// than single ones on a 12 KiB filter), so small filters skip it.
    #[inline]
    fn probe_prefetched(&self, hashes: &[KeyHash], out: &mut Vec<bool>) {
        let blocks = self.bits.blocks();
        if blocks.len() * BLOCK_BYTES >= PREFETCH_MIN_BYTES {
            for &hash in hashes {
                L::prefetch(blocks, self.num_bits, hash);
            }
        }
        out.extend(
            hashes
                .iter()
                .map(|&hash| L::contains_hash(blocks, self.num_bits, self.num_hashes, hash)),
        );
    }

    /// Adds every key of `other` to `self` (bitwise OR). Both must have the same m, k and hash
    /// strategy — build the shards of a large list with the same parameters, then merge them.
    /// The item count becomes the sum of both (keys in both shards count twice).
    pub fn union(&mut self, other: &Self) -> Result<()> {
        let differs = |parameter, left: String, right: String| Error::Incompatible {
            parameter,
            left,
            right,
        };
        if self.num_bits != other.num_bits {
            return Err(differs(
                "num_bits",
                self.num_bits.to_string(),
                other.num_bits.to_string(),
            ));
        }
        if self.num_hashes != other.num_hashes {
            let (l, r) = (self.num_hashes.to_string(), other.num_hashes.to_string());
            return Err(differs("num_hashes", l, r));
        }
        if self.strategy != other.strategy {
            let (l, r) = (self.strategy.to_string(), other.strategy.to_string());
            return Err(differs("hash strategy", l, r));
        }
        for (mine, theirs) in self.bits.words_mut().iter_mut().zip(other.bits.words()) {
            *mine |= theirs;
        }
        self.items = self.items.saturating_add(other.items);
        Ok(())
    }

    /// An inserter that several threads can use at once (atomic OR on the words), for building
    /// a large filter on every core. The filter is borrowed exclusively until it is dropped;
    /// its item count is updated then.
    pub fn concurrent_inserter(&mut self) -> ConcurrentInserter<'_, L> {
        ConcurrentInserter {
            words: self.bits.atomic_words(),
            items: &mut self.items,
            inserted: AtomicU64::new(0),
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            strategy: self.strategy,
            layout: PhantomData,
        }
    }

    /// Inserts `keys` using `threads` threads: each of `threads − 1` helper threads fills a
    /// private shard (a zeroed filter of the same parameters) with its share of `keys` while
    /// the calling thread fills `self`; then the shards are OR-ed in (`union`). No atomics and
    /// no shared cache lines during insertion, at the cost of `threads − 1` temporary copies of
    /// the bit array. (Atomic OR on one shared array, [`Bloom::concurrent_inserter`], measured
    /// slower on two threads than one at 10⁸ keys: every `lock or` waits for its cache miss.)
    pub fn insert_parallel<K: AsRef<[u8]> + Sync>(&mut self, keys: &[K], threads: usize) {
        let threads = threads.max(1);
        if threads == 1 || keys.len() < PARALLEL_MIN_KEYS {
            for key in keys {
                self.insert(key);
            }
            return;
        }
        let share = keys.len().div_ceil(threads);
        let (mine, theirs) = keys.split_at(share.min(keys.len()));
        let (num_bits, num_hashes, strategy) = (self.num_bits, self.num_hashes, self.strategy);
        let shards: Vec<Self> = std::thread::scope(|scope| {
            let handles: Vec<_> = theirs
                .chunks(share)
                .map(|part| {
                    scope.spawn(move || {
                        // Same parameters as an existing filter, so construction cannot fail.
                        let mut shard =
                            Self::with_num_bits_and_strategy(num_bits, num_hashes, strategy)
                                .expect("parameters of an existing filter are valid");
                        for key in part {
                            shard.insert(key);
                        }
                        shard
                    })
                })
                .collect();
            for key in mine {
                self.insert(key);
            }
            handles
                .into_iter()
                // A panicking shard is a bug in this crate: re-raise it in the caller.
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        for shard in &shards {
            // Same m, k and strategy by construction: union cannot fail.
            self.union(shard)
                .expect("shards share the filter's parameters");
        }
    }

    /// Records how the caller normalized keys before inserting them, and one parameter of that
    /// scheme (both saved in the file header, opaque to this crate), so that whoever loads the
    /// file can derive queries the same way.
    pub fn set_key_scheme(&mut self, scheme: u8, param: u32) {
        self.key_scheme = scheme;
        self.key_param = param;
    }

    /// The bit array as little-endian words (for comparisons and diagnostics).
    pub fn words(&self) -> &[u64] {
        self.bits.words()
    }

    /// Writes the filter to `path` atomically (see [`crate::format`]).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        format::write_atomic(path.as_ref(), &self.header(), self.bits.bytes())
    }

    /// The complete file image [`Bloom::save`] writes (header, bit array, checksum), for
    /// callers that embed a filter in a container of their own.
    pub fn to_bytes(&self) -> Vec<u8> {
        format::image(&self.header(), self.bits.bytes())
    }

    /// Maps the filter saved at `path`, after checking its magic, version, sizes, checksum and
    /// fields; fails with [`Error::WrongLayout`] if it holds the other layout.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let (map, header) = format::map_file(path)?;
        Self::from_mapped(path, map, header)
    }

    /// A filter from a whole file image held in memory (copied), with the checks of
    /// [`Bloom::load`]. `name` only labels errors.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: &[u8]) -> Result<Self> {
        let name = name.as_ref();
        let header = format::parse(name, bytes)?;
        Self::check_layout(name, &header)?;
        let mut filter =
            Self::with_num_bits_and_strategy(header.num_bits, header.num_hashes, header.strategy)?;
        let data = &bytes[HEADER_LEN..HEADER_LEN + Header::data_len(header.num_bits) as usize];
        bytemuck::cast_slice_mut::<_, u8>(filter.bits.blocks_mut()).copy_from_slice(data);
        filter.restore_counts(&header);
        Ok(filter)
    }

    /// Wraps a validated mapping.
    fn from_mapped(path: &Path, map: memmap2::MmapMut, header: Header) -> Result<Self> {
        Self::check_layout(path, &header)?;
        let mut filter = Bloom {
            bits: Storage::Mapped {
                map,
                offset: HEADER_LEN,
                blocks: Header::data_len(header.num_bits) as usize / BLOCK_BYTES,
            },
            num_bits: header.num_bits,
            num_hashes: header.num_hashes,
            strategy: header.strategy,
            items: 0,
            expected_items: 0,
            target_fpp: None,
            key_scheme: 0,
            key_param: 0,
            layout: PhantomData,
        };
        filter.restore_counts(&header);
        Ok(filter)
    }

    fn check_layout(path: &Path, header: &Header) -> Result<()> {
        if header.layout == L::KIND {
            return Ok(());
        }
        Err(Error::WrongLayout {
            path: path.to_path_buf(),
            expected: L::KIND.name(),
            found: header.layout.name(),
        })
    }

    fn restore_counts(&mut self, header: &Header) {
        self.items = header.items;
        self.expected_items = header.expected_items;
        self.target_fpp = header.target_fpp;
        self.key_scheme = header.key_scheme;
        self.key_param = header.key_param;
    }

    fn header(&self) -> Header {
        Header {
            layout: L::KIND,
            strategy: self.strategy,
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            items: self.items,
            target_fpp: self.target_fpp,
            expected_items: self.expected_items,
            key_scheme: self.key_scheme,
            key_param: self.key_param,
        }
    }
}

impl<L: Layout> Clone for Bloom<L> {
    fn clone(&self) -> Self {
        Bloom {
            bits: Storage::Owned(self.bits.blocks().to_vec()),
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            strategy: self.strategy,
            items: self.items,
            expected_items: self.expected_items,
            target_fpp: self.target_fpp,
            key_scheme: self.key_scheme,
            key_param: self.key_param,
            layout: PhantomData,
        }
    }
}

impl<L: Layout> fmt::Debug for Bloom<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bloom")
            .field("layout", &L::KIND)
            .field("strategy", &self.strategy)
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.num_hashes)
            .field("items", &self.items)
            .field("target_fpp", &self.target_fpp)
            .finish_non_exhaustive()
    }
}

/// Inserts into a filter from several threads at once; see [`Bloom::concurrent_inserter`].
pub struct ConcurrentInserter<'a, L: Layout> {
    words: &'a [AtomicU64],
    items: &'a mut u64,
    inserted: AtomicU64,
    num_bits: u64,
    num_hashes: u32,
    strategy: HashStrategy,
    layout: PhantomData<L>,
}

impl<L: Layout> ConcurrentInserter<'_, L> {
    /// Adds `key`; callable from any number of threads.
    pub fn insert(&self, key: impl AsRef<[u8]>) {
        self.set_bits(key.as_ref());
        self.inserted.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds every key of `keys`, counting them once at the end (no shared counter per key).
    pub fn insert_all<K: AsRef<[u8]>>(&self, keys: &[K]) {
        for key in keys {
            self.set_bits(key.as_ref());
        }
        self.inserted
            .fetch_add(keys.len() as u64, Ordering::Relaxed);
    }

    fn set_bits(&self, key: &[u8]) {
        // Relaxed suffices: bits only ever go from 0 to 1, OR is commutative, and the scope that
        // joins the inserting threads (or the drop of `self`) orders their writes before any read.
        let set = |w: usize, m: u64| {
            self.words[w].fetch_or(m, Ordering::Relaxed);
        };
        match self.strategy {
            HashStrategy::Xxh3 => {
                L::for_each_bit(self.num_bits, self.num_hashes, KeyHash::of(key), set)
            }
            HashStrategy::Sha256 => {
                L::for_each_bit_sha256(self.num_bits, self.num_hashes, key, set)
            }
        }
    }
}

impl<L: Layout> Drop for ConcurrentInserter<'_, L> {
    fn drop(&mut self) {
        *self.items = self.items.saturating_add(*self.inserted.get_mut());
    }
}

/// What every filter answers, whatever its layout: the object-safe face of [`Bloom`].
///
/// Generic code (reports, the command line) uses `&dyn Filter` or [`AnyFilter`].
pub trait Filter: Send + Sync {
    /// Adds `key`.
    fn insert(&mut self, key: &[u8]);
    /// Whether `key` may be in the set.
    fn contains(&self, key: &[u8]) -> bool;
    /// Clears `out` and pushes one answer per key, using the prefetching batch path.
    fn contains_batch(&self, keys: &[&[u8]], out: &mut Vec<bool>);
    /// Inserts keys on `threads` threads.
    fn insert_parallel(&mut self, keys: &[&[u8]], threads: usize);
    /// Adds a key by its precomputed xxh3 [`KeyHash`].
    fn insert_hash(&mut self, hash: KeyHash);
    /// Queries a precomputed xxh3 [`KeyHash`].
    fn contains_hash(&self, hash: KeyHash) -> bool;
    /// Queries many precomputed hashes, appending one answer each to `out`.
    fn contains_hash_batch(&self, hashes: &[KeyHash], out: &mut Vec<bool>);

    /// m, the number of bits.
    fn num_bits(&self) -> u64;
    /// k, the number of bit positions per key.
    fn num_hashes(&self) -> u32;
    /// The bit layout.
    fn layout(&self) -> LayoutKind;
    /// The hash strategy.
    fn hash_strategy(&self) -> HashStrategy;
    /// Keys inserted so far (insert calls; duplicates count each time).
    fn items(&self) -> u64;
    /// The item count the filter was sized for, if it was sized from one.
    fn expected_items(&self) -> Option<u64>;
    /// The false-positive rate the filter was sized for, if any.
    fn target_fpp(&self) -> Option<f64>;
    /// The key normalization code recorded with [`Bloom::set_key_scheme`] (0 if none).
    fn key_scheme(&self) -> u8;
    /// A parameter of the key scheme recorded with [`Bloom::set_key_scheme`] (0 if none).
    fn key_param(&self) -> u32;
    /// Records the caller's key normalization code and its parameter (see
    /// [`Bloom::set_key_scheme`]).
    fn set_key_scheme(&mut self, scheme: u8, param: u32);
    /// Bytes of the bit array.
    fn size_in_bytes(&self) -> u64;
    /// Number of set bits.
    fn count_ones(&self) -> u64;
    /// Fraction of bits set.
    fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.num_bits() as f64
    }
    /// Distinct keys estimated from the fill (Swamidass–Baldi, [`math::estimated_items`]).
    fn estimated_items(&self) -> f64 {
        math::estimated_items(self.num_bits(), self.num_hashes(), self.count_ones())
    }
    /// False-positive rate implied by the bits as they are now.
    fn expected_fpp(&self) -> f64;
    /// False-positive rate theory predicts for `items` distinct keys at this m and k.
    fn theoretical_fpp(&self, items: f64) -> f64;
    /// Writes the filter to `path` atomically.
    fn save(&self, path: &Path) -> Result<()>;
}

impl<L: Layout> Filter for Bloom<L> {
    fn insert(&mut self, key: &[u8]) {
        Bloom::insert(self, key)
    }
    fn contains(&self, key: &[u8]) -> bool {
        Bloom::contains(self, key)
    }
    fn contains_batch(&self, keys: &[&[u8]], out: &mut Vec<bool>) {
        Bloom::contains_batch(self, keys, out)
    }
    fn insert_parallel(&mut self, keys: &[&[u8]], threads: usize) {
        Bloom::insert_parallel(self, keys, threads)
    }
    fn insert_hash(&mut self, hash: KeyHash) {
        Bloom::insert_hash(self, hash)
    }
    fn contains_hash(&self, hash: KeyHash) -> bool {
        Bloom::contains_hash(self, hash)
    }
    fn contains_hash_batch(&self, hashes: &[KeyHash], out: &mut Vec<bool>) {
        Bloom::contains_hash_batch(self, hashes, out)
    }
    fn num_bits(&self) -> u64 {
        self.num_bits
    }
    fn num_hashes(&self) -> u32 {
        self.num_hashes
    }
    fn layout(&self) -> LayoutKind {
        L::KIND
    }
    fn hash_strategy(&self) -> HashStrategy {
        self.strategy
    }
    fn items(&self) -> u64 {
        self.items
    }
    fn expected_items(&self) -> Option<u64> {
        (self.expected_items > 0).then_some(self.expected_items)
    }
    fn target_fpp(&self) -> Option<f64> {
        self.target_fpp
    }
    fn key_scheme(&self) -> u8 {
        self.key_scheme
    }
    fn key_param(&self) -> u32 {
        self.key_param
    }
    fn set_key_scheme(&mut self, scheme: u8, param: u32) {
        Bloom::set_key_scheme(self, scheme, param)
    }
    fn size_in_bytes(&self) -> u64 {
        self.bits.bytes().len() as u64
    }
    fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }
    fn expected_fpp(&self) -> f64 {
        L::current_fpp(self.bits.blocks(), self.num_bits, self.num_hashes)
    }
    fn theoretical_fpp(&self, items: f64) -> f64 {
        L::theoretical_fpp(self.num_bits, items, self.num_hashes)
    }
    fn save(&self, path: &Path) -> Result<()> {
        Bloom::save(self, path)
    }
}

/// A filter of either layout, for files whose layout is known only when they are read.
/// Dereferences to [`Filter`].
#[derive(Clone, Debug)]
pub enum AnyFilter {
    /// A [`BloomFilter`].
    Classic(BloomFilter),
    /// A [`BlockedBloomFilter`].
    Blocked(BlockedBloomFilter),
}

impl AnyFilter {
    /// A new filter of `layout` for `expected_items` keys at rate `fpp`.
    pub fn new(
        layout: LayoutKind,
        expected_items: u64,
        fpp: f64,
        strategy: HashStrategy,
    ) -> Result<Self> {
        Ok(match layout {
            LayoutKind::Classic => {
                AnyFilter::Classic(BloomFilter::with_strategy(expected_items, fpp, strategy)?)
            }
            LayoutKind::Blocked => AnyFilter::Blocked(BlockedBloomFilter::with_strategy(
                expected_items,
                fpp,
                strategy,
            )?),
        })
    }

    /// Maps and validates the filter at `path`, whichever layout it holds.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let (map, header) = format::map_file(path)?;
        Ok(match header.layout {
            LayoutKind::Classic => AnyFilter::Classic(Bloom::from_mapped(path, map, header)?),
            LayoutKind::Blocked => AnyFilter::Blocked(Bloom::from_mapped(path, map, header)?),
        })
    }

    /// Parses a whole file image held in memory (see [`Bloom::from_bytes`]).
    pub fn from_bytes(name: impl AsRef<Path>, bytes: &[u8]) -> Result<Self> {
        let name = name.as_ref();
        Ok(match format::parse(name, bytes)?.layout {
            LayoutKind::Classic => AnyFilter::Classic(Bloom::from_bytes(name, bytes)?),
            LayoutKind::Blocked => AnyFilter::Blocked(Bloom::from_bytes(name, bytes)?),
        })
    }
}

impl std::ops::Deref for AnyFilter {
    type Target = dyn Filter;

    fn deref(&self) -> &Self::Target {
        match self {
            AnyFilter::Classic(filter) => filter,
            AnyFilter::Blocked(filter) => filter,
        }
    }
}

impl std::ops::DerefMut for AnyFilter {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            AnyFilter::Classic(filter) => filter,
            AnyFilter::Blocked(filter) => filter,
        }
    }
}
