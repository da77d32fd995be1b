//! Combining two lists' structures: whether they are sized alike, layer by layer, and their
//! union.

use phishbloom_filter::counting::CountingParams;
use phishbloom_filter::cuckoo::CuckooParams;
use phishbloom_filter::{AnyFilter, BloomParams};

use crate::error::{Error, Result};
use crate::kind::Kind;

use super::{Layer, Layers};

impl Layers {
    /// Checks that `other` has this list's kind and parameters, layer by layer (what a union
    /// needs); the error names the first parameter that differs.
    pub fn check_compatible(&self, other: &Layers) -> Result<()> {
        let differs = |parameter: &'static str, left: String, right: String| {
            Err(Error::Incompatible {
                parameter,
                left,
                right,
            })
        };
        if self.kind != other.kind {
            return differs("kind", self.kind.to_string(), other.kind.to_string());
        }
        if self.layers.len() != other.layers.len() {
            return differs(
                "layer count",
                self.layers.len().to_string(),
                other.layers.len().to_string(),
            );
        }
        for (mine, theirs) in self.layers.iter().zip(&other.layers) {
            let (left, right) = match (mine, theirs) {
                (Layer::Bloom(a), Layer::Bloom(b)) => {
                    let (a, b) = (a.params(), b.params());
                    let shape = |p: &BloomParams| {
                        format!(
                            "{} layout, {} hash, m = {} bits, k = {}",
                            p.layout, p.strategy, p.num_bits, p.num_hashes
                        )
                    };
                    (shape(&a), shape(&b))
                }
                (Layer::Cuckoo(a), Layer::Cuckoo(b)) => {
                    let shape = |p: CuckooParams| {
                        format!(
                            "{} buckets of {}-bit fingerprints",
                            p.num_buckets, p.fingerprint_bits
                        )
                    };
                    (shape(a.params()), shape(b.params()))
                }
                (Layer::Counting(a), Layer::Counting(b)) => {
                    let shape = |p: CountingParams| {
                        format!("{} counters, k = {}", p.num_counters, p.num_hashes)
                    };
                    (shape(a.params()), shape(b.params()))
                }
                _ => return differs("kind", self.kind.to_string(), other.kind.to_string()),
            };
            if left != right {
                return differs(
                    "sizing (build both with the same capacity and rate)",
                    left,
                    right,
                );
            }
        }
        Ok(())
    }

    /// Adds every key of `other` (same kind and parameters, layer by layer, checked first):
    /// Bloom bits are OR-ed, cuckoo fingerprints inserted, counters added (saturating), patches
    /// merged. A cuckoo layer that cannot take them all is [`Error::Full`] (and this list is
    /// then partly changed: union into a copy).
    pub fn union(&mut self, other: &Layers) -> Result<()> {
        self.check_compatible(other)?;
        for (mine, theirs) in self.layers.iter_mut().zip(&other.layers) {
            match (mine, theirs) {
                (Layer::Bloom(AnyFilter::Classic(a)), Layer::Bloom(AnyFilter::Classic(b))) => {
                    a.union(b)?
                }
                (Layer::Bloom(AnyFilter::Blocked(a)), Layer::Bloom(AnyFilter::Blocked(b))) => {
                    a.union(b)?
                }
                (Layer::Cuckoo(a), Layer::Cuckoo(b)) => {
                    let items = a.items() + b.items();
                    a.union(b).map_err(|_| Error::Full {
                        path: Default::default(),
                        kind: Kind::Cuckoo,
                        items,
                    })?;
                }
                (Layer::Counting(a), Layer::Counting(b)) => {
                    a.union(b).map_err(|parameter| Error::Incompatible {
                        parameter,
                        left: String::new(),
                        right: String::new(),
                    })?;
                }
                // Checked above: the layers match.
                _ => {}
            }
        }
        for patch in &other.patches {
            self.patch(patch.bits(), patch.prefixes().to_vec())?;
        }
        self.static_patches
            .extend(other.static_patches.iter().cloned());
        Ok(())
    }
}
