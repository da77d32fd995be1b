//! The near-duplicate section's short texts (`min_tokens`), its peers on the same documents
//! (brute force, MinHash-LSH) and its run at 10⁷ fingerprints — each as its CSV file and its
//! Markdown table.

use phishbloom_core::fmt;
use phishbloom_lab::measure::near::{NearReport, Quality, K, PLANNED_FALSE, PLANNED_LIST};

use super::{edit_labels, header_with_edits};
use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// `part` of `whole` as a percentage with one decimal.
fn pct(part: u64, whole: u64) -> String {
    format!("{:.1} %", 100.0 * part as f64 / whole.max(1) as f64)
}

/// Short windows under the chosen configuration: writes `near_lengths.csv` and returns the
/// text with its table.
pub(super) fn short_texts(ctx: &mut Context, q: &Quality) -> Result<String> {
    let mut lengths = Table::new(&[
        "tokens",
        "known",
        "copies",
        "found",
        "unrelated",
        "false_documents",
        "known_close_pairs",
        "unrelated_distance_mean",
        "unrelated_distance_sd",
        "unrelated_check_distance_mean",
        "unrelated_check_distance_sd",
        "expected_false_at_1e7",
    ]);
    let mut rows = Vec::new();
    for l in &q.lengths {
        let check = l.check_distances.as_ref();
        lengths.push(vec![
            l.tokens.to_string(),
            l.known.to_string(),
            l.copies.to_string(),
            l.found.to_string(),
            l.unrelated.to_string(),
            l.false_docs.to_string(),
            l.known_close_pairs.to_string(),
            num(l.distances.mean),
            num(l.distances.sd),
            check.map_or(String::new(), |d| num(d.mean)),
            check.map_or(String::new(), |d| num(d.sd)),
            num(l.expected_false(PLANNED_LIST)),
        ]);
        rows.push(vec![
            l.tokens.to_string(),
            format!("{} of {} ({})", l.found, l.copies, pct(l.found, l.copies)),
            format!("{} of {}", l.false_docs, l.unrelated),
            l.known_close_pairs.to_string(),
            format!("{:.1} ± {:.1}", l.distances.mean, l.distances.sd),
            check.map_or("—".into(), |d| format!("{:.1} ± {:.1}", d.mean, d.sd)),
            format!("{:.1e}", l.expected_false(PLANNED_LIST)),
        ]);
    }
    let lengths_csv = ctx.write_csv("near_lengths.csv", &lengths)?;
    let mut md = format!(
        "### Short texts: `min_tokens`\n\nWindows of exactly n tokens, one per known and one per \
         unrelated document, fingerprinted under the chosen configuration (lookup and check) \
         whatever their length; copies have 2 % of \
         their words edited (at least one). Below `min_tokens` a list keeps the exact hash of \
         the token sequence instead, which finds only unedited copies and never an unrelated \
         text. Measured `min_tokens` = **{}**: the shortest length from which on no unrelated \
         window matched a known one at k = {K} and an unrelated window expects at most \
         {PLANNED_FALSE} false matches against 10⁷ known ones (normal fits of its lookup and \
         check distances, their product as above). Data: [{lengths_csv}]({lengths_csv}).\n\n",
        q.min_tokens
    );
    md.push_str(&markdown_table(
        &[
            "tokens",
            "copies found",
            "unrelated matched",
            "known pairs matching",
            "unrelated distance",
            "unrelated check distance",
            "expected false at 10⁷",
        ],
        &rows,
    ));
    md.push('\n');
    Ok(md)
}

/// The peers on the same documents: writes `near_peers.csv` and returns the text with its
/// table.
pub(super) fn peers(ctx: &mut Context, report: &NearReport) -> Result<String> {
    let (peers, rows) = peers_table(report);
    let peers_csv = ctx.write_csv("near_peers.csv", &peers)?;
    let ratio = |a: &str, b: &str| {
        let x = report.peers.iter().find(|p| p.system.starts_with(a));
        let y = report.peers.iter().find(|p| p.system.starts_with(b));
        match (x, y) {
            (Some(x), Some(y)) => {
                format!("{:.1}×", y.query_us / x.query_us.max(f64::MIN_POSITIVE))
            }
            _ => "—".into(),
        }
    };
    let mut md = format!(
        "### Peers on the same documents\n\nThe chosen configuration through the permuted tables \
         (lookup fingerprint, each candidate confirmed by the check), the same fingerprints by \
         brute force over both distances (identical answers, checked), and MinHash-LSH from the \
         `gaoya` crate on the lookup's shingles (signatures of 126 32-bit minima, banded for \
         Jaccard ≥ 0.5, answers filtered at an estimated Jaccard ≥ 0.5). Precision is pooled \
         (right pairs ÷ pairs) / the mean over answered queries (gaoya's notebook reports \
         recall 0.962 at mean precision 0.464 on its data). Hashing includes tokenizing; \
         lookups are per hashed query, all in one run (lookups: brute force ÷ tables = {}, \
         gaoya ÷ tables = {}). Data: [{peers_csv}]({peers_csv}).\n\n",
        ratio("SimHash, permuted", "SimHash, brute"),
        ratio("SimHash, permuted", "gaoya"),
    );
    let labels = edit_labels();
    let header = header_with_edits(
        &["system"],
        &labels,
        &[
            "unrelated matched",
            "precision (pooled / mean)",
            "hash µs/doc",
            "lookup µs",
        ],
    );
    md.push_str(&markdown_table(&header, &rows));
    md.push('\n');
    Ok(md)
}

