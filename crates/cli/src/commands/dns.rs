//! `phishbloom dns LIST… --listen ADDR --upstream ADDR[,ADDR…]`: the lists opened, the server
//! bound and its address printed, then queries answered (phishbloom-dns) until SIGTERM or
//! SIGINT.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::Blocklist;
use phishbloom_dns::forward::Upstreams;
use phishbloom_dns::policy::{BlockWith, Named, Policy};

use crate::args::DnsArgs;

/// Serves until a signal; exit 0 then.
pub fn run(args: &DnsArgs) -> anyhow::Result<ExitCode> {
    let block_with: BlockWith = args.block_with.parse()?;
    anyhow::ensure!(
        args.upstream_timeout > 0.0 && args.upstream_timeout.is_finite(),
        "--upstream-timeout {}: give a positive number of seconds",
        args.upstream_timeout
    );
    let mut lists = Vec::with_capacity(args.lists.len());
    for path in &args.lists {
        let mut list = Blocklist::open(path)?;
        if !args.category.is_empty() {
            list.keep_categories(&args.category, path)?;
        }
        let name = path.file_stem().map_or_else(
            || list.meta().name.clone(),
            |s| s.to_string_lossy().into_owned(),
        );
        lists.push(Named { name, list });
    }
    let policy = Policy::new(lists, block_with);
    let upstreams = Upstreams::new(
        args.upstream.clone(),
        Duration::from_secs_f64(args.upstream_timeout),
    );
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("cannot watch for SIGTERM and SIGINT")?;
    }
    let upstream_list: Vec<String> = args.upstream.iter().map(|a| a.to_string()).collect();
    phishbloom_dns::server::serve_until(args.listen, policy, upstreams, stop, |addr| {
        println!(
            "phishbloom dns: answering on {addr} (UDP and TCP), forwarding to {}",
            upstream_list.join(", ")
        );
        // The line is how a supervisor (or a test) learns the port: out before any query.
        let _ = std::io::stdout().flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
