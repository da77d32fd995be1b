//! Bloom filters and their relatives for phishbloom: exact sizing, a cache-line blocked layout,
//! a split-block layout, hashing, and the parallel prefix filters of CaBF. Pure data structures:
//! no file I/O (the blocklist crate stores filters in its file format).
//!
//! # Modules and types
//! - [`BloomFilter`] — the textbook filter of seeds 000/001/004: m bits, k positions anywhere.
//! - [`BlockedBloomFilter`] — all k positions of a key in one 512-bit block (one cache line), as
//!   RocksDB's FastLocalBloom; sized from the blocked-filter formula so its true rate meets `p`.
//! - [`SplitBlockBloomFilter`] — one bit in each 32-bit word of a 256-bit block from one
//!   64-bit hash (Parquet's split-block filter): k = 8, a branch-free query, xxh3-64 per key.
//! - [`Bloom`] — the generic type behind them; [`Filter`] — the object-safe trait they share;
//!   [`AnyFilter`] — any of them, for a filter whose layout is known only at run time;
//!   [`BloomParams`] — everything but the bits, to rebuild a filter from storage.
//! - [`KeyHash`] and [`HashStrategy`] — one xxh3-128 per key with enhanced double hashing, or
//!   seed 000's SHA-256 per index.
//! - [`cuckoo`] — the cuckoo filter (deletes; never evicts a resident fingerprint);
//!   [`counting`] — the 4-bit counting Bloom filter (deletes; saturated counters stay).
//! - [`prefix`] — sorted fingerprint prefixes (a Golomb-coded set when stored), and
//!   [`golomb`] — the Golomb–Rice coder behind it and behind delta files.
//! - [`prefix_map`] — Elias–Fano coded prefixes with a small value each: the compact list kind.
//! - [`near`] — Manku's permuted tables: 64-bit fingerprints within a Hamming distance.
//! - [`postings`] — posting tables: the document numbers filed under 64-bit keys, in five
//!   bytes a key (near-duplicate sketches).
//! - [`ribbon`] — a static ribbon filter: the smaller coding of a compact delta's additions.
//! - [`cabf`] — BBF−/BBF+ and CaBF−/CaBF longest-prefix structures over component sequences.
//! - [`math`] — every sizing formula as a small documented function.
//! - [`rng`] — the one seeded generator (SplitMix64) of experiments and tests.
//! - [`Error`] — everything that can fail, with messages that say how to fix it.
//!
//! # Example
//! ```
//! use phishbloom_filter::{AnyFilter, BlockedBloomFilter, BloomFilter, Filter};
//!
//! # fn main() -> Result<(), phishbloom_filter::Error> {
//! // Seed 000: the 10,327 phishing URLs of dataset.csv at 1 %.
//! let mut filter = BloomFilter::new(10_327, 0.01)?;
//! assert_eq!((filter.num_bits(), filter.num_hashes()), (98_985, 7));
//! filter.insert("metamascks.com");
//! assert!(filter.contains("metamascks.com")); // never a false negative
//!
//! // The cache-line layout, stored as parameters and bits and rebuilt from them.
//! let mut blocked = BlockedBloomFilter::new(10_327, 0.01)?;
//! blocked.insert(b"sig2fa.wixsite.com/sig2faverify");
//! let mut copy = AnyFilter::from_params(&blocked.params())?;
//! copy.bit_bytes_mut().copy_from_slice(blocked.bit_bytes());
//! assert!(copy.contains(b"sig2fa.wixsite.com/sig2faverify"));
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

#[cfg(target_endian = "big")]
compile_error!(
    "phishbloom-filter stores its bits as little-endian words and supports little-endian targets only"
);

mod bits;
pub mod cabf;
pub mod counting;
pub mod cuckoo;
mod error;
mod filter;
pub mod golomb;
mod hash;
mod layout;
pub mod math;
pub mod near;
pub mod postings;
pub mod prefix;
pub mod prefix_map;
pub mod ribbon;
pub mod rng;

pub use bits::{prefetch, Block};
pub use error::{Error, Result};
pub use filter::{
    data_len, AnyFilter, BlockedBloomFilter, Bloom, BloomFilter, BloomParams, ConcurrentInserter,
    Filter, SplitBlockBloomFilter, PARALLEL_MIN_KEYS,
};
pub use hash::{double_hashing, fast_range, HashStrategy, KeyHash};
pub use layout::{Blocked, Classic, Layout, LayoutKind, Split, SPLIT_SALTS};
