//! Command-line arguments of `phishbloom`, declared with clap's derive API.

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
    Build(BuildArgs),
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

/// Options of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Expected number of keys; several, comma-separated, print a table (e.g. 1e4,1e5,1e8).
    #[arg(short = 'n', long = "items", value_delimiter = ',', value_parser = parse_count, required = true)]
    pub items: Vec<u64>,
    /// Target false-positive rate(s), comma-separated (e.g. 0.01 or 1e-4,1e-7).
    #[arg(short = 'p', long = "fpp", value_delimiter = ',', value_parser = parse_fpp, default_value = "0.01")]
    pub fpp: Vec<f64>,
    /// Mean key length in bytes, for the comparison with an exact hash set (22: phone numbers).
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
    /// Hash strategy.
    #[arg(long = "hash", value_enum, default_value_t = HashArg::Xxh3)]
    pub hash: HashArg,
}

/// Options of `build`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every entry belongs to a category: the UT1 folder it came from, its list \
    file's name (or --category), or its CSV row's --category-column. `check` names the categories \
    of the entry that matched (exactly when the file was built with --verify)."
)]
pub struct BuildArgs {
    /// Lists to read: one entry per line, a CSV with a header row, a hosts file, AdBlock rules,
    /// PhishTank's or URLhaus's CSV, OpenPhish's feed (see --format), gzip'd or zstd'd or
    /// not; `-` reads standard input.
    #[arg(required_unless_present_any = ["ut1", "keywords"], value_name = "LIST")]
    pub inputs: Vec<String>,
    /// Build a keyword list for `scan` from LIST (one keyword or phrase per line, any language;
    /// `-` reads standard input) instead of a URL or key list.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["inputs", "ut1", "exact"])]
    pub keywords: Option<String>,
    /// Build a near-duplicate list for `scan` from the documents LIST… names instead: e-mails
    /// (.eml, mbox: one per message, named by Message-ID), HTML pages (their visible text),
    /// texts, or with --format lines one document per line; a directory stands for every file
    /// in it. Each document is kept as one 64-bit SimHash (an exact hash when it is short).
    #[arg(long, conflicts_with_all = ["keywords", "ut1", "exact", "allow", "grow", "capacity", "verify"])]
    pub near: bool,
    /// With --near: the largest Hamming distance `scan` may ask for (and its default); Manku
    /// et al. use 3 for 64-bit fingerprints.
    #[arg(long, value_name = "K", requires = "near", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=8))]
    pub max_distance: u32,
    /// With --near: split the 64 bits into B blocks (default K + 1): C(B, B − K) tables of 8
    /// bytes per document; more blocks, more tables, fewer candidates per lookup.
    #[arg(long, value_name = "B", requires = "near", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub blocks: Option<u32>,
    /// With --near: tokens per shingle of the check fingerprint, a second SimHash every match
    /// must also be near (0: no check; default 2).
    #[arg(long, value_name = "W", requires = "near", value_parser = clap::value_parser!(u32).range(0..=16))]
    pub check_shingle: Option<u32>,
    /// With --near: the largest distance of the check fingerprints for a match (default 8).
    #[arg(long, value_name = "C", requires = "near", value_parser = clap::value_parser!(u32).range(0..=64))]
    pub check_distance: Option<u32>,
    /// With --near: tokens per shingle of the lookup fingerprint (default 1: words).
    #[arg(long, value_name = "W", requires = "near", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub shingle: Option<u32>,
    /// With --near: documents with fewer tokens get an exact hash instead (SimHash is weak on
    /// short texts), matched only by a copy with the same words.
    #[arg(long, value_name = "T", requires = "near", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub min_tokens: Option<u32>,
    /// With --near: how shingles are weighted: tf (each occurrence) or set (each distinct
    /// shingle once).
    #[arg(long, value_enum, requires = "near")]
    pub weighting: Option<WeightingArg>,
    /// With --keywords: the probes per scanned document that --fpp is stated for (default: 400
    /// tokens × the number of distinct phrase lengths in the list).
    #[arg(long, value_name = "P", requires = "keywords", value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub probes_per_doc: Option<u32>,
    /// UT1 category folders (each with `domains` and/or `urls` files); the folder's name is the
    /// category, and UT1's `liste_blanche` folder is read as exceptions.
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub ut1: Vec<PathBuf>,
    /// A list of exceptions (repeatable): URLs and domains that stay allowed even though a
    /// less specific entry lists them ("block evil-hosting.com but not docs.evil-hosting.com").
    /// Stored exactly, never in a filter.
    #[arg(long, value_name = "LIST")]
    pub allow: Vec<String>,
    /// Where to write the blocklist file (written atomically: a reader sees the old file or the
    /// new one; replacing a list moves its version forward).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The list's name, recorded in the file (a server names lists by it). Default: the
    /// output file's name without its extension.
    #[arg(long)]
    pub name: Option<String>,
    /// The category of the entries of the LIST arguments. Default: each file's name without
    /// its extension (`stdin` for standard input).
    #[arg(long)]
    pub category: Option<String>,
    /// A CSV column whose value is each row's category.
    #[arg(long, value_name = "COLUMN")]
    pub category_column: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// How to read the LIST arguments (--allow lists are always recognized): `auto` recognizes hosts files, AdBlock
    /// rules and PhishTank's and URLhaus's CSVs by their content, reads other files ending in
    /// .csv as CSV and the rest as one entry per line (refusing a list that starts with a CSV
    /// header; `#` lines are comments); the others force a format, also on stdin. With --exact,
    /// `auto` goes by the name alone and only `lines` and `csv` apply.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// CSV column holding the entries.
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
    /// Keys are whole strings (passwords, tokens, e-mail addresses), not URLs: no
    /// canonicalization, no domain or path matching.
    #[arg(long, conflicts_with_all = ["ut1", "allow"])]
    pub exact: bool,
    /// With --exact: compare keys without case (Unicode simple case folding), so that
    /// `Spammer@Evil.COM` matches `spammer@evil.com`.
    #[arg(long)]
    pub fold_case: bool,
    /// The structure in the file: blocked, classic or split Bloom filters cannot remove entries;
    /// cuckoo and counting filters can (`phishbloom remove`, with --verify).
    #[arg(long, value_enum, default_value_t = KindArg::Blocked)]
    pub kind: KindArg,
    /// Grow when full (lists of unknown size): a new layer with twice the room at half the
    /// rate, so the whole list keeps --fpp (RedisBloom's scalable scheme). Without it a full
    /// cuckoo filter refuses more entries and a full Bloom filter's rate rises.
    #[arg(long)]
    pub grow: bool,
    /// Build even when --capacity is over 1,000 times the entries, or the file may not fit in
    /// the free disk space.
    #[arg(long)]
    pub force: bool,
    /// Also store the 64-bit fingerprints of the entries in the file, so that every filter hit
    /// is confirmed exactly and `check` names the matched entry's own categories (8 bytes per
    /// entry).
    #[arg(long)]
    pub verify: bool,
    /// URL entries: leave out the host gate, a small filter of the entries' hosts (about
    /// 10 bits per host) that spares `check` the lookups of every other host suffix. Without
    /// it every lookup of a URL is hashed and probed: smaller, slower.
    #[arg(long)]
    pub no_host_gate: bool,
    /// URL entries: lookups per checked URL the filter is sized for (default 20). `--fpp` is the
    /// rate per checked URL, so each lookup gets 1 - (1 - fpp)^(1/E).
    #[arg(long, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=1040))]
    pub expressions: Option<u32>,
    /// Size the filter for this many entries even if the lists hold fewer: room to `add` more
    /// later at the promised rate, or shards built apart that `merge` can combine.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub capacity: Option<u64>,
    /// Threads for inserting (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Options of `add` and `remove`.
#[derive(Debug, Args)]
#[command(
    after_help = "The file is replaced atomically (a new file renamed over it) under a \
    lock (FILE.lock), so concurrent changes wait for each other; on any error it is left as it \
    was. `remove` needs a kind that deletes (cuckoo, counting) and a verification section, and \
    refuses — changing nothing — if any item is not in the list: removing an entry that is not \
    there would make listed entries answer clean."
)]
pub struct ChangeArgs {
    /// The blocklist file.
    pub file: PathBuf,
    /// Entries (domains, URLs) or, for a list of keys, keys.
    #[arg(value_name = "ITEM", required_unless_present = "from")]
    pub items: Vec<String>,
    /// Also take the entries of this list (one per line, or a CSV; `-` reads standard input).
    #[arg(long, value_name = "LIST")]
    pub from: Option<String>,
    /// add: the category the entries join (a new name adds a category; needed when the list
    /// has several); remove: take the entries out of this category only (default: out of the
    /// list).
    #[arg(long, value_name = "NAME")]
    pub category: Option<String>,
    /// Wait at most this long for another writer of the file to finish (e.g. 30, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub lock_timeout: Duration,
}

