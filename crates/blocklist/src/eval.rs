//! Measuring a list on a labelled dataset — the product's `phishbloom eval` and `demo`, seeds
//! 000/001's experiment: build from the phishing rows, then query every phishing URL (false
//! negatives), every benign URL and N random URLs (false positives), with whole keys
//! ([`run`]) and with URL semantics ([`run_urls`]); each measured rate comes with its 95 %
//! Wilson interval and the theory beside it ([`Measurement`]).
//!
//! The lab's report runs the same experiment (its dataset section); it depends on this module,
//! never the reverse.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{AnyFilter, HashStrategy, LayoutKind};

use crate::entries::{read_entries, EntrySource};
use crate::source::{read_list, Input, LabelFilter, ListOptions, DEFAULT_LABEL};
use crate::Result;
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{per_item_fpp, per_probe_fpp, Matcher, Scratch};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::KeyList;
use phishbloom_core::{Blocklist, BuildOptions, Kind};

/// The labelled dataset's default path, relative to the repository root (where `cargo run` runs).
pub const DEFAULT_DATASET: &str = "../shared/data/dataset.csv";

/// Seed 000's test URL: `http://` + 10 random lowercase letters + `.com`.
pub fn random_url(rng: &mut SplitMix64) -> String {
    let mut url = String::with_capacity(21);
    url.push_str("http://");
    for _ in 0..10 {
        url.push(char::from(b'a' + rng.below(26) as u8));
    }
    url.push_str(".com");
    url
}

/// What to run.
#[derive(Clone, Debug)]
pub struct EvalConfig {
    /// The labelled CSV (`url,isMalicious`).
    pub data: PathBuf,
    /// Target false-positive rate.
    pub fpp: f64,
    /// Filter layout.
    pub layout: LayoutKind,
    /// Hash strategy.
    pub strategy: HashStrategy,
    /// How many random `http://xxxxxxxxxx.com` URLs to query.
    pub random_queries: u64,
    /// Seed of the random URLs.
    pub seed: u64,
}

/// The benign label of dataset.csv.
pub const BENIGN_LABEL: &str = "1";

/// Everything the experiment measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EvalReport {
    /// The dataset read.
    pub data: PathBuf,
    /// Filter layout.
    #[serde(serialize_with = "phishbloom_core::serialize_display")]
    pub layout: LayoutKind,
    /// Hash strategy.
    pub hash: &'static str,
    /// Key normalization.
    pub key_scheme: KeyScheme,
    /// Target rate.
    pub target_fpp: f64,
    /// n: distinct phishing keys inserted.
    pub n: u64,
    /// m.
    pub m: u64,
    /// k.
    pub k: u32,
    /// Bytes of the bit array.
    pub bytes: u64,
    /// m / n.
    pub bits_per_key: f64,
    /// Time to insert the n keys, in milliseconds.
    pub build_ms: f64,
    /// Phishing URLs queried.
    pub phishing_queries: u64,
    /// Phishing URLs the filter missed (a Bloom filter must have none).
    pub false_negatives: u64,
    /// The dataset's benign URLs as non-members.
    pub benign: Measurement,
    /// Benign rows whose key equals a phishing key after normalization (not counted as queries).
    pub benign_overlapping_phishing: u64,
    /// Random URLs as non-members.
    pub random: Measurement,
    /// Seed of the random URLs.
    pub seed: u64,
}

/// Runs the experiment.
pub fn run(config: &EvalConfig) -> Result<EvalReport> {
    let input = Input::Path(config.data.clone());
    let scheme = KeyScheme::Url;
    let phishing = dataset_lines(&input, scheme, LabelFilter::Default)?;
    let benign = dataset_lines(&input, scheme, benign_rows())?;

    let n = phishing.len() as u64;
    let started = Instant::now();
    let mut filter = AnyFilter::new(config.layout, n.max(1), config.fpp, config.strategy)?;
    filter.insert_parallel(&phishing.as_slices(), 1);
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let theory = filter.theoretical_fpp(n as f64);

    let members: HashSet<&[u8]> = phishing.iter().collect();
    let false_negatives = count_listed(&filter, &phishing.as_slices(), false);
    let (benign_queries, overlap): (Vec<&[u8]>, Vec<&[u8]>) =
        benign.iter().partition(|key| !members.contains(key));
    let benign_hits = count_listed(&filter, &benign_queries, true);

    let mut rng = SplitMix64::new(config.seed);
    let mut random = KeyList::default();
    let mut scratch = Vec::new();
    for _ in 0..config.random_queries {
        scheme.normalize_into(random_url(&mut rng).as_bytes(), &mut scratch);
        if !members.contains(scratch.as_slice()) {
            random.push(&scratch);
        }
    }
    let random_hits = count_listed(&filter, &random.as_slices(), true);

    Ok(EvalReport {
        data: config.data.clone(),
        layout: config.layout,
        hash: config.strategy.name(),
        key_scheme: scheme,
        target_fpp: config.fpp,
        n,
        m: filter.num_bits(),
        k: filter.num_hashes(),
        bytes: filter.size_in_bytes(),
        bits_per_key: filter.num_bits() as f64 / n as f64,
        build_ms,
        phishing_queries: n,
        false_negatives,
        benign: Measurement::new(benign_hits, benign_queries.len() as u64, theory),
        benign_overlapping_phishing: overlap.len() as u64,
        random: Measurement::new(random_hits, random.len() as u64, theory),
        seed: config.seed,
    })
}

