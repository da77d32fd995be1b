//! The Bloom filter type, generic over its bit layout, and the object-safe [`Filter`] trait.
//!
//! [`Bloom<L>`] holds everything the layouts share — construction, insertion (single,
//! batched, concurrent), queries, union, statistics, save and load; the [`Layout`] parameter
//! decides where a key's bits go. [`BloomFilter`], [`BlockedBloomFilter`] and
//! [`SplitBlockBloomFilter`] name the three instances; [`AnyFilter`] holds any of them, for a
//! file whose layout is known only at run time.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bits::{Storage, BLOCK_BYTES};
use crate::error::{Error, Result};
use crate::hash::{HashStrategy, KeyHash};
use crate::layout::{Blocked, Classic, Layout, LayoutKind, Split};
use crate::math;

/// A Bloom filter with bit layout `L`. Use the aliases [`BloomFilter`], [`BlockedBloomFilter`]
/// and [`SplitBlockBloomFilter`].
pub struct Bloom<L: Layout> {
    bits: Storage,
    num_bits: u64,
    num_hashes: u32,
    strategy: HashStrategy,
    items: u64,
    expected_items: u64,
    target_fpp: Option<f64>,
    layout: PhantomData<L>,
}

/// Everything that describes a filter but its bits: what a file stores beside the bit array
/// to rebuild it with [`AnyFilter::from_params`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomParams {
    /// Bit layout.
    pub layout: LayoutKind,
    /// Hash strategy.
    pub strategy: HashStrategy,
    /// m, the number of bits (a multiple of 512 for the blocked and split layouts).
    pub num_bits: u64,
    /// k, the bit positions per key.
    pub num_hashes: u32,
    /// Keys inserted (insert calls, duplicates included).
    pub items: u64,
    /// The item count the filter was sized for (0 when built from explicit m and k).
    pub expected_items: u64,
    /// The false-positive rate the filter was sized for, if it was sized from one.
    pub target_fpp: Option<f64>,
}

impl BloomParams {
    /// Bytes of the bit array for these parameters: whole 64-byte blocks.
    pub fn data_len(&self) -> u64 {
        data_len(self.num_bits)
    }
}

/// Bytes of the bit array of an `num_bits`-bit filter: whole 64-byte blocks.
pub fn data_len(num_bits: u64) -> u64 {
    num_bits.div_ceil(math::BLOCK_BITS) * BLOCK_BYTES as u64
}

/// The textbook Bloom filter: m bits, k positions per key anywhere in the array.
pub type BloomFilter = Bloom<Classic>;

/// The cache-line Bloom filter: all k bits of a key in one 512-bit block, one cache miss per
/// query; sized so that its true rate (which is higher than a classic filter's at equal m) still
/// meets the target.
pub type BlockedBloomFilter = Bloom<Blocked>;

/// The split-block Bloom filter (Parquet's SBBF): one bit in each of the eight 32-bit words of a
/// 256-bit block, from one 64-bit hash (xxh3-64 of the key); k is always 8. Sized from its own
/// formula ([`math::split_size`]); about 10.5 bits per key at 1 %, against the blocked layout's
/// ~9.9, for a shorter, branch-free query. See [`Split`].
pub type SplitBlockBloomFilter = Bloom<Split>;

/// Hashes prefetched per chunk ahead of probing in [`Bloom::contains_hash_batch`], and keys
/// hashed per chunk before probing by [`Bloom::contains_batch`] on a filter that is not
/// prefetched. Sixteen misses in flight cover a DRAM latency of ~100 ns at a few ns of hashing
/// per key, and sixteen 16-byte hashes stay in registers and L1.
const BATCH: usize = 16;

/// Chunks of [`BATCH`] hashes prefetched ahead of the chunk being probed by
/// [`Bloom::contains_hash_batch`]: probing a chunk of non-members (most stop at their first
/// missing bit) takes less than one DRAM latency, so the lines are requested two chunks early.
const PREFETCH_AHEAD: usize = 2;

/// Keys between hashing a key (and requesting its cache line) and probing it in
/// [`Bloom::contains_batch`]. At ~12 ns of xxh3 per URL-sized key, sixteen keys give a line
/// ~200 ns to arrive, more than a DRAM miss with its page walk; the ring of hashes stays in L1.
const LOOKAHEAD: usize = 16;

/// Filters smaller than this (1 MiB, half this machine's per-core L2) are probed without
/// prefetching: their lines are likely cached already (measured: batched queries were up to 1.6×
/// slower than single ones on a 12 KiB filter with prefetching).
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// Below this many keys, [`Bloom::insert_parallel`] stays on the calling thread: threads cost
/// more than they save.
pub const PARALLEL_MIN_KEYS: usize = 1 << 16;

