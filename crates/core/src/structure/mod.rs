//! What holds a list's keys: one structure of the list's kind — a Bloom filter (blocked or
//! classic), a cuckoo filter or a counting Bloom filter — or, for a list that grows (`--grow`),
//! a stack of them in RedisBloom's scalable scheme: when the newest layer is full, a new one with
//! twice the capacity and half the rate is added, so the rates sum to at most the target
//! (`p·(1 − r)·Σ rⁱ = p` with tightening r = 1/2; Almeida, Baquero, Preguiça & Hutchison,
//! "Scalable Bloom Filters", 2007).
//!
//! Removing a key (cuckoo and counting kinds only) takes it from the one layer that holds it. A
//! key that two layers answer for (its own, and another by a false positive) is ambiguous:
//! removing it from the wrong one would take another key's fingerprint, so it is refused.
//!
//! Bloom layers hash a key's 128-bit [`KeyHash`]; cuckoo and counting layers hash its 64-bit
//! entry fingerprint ([`fingerprint`]), the value a verification section and a delta hold, so
//! that a delta or a merge can insert and remove entries whose keys it never sees. A Bloom list
//! cannot insert from a fingerprint: the additions a delta brings it go to *patches*, prefix
//! sets of the fingerprints ([`PrefixSet`]), probed beside the layers.

use phishbloom_filter::counting::CountingParams;
use phishbloom_filter::cuckoo::{CuckooParams, Full};
use phishbloom_filter::prefix::PrefixSet;
use phishbloom_filter::ribbon::RibbonFilter;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash, LayoutKind};

use crate::error::{Error, Result};
use crate::keys::fingerprint;
use crate::kind::Kind;

mod combine;
mod describe;
mod layer;

pub use describe::LayerInfo;
pub use layer::Layer;

/// The hash a cuckoo or counting layer uses for an entry fingerprint `v`: `v` itself and a
/// SplitMix64 mix of it (two independent-looking halves, as the layers' hashing expects).
#[inline]
pub fn fingerprint_hash(v: u64) -> KeyHash {
    KeyHash {
        h1: v,
        h2: SplitMix64::new(v).next_u64(),
    }
}

/// Capacity factor from one layer to the next (RedisBloom's default expansion).
pub const EXPANSION: u64 = 2;

/// Rate factor from one layer to the next (the tightening ratio r).
pub const TIGHTENING: f64 = 0.5;

/// Cuckoo builds retry at a lower load, this many times, before reporting the list full.
const CUCKOO_RETRIES: u32 = 6;

/// The layers of a list, whether it grows, and its patches.
#[derive(Clone, Debug)]
pub struct Layers {
    kind: Kind,
    layers: Vec<Layer>,
    grows: bool,
    /// Prefix sets of fingerprints added by deltas to a Bloom list, by ascending prefix bits.
    patches: Vec<PrefixSet>,
    /// Static filters (ribbon) of fingerprints added by compact deltas, one per delta, oldest
    /// first.
    static_patches: Vec<RibbonFilter>,
}

impl Layers {
    /// The one layer of a compact list: its table.
    pub fn compact(table: std::sync::Arc<crate::resolve::CompactTable>) -> Self {
        Layers::from_parts(
            Kind::Compact,
            vec![Layer::Compact(table)],
            false,
            Vec::new(),
            Vec::new(),
        )
    }
}

impl Layers {
    /// One empty layer of `kind` for `capacity` keys at per-probe rate `fpp` — for a list that
    /// grows, at `fpp·(1 − r)`, leaving the rest of the budget to the layers it may add.
    pub fn new(
        kind: Kind,
        capacity: u64,
        fpp: f64,
        strategy: HashStrategy,
        grows: bool,
    ) -> Result<Self> {
        if strategy != HashStrategy::Xxh3
            && (grows || !matches!(kind, Kind::Classic | Kind::Blocked))
        {
            return Err(Error::Unsupported {
                what: "the sha256 hash strategy",
                why: "it is for single classic or blocked Bloom filters of whole keys (split, cuckoo, counting and growing lists hash with xxh3)",
            });
        }
        let first = if grows { fpp * (1.0 - TIGHTENING) } else { fpp };
        Ok(Layers {
            kind,
            layers: vec![Layer::new(
                kind,
                capacity.max(1),
                first,
                strategy,
                phishbloom_filter::cuckoo::TARGET_LOAD,
            )?],
            grows,
            patches: Vec::new(),
            static_patches: Vec::new(),
        })
    }

