//! `phishbloom info`: what a blocklist file holds — kind, format, sections and their checksums,
//! list name, version and set fingerprint, the filters' parameters and fill — after verifying
//! every checksum.

use phishbloom_blocklist::BlocklistFile;
use std::process::ExitCode;

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::keywords::KeywordsInfo;
use phishbloom_core::near::{NearDetail, NearInfo};
use phishbloom_core::structure::LayerInfo;
use phishbloom_core::{fmt, Blocklist};
use phishbloom_core::{Description, FilterInfo};

use crate::args::InfoArgs;

/// Opens (which verifies every checksum), verifies what opening leaves for later (a keyword
/// index's blocks), and describes the blocklist.
pub fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let list = Blocklist::open(&args.filter)?;
    list.verify_all()?;
    let description = list.describe();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&description)?);
    } else {
        print_text(&args.filter.display().to_string(), &description);
    }
    Ok(ExitCode::SUCCESS)
}

/// The text form of `info`: section by section, in this order.
fn print_text(file: &str, d: &Description) {
    print_list(file, d);
    print_rate(d);
    print_categories(d);
    if let Some(keywords) = &d.keywords {
        print_keywords_info(keywords);
    }
    if let Some(near) = &d.near {
        print_near_info(near);
    }
    print_structure(d);
    print_filters(d);
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

/// The file, its format and kind, and the list's name, version, entries and fingerprint.
fn print_list(file: &str, d: &Description) {
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
        KeyScheme::Folded => "exact keys, compared without case",
        KeyScheme::Url => "whole URLs, lightly normalized",
        KeyScheme::Keywords => "keywords and phrases",
        KeyScheme::Near => "documents (near-duplicates by SimHash)",
    };
    println!(
        "entries           {}{} {keys}",
        if meta.exact_count { "" } else { "~" },
        fmt::count(meta.entries)
    );
    if !meta.exact_count {
        println!(
            "                  (approximate: entries were added without a verification section, \
             so the count and set fingerprint may include some that were already there)"
        );
    }
    println!("set fingerprint   {}", meta.fingerprint);
}

/// The target rate, per what it is stated for.
fn print_rate(d: &Description) {
    let meta = &d.meta;
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
}

/// The categories and the exceptions.
fn print_categories(d: &Description) {
    let categories: Vec<String> = d
        .categories
        .iter()
        .map(|c| format!("{} ({})", c.name, fmt::count(c.entries)))
        .collect();
    println!("categories        {}", categories.join(", "));
    if d.exceptions > 0 {
        println!(
            "exceptions        {} entries allowed even where a less specific entry lists them",
            fmt::count(d.exceptions)
        );
    }
}

/// Shingles of `width` tokens as `info` names them.
fn shingles(width: u32, weighting: &str) -> String {
    match width {
        1 => format!("words ({weighting})"),
        2 => format!("word pairs ({weighting})"),
        w => format!("{w}-token shingles ({weighting})"),
    }
}

/// The near-duplicate lines of `info` (and of `build`'s summary).
pub(crate) fn print_near_info(near: &NearInfo) {
    match &near.detail {
        NearDetail::MinHash {
            bins,
            bits,
            postings,
            min_features,
            threshold,
            boilerplate,
            bytes_per_document,
            bucket_start_bytes,
        } => {
            println!(
                "sketches          MinHash of {}-word shingles: {bins} bins of {bits} bits, \
                 {postings} posting keys; {} boilerplate shingle(s) dropped; {} document(s) \
                 under {min_features} shingles by an exact hash",
                near.shingle,
                fmt::count(*boilerplate),
                fmt::count(near.exact)
            );
            println!(
                "matches           at least {threshold} of {bins} bins agreeing (distance up to \
                 {}: resemblance ≳ {:.2}); {} in memory: {bytes_per_document} bytes a \
                 document and {} of bucket starts",
                near.max_distance,
                phishbloom_text::minhash::estimated_resemblance(*threshold, *bins, *bits),
                fmt::bytes(near.memory_bytes),
                fmt::bytes(*bucket_start_bytes)
            );
        }
        NearDetail::SimHash {
            check_shingle,
            check_distance,
            min_tokens,
            weighting,
            blocks,
            tables,
        } => {
            println!(
                "fingerprints      64-bit SimHash of {}{}; {} document(s) under {} tokens by \
                 an exact hash",
                shingles(near.shingle, weighting),
                match check_shingle {
                    0 => String::new(),
                    w => format!(
                        ", checked by a SimHash of {} within {} bits",
                        shingles(*w, weighting),
                        check_distance
                    ),
                },
                fmt::count(near.exact),
                min_tokens
            );
            println!(
                "tables            {tables} permuted tables of {blocks} blocks: distance up to \
                 {}, {} in memory",
                near.max_distance,
                fmt::bytes(near.memory_bytes)
            );
        }
    }
}

