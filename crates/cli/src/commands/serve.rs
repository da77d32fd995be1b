//! `phishbloom serve`: answers checks over HTTP/JSON and the Redis protocol from blocklist
//! files, reloading them on SIGHUP or when they are replaced, until SIGTERM.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use phishbloom_server::server::{run_blocking, Bound};
use phishbloom_server::{Limits, ListSpec, Lists, Shared, Token};

use crate::args::ServeArgs;

/// The HTTP address when neither `--http` nor `--resp` is given.
const DEFAULT_HTTP: &str = "127.0.0.1:8080";

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
        sync_interval: seconds(args.sync_interval, "sync-interval")?,
        stale_after: args.stale_after,
        ..Limits::default()
    };
    let token = args.token_file.as_deref().map(Token::read).transpose()?;
    let lists = Lists::open(&specs, Arc::default())?;
    lists.set_allow_rollback(args.allow_rollback);
    let signer = args
        .sign
        .as_deref()
        .map(phishbloom_sync::keys::read_secret)
        .transpose()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(phishbloom_tls::Tls::load(cert, key)?),
        _ => None,
    };
    let secure = tls.is_some();
    let shared = Arc::new(
        Shared::new(lists, limits, token)
            .with_signer(signer)
            .with_tls(tls),
    );
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
            let (http, redis) = if secure {
                ("https", "rediss")
            } else {
                ("http", "redis")
            };
            if let Some(addr) = bound.http {
                let _ = writeln!(out, "http {http}://{addr}");
            }
            if let Some(addr) = bound.resp {
                let _ = writeln!(out, "resp {redis}://{addr}");
            }
            let _ = out.flush();
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
