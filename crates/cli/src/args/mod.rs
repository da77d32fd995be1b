//! Command-line arguments of `phishbloom`, declared with clap's derive API: the command line
//! and the values shared by several commands here, each command group's options in its own
//! module (re-exported here, so every options type is `args::NAME`).

mod build;
mod edit;
mod query;
mod serve;

pub use build::*;
pub use edit::*;
pub use query::*;
pub use serve::*;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use phishbloom_blocklist::documents::DocumentFormat;
use phishbloom_blocklist::source::Format;
use phishbloom_filter::{HashStrategy, LayoutKind};
use phishbloom_redis::layout::MAX_CHUNK_BYTES;
use phishbloom_redis::push::DEFAULT_GRACE_SECS;
use phishbloom_server::Limits;

/// The default dataset, relative to the repository root (where `cargo run` runs).
pub use phishbloom_blocklist::eval::DEFAULT_DATASET as DEFAULT_DATA;

/// Is this URL (or key) on a blocklist? Build compact blocklist files from lists (phishing URLs,
/// UT1 categories, e-mail addresses, passwords) and check URLs or keys against them — one at a
/// time, or millions through a pipe.
#[derive(Debug, Parser)]
#[command(
    name = "phishbloom",
    version,
    about,
    long_about = None,
    after_help = "Measurement commands (see `phishbloom help COMMAND`):\n  \
        demo  Build from the default dataset, measure it and show verdicts (the main job)\n  \
        eval  Measure a filter on a labelled dataset: misses and false alarms\n\n\
        The report and the experiments are the lab's: \
        cargo run --release -p phishbloom-lab-cli -- report"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a blocklist file from lists of URLs, domains or keys.
    Build(Box<BuildArgs>),
    /// Check URLs or keys against a blocklist: listed, allowed or clean.
    Check(CheckArgs),
    /// Find a keyword list's keywords and phrases inside e-mails and text: spam or clean per
    /// document (exit 0 if any document matched, 1 if none, 2 on error).
    Scan(ScanArgs),
    /// Show what a blocklist file holds (kind, list version, categories, sections), after
    /// verifying every checksum.
    Info(InfoArgs),
    /// Size a filter before building it: bits, hash count and memory for n keys at a rate.
    Plan(PlanArgs),
    /// Add entries (or keys) to a blocklist file in place; the list version goes up by one.
    Add(ChangeArgs),
    /// Remove entries from a blocklist built with --verify (cuckoo and counting filters forget
    /// them; a blocked filter keeps their bits and its verification section settles them), in
    /// place.
    Remove(ChangeArgs),
    /// Combine two blocklist files of the same kind and sizing into one.
    Merge(MergeArgs),
    /// Write the change between two versions of a list as a small delta file.
    Diff(DiffArgs),
    /// Apply a delta to the blocklist file it was made from, in place, after checking it.
    Apply(ApplyArgs),
    /// Publish a list as a static directory any web server or CDN can host: the file, deltas
    /// to it, and a (signed) index; run it again after every change.
    Publish(PublishArgs),
    /// Keep a local blocklist file current from a published list (a `publish` directory or
    /// serve's /v1/lists/NAME): the whole file first, then only deltas.
    Sync(SyncArgs),
    /// Make an Ed25519 key pair for signing published lists: NAME (secret) and NAME.pub.
    Keygen(KeygenArgs),
    /// Print the canonical form of URLs and, optionally, the lookups made for them: see why a
    /// URL did or did not match.
    Canon(CanonArgs),
    /// Share a blocklist through Redis or Redis Cluster: push a file, add keys, inspect it
    /// (check it with `check --redis URL --name NAME`).
    #[command(subcommand)]
    Redis(RedisCommand),
    /// Answer checks over HTTP/JSON and the Redis protocol (RedisBloom's BF.* and CF.*
    /// commands) from blocklist files, reloading them without a failed request.
    Serve(ServeArgs),
    /// squid's external ACL helper: answers OK for listed URLs, ERR for the rest
    /// (`external_acl_type … %URI`).
    SquidHelper(SquidHelperArgs),
    /// A filtering DNS forwarder: listed names answered as blocked, the rest forwarded.
    Dns(DnsArgs),
    /// Print the completion script for a shell (bash, zsh, fish, powershell).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of phishbloom, or of one of its commands.
    Man(ManArgs),
    /// Build from the default dataset, measure the filter, and show a few verdicts.
    #[command(hide = true)]
    Demo(DemoArgs),
    /// Measure a filter on a labelled dataset (url,isMalicious): missed listed URLs, and false
    /// alarms on its clean URLs and on random ones.
    #[command(hide = true)]
    Eval(EvalArgs),
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
    /// SHA-256(key ‖ i) mod m for each of the k positions: the textbook design, slow (for
    /// comparison with other tools that use it).
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

