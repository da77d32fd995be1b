//! Building a filter from a key list: sizing from the list's length, key scheme recorded,
//! insertion on several threads.

use phishbloom_filter::{AnyFilter, HashStrategy, LayoutKind};

use crate::error::Result;
use crate::keys::KeyScheme;
use crate::list::KeyList;

/// How to build.
#[derive(Clone, Copy, Debug)]
pub struct BuildOptions {
    /// Target false-positive rate.
    pub fpp: f64,
    /// Bit layout.
    pub layout: LayoutKind,
    /// Hash strategy.
    pub strategy: HashStrategy,
    /// The normalization the keys went through (recorded in the file).
    pub scheme: KeyScheme,
    /// Insertion threads.
    pub threads: usize,
}

/// A filter sized for `keys.len()` keys holding all of them.
pub fn build_filter(keys: &KeyList, options: &BuildOptions) -> Result<AnyFilter> {
    let mut filter = AnyFilter::new(
        options.layout,
        keys.len() as u64,
        options.fpp,
        options.strategy,
    )?;
    filter.set_key_scheme(options.scheme.code(), 0);
    filter.insert_parallel(&keys.as_slices(), options.threads);
    Ok(filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_with_every_key_and_the_scheme_recorded() {
        let mut keys = KeyList::default();
        for i in 0..500 {
            keys.push(format!("k{i}").as_bytes());
        }
        let options = BuildOptions {
            fpp: 0.01,
            layout: LayoutKind::Classic,
            strategy: HashStrategy::Xxh3,
            scheme: KeyScheme::Exact,
            threads: 2,
        };
        let filter = build_filter(&keys, &options).unwrap();
        assert_eq!(filter.items(), 500);
        assert_eq!(filter.key_scheme(), KeyScheme::Exact.code());
        assert!(keys.iter().all(|k| filter.contains(k)));
    }
}
