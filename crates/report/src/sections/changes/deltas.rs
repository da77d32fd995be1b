//! The "Lists that change" section's delta sizes: the bytes of each change on a real list
//! against the formula and the targets, and compact deltas against the membership bound.

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{
    BoundRow, ChangeKind, DeltaRow, Deltas, Encoding, ANCHOR_PATCH_FPP, DELTA_RATE,
    TARGET_ADDITIONS, TARGET_ADDITION_BYTES, TARGET_BYTES_PER_REMOVAL,
};
use phishbloom_lab::theory;

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// The target a delta row is held to, and whether it meets it.
fn target_of(row: &DeltaRow) -> Option<(String, bool)> {
    match row.change {
        ChangeKind::Additions if row.added == TARGET_ADDITIONS => Some((
            format!("≤ {} B", fmt::count(TARGET_ADDITION_BYTES)),
            row.bytes <= TARGET_ADDITION_BYTES,
        )),
        ChangeKind::Removals => Some((
            format!("≤ {TARGET_BYTES_PER_REMOVAL} B/removal"),
            row.bytes_per_change() <= TARGET_BYTES_PER_REMOVAL,
        )),
        _ => None,
    }
}

/// The per-probe rate of a list at 1 % per checked item with `probes` probes.
fn per_probe(probes: u32) -> f64 {
    phishbloom_core::engine::per_probe_fpp(DELTA_RATE, probes)
}

/// Writes the CSV and the tables of delta sizes and of the bound; returns the Markdown.
pub(super) fn render(ctx: &mut Context, deltas: &Deltas) -> Result<String> {
    let mut table = Table::new(&[
        "probes_per_item",
        "per_probe_rate",
        "change",
        "changed",
        "added",
        "removed",
        "encoding",
        "addition_bits",
        "bytes",
        "bytes_per_change",
        "formula_bytes",
        "target",
        "target_met",
    ]);
    let mut tables = Vec::new();
    for probes in [20u32, 1] {
        let mut rows = Vec::new();
        for row in deltas.rows.iter().filter(|r| r.probes == probes) {
            let target = target_of(row);
            table.push(delta_cells(row, target.as_ref()));
            rows.push(delta_row(row, target));
        }
        tables.push((probes, rows));
    }
    let csv = ctx.write_csv("changes_deltas.csv", &table)?;
    let mut md = intro(deltas);
    for (probes, rows) in tables {
        md.push_str(&format!(
            "**p = 1 % per checked {}** ({} probe{} per item, so {} per probe):\n\n",
            if probes == 1 { "item" } else { "URL" },
            probes,
            if probes == 1 { "" } else { "s" },
            fmt::rate(per_probe(probes)),
        ));
        md.push_str(&markdown_table(
            &[
                "change",
                "entries",
                "encoding",
                "bytes",
                "bytes / entry",
                "formula bytes",
                "target",
            ],
            &rows,
        ));
        md.push('\n');
    }
    md.push_str(&format!("*Data: [{csv}]({csv}).*\n\n"));
    md.push_str(&why_two_rates(deltas.list.entries));
    md.push_str(&render_bound(ctx, &deltas.bound)?);
    Ok(md)
}

/// One delta's CSV cells, with its target and whether it is met.
fn delta_cells(row: &DeltaRow, target: Option<&(String, bool)>) -> Vec<String> {
    vec![
        row.probes.to_string(),
        num(per_probe(row.probes)),
        row.change.name().to_string(),
        row.changed.to_string(),
        row.added.to_string(),
        row.removed.to_string(),
        row.encoding.name().to_string(),
        row.addition_bits.to_string(),
        row.bytes.to_string(),
        num(row.bytes_per_change()),
        num(row.formula_bytes),
        target.map(|t| t.0.clone()).unwrap_or_default(),
        target
            .map(|t| if t.1 { "yes" } else { "no" }.to_string())
            .unwrap_or_default(),
    ]
}

