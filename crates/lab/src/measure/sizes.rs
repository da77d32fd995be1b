//! How big each of the report's measurements is, for the full report and for `--quick`.
//!
//! Full sizes were chosen to finish in under 15 minutes on the project's 2-core machine with
//! another process busy on one core; quick sizes run the whole report in seconds (also in a
//! debug build, for the tests) while still exercising every code path.

/// Sizes of every experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes {
    /// Random `http://xxxxxxxxxx.com` URLs queried in the dataset experiment (seed 000 used 10⁴).
    pub dataset_random: u64,
    /// n for the rate-vs-k and rate-vs-bits-per-key sweeps.
    pub sweep_keys: u64,
    /// Expected false positives each sweep point aims for (relative error ≈ 1/√target).
    pub sweep_target_false_positives: f64,
    /// Fewest queries per sweep point.
    pub sweep_min_queries: u64,
    /// Most queries per sweep point (caps the points whose rate is tiny).
    pub sweep_max_queries: u64,
    /// Random URLs queried per hash strategy (SHA-256 costs k digests per query).
    pub hash_random: u64,
    /// At most this many phishing keys (and as many benign ones) in the hash-strategy section
    /// (SHA-256 in a debug build is slow; the full report uses them all).
    pub hash_key_limit: usize,
    /// Timed builds per hash strategy (interleaved; the median is used).
    pub hash_repetitions: usize,
    /// n of the memory table (seed 004: 10⁴, 10⁵, 10⁸; 10⁶ and 10⁷ are what its numbers match).
    pub memory_items: Vec<u64>,
    /// Largest n whose Bloom filters are built and measured (larger ones are computed only).
    pub memory_build_max: u64,
    /// Largest n whose `HashSet<String>` is built and measured (larger ones are estimated).
    pub hashset_build_max: u64,
    /// Largest n whose sorted 32-bit fingerprint table is built and measured.
    pub fingerprint_build_max: u64,
    /// Non-member queries per memory-table structure.
    pub memory_queries: u64,
    /// Seed 002's keyword count.
    pub scale_keys: u64,
    /// Non-members queried against seed 002's filter.
    pub scale_queries: u64,
    /// Members re-queried to check for false negatives at scale (a sample: all 10⁸ would double
    /// the section's time).
    pub scale_member_checks: u64,
    /// n of the bits-per-key sweep of "Lists that change" (10⁶ at full size).
    pub changes_bits_keys: u64,
    /// Expected false positives each bits-per-key point aims for.
    pub changes_target_false_positives: f64,
    /// Fewest non-member queries per bits-per-key point.
    pub changes_min_queries: u64,
    /// Most non-member queries per bits-per-key point (caps the smallest rates).
    pub changes_max_queries: u64,
    /// Key counts of the ns-per-operation table (10⁶ and 10⁷ at full size).
    pub changes_speed_keys: Vec<u64>,
    /// Timed passes per structure in that table (interleaved; the median is kept).
    pub changes_speed_repetitions: usize,
    /// Changes per delta (1,000, 10,000 and 100,000 at full size).
    pub changes_delta_counts: Vec<u64>,
    /// Most bytes of UT1 list files read for the delta list (`u64::MAX`: every category).
    pub changes_ut1_bytes: u64,
    /// Entries of the verified cuckoo list a delta is applied to (10⁶ at full size).
    pub changes_apply_entries: u64,
    /// Changes in the applied delta (10,000 at full size).
    pub changes_apply_changes: u64,
    /// Timed applies (the median is reported).
    pub changes_apply_runs: usize,
    /// Entries of the synthetic domain lists of the peers section (10⁵ and 10⁶ at full size).
    pub peers_domains: Vec<u64>,
    /// Clean URLs each structure of the peers section is asked (10⁷ at full size: a rate of
    /// 10⁻⁹ shows as none, within an interval below 4·10⁻⁷; Safe Browsing's and BinaryFuse16's
    /// rates within about ±7 %).
    pub peers_clean_urls: u64,
    /// Clean URLs, and as many URLs below entries, timed per structure and round.
    pub peers_timed_urls: usize,
    /// Timed rounds per structure (interleaved; the median is kept).
    pub peers_repetitions: usize,
}

impl Sizes {
    /// The committed report's sizes.
    pub fn full() -> Self {
        Sizes {
            dataset_random: 1_000_000,
            sweep_keys: 100_000,
            sweep_target_false_positives: 2_000.0,
            sweep_min_queries: 1_000_000,
            sweep_max_queries: 50_000_000,
            hash_random: 1_000_000,
            hash_key_limit: usize::MAX,
            hash_repetitions: 7,
            memory_items: vec![10_000, 100_000, 1_000_000, 10_000_000, 100_000_000],
            memory_build_max: 100_000_000,
            hashset_build_max: 10_000_000,
            fingerprint_build_max: 100_000_000,
            memory_queries: 10_000_000,
            scale_keys: 100_000_000,
            scale_queries: 10_000_000,
            scale_member_checks: 1_000_000,
            changes_bits_keys: 1_000_000,
            changes_target_false_positives: 2_000.0,
            changes_min_queries: 1_000_000,
            changes_max_queries: 30_000_000,
            changes_speed_keys: vec![1_000_000, 10_000_000],
            changes_speed_repetitions: 3,
            changes_delta_counts: vec![1_000, 10_000, 100_000],
            changes_ut1_bytes: u64::MAX,
            changes_apply_entries: 1_000_000,
            changes_apply_changes: 10_000,
            changes_apply_runs: 7,
            peers_domains: vec![100_000, 1_000_000],
            peers_clean_urls: 10_000_000,
            peers_timed_urls: 100_000,
            peers_repetitions: 5,
        }
    }

    /// `--quick`: every section, small.
    pub fn quick() -> Self {
        Sizes {
            dataset_random: 50_000,
            sweep_keys: 10_000,
            sweep_target_false_positives: 300.0,
            sweep_min_queries: 10_000,
            sweep_max_queries: 100_000,
            hash_random: 2_000,
            hash_key_limit: 2_000,
            hash_repetitions: 3,
            memory_items: vec![10_000, 100_000, 1_000_000, 10_000_000, 100_000_000],
            memory_build_max: 100_000,
            hashset_build_max: 100_000,
            fingerprint_build_max: 100_000,
            memory_queries: 100_000,
            scale_keys: 1_000_000,
            scale_queries: 100_000,
            scale_member_checks: 10_000,
            changes_bits_keys: 10_000,
            changes_target_false_positives: 300.0,
            changes_min_queries: 10_000,
            changes_max_queries: 200_000,
            changes_speed_keys: vec![10_000, 100_000],
            changes_speed_repetitions: 1,
            changes_delta_counts: vec![1_000, 10_000],
            changes_ut1_bytes: 1_000_000,
            changes_apply_entries: 20_000,
            changes_apply_changes: 1_000,
            changes_apply_runs: 3,
            peers_domains: vec![10_000],
            peers_clean_urls: 20_000,
            peers_timed_urls: 2_000,
            peers_repetitions: 1,
        }
    }
}
