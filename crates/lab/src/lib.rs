//! phishbloom's laboratory: the experiments that show, with measurements, that a filter keeps
//! its promise. Each returns typed results; `phishbloom-report` renders them.
//!
//! # Modules
//! - [`eval`] — seeds 000/001's experiment on `dataset.csv`, with whole keys and with URL
//!   semantics.
//! - [`cabf_experiment`] — seed 003's comparison of BBF−, BBF+, CaBF− and CaBF on UT1.
//! - [`measure`] — every measurement of the report, one module per section, with the sizes of
//!   full and `--quick` runs.
//! - [`keys`] — synthetic key families and the parallel loops that insert and query them.
//! - [`stats`] — Wilson intervals and a measured-rate record.
//! - [`theory`] — the formulas beside the measurements that the filter crate does not provide.
//! - [`random_url`] — seed 000's random test URLs.
//!
//! # Example
//! ```
//! use phishbloom_filter::rng::SplitMix64;
//! use phishbloom_filter::{BloomFilter, Filter};
//! use phishbloom_lab::keys::{count_listed, insert_range, MEMBERS, NON_MEMBERS};
//! use phishbloom_lab::{random_url, stats::Measurement};
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
mod error;
pub mod eval;
pub mod keys;
pub mod measure;
pub mod stats;
pub mod theory;

pub use error::{Error, Result};

use phishbloom_filter::rng::SplitMix64;

/// Seed 000's test URL: `http://` + 10 random lowercase letters + `.com`.
pub fn random_url(rng: &mut SplitMix64) -> String {
    let mut url = String::with_capacity(21);
    url.push_str("http://");
    for _ in 0..10 {
        url.push(char::from(b'a' + rng.below(26) as u8));
    }
    url.push_str(".com");
    url
}

/// Serializes a value through its `Display` form (for types of other crates, such as
/// `LayoutKind`, that do not implement `serde::Serialize`).
fn serialize_display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_urls_have_seed_000s_shape_and_repeat_per_seed() {
        let mut a = SplitMix64::new(7);
        let url = random_url(&mut a);
        assert_eq!(url.len(), 21);
        assert!(url.starts_with("http://") && url.ends_with(".com"));
        assert!(url[7..17].bytes().all(|b| b.is_ascii_lowercase()));
        assert_eq!(random_url(&mut SplitMix64::new(7)), url);
        assert_ne!(random_url(&mut a), url);
    }
}
