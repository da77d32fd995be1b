//! Options of `plan` and `build`.

use super::*;

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
    /// in it. Each document is kept as a MinHash sketch of 32 bytes (an exact hash when it is
    /// short), with the shingles many of them share (boilerplate) learned and dropped.
    #[arg(long, conflicts_with_all = ["keywords", "ut1", "exact", "allow", "grow", "capacity", "verify"])]
    pub near: bool,
    /// With --near: how documents are kept: minhash (sketches: copies with 10 % of their words
    /// edited are found, ~62 bytes a document) or simhash (two 64-bit SimHashes: 16 bytes, for
    /// copies with a few words changed).
    #[arg(long, value_enum, requires = "near", default_value_t = NearMethodArg::Minhash)]
    pub near_method: NearMethodArg,
    /// With --near-method simhash: the largest Hamming distance `scan` may ask for (and its
    /// default; 3, as Manku et al. use for 64-bit fingerprints).
    #[arg(long, value_name = "K", requires = "near", value_parser = clap::value_parser!(u32).range(0..=8))]
    pub max_distance: Option<u32>,
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
    /// With --near: tokens per shingle (minhash: default 5; simhash: of the lookup
    /// fingerprint, default 1: words).
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
    /// A list of URLs and domains (one per line; `#` comments) that must never be warned
    /// about: your own sites, a country's top sites. Each is checked at build; where the list
    /// answers for one by a false positive, the expression's fingerprint is stored so it never
    /// does (64 bits each; `info` shows the cost). A member an entry lists is refused.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["exact", "keywords", "near"])]
    pub never: Option<PathBuf>,
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
    /// Refuse entries that are public suffixes (`com`, `co.uk`, `github.io`: each would list
    /// every site registered under it) instead of warning about them.
    #[arg(long, conflicts_with_all = ["exact", "keywords", "near"])]
    pub strict: bool,
    /// URL entries: lookups per checked URL the filter is sized for (default 20). `--fpp` is the
    /// rate per checked URL, so each lookup gets 1 - (1 - fpp)^(1/E).
    #[arg(long, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=i64::from(phishbloom_blocklist::plan_check::MAX_EXPRESSIONS)))]
    pub expressions: Option<u32>,
    /// Size the filter for this many entries even if the lists hold fewer: room to `add` more
    /// later at the promised rate, or shards built apart that `merge` can combine.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub capacity: Option<u64>,
    /// Threads for inserting (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}
