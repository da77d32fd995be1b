//! [`KeyFilter`]: a Bloom filter of whole keys as a library user holds one (the Python
//! `BloomFilter`): add and ask one key at a time with no capacity rule, union, intersection and
//! subset on the bits — and, underneath, a blocklist of exact keys, so that what is saved is a
//! blocklist file `phishbloom check` answers with the same hash.

use std::path::PathBuf;

use phishbloom_filter::{Filter, HashStrategy, KeyHash, LayoutKind};

use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::kind::Kind;
use crate::structure::Layers;

use super::build::BuildOptions;
use super::model::{Blocklist, Engine};

/// A Bloom filter of whole keys (bytes compared exactly), stored as a one-layer blocklist of
/// [`KeyScheme::Exact`] keys without verification.
///
/// Unlike [`Blocklist::add`], [`KeyFilter::insert`] takes keys past the count the filter was
/// sized for (its false-positive rate then rises, as rbloom's and Guava's do): a filter in a
/// program is filled by the program, which [`KeyFilter::expected_fpp`] tells how full it is.
pub struct KeyFilter {
    list: Blocklist,
}

impl KeyFilter {
    /// An empty filter sized for `expected_items` keys at false-positive rate `fpp`, in
    /// `layout`.
    pub fn new(expected_items: u64, fpp: f64, layout: LayoutKind) -> Result<Self> {
        let kind = match layout {
            LayoutKind::Blocked => Kind::Blocked,
            LayoutKind::Classic => Kind::Classic,
            LayoutKind::Split => Kind::Split,
        };
        let options = BuildOptions {
            kind,
            fpp,
            capacity: Some(expected_items.max(1)),
            // An empty filter is sized for the keys to come: no list to compare a capacity with.
            force: true,
            name: "filter".into(),
            threads: 1,
            ..BuildOptions::default()
        };
        let list = Blocklist::from_keys(&[], KeyScheme::Exact, &options)?;
        Self::from_blocklist(list)
    }

    /// The filter a blocklist holds: a list of exact keys in one Bloom layer without
    /// verification (what [`KeyFilter::new`] makes and `build --exact` writes); any other
    /// list is [`Error::WrongScheme`], naming what it is.
    pub fn from_blocklist(list: Blocklist) -> Result<Self> {
        let problem = match (&list.engine, list.meta.scheme) {
            (Engine::Keys(layers), KeyScheme::Exact) if layers.single_bloom().is_none() => Some(
                "it is not one Bloom filter (a cuckoo, counting, compact or growing list); build \
                 it with --kind blocked, classic or split and without --grow",
            ),
            (Engine::Keys(layers), KeyScheme::Exact)
                if layers.single_bloom().map(|f| f.params().strategy)
                    != Some(HashStrategy::default()) =>
            {
                Some("it hashes keys with SHA-256; build it without --hash sha256")
            }
            (Engine::Keys(_), KeyScheme::Exact) if list.resolver.verification().is_some() => {
                Some("it stores verification fingerprints; build it without --verify")
            }
            (Engine::Keys(_), KeyScheme::Exact) => None,
            _ => Some(
                "it is not a list of whole keys compared exactly; build it with `phishbloom build \
                 --exact` (without --fold-case)",
            ),
        };
        match problem {
            None => Ok(KeyFilter { list }),
            Some(problem) => Err(Error::WrongScheme {
                path: list.origin(),
                problem: format!("not a Bloom filter of keys: {problem}"),
            }),
        }
    }

    /// The blocklist underneath, to save or describe.
    pub fn blocklist(&self) -> &Blocklist {
        &self.list
    }

    /// The one Bloom filter (checked by [`KeyFilter::from_blocklist`]).
    fn layers(&self) -> &Layers {
        match &self.list.engine {
            Engine::Keys(layers) => layers,
            // `from_blocklist` admits only `Engine::Keys`, and nothing here changes the engine.
            _ => unreachable!("a KeyFilter holds a list of keys"),
        }
    }

    /// The one Bloom filter, to change it; the file image read is stale from then on.
    fn layers_mut(&mut self) -> &mut Layers {
        self.list.directory = None;
        self.list.meta.created = 0;
        match &mut self.list.engine {
            Engine::Keys(layers) => layers,
            _ => unreachable!("a KeyFilter holds a list of keys"),
        }
    }

    /// Adds a key; `true` when the filter did not answer for it before (it is new, or the
    /// first key of a false positive), so that the count of keys added stays close to the
    /// distinct keys (RedisBloom's `BF.ADD` rule).
    pub fn insert(&mut self, key: &[u8]) -> bool {
        // Hashed once for both steps: a list of exact keys in a filter of the default strategy
        // hashes a key as `KeyHash::of` (`Layers::contains_key`).
        let hash = KeyHash::of(key);
        if self.layers().contains_hash(hash) {
            self.list.meta.exact_count = false;
            return false;
        }
        // A single unpatched Bloom layer that does not grow always takes a key.
        let inserted = self.layers_mut().insert_hash(hash);
        debug_assert!(inserted.is_ok());
        self.list.meta.entries += 1;
        true
    }