/// What structure `build` puts in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// A Bloom filter with all k bits of a key in one 64-byte cache line: one memory access
    /// per lookup, about 1.5 % more bits than classic for the same rate. Cannot remove.
    Blocked,
    /// The textbook Bloom filter: k bits anywhere in the array. Cannot remove.
    Classic,
    /// CaBF: parallel filters of URL components with a correlation check (Zhou et al.), URL
    /// entries only. Cannot add or remove.
    Cabf,
    /// A cuckoo filter (Fan et al.): removes entries; fewer bits than Bloom below about 0.3 %.
    Cuckoo,
    /// A counting Bloom filter with 4-bit counters: removes entries, at four times the memory
    /// of a Bloom filter.
    Counting,
    /// A split-block Bloom filter (Parquet's): one bit in each 32-bit word of a 32-byte
    /// block, a branch-free lookup, about 6 % more bits than blocked for the same rate. Cannot
    /// remove; cannot be pushed to Redis.
    Split,
    /// Each entry's fingerprint cut to the bits the rate needs, with its categories, coded
    /// near the information bound: answers like --verify (exact entries and categories) in
    /// about a third of its bits; the list to ship to clients. Default --fpp 1e-9. Static:
    /// changed by rebuilding.
    Compact,
}

impl From<KindArg> for phishbloom_core::Kind {
    fn from(arg: KindArg) -> Self {
        use phishbloom_core::Kind;
        match arg {
            KindArg::Blocked => Kind::Blocked,
            KindArg::Classic => Kind::Classic,
            KindArg::Cabf => Kind::Cabf,
            KindArg::Cuckoo => Kind::Cuckoo,
            KindArg::Counting => Kind::Counting,
            KindArg::Split => Kind::Split,
            KindArg::Compact => Kind::Compact,
        }
    }
}

/// How a near-duplicate list weights shingles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WeightingArg {
    /// Each occurrence of a shingle counts.
    Tf,
    /// Each distinct shingle counts once.
    Set,
}

/// How a near-duplicate list keeps its documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NearMethodArg {
    /// MinHash sketches.
    Minhash,
    /// SimHash fingerprints.
    Simhash,
}

/// Input format on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Recognized from the content (hosts, adblock, phishtank, urlhaus), else CSV if the file
    /// name ends in .csv, else one entry per line; with --exact by the name alone.
    Auto,
    /// CSV with a header row.
    Csv,
    /// One entry (or key) per line.
    Lines,
    /// A hosts file: `0.0.0.0 evil.example` (several names a line), localhost lines skipped.
    Hosts,
    /// AdBlock / uBlock Origin rules: `||evil.example^` blocks, `@@||good.example^` allows;
    /// cosmetic, regex and path rules skipped.
    Adblock,
    /// PhishTank's CSV (phish_id,url,…): the url column.
    Phishtank,
    /// URLhaus's CSV (`#` comments, a `# id,dateadded,url,…` header): the url column.
    Urlhaus,
    /// OpenPhish's feed: one URL per line (the same as lines).
    Openphish,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Auto => Format::Auto,
            FormatArg::Csv => Format::Csv,
            FormatArg::Lines => Format::Lines,
            FormatArg::Hosts => Format::Hosts,
            FormatArg::Adblock => Format::Adblock,
            FormatArg::Phishtank => Format::Phishtank,
            FormatArg::Urlhaus => Format::Urlhaus,
            FormatArg::Openphish => Format::Openphish,
        }
    }
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
    if value.fract() != 0.0 || value < 1.0 {
        return Err(format!("{text} is not a whole number of keys ≥ 1"));
    }
    // 2^53: the largest range in which every whole f64 is exact; far beyond any filter (the
    // largest is 2^40 bits), so a larger count is refused as too large rather than rounded.
    if value > 9.007_199_254_740_992e15 {
        return Err(format!(
            "{text} keys is too large: counts go up to 2^53 (9.0e15), and a filter of more than \
             2^40 bits (128 GiB) cannot be built anyway"
        ));
    }
    Ok(value as u64)
}

/// `phishbloom completions SHELL`.
#[derive(Debug, Args)]
#[command(after_help = "Install it, for bash: phishbloom completions bash > \
    ~/.local/share/bash-completion/completions/phishbloom")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `phishbloom man [COMMAND]`.
#[derive(Debug, Args)]
#[command(after_help = "Install them: phishbloom man > phishbloom.1; \
    phishbloom man build > phishbloom-build.1 (into a man1 directory on MANPATH)")]
pub struct ManArgs {
    /// The command whose page to print (`build` prints phishbloom-build(1)); none, phishbloom(1).
    pub command: Option<String>,
}

/// Options shared by the commands that build a filter.
#[derive(Debug, Args, Clone)]
pub struct FilterArgs {
    /// Target false-positive rate [default: 0.01; 1e-9 with --kind compact].
    #[arg(long, value_parser = parse_fpp)]
    pub fpp: Option<f64>,
    /// Hash strategy.
    #[arg(long = "hash", value_enum, default_value_t = HashArg::Xxh3)]
    pub hash: HashArg,
}

impl FilterArgs {
    /// The rate asked for, or the default of a list of `kind`.
    pub fn fpp_for(&self, kind: phishbloom_core::Kind) -> f64 {
        self.fpp.unwrap_or(kind.default_fpp())
    }
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
        assert!(parse_count("1e30").unwrap_err().contains("too large"));
        assert_eq!(parse_fpp("1e-4"), Ok(1e-4));
        for bad in ["0", "1", "1.5", "-0.1", "NaN", "x"] {
            assert!(parse_fpp(bad).is_err(), "{bad}");
        }
    }
}
