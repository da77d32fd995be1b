//! Command-line arguments of `phishbloom`, declared with clap's derive API.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use phishbloom_filter::{HashStrategy, LayoutKind};

/// The default dataset, relative to the repository root (where `cargo run` runs).
pub const DEFAULT_DATA: &str = "../shared/data/dataset.csv";

/// Is this URL (or key) on a blocklist? Bloom-filter blocklists: build, check, evaluate.
#[derive(Debug, Parser)]
#[command(name = "phishbloom", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Size filters: m, k, memory and expected rate for n keys at rate p (seeds 001/004).
    Plan(PlanArgs),
    /// Build a filter file from a CSV or a plain list.
    Build(BuildArgs),
    /// Check keys against a filter: listed or clean (exit 0 if any listed, 1 if none, 2 on error).
    Check(CheckArgs),
    /// Find a keyword list's keywords and phrases inside e-mails and text: spam or clean per
    /// document (exit 0 if any document matched, 1 if none, 2 on error).
    Scan(crate::commands::scan::ScanArgs),
    /// Measure a filter on dataset.csv: false negatives, false positives on benign and random URLs.
    Eval(EvalArgs),
    /// Show a filter file's parameters, fill and current expected rate; verifies its checksum.
    Info(InfoArgs),
    /// The main job: build from the default dataset, evaluate, and show a few verdicts.
    Demo(DemoArgs),
    /// Run an experiment and write its results (CSV, plots, summary) under docs/.
    #[command(subcommand)]
    Experiment(ExperimentCommand),
    /// Regenerate the measured report (Markdown, SVG plots, CSV) from real runs.
    Report(ReportArgs),
    /// Print the canonical form of URLs (Safe Browsing rules) and, optionally, their lookup
    /// expressions: see why a URL did or did not match.
    Canon(CanonArgs),
    /// Share a blocklist through Redis or Redis Cluster: push a file, add keys, inspect it
    /// (check it with `check --redis URL --name NAME`).
    #[command(subcommand)]
    Redis(crate::commands::redis::RedisCommand),
}

/// Filter layout on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LayoutArg {
    /// All k bits of a key in one 64-byte cache line (one memory access per query).
    Blocked,
    /// The textbook layout: k bits anywhere in the array.
    Classic,
}

impl From<LayoutArg> for LayoutKind {
    fn from(arg: LayoutArg) -> Self {
        match arg {
            LayoutArg::Blocked => LayoutKind::Blocked,
            LayoutArg::Classic => LayoutKind::Classic,
        }
    }
}

/// Hash strategy on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum HashArg {
    /// One 128-bit xxh3 per key, enhanced double hashing (fast).
    Xxh3,
    /// SHA-256(key ‖ i) mod m for each i, as in seed 000's Python (slow; for comparison).
    Sha256,
}

impl From<HashArg> for HashStrategy {
    fn from(arg: HashArg) -> Self {
        match arg {
            HashArg::Xxh3 => HashStrategy::Xxh3,
            HashArg::Sha256 => HashStrategy::Sha256,
        }
    }
}

/// Lookup engine for URL entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// One Bloom filter of all entry keys, probed with every lookup expression.
    Bloom,
    /// Seed 003's parallel cardinality-adaptive filters with the correlation check.
    Cabf,
}

/// Input format on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// CSV if the file name ends in .csv, else one key per line.
    Auto,
    /// CSV with a header row.
    Csv,
    /// One key per line.
    Lines,
}

/// Parses a target false-positive rate: a number strictly between 0 and 1.
pub fn parse_fpp(text: &str) -> Result<f64, String> {
    let fpp: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number; give a rate such as 0.01"))?;
    if fpp > 0.0 && fpp < 1.0 {
        Ok(fpp)
    } else {
        Err(format!(
            "{text} is not a rate strictly between 0 and 1 (for 1 % write 0.01)"
        ))
    }
}

