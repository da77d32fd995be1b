//! [`ScalingBloom`]: RedisBloom's scalable Bloom filter — a chain of classic Bloom filters, each
//! new one `EXPANSION` times the capacity of the last at half its error rate (the first at half
//! the rate asked, so the chain stays under it), or one filter that refuses new items when full
//! (`NONSCALING`).

use phishbloom_filter::{math, BloomFilter, KeyHash};

use super::dump::Header;
use super::{FilterError, Result, MAX_FILTER_BYTES};

/// RedisBloom's error-rate factor between one Bloom layer and the next.
const TIGHTENING: f64 = 0.5;

/// One layer of a [`ScalingBloom`].
#[derive(Clone, Debug)]
struct BloomLayer {
    filter: BloomFilter,
    capacity: u64,
    count: u64,
    fpp: f64,
}

impl BloomLayer {
    fn new(capacity: u64, fpp: f64, used: u64) -> Result<Self> {
        let bits = math::optimal_num_bits(capacity, fpp)?;
        let bytes = phishbloom_filter::data_len(bits);
        if used.saturating_add(bytes) > MAX_FILTER_BYTES {
            return Err(FilterError::TooLarge {
                bytes: used.saturating_add(bytes),
            });
        }
        Ok(BloomLayer {
            filter: BloomFilter::new(capacity, fpp)?,
            capacity,
            count: 0,
            fpp,
        })
    }

    fn bytes(&self) -> u64 {
        self.filter.bit_bytes().len() as u64
    }
}

/// RedisBloom's scalable Bloom filter (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScalingBloom {
    layers: Vec<BloomLayer>,
    error_rate: f64,
    /// `None`: non-scaling.
    expansion: Option<u32>,
    items: u64,
}

impl ScalingBloom {
    /// An empty filter for `capacity` items at `error_rate`, growing by `expansion` when full
    /// (`None`: refusing new items instead).
    pub fn new(error_rate: f64, capacity: u64, expansion: Option<u32>) -> Result<Self> {
        let first = BloomLayer::new(capacity.max(1), error_rate * TIGHTENING, 0)?;
        Ok(ScalingBloom {
            layers: vec![first],
            error_rate,
            expansion,
            items: 0,
        })
    }

    /// Adds `item`: `Ok(true)` if it was new, `Ok(false)` if the filter already answered for it.
    pub fn add(&mut self, item: &[u8]) -> Result<bool> {
        let hash = KeyHash::of(item);
        if self.layers.iter().any(|l| l.filter.contains_hash(hash)) {
            return Ok(false);
        }
        let full = self.newest().count >= self.newest().capacity;
        if full {
            let Some(expansion) = self.expansion else {
                return Err(FilterError::BloomFull);
            };
            let newest = self.newest();
            let capacity = newest.capacity.saturating_mul(u64::from(expansion));
            let layer = BloomLayer::new(capacity, newest.fpp * TIGHTENING, self.bytes())?;
            self.layers.push(layer);
        }
        let newest = self.newest_mut();
        newest.filter.insert_hash(hash);
        newest.count += 1;
        self.items += 1;
        Ok(true)
    }

    /// Whether `item` may have been added.
    pub fn contains(&self, item: &[u8]) -> bool {
        let hash = KeyHash::of(item);
        self.layers.iter().any(|l| l.filter.contains_hash(hash))
    }

    fn newest(&self) -> &BloomLayer {
        // Every constructor makes at least one layer, and none are removed.
        &self.layers[self.layers.len() - 1]
    }

    fn newest_mut(&mut self) -> &mut BloomLayer {
        let last = self.layers.len() - 1;
        &mut self.layers[last]
    }

    /// Items added (RedisBloom's `BF.CARD` and "Number of items inserted").
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The items all layers are sized for (RedisBloom's "Capacity").
    pub fn capacity(&self) -> u64 {
        self.layers.iter().map(|l| l.capacity).sum()
    }

    /// Bytes of the layers' bits (RedisBloom's "Size").
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(BloomLayer::bytes).sum()
    }

    /// How many layers there are (RedisBloom's "Number of filters").
    pub fn filters(&self) -> usize {
        self.layers.len()
    }

