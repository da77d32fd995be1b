//! `phishbloom dns LIST… --listen ADDR --upstream ADDR[,ADDR…]`: the lists opened, the server
//! bound and its address printed, then queries answered (phishbloom-dns) until SIGTERM or
//! SIGINT; the lists re-read when their files change or on SIGHUP.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use phishbloom_dns::forward::Upstreams;
use phishbloom_dns::lists::Lists;
use phishbloom_dns::policy::BlockWith;
use phishbloom_dns::server::{serve_until, Clients, Control};

use crate::args::DnsArgs;

/// Serves until a signal; exit 0 then.
pub fn run(args: &DnsArgs) -> anyhow::Result<ExitCode> {
    let block_with: BlockWith = args.block_with.parse()?;
    let seconds = |value: f64, flag: &str| -> anyhow::Result<Duration> {
        anyhow::ensure!(
            value > 0.0 && value.is_finite(),
            "--{flag} {value}: give a positive number of seconds"
        );
        Ok(Duration::from_secs_f64(value))
    };
    let wait = seconds(args.upstream_timeout, "upstream-timeout")?;
    let reload_every = seconds(args.reload_interval, "reload-interval")?;
    let lists = Arc::new(Lists::open(&args.lists, &args.category, block_with)?);
    let upstreams = Upstreams::new(args.upstream.clone(), wait);
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(Arc::new(phishbloom_tls::Tls::load(cert, key)?)),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let control = Control {
        tls,
        http: args.http,
        log_blocked: args.log_blocked.clone(),
        stop: Arc::new(AtomicBool::new(false)),
        reread: Arc::new(AtomicBool::new(false)),
        reload_every,
        stale_after: args.stale_after,
    };
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&control.stop))
            .context("cannot watch for SIGTERM and SIGINT")?;
    }
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&control.reread))
        .context("cannot watch for SIGHUP")?;
    let upstream_list: Vec<String> = args.upstream.iter().map(|a| a.to_string()).collect();
    let bound = |addr, http: Option<std::net::SocketAddr>| {
        let shown = http.map_or(String::new(), |http| {
            format!("; metrics on {scheme}://{http}")
        });
        println!(
            "phishbloom dns: answering on {addr} (UDP and TCP), forwarding to {}{shown}",
            upstream_list.join(", ")
        );
        // The line is how a supervisor (or a test) learns the port: out before any query.
        let _ = std::io::stdout().flush();
    };
    let report = |outcome: phishbloom_dns::Result<bool>| match outcome {
        Ok(true) => eprintln!("phishbloom dns: lists re-read"),
        Ok(false) => {}
        Err(error) => eprintln!("phishbloom dns: lists kept as they were: {error}"),
    };
    let clients = match args.any_client {
        true => Clients::Any,
        false => Clients::Local,
    };
    serve_until(
        args.listen,
        lists,
        (upstreams, clients),
        control,
        bound,
        report,
    )?;
    Ok(ExitCode::SUCCESS)
}
