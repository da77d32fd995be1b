//! The split-block layout against the reference it follows and against its own rate formula.
//!
//! Bits: for the same 64-bit hashes and block count, [`SplitBlockBloomFilter`] must set exactly
//! the bits of `sbbf-rs-safe` (a conforming implementation of Parquet's split-block filter).
//! Rate: with uniform 64-bit hashes from a fixed seed, the measured false-positive rate must be
//! within 4σ (binomial standard error) of [`math::split_fpp`] — and more than 4σ above the
//! blocked formula with k = 8 in 256-bit blocks, which is *not* this filter's rate.

use phishbloom_filter::math::{self, SPLIT_BLOCK_BITS};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{Filter, SplitBlockBloomFilter};

#[test]
fn bits_are_those_of_sbbf_rs_safe() {
    // 8 bits/key × 8192 keys = 8 KiB = 256 blocks of 32 bytes in both.
    let mut reference = sbbf_rs_safe::Filter::new(8, 8192);
    let mut ours = SplitBlockBloomFilter::with_num_bits(8192 * 8, 8).unwrap();
    assert_eq!(reference.as_bytes().len(), ours.bit_bytes().len());
    let mut rng = SplitMix64::new(21);
    for _ in 0..6000 {
        let hash = rng.next_u64();
        reference.insert_hash(hash);
        ours.insert_hash64(hash);
    }
    assert_eq!(reference.as_bytes(), ours.bit_bytes());
    for _ in 0..20_000 {
        let hash = rng.next_u64();
        assert_eq!(reference.contains_hash(hash), ours.contains_hash64(hash));
    }
}

#[test]
fn measured_rate_is_the_split_formula() {
    // 200,000 keys at 10.5 bits/key and 4,000,000 uniform non-member hashes: σ ≈ 5e-5, and the
    // blocked k = 8 formula is ~4 % (8σ) below the split formula here.
    let (members, queries) = (200_000u64, 4_000_000u64);
    let bits = members * 21 / 2;
    let mut filter = SplitBlockBloomFilter::with_num_bits(bits, 8).unwrap();
    let mut rng = SplitMix64::new(22);
    for _ in 0..members {
        filter.insert_hash64(rng.next_u64());
    }
    let hits = (0..queries)
        .filter(|_| filter.contains_hash64(rng.next_u64()))
        .count();
    let measured = hits as f64 / queries as f64;
    let split = math::split_fpp(filter.num_bits(), members as f64);
    let blocked = math::blocked_fpp(filter.num_bits(), members as f64, 8, SPLIT_BLOCK_BITS);
    let sigma = (split * (1.0 - split) / queries as f64).sqrt();
    let context = format!("measured {measured}, split formula {split}, blocked k=8 {blocked}");
    println!("{context}, σ {sigma}");
    assert!((measured - split).abs() <= 4.0 * sigma, "{context}");
    assert!(measured - blocked > 4.0 * sigma, "{context}");
    // The rate implied by the bits as they are agrees too.
    assert!(
        (filter.expected_fpp() - split).abs() <= 4.0 * sigma,
        "{context}"
    );
}
