//! Options of the commands that ask a list or measure one: `check`, `eval`, `info`, `demo`,
//! `canon` and `scan`.

use super::*;

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
