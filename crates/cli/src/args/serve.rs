//! Options of the commands that serve lists or put them elsewhere: `redis`, `serve` and
//! `squid-helper`.

use super::*;

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
    /// Report a list older than this (since it was written) as stale: `/healthz` says
    /// `degraded` with its age (e.g. 8d for a list `sync` should renew weekly).
    #[arg(long, value_name = "DURATION", value_parser = crate::args::edit::parse_duration)]
    pub stale_after: Option<std::time::Duration>,
    /// Sign each list's sync index (`/v1/lists/NAME/index.json`) with this secret key (from
    /// `phishbloom keygen NAME`), with an expiry a week on, so that `sync --trust NAME.pub` and
    /// the extension's "trust" follow the served list.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<std::path::PathBuf>,
    /// Speak TLS on the HTTP and Redis-protocol listeners with this PEM certificate chain
    /// (the server's certificate first); read again when it or the key changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
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

/// Options of `dns`.
#[derive(Debug, Args)]
#[command(
    after_help = "Point clients (or a resolver's forward-zone) at --listen: every query name is \
    checked as `check` checks http://NAME/; a listed name is answered as --block-with says, with \
    an Extended DNS Error (RFC 8914, \"Blocked\") naming the list and entry when the query \
    carries EDNS; every other query goes to the upstreams, first to last, and its answer comes \
    back unchanged unless a CNAME in it leads to a listed name. Runs until SIGTERM or SIGINT."
)]
pub struct DnsArgs {
    /// Blocklist files of URL or domain entries, asked in order.
    #[arg(required = true)]
    pub lists: Vec<PathBuf>,
    /// Where to answer, UDP and TCP (port 0: a free one, printed on start).
    #[arg(long, default_value = "127.0.0.1:5353")]
    pub listen: std::net::SocketAddr,
    /// Upstream DNS servers, tried in order: IP or IP:PORT (port 53), comma-separated.
    #[arg(long, required = true, value_delimiter = ',', value_parser = parse_upstream)]
    pub upstream: Vec<std::net::SocketAddr>,
    /// How a listed name is answered: nxdomain, nodata, refused, null (0.0.0.0 / ::) or an IP.
    #[arg(long, default_value = "nxdomain")]
    pub block_with: String,
    /// Block only entries of these categories (repeat the flag for several).
    #[arg(long, value_name = "NAME")]
    pub category: Vec<String>,
    /// Seconds each upstream gets to answer before the next is asked.
    #[arg(long, default_value_t = 2.0)]
    pub upstream_timeout: f64,
    /// Seconds between looks at the list files: a file replaced (by `sync`, `publish`, a
    /// rebuild) is read again without a dropped query; SIGHUP re-reads them at once.
    #[arg(long, default_value_t = 2.0)]
    pub reload_interval: f64,
    /// Report a list older than this (since it was written) on `/healthz` (`--http`):
    /// `degraded: list NAME is N days old`, e.g. 8d for a list `sync` renews weekly.
    #[arg(long, value_name = "DURATION", value_parser = crate::args::edit::parse_duration)]
    pub stale_after: Option<std::time::Duration>,
    /// Answer GET /metrics (Prometheus' text format) and GET /healthz here (port 0: a free one,
    /// printed on start).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Speak TLS on the --http listener with this PEM certificate chain (the server's
    /// certificate first); read again when it or the key changes.
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "http"])]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Append a line per blocked name to this file: unix time, client, name, list, entry,
    /// categories (tab-separated).
    #[arg(long, value_name = "FILE")]
    pub log_blocked: Option<PathBuf>,
    /// Answer clients from any address (default: loopback and private networks only, REFUSED
    /// to the rest — a forwarder open to the internet is used for reflection attacks).
    #[arg(long)]
    pub any_client: bool,
}

/// An upstream: `IP:PORT`, or an IP alone for port 53.
fn parse_upstream(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    text.parse::<std::net::IpAddr>()
        .map(|ip| std::net::SocketAddr::new(ip, 53))
        .map_err(|_| format!("`{text}` is not IP or IP:PORT"))
}
