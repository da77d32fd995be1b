//! Section 11: compact lists against their peers — phishbloom's verified and compact lists,
//! Safe Browsing v4's Rice-coded prefixes and `xorf`'s binary fuse filters on the same lists
//! and URLs: bits per entry, the per-URL rate on clean URLs with its interval, ns per URL and
//! update bytes per addition.
//!
//! Rendered from [`phishbloom_lab::measure::peers`]'s results, which this module only formats.

use phishbloom_core::fmt;
use phishbloom_lab::measure::peers::{
    target_per_probe, ListResult, Peer, PeerRow, Peers, ADDITIONS, EXPRESSIONS, TARGET_PER_URL,
    VERIFY_FPP,
};

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, RGBColor, Series, Style};

/// The command that regenerates this section alone (into `peers.md` beside the report).
pub const COMMAND: &str = lab_command!("peers");

/// The colour and marker of each structure in the figure.
fn look(peer: Peer) -> (RGBColor, Style) {
    match peer {
        Peer::Verify => (RGBColor(31, 119, 180), Style::Squares),
        Peer::Compact => (RGBColor(214, 39, 40), Style::Circles),
        Peer::Published => (RGBColor(255, 127, 14), Style::Circles),
        Peer::SafeBrowsing => (RGBColor(44, 160, 44), Style::Triangles),
        Peer::BinaryFuse16 => (RGBColor(148, 103, 189), Style::Crosses),
        Peer::BinaryFuse32 => (RGBColor(23, 23, 23), Style::Crosses),
    }
}

/// The CSV of every list and structure.
fn csv(peers: &Peers) -> Table {
    let mut table = Table::new(&[
        "list",
        "entries",
        "structure",
        "bytes",
        "side_table_bytes",
        "bits_per_entry",
        "bound_bits_per_entry",
        "per_probe_rate",
        "clean_urls",
        "clean_urls_listed",
        "per_url_rate",
        "per_url_ci_low",
        "per_url_ci_high",
        "per_url_theory",
        "listed_urls",
        "listed_urls_missed",
        "ns_per_clean_url",
        "ns_per_listed_url",
        "ns_per_url_half_listed",
        "additions",
        "update_bytes",
        "update_bytes_per_addition",
    ]);
    for list in &peers.lists {
        for row in &list.rows {
            let mut cells = vec![
                list.name.clone(),
                list.entries.to_string(),
                row.peer.name().to_string(),
                row.bytes.to_string(),
                row.side_bytes.map(|b| b.to_string()).unwrap_or_default(),
                num(row.bits_per_entry(list.entries)),
                num(list.bound_bits),
                num(row.per_probe),
            ];
            cells.extend(measurement_cells(&row.clean));
            cells.extend([
                list.listed_urls.to_string(),
                row.missed.to_string(),
                num(row.ns_clean),
                num(row.ns_listed),
                num(row.ns_per_url()),
                list.additions.to_string(),
                row.update_bytes.to_string(),
                num(row.update_bytes_per_addition(list.additions)),
            ]);
            table.push(cells);
        }
    }
    table
}

/// The per-URL rate cell: the count, the rate and its interval.
fn rate_cell(row: &PeerRow) -> String {
    let m = &row.clean;
    format!(
        "{} of {}: {} {}",
        fmt::count(m.false_positives),
        fmt::count(m.queries),
        fmt::rate(m.rate),
        fmt::interval(m.ci_low, m.ci_high)
    )
}

/// One Markdown row.
fn markdown_row(list: &ListResult, row: &PeerRow) -> Vec<String> {
    let update = match row.peer {
        Peer::Compact => "as published ↓".to_string(),
        _ => fmt::real(row.update_bytes_per_addition(list.additions), 2),
    };
    let bits = match row.side_bytes {
        Some(side) => format!(
            "{} ({} table)",
            fmt::real(row.bits_per_entry(list.entries), 2),
            fmt::real(side as f64 * 8.0 / list.entries as f64, 2)
        ),
        None => fmt::real(row.bits_per_entry(list.entries), 2),
    };
    vec![
        row.peer.name().to_string(),
        fmt::count(row.bytes),
        bits,
        rate_cell(row),
        fmt::rate(row.clean.theoretical),
        format!(
            "{} / {} / **{}**",
            fmt::real(row.ns_clean, 0),
            fmt::real(row.ns_listed, 0),
            fmt::real(row.ns_per_url(), 0)
        ),
        update,
    ]
}

/// The figure: per list, bits per entry against the per-URL rate measured, each structure a
/// marker with its 95 % interval (a structure with no hit shows only its upper bound).
fn plot(peers: &Peers) -> Vec<Panel> {
    let most_bits = peers
        .lists
        .iter()
        .flat_map(|l| l.rows.iter().map(|r| r.bits_per_entry(l.entries)))
        .fold(0.0, f64::max);
    peers
        .lists
        .iter()
        .map(|list| Panel {
            title: format!("{} ({} entries)", list.name, fmt::count(list.entries)),
            x: Axis::linear("bits per entry", 0.0, (most_bits / 20.0).ceil() * 20.0),
            y: Axis::log("false-positive rate per clean URL", 1e-7, 1e-1),
            series: list
                .rows
                .iter()
                .map(|row| {
                    let (color, style) = look(row.peer);
                    let point = Point::measured(row.bits_per_entry(list.entries), &row.clean);
                    Series::new(row.peer.name(), color, style, vec![point])
                })
                .collect(),
            legend: LegendAt::UpperRight,
        })
        .collect()
}

