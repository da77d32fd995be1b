//! Section 2's measurements: the dataset's keys as `phishbloom build` normalizes them, and seeds
//! 000/001's experiment on them ([`phishbloom_blocklist::eval`]) for both layouts, with the exact rate each
//! built filter's bits imply.

use std::collections::HashSet;
use std::path::Path;

use phishbloom_blocklist::source::{read_list, Input, LabelFilter, ListOptions, DEFAULT_LABEL};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::KeyList;
use phishbloom_filter::{AnyFilter, HashStrategy, LayoutKind};

use crate::error::Result;
use crate::measure::sizing::TARGET;
use crate::measure::{sizing_error, Settings};
use phishbloom_blocklist::eval::{self, EvalConfig, EvalReport, BENIGN_LABEL};

/// Seed of the random URLs (any fixed value; 2026 is the CLI's default for `eval`).
pub const RANDOM_SEED: u64 = 2026;

/// The dataset's keys as `phishbloom build` normalizes them.
#[derive(Clone, Debug, Default)]
pub struct DatasetKeys {
    /// Distinct phishing keys.
    pub phishing: KeyList,
    /// Distinct benign keys that are not also phishing keys.
    pub benign: Vec<Vec<u8>>,
}

/// Reads at most `limit` phishing and `limit` benign keys of the dataset at `path`
/// (`usize::MAX` for all of them).
pub fn read_keys(path: &Path, limit: usize) -> Result<DatasetKeys> {
    let input = Input::Path(path.to_path_buf());
    let read = |label| {
        let options = ListOptions {
            label,
            scheme: KeyScheme::Url,
            ..ListOptions::default()
        };
        read_list(&input, &options, &mut |_| {}).map(|(keys, _)| keys)
    };
    let all = read(LabelFilter::Default)?;
    let mut phishing = KeyList::default();
    for key in all.iter().take(limit) {
        phishing.push(key);
    }
    let benign_all = read(LabelFilter::Equals {
        column: DEFAULT_LABEL.0.to_string(),
        value: BENIGN_LABEL.to_string(),
    })?;
    let members: HashSet<&[u8]> = phishing.iter().collect();
    let benign = benign_all
        .iter()
        .filter(|k| !members.contains(k))
        .take(limit)
        .map(|k| k.to_vec())
        .collect();
    Ok(DatasetKeys { phishing, benign })
}

/// The experiment on one layout.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DatasetRun {
    /// What [`eval::run`] measured.
    pub report: EvalReport,
    /// The exact false-positive probability of the filter built (the fraction of set bits to
    /// the k-th power, per block for blocked): the measured counts are binomial around it,
    /// while the report's theory is its mean over all filters of this size.
    pub filter_rate_given_bits: f64,
}

/// Section 2's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DatasetResult {
    /// One run per layout: classic, then blocked.
    pub runs: Vec<DatasetRun>,
    /// Random URLs asked for per layout (the runs report how many were non-members).
    pub random_queries: u64,
}

/// Runs the experiment for both layouts; `phishing` are the dataset's phishing keys
/// ([`read_keys`]).
pub fn run(settings: &Settings, phishing: &KeyList) -> Result<DatasetResult> {
    let mut runs = Vec::new();
    for layout in [LayoutKind::Classic, LayoutKind::Blocked] {
        settings
            .progress
            .say(&format!("dataset experiment, {layout} layout"));
        let config = EvalConfig {
            data: settings.data.clone(),
            fpp: TARGET,
            layout,
            strategy: HashStrategy::Xxh3,
            random_queries: settings.sizes.dataset_random,
            seed: RANDOM_SEED,
        };
        let report = eval::run(&config)?;
        // The same filter again (same keys, sizing and hash: the same bits), to read the exact
        // false-positive probability its bits imply; `eval::run` does not return its filter.
        let mut filter = AnyFilter::new(layout, phishing.len() as u64, TARGET, HashStrategy::Xxh3)
            .map_err(sizing_error("dataset experiment", 0, 0))?;
        for key in phishing.iter() {
            filter.insert(key);
        }
        runs.push(DatasetRun {
            report,
            filter_rate_given_bits: filter.expected_fpp(),
        });
    }
    Ok(DatasetResult {
        runs,
        random_queries: settings.sizes.dataset_random,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_blocklist::eval::random_url;
    use phishbloom_filter::rng::SplitMix64;

    #[test]
    fn keys_are_read_distinct_and_benign_keys_exclude_phishing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dataset.csv");
        let mut text = String::from("url,isMalicious\n");
        let mut rng = SplitMix64::new(9);
        for i in 0..400 {
            let label = if i % 4 == 0 { -1 } else { 1 };
            text.push_str(&format!("{}/{i},{label}\n", &random_url(&mut rng)[7..]));
        }
        text.push_str("both.com,-1\nBOTH.com/,1\nboth.com,-1\n");
        std::fs::write(&path, text).unwrap();

        let keys = read_keys(&path, usize::MAX).unwrap();
        assert_eq!(keys.phishing.len(), 101);
        assert_eq!(keys.benign.len(), 300);
        let limited = read_keys(&path, 10).unwrap();
        assert_eq!((limited.phishing.len(), limited.benign.len()), (10, 10));

        let settings = Settings {
            sizes: crate::measure::Sizes {
                dataset_random: 5_000,
                ..crate::measure::Sizes::quick()
            },
            ..Settings::new(path, true, 1, false)
        };
        let result = run(&settings, &keys.phishing).unwrap();
        assert_eq!(result.runs.len(), 2);
        for run in &result.runs {
            assert_eq!(run.report.false_negatives, 0);
            assert!(run.filter_rate_given_bits > 0.0 && run.filter_rate_given_bits < 0.05);
        }
    }
}
