//! The experiments of seed 003 on UT1 and dataset.csv: false-positive rate of BBF−, BBF+, CaBF−
//! and CaBF against memory (Fig. 3), set size (Fig. 4) and hash count (Fig. 5), for both URL
//! splits, averaged over random subsets with a fixed seed.
//!
//! A false positive is defined as in the paper: a prefix probe that the structure reports
//! present and the exact prefix table does not confirm. Queries are the paper's (every member of
//! the subset, each of its prefixes probed) and foreign URLs (the dataset's benign rows, or
//! another list's URLs) that the list should not hold.

use std::path::PathBuf;

use phishbloom_url::{canonicalize, Entry};

use phishbloom_blocklist::entries::{read_entries, ut1_categories, EntrySource};
use phishbloom_blocklist::source::{read_list, Input, LabelFilter, ListOptions, DEFAULT_LABEL};
use phishbloom_core::engine::cabf::{entry_components, url_components, Split};
use phishbloom_core::keys::KeyScheme;
use phishbloom_filter::cabf::{longest_prefix, PrefixFilter, PrefixTable, Structure};
use phishbloom_filter::rng::SplitMix64;

use crate::error::Result;
use phishbloom_blocklist::eval::BENIGN_LABEL;

/// Parallel filters per structure, as in the paper ("99.8 % of URLs have at most 8 components").
pub const FILTERS: usize = 8;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The UT1 folder (all categories' `urls` and `domains` are read).
    pub ut1: PathBuf,
    /// dataset.csv.
    pub dataset: PathBuf,
    /// Random subsets averaged per point.
    pub repetitions: usize,
    /// Seed of the subsets.
    pub seed: u64,
    /// Smaller sets and fewer points (for tests and CI).
    pub quick: bool,
}

/// One measured point, averaged over the repetitions.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Point {
    /// `fig3-memory`, `fig4-set-size` or `fig5-hashes`.
    pub figure: &'static str,
    /// `ut1` or `dataset`.
    pub dataset: &'static str,
    /// How URLs were cut.
    pub split: &'static str,
    /// BBF-, BBF+, CaBF-, CaBF, CaBF (no check).
    pub structure: String,
    /// Entries inserted.
    pub n: u64,
    /// Total bits of the structure's filters.
    pub bits: u64,
    /// Hash count forced on every filter (0: each structure's own choice).
    pub k: u32,
    /// False-positive rate per prefix probe, member queries (paper's setup).
    pub member_fpp: f64,
    /// False-positive rate per prefix probe, foreign queries.
    pub foreign_fpp: f64,
    /// Foreign queries whose reported longest prefix is wrong (before verification).
    pub foreign_lpm_error: f64,
    /// Prefix probes counted (members + foreign, all repetitions).
    pub probes: u64,
}

/// A list and its foreign query URLs.
struct Corpus {
    name: &'static str,
    entries: Vec<Entry>,
    foreign: Vec<phishbloom_url::CanonicalUrl>,
}

/// The structures compared at one size.
const KINDS: [Structure; 5] = [
    Structure::BbfMinus,
    Structure::BbfPlus,
    Structure::CabfMinus,
    Structure::Cabf,
    Structure::CabfNoCheck,
];

/// Counts from one structure on one subset.
#[derive(Default, Clone, Copy)]
struct Counts {
    member_fp: u64,
    member_negatives: u64,
    foreign_fp: u64,
    foreign_negatives: u64,
    foreign_wrong: u64,
    foreign_queries: u64,
}