impl<L: Layout> Bloom<L> {
    /// A filter for `expected_items` keys at false-positive rate `fpp`, hashing with xxh3.
    ///
    /// Classic: `m = ceil(−n·ln p / (ln 2)²)`, `k = max(1, round((m/n)·ln 2))`. Blocked: the
    /// smallest whole number of blocks whose true rate is ≤ p, with the best k for that size
    /// (see [`math::blocked_size`]). Split: the smallest whole number of 512-bit lines whose
    /// rate is ≤ p, k = 8 ([`math::split_size`]).
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

    /// A filter of explicit size: `num_bits` bits (rounded up to whole 512-bit lines for the
    /// blocked and split layouts) and `num_hashes` positions per key (8 for the split layout),
    /// hashing with xxh3.
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
        L::check_params(num_hashes, strategy)?;
        let num_bits = L::round_num_bits(num_bits);
        math::validate_num_bits(num_bits)?;
        let blocks = data_len(num_bits) as usize / BLOCK_BYTES;
        Ok(Bloom {
            bits: Storage::zeroed(blocks)?,
            num_bits,
            num_hashes,
            strategy,
            items: 0,
            expected_items: 0,
            target_fpp: None,
            layout: PhantomData,
        })
    }

    /// Adds `key`. With the xxh3 strategy this is `insert_hash` of the layout's key hash:
    /// [`KeyHash::of`] (xxh3-128), or xxh3-64 for the split layout (see [`Split`]).
    #[inline]
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        match self.strategy {
            HashStrategy::Xxh3 => self.insert_hash(L::key_hash(key)),
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
            HashStrategy::Xxh3 => self.contains_hash(L::key_hash(key)),
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
    /// Software-pipelined over keys: each key is hashed and its cache line requested
    /// `LOOKAHEAD` keys before it is probed, so a filter larger than the cache has that many
    /// misses in flight while the keys between are hashed, instead of waiting on each.
    pub fn contains_batch<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut Vec<bool>) {
        out.clear();
        if self.strategy == HashStrategy::Sha256 {
            out.extend(keys.iter().map(|key| self.contains(key)));
            return;
        }
        let blocks = self.bits.blocks();
        let (num_bits, num_hashes) = (self.num_bits, self.num_hashes);
        let probe = |hash: KeyHash| L::contains_hash(blocks, num_bits, num_hashes, hash);
        if blocks.len() * BLOCK_BYTES < PREFETCH_MIN_BYTES {
            // A cached filter: no prefetch, but a chunk's keys are still hashed in one tight
            // loop before they are probed (measured: one loop doing both was ~2× slower on
            // 21-byte keys and a 14 KB filter).
            let mut hashes = [KeyHash { h1: 0, h2: 0 }; BATCH];
            for chunk in keys.chunks(BATCH) {
                for (slot, key) in hashes.iter_mut().zip(chunk) {
                    *slot = L::key_hash(key.as_ref());
                }
                out.extend(hashes[..chunk.len()].iter().map(|&hash| probe(hash)));
            }
            return;
        }
        let hash_and_prefetch = |key: &K| {
            let hash = L::key_hash(key.as_ref());
            L::prefetch(blocks, num_bits, hash);
            hash
        };
        // Answers are written in place (no capacity check per answer, as `push` has).
        out.resize(keys.len(), false);
        // `ring[i % LOOKAHEAD]` holds key i's hash from its hashing until its probe.
        let mut ring = [KeyHash { h1: 0, h2: 0 }; LOOKAHEAD];
        let (lead, rest) = keys.split_at(keys.len().min(LOOKAHEAD));
        for (slot, key) in ring.iter_mut().zip(lead) {
            *slot = hash_and_prefetch(key);
        }
        // Steady state: probe key i, hash key i + LOOKAHEAD into the slot it frees.
        let (steady, tail) = out.split_at_mut(rest.len());
        for (i, (answer, key)) in steady.iter_mut().zip(rest).enumerate() {
            let slot = &mut ring[i % LOOKAHEAD];
            let ahead = hash_and_prefetch(key);
            *answer = probe(*slot);
            *slot = ahead;
        }
        // The last keys (at most LOOKAHEAD), already hashed.
        for (i, answer) in (rest.len()..).zip(tail) {
            *answer = probe(ring[i % LOOKAHEAD]);
        }
    }

    /// [`Bloom::contains_batch`] for precomputed hashes: pushes one answer per hash onto `out`
    /// (which is not cleared, so callers can accumulate).
    ///
    /// Software-pipelined: the cache lines of the chunk two chunks ahead are
    /// requested before this chunk is probed, so each miss has two chunks of probing to arrive
    /// in (a long batch, such as a text's n-grams, keeps 32–48 misses in flight instead of
    /// waiting on each chunk's first).
    pub fn contains_hash_batch(&self, hashes: &[KeyHash], out: &mut Vec<bool>) {
        out.reserve(hashes.len());
        let blocks = self.bits.blocks();
        if blocks.len() * BLOCK_BYTES < PREFETCH_MIN_BYTES {
            out.extend(
                hashes
                    .iter()
                    .map(|&hash| L::contains_hash(blocks, self.num_bits, self.num_hashes, hash)),
            );
            return;
        }
        let prefetch = |chunk: &[KeyHash]| {
            for &hash in chunk {
                L::prefetch(blocks, self.num_bits, hash);
            }
        };
        // Chunk i is probed while chunk i + PREFETCH_AHEAD is fetched (no list of the chunks is
        // built: this runs once per checked URL).
        for chunk in hashes.chunks(BATCH).take(PREFETCH_AHEAD) {
            prefetch(chunk);
        }
        for (chunk, ahead) in hashes.chunks(BATCH).zip(
            hashes
                .chunks(BATCH)
                .skip(PREFETCH_AHEAD)
                .map(Some)
                .chain(std::iter::repeat(None)),
        ) {
            if let Some(ahead) = ahead {
                prefetch(ahead);
            }
            out.extend(
                chunk
                    .iter()
                    .map(|&hash| L::contains_hash(blocks, self.num_bits, self.num_hashes, hash)),
            );
        }
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

    /// Inserts `keys` using `threads` threads (see [`Bloom::insert_sharded`]); fewer than
    /// [`PARALLEL_MIN_KEYS`] keys are inserted on the calling thread.
    pub fn insert_parallel<K: AsRef<[u8]> + Sync>(&mut self, keys: &[K], threads: usize) {
        let threads = threads.max(1);
        if threads == 1 || keys.len() < PARALLEL_MIN_KEYS {
            for key in keys {
                self.insert(key);
            }
            return;
        }
        let share = keys.len().div_ceil(threads);
        self.insert_sharded(threads, |shard, filter| {
            let start = (shard * share).min(keys.len());
            for key in &keys[start..(start + share).min(keys.len())] {
                filter.insert(key);
            }
        });
    }

    /// The one parallel inserter: `fill(i, shard)` inserts share `i` of `0..threads` into
    /// `shard`. Share 0 goes straight into `self` on the calling thread; each other share fills
    /// a private zeroed filter of the same parameters on its own thread, and those are OR-ed in
    /// (`union`) at the end. No atomics and no shared cache lines during insertion, at the cost
    /// of `threads − 1` temporary copies of the bit array. (Atomic OR on one shared array,
    /// [`Bloom::concurrent_inserter`], measured slower on two threads than one at 10⁸ keys:
    /// every `lock or` waits for its cache miss.) Callers that generate keys (instead of holding
    /// them) never need them all in memory at once.
    pub fn insert_sharded(&mut self, threads: usize, fill: impl Fn(usize, &mut Self) + Sync) {
        let threads = threads.max(1);
        let (num_bits, num_hashes, strategy) = (self.num_bits, self.num_hashes, self.strategy);
        let fill = &fill;
        let shards: Vec<Self> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads)
                .map(|share| {
                    scope.spawn(move || {
                        // Same parameters as an existing filter, so construction cannot fail.
                        let mut shard =
                            Self::with_num_bits_and_strategy(num_bits, num_hashes, strategy)
                                .expect("parameters of an existing filter are valid");
                        fill(share, &mut shard);
                        shard
                    })
                })
                .collect();
            fill(0, self);
            handles
                .into_iter()
                // A panicking shard is a bug in the caller's `fill`: re-raise it here.
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

    /// The bit array as little-endian words (for comparisons and diagnostics).
    pub fn words(&self) -> &[u64] {
        self.bits.words()
    }

    /// The bit array in file order (little-endian words, whole 64-byte blocks).
    pub fn bit_bytes(&self) -> &[u8] {
        self.bits.bytes()
    }

    /// The bit array, writable: a reader fills a filter made by [`AnyFilter::from_params`]
    /// straight from a file, without an intermediate copy.
    pub fn bit_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self.bits.blocks_mut())
    }

    /// The filter's parameters.
    pub fn params(&self) -> BloomParams {
        BloomParams {
            layout: L::KIND,
            strategy: self.strategy,
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            items: self.items,
            expected_items: self.expected_items,
            target_fpp: self.target_fpp,
        }
    }

    /// An all-zero filter with `params` (its layout must be `L`'s; [`AnyFilter::from_params`]
    /// dispatches). Fails if m or k is out of range, or m is not whole 512-bit lines for the
    /// blocked and split layouts, so that the bit array has exactly [`BloomParams::data_len`]
    /// bytes.
    fn from_params(params: &BloomParams) -> Result<Self> {
        if L::round_num_bits(params.num_bits) != params.num_bits {
            return Err(Error::invalid(
                "num_bits",
                params.num_bits,
                format!("a {} filter holds whole 512-bit lines", L::KIND),
            ));
        }
        if let Some(fpp) = params.target_fpp {
            math::validate_fpp(fpp)?;
        }
        let mut filter =
            Self::with_num_bits_and_strategy(params.num_bits, params.num_hashes, params.strategy)?;
        filter.items = params.items;
        filter.expected_items = params.expected_items;
        filter.target_fpp = params.target_fpp;
        Ok(filter)
    }
}