/// The peers as a CSV table (`near_peers.csv`) and as Markdown rows.
fn peers_table(report: &NearReport) -> (Table, Vec<Vec<String>>) {
    let mut peers = Table::new(&[
        "system",
        "params",
        "edit",
        "copies",
        "found",
        "unrelated",
        "false_documents",
        "precision",
        "mean_precision",
        "hash_us",
        "build_seconds",
        "query_us",
        "index_bytes",
    ]);
    let mut rows = Vec::new();
    for p in &report.peers {
        for (label, copies, found) in &p.recall {
            peers.push(vec![
                p.system.clone(),
                p.params.clone(),
                label.clone(),
                copies.to_string(),
                found.to_string(),
                p.unrelated.to_string(),
                p.false_docs.to_string(),
                num(p.precision()),
                num(p.mean_precision),
                num(p.hash_us),
                num(p.build_seconds),
                num(p.query_us),
                p.index_bytes.map(|b| b.to_string()).unwrap_or_default(),
            ]);
        }
        let mut cells = vec![format!("{} ({})", p.system, p.params)];
        cells.extend(
            p.recall
                .iter()
                .map(|(_, c, f)| format!("{:.3}", *f as f64 / (*c).max(1) as f64)),
        );
        cells.push(format!("{} of {}", p.false_docs, p.unrelated));
        cells.push(format!("{:.3} / {:.3}", p.precision(), p.mean_precision));
        cells.push(format!("{:.1}", p.hash_us));
        cells.push(format!("{:.2}", p.query_us));
        rows.push(cells);
    }
    (peers, rows)
}

/// The permuted tables at 10⁷ random fingerprints: writes `near_scale.csv` and returns the
/// text, its table and the plan for 10⁸.
pub(super) fn scale(ctx: &mut Context, report: &NearReport) -> Result<String> {
    let (scale, rows) = scale_table(report);
    let scale_csv = ctx.write_csv("near_scale.csv", &scale)?;
    let n = report.scale.first().map_or(0, |r| r.fingerprints);
    let mut md = format!(
        "### {} known fingerprints\n\nRandom 64-bit fingerprints (SimHash of unrelated documents \
         is uniform), queried with planted ones (a stored fingerprint with 1–3 bits flipped, all \
         to be found) and random ones, interleaved; brute force on the first {} queries in the \
         same run, its answers checked against the tables'. The section's bytes are tables × 8 × \
         n; memory adds the bucket indices. The target: ≤ 20 µs per lookup and ≥ 100× brute \
         force. The criterion bench `cargo bench -p phishbloom-filter --bench near` times the \
         same lookups. Data: [{scale_csv}]({scale_csv}).\n\n",
        fmt::power_of_ten(n),
        report.scale.first().map_or(0, |r| r.brute_queries),
    );
    md.push_str(&markdown_table(
        &[
            "tables",
            "count",
            "build",
            "section",
            "memory",
            "candidates / lookup",
            "lookup",
            "planted found",
            "brute force",
            "speed-up",
            "section at 10⁸",
        ],
        &rows,
    ));
    md.push_str(
        "\n**Plan for 10⁸**: the section grows linearly, tables × 8 bytes × n — 3.2 GB for 4 \
         tables, 16 GB for 20 — and the candidates per lookup with n: about 4 × n / 2¹⁶ ≈ 6,100 \
         for 4 tables (16-bit leads) against about 20 × n / 2³¹ < 1 for 20 (31–33-bit leads). \
         At 10⁸ four tables keep memory within a server's but compare thousands of candidates \
         per lookup; twenty keep lookups at a few probes for five times the bytes. A list that \
         large should use 20 tables on a machine that can hold 16 GB, or be split by category \
         into lists of ≤ 10⁷ with 4 tables each.\n\n",
    );
    Ok(md)
}

/// The scale runs as a CSV table (`near_scale.csv`) and as Markdown rows.
fn scale_table(report: &NearReport) -> (Table, Vec<Vec<String>>) {
    let mut scale = Table::new(&[
        "fingerprints",
        "distance",
        "blocks",
        "tables",
        "build_seconds",
        "section_bytes",
        "memory_bytes",
        "candidates",
        "queries",
        "query_us",
        "planted_found",
        "brute_us",
        "brute_queries",
    ]);
    let mut rows = Vec::new();
    for r in &report.scale {
        scale.push(vec![
            r.fingerprints.to_string(),
            r.distance.to_string(),
            r.blocks.to_string(),
            r.tables.to_string(),
            num(r.build_seconds),
            r.section_bytes.to_string(),
            r.memory_bytes.to_string(),
            num(r.candidates),
            r.queries.to_string(),
            num(r.query_us),
            r.planted_found.to_string(),
            num(r.brute_us),
            r.brute_queries.to_string(),
        ]);
        rows.push(vec![
            format!("b = {}, k = {}", r.blocks, r.distance),
            r.tables.to_string(),
            format!("{:.1} s", r.build_seconds),
            fmt::bytes(r.section_bytes),
            fmt::bytes(r.memory_bytes),
            format!("{:.1}", r.candidates),
            format!("{:.2} µs", r.query_us),
            format!("{} of {}", r.planted_found, r.queries / 2),
            format!("{:.0} µs", r.brute_us),
            format!("{:.0}×", r.speedup()),
            fmt::bytes(r.section_bytes_at(100_000_000)),
        ]);
    }
    (scale, rows)
}
