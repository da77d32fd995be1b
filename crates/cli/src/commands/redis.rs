//! `phishbloom redis push|add|info` and `phishbloom check --redis`: a blocklist shared through
//! Redis or Redis Cluster. Parsing and printing only; the work is `phishbloom_redis`'s.

use phishbloom_blocklist::BlocklistFile;
use std::io::{BufRead, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::check::{answer_with, check_stream_with, StreamOptions};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::printer::Output;
use phishbloom_core::resolve::Category;
use phishbloom_core::{fmt, Blocklist};
use phishbloom_redis::info::Info;
use phishbloom_redis::push::{PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};

use crate::args::{AddArgs, CheckArgs, PushArgs, RedisCommand, RedisInfoArgs};
use crate::commands::{default_threads, plural, stdin_is_file};

/// Runs a `redis` subcommand.
pub fn run(command: &RedisCommand) -> anyhow::Result<ExitCode> {
    match command {
        RedisCommand::Push(args) => push(args),
        RedisCommand::Add(args) => add(args),
        RedisCommand::Info(args) => info(args),
    }
}

fn push(args: &PushArgs) -> anyhow::Result<ExitCode> {
    let target = Target::parse(&args.url)?;
    let list = Blocklist::open(&args.file)?;
    let source = PushSource::of(&list, &args.file)?;
    let options = PushOptions {
        chunk_bytes: args.chunk_bytes,
        grace_secs: args.grace,
        force: args.force,
    };
    let pushed =
        phishbloom_redis::push::push(&mut target.connect()?, &args.name, &source, &options)?;
    let meta = &pushed.meta;
    let (stored, chunking) = match &meta.compact {
        Some(table) => (" of compact table", table.chunking),
        None => ("", meta.chunking),
    };
    println!(
        "pushed {} to {} as list {:?} version {}: {}{stored} in {} of up to {}",
        args.file.display(),
        target.shown(),
        args.name,
        meta.version,
        fmt::bytes(chunking.bytes),
        plural(chunking.chunks(), "chunk", "chunks"),
        fmt::bytes(chunking.chunk_bytes)
    );
    if let Some(verify) = &meta.verify {
        println!(
            "  verification table: {} fingerprints",
            fmt::count(verify.count)
        );
    }
    println!("  categories: {}", categories(list.categories()));
    let exceptions = list.resolver().exceptions().len() as u64;
    if exceptions > 0 {
        println!("  exceptions: {}", fmt::count(exceptions));
    }
    match pushed.previous {
        Some(old) => println!(
            "  version {old} replaced; its keys expire in {} s",
            args.grace
        ),
        None => println!("  first version of this list"),
    }
    Ok(ExitCode::SUCCESS)
}

fn add(args: &AddArgs) -> anyhow::Result<ExitCode> {
    let target = Target::parse(&args.url)?;
    let mut lines: Vec<Vec<u8>> = args.keys.iter().map(|k| k.as_bytes().to_vec()).collect();
    if lines.is_empty() {
        for line in std::io::stdin().lock().split(b'\n') {
            let line = line.context("<stdin>: cannot read")?;
            let line = phishbloom_text::line::content(&line);
            if !line.is_empty() {
                lines.push(line.to_vec());
            }
        }
    }
    anyhow::ensure!(
        !lines.is_empty(),
        "no keys to add: give them as arguments or on standard input"
    );
    let keys: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let added = phishbloom_redis::add::add(
        &mut target.connect()?,
        &args.name,
        &keys,
        args.category.as_deref(),
    )?;
    println!(
        "added {} to list {:?} version {} on {}: {} newly set; keys whose bits were all set already: {}",
        plural(added.keys, "key", "keys"),
        args.name,
        added.version,
        target.shown(),
        plural(added.new_bits, "bit", "bits"),
        fmt::count(added.already_set)
    );
    Ok(ExitCode::SUCCESS)
}

fn info(args: &RedisInfoArgs) -> anyhow::Result<ExitCode> {
    let target = Target::parse(&args.url)?;
    let info = phishbloom_redis::info::info(&mut target.connect()?, &args.name)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print_info(&info);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_info(info: &Info) {
    let meta = &info.meta;
    let list = &meta.list;
    println!("server            {}", info.url);
    println!(
        "list              {:?}, version {} (list version {}, created {}, pushed {}; unix time)",
        list.name, meta.version, list.version, list.created, meta.pushed
    );
    let keys = match list.scheme {
        KeyScheme::Expressions => "URL entries (domain and URL semantics)",
        KeyScheme::Exact => "exact keys",
        KeyScheme::Folded => "exact keys, compared without case",
        KeyScheme::Url => "whole URLs, lightly normalized",
        KeyScheme::Keywords => "keywords and phrases (whole-phrase checks only)",
        KeyScheme::Near => "documents (near-duplicates by SimHash)",
    };
    println!("entries           {} {keys}", fmt::count(list.entries));
    println!("set fingerprint   {} (as pushed)", list.fingerprint);
    if let Some(p) = list.target_fpp {
        println!("target rate       {} per checked item", fmt::percent(p));
    }
    if !meta.is_compact() {
        println!(
            "filter            blocked layout, xxh3 hash: m = {} bits, k = {}, {}",
            fmt::count(meta.num_bits),
            meta.num_hashes,
            fmt::bytes(meta.chunking.bytes)
        );
        println!(
            "chunks            {} of up to {}, every checksum verified",
            fmt::count(info.chunks_verified),
            fmt::bytes(meta.chunking.chunk_bytes)
        );
    }
    println!("categories        {}", categories(&info.categories));
    if info.exceptions > 0 {
        println!(
            "exceptions        {} entries allowed even where a less specific entry lists them",
            fmt::count(info.exceptions)
        );
    }
    match &meta.verify {
        Some(_) => println!(
            "verification      {} fingerprints{}, checksums verified: every hit is confirmed",
            fmt::count(info.verification_verified),
            if info.verification_categories {
                " with their entries' categories"
            } else {
                ""
            }
        ),
        None => println!("verification      none"),
    }
    println!(
        "added             {} since the push",
        plural(info.added, "key", "keys")
    );
    if let Some(prefixes) = info.compact_prefixes {
        println!(
            "compact table     {} prefixes, checksums verified: each reader holds the table and \
             answers from it",
            fmt::count(prefixes)
        );
    }
    if let Some(filter) = &info.filter {
        println!(
            "fill              {:.4} of bits set, ~{} keys estimated from the fill",
            filter.fill_ratio,
            fmt::count(filter.estimated_items.min(u64::MAX as f64) as u64)
        );
        println!(
            "rate per probe    {} from the bits now",
            fmt::percent(filter.expected_fpp_now)
        );
    }
    if let Some(checksum) = &meta.file_checksum {
        println!("pushed file       checksum {checksum}");
    }
}

/// `phishing (1,204), gambling (310)`: as `phishbloom info` lists them.
fn categories(categories: &[Category]) -> String {
    categories
        .iter()
        .map(|c| format!("{} ({})", c.name, fmt::count(c.entries)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `check --redis URL --name NAME`: the verdicts of `check FILE` on the pushed file, through
/// Redis; exit 0 if any key is listed, 1 if none.
pub fn check(args: &CheckArgs, url: &str, name: &str, output: Output) -> anyhow::Result<ExitCode> {
    let target = Target::parse(url)?;
    let mut remote = RedisBlocklist::open(&target, name)?;
    if args.verify {
        remote.require_verification()?;
    }
    if !args.category.is_empty() {
        remote.keep_categories(&args.category)?;
    }
    // Without a file, the first positional argument is a key.
    let keys: Vec<&[u8]> = args
        .filter
        .iter()
        .map(|f| f.as_os_str().as_bytes())
        .chain(args.keys.iter().map(|k| k.as_bytes()))
        .collect();
    let options = StreamOptions {
        input_is_file: stdin_is_file(),
        ..StreamOptions::new(output, default_threads(args.threads))
    };
    let stats = if keys.is_empty() {
        // One connection per worker of the one stream checker, as `check FILE` runs.
        let mut workers = vec![remote];
        for _ in 1..options.threads {
            let mut another = RedisBlocklist::open(&target, name)?;
            if !args.category.is_empty() {
                another.keep_categories(&args.category)?;
            }
            workers.push(another);
        }
        check_stream_with(
            workers,
            std::io::stdin(),
            Path::new("<stdin>"),
            std::io::stdout().lock(),
            &options,
        )?
    } else {
        let mut out = Vec::new();
        let stats = answer_with(&mut remote, keys.into_iter(), output, &mut out)?;
        std::io::stdout().lock().write_all(&out)?;
        stats
    };
    Ok(if stats.listed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