/// Counts the keys answered `listed` (or, with `listed == false`, answered `clean`).
fn count_listed(filter: &AnyFilter, keys: &[&[u8]], listed: bool) -> u64 {
    let mut answers = Vec::new();
    filter.contains_batch(keys, &mut answers);
    answers.iter().filter(|&&a| a == listed).count() as u64
}

/// The same experiment through URL semantics: phishing rows as list entries, queries
/// canonicalized and matched by their lookup expressions, the Bloom matcher judged against the
/// exact one.
#[derive(Clone, Debug, serde::Serialize)]
pub struct UrlEvalReport {
    /// Distinct entries (domain + URL).
    pub entries: u64,
    /// Domain entries among them.
    pub domain_entries: u64,
    /// Phishing rows that are not valid entries.
    pub rejected_rows: u64,
    /// Expressions per URL the filter is sized for (E).
    pub expression_bound: u32,
    /// Per-probe target rate `f = 1 − (1 − p)^{1/E}`.
    pub per_probe_fpp: f64,
    /// m.
    pub m: u64,
    /// k.
    pub k: u32,
    /// Bytes of the bit array.
    pub bytes: u64,
    /// Phishing URLs the Bloom matcher missed (must be 0).
    pub false_negatives: u64,
    /// Benign URLs the exact matcher lists (true matches under URL semantics; not queries).
    pub benign_listed_exactly: u64,
    /// Benign URLs as non-members: Bloom-listed but not exactly listed, per URL.
    pub benign: Measurement,
    /// Random URLs as non-members.
    pub random: Measurement,
    /// Expressions per benign URL that can be false positives (all but the top label's, which
    /// only the list's own single-label domains confirm, exactly): 50th, 90th, 99th percentile
    /// and maximum.
    pub expressions_p50_p90_p99_max: [usize; 4],
}

/// Runs the URL-semantics experiment on the dataset with a blocked Bloom matcher sized for a
/// per-URL rate `config.fpp` at `expression_bound` expressions per URL.
pub fn run_urls(config: &EvalConfig, expression_bound: u32) -> Result<UrlEvalReport> {
    let input = Input::Path(config.data.clone());
    let (set, summary) = read_entries(&[EntrySource::list(input.clone(), ListOptions::default())])?;
    let entries = &set.entries;
    let kind = match config.layout {
        LayoutKind::Classic => Kind::Classic,
        LayoutKind::Blocked => Kind::Blocked,
        LayoutKind::Split => Kind::Split,
    };
    let bloom = Blocklist::from_entries(
        &set,
        &BuildOptions {
            kind,
            fpp: config.fpp,
            expression_bound,
            // The filter's own rate, measured against its theory: the host gate (on in
            // `build`) answers no URL the filter does not, and would hide most of its false
            // positives from the measurement.
            host_gate: false,
            ..BuildOptions::default()
        },
    )?;
    let exact = ExactMatcher::new(entries);
    // A classic or blocked blocklist has one filter.
    let Some(filter) = bloom.filter() else {
        unreachable!("a {kind} blocklist has one filter")
    };
    let probe_theory = filter.theoretical_fpp(entries.len() as f64);

    let mut scratch = Scratch::default();
    let phishing = dataset_lines(&input, KeyScheme::Exact, LabelFilter::Default)?;
    let false_negatives = phishing
        .iter()
        .filter_map(|line| phishbloom_url::canonicalize(line).ok())
        .filter(|url| bloom.find_url(url, &mut scratch).is_none())
        .count() as u64;

    let mut judge = NonMembers {
        bloom: &bloom,
        exact: &exact,
        probe_theory,
        scratch,
    };
    let benign_lines = dataset_lines(&input, KeyScheme::Exact, benign_rows())?;
    let mut counts = Vec::new();
    let (benign, benign_listed_exactly) = judge.measure(
        &mut benign_lines
            .iter()
            .filter_map(|l| phishbloom_url::canonicalize(l).ok()),
        &mut counts,
    );
    let percentiles = percentiles(&mut counts);
    let mut rng = SplitMix64::new(config.seed);
    let (random, _) = judge.measure(
        &mut (0..config.random_queries)
            .filter_map(|_| phishbloom_url::canonicalize(random_url(&mut rng).as_bytes()).ok()),
        &mut Vec::new(),
    );
    Ok(UrlEvalReport {
        entries: entries.len() as u64,
        domain_entries: summary.domains,
        rejected_rows: summary.rejected,
        expression_bound,
        per_probe_fpp: per_probe_fpp(config.fpp, expression_bound),
        m: filter.num_bits(),
        k: filter.num_hashes(),
        bytes: filter.size_in_bytes(),
        false_negatives,
        benign_listed_exactly,
        benign,
        random,
        expressions_p50_p90_p99_max: percentiles,
    })
}

