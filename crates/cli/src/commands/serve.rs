//! `phishbloom serve`: answers checks over HTTP/JSON and the Redis protocol from blocklist
//! files, reloading them on SIGHUP or when they are replaced, until SIGTERM.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use phishbloom_server::server::{run_blocking, Bound};
use phishbloom_server::{Limits, ListSpec, Lists, Shared, Token};

/// The HTTP address when neither `--http` nor `--resp` is given.
const DEFAULT_HTTP: &str = "127.0.0.1:8080";

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
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// A positive number of seconds given to `--FLAG`.
pub fn seconds(value: f64, flag: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| anyhow::anyhow!("--{flag} {value}: give a positive number of seconds"))
}

/// The `NAME=FILE` (or `FILE`) list arguments, parsed.
pub fn list_specs(lists: &[String]) -> anyhow::Result<Vec<ListSpec>> {
    Ok(lists
        .iter()
        .map(|arg| ListSpec::parse(arg))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Opens the lists, binds, prints the addresses and serves until SIGTERM (exit 0).
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    crate::commands::init_logging();
    let specs = list_specs(&args.lists)?;
    let limits = Limits {
        max_body: args.max_body,
        max_batch: args.max_batch,
        header_timeout: seconds(args.header_timeout, "header-timeout")?,
        idle_timeout: seconds(args.idle_timeout, "idle-timeout")?,
        body_timeout: seconds(args.body_timeout, "body-timeout")?,
        max_pipeline: args.max_pipeline.max(1),
        max_bulk: args.max_bulk,
        drain_timeout: seconds(args.drain_timeout, "drain-timeout")?,
        reload_interval: seconds(args.reload_interval, "reload-interval")?,
        ..Limits::default()
    };
    let token = args.token_file.as_deref().map(Token::read).transpose()?;
    let lists = Lists::open(&specs, Arc::default())?;
    let shared = Arc::new(Shared {
        lists,
        limits,
        token,
    });
    let http = match (&args.http, &args.resp) {
        (None, None) => Some(DEFAULT_HTTP),
        (http, _) => http.as_deref(),
    };
    run_blocking(
        shared,
        http,
        args.resp.as_deref(),
        args.threads.unwrap_or(0),
        |bound: Bound| {
            // The addresses go to standard output, one a line, for scripts that start the server on
            // port 0; a closed output does not stop the server.
            let mut out = std::io::stdout().lock();
            if let Some(addr) = bound.http {
                let _ = writeln!(out, "http http://{addr}");
            }
            if let Some(addr) = bound.resp {
                let _ = writeln!(out, "resp redis://{addr}");
            }
            let _ = out.flush();
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
