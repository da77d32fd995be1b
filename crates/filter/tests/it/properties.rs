//! Property tests: no false negatives, params + bits rebuild an identical filter, union = build
//! from both, parallel insertion = sequential, batched queries = single ones.

use crate::common;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{
    AnyFilter, BlockedBloomFilter, BloomFilter, Filter, HashStrategy, Layout, LayoutKind,
    SplitBlockBloomFilter, PARALLEL_MIN_KEYS,
};
use proptest::prelude::*;

type Keys = Vec<Vec<u8>>;

fn keys() -> impl Strategy<Value = Keys> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..200)
}

fn strategies() -> impl Strategy<Value = HashStrategy> {
    prop_oneof![Just(HashStrategy::Xxh3), Just(HashStrategy::Sha256)]
}

fn layouts() -> impl Strategy<Value = LayoutKind> {
    prop_oneof![
        Just(LayoutKind::Classic),
        Just(LayoutKind::Blocked),
        Just(LayoutKind::Split)
    ]
}

/// A filter sized for `n` keys; a generous fpp keeps the filters small and full of collisions.
/// The split layout hashes with xxh3 only, so it takes that strategy whatever is asked.
fn filter(layout: LayoutKind, n: usize, strategy: HashStrategy) -> AnyFilter {
    let strategy = match layout {
        LayoutKind::Split => HashStrategy::Xxh3,
        _ => strategy,
    };
    AnyFilter::new(layout, n.max(1) as u64, 0.05, strategy).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_false_negatives(keys in keys(), layout in layouts(), strategy in strategies()) {
        let mut f = filter(layout, keys.len(), strategy);
        for key in &keys {
            f.insert(key);
        }
        for key in &keys {
            prop_assert!(f.contains(key));
        }
        let borrowed: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut answers = Vec::new();
        f.contains_batch(&borrowed, &mut answers);
        prop_assert_eq!(answers.len(), keys.len());
        prop_assert!(answers.iter().all(|&a| a));
        prop_assert_eq!(f.items(), keys.len() as u64);
    }

    #[test]
    fn params_and_bits_rebuild_an_identical_filter(
        keys in keys(), queries in keys(), layout in layouts(), strategy in strategies()
    ) {
        let mut f = filter(layout, keys.len(), strategy);
        for key in &keys {
            f.insert(key);
        }
        let mut g = AnyFilter::from_params(&f.params()).unwrap();
        prop_assert_eq!(g.count_ones(), 0);
        g.bit_bytes_mut().copy_from_slice(f.bit_bytes());
        prop_assert_eq!(g.params(), f.params());
        for key in keys.iter().chain(&queries) {
            prop_assert_eq!(g.contains(key), f.contains(key));
        }
    }

    #[test]
    fn union_equals_building_from_both(a in keys(), b in keys(), strategy in strategies()) {
        check_union::<phishbloom_filter::Classic>(&a, &b, strategy)?;
        check_union::<phishbloom_filter::Blocked>(&a, &b, strategy)?;
        check_union::<phishbloom_filter::Split>(&a, &b, HashStrategy::Xxh3)?;
    }

}

proptest! {
    // Key counts on both sides of the threshold below which `insert_parallel` stays on one
    // thread, so that the sharded path is exercised (and the sequential fallback beside it).
    #![proptest_config(ProptestConfig::with_cases(6))]
    #[test]
    fn parallel_insert_equals_sequential(
        seed in any::<u64>(),
        extra in 0usize..3000,
        threads in 2usize..4,
    ) {
        let mut rng = SplitMix64::new(seed);
        let count = PARALLEL_MIN_KEYS - 100 + extra;
        let keys: Vec<String> = (0..count).map(|_| common::url(&mut rng, "p")).collect();
        let mut sequential = BlockedBloomFilter::new(count as u64, 0.01).unwrap();
        let mut parallel = sequential.clone();
        for key in &keys {
            sequential.insert(key);
        }
        parallel.insert_parallel(&keys, threads);
        prop_assert_eq!(sequential.words(), parallel.words());
        prop_assert_eq!(Filter::items(&parallel), count as u64);
        let mut sequential = SplitBlockBloomFilter::new(count as u64, 0.01).unwrap();
        let mut parallel = sequential.clone();
        for key in &keys {
            sequential.insert(key);
        }
        parallel.insert_parallel(&keys, threads);
        prop_assert_eq!(sequential.words(), parallel.words());
    }
}

fn check_union<L: Layout>(a: &Keys, b: &Keys, strategy: HashStrategy) -> Result<(), TestCaseError> {
    let empty = phishbloom_filter::Bloom::<L>::with_strategy(300, 0.02, strategy).unwrap();
    let (mut left, mut right, mut both) = (empty.clone(), empty.clone(), empty);
    for key in a {
        left.insert(key);
        both.insert(key);
    }
    for key in b {
        right.insert(key);
        both.insert(key);
    }
    left.union(&right).unwrap();
    prop_assert_eq!(left.words(), both.words());
    prop_assert_eq!(Filter::items(&left), Filter::items(&both));
    Ok(())
}

