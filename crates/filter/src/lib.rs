//! Bloom filters for phishbloom: exact sizing, a cache-line blocked layout, and a versioned,
//! checksummed file format that is used in place from a memory map.
//!
//! # Types
//! - [`BloomFilter`] — the textbook filter of seeds 000/001/004: m bits, k positions anywhere.
//! - [`BlockedBloomFilter`] — all k positions of a key in one 512-bit block (one cache line), as
//!   RocksDB's FastLocalBloom; sized from the blocked-filter formula so its true rate meets `p`.
//! - [`Bloom`] — the generic type behind both; [`Filter`] — the object-safe trait they share;
//!   [`AnyFilter`] — either, for a file whose layout is read from its header.
//! - [`KeyHash`] and [`HashStrategy`] — one xxh3-128 per key with enhanced double hashing, or
//!   seed 000's SHA-256 per index.
//! - [`ConcurrentInserter`] — inserts from several threads at once with atomic OR.
//! - [`math`] — every sizing formula as a small documented function; [`format`] — the file layout.
//! - [`Error`] — everything that can fail, with messages that say how to fix it.
//!
//! # Example
//! ```
//! use phishbloom_filter::{BlockedBloomFilter, BloomFilter, Filter};
//!
//! # fn main() -> Result<(), phishbloom_filter::Error> {
//! // Seed 000: the 10,327 phishing URLs of dataset.csv at 1 %.
//! let mut filter = BloomFilter::new(10_327, 0.01)?;
//! assert_eq!((filter.num_bits(), filter.num_hashes()), (98_985, 7));
//! filter.insert("metamascks.com");
//! assert!(filter.contains("metamascks.com")); // never a false negative
//!
//! // The cache-line layout, saved and mapped back.
//! let mut blocked = BlockedBloomFilter::new(10_327, 0.01)?;
//! blocked.insert(b"sig2fa.wixsite.com/sig2faverify");
//! let path = std::env::temp_dir().join(format!("doc-example-{}.bloom", std::process::id()));
//! blocked.save(&path)?;
//! let loaded = BlockedBloomFilter::load(&path)?;
//! assert!(loaded.contains(b"sig2fa.wixsite.com/sig2faverify"));
//! # std::fs::remove_file(&path).ok();
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

#[cfg(target_endian = "big")]
compile_error!(
    "phishbloom-filter maps little-endian filter files in place and supports little-endian targets only"
);

mod bits;
mod error;
mod filter;
pub mod format;
mod hash;
mod layout;
pub mod math;

pub use bits::Block;
pub use error::{Error, Result};
pub use filter::{AnyFilter, BlockedBloomFilter, Bloom, BloomFilter, ConcurrentInserter, Filter};
pub use hash::{double_hashing, fast_range, HashStrategy, KeyHash};
pub use layout::{Blocked, Classic, Layout, LayoutKind};
