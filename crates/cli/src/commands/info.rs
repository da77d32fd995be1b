//! `phishbloom info`: what a blocklist file holds — kind, format, sections and their checksums,
//! list name, version and set fingerprint, the filters' parameters and fill — after verifying
//! every checksum.

use std::process::ExitCode;

use phishbloom_blocklist::blocklist::{Description, FilterInfo};
use phishbloom_blocklist::{fmt, Blocklist, KeyScheme};

use crate::args::InfoArgs;

/// Opens (which verifies every checksum) and describes the blocklist.
pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let description = Blocklist::open(&args.filter)?.describe();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&description)?);
    } else {
        print_text(&args.filter.display().to_string(), &description);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_text(file: &str, d: &Description) {
    let meta = &d.meta;
    println!("file              {file} ({})", fmt::bytes(d.file_bytes));
    println!(
        "format            version {}, checksum {} (xxh3-64 of the section table; every section verified)",
        d.format_version, d.checksum
    );
    println!("kind              {}", d.kind);
    println!(
        "list              {:?}, version {}, written {}",
        meta.name,
        meta.version,
        fmt::utc(meta.created)
    );
    let keys = match meta.scheme {
        KeyScheme::Expressions => "URL entries (domain and URL semantics)",
        KeyScheme::Exact => "exact keys",
        KeyScheme::Url => "whole URLs, lightly normalized",
        KeyScheme::Keywords => "keywords and phrases",
    };
    println!("entries           {} {keys}", fmt::count(meta.entries));
    println!("set fingerprint   {}", meta.fingerprint);
    if let Some(p) = d.per_item_fpp {
        let per = if meta.scheme == KeyScheme::Keywords {
            format!(
                "per scanned document of up to {} probes (1 - (1 - f)^P)",
                fmt::count(u64::from(meta.probes_per_item))
            )
        } else if meta.scheme == KeyScheme::Expressions {
            format!(
                "per checked URL of up to {} expressions (1 - (1 - f)^E)",
                meta.probes_per_item
            )
        } else {
            "per checked key".to_string()
        };
        println!("target rate       {} {per}", fmt::percent(p));
    }
    if let Some(keywords) = &d.keywords {
        crate::commands::scan::print_keywords_info(keywords);
    }
    match d.verification {
        _ if d.keywords.is_some() => {}
        Some(count) => println!(
            "verification      {} fingerprints: every hit is confirmed exactly",
            fmt::count(count)
        ),
        None => println!("verification      none (build --verify to confirm hits exactly)"),
    }
    if let Some(split) = d.split {
        println!(
            "CaBF              {} component filters + check filter, split {split}",
            d.filters.len().saturating_sub(1)
        );
    }
    for (i, filter) in d.filters.iter().enumerate() {
        let label = if d.filters.len() == 1 {
            "filter".to_string()
        } else if i + 1 == d.filters.len() {
            "check filter".to_string()
        } else {
            format!("filter {i}")
        };
        print_filter(&label, filter);
    }
    println!("sections");
    for section in &d.sections {
        println!(
            "  {:<22} offset {:>10}  {:>12}  xxh3 {}",
            section.name,
            section.offset,
            fmt::bytes(section.bytes),
            section.checksum
        );
    }
}

fn print_filter(label: &str, f: &FilterInfo) {
    println!(
        "{label:<17} {} layout, {} hash: m = {} bits, k = {}, {}",
        f.layout,
        f.hash,
        fmt::count(f.num_bits),
        f.num_hashes,
        fmt::bytes(f.bytes)
    );
    if let (Some(n), Some(p)) = (f.sized_for_items, f.target_fpp_per_probe) {
        println!(
            "  sized for       n = {} at p = {} per probe",
            fmt::count(n),
            fmt::percent(p)
        );
    }
    println!(
        "  fill            {:.4} of bits set, {} keys inserted, ~{} estimated from the fill",
        f.fill_ratio,
        fmt::count(f.items),
        fmt::count(f.estimated_items.min(u64::MAX as f64) as u64)
    );
    println!(
        "  rate per probe  {} from the bits now; theory at {} keys: {}",
        fmt::percent(f.expected_fpp_now),
        fmt::count(f.items),
        fmt::percent(f.theoretical_fpp_at_items)
    );
}