/// One delta's Markdown row.
fn delta_row(row: &DeltaRow, target: Option<(String, bool)>) -> Vec<String> {
    vec![
        row.change.name().to_string(),
        fmt::count(row.changed),
        format!(
            "{}{}",
            row.encoding.name(),
            if row.encoding == Encoding::Exact {
                String::new()
            } else {
                format!(", {} bits", row.addition_bits)
            }
        ),
        fmt::count(row.bytes),
        fmt::real(row.bytes_per_change(), 2),
        fmt::count(row.formula_bytes.round() as u64),
        match target {
            Some((text, met)) => {
                format!("{text}: {}", if met { "met" } else { "**not met**" })
            }
            None => String::new(),
        },
    ]
}

/// The list the deltas were made from, the changes, and the two encodings.
fn intro(deltas: &Deltas) -> String {
    let list = &deltas.list;
    format!(
        "### Delta sizes\n\n\
         The list: {} — {} distinct entries in {} categories. From it, new versions were made by \
         adding synthetic entries (`add-<hex>.changes.test`, in the `phishing` category), \
         removing entries chosen at random (fixed seed), or both (half each), and `Delta::\
         between` encoded each change: **exact** (64-bit entry fingerprints, Golomb–Rice coded, \
         plus one category index per addition, and removals as Golomb–Rice coded positions in \
         the base's sorted fingerprint table — what a file with a verification section applies), \
         and, when there are additions, **compact** (b-bit fingerprint prefixes for a Bloom file \
         without verification, kept there as a patch; a compact delta carries no removal \
         positions — such a file cannot forget entries — so its bytes per *changed* entry in the \
         mixed rows count removals that cost nothing). Compact deltas at the default patch rate \
         (the list's rate × additions / entries) and with `patch_fpp = {ANCHOR_PATCH_FPP}` (the \
         additions get a 1 % budget of their own: seed 001's CRLite anchor, \"if fewer than 1,000 \
         certificates are newly revoked, the update file is under 1 KB\"). A compact delta codes \
         its additions as Golomb–Rice coded prefixes or as a static ribbon filter, whichever is \
         smaller (the ribbon for all but the smallest deltas; see the bound table below). A delta \
         that changes nothing takes {} bytes in delta format 2 (varint header and checksum; {} \
         in format 1, whose fixed header took 160). The formula column is a delta's \
         uncoded parts as written (header, checksum, and the extras: category names, count \
         changes per category, category indices of additions) plus log₂(U/n) + 1.5 bits per \
         coded value (Golomb 1966; U = 2ᵇ for additions of b bits, the base's entry count for \
         removals), or f bits per addition for a ribbon filter of f-bit results.\n\n",
        list.description,
        fmt::count(list.entries),
        list.categories,
        deltas.empty_bytes,
        deltas.empty_bytes_version1,
    )
}

/// Why a compact delta has two rates, and what an addition costs at each.
fn why_two_rates(entries: u64) -> String {
    let n = TARGET_ADDITIONS;
    let big_n = entries as f64;
    let p1 = per_probe(1);
    format!(
        "**Why two compact rates.** A compact delta's n additions are b-bit prefixes, and a \
         Golomb–Rice coded set of n values over 2ᵇ costs log₂(2ᵇ/n) + 1.5 bits per value. By \
         default b = ⌈log₂(N/p)⌉ for a list of N entries at per-probe rate p: the patch's rate \
         n/2ᵇ is then p·n/N, its share of the list's budget, so that after any number of deltas \
         the patches of all N entries together still add only p — a *sustainable* patch, at \
         **log₂(N/(n·p)) + 1.5 bits per addition**, which grows with the list and shrinks with \
         the delta. Given its own budget p (`patch_fpp`), b = ⌈log₂(n/p)⌉ and an addition costs \
         **log₂(1/p) + 1.5 bits** whatever N — the CRLite anchor's arithmetic — but each such \
         delta adds p to the rate of the list that keeps it, until the next full file. For this \
         list (N = {}), n = {} and p = 1 % per probe that is {:.1} bits against {:.1} (the \
         Golomb–Rice coded prefixes; the rows above code most additions as a ribbon filter instead, at about ⌈log₂(1/q)⌉ bits each: see the bound table); with 20 probes per \
         URL p is 20× smaller per probe and both cost log₂ 20 = {:.1} bits more — which is why \
         the {}-byte target is met at 1 % per probe and not at 1 % per URL of 20 probes. An \
         exact delta cannot meet it at any rate: its additions are whole 64-bit fingerprints \
         (log₂(2⁶⁴/n) + 1.5 ≈ {:.0} bits each for n = {}) and a category index each; removals \
         cost log₂(N/n) + 1.5 bits as positions in the table both sides hold, far under the \
         {TARGET_BYTES_PER_REMOVAL}-byte target.\n\n",
        fmt::count(entries),
        fmt::count(n),
        theory::golomb_bits_per_value(big_n / p1, n),
        theory::golomb_bits_per_value(n as f64 / p1, n),
        20f64.log2(),
        fmt::count(TARGET_ADDITION_BYTES),
        theory::golomb_bits_per_value(2f64.powi(64), n),
        fmt::count(n),
    )
}