/// Options of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The first blocklist (its name and categories come first).
    pub first: PathBuf,
    /// The second blocklist: same kind, key scheme and sizing (build shards with the same
    /// --capacity and --fpp).
    pub second: PathBuf,
    /// Where to write the union (replaced atomically; may be the first file).
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Options of `diff`.
#[derive(Debug, Args)]
#[command(
    after_help = "OLD and NEW are blocklist files built with --verify, or list files \
    (read as `build` reads them; their entries go in one category, --category or OLD's file \
    name). The delta names OLD's version and set fingerprint; `phishbloom apply` refuses it on \
    any other file.\n\n\
    An exact delta (the default) carries whole 64-bit fingerprints of the added entries \
    (about 7 bytes each) and the removed entries' positions (about 2 bytes each): every kind \
    can apply it. A --compact delta carries the added entries' fingerprints only as prefixes or \
    as a static (ribbon) filter, whichever is smaller (a filter: about 1.02 × ⌈log2(1/p)⌉ bits each at rate p), \
    for blocked, classic or split files without a verification section, which keep them as a patch \
    beside their filter."
)]
pub struct DiffArgs {
    /// The old version: a blocklist file or a list.
    pub old: String,
    /// The new version: a blocklist file or a list.
    pub new: String,
    /// The delta file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Fingerprint prefixes or a static filter instead of whole fingerprints: smaller,
    /// additions only, for Bloom files without a verification section.
    #[arg(long)]
    pub compact: bool,
    /// With --compact: the false-positive rate per checked item the patch may add at the
    /// receiver (default: the list's rate times the share of the list the additions are).
    #[arg(long, value_name = "RATE", value_parser = parse_fpp, requires = "compact")]
    pub patch_fpp: Option<f64>,
    /// List files: the list's false-positive rate per checked item (blocklist files record it).
    #[arg(long, value_parser = parse_fpp)]
    pub fpp: Option<f64>,
    /// List files: lookups per checked URL the list is sized for (as `build --expressions`).
    #[arg(long, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=1040))]
    pub expressions: Option<u32>,
    /// List files: whole keys rather than URL entries (as `build --exact`).
    #[arg(long)]
    pub exact: bool,
    /// List files with --exact: keys compared without case (as `build --fold-case`).
    #[arg(long, requires = "exact")]
    pub fold_case: bool,
    /// List files: the category of their entries (default: OLD's file name, as `build` named
    /// it).
    #[arg(long, value_name = "NAME")]
    pub category: Option<String>,
}