/// A compact list's table against the information bound.
fn print_compact(d: &Description) {
    let Some(c) = &d.compact else { return };
    println!(
        "compact table     {} prefixes in a universe of 2^{:.2}, {} category set(s) ({}): \
         every hit is confirmed by the table",
        fmt::count(c.prefixes),
        (c.universe as f64).log2(),
        fmt::count(c.sets),
        c.set_coding
    );
    let bound = c.bound_bits_per_entry();
    let file = c.file_bits_per_entry.map_or(String::new(), |bits| {
        format!(
            "; the whole file {bits:.2} ({:.3} × the bound)",
            bits / bound
        )
    });
    println!(
        "  bits per entry  {:.2} in the table ({:.3} × the bound){file}",
        c.table_bits_per_entry,
        c.table_bits_per_entry / bound
    );
    println!(
        "  bound           {bound:.2} = log₂(1/q) {:.2} at q = {:.3e} per probe + the category \
         sets' entropy {:.2}",
        c.rate_bits, c.target_per_probe, c.category_bits
    );
}

/// The verification table, the CaBF split and growth.
fn print_structure(d: &Description) {
    match d.verification {
        _ if d.keywords.is_some() || d.near.is_some() => {}
        _ if d.compact.is_some() => print_compact(d),
        Some(count) => println!(
            "verification      {} fingerprints: every hit is confirmed exactly",
            fmt::count(count)
        ),
        None => println!("verification      none (build --verify to confirm hits exactly)"),
    }
    if d.never > 0 {
        println!(
            "never-warn        {} false positive(s) of a never-warn list overruled: {:.2} bits per \
             entry",
            fmt::count(d.never),
            phishbloom_core::never_bits_per_entry(d.never, d.meta.entries)
        );
    }
    if let Some(split) = d.split {
        println!(
            "CaBF              {} component filters + check filter, split {split}",
            d.filters.len().saturating_sub(1)
        );
    }
    if d.grows {
        println!(
            "growth            {} layer(s); when the newest is full a new one is added with twice \
             its room at half its rate",
            d.layers.len()
        );
    }
}

/// Every filter, patch and layer, and the phrase gate.
fn print_filters(d: &Description) {
    for (i, filter) in d.filters.iter().enumerate() {
        let label = if d.filters.len() == 1 {
            "filter".to_string()
        } else if d.split.is_none() {
            format!("layer {i}")
        } else if i + 1 == d.filters.len() {
            "check filter".to_string()
        } else {
            format!("filter {i}")
        };
        print_filter(&label, filter);
    }
    // Patches (after the filters of a Bloom list), or every layer of the other kinds.
    let shown = if d.filters.is_empty() {
        0
    } else {
        d.filters.len()
    };
    if !d.layers.is_empty() {
        for (i, layer) in d.layers.iter().enumerate().skip(shown) {
            let label = if layer.structure.starts_with("patch") {
                format!("patch {}", i - shown)
            } else if d.layers.len() == 1 {
                "filter".to_string()
            } else {
                format!("layer {i}")
            };
            print_layer(&label, layer);
        }
    }
    if let Some(gate) = &d.gate {
        print_filter(&format!("{} gate", gate.kind), &gate.filter);
    }
}

/// The keyword lines of `info`.
fn print_keywords_info(info: &KeywordsInfo) {
    let lengths: Vec<String> = info
        .lengths
        .0
        .iter()
        .map(|(len, count)| format!("{len} ({})", fmt::count(*count)))
        .collect();
    println!("phrase lengths    {} tokens (keywords)", lengths.join(", "));
    if let (Some(doc), Some(probe)) = (info.per_doc_fpp, info.per_probe_fpp) {
        println!(
            "rates             {} per document of up to {} probes; {} per probe",
            fmt::percent(doc),
            fmt::count(u64::from(info.probes_per_doc)),
            fmt::percent(probe)
        );
    }
    match &info.index {
        Some(index) => println!(
            "keyword index     {} keywords in {} blocks ({}), read on hits; {} held in memory",
            fmt::count(index.keywords),
            fmt::count(index.blocks),
            fmt::bytes(index.bytes),
            fmt::bytes(index.resident_bytes)
        ),
        None => println!("keyword index     none (build --keywords … --verify to confirm hits)"),
    }
}

fn print_layer(label: &str, layer: &LayerInfo) {
    println!(
        "{label:<17} {}, {}",
        layer.structure,
        fmt::bytes(layer.bytes)
    );
    if let Some(p) = layer.target_fpp {
        println!(
            "  sized for       n = {} at p = {} per probe ({:.2} bits per entry)",
            fmt::count(layer.capacity),
            fmt::percent(p),
            layer.bytes as f64 * 8.0 / layer.capacity.max(1) as f64
        );
    }
    println!(
        "  holds           {} entries; rate per probe now {}",
        fmt::count(layer.items),
        fmt::percent(layer.expected_fpp_now)
    );
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