impl Bloom<Split> {
    /// Adds a 64-bit hash (the split layout's own hash: [`Bloom::insert`] passes xxh3-64 of the
    /// key, [`Bloom::insert_hash`] a [`KeyHash`]'s `h1`).
    #[inline]
    pub fn insert_hash64(&mut self, hash: u64) {
        self.insert_hash(KeyHash { h1: hash, h2: 0 });
    }

    /// Whether a 64-bit hash may have been inserted (see [`Bloom::insert_hash64`]).
    #[inline]
    pub fn contains_hash64(&self, hash: u64) -> bool {
        self.contains_hash(KeyHash { h1: hash, h2: 0 })
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
                L::for_each_bit(self.num_bits, self.num_hashes, L::key_hash(key), set)
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
/// Generic code (reports, the command line) uses `&dyn Filter` or [`AnyFilter`]. The key-taking
/// methods (`insert`, `contains`, `contains_batch`, `insert_parallel`) and the hash-taking ones
/// (`insert_hash`, `contains_hash`, `contains_hash_batch`) agree for the classic and blocked
/// layouts (`insert(key)` is `insert_hash(KeyHash::of(key))`) but not for the split layout,
/// whose key hash is xxh3-64 (see [`Split`]): fill and query a filter through one of the two.
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
    /// Everything but the bits (see [`BloomParams`]).
    fn params(&self) -> BloomParams;
    /// The bit array in file order.
    fn bit_bytes(&self) -> &[u8];
    /// The bit array, writable (for readers filling a filter from a file).
    fn bit_bytes_mut(&mut self) -> &mut [u8];
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
    fn params(&self) -> BloomParams {
        Bloom::params(self)
    }
    fn bit_bytes(&self) -> &[u8] {
        Bloom::bit_bytes(self)
    }
    fn bit_bytes_mut(&mut self) -> &mut [u8] {
        Bloom::bit_bytes_mut(self)
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
}

/// A filter of any layout, for files whose layout is known only when they are read.
/// Dereferences to [`Filter`].
#[derive(Clone, Debug)]
pub enum AnyFilter {
    /// A [`BloomFilter`].
    Classic(BloomFilter),
    /// A [`BlockedBloomFilter`].
    Blocked(BlockedBloomFilter),
    /// A [`SplitBlockBloomFilter`].
    Split(SplitBlockBloomFilter),
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
            LayoutKind::Split => AnyFilter::Split(SplitBlockBloomFilter::with_strategy(
                expected_items,
                fpp,
                strategy,
            )?),
        })
    }

    /// An all-zero filter of the layout and size `params` describe, with its counts, to be
    /// filled through [`Filter::bit_bytes_mut`] (how a file reader rebuilds a saved filter).
    pub fn from_params(params: &BloomParams) -> Result<Self> {
        Ok(match params.layout {
            LayoutKind::Classic => AnyFilter::Classic(Bloom::from_params(params)?),
            LayoutKind::Blocked => AnyFilter::Blocked(Bloom::from_params(params)?),
            LayoutKind::Split => AnyFilter::Split(Bloom::from_params(params)?),
        })
    }
}

impl std::ops::Deref for AnyFilter {
    type Target = dyn Filter;

    fn deref(&self) -> &Self::Target {
        match self {
            AnyFilter::Classic(filter) => filter,
            AnyFilter::Blocked(filter) => filter,
            AnyFilter::Split(filter) => filter,
        }
    }
}

impl std::ops::DerefMut for AnyFilter {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            AnyFilter::Classic(filter) => filter,
            AnyFilter::Blocked(filter) => filter,
            AnyFilter::Split(filter) => filter,
        }
    }
}