/// Options of `apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The blocklist file the delta was made from (replaced atomically).
    pub file: PathBuf,
    /// The delta file.
    pub delta: PathBuf,
    /// Wait at most this long for another writer of the file to finish (e.g. 30, 2m).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub lock_timeout: Duration,
}

/// Options of `publish`.
#[derive(Debug, Args)]
#[command(
    after_help = "Layout: DIR/index.json (what is published), DIR/files/ (whole files), \
    DIR/deltas/ (a chain of deltas, one per publish). Every file is written atomically and an \
    index only names files already written, so a web server can serve DIR while it changes. \
    docs/SYNC.md specifies the protocol."
)]
pub struct PublishArgs {
    /// The blocklist file to publish (build it with --verify for deltas; without a
    /// verification section clients fetch whole files).
    pub file: PathBuf,
    /// The directory to publish into (created if missing).
    pub dir: PathBuf,
    /// Deltas kept: a client further behind fetches the whole file.
    #[arg(long, default_value_t = 30)]
    pub keep: usize,
    /// Sign the index with this secret key (from `phishbloom keygen NAME`); clients check it
    /// with `sync --trust NAME.pub`.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,
    /// The least time clients wait between polls (e.g. 300, 30s, 5m, 1h).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub min_interval: Duration,
    /// Drop deltas older than this (e.g. 7d): clients that far behind fetch the whole file.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_chain_age: Option<Duration>,
    /// Publish a version older than the published one (clients refuse it unless they pass
    /// --allow-rollback too).
    #[arg(long)]
    pub allow_rollback: bool,
}

