//! Options of the commands that change, compare and publish lists: `add`, `remove`, `merge`,
//! `diff`, `apply`, `publish`, `sync` and `keygen`.

use super::*;

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
    #[arg(long, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=i64::from(phishbloom_blocklist::plan_check::MAX_EXPRESSIONS)))]
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

/// What `publish` ships to clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShipArg {
    /// The list's compact form, when it has one (a verified list of URLs or keys).
    Compact,
    /// The file as it is.
    File,
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
    /// What clients get: the list's compact form (about a third of a verified file, with
    /// deltas of a few bytes an entry) or the file as it is.
    #[arg(long, value_enum, default_value_t = ShipArg::Compact)]
    pub ship: ShipArg,
    /// With --ship compact: the false-positive rate per checked URL of the compact form.
    #[arg(long, value_parser = parse_fpp, default_value = "1e-9")]
    pub fpp: f64,
    /// The directory to publish into (created if missing).
    pub dir: PathBuf,
    /// Deltas kept: a client further behind fetches the whole file.
    #[arg(long, default_value_t = 30)]
    pub keep: usize,
    /// Sign the index with this secret key (from `phishbloom keygen NAME`); clients check it
    /// with `sync --trust NAME.pub`.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,
    /// Rotate to the --sign key from this old one: the old key signs the hand-over, kept in
    /// DIR/rotations.json and carried by every index from now on; clients that trust the old
    /// key follow it to the new one and from then on refuse the old key alone.
    #[arg(long, value_name = "OLD_KEY", requires = "sign")]
    pub rotate_from: Option<PathBuf>,
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
    /// How long the index stays current: clients refuse it afterwards (a proxy or mirror
    /// serving an old signed index cannot freeze them), so publish again within it — from
    /// cron, changed or not. 0: never expires.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = parse_duration)]
    pub expires: Duration,
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
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    humantime::parse_duration(text).map_err(|e| format!("{e} (give e.g. 300, 30s, 5m, 1h or 7d)"))
}