    /// Layers as read from a file.
    pub fn from_parts(
        kind: Kind,
        layers: Vec<Layer>,
        grows: bool,
        patches: Vec<PrefixSet>,
        static_patches: Vec<RibbonFilter>,
    ) -> Self {
        Layers {
            kind,
            layers,
            grows,
            patches,
            static_patches,
        }
    }

    /// The static patches (ribbon filters of fingerprints added by compact deltas), oldest
    /// first.
    pub fn static_patches(&self) -> &[RibbonFilter] {
        &self.static_patches
    }

    /// Keeps a static filter of fingerprints a compact delta added (an empty one is dropped:
    /// files never hold one).
    pub fn patch_static(&mut self, filter: RibbonFilter) {
        if !filter.is_empty() {
            self.static_patches.push(filter);
        }
    }

    /// Whether the list has no patch of either form.
    fn unpatched(&self) -> bool {
        self.patches.is_empty() && self.static_patches.is_empty()
    }

    /// The patches (prefix sets of fingerprints added by deltas), by ascending prefix bits.
    pub fn patches(&self) -> &[PrefixSet] {
        &self.patches
    }

    /// Adds fingerprint prefixes of `bits` bits to the patch of that width (a new patch if
    /// there is none).
    pub fn patch(&mut self, bits: u32, prefixes: Vec<u64>) -> Result<()> {
        // No empty patch: files never hold one.
        if prefixes.is_empty() {
            return Ok(());
        }
        let at = match self.patches.binary_search_by_key(&bits, PrefixSet::bits) {
            Ok(at) => at,
            Err(at) => {
                self.patches.insert(at, PrefixSet::new(bits)?);
                at
            }
        };
        self.patches[at].extend_prefixes(prefixes);
        Ok(())
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Whether the list grows.
    pub fn grows(&self) -> bool {
        self.grows
    }

    /// Whether the structure is a compact list's table, which confirms its own hits: a probe
    /// of it is the confirmation's lookup, so a walk that confirms each hit may skip the probe.
    pub fn is_compact(&self) -> bool {
        self.compact_table().is_some()
    }

    /// A compact list's table.
    pub fn compact_table(&self) -> Option<&crate::resolve::CompactTable> {
        match self.layers.as_slice() {
            [Layer::Compact(table)] => Some(table),
            _ => None,
        }
    }

    /// The single Bloom filter of a one-layer Bloom list without patches.
    pub fn single_bloom(&self) -> Option<&AnyFilter> {
        match (self.layers.as_slice(), self.unpatched()) {
            ([Layer::Bloom(filter)], true) => Some(filter),
            _ => None,
        }
    }

    /// The single Bloom filter of a one-layer Bloom list without patches, taken out.
    pub fn into_single_bloom(self) -> Option<AnyFilter> {
        match (
            self.patches.is_empty() && self.static_patches.is_empty(),
            self.layers.into_iter().next(),
            self.grows,
        ) {
            (true, Some(Layer::Bloom(filter)), false) => Some(filter),
            _ => None,
        }
    }

    /// The single Bloom filter, to change it (a one-layer Bloom list without patches).
    pub fn single_bloom_mut(&mut self) -> Option<&mut AnyFilter> {
        let unpatched = self.unpatched();
        match (self.layers.as_mut_slice(), unpatched) {
            ([Layer::Bloom(filter)], true) => Some(filter),
            _ => None,
        }
    }

    /// The single Bloom filter, when its own key-taking methods (`contains`, `contains_batch`,
    /// `insert`, `insert_parallel`) hash a whole key as the list does: a classic or blocked
    /// filter (xxh3-128, [`KeyHash::of`], or the sha256 strategy, which only such a filter
    /// has). Not a split-block filter: its key methods hash with xxh3-64, while a list takes
    /// a split layer's 64 bits from the key's [`KeyHash`] (`h1`) — the hash that patches,
    /// growth layers, `add`, serve and the URL engine all have — so whole keys go through
    /// [`KeyHash::of`] and the hash methods for it.
    pub fn key_hashing_bloom(&self) -> Option<&AnyFilter> {
        self.single_bloom()
            .filter(|filter| filter.layout() != LayoutKind::Split)
    }

    /// Keys held, over all layers and patches.
    pub fn items(&self) -> u64 {
        self.layers.iter().map(Layer::items).sum::<u64>()
            + self.patches.iter().map(|p| p.len() as u64).sum::<u64>()
            + self
                .static_patches
                .iter()
                .map(RibbonFilter::len)
                .sum::<u64>()
    }

    /// Bytes over all layers and patches (in memory).
    pub fn size_in_bytes(&self) -> u64 {
        self.layers.iter().map(Layer::size_in_bytes).sum::<u64>()
            + self
                .patches
                .iter()
                .map(PrefixSet::size_in_bytes)
                .sum::<u64>()
            + self
                .static_patches
                .iter()
                .map(RibbonFilter::size_in_bytes)
                .sum::<u64>()
    }

    /// Whether the structure's kind deletes (and so hashes entry fingerprints).
    pub fn kind_deletes(&self) -> bool {
        self.kind.deletes()
    }

    /// Whether the structure can delete keys.
    pub fn supports_remove(&self) -> bool {
        matches!(self.kind, Kind::Cuckoo | Kind::Counting)
    }

    /// Whether any layer or patch may hold a key hash.
    #[inline]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        let v = fingerprint(hash);
        self.layers.iter().any(|layer| layer.contains(hash, v))
            || self.patches.iter().any(|patch| patch.contains(v))
            || self.static_patches.iter().any(|patch| patch.contains(v))
    }

