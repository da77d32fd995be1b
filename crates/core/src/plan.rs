//! The sizing calculator of seeds 001/004: m, k, memory and expected rate for given n and p,
//! for both layouts, beside the memory an exact hash set of the same keys would take.

use phishbloom_filter::{math, Blocked, Classic, Layout, LayoutKind};

use crate::error::Result;

/// One line of the plan table.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PlanRow {
    /// n.
    pub expected_items: u64,
    /// p, the target.
    pub fpp: f64,
    /// Layout.
    #[serde(serialize_with = "crate::serialize_display")]
    pub layout: LayoutKind,
    /// m.
    pub num_bits: u64,
    /// k.
    pub num_hashes: u32,
    /// Bytes of the bit array (whole 64-byte blocks).
    pub bytes: u64,
    /// m / n.
    pub bits_per_key: f64,
    /// The rate theory predicts at n for this m and k.
    pub expected_fpp: f64,
    /// Estimated bytes of a `HashSet<String>` holding the same n keys.
    pub hashset_bytes: u64,
}

/// Plans both layouts for `expected_items` at `fpp`; `key_bytes` is the mean key length used for
/// the hash-set estimate.
pub fn plan(expected_items: u64, fpp: f64, key_bytes: u64) -> Result<Vec<PlanRow>> {
    Ok(vec![
        row::<Classic>(expected_items, fpp, key_bytes)?,
        row::<Blocked>(expected_items, fpp, key_bytes)?,
    ])
}

fn row<L: Layout>(expected_items: u64, fpp: f64, key_bytes: u64) -> Result<PlanRow> {
    let (num_bits, num_hashes) = L::size_for(expected_items, fpp)?;
    let items = expected_items as f64;
    Ok(PlanRow {
        expected_items,
        fpp,
        layout: L::KIND,
        num_bits,
        num_hashes,
        bytes: phishbloom_filter::data_len(num_bits),
        bits_per_key: num_bits as f64 / items,
        expected_fpp: L::theoretical_fpp(num_bits, items, num_hashes),
        hashset_bytes: hashset_bytes(expected_items, key_bytes),
    })
}

/// Estimated memory of a Rust `HashSet<String>` with `n` keys of `key_bytes` bytes each.
///
/// hashbrown keeps a power-of-two bucket count with load factor ≤ 7/8, and per bucket one
/// `String` (24 bytes: pointer, capacity, length) plus one control byte; each key is a separate
/// heap allocation, which glibc rounds to a 16-byte multiple with 8 bytes of overhead and a
/// 32-byte minimum. An estimate of the allocator's view, not a measurement.
pub fn hashset_bytes(n: u64, key_bytes: u64) -> u64 {
    /// `size_of::<String>()` on 64-bit targets.
    const STRING_BYTES: u64 = 24;
    let buckets = (n.saturating_mul(8) / 7 + 1).next_power_of_two().max(4);
    let per_key = (key_bytes + 8).div_ceil(16).max(2) * 16;
    buckets * (STRING_BYTES + 1) + n * per_key
}

/// Bits per key of the information-theoretic bound at `fpp` (for the plan's footnote).
pub fn lower_bound_bits_per_key(fpp: f64) -> f64 {
    math::information_bound_bits_per_key(fpp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_gives_the_seed_figures() {
        let rows = plan(10_327, 0.01, 22).unwrap();
        assert_eq!((rows[0].num_bits, rows[0].num_hashes), (98_985, 7));
        assert_eq!(rows[0].layout, LayoutKind::Classic);
        assert_eq!(rows[1].layout, LayoutKind::Blocked);
        assert!(rows[1].num_bits > rows[0].num_bits);
        assert!(rows[1].expected_fpp <= 0.01);
        assert!(plan(0, 0.01, 22).is_err());
        assert!(plan(10, 1.5, 22).is_err());
    }

    #[test]
    fn hashset_estimate_grows_with_n_and_key_length() {
        // 10,000 keys of 22 bytes: 16,384 buckets · 25 B + 10,000 · 32 B.
        assert_eq!(hashset_bytes(10_000, 22), 16_384 * 25 + 320_000);
        assert!(hashset_bytes(10_000, 80) > hashset_bytes(10_000, 22));
    }
}