/// The dataset's lines as keys of `scheme`, those of the rows `label` selects.
fn dataset_lines(input: &Input, scheme: KeyScheme, label: LabelFilter) -> Result<KeyList> {
    let options = ListOptions {
        scheme,
        label,
        ..ListOptions::default()
    };
    Ok(read_list(input, &options, &mut |_| {})?.0)
}

/// The dataset's benign rows.
fn benign_rows() -> LabelFilter {
    LabelFilter::Equals {
        column: DEFAULT_LABEL.0.to_string(),
        value: BENIGN_LABEL.to_string(),
    }
}

/// Non-member queries judged: the Bloom matcher's answers against the exact matcher's.
struct NonMembers<'a> {
    bloom: &'a Blocklist,
    exact: &'a ExactMatcher,
    /// The filter's theoretical per-probe rate.
    probe_theory: f64,
    scratch: Scratch,
}

impl NonMembers<'_> {
    /// Bloom-listed-but-not-exact URLs among `urls` measured against their summed theoretical
    /// rate, and how many the exact matcher lists (not queries); each query's expression count
    /// is pushed to `counts`.
    fn measure(
        &mut self,
        urls: &mut dyn Iterator<Item = phishbloom_url::CanonicalUrl>,
        counts: &mut Vec<usize>,
    ) -> (Measurement, u64) {
        let (mut hits, mut queries, mut theory, mut exact_listed) = (0u64, 0u64, 0.0f64, 0u64);
        for url in urls {
            if self.exact.find(&url, &mut self.scratch).is_some() {
                exact_listed += 1;
                continue;
            }
            // The top label is probed only by a list with single-label domains, and then
            // exactly (the list's own set): it adds no false positive.
            let count = url.expression_count_without_top();
            counts.push(count);
            queries += 1;
            theory += per_item_fpp(self.probe_theory, count as u32);
            hits += u64::from(self.bloom.find_url(&url, &mut self.scratch).is_some());
        }
        (
            Measurement::new(hits, queries, theory / queries.max(1) as f64),
            exact_listed,
        )
    }
}

/// The 50th, 90th and 99th percentiles and the maximum of `counts` (sorted here; zeros when
/// empty).
fn percentiles(counts: &mut [usize]) -> [usize; 4] {
    let mut percentiles = [0usize; 4];
    counts.sort_unstable();
    if let Some(&max) = counts.last() {
        for (slot, q) in percentiles.iter_mut().zip([0.5, 0.9, 0.99]) {
            *slot = counts[((counts.len() - 1) as f64 * q) as usize];
        }
        percentiles[3] = max;
    }
    percentiles
}