/// Options of `sync`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the file is current or was updated, 2 on error (the \
    file is left as it was). With --every, runs until SIGTERM or SIGINT, logging one line per \
    change or error."
)]
pub struct SyncArgs {
    /// Where the list is published: http(s)://HOST/PATH of a `publish` directory, serve's
    /// http://HOST:PORT/v1/lists/NAME, or a local directory.
    pub url: String,
    /// The local blocklist file to keep current (replaced atomically).
    pub file: PathBuf,
    /// Sync once and exit (the default).
    #[arg(long, conflicts_with = "every")]
    pub once: bool,
    /// Keep syncing, polling this often (never more often than the publisher allows; backing
    /// off after failures as Safe Browsing clients do).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub every: Option<Duration>,
    /// With --every, the first poll comes at a random time within this (spreads a fleet).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub jitter: Duration,
    /// Refuse anything not signed by this public key (NAME.pub from `phishbloom keygen`).
    #[arg(long, value_name = "KEY.pub")]
    pub trust: Option<PathBuf>,
    /// A header sent with every request, e.g. 'Authorization: Bearer TOKEN' (repeatable).
    #[arg(long, value_name = "NAME: VALUE")]
    pub header: Vec<String>,
    /// Also trust this certificate authority (PEM) for HTTPS, beside Mozilla's roots.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Accept a published version older than the local one.
    #[arg(long)]
    pub allow_rollback: bool,
}

/// Options of `keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// The secret key's file; the public key goes to NAME.pub. Neither is overwritten.
    pub name: PathBuf,
}

/// A duration: seconds (`300`) or with a unit (`30s`, `5m`, `1h`, `7d`, `1h 30m`).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    humantime::parse_duration(text).map_err(|e| format!("{e} (give e.g. 300, 30s, 5m, 1h or 7d)"))
}

/// Options of `check`.
#[derive(Debug, Args)]
#[command(
    after_help = "Output, one line per input line, in input order (answers are written \
    before `check` waits for more input, so it works as a co-process):\n  \
    ITEM<TAB>clean\n  \
    ITEM<TAB>listed<TAB>ENTRY<TAB>KIND<TAB>CATEGORIES\n  \
    ITEM<TAB>allowed<TAB>EXCEPTION<TAB>KIND<TAB>CATEGORIES\n  \
    ITEM<TAB>invalid<TAB>REASON\n\
    ENTRY is the most specific list entry that matched; KIND is domain, url or key; CATEGORIES \
    are the entry's categories, comma-separated, prefixed `possible:` when the file has no \
    verification section and so cannot tell which entry matched. `allowed` means an entry \
    matched but an exception at least as specific overrides it (EXCEPTION). `invalid` answers a \
    line a list of URL entries cannot read as a URL, with the reason; a blank line is clean.\n\n\
    --json writes one object per line: key, verdict (clean|listed|allowed|invalid), listed \
    (bool), and if listed or allowed: entry, entry_kind, categories (array), categories_exact \
    (bool), and for allowed: exception, exception_kind; for invalid: error.\n\n\
    Exit status: 0 if any item is listed, 1 if none is, 2 on error (like grep)."
)]
pub struct CheckArgs {
    /// The blocklist file (with --redis, there is none: every argument is an item).
    #[arg(required_unless_present = "redis")]
    pub filter: Option<PathBuf>,
    /// URLs or keys to check; without any, lines are read from standard input.
    pub keys: Vec<OsString>,
    /// Check against a list in Redis instead of a file: redis://[:PASSWORD@]HOST:PORT,
    /// rediss://… (TLS) or redis+cluster://HOST:PORT,… (see `phishbloom redis push`).
    #[arg(long, value_name = "REDIS_URL", requires = "name")]
    pub redis: Option<String>,
    /// The list's name in Redis (with --redis).
    #[arg(long, requires = "redis")]
    pub name: Option<String>,
    /// Answer only for entries of this category (repeatable), e.g. block phishing but not
    /// gambling with one file. `info` lists a file's categories.
    #[arg(long, value_name = "NAME")]
    pub category: Vec<String>,
    /// Write one JSON object per line (fields below).
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
    /// Bit layout.
    #[arg(long, value_enum, default_value_t = LayoutArg::Blocked)]
    pub layout: LayoutArg,
    /// Random `http://xxxxxxxxxx.com` URLs to query as non-members.
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

/// Options of `canon`.
#[derive(Debug, Args)]
pub struct CanonArgs {
    /// URLs to canonicalize (any bytes); without any, lines are read from standard input.
    pub urls: Vec<OsString>,
    /// Also print each URL's lookup expressions, indented, with their kind.
    #[arg(long)]
    pub expressions: bool,
}

/// How `scan` reads its inputs (`build` has its own [`FormatArg`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScanFormatArg {
    /// An mbox (`.mbox`, or a `From ` line then a message), an e-mail message (`.eml`, or
    /// header fields then a blank line), or else text.
    Auto,
    /// Text, scanned as it is (invalid UTF-8 becomes U+FFFD).
    Text,
    /// One RFC 5322 message per file.
    Eml,
    /// An mbox file: one document per message.
    Mbox,
    /// Text with one document per line (named FILE:LINE).
    Lines,
    /// An HTML page: its visible text.
    Html,
}