    /// Whether a whole key may be held (a Bloom filter of the sha256 strategy hashes keys its
    /// own way; such lists have one layer and no patches).
    pub fn contains_key(&self, key: &[u8]) -> bool {
        match self.key_hashing_bloom() {
            Some(filter) => filter.contains(key),
            None => self.contains_hash(KeyHash::of(key)),
        }
    }

    /// One answer per hash, appended to `out`: one prefetched batch for a single Bloom filter.
    pub fn contains_hash_batch(&self, hashes: &[KeyHash], out: &mut Vec<bool>) {
        match self.single_bloom() {
            Some(filter) => filter.contains_hash_batch(hashes, out),
            None => out.extend(hashes.iter().map(|&h| self.contains_hash(h))),
        }
    }

    /// One answer per whole key: clears `out`, then pushes them in order.
    pub fn contains_key_batch(&self, keys: &[&[u8]], out: &mut Vec<bool>) {
        match self.key_hashing_bloom() {
            Some(filter) => filter.contains_batch(keys, out),
            None => {
                out.clear();
                let hashes: Vec<KeyHash> = keys.iter().map(|k| KeyHash::of(k)).collect();
                self.contains_hash_batch(&hashes, out);
            }
        }
    }

    /// Whether the layers that hash fingerprints (cuckoo, counting) or a patch may hold the
    /// entry of fingerprint `v` (Bloom layers cannot tell).
    pub fn contains_fingerprint(&self, v: u64) -> bool {
        self.layers
            .iter()
            .any(|layer| layer.contains_fingerprint(v))
            || self.patches.iter().any(|patch| patch.contains(v))
            || self.static_patches.iter().any(|patch| patch.contains(v))
    }

    /// Inserts a key hash into the newest layer; a full layer of a growing list gets a
    /// successor. A list that does not grow: a Bloom or counting layer takes the key (the
    /// capacity rule of adds is [`crate::Blocklist::add`]'s, which refuses before this), a full
    /// cuckoo layer refuses it ([`Error::Full`]).
    pub fn insert_hash(&mut self, hash: KeyHash) -> Result<()> {
        let v = fingerprint(hash);
        self.insert_with(|layer| match layer {
            Layer::Bloom(filter) => {
                filter.insert_hash(hash);
                Ok(())
            }
            Layer::Cuckoo(filter) => filter.insert_hash(fingerprint_hash(v)),
            Layer::Counting(filter) => {
                filter.insert_hash(fingerprint_hash(v));
                Ok(())
            }
            // Never reached: edits refuse static lists first (`Blocklist::refuse_static`).
            Layer::Compact(_) => Err(Full),
        })
    }

    /// Inserts a whole key (see [`Layers::insert_hash`]; a sha256 Bloom filter hashes it its way).
    pub fn insert_key(&mut self, key: &[u8]) -> Result<()> {
        let key_hashing = !self.grows && self.key_hashing_bloom().is_some();
        if let Some(filter) = self.single_bloom_mut().filter(|_| key_hashing) {
            filter.insert(key);
            return Ok(());
        }
        self.insert_hash(KeyHash::of(key))
    }

    /// Inserts the entry of fingerprint `v` (a delta's or another list's addition): into the
    /// newest cuckoo or counting layer, or — a Bloom list cannot insert from a fingerprint —
    /// into the exact (64-bit) patch.
    pub fn insert_fingerprint(&mut self, v: u64) -> Result<()> {
        if self.kind.layout().is_some() {
            return self.patch(64, vec![v]);
        }
        self.insert_with(|layer| match layer {
            Layer::Cuckoo(filter) => filter.insert_hash(fingerprint_hash(v)),
            Layer::Counting(filter) => {
                filter.insert_hash(fingerprint_hash(v));
                Ok(())
            }
            // Bloom lists were handled above; static lists are refused before.
            Layer::Bloom(_) | Layer::Compact(_) => Err(Full),
        })
    }