/// The bound table's target for a row: 1,000 additions in at most 1,000 bytes.
fn bound_target(row: &BoundRow) -> String {
    if row.added != TARGET_ADDITIONS {
        return String::new();
    }
    let met = row.bytes <= TARGET_ADDITION_BYTES;
    format!(
        "≤ {} B: {}",
        fmt::count(TARGET_ADDITION_BYTES),
        if met { "met" } else { "**not met**" }
    )
}

/// Writes the table of compact deltas against the membership bound, and its CSV.
fn render_bound(ctx: &mut Context, rows: &[BoundRow]) -> Result<String> {
    let mut table = Table::new(&[
        "probes_per_item",
        "added",
        "patch_rate_per_probe",
        "coding",
        "kept_bits",
        "bytes_format1",
        "bytes",
        "bits_per_entry",
        "bound_bits",
        "ratio",
    ]);
    let mut md_rows = Vec::new();
    for row in rows {
        table.push(vec![
            row.probes.to_string(),
            row.added.to_string(),
            num(row.rate),
            row.coding.to_string(),
            row.kept_bits.to_string(),
            row.bytes_version1
                .map(|b| b.to_string())
                .unwrap_or_default(),
            row.bytes.to_string(),
            num(row.bits_per_entry()),
            num(row.bound_bits),
            num(row.ratio()),
        ]);
        md_rows.push(vec![
            fmt::count(row.added),
            row.probes.to_string(),
            fmt::rate(row.rate),
            format!("{}, {} bits", row.coding, row.kept_bits),
            match row.bytes_version1 {
                Some(before) => format!("{} → {}", fmt::count(before), fmt::count(row.bytes)),
                None => format!("— → {}", fmt::count(row.bytes)),
            },
            fmt::real(row.bits_per_entry(), 2),
            fmt::real(row.bound_bits, 2),
            fmt::real(row.ratio(), 3),
            bound_target(row),
        ]);
    }
    let csv = ctx.write_csv("changes_delta_bound.csv", &table)?;
    let mut md = String::from(
        "#### Bytes per change against the bound\n\n\
         Compact deltas of n additions (synthetic entries, as above) with `patch_fpp = 0.01` \
         per checked item, so a patch rate q = 1 % per probe for lists of whole keys (1 probe \
         per item) and 0.05 % for URL lists (20 probes), in both codings. The bound is \
         log₂(1/q) bits per addition (Carter et al. 1978: no structure that lets strangers \
         through at rate q holds a set in fewer); the bytes and bits per entry count the whole \
         file, header and checksum included. Golomb–Rice coded prefixes cost about log₂(1/q) + \
         1.5 bits (the prefix set's own entropy is log₂(1/q) + 1.44, so no coding of prefixes \
         meets the bound); the ribbon filter (Dillinger & Walzer 2021, band width 128, smallest \
         solvable size and seed chosen by the sender) costs ⌈log₂(1/q)⌉ · m/n bits with m/n \
         between 1.00 and 1.02 here — the rounding of f to whole bits is most of what remains \
         (7 bits for 6.64 at 1 %), and it buys a lower rate (2⁻⁷ = 0.78 %). Format 1 (the \
         160-byte header) could not hold a ribbon filter; its prefix bytes are the \
         \"before\".\n\n",
    );
    md.push_str(&markdown_table(
        &[
            "n added",
            "probes",
            "patch rate q",
            "coding",
            "bytes (format 1 → 2)",
            "bits / entry",
            "bound (bits)",
            "ratio",
            "target",
        ],
        &md_rows,
    ));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    Ok(md)
}