    /// The growth factor, `None` for a non-scaling filter (RedisBloom's "Expansion rate").
    pub fn expansion(&self) -> Option<u32> {
        self.expansion
    }

    /// `BF.DEBUG`'s lines: the item count, then one line per layer.
    pub fn debug(&self) -> Vec<String> {
        let mut lines = vec![format!("size:{}", self.items)];
        for layer in &self.layers {
            let params = layer.filter.params();
            lines.push(format!(
                "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
                layer.bytes(),
                params.num_bits,
                params.num_hashes,
                layer.capacity,
                layer.count,
                layer.fpp
            ));
        }
        lines
    }

    /// The layers' bits, in order: what a dump carries after its header.
    pub(super) fn segments(&self) -> Vec<&[u8]> {
        self.layers.iter().map(|l| l.filter.bit_bytes()).collect()
    }

    /// The layers' bits, to load a dump into.
    pub(super) fn segments_mut(&mut self) -> Vec<&mut [u8]> {
        self.layers
            .iter_mut()
            .map(|l| l.filter.bit_bytes_mut())
            .collect()
    }

    /// Its part of a dump header: the rate, the expansion, the count, and each layer's
    /// parameters and count.
    pub(super) fn write_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.error_rate.to_le_bytes());
        out.extend_from_slice(&self.expansion.unwrap_or(0).to_le_bytes());
        out.push(u8::from(self.expansion.is_some()));
        out.extend_from_slice(&self.items.to_le_bytes());
        out.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        for l in &self.layers {
            let params = l.filter.params();
            out.extend_from_slice(&params.num_bits.to_le_bytes());
            out.extend_from_slice(&params.num_hashes.to_le_bytes());
            out.extend_from_slice(&l.capacity.to_le_bytes());
            out.extend_from_slice(&l.count.to_le_bytes());
            out.extend_from_slice(&l.fpp.to_le_bytes());
        }
    }

    /// The filter [`ScalingBloom::write_header`] described, its bits all zero; every
    /// parameter checked as a new filter's are, and the size capped.
    pub(super) fn read_header(h: &mut Header) -> Result<Self> {
        let error_rate = h.f64()?;
        let expansion = h.u32()?;
        let scaling = h.take::<1>()?[0] != 0;
        let items = h.u64()?;
        let n = h.layers("a layer count out of range")?;
        let mut layers = Vec::with_capacity(n as usize);
        let mut used = 0u64;
        for _ in 0..n {
            let (num_bits, num_hashes) = (h.u64()?, h.u32()?);
            let (capacity, count, fpp) = (h.u64()?, h.u64()?, h.f64()?);
            let bytes = phishbloom_filter::data_len(num_bits);
            used = used.saturating_add(bytes);
            if used > MAX_FILTER_BYTES {
                return Err(FilterError::TooLarge { bytes: used });
            }
            math::validate_fpp(fpp)?;
            layers.push(BloomLayer {
                filter: BloomFilter::with_num_bits(num_bits, num_hashes)?,
                capacity,
                count,
                fpp,
            });
        }
        math::validate_fpp(error_rate)?;
        Ok(ScalingBloom {
            layers,
            error_rate,
            expansion: scaling.then_some(expansion),
            items,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_grows_by_its_expansion_or_fills() {
        let mut b = ScalingBloom::new(0.01, 10, Some(4)).unwrap();
        for i in 0..60 {
            b.add(format!("k{i}").as_bytes()).unwrap();
        }
        assert!((0..60).all(|i| b.contains(format!("k{i}").as_bytes())));
        // 10, then 40, then 160.
        assert_eq!(b.filters(), 3);
        assert_eq!(b.capacity(), 10 + 40 + 160);
        assert_eq!(b.expansion(), Some(4));
        assert!(!b.add(b"k1").unwrap());

        let mut fixed = ScalingBloom::new(0.01, 2, None).unwrap();
        assert!(fixed.add(b"a").unwrap());
        assert!(fixed.add(b"b").unwrap());
        assert!(matches!(fixed.add(b"c"), Err(FilterError::BloomFull)));
        assert_eq!(fixed.items(), 2);
    }
}