impl From<ScanFormatArg> for DocumentFormat {
    fn from(arg: ScanFormatArg) -> Self {
        match arg {
            ScanFormatArg::Auto => DocumentFormat::Auto,
            ScanFormatArg::Text => DocumentFormat::Text,
            ScanFormatArg::Eml => DocumentFormat::Eml,
            ScanFormatArg::Mbox => DocumentFormat::Mbox,
            ScanFormatArg::Lines => DocumentFormat::Lines,
            ScanFormatArg::Html => DocumentFormat::Html,
        }
    }
}

/// Options of `scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The keyword list (`phishbloom build --keywords LIST -o kw.bloom`) or near-duplicate list
    /// (`phishbloom build --near DOCS… -o known.bloom`).
    pub list: PathBuf,
    /// A near-duplicate list to ask as well, beside the keyword LIST: each document is
    /// answered with both signals.
    #[arg(long, value_name = "LIST")]
    pub near: Option<PathBuf>,
    /// Near-duplicates: the largest Hamming distance that counts as a copy (default: the
    /// list's own, which is also the most it answers).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=64))]
    pub max_distance: Option<u32>,
    /// Files to scan; standard input when none is given (or for `-`).
    pub files: Vec<PathBuf>,
    /// How to read the inputs.
    #[arg(long, value_enum, default_value_t = ScanFormatArg::Auto)]
    pub format: ScanFormatArg,
    /// Hits (keyword occurrences) a document needs to be reported as spam.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_hits: u64,
    /// Write one JSON object per document instead of `NAME<TAB>spam|clean<TAB>HITS<TAB>…`.
    #[arg(long)]
    pub json: bool,
    /// Require the list's keyword index (written by `build --keywords … --verify`) and fail if
    /// it has none. Hits are always confirmed when the index is present.
    #[arg(long)]
    pub verify: bool,
}

/// The `redis` subcommands.
#[derive(Debug, Subcommand)]
pub enum RedisCommand {
    /// Write a blocked-layout blocklist file into Redis as a new version and make it live.
    Push(PushArgs),
    /// Insert keys into the live version (one BITFIELD per key); without keys, one per line
    /// on standard input.
    Add(AddArgs),
    /// Show a list's version, size and chunks, after verifying every chunk's checksum.
    Info(RedisInfoArgs),
}