/// Parses a positive whole count, also in scientific notation (`1e8`).
pub fn parse_count(text: &str) -> Result<u64, String> {
    let cleaned = text.trim().replace('_', "");
    let value: f64 = cleaned
        .parse()
        .map_err(|_| format!("`{text}` is not a number; give a count such as 10327 or 1e8"))?;
    // 2^53: the largest range in which every whole f64 is exact.
    if !((1.0..=9.007_199_254_740_992e15).contains(&value) && value.fract() == 0.0) {
        return Err(format!("{text} is not a whole number of keys ≥ 1"));
    }
    Ok(value as u64)
}

/// Options of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Expected number of keys; several, comma-separated, print a table (e.g. 1e4,1e5,1e8).
    #[arg(short = 'n', long = "items", value_delimiter = ',', value_parser = parse_count, required = true)]
    pub items: Vec<u64>,
    /// Target false-positive rate(s), comma-separated (e.g. 0.01 or 1e-4,1e-7).
    #[arg(short = 'p', long = "fpp", value_delimiter = ',', value_parser = parse_fpp, default_value = "0.01")]
    pub fpp: Vec<f64>,
    /// Mean key length in bytes, for the hash-set estimate (seed 004's phone numbers: 22).
    #[arg(long, default_value_t = 22)]
    pub key_bytes: u64,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options shared by the commands that build a filter.
#[derive(Debug, Args, Clone)]
pub struct FilterArgs {
    /// Target false-positive rate.
    #[arg(long, value_parser = parse_fpp, default_value = "0.01")]
    pub fpp: f64,
    /// Bit layout.
    #[arg(long, value_enum, default_value_t = LayoutArg::Blocked)]
    pub layout: LayoutArg,
    /// Hash strategy.
    #[arg(long = "hash", value_enum, default_value_t = HashArg::Xxh3)]
    pub hash: HashArg,
}

/// Options of `build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The list: a CSV with a header, or one entry per line; `-` reads standard input.
    #[arg(required_unless_present_any = ["ut1", "keywords"])]
    pub input: Option<String>,
    /// Build a keyword list for `scan` from LIST (one keyword or phrase per line, any language;
    /// `-` reads standard input) instead of a URL or key list.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["input", "ut1", "exact"])]
    pub keywords: Option<String>,
    /// With --keywords: the probes per scanned document that --fpp is stated for (default: 400
    /// tokens × the number of distinct phrase lengths in the list).
    #[arg(long, value_name = "P", requires = "keywords", value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub probes_per_doc: Option<u32>,
    /// UT1 category folders (with `domains` and/or `urls` files) to include; repeatable.
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub ut1: Vec<PathBuf>,
    /// Where to write the blocklist file (written atomically: a reader sees the old file or the
    /// new one; replacing it bumps the list version).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The list's name, recorded in the file (a server names lists by it). Default: the
    /// output file's name without its extension.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Input format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// CSV column holding the keys.
    #[arg(long, default_value = "url")]
    pub column: String,
    /// CSV column selecting rows (default: isMalicious = -1 when that column exists).
    #[arg(long, requires = "label_value")]
    pub label_column: Option<String>,
    /// Value of the label column to select.
    #[arg(long)]
    pub label_value: Option<String>,
    /// Take every CSV row, ignoring labels.
    #[arg(long, conflicts_with_all = ["label_column", "label_value"])]
    pub all_rows: bool,
    /// Keys are exact byte strings (passwords, tokens), not URLs: no canonicalization, no
    /// domain or path-prefix matching.
    #[arg(long, conflicts_with = "ut1")]
    pub exact: bool,
    /// Lookup engine for URL entries.
    #[arg(long, value_enum, default_value_t = EngineArg::Bloom, conflicts_with = "exact")]
    pub engine: EngineArg,
    /// Also store the 64-bit fingerprints of the entries in the file, so that every filter hit
    /// is confirmed exactly (no false positives but 64-bit collisions; 8 bytes per entry).
    #[arg(long)]
    pub verify: bool,
    /// Expressions per URL the filter is sized for: `--fpp` is the rate per checked URL, so each
    /// probe gets 1 - (1 - fpp)^(1/E).
    #[arg(long, default_value_t = phishbloom_blocklist::engine::DEFAULT_EXPRESSION_BOUND, value_parser = clap::value_parser!(u32).range(1..=1040))]
    pub expressions: u32,
    /// Threads for inserting (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Options of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The filter file (with --redis, there is none: every argument is a key).
    #[arg(required_unless_present = "redis")]
    pub filter: Option<PathBuf>,
    /// Keys to check; without any, lines are read from standard input.
    pub keys: Vec<std::ffi::OsString>,
    /// Check against a list in Redis instead of a file: redis://[:PASSWORD@]HOST:PORT,
    /// rediss://… (TLS) or redis+cluster://HOST:PORT,… (see `phishbloom redis push`).
    #[arg(long, value_name = "REDIS_URL", requires = "name")]
    pub redis: Option<String>,
    /// The list's name in Redis (with --redis).
    #[arg(long, requires = "redis")]
    pub name: Option<String>,
    /// Write one JSON object per line instead of `KEY<TAB>listed|clean`.
    #[arg(long)]
    pub json: bool,
    /// Require the file's verification section (written by `build --verify`) and fail if it has
    /// none. Hits are always confirmed when the section is present.
    #[arg(long)]
    pub verify: bool,
    /// Worker threads for standard input (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Options of `eval`.
