//! phishbloom's laboratory: the experiments that show, with measurements, that a filter keeps
//! its promise. Each returns typed results; `phishbloom-report` renders them.
//!
//! # Modules
//! - [`cabf_experiment`] — seed 003's comparison of BBF−, BBF+, CaBF− and CaBF on UT1.
//! - [`corpus`] — real prose for the near-duplicate measurements (Debian's `debian-handbook`).
//! - [`measure`] — every measurement of the report, one module per section, with the sizes of
//!   full and `--quick` runs.
//! - [`keys`] — synthetic key families and the parallel loops that insert and query them.
//! - [`stats`] — Wilson intervals and a measured-rate record (from
//!   [`phishbloom_blocklist::eval`], whose dataset experiment the report also runs), medians.
//! - [`theory`] — the formulas beside the measurements that the filter crate does not provide.
//!
//! # Example
//! ```
//! use phishbloom_filter::rng::SplitMix64;
//! use phishbloom_filter::{BloomFilter, Filter};
//! use phishbloom_lab::keys::{count_listed, insert_range, MEMBERS, NON_MEMBERS};
//! use phishbloom_blocklist::eval::random_url;
//! use phishbloom_lab::stats::Measurement;
//!
//! let mut rng = SplitMix64::new(2026);
//! let url = random_url(&mut rng);
//! assert!(url.starts_with("http://") && url.ends_with(".com"));
//!
//! // 10,000 members at 10 bits per key and k = 7, queried with 100,000 non-members.
//! let mut filter = BloomFilter::with_num_bits(100_000, 7)?;
//! insert_range(&mut filter, MEMBERS, 0..10_000, 2);
//! let hits = count_listed(&filter, NON_MEMBERS, 0..100_000, 2);
//! let measured = Measurement::new(hits, 100_000, filter.theoretical_fpp(10_000.0));
//! assert!(measured.rate < 0.02);
//! # Ok::<(), phishbloom_filter::Error>(())
//! ```

#![warn(missing_docs)]

pub mod cabf_experiment;
pub mod corpus;
mod error;
pub mod keys;
pub mod measure;
pub mod stats;
pub mod theory;

pub use error::{Error, Result};

/// Serializes a value through its `Display` form (for types of other crates, such as
/// `LayoutKind`, that do not implement `serde::Serialize`).
fn serialize_display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