/// Options of `redis push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The blocklist file (blocked layout, xxh3 hash: `phishbloom build`'s default).
    pub file: PathBuf,
    /// redis://[:PASSWORD@]HOST:PORT, rediss://… (TLS) or redis+cluster://HOST:PORT,HOST:PORT,…
    /// (the password may come from PHISHBLOOM_REDIS_PASSWORD instead).
    pub url: String,
    /// The list's name: its keys are NAME:current, NAME:vVERSION:meta, NAME:vVERSION:CHUNK, …
    #[arg(long)]
    pub name: String,
    /// Seconds the replaced version stays readable (0 deletes it at once).
    #[arg(long, default_value_t = DEFAULT_GRACE_SECS)]
    pub grace: u64,
    /// Bytes per chunk key: a multiple of 64 up to 1 MiB.
    #[arg(long, default_value_t = MAX_CHUNK_BYTES)]
    pub chunk_bytes: u64,
    /// Push even if keys added with `redis add` since the live version was pushed are not in
    /// the file (they would answer clean).
    #[arg(long)]
    pub force: bool,
}

/// Options of `redis add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The Redis URL (as for push).
    pub url: String,
    /// The list's name.
    #[arg(long)]
    pub name: String,
    /// The category the keys join: one of the list's categories (needed when it has several;
    /// with one, the keys join it).
    #[arg(long, value_name = "NAME")]
    pub category: Option<String>,
    /// Keys (whole-key lists) or entries (`evil.com`, `evil.com/login`) to insert.
    pub keys: Vec<OsString>,
}

/// Options of `redis info`.
#[derive(Debug, Args)]
pub struct RedisInfoArgs {
    /// The Redis URL (as for push).
    pub url: String,
    /// The list's name.
    #[arg(long)]
    pub name: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Blocklist files, each served under its file stem (`lists/phish.bloom` as `phish`) or as
    /// NAME=FILE.
    #[arg(required = true, value_name = "FILE")]
    pub lists: Vec<String>,
    /// Answer HTTP/JSON on this address (default 127.0.0.1:8080 when --resp is not given
    /// either; port 0 picks a free port, printed on standard output).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Answer the Redis protocol (RedisBloom's BF.* and CF.* commands) on this address.
    #[arg(long, value_name = "ADDR")]
    pub resp: Option<String>,
    /// A file holding the bearer token that allows writes (HTTP `Authorization: Bearer`,
    /// Redis `AUTH`); without it, writes are off.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Largest request body read whole, in bytes (larger: 413).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_body)]
    pub max_body: usize,
    /// Most URLs in one JSON batch (more: 413; stream NDJSON instead).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_batch)]
    pub max_batch: usize,
    /// Seconds a client has to send a request's headers.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().header_timeout.as_secs_f64())]
    pub header_timeout: f64,
    /// Seconds a connection may move no byte before it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().idle_timeout.as_secs_f64())]
    pub idle_timeout: f64,
    /// Seconds to receive a whole request body (slower: 408).
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().body_timeout.as_secs_f64())]
    pub body_timeout: f64,
    /// Most pipelined Redis commands answered per connection before their replies are sent.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_pipeline)]
    pub max_pipeline: usize,
    /// Longest Redis bulk string (one key or URL), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_bulk)]
    pub max_bulk: usize,
    /// Seconds requests in flight get to finish after SIGTERM.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().drain_timeout.as_secs_f64())]
    pub drain_timeout: f64,
    /// Seconds between checks of the served files for replacement.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().reload_interval.as_secs_f64())]
    pub reload_interval: f64,
    /// Seconds sync clients (`phishbloom sync`, the browser extension) wait at least between
    /// polls of a list's index.json.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().sync_interval.as_secs_f64())]
    pub sync_interval: f64,
    /// Reload a served file even when it holds an older list version than the one served
    /// (refused and counted otherwise, unless it holds the same set of entries).
    #[arg(long)]
    pub allow_rollback: bool,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Options of `squid-helper`.
#[derive(Debug, Args)]
pub struct SquidHelperArgs {
    /// Blocklist files (FILE or NAME=FILE); a URL listed by any of them is answered OK.
    #[arg(required = true, value_name = "FILE")]
    pub lists: Vec<String>,
    /// Seconds between checks of the files for replacement.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub reload_interval: f64,
    /// Unused; accepted so a squid line can name a log file the way other helpers take one.
    #[arg(long, hide = true)]
    pub log: Option<PathBuf>,
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