/// z for a two-sided 95 % interval: the 0.975 quantile of the standard normal distribution.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `hits` successes in `trials` Bernoulli trials at quantile `z`:
/// `(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`.
///
/// Source: E. B. Wilson, "Probable inference, the law of succession, and statistical inference"
/// (JASA 1927). Unlike the normal approximation it stays inside [0, 1] and is sensible at zero
/// hits, which is common for false-positive counts. Returns (0, 1) for zero trials.
pub fn wilson_interval(hits: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = hits as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At zero hits (all hits) the exact bound is 0 (1); rounding would leave a speck.
    let low = if hits == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if hits == trials {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (low, high)
}

/// A measured false-positive rate with its 95 % Wilson interval and the theory beside it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Measurement {
    /// Queries made (non-members).
    pub queries: u64,
    /// Queries the filter answered "listed".
    pub false_positives: u64,
    /// `false_positives / queries`.
    pub rate: f64,
    /// Lower end of the 95 % Wilson interval.
    pub ci_low: f64,
    /// Upper end of the 95 % Wilson interval.
    pub ci_high: f64,
    /// The rate theory predicts for the filter's m, k and n.
    pub theoretical: f64,
}

impl Measurement {
    /// The measurement for `false_positives` out of `queries`, against `theoretical`.
    pub fn new(false_positives: u64, queries: u64, theoretical: f64) -> Self {
        let (ci_low, ci_high) = wilson_interval(false_positives, queries, Z_95);
        Measurement {
            queries,
            false_positives,
            rate: if queries == 0 {
                0.0
            } else {
                false_positives as f64 / queries as f64
            },
            ci_low,
            ci_high,
            theoretical,
        }
    }

    /// Whether the theoretical rate lies inside the 95 % interval.
    pub fn agrees_with_theory(&self) -> bool {
        (self.ci_low..=self.ci_high).contains(&self.theoretical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn eval_on_a_generated_dataset_has_no_false_negatives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dataset.csv");
        let mut file = std::fs::File::create(&path).unwrap();
        writeln!(file, "url,isMalicious").unwrap();
        let mut rng = SplitMix64::new(1);
        for i in 0..2000 {
            let label = if i % 4 == 0 { -1 } else { 1 };
            writeln!(file, "{}/{i},{label}", &random_url(&mut rng)[7..]).unwrap();
        }
        writeln!(file, "overlap.com,-1\nOVERLAP.com/,1").unwrap();
        drop(file);
        for layout in [LayoutKind::Classic, LayoutKind::Blocked] {
            let report = run(&EvalConfig {
                data: path.clone(),
                fpp: 0.01,
                layout,
                strategy: HashStrategy::Xxh3,
                random_queries: 20_000,
                seed: 3,
            })
            .unwrap();
            assert_eq!(report.n, 501);
            assert_eq!(report.false_negatives, 0);
            assert_eq!(report.benign_overlapping_phishing, 1);
            assert_eq!(report.benign.queries, 1500);
            assert_eq!(report.random.queries, 20_000);
            // 20,000 queries at ≤ 1 %: the 95 % interval must not lie wholly above the target.
            assert!(report.random.ci_low <= 0.01, "{:?}", report.random);
        }
    }

    #[test]
    fn random_urls_have_seed_000s_shape_and_repeat_per_seed() {
        let mut a = SplitMix64::new(7);
        let url = random_url(&mut a);
        assert_eq!(url.len(), 21);
        assert!(url.starts_with("http://") && url.ends_with(".com"));
        assert!(url[7..17].bytes().all(|b| b.is_ascii_lowercase()));
        assert_eq!(random_url(&mut SplitMix64::new(7)), url);
        assert_ne!(random_url(&mut a), url);
    }

    #[test]
    fn wilson_matches_a_worked_example() {
        // 81 hits in 263 trials (Wikipedia "Binomial proportion confidence interval" example):
        // Wilson 95 % interval ≈ (0.2553, 0.3662).
        let (low, high) = wilson_interval(81, 263, Z_95);
        assert!((low - 0.2553).abs() < 5e-4, "{low}");
        assert!((high - 0.3662).abs() < 5e-4, "{high}");
    }

    #[test]
    fn wilson_is_sane_at_the_edges() {
        let (low, high) = wilson_interval(0, 1000, Z_95);
        assert_eq!(low, 0.0);
        assert!(high > 0.0 && high < 0.004, "{high}");
        assert_eq!(wilson_interval(0, 0, Z_95), (0.0, 1.0));
        let (low, high) = wilson_interval(1000, 1000, Z_95);
        assert!(low > 0.99 && high == 1.0);
    }

    #[test]
    fn measurement_reports_agreement() {
        let m = Measurement::new(100, 10_000, 0.0101);
        assert_eq!(m.rate, 0.01);
        assert!(m.agrees_with_theory());
        assert!(!Measurement::new(300, 10_000, 0.01).agrees_with_theory());
    }
}