    fn insert_with(&mut self, insert: impl Fn(&mut Layer) -> Result<(), Full>) -> Result<()> {
        // `layers` is never empty: `new` makes one and readers refuse a file without any.
        let last = self.layers.len() - 1;
        let full = {
            let layer = &self.layers[last];
            !matches!(layer, Layer::Cuckoo(_)) && self.grows && layer.items() >= layer.capacity()
        };
        if !full && insert(&mut self.layers[last]).is_ok() {
            return Ok(());
        }
        if !self.grows {
            return Err(Error::Full {
                path: Default::default(),
                kind: self.kind,
                items: self.items(),
            });
        }
        let layer = self.next_layer()?;
        self.layers.push(layer);
        let last = self.layers.len() - 1;
        insert(&mut self.layers[last]).map_err(|Full| Error::Full {
            path: Default::default(),
            kind: self.kind,
            items: self.items(),
        })
    }

    /// The keys the newest layer was sized for, when that bounds what it may take: a Bloom or
    /// counting layer's recorded capacity (`None` for a cuckoo layer, full only when an
    /// insertion fails, and for a layer whose capacity is not recorded).
    pub fn newest_capacity(&self) -> Option<u64> {
        self.layers
            .last()
            .filter(|layer| !matches!(layer, Layer::Cuckoo(_)))
            .map(Layer::capacity)
            .filter(|&capacity| capacity > 0)
    }

    /// The layer after the newest: twice its capacity, at the tightened rate.
    fn next_layer(&self) -> Result<Layer> {
        let newest = &self.layers[self.layers.len() - 1];
        let capacity = newest.capacity().max(1).saturating_mul(EXPANSION);
        let fpp = newest.target_fpp().unwrap_or(0.01) * TIGHTENING;
        let mut load = phishbloom_filter::cuckoo::TARGET_LOAD;
        let mut layer = Layer::new(self.kind, capacity, fpp, HashStrategy::Xxh3, load);
        for _ in 0..CUCKOO_RETRIES {
            if layer.is_ok() {
                break;
            }
            load *= 0.95;
            layer = Layer::new(self.kind, capacity, fpp, HashStrategy::Xxh3, load);
        }
        layer
    }

    /// Takes the entry of fingerprint `v` out of the structure, as far as it can: from the one
    /// cuckoo or counting layer that holds it ([`Layers::remove_fingerprint`]), or from a Bloom
    /// list's exact patch. A Bloom filter's bits stay (a filter cannot forget); the caller drops
    /// the entry from the verification section, which then settles those bits' hits as clean.
    pub fn forget(&mut self, v: u64) -> Result<bool> {
        if self.kind.deletes() {
            return self.remove_fingerprint(v);
        }
        if let Some(exact) = self.patches.iter_mut().find(|p| p.bits() == 64) {
            exact.remove(v);
            if exact.is_empty() {
                self.patches.retain(|p| !p.is_empty());
            }
        }
        Ok(true)
    }

    /// Layers that answer for the entry of fingerprint `v` (a removal is safe only when one
    /// does).
    pub fn holders(&self, v: u64) -> usize {
        self.layers
            .iter()
            .filter(|layer| layer.contains_fingerprint(v))
            .count()
    }

    /// Removes the entry of fingerprint `v` from the one layer that holds it. `Ok(false)` if no
    /// layer answers for it; an error if two do (see the module docs) or the kind cannot delete.
    /// The caller confirms first that the entry is in the list (its verification section).
    pub fn remove_fingerprint(&mut self, v: u64) -> Result<bool> {
        if !self.supports_remove() {
            return Err(Error::CannotChange {
                path: Default::default(),
                kind: self.kind,
                action: "remove from",
            });
        }
        let holders: Vec<usize> = (0..self.layers.len())
            .filter(|&i| self.layers[i].contains_fingerprint(v))
            .collect();
        match holders.as_slice() {
            [] => Ok(false),
            [i] => Ok(match &mut self.layers[*i] {
                Layer::Cuckoo(filter) => filter.remove_hash(fingerprint_hash(v)),
                Layer::Counting(filter) => filter.remove_hash(fingerprint_hash(v)),
                Layer::Bloom(_) | Layer::Compact(_) => false,
            }),
            _ => Err(Error::AmbiguousRemoval {
                path: Default::default(),
                layers: holders.len(),
            }),
        }
    }
}