    /// Adds keys as [`KeyFilter::insert`] adds each, in order, and returns how many were new:
    /// the keys are hashed first and their blocks asked for in one prefetched batch, so that
    /// the cache misses of a filter larger than the cache overlap.
    pub fn insert_batch(&mut self, keys: &[&[u8]]) -> u64 {
        let hashes: Vec<KeyHash> = keys.iter().map(|key| KeyHash::of(key)).collect();
        let mut held = Vec::with_capacity(keys.len());
        self.layers().contains_hash_batch(&hashes, &mut held);
        let mut new = 0;
        for (&hash, held) in hashes.iter().zip(held) {
            // Asked again when the batch said no: an equal key earlier in the batch may have
            // set its bits since (the block is in cache by now).
            if held || self.layers().contains_hash(hash) {
                self.list.meta.exact_count = false;
                continue;
            }
            let inserted = self.layers_mut().insert_hash(hash);
            debug_assert!(inserted.is_ok());
            self.list.meta.entries += 1;
            new += 1;
        }
        new
    }

    /// Whether the filter may hold `key` (never `false` for a key added).
    pub fn contains(&self, key: &[u8]) -> bool {
        self.layers().contains_key(key)
    }

    /// The keys the filter was sized for.
    pub fn capacity(&self) -> u64 {
        self.layers().newest_capacity().unwrap_or(0)
    }

    /// The false-positive rate it was sized for (at its capacity).
    pub fn target_fpp(&self) -> f64 {
        self.list
            .meta
            .target_fpp
            .unwrap_or_else(|| self.bloom().theoretical_fpp(self.capacity() as f64))
    }

    /// Keys added (each counted when the filter did not yet answer for it).
    pub fn len(&self) -> u64 {
        self.list.meta.entries
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.bloom().count_ones() == 0
    }

    /// The Bloom filter.
    pub fn bloom(&self) -> &dyn Filter {
        // `from_blocklist` admits a single unpatched Bloom layer only.
        &**self
            .layers()
            .single_bloom()
            .expect("a KeyFilter holds one Bloom filter")
    }

    /// Distinct keys estimated from the bits set (Swamidass–Baldi): the count after a union or
    /// intersection, where keys in both are not known.
    pub fn estimated_len(&self) -> f64 {
        self.bloom().estimated_items()
    }

    /// The false-positive rate the bits set now imply.
    pub fn expected_fpp(&self) -> f64 {
        self.bloom().expected_fpp()
    }

    /// Bits in the filter.
    pub fn num_bits(&self) -> u64 {
        self.bloom().num_bits()
    }

    /// Hash functions (bit positions per key).
    pub fn num_hashes(&self) -> u32 {
        self.bloom().num_hashes()
    }

    /// The layout.
    pub fn layout(&self) -> LayoutKind {
        self.bloom().layout()
    }

    /// Forgets every key (the size and rate stay).
    pub fn clear(&mut self) {
        self.list.meta.entries = 0;
        self.list.meta.exact_count = true;
        self.list.meta.fingerprint = Default::default();
        let bytes = self.bloom_mut().bit_bytes_mut();
        bytes.fill(0);
    }

    fn bloom_mut(&mut self) -> &mut dyn Filter {
        &mut **self
            .layers_mut()
            .single_bloom_mut()
            .expect("a KeyFilter holds one Bloom filter")
    }

    /// Adds every key of `other` (same size, layout and hashing): what `phishbloom merge` does
    /// to two such files.
    pub fn union(&mut self, other: &KeyFilter) -> Result<()> {
        self.list.merge(&other.list)
    }

    /// Keeps the bits both filters set (same size, layout and hashing): it answers for every
    /// key added to both, and — like any AND of Bloom filters — for a few more than a filter of
    /// the common keys alone would. The count becomes the estimate from the bits.
    pub fn intersect(&mut self, other: &KeyFilter) -> Result<()> {
        self.check_same_shape(other)?;
        let theirs = other.bloom().bit_bytes();
        for (mine, theirs) in self.bloom_mut().bit_bytes_mut().iter_mut().zip(theirs) {
            *mine &= theirs;
        }
        self.list.meta.entries = self.estimated_len().round() as u64;
        self.list.meta.exact_count = false;
        Ok(())
    }

    /// Whether every bit this filter sets is set in `other` (same size, layout and hashing):
    /// true whenever every key added here was added there.
    pub fn is_subset(&self, other: &KeyFilter) -> Result<bool> {
        self.check_same_shape(other)?;
        let (mine, theirs) = (self.bloom().bit_bytes(), other.bloom().bit_bytes());
        Ok(mine.iter().zip(theirs).all(|(a, b)| a & !b == 0))
    }

