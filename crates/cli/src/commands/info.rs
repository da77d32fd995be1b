//! `phishbloom info`: what a filter file holds, after verifying it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_filter::format::FORMAT_VERSION;
use phishbloom_filter::AnyFilter;
use phishbloom_lookup::matcher::{per_url_fpp, verify_path};
use phishbloom_lookup::KeyScheme;

use crate::args::InfoArgs;
use crate::fmt;

/// The facts `info` prints.
#[derive(serde::Serialize)]
struct Info {
    file: String,
    file_bytes: u64,
    format_version: u32,
    checksum: &'static str,
    layout: String,
    hash: String,
    key_scheme: String,
    num_bits: u64,
    num_hashes: u32,
    bytes: u64,
    items_inserted: u64,
    sized_for_items: Option<u64>,
    target_fpp: Option<f64>,
    fill_ratio: f64,
    estimated_items: f64,
    expected_fpp_now: f64,
    theoretical_fpp_at_items: f64,
    /// For URL-entry filters: expressions per URL the filter was sized for.
    expressions_per_url: Option<u32>,
    /// For URL-entry filters: the per-checked-URL rate at that many expressions.
    per_url_target_fpp: Option<f64>,
    /// For URL-entry filters: whether a fingerprint table for `check --verify` sits beside it.
    verify_table: Option<bool>,
}

/// Loads (which verifies magic, version, sizes and checksum) and describes the filter.
pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let info = describe(&args.filter)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print_text(&info);
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(path: &Path) -> anyhow::Result<Info> {
    let filter = AnyFilter::load(path)?;
    let scheme = KeyScheme::from_code(filter.key_scheme(), path)?;
    let urls = scheme == KeyScheme::Expressions;
    let expressions = filter.key_param().max(1);
    let file_bytes = std::fs::metadata(path)
        .with_context(|| format!("{}: stat failed", path.display()))?
        .len();
    Ok(Info {
        file: path.display().to_string(),
        file_bytes,
        format_version: FORMAT_VERSION,
        checksum: "xxh3-64 verified",
        layout: filter.layout().to_string(),
        hash: filter.hash_strategy().to_string(),
        key_scheme: scheme.name().to_string(),
        num_bits: filter.num_bits(),
        num_hashes: filter.num_hashes(),
        bytes: filter.size_in_bytes(),
        items_inserted: filter.items(),
        sized_for_items: filter.expected_items(),
        target_fpp: filter.target_fpp(),
        fill_ratio: filter.fill_ratio(),
        estimated_items: filter.estimated_items(),
        expected_fpp_now: filter.expected_fpp(),
        theoretical_fpp_at_items: filter.theoretical_fpp(filter.items() as f64),
        expressions_per_url: urls.then_some(expressions),
        per_url_target_fpp: filter
            .target_fpp()
            .filter(|_| urls)
            .map(|f| per_url_fpp(f, expressions)),
        verify_table: urls.then(|| verify_path(path).is_file()),
    })
}

fn print_text(info: &Info) {
    println!(
        "file              {} ({})",
        info.file,
        fmt::bytes(info.file_bytes)
    );
    println!(
        "format            version {}, checksum {}",
        info.format_version, info.checksum
    );
    println!(
        "layout            {} ({} hash, {} keys)",
        info.layout, info.hash, info.key_scheme
    );
    println!(
        "size              m = {} bits, k = {}, {}",
        fmt::count(info.num_bits),
        info.num_hashes,
        fmt::bytes(info.bytes)
    );
    let sized = match (info.sized_for_items, info.target_fpp) {
        (Some(n), Some(p)) => format!("n = {} at p = {}", fmt::count(n), fmt::percent(p)),
        _ => "explicit m and k".to_string(),
    };
    println!("sized for         {sized}");
    println!("items inserted    {}", fmt::count(info.items_inserted));
    println!("fill ratio        {:.4}", info.fill_ratio);
    println!(
        "estimated items   {:.0} (Swamidass-Baldi, from the fill)",
        info.estimated_items
    );
    println!(
        "false positives   {} expected from the bits now; theory at {} items: {}",
        fmt::percent(info.expected_fpp_now),
        fmt::count(info.items_inserted),
        fmt::percent(info.theoretical_fpp_at_items)
    );
    if let (Some(e), Some(p)) = (info.expressions_per_url, info.per_url_target_fpp) {
        println!(
            "per checked URL   {} target for URLs of up to {e} expressions (1 - (1 - f)^E per URL)",
            fmt::percent(p)
        );
    }
    if let Some(table) = info.verify_table {
        let state = if table {
            "present (check --verify)"
        } else {
            "absent (build --verify to add one)"
        };
        println!("verify table      {state}");
    }
}