#[derive(Debug, Args, Clone)]
pub struct EvalArgs {
    /// The labelled dataset (`url,isMalicious`; -1 phishing, 1 benign).
    #[arg(long, default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Random `http://xxxxxxxxxx.com` URLs to query (seed 000's test).
    #[arg(long, value_parser = parse_count, default_value = "1000000")]
    pub random: u64,
    /// Seed of the random URLs.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Options of `info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file.
    pub filter: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The labelled dataset.
    #[arg(long, default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    /// Random URLs to query.
    #[arg(long, value_parser = parse_count, default_value = "1000000")]
    pub random: u64,
}

/// The experiments.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Seed 003: BBF-, BBF+, CaBF-, CaBF false-positive rates vs memory, set size and k.
    Cabf(CabfArgs),
}

/// Options of `experiment cabf`.
#[derive(Debug, Args)]
pub struct CabfArgs {
    /// Directory for results.csv, the plots and README.md.
    #[arg(long, default_value = "docs/cabf")]
    pub out: PathBuf,
    /// The UT1 folder (every category's urls and domains are used).
    #[arg(long, default_value = "../shared/data/ut1")]
    pub ut1: PathBuf,
    /// The labelled dataset (phishing rows as a list; benign rows as foreign queries).
    #[arg(long, default_value = DEFAULT_DATA)]
    pub data: PathBuf,
    /// Random subsets averaged per point.
    #[arg(long, default_value_t = 10)]
    pub repetitions: usize,
    /// Seed of the subsets.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Small sets and few points (seconds, for CI).
    #[arg(long)]
    pub quick: bool,
}

/// Options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Directory to write the report into (README.md, plots, CSV files).
    #[arg(long, default_value = "docs/report")]
    pub out: PathBuf,
    /// Shrink every experiment so the whole report runs in under a minute (for CI).
    #[arg(long)]
    pub quick: bool,
    /// The labelled dataset used by the dataset sections.
    #[arg(long, default_value = DEFAULT_DATA)]
    pub data: PathBuf,
}

/// Options of `canon`.
#[derive(Debug, Args)]
pub struct CanonArgs {
    /// URLs to canonicalize (any bytes); without any, lines are read from standard input.
    pub urls: Vec<std::ffi::OsString>,
    /// Also print each URL's lookup expressions, indented, with their kind.
    #[arg(long)]
    pub expressions: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_rates_parse_like_a_person_writes_them() {
        assert_eq!(parse_count("1e8"), Ok(100_000_000));
        assert_eq!(parse_count("10_327"), Ok(10_327));
        assert!(parse_count("0").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("many").is_err());
        assert_eq!(parse_fpp("1e-4"), Ok(1e-4));
        for bad in ["0", "1", "1.5", "-0.1", "NaN", "x"] {
            assert!(parse_fpp(bad).is_err(), "{bad}");
        }
    }
}