    /// Refuses a filter of other parameters, naming the first that differs.
    fn check_same_shape(&self, other: &KeyFilter) -> Result<()> {
        let (mine, theirs) = (self.bloom().params(), other.bloom().params());
        let differs = |parameter: &'static str, left: String, right: String| {
            Err(Error::Incompatible {
                parameter,
                left,
                right,
            })
        };
        if mine.layout != theirs.layout {
            return differs(
                "layout",
                mine.layout.name().into(),
                theirs.layout.name().into(),
            );
        }
        if (mine.num_bits, mine.num_hashes) != (theirs.num_bits, theirs.num_hashes) {
            return differs(
                "size (bits, hashes)",
                format!("{}, {}", mine.num_bits, mine.num_hashes),
                format!("{}, {}", theirs.num_bits, theirs.num_hashes),
            );
        }
        if mine.strategy != theirs.strategy {
            return differs(
                "hash strategy",
                mine.strategy.to_string(),
                theirs.strategy.to_string(),
            );
        }
        Ok(())
    }

    /// The file image (`Blocklist::to_bytes`).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.list.to_bytes()
    }

    /// A filter from a file image, every checksum verified; `name` names it in errors.
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: &[u8]) -> Result<Self> {
        Self::from_blocklist(Blocklist::from_bytes(name.into(), bytes)?)
    }
}

impl Clone for KeyFilter {
    fn clone(&self) -> Self {
        // Through the file image: every part of a list is in it, and a copy is rare.
        let bytes = self.to_bytes();
        // The image was just written by the same code: it reads back.
        Self::from_bytes(self.list.origin(), &bytes).expect("a list reads back its own image")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_answers_for_every_key_added_and_counts_new_ones() {
        let mut filter = KeyFilter::new(1000, 0.01, LayoutKind::Blocked).unwrap();
        assert!(filter.is_empty());
        let keys: Vec<String> = (0..1000).map(|i| format!("key-{i}")).collect();
        let new = keys.iter().filter(|k| filter.insert(k.as_bytes())).count();
        assert!(new >= 990, "{new}");
        assert!(keys.iter().all(|k| filter.contains(k.as_bytes())));
        assert!(!filter.insert(b"key-1"));
        assert_eq!(filter.len(), new as u64);
        // Past the size it was made for, it still takes keys.
        for i in 0..2000 {
            filter.insert(format!("more-{i}").as_bytes());
        }
        assert!(filter.contains(b"more-1999"));
        filter.clear();
        assert!(filter.is_empty() && !filter.contains(b"key-1"));
        assert_eq!(filter.len(), 0);
    }

    #[test]
    fn a_batch_adds_and_counts_as_one_key_at_a_time() {
        let keys: Vec<String> = (0..3000).map(|i| format!("k{}", i % 2000)).collect();
        let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let mut one = KeyFilter::new(2000, 0.01, LayoutKind::Blocked).unwrap();
        let mut batched = KeyFilter::new(2000, 0.01, LayoutKind::Blocked).unwrap();
        let added = keys.iter().filter(|k| one.insert(k)).count() as u64;
        let new: u64 = keys.chunks(256).map(|c| batched.insert_batch(c)).sum();
        assert_eq!((new, batched.len()), (added, one.len()));
        assert_eq!(one.bloom().bit_bytes(), batched.bloom().bit_bytes());
    }

    #[test]
    fn union_intersection_and_subset_follow_the_keys() {
        let mut a = KeyFilter::new(1000, 0.01, LayoutKind::Classic).unwrap();
        let mut b = KeyFilter::new(1000, 0.01, LayoutKind::Classic).unwrap();
        for i in 0..300 {
            a.insert(format!("a{i}").as_bytes());
            b.insert(format!("b{i}").as_bytes());
        }
        a.insert(b"both");
        b.insert(b"both");
        assert!(!a.is_subset(&b).unwrap());
        let mut union = a.clone();
        union.union(&b).unwrap();
        assert!(a.is_subset(&union).unwrap() && b.is_subset(&union).unwrap());
        assert!(union.contains(b"a7") && union.contains(b"b7"));
        let mut common = a.clone();
        common.intersect(&b).unwrap();
        assert!(common.contains(b"both"));
        assert!(common.is_subset(&a).unwrap() && common.is_subset(&b).unwrap());
        let other = KeyFilter::new(10, 0.01, LayoutKind::Classic).unwrap();
        assert!(matches!(
            a.intersect(&other),
            Err(Error::Incompatible { .. })
        ));
    }

    #[test]
    fn a_filter_reads_back_from_its_image_and_refuses_other_lists() {
        let mut filter = KeyFilter::new(100, 0.001, LayoutKind::Split).unwrap();
        filter.insert(b"token");
        let copy = KeyFilter::from_bytes("copy", &filter.to_bytes()).unwrap();
        assert!(copy.contains(b"token") && copy.len() == 1);
        assert_eq!(copy.layout(), LayoutKind::Split);
        let options = BuildOptions {
            verify: true,
            ..BuildOptions::default()
        };
        let verified = Blocklist::from_keys(&[], KeyScheme::Exact, &options).unwrap();
        let refused = KeyFilter::from_blocklist(verified).err().unwrap();
        assert!(
            refused.to_string().contains("without --verify"),
            "{refused}"
        );
    }
}