/// The section's introduction: what is measured, on what, how.
fn intro(peers: &Peers) -> String {
    let mut md = String::from("## 11. Compact lists against their peers\n\n");
    md.push_str(&format!(
        "A compact list (`--kind compact`) keeps each entry's 64-bit fingerprint cut to a prefix \
         in a universe u = ⌈n/q⌉, Elias–Fano coded with the entry's category set. Here it is \
         measured in one run beside the structures that answer the same question: phishbloom's \
         `--verify` list (blocked at {} per URL, hits confirmed by its verification section), \
         the compact form `publish` ships of that verified list (no hosts gate, a universe with \
         room for the chain of deltas), Safe Browsing v4's own encoding (per category, the \
         sorted distinct 4-byte SHA-256 prefixes of the entries' expressions — `host/` or \
         `host/path` — Rice-coded as the v4 API sends them: first value, Rice parameter chosen \
         from the gaps, count, coded gaps; the bytes are the `ThreatEntrySet`s, without the \
         update's client state, checksum and list names), and `xorf`'s BinaryFuse16 and \
         BinaryFuse32 over the entries' 64-bit fingerprints with a category table. The target, \
         where a structure has one to choose: ε = {} per checked URL of up to E = {} \
         expressions, so q = 1 − (1 − ε)^(1/E) = {} per probe. Safe Browsing's rate is fixed by \
         its 32-bit prefixes and a fuse filter's by its fingerprints; a Safe Browsing prefix hit \
         is not a verdict — the client asks Google's server for the full hashes — so its \
         per-URL rate is the share of clean URLs that would cost an online round trip (and tell \
         the server a 32-bit prefix of what was visited).\n\n",
        fmt::percent(VERIFY_FPP),
        fmt::rate(TARGET_PER_URL),
        EXPRESSIONS,
        fmt::rate(target_per_probe()),
    ));
    md.push_str(&format!(
        "**Lists.** UT1's `phishing` and `malware` folders read in place (two categories, most \
         URLs in both), and synthetic domain lists made as `crates/blocklist/bench/gen_domains.py` \
         makes them (the same generator in Rust, seed 37, one category).{} **URLs.** {} clean \
         URLs of random hosts (the third kind of `gen_urls.py`, seed 15: 5–15 random letters \
         under .com, .net, …, .co.uk, a third behind `www.`, up to three path words, a query on \
         a quarter; at most 18 expressions each); a clean URL is one no expression of which is \
         an entry's (by exact 64-bit fingerprints), and those a list holds are left out. \
         The *theory* column is the mean over those URLs of 1 − (1 − q′)^E with q′ the \
         structure's own per-probe rate (n/u for a compact table, distinct prefixes / 2³² for \
         Safe Browsing, 2^−f for an f-bit fuse filter, n/2⁶⁴ for a verified list) and E the \
         URL's expressions (for Safe Browsing its distinct strings). Intervals \
         are 95 % Wilson intervals of the binomial count. **Speed.** ns per URL on one thread, \
         the URL line canonicalized by phishbloom's canonicalizer and then asked, for every \
         structure the same way ({} clean URLs, then up to as many URLs below random entries — \
         `http://` + the entry, with a path below a domain entry), {} rounds interleaved \
         across the structures, medians; shown as clean / below an entry / **the mean of the \
         two**. phishbloom's lists answer with the verdict (the most specific entry, its \
         categories); the peers stop at the first expression they hold. **Updates.** Each \
         list's last {} additions are {} of its own entries chosen with a fixed seed; the \
         version before them is the rest. `--verify`: the exact delta between the two verified \
         lists; compact: the table delta between the two lists' published forms, coded in the \
         universe of the chain the earlier one starts (what `publish` ships; a `--kind compact` \
         file has no delta of its own); Safe Browsing: per category, the prefixes new to the \
         list, Rice-coded; binary fuse: a static filter, so the whole new filter and table.\n\n",
        peers
            .ut1_missing
            .as_ref()
            .map(|why| format!(" UT1 is missing from this run: {why}."))
            .unwrap_or_default(),
        fmt::count(peers.generated_clean_urls),
        peers
            .lists
            .first()
            .map_or("no".to_string(), |l| fmt::count(l.timed_clean_urls)),
        peers.repetitions,
        fmt::count(ADDITIONS as u64),
        fmt::count(ADDITIONS as u64),
    ));
    md
}