/// Probes every prefix of every query and counts the false positives against `table`.
fn measure(
    filter: &dyn PrefixFilter,
    table: &PrefixTable,
    members: &[Vec<String>],
    foreign: &[Vec<String>],
) -> Counts {
    let mut counts = Counts::default();
    let mut candidates = Vec::new();
    let tally =
        |query: &[String], fp: &mut u64, negatives: &mut u64, candidates: &mut Vec<bool>| {
            filter.probe(query, candidates);
            for (len, &reported) in (1..=query.len()).zip(candidates.iter()) {
                if !table.contains(query, len) {
                    *negatives += 1;
                    *fp += u64::from(reported);
                }
            }
        };
    for query in members {
        tally(
            query,
            &mut counts.member_fp,
            &mut counts.member_negatives,
            &mut candidates,
        );
    }
    for query in foreign {
        tally(
            query,
            &mut counts.foreign_fp,
            &mut counts.foreign_negatives,
            &mut candidates,
        );
        let reported = longest_prefix(filter, None, query, &mut candidates);
        counts.foreign_wrong += u64::from(reported != table.longest(query));
        counts.foreign_queries += 1;
    }
    counts
}

/// A random subset of `n` of `items` (partial Fisher–Yates with the experiment's generator).
fn subset<T: Clone>(items: &[T], n: usize, rng: &mut SplitMix64) -> Vec<T> {
    let mut indices: Vec<usize> = (0..items.len()).collect();
    let n = n.min(items.len());
    for i in 0..n {
        let j = i + rng.below((items.len() - i) as u64) as usize;
        indices.swap(i, j);
    }
    indices[..n].iter().map(|&i| items[i].clone()).collect()
}

/// Sizes of one experiment family.
struct Plan {
    n: usize,
    bits_per_entry: Vec<f64>,
    set_sizes: Vec<usize>,
    fixed_bits_per_entry: f64,
    member_queries: usize,
    foreign_queries: usize,
}

fn plan(corpus_len: usize, quick: bool) -> Plan {
    let n = if quick {
        corpus_len.min(5_000)
    } else {
        corpus_len.min(200_000)
    };
    Plan {
        n,
        bits_per_entry: if quick {
            vec![4.0, 8.0, 12.0]
        } else {
            vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0]
        },
        set_sizes: [0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|f| (n as f64 * f) as usize)
            .collect(),
        fixed_bits_per_entry: 8.0,
        member_queries: if quick { 2_000 } else { 20_000 },
        foreign_queries: if quick { 2_000 } else { 20_000 },
    }
}

