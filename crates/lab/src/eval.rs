//! The experiment of seeds 000/001 on the real dataset: build from the phishing rows, then query
//! every phishing URL (false negatives), every benign URL and N random URLs (false positives).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use phishbloom_blocklist::engine::exact::ExactMatcher;
use phishbloom_blocklist::engine::{per_item_fpp, per_probe_fpp, Matcher, Scratch};
use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_blocklist::source::{
    read_list, Input, KeyList, LabelFilter, ListOptions, DEFAULT_LABEL,
};
use phishbloom_blocklist::{Blocklist, BuildOptions, KeyScheme, Kind};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{AnyFilter, HashStrategy, LayoutKind};

use crate::error::Result;
use crate::random_url;
use crate::stats::Measurement;

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
    #[serde(serialize_with = "crate::serialize_display")]
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
    let read = |label: LabelFilter| {
        let options = ListOptions {
            label,
            scheme,
            ..ListOptions::default()
        };
        read_list(&input, &options, &mut |_| {}).map(|(keys, _)| keys)
    };
    let phishing = read(LabelFilter::Default)?;
    let benign = read(LabelFilter::Equals {
        column: DEFAULT_LABEL.0.to_string(),
        value: BENIGN_LABEL.to_string(),
    })?;

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
    /// Expressions per benign URL: 50th, 90th, 99th percentile and maximum.
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
    let phishing = read_list(
        &input,
        &ListOptions {
            scheme: KeyScheme::Exact,
            ..ListOptions::default()
        },
        &mut |_| {},
    )?
    .0;
    let false_negatives = phishing
        .iter()
        .filter_map(|line| phishbloom_url::canonicalize(line).ok())
        .filter(|url| bloom.find_url(url, &mut scratch).is_none())
        .count() as u64;

    // Non-member queries: (Bloom-listed-but-not-exact count, queries, summed theoretical rate).
    let mut measure = |urls: &mut dyn Iterator<Item = phishbloom_url::CanonicalUrl>,
                       counts: &mut Vec<usize>| {
        let (mut hits, mut queries, mut theory, mut exact_listed) = (0u64, 0u64, 0.0f64, 0u64);
        for url in urls {
            if exact.find(&url, &mut scratch).is_some() {
                exact_listed += 1;
                continue;
            }
            let count = url.expression_count();
            counts.push(count);
            queries += 1;
            theory += per_item_fpp(probe_theory, count as u32);
            hits += u64::from(bloom.find_url(&url, &mut scratch).is_some());
        }
        (
            Measurement::new(hits, queries, theory / queries.max(1) as f64),
            exact_listed,
        )
    };
    let benign_lines = read_list(
        &input,
        &ListOptions {
            scheme: KeyScheme::Exact,
            label: LabelFilter::Equals {
                column: DEFAULT_LABEL.0.to_string(),
                value: BENIGN_LABEL.to_string(),
            },
            ..ListOptions::default()
        },
        &mut |_| {},
    )?
    .0;
    let mut counts = Vec::new();
    let (benign, benign_listed_exactly) = measure(
        &mut benign_lines
            .iter()
            .filter_map(|l| phishbloom_url::canonicalize(l).ok()),
        &mut counts,
    );
    let mut percentiles = [0usize; 4];
    counts.sort_unstable();
    if let Some(&max) = counts.last() {
        for (slot, q) in percentiles.iter_mut().zip([0.5, 0.9, 0.99]) {
            *slot = counts[((counts.len() - 1) as f64 * q) as usize];
        }
        percentiles[3] = max;
    }
    let mut rng = SplitMix64::new(config.seed);
    let (random, _) = measure(
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
