//! What `info` shows of a list's structure: each layer and patch, its size and rates.

use phishbloom_filter::BloomParams;

use super::{Layer, Layers};

impl Layers {
    /// A one-layer list's Bloom parameters, for callers that describe filters.
    pub fn bloom_params(&self) -> Option<BloomParams> {
        self.single_bloom().map(|f| f.params())
    }

    /// Cuckoo and counting parameters of every layer (for describing them).
    pub fn describe(&self) -> Vec<LayerInfo> {
        self.layers
            .iter()
            .map(|layer| LayerInfo {
                structure: match layer {
                    Layer::Bloom(filter) => filter.layout().to_string(),
                    Layer::Cuckoo(filter) => format!(
                        "cuckoo, {}-bit fingerprints, {} buckets of 4",
                        filter.fingerprint_bits(),
                        filter.num_buckets()
                    ),
                    Layer::Counting(filter) => format!(
                        "counting, {} 4-bit counters, k = {}",
                        filter.num_counters(),
                        filter.num_hashes()
                    ),
                    Layer::Compact(table) => format!(
                        "compact, fingerprint prefixes in a universe of 2^{:.2} (Elias–Fano)",
                        (table.map().universe() as f64).log2(),
                    ),
                },
                items: layer.items(),
                capacity: layer.capacity(),
                target_fpp: layer.target_fpp(),
                expected_fpp_now: layer.expected_fpp(),
                bytes: layer.size_in_bytes(),
            })
            .chain(self.patches.iter().map(|patch| LayerInfo {
                structure: format!(
                    "patch, {}-bit fingerprint prefixes added by deltas",
                    patch.bits()
                ),
                items: patch.len() as u64,
                capacity: patch.len() as u64,
                target_fpp: None,
                expected_fpp_now: patch.expected_fpp(),
                bytes: patch.size_in_bytes(),
            }))
            .chain(self.static_patches.iter().map(|patch| LayerInfo {
                structure: format!(
                    "static patch, ribbon filter of {}-bit results in {} slots added by a \
                     compact delta",
                    patch.bits(),
                    patch.slots()
                ),
                items: patch.len(),
                capacity: patch.len(),
                target_fpp: None,
                expected_fpp_now: patch.expected_fpp(),
                bytes: patch.size_in_bytes(),
            }))
            .collect()
    }
}

/// One layer as `info` lists it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerInfo {
    /// What it is.
    pub structure: String,
    /// Keys in it.
    pub items: u64,
    /// Keys it was sized for.
    pub capacity: u64,
    /// Its per-probe target rate.
    pub target_fpp: Option<f64>,
    /// The rate its contents imply now.
    pub expected_fpp_now: f64,
    /// Its bytes.
    pub bytes: u64,
}