/// Bits of the filters of [`batch_equals_single_queries_on_a_prefetched_filter`]: 2 MiB, above
/// the size from which the batched path prefetches (1 MiB), so its pipeline is what is tested.
const PREFETCHED_BITS: u64 = 1 << 24;

/// Batch lengths around the pipeline's depth (16 keys) and a long one.
const BATCH_LENGTHS: [usize; 8] = [0, 1, 15, 16, 17, 32, 33, 1000];

#[test]
fn batch_equals_single_queries_on_a_prefetched_filter() {
    let filters = [
        AnyFilter::Classic(BloomFilter::with_num_bits(PREFETCHED_BITS, 7).unwrap()),
        AnyFilter::Blocked(BlockedBloomFilter::with_num_bits(PREFETCHED_BITS, 6).unwrap()),
        AnyFilter::Split(SplitBlockBloomFilter::with_num_bits(PREFETCHED_BITS, 8).unwrap()),
    ];
    for mut f in filters {
        let mut rng = SplitMix64::new(23);
        let members: Vec<String> = (0..2000).map(|_| common::url(&mut rng, "m")).collect();
        for key in &members {
            f.insert(key.as_bytes());
        }
        let mut answers = Vec::new();
        for len in BATCH_LENGTHS {
            // Members and non-members in random order, so that a misplaced answer shows.
            let queries: Vec<String> = (0..len)
                .map(|i| match rng.next_u64() % 2 {
                    0 => members[i % members.len()].clone(),
                    _ => common::url(&mut rng, "q"),
                })
                .collect();
            let borrowed: Vec<&[u8]> = queries.iter().map(|q| q.as_bytes()).collect();
            answers.push(true); // `contains_batch` clears what was there
            f.contains_batch(&borrowed, &mut answers);
            let single: Vec<bool> = borrowed.iter().map(|q| f.contains(q)).collect();
            assert_eq!(answers, single, "{} layout, {len} keys", f.layout());
        }
    }
}

#[test]
fn union_rejects_different_parameters() {
    let mut a = BloomFilter::new(1000, 0.01).unwrap();
    let b = BloomFilter::new(2000, 0.01).unwrap();
    let error = a.union(&b).unwrap_err().to_string();
    assert!(error.contains("num_bits"), "{error}");
    let c = BloomFilter::with_num_bits(a.num_bits(), a.num_hashes() + 1).unwrap();
    assert!(a.union(&c).unwrap_err().to_string().contains("num_hashes"));
    let d =
        BloomFilter::with_num_bits_and_strategy(a.num_bits(), a.num_hashes(), HashStrategy::Sha256)
            .unwrap();
    assert!(a
        .union(&d)
        .unwrap_err()
        .to_string()
        .contains("hash strategy"));
}

#[test]
fn statistics_track_the_fill() {
    let mut f = BlockedBloomFilter::new(10_000, 0.01).unwrap();
    assert_eq!(f.fill_ratio(), 0.0);
    assert_eq!(f.expected_fpp(), 0.0);
    let mut rng = SplitMix64::new(9);
    for _ in 0..10_000 {
        f.insert(common::url(&mut rng, "x"));
    }
    let estimate = f.estimated_items();
    assert!((estimate - 10_000.0).abs() < 300.0, "{estimate}");
    assert!((f.fill_ratio() - 0.5).abs() < 0.05, "{}", f.fill_ratio());
    let (now, theory) = (f.expected_fpp(), f.theoretical_fpp(10_000.0));
    assert!((now - theory).abs() / theory < 0.15, "{now} vs {theory}");
    assert!(f.expected_fpp() <= 0.0105);
}

#[test]
fn sharded_parallel_insert_equals_sequential_on_many_keys() {
    let keys: Vec<String> = (0..200_000)
        .map(|i| format!("http://k{i}.example/"))
        .collect();
    let mut sequential = BlockedBloomFilter::new(200_000, 0.01).unwrap();
    let mut parallel = sequential.clone();
    for key in &keys {
        sequential.insert(key);
    }
    parallel.insert_parallel(&keys, 3);
    assert_eq!(sequential.words(), parallel.words());
    assert_eq!(Filter::items(&parallel), 200_000);
}

#[test]
fn concurrent_inserter_from_two_threads_equals_sequential() {
    let keys: Vec<String> = (0..50_000).map(|i| format!("key-{i}")).collect();
    let mut sequential = BloomFilter::new(50_000, 0.01).unwrap();
    let mut shared = sequential.clone();
    for key in &keys {
        sequential.insert(key);
    }
    {
        let inserter = shared.concurrent_inserter();
        std::thread::scope(|scope| {
            for part in keys.chunks(25_000) {
                let inserter = &inserter;
                scope.spawn(move || inserter.insert_all(part));
            }
        });
    }
    assert_eq!(sequential.words(), shared.words());
    assert_eq!(Filter::items(&shared), 50_000);
    // The split layout's concurrent inserter hashes keys as its `insert` does (xxh3-64).
    let mut sequential = SplitBlockBloomFilter::new(50_000, 0.01).unwrap();
    let mut shared = sequential.clone();
    for key in &keys {
        sequential.insert(key);
    }
    shared.concurrent_inserter().insert_all(&keys);
    assert_eq!(sequential.words(), shared.words());
}