/// One list's paragraph and table.
fn list_table(list: &ListResult) -> String {
    let sets: Vec<String> = list
        .set_counts
        .iter()
        .map(|(name, count)| format!("{name}: {}", fmt::count(*count)))
        .collect();
    let broad = if list.broad_entries.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = list
            .broad_entries
            .iter()
            .map(|(entry, count)| format!("`{entry}` lists {}", fmt::count(*count)))
            .collect();
        format!(
            " The list holds entries that list many random URLs: {} — so those are left out.",
            named.join(", ")
        )
    };
    let mut md = format!(
        "**{}** — {} entries ({}); the bound at q, log₂(1/q) plus the entropy of the category \
         sets, is {} bits per entry. {} clean URLs asked ({} of the generated ones left out as \
         listed), {} expressions each on average ({} strings for Safe Browsing, for which the \
         path `/` of a host is the host's own string `host/`); {} URLs below entries timed.{}\n\n",
        list.name,
        fmt::count(list.entries),
        sets.join(", "),
        fmt::real(list.bound_bits, 2),
        fmt::count(list.clean_urls),
        fmt::count(list.not_clean_urls),
        fmt::real(list.mean_expressions, 2),
        fmt::real(list.mean_v4_expressions, 2),
        fmt::count(list.listed_urls),
        broad,
    );
    let rows: Vec<Vec<String>> = list.rows.iter().map(|r| markdown_row(list, r)).collect();
    md.push_str(&markdown_table(
        &[
            "structure",
            "bytes",
            "bits / entry",
            "clean URLs listed: rate [95 %]",
            "theory",
            "ns / URL: clean / listed / **mix**",
            "update B / addition",
        ],
        &rows,
    ));
    md.push('\n');
    md
}

/// What the tables show, read off the measurements.
fn reading(peers: &Peers) -> String {
    let missed: u64 = peers
        .lists
        .iter()
        .flat_map(|l| l.rows.iter().map(|r| r.missed))
        .sum();
    let overrides: Vec<String> = peers
        .lists
        .iter()
        .map(|l| {
            format!(
                "{}: {} and {}",
                l.name,
                fmt::count(l.fuse_overrides.0),
                fmt::count(l.fuse_overrides.1)
            )
        })
        .collect();
    format!(
        "URLs below entries answered clean, all structures and lists: **{}** (none has false \
         negatives). The fuse filters' category table: the majority category set is implied, \
         every other set has a `BinaryFuse8` of its entries asked after a main hit, and an \
         entry one of those would misname sits in a sorted override table of exact \
         fingerprints (entries there for BinaryFuse16 and BinaryFuse32 — {}); a domain list has \
         one set and no table beyond a few bytes. A fuse filter's bytes are `xorf`'s \
         serialized descriptor and fingerprints; `xorf` fills unused cells at random, so its \
         rows' override counts (and a few hundred bytes of UT1's table) differ a little from \
         run to run. Safe Browsing's bytes are what travels; a v4 \
         client holds the prefixes as `u32` arrays (32 bits a prefix, and an entry in two \
         categories is in two lists).\n\n",
        fmt::count(missed),
        overrides.join("; ")
    )
}

/// Writes the section's CSV, figure and Markdown.
pub fn render(ctx: &mut Context, peers: &Peers) -> Result<String> {
    let csv_name = ctx.write_csv("peers.csv", &csv(peers))?;
    let mut md = intro(peers);
    for list in &peers.lists {
        md.push_str(&list_table(list));
    }
    md.push_str(&format!("*Data: [{csv_name}]({csv_name}).*\n\n"));
    md.push_str(&reading(peers));
    if !peers.lists.is_empty() {
        let width = 520 * peers.lists.len() as u32;
        let svg = ctx.write_svg(
            "fig-peers.svg",
            "Bits per entry against the false-positive rate per clean URL",
            &plot(peers),
            (width.max(800), 560),
        )?;
        md.push_str(
            "Each structure is a marker at its bits per entry and measured rate with its 95 % \
             interval; one with no hit shows only the upper end of its interval, as a bar from \
             the bottom of the panel (the compact lists and BinaryFuse32 lie on each other \
             there).\n\n",
        );
        md.push_str(&figure(
            &svg,
            "bits per entry against the per-URL rate",
            &csv_name,
        ));
        md.push('\n');
    }
    headlines(ctx, peers);
    Ok(md)
}

/// The section's line in the command's summary: each list's compact bits per entry against
/// the peers'.
fn headlines(ctx: &mut Context, peers: &Peers) {
    for list in &peers.lists {
        let bits = |peer: Peer| {
            list.row(peer).map_or("—".to_string(), |r| {
                fmt::real(r.bits_per_entry(list.entries), 1)
            })
        };
        ctx.headlines.push(format!(
            "peers, {}: bits/entry verify {}, compact {}, Safe Browsing {}, BinaryFuse16 {}, \
             BinaryFuse32 {}",
            list.name,
            bits(Peer::Verify),
            bits(Peer::Compact),
            bits(Peer::SafeBrowsing),
            bits(Peer::BinaryFuse16),
            bits(Peer::BinaryFuse32)
        ));
    }
}