/// `(figure, n, bits, forced k)` of every point of `figures` under `plan`.
fn grid(plan: &Plan, figures: &[&'static str]) -> Vec<(&'static str, usize, u64, Option<u32>)> {
    // (figure, n, bits, forced k) for every point of this corpus.
    let mut grid = Vec::new();
    if figures.contains(&"fig3-memory") {
        for &b in &plan.bits_per_entry {
            grid.push(("fig3-memory", plan.n, (b * plan.n as f64) as u64, None));
        }
    }
    let fixed_bits = (plan.fixed_bits_per_entry * plan.n as f64) as u64;
    if figures.contains(&"fig4-set-size") {
        for &n in &plan.set_sizes {
            grid.push(("fig4-set-size", n, fixed_bits, None));
        }
    }
    if figures.contains(&"fig5-hashes") {
        let optimum = phishbloom_filter::math::optimal_num_hashes(plan.n as u64, fixed_bits);
        for k in 1..=optimum {
            grid.push(("fig5-hashes", plan.n, fixed_bits, Some(k)));
        }
    }
    grid
}

/// Runs all three figures on one corpus and split; appends the points.
fn run_corpus(
    corpus: &Corpus,
    split: Split,
    config: &Config,
    figures: &[&'static str],
    points: &mut Vec<Point>,
) -> Result<()> {
    let all: Vec<Vec<String>> = corpus
        .entries
        .iter()
        .map(|e| entry_components(split, e))
        .collect();
    let foreign_all: Vec<Vec<String>> = corpus
        .foreign
        .iter()
        .map(|u| url_components(split, u, u.host()))
        .collect();
    let plan = plan(all.len(), config.quick);
    let mut rng = SplitMix64::new(config.seed);
    for (figure, n, bits, k) in grid(&plan, figures) {
        let kinds: Vec<Structure> = if figure == "fig5-hashes" {
            vec![Structure::BbfPlus, Structure::Cabf]
        } else {
            KINDS.to_vec()
        };
        let mut sums = vec![Counts::default(); kinds.len()];
        let mut total_bits = vec![0u64; kinds.len()];
        for _ in 0..config.repetitions {
            let entries = subset(&all, n, &mut rng);
            let members = subset(&entries, plan.member_queries, &mut rng);
            let foreign = subset(&foreign_all, plan.foreign_queries, &mut rng);
            let table = PrefixTable::new(&entries);
            for (slot, &kind) in kinds.iter().enumerate() {
                let filter = kind.build(&entries, FILTERS, bits, k)?;
                total_bits[slot] = filter.bits();
                let c = measure(&*filter, &table, &members, &foreign);
                let s = &mut sums[slot];
                s.member_fp += c.member_fp;
                s.member_negatives += c.member_negatives;
                s.foreign_fp += c.foreign_fp;
                s.foreign_negatives += c.foreign_negatives;
                s.foreign_wrong += c.foreign_wrong;
                s.foreign_queries += c.foreign_queries;
            }
        }
        for ((kind, s), bits) in kinds.iter().zip(&sums).zip(&total_bits) {
            let rate = |fp: u64, of: u64| if of == 0 { 0.0 } else { fp as f64 / of as f64 };
            points.push(Point {
                figure,
                dataset: corpus.name,
                split: split.name(),
                structure: kind.name().to_string(),
                n: n as u64,
                bits: *bits,
                k: k.unwrap_or(0),
                member_fpp: rate(s.member_fp, s.member_negatives),
                foreign_fpp: rate(s.foreign_fp, s.foreign_negatives),
                foreign_lpm_error: rate(s.foreign_wrong, s.foreign_queries),
                probes: s.member_negatives + s.foreign_negatives,
            });
        }
    }
    Ok(())
}

/// Reads the corpora: all UT1 `urls` and `domains` entries with the dataset's benign URLs as
/// foreign queries, and dataset.csv's phishing rows with the same foreign queries.
fn corpora(config: &Config) -> Result<Vec<Corpus>> {
    let benign_options = ListOptions {
        label: LabelFilter::Equals {
            column: DEFAULT_LABEL.0.to_string(),
            value: BENIGN_LABEL.to_string(),
        },
        scheme: KeyScheme::Exact,
        ..ListOptions::default()
    };
    let dataset = Input::Path(config.dataset.clone());
    let (benign, _) = read_list(&dataset, &benign_options, &mut |_| {})?;
    let foreign: Vec<_> = benign.iter().filter_map(|u| canonicalize(u).ok()).collect();
    let categories = ut1_categories(&config.ut1)?;
    let (ut1_entries, _) = read_entries(
        &categories
            .into_iter()
            .map(EntrySource::Ut1)
            .collect::<Vec<_>>(),
    )?;
    let (phishing, _) = read_entries(&[EntrySource::list(dataset, ListOptions::default())])?;
    let (ut1_entries, phishing) = (ut1_entries.entries, phishing.entries);
    Ok(vec![
        Corpus {
            name: "ut1",
            entries: ut1_entries,
            foreign: foreign.clone(),
        },
        Corpus {
            name: "dataset",
            entries: phishing,
            foreign,
        },
    ])
}

/// Runs every figure: Fig. 3 for both splits on both corpora; Figs. 4 and 5 on UT1 with both
/// splits.
pub fn run(config: &Config) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for corpus in corpora(config)? {
        let figures: &[&'static str] = if corpus.name == "ut1" {
            &["fig3-memory", "fig4-set-size", "fig5-hashes"]
        } else {
            &["fig3-memory"]
        };
        for split in [Split::Slash, Split::ReversedHost] {
            run_corpus(&corpus, split, config, figures, &mut points)?;
        }
    }
    Ok(points)
}
