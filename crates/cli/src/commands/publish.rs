//! `publish`, `sync` and `keygen`: the list reaches clients and stays current (the work is
//! phishbloom-sync's; this module parses, delegates and words the results).

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context as _;
use phishbloom_blocklist::now;
use phishbloom_core::fmt;
use phishbloom_sync::client::{Client, Outcome, SyncOptions, Via};
use phishbloom_sync::publish::{PublishOptions, Ship};
use phishbloom_sync::schedule::{run_every, Event};
use phishbloom_sync::{fetch, keys};

use crate::args::{KeygenArgs, PublishArgs, ShipArg, SyncArgs};
use crate::commands::plural;

/// `publish FILE DIR`.
pub fn publish(args: &PublishArgs) -> anyhow::Result<ExitCode> {
    let sign = args.sign.as_deref().map(keys::read_secret).transpose()?;
    let rotate_from = args
        .rotate_from
        .as_deref()
        .map(keys::read_secret)
        .transpose()?;
    let signed = sign.as_ref().map(|k| k.public().id());
    let ship = match args.ship {
        ShipArg::Compact => Ship::Compact { fpp: args.fpp },
        ShipArg::File => Ship::File,
    };
    let options = PublishOptions {
        ship,
        keep: args.keep,
        min_interval: args.min_interval.as_secs(),
        max_chain_age: args.max_chain_age.map(|d| d.as_secs()),
        sign,
        rotate_from,
        allow_rollback: args.allow_rollback,
        now: now(),
        expires: Some(args.expires.as_secs()).filter(|&s| s > 0),
    };
    let published = phishbloom_sync::publish::publish(&args.file, &args.dir, &options)?;
    let index = &published.index;
    let change = match (&published.previous, &published.delta, &published.no_delta) {
        (None, _, _) => "first version".to_string(),
        (Some(prev), Some(delta), _) => {
            format!("delta from v{prev}: {}", fmt::bytes(delta.file.bytes))
        }
        (Some(prev), None, Some(why)) => format!("no delta from v{prev}: {why}"),
        (Some(_), None, None) => "unchanged".to_string(),
    };
    let form = match (published.compact, &published.not_compact) {
        (true, _) => "compact, ".to_string(),
        (false, Some(why)) => format!("the file as it is: {why}; "),
        (false, None) => String::new(),
    };
    println!(
        "{}: {} v{} ({form}{}, {}), {change}; {} kept{}{}{}",
        args.dir.display(),
        index.name,
        index.version,
        plural(index.entries, "entry", "entries"),
        fmt::bytes(index.file.bytes),
        plural(index.deltas.len() as u64, "delta", "deltas"),
        signed.map_or(String::new(), |id| format!("; signed by key {id}")),
        match index.expires {
            0 => String::new(),
            at => format!("; current until {}", fmt::utc(at)),
        },
        match published.removed {
            0 => String::new(),
            n => format!("; {} removed", plural(n as u64, "old file", "old files")),
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// `sync URL FILE [--once | --every DURATION]`.
pub fn sync(args: &SyncArgs) -> anyhow::Result<ExitCode> {
    let trust = args.trust.as_deref().map(keys::read_public).transpose()?;
    let options = SyncOptions {
        trust,
        allow_rollback: args.allow_rollback,
    };
    let ca = args
        .ca_cert
        .as_deref()
        .map(|path| std::fs::read(path).with_context(|| format!("{}: cannot read", path.display())))
        .transpose()?;
    let source = fetch::open_with(&args.url, &args.header, ca.as_deref())?;
    let mut client = Client::new(source, &args.file, options);
    let file = args.file.display().to_string();
    let Some(every) = args.every else {
        let outcome = client.sync_once()?;
        println!("{file}: {}", describe(&outcome));
        return Ok(ExitCode::SUCCESS);
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("cannot install the SIGTERM handler")?;
    }
    eprintln!(
        "phishbloom: sync: keeping {file} current from {} every {} (first poll within {})",
        args.url,
        humantime::format_duration(every),
        humantime::format_duration(args.jitter)
    );
    run_every(
        &mut client,
        every,
        args.jitter,
        &stop,
        |event| match event {
            Event::Synced(outcome @ Outcome::Updated { .. }) => {
                eprintln!("phishbloom: sync: {file}: {}", describe(outcome));
            }
            Event::Synced(Outcome::Current { .. }) => {}
            Event::Failed {
                error,
                failures,
                retry_in,
            } => eprintln!(
                "phishbloom: sync: {file}: error ({failures} in a row; next try in {}): {error}",
                humantime::format_duration(std::time::Duration::from_secs(retry_in.as_secs()))
            ),
        },
    );
    eprintln!("phishbloom: sync: stopped");
    Ok(ExitCode::SUCCESS)
}

/// One line for what a sync did.
fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Current { name, version } => format!("{name} v{version} is current"),
        Outcome::Updated {
            name,
            from,
            to,
            bytes,
            via,
        } => {
            let from = from.map_or("nothing".to_string(), |v| format!("v{v}"));
            let how = match via {
                Via::Whole => "the whole file".to_string(),
                Via::Deltas(n) => plural(*n as u64, "delta", "deltas"),
                Via::WholeAfter(why) => format!("the whole file (the deltas failed: {why})"),
            };
            format!(
                "{name} {from} → v{to} by {how}, {} downloaded",
                fmt::bytes(*bytes)
            )
        }
    }
}

/// `keygen NAME`.
pub fn keygen(args: &KeygenArgs) -> anyhow::Result<ExitCode> {
    let public = keys::keygen(&args.name)?;
    println!(
        "{}: secret key (keep it private; sign with `publish --sign {0}`)\n{}: public key {} \
         (give it to clients: `sync --trust {1}`, or the extension's \"trust\")",
        args.name.display(),
        keys::public_path(&args.name).display(),
        public.id()
    );
    Ok(ExitCode::SUCCESS)
}
