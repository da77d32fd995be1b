//! The near-duplicate section's MinHash part: every system on three corpora (recall per edit,
//! false matches, bytes and lookup time) and the sketches at 10⁷ documents beside the SimHash
//! tables — each as its CSV file and its Markdown table.

use phishbloom_core::fmt;
use phishbloom_lab::measure::near::corpora::{NEAR_COPY, RSPAMD_MATCH, RSPAMD_SHINGLES};
use phishbloom_lab::measure::near::sketch_scale::KEPT_FEATURES;
use phishbloom_lab::measure::near::NearReport;
use phishbloom_text::minhash::{
    match_threshold, MinHashParams, FALSE_MATCHES_PER_QUERY, SCANNED_PER_KEY, UNRELATED_RESEMBLANCE,
};

use super::edit_labels;
use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// Every system on every corpus: writes `near_corpora.csv` and returns the text with one table
/// per corpus.
pub(super) fn corpora(ctx: &mut Context, report: &NearReport) -> Result<String> {
    let labels = edit_labels();
    let mut header = vec!["corpus", "system", "params"];
    header.extend(labels.iter().map(String::as_str));
    header.extend([
        "unrelated",
        "false_documents",
        "bytes_per_document",
        "hash_us",
        "query_us",
    ]);
    let mut csv = Table::new(&header);
    let params = MinHashParams::default();
    let mut md = format!(
        "### MinHash sketches on three kinds of text (what `build --near` makes)\n\n\
         Three corpora of real text from Debian packages, each cut into ~3 KB documents and \
         split by page into known and unrelated halves: prose (The Debian Administrator's \
         Handbook), manual pages (sections 2–5 and 7: `manpages`, `manpages-dev`) and \
         technical documentation (the doc comments of Rust's `core`, `alloc` and `std`: \
         `rust-web-src`). The unrelated queries of a corpus are its own unrelated half and \
         every document of the other two. Systems, all in this run: MinHash sketches ({} bins \
         of {} bits over {}-word shingles, {} posting keys, a match at ≥ {} agreeing bins; with \
         the boilerplate shingles learned from the known documents dropped, and without), the \
         SimHash pair of `--near-method simhash` (what lists kept before), gaoya's MinHash-LSH, and Rspamd's fuzzy rule ({} \
         minima of word trigrams, a match at > {} equal; brute force). A match of an unrelated \
         query is false only when the two documents' true resemblance (5-word shingle sets) \
         is below {NEAR_COPY}: a corpus holds near copies of its own (the doc comments of \
         `f32::ln` and `f64::ln`, sibling man pages), and every system's answers are judged \
         alike. The sketches' threshold keeps a query's expected false matches ≤ \
         {FALSE_MATCHES_PER_QUERY} against any number of known documents for documents sharing \
         < {UNRELATED_RESEMBLANCE} of their shingles ({} keys × {SCANNED_PER_KEY} candidates \
         each, at most, times the binomial tail). The sketches' bytes a document include their \
         tables' bucket starts, at least 1,025 a table: most of the bytes of lists this small \
         (the next table has them at 10⁷).\n\n",
        params.bins,
        params.bits,
        params.shingle,
        params.postings,
        match_threshold(&params),
        RSPAMD_SHINGLES,
        RSPAMD_MATCH,
        params.postings,
    );
    for corpus in &report.corpora {
        let mut rows = Vec::new();
        for s in &corpus.systems {
            let bytes = s.index_bytes.unwrap_or(0) as f64 / corpus.known.max(1) as f64;
            let mut row = vec![
                corpus.corpus.to_string(),
                s.system.clone(),
                s.params.clone(),
            ];
            row.extend(
                s.recall
                    .iter()
                    .map(|(_, c, f)| num(*f as f64 / (*c).max(1) as f64)),
            );
            row.extend([
                s.unrelated.to_string(),
                s.false_docs.to_string(),
                num(bytes),
                num(s.hash_us),
                num(s.query_us),
            ]);
            csv.push(row);
            let mut line = vec![s.system.clone()];
            line.extend(
                s.recall
                    .iter()
                    .map(|(_, c, f)| format!("{:.3}", *f as f64 / (*c).max(1) as f64)),
            );
            line.extend([
                format!("{} of {}", s.false_docs, s.unrelated),
                format!("{bytes:.0}"),
                format!("{:.2}", s.query_us),
            ]);
            rows.push(line);
        }
        md.push_str(&format!(
            "**{}**: {} documents, {} known, {} unrelated queries; {} boilerplate shingles \
             learned; {} pairs some system matched were near copies (resemblance ≥ {NEAR_COPY}) \
             and count as right.\n\n",
            corpus.corpus,
            corpus.documents,
            corpus.known,
            corpus.unrelated,
            corpus.boilerplate,
            corpus.near_copies,
        ));
        let mut table_header = vec!["system"];
        table_header.extend(labels.iter().map(String::as_str));
        table_header.extend(["unrelated matched", "bytes a document", "µs a lookup"]);
        md.push_str(&markdown_table(&table_header, &rows));
        md.push('\n');
    }
    let name = ctx.write_csv("near_corpora.csv", &csv)?;
    md.push_str(&format!("Data: [{name}]({name}).\n\n"));
    Ok(md)
}

/// The sketches at scale: writes `near_sketch_scale.csv` and returns the text with its table.
pub(super) fn scale(ctx: &mut Context, report: &NearReport) -> Result<String> {
    let s = &report.sketch_scale;
    let mut csv = Table::new(&[
        "documents",
        "build_seconds",
        "bytes_per_document",
        "candidates",
        "queries",
        "query_us",
        "copies_found",
        "strangers_matched",
        "simhash_us",
        "simhash_bytes_per_document",
    ]);
    csv.push(vec![
        s.documents.to_string(),
        num(s.build_seconds),
        num(s.bytes_per_document),
        num(s.candidates),
        s.queries.to_string(),
        num(s.query_us),
        s.copies_found.to_string(),
        s.strangers_matched.to_string(),
        num(s.simhash_us),
        num(s.simhash_bytes_per_document),
    ]);
    let name = ctx.write_csv("near_sketch_scale.csv", &csv)?;
    let half = s.queries / 2;
    let mut md = format!(
        "### Sketches at {} known documents\n\nRandom sketches (unrelated documents) with \
         planted sketches of 300-shingle documents; queries are copies keeping {KEPT_FEATURES} \
         of the 300 (resemblance 0.42, what editing 10 % of a text's words leaves) interleaved \
         with new documents. Beside them in the same run, the SimHash method's 4 permuted \
         tables of as many random fingerprints, looked up with planted and random ones. \
         Lookups exclude sketching. Data: [{name}]({name}).\n\n",
        fmt::count(s.documents)
    );
    md.push_str(&markdown_table(
        &[
            "documents",
            "build",
            "bytes a document",
            "candidates a lookup",
            "µs a lookup",
            "copies found",
            "strangers matched",
            "SimHash µs a lookup",
            "SimHash bytes a document",
        ],
        &[vec![
            fmt::count(s.documents),
            format!("{:.1} s", s.build_seconds),
            format!("{:.1}", s.bytes_per_document),
            format!("{:.2}", s.candidates),
            format!("{:.2}", s.query_us),
            format!("{} of {half}", s.copies_found),
            format!("{} of {half}", s.strangers_matched),
            format!("{:.2}", s.simhash_us),
            format!("{:.1}", s.simhash_bytes_per_document),
        ]],
    ));
    md.push('\n');
    Ok(md)
}