/// Cuckoo parameters for the file format (re-exported for the sections module).
pub type CuckooLayerParams = CuckooParams;
/// Counting parameters for the file format.
pub type CountingLayerParams = CountingParams;

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(i: u64) -> KeyHash {
        KeyHash::of(&i.to_le_bytes())
    }

    #[test]
    fn a_growing_list_adds_layers_and_keeps_every_key() {
        for kind in [
            Kind::Blocked,
            Kind::Classic,
            Kind::Split,
            Kind::Cuckoo,
            Kind::Counting,
        ] {
            let mut layers = Layers::new(kind, 100, 0.01, HashStrategy::Xxh3, true).unwrap();
            for i in 0..1_000 {
                layers.insert_hash(hash(i)).unwrap();
            }
            assert!(
                layers.layers().len() >= 3,
                "{kind}: {}",
                layers.layers().len()
            );
            assert!((0..1_000).all(|i| layers.contains_hash(hash(i))), "{kind}");
            // Rates halve, capacities double.
            let rates: Vec<f64> = layers
                .layers()
                .iter()
                .filter_map(Layer::target_fpp)
                .collect();
            assert!(
                rates
                    .windows(2)
                    .all(|w| (w[1] - w[0] * TIGHTENING).abs() < 1e-12),
                "{rates:?}"
            );
            assert!(rates.iter().sum::<f64>() <= 0.01);
        }
    }

    #[test]
    fn whole_key_and_key_hash_paths_agree_for_every_bloom_kind() {
        // A split filter's own key methods hash with xxh3-64; a list must not use them, or a
        // key inserted one way would be probed the other (by a patch, a second layer, serve).
        let keys: Vec<Vec<u8>> = (0..2_000u32)
            .map(|i| format!("key-{i}").into_bytes())
            .collect();
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for kind in [Kind::Blocked, Kind::Classic, Kind::Split] {
            let mut layers = Layers::new(kind, 2_000, 0.01, HashStrategy::Xxh3, false).unwrap();
            for key in &keys[..1_000] {
                layers.insert_key(key).unwrap();
            }
            for key in &keys[1_000..] {
                layers.insert_hash(KeyHash::of(key)).unwrap();
            }
            let mut out = Vec::new();
            layers.contains_key_batch(&slices, &mut out);
            assert!(out.iter().all(|&hit| hit), "{kind}");
            assert!(keys.iter().all(|k| layers.contains_key(k)), "{kind}");
            assert!(
                keys.iter().all(|k| layers.contains_hash(KeyHash::of(k))),
                "{kind}"
            );
            // With a patch the list no longer has a single filter: still every key.
            layers.patch(64, vec![fingerprint(hash(1))]).unwrap();
            assert!(keys.iter().all(|k| layers.contains_key(k)), "{kind}");
        }
    }

    #[test]
    fn a_full_cuckoo_list_that_does_not_grow_refuses_and_keeps_its_keys() {
        let mut layers = Layers::new(Kind::Cuckoo, 100, 0.01, HashStrategy::Xxh3, false).unwrap();
        let mut kept = Vec::new();
        for i in 0..400 {
            match layers.insert_hash(hash(i)) {
                Ok(()) => kept.push(i),
                Err(error) => assert!(matches!(error, Error::Full { .. }), "{error:?}"),
            }
        }
        assert!(kept.len() >= 100);
        assert!(kept.iter().all(|&i| layers.contains_hash(hash(i))));
    }

    #[test]
    fn removal_from_growing_deleting_lists() {
        for kind in [Kind::Cuckoo, Kind::Counting] {
            let mut layers = Layers::new(kind, 50, 0.01, HashStrategy::Xxh3, true).unwrap();
            for i in 0..400 {
                layers.insert_hash(hash(i)).unwrap();
            }
            let mut removed = 0;
            for i in (0..400).step_by(2) {
                match layers.remove_fingerprint(fingerprint(hash(i))) {
                    Ok(true) => removed += 1,
                    Ok(false) => panic!("{kind}: key {i} not found"),
                    Err(Error::AmbiguousRemoval { .. }) => {}
                    Err(error) => panic!("{error}"),
                }
            }
            assert!(removed >= 190, "{kind}: {removed}");
            assert!(
                (1..400).step_by(2).all(|i| layers.contains_hash(hash(i))),
                "{kind}"
            );
        }
        let mut bloom = Layers::new(Kind::Blocked, 50, 0.01, HashStrategy::Xxh3, false).unwrap();
        assert!(matches!(
            bloom.remove_fingerprint(fingerprint(hash(1))),
            Err(Error::CannotChange { .. })
        ));
    }
}
