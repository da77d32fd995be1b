//! Section 8, lists that change (issue 11): bits per key against p of the kinds a list can be,
//! beside their formulas and the static binary fuse filters; ns per operation beside real peers;
//! what a full cuckoo filter does; delta sizes against the targets; the time to apply a
//! delta.
//!
//! Rendered here from [`phishbloom_lab::measure::changes`]'s results, which this module only
//! formats (CSV, Markdown, SVG).

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{
    ApplyTimes, BitsPoint, BoundRow, ChangeKind, Changes, DeltaRow, Deltas, Encoding, Eviction,
    SpeedRow, ANCHOR_PATCH_FPP, DELTA_RATE, RATES, TARGET_ADDITIONS, TARGET_ADDITION_BYTES,
    TARGET_APPLY_MS, TARGET_BYTES_PER_REMOVAL,
};
use phishbloom_lab::measure::contenders::Structure;
use phishbloom_lab::stats::median;
use phishbloom_lab::theory;

use crate::context::{figure, markdown_table, Context};
use crate::error::Result;
use crate::output::{measurement_cells, num, Table};
use crate::plot::{Axis, LegendAt, Panel, Point, Series, Style, PALETTE};

/// The own structures in the order the tables show them.
const OURS: [Structure; 4] = [
    Structure::Classic,
    Structure::Blocked,
    Structure::Cuckoo,
    Structure::Counting,
];

/// The formula a structure's bits per key are compared with, as printed.
fn formula_text(structure: Structure) -> &'static str {
    match structure {
        Structure::Classic | Structure::Blocked | Structure::Fastbloom => "1.44·log₂(1/p)",
        Structure::Cuckoo | Structure::CuckoofilterCrate => "(log₂(1/p) + 3)/0.95",
        Structure::Counting => "4 × 1.44·log₂(1/p)",
        Structure::BinaryFuse8 => "1.125 × 8 (n ≥ 10⁶)",
        Structure::BinaryFuse16 => "1.125 × 16 (n ≥ 10⁶)",
    }
}

/// `bits · rate` for a table cell.
fn bits_cell(point: &BitsPoint) -> String {
    let m = &point.measured;
    format!(
        "{} · {}{}",
        fmt::real(point.bits_per_key, 2),
        fmt::rate(m.rate),
        if m.false_positives < 10 {
            format!(" ({} FP)", m.false_positives)
        } else {
            String::new()
        }
    )
}

/// Writes part (a): the CSV, the figure and the table; returns the Markdown.
fn render_bits(ctx: &mut Context, bits: &[BitsPoint]) -> Result<String> {
    let mut table = Table::new(&[
        "structure",
        "p",
        "n",
        "bytes",
        "bits_per_key",
        "formula",
        "formula_bits_per_key",
        "cuckoo_load",
        "false_negatives",
        "queries",
        "false_positives",
        "rate",
        "ci95_low",
        "ci95_high",
        "predicted_rate",
    ]);
    for point in bits {
        let m = &point.measured;
        table.push(
            [
                vec![
                    point.structure.name().to_string(),
                    num(point.p),
                    point.n.to_string(),
                    point.bytes.to_string(),
                    num(point.bits_per_key),
                    formula_text(point.structure).to_string(),
                    num(point.formula_bits_per_key),
                    point.load.map(num).unwrap_or_default(),
                    point.false_negatives.to_string(),
                ],
                measurement_cells(m),
            ]
            .concat(),
        );
    }
    let csv = ctx.write_csv("changes_bits.csv", &table)?;

    let find =
        |structure: Structure, p: f64| bits.iter().find(|b| b.structure == structure && b.p == p);
    let mut rows = Vec::new();
    for &p in &RATES {
        let mut row = vec![
            format!("10^{}", p.log10().round()),
            fmt::real(theory::bloom_bits_per_key(p), 2),
        ];
        for structure in OURS {
            let cell = find(structure, p).map_or("—".to_string(), bits_cell);
            match structure {
                Structure::Cuckoo => {
                    row.push(fmt::real(
                        theory::cuckoo_bits_per_key_continuous(p, 0.95),
                        2,
                    ));
                    row.push(cell);
                }
                Structure::Counting => {
                    row.push(fmt::real(
                        phishbloom_filter::counting::counting_bits_per_key(p),
                        2,
                    ));
                    row.push(cell);
                }
                _ => row.push(cell),
            }
        }
        rows.push(row);
    }

    // The figure: bits per key against p, and the measured rate against p.
    let p_min = RATES.iter().copied().fold(f64::INFINITY, f64::min);
    let p_max = RATES.iter().copied().fold(0.0, f64::max);
    let curve = |f: &dyn Fn(f64) -> f64| -> Vec<Point> {
        (0..=50)
            .map(|i| {
                let p = p_min * (p_max / p_min).powf(f64::from(i) / 50.0);
                Point::at(p, f(p))
            })
            .collect()
    };
    let styles = [
        Style::Circles,
        Style::Triangles,
        Style::Squares,
        Style::Crosses,
    ];
    let mut space = vec![
        Series::new(
            "bound log₂(1/p)",
            PALETTE[6],
            Style::Dashed,
            curve(&phishbloom_filter::math::information_bound_bits_per_key),
        ),
        Series::new(
            "Bloom 1.44·log₂(1/p)",
            PALETTE[0],
            Style::Line,
            curve(&theory::bloom_bits_per_key),
        ),
        Series::new(
            "cuckoo (log₂(1/p)+3)/0.95",
            PALETTE[2],
            Style::Line,
            curve(&|p| theory::cuckoo_bits_per_key_continuous(p, 0.95)),
        ),
        Series::new(
            "counting 4 × Bloom",
            PALETTE[3],
            Style::Line,
            curve(&phishbloom_filter::counting::counting_bits_per_key),
        ),
    ];
    let mut rates = vec![Series::new(
        "measured = target",
        PALETTE[6],
        Style::Dashed,
        vec![Point::at(p_min, p_min), Point::at(p_max, p_max)],
    )];
    let colors = [0, 1, 2, 3];
    for (i, structure) in OURS.into_iter().enumerate() {
        let points: Vec<&BitsPoint> = bits.iter().filter(|b| b.structure == structure).collect();
        space.push(Series::new(
            &format!("{structure}, measured"),
            PALETTE[colors[i]],
            styles[i],
            points
                .iter()
                .map(|b| Point::at(b.p, b.bits_per_key))
                .collect(),
        ));
        // Classic a little left of p, blocked a little right, so the bars do not overlap.
        let shift = [0.8, 1.25, 0.9, 1.1][i];
        rates.push(Series::new(
            &format!("{structure}"),
            PALETTE[colors[i]],
            styles[i],
            points
                .iter()
                .map(|b| {
                    let m = &b.measured;
                    Point::with_interval(b.p * shift, m.rate, m.ci_low, m.ci_high)
                })
                .collect(),
        ));
    }
    for (structure, color) in [(Structure::BinaryFuse8, 4), (Structure::BinaryFuse16, 5)] {
        if let Some(b) = bits.iter().find(|b| b.structure == structure) {
            space.push(Series::new(
                &format!("{structure} (static)"),
                PALETTE[color],
                Style::Squares,
                vec![Point::at(b.p, b.bits_per_key)],
            ));
            let m = &b.measured;
            rates.push(Series::new(
                &format!("{structure} (static)"),
                PALETTE[color],
                Style::Squares,
                vec![Point::with_interval(b.p, m.rate, m.ci_low, m.ci_high)],
            ));
        }
    }
    let max_bits = bits
        .iter()
        .map(|b| b.bits_per_key)
        .fold(0.0, f64::max)
        .max(10.0);
    let x = Axis::log_exact("p (target false-positive rate)", p_min * 0.5, p_max * 2.0);
    let svg = ctx.write_svg(
        "fig-changes-bits.svg",
        "Bits per key against p: the kinds a list can be, and the static binary fuse filters",
        &[
            Panel {
                title: format!("space at n = {}", fmt::count(bits[0].n)),
                x: x.clone(),
                y: Axis::linear("bits per key", 0.0, (max_bits / 10.0).ceil() * 10.0),
                series: space,
                legend: LegendAt::UpperRight,
            },
            Panel {
                title: "measured false-positive rate (95 % intervals)".to_string(),
                x,
                y: Axis::log("false-positive rate", p_min * 0.1, 1.0),
                series: rates,
                legend: LegendAt::UpperLeft,
            },
        ],
        (1500, 640),
    )?;

    let n = bits[0].n;
    let mut md = format!(
        "### Bits per key against p\n\n\
         Each structure of each kind was built for n = {} synthetic keys (`kw-<hex>`) at every p, \
         and its bytes (bits, cuckoo slots, 4-bit counters, binary fuse fingerprints) × 8 / n are \
         the measured bits per key. Each was then queried with every member (no false negative \
         anywhere: see the CSV) and with fresh non-members (`nq-<hex>`, a new block per point) — \
         enough for about {} false positives, between {} and {} queries. Each cell: bits per key \
         · measured rate (the false-positive count when under 10). Formulas: a classic Bloom \
         filter needs 1.44·log₂(1/p) bits per key (Broder & Mitzenmacher 2004; `math::\
         optimal_num_bits`), the blocked layout more (its exact per-block sizing, section 4); a \
         cuckoo filter (log₂(1/p) + 3)/α with α = 0.95 (Fan et al. 2014, §5.2; the built one \
         rounds the fingerprint up to whole bits, f = ⌈log₂(8/p)⌉); a counting filter 4× the \
         classic one (4-bit counters; Fan et al. 2000); a 3-wise binary fuse filter 1.125 × its \
         fingerprint bits from 10⁶ keys on (Graf & Lemire 2022, §4), with rate 2⁻ᶠ.\n\n",
        fmt::count(n),
        fmt::count(ctx.settings.sizes.changes_target_false_positives as u64),
        fmt::count(ctx.settings.sizes.changes_min_queries),
        fmt::count(ctx.settings.sizes.changes_max_queries),
    );
    md.push_str(&markdown_table(
        &[
            "p",
            "Bloom formula",
            "classic",
            "blocked",
            "cuckoo formula",
            "cuckoo",
            "counting formula",
            "counting",
        ],
        &rows,
    ));
    let fuse: Vec<String> = [Structure::BinaryFuse8, Structure::BinaryFuse16]
        .into_iter()
        .filter_map(|s| bits.iter().find(|b| b.structure == s))
        .map(|b| {
            format!(
                "`{}`: {} bits per key (formula {}) at a measured rate of {} (2⁻ᶠ = {}, {} FP in \
                 {} queries)",
                b.structure,
                fmt::real(b.bits_per_key, 2),
                fmt::real(b.formula_bits_per_key, 2),
                fmt::rate(b.measured.rate),
                fmt::rate(b.measured.theoretical),
                fmt::count(b.measured.false_positives),
                fmt::count(b.measured.queries)
            )
        })
        .collect();
    md.push_str(&format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         The static reference, built once from all n keys' xxh3-64 hashes and unable to add or \
         remove one: {}. A cuckoo filter's measured rate sits below p because its fingerprint \
         is rounded up to whole bits and its bound 2bα/2ᶠ is what it is sized by (the CSV's \
         `predicted_rate` column is that bound); it beats a Bloom filter on space from about \
         p = 10⁻³ down, as Fan et al. predict, and deletes; the counting filter pays 4× for \
         deleting.\n\n",
        fuse.join("; ")
    ));
    md.push_str(&figure(
        &svg,
        "Bits per key and measured false-positive rate against p",
        &csv,
    ));
    md.push('\n');
    Ok(md)
}

/// `ns (÷ peer)` for a table cell.
fn ratio_cell(ours: f64, peer: Option<f64>) -> String {
    match peer {
        Some(peer) if peer > 0.0 => format!("{:.1} ({:.2}×)", ours, ours / peer),
        _ => format!("{ours:.1}"),
    }
}

/// Writes part (b): the CSV and tables of the speed rows and the eviction test.
fn render_speed(ctx: &mut Context, speed: &[SpeedRow], eviction: &Eviction) -> Result<String> {
    let mut table = Table::new(&[
        "n",
        "structure",
        "bytes",
        "bits_per_key",
        "load",
        "insert_ns",
        "member_ns",
        "non_member_ns",
        "delete_ns",
        "peer",
        "insert_ratio",
        "member_ratio",
        "non_member_ratio",
        "delete_peer",
        "delete_ratio",
        "refused",
        "false_negatives",
        "false_positives",
        "failed_deletes",
    ]);
    let mut rows = Vec::new();
    let row_of = |n: u64, s: Structure| speed.iter().find(|r| r.n == n && r.structure == s);
    for r in speed {
        let peer = r.structure.peer(false).and_then(|p| row_of(r.n, p));
        let delete_peer = r.structure.peer(true).and_then(|p| row_of(r.n, p));
        let ratio = |ours: f64, theirs: Option<f64>| theirs.map(|t| num(ours / t));
        let delete_ratio = match (r.delete_ns, delete_peer.and_then(|p| p.delete_ns)) {
            (Some(ours), Some(theirs)) => num(ours / theirs),
            _ => String::new(),
        };
        table.push(vec![
            r.n.to_string(),
            r.structure.name().to_string(),
            r.bytes.to_string(),
            num(r.bytes as f64 * 8.0 / r.n as f64),
            r.load.map(num).unwrap_or_default(),
            num(r.insert_ns),
            num(r.member_ns),
            num(r.non_member_ns),
            r.delete_ns.map(num).unwrap_or_default(),
            peer.map(|p| p.structure.name().to_string())
                .unwrap_or_default(),
            ratio(r.insert_ns, peer.map(|p| p.insert_ns)).unwrap_or_default(),
            ratio(r.member_ns, peer.map(|p| p.member_ns)).unwrap_or_default(),
            ratio(r.non_member_ns, peer.map(|p| p.non_member_ns)).unwrap_or_default(),
            delete_peer
                .filter(|_| r.delete_ns.is_some())
                .map(|p| p.structure.name().to_string())
                .unwrap_or_default(),
            delete_ratio,
            r.refused.to_string(),
            r.false_negatives.to_string(),
            r.false_positives.to_string(),
            r.failed_deletes.to_string(),
        ]);
        rows.push(vec![
            fmt::power_of_ten(r.n),
            r.structure.name().to_string(),
            format!(
                "{}{}",
                fmt::real(r.bytes as f64 * 8.0 / r.n as f64, 2),
                r.load
                    .map(|l| format!(" (load {:.0} %)", l * 100.0))
                    .unwrap_or_default()
            ),
            ratio_cell(r.insert_ns, peer.map(|p| p.insert_ns)),
            ratio_cell(r.member_ns, peer.map(|p| p.member_ns)),
            ratio_cell(r.non_member_ns, peer.map(|p| p.non_member_ns)),
            match r.delete_ns {
                Some(ns) => ratio_cell(ns, delete_peer.and_then(|p| p.delete_ns)),
                None => "—".to_string(),
            },
            fmt::rate(r.false_positives as f64 / r.n as f64),
        ]);
    }
    let csv = ctx.write_csv("changes_speed.csv", &table)?;

    let mut evict = Table::new(&[
        "filter",
        "slots",
        "fingerprint_bits",
        "offered",
        "accepted",
        "refused",
        "accepted_then_lost",
    ]);
    let mut evict_rows = Vec::new();
    for (name, f) in [
        ("phishbloom cuckoo", &eviction.ours),
        ("cuckoofilter crate 0.5", &eviction.peer),
    ] {
        evict.push(vec![
            name.to_string(),
            f.slots.to_string(),
            f.fingerprint_bits.to_string(),
            eviction.offered.to_string(),
            f.accepted.to_string(),
            f.refused.to_string(),
            f.lost.to_string(),
        ]);
        evict_rows.push(vec![
            name.to_string(),
            format!("{} × {} bits", fmt::count(f.slots), f.fingerprint_bits),
            fmt::count(f.accepted),
            fmt::count(f.refused),
            format!("**{}**", fmt::count(f.lost)),
        ]);
    }
    let evict_csv = ctx.write_csv("changes_eviction.csv", &evict)?;

    let sizes = &ctx.settings.sizes;
    let mut md = format!(
        "### ns per operation, beside peers\n\n\
         At n = {} keys and p = 1 %, one thread: each structure is built empty and timed \
         inserting the n keys (`kw-<hex>`, generated beforehand), querying them, querying n \
         non-members and deleting the n keys; all structures once in turn, {} time{} over, and \
         the median kept. Keys are hashed inside the timed loop: phishbloom's structures with \
         xxh3-128 (`KeyHash::of`), `fastbloom` 0.17 (a blocked Bloom filter, sized with \
         `with_false_pos(0.01).expected_items(n)`) with xxh3-64 through `insert_hash`, the \
         `cuckoofilter` crate 0.5 with its own hasher (SipHash-1-3) over the key bytes. Each own \
         structure is shown with its time and, in brackets, the ratio to its peer measured in \
         the same run: `fastbloom` for the Bloom kinds' and the counting filter's inserts and \
         queries, the `cuckoofilter` crate for the cuckoo filter and for every delete (no Bloom \
         peer deletes). The peers' rows give their own times. The peers are not the same \
         structure: the `cuckoofilter` crate stores 8-bit fingerprints (a rate of about 3 %) and \
         rounds its slots to a power of two (sized for n/0.95 keys, its load is lower than ours: \
         see the load column), which favours its inserts. The same operations are measured with \
         criterion by `cargo bench -p phishbloom-lab --bench kinds`.\n\n",
        sizes
            .changes_speed_keys
            .iter()
            .map(|&n| fmt::power_of_ten(n))
            .collect::<Vec<_>>()
            .join(" and "),
        sizes.changes_speed_repetitions,
        if sizes.changes_speed_repetitions == 1 {
            ""
        } else {
            "s"
        },
    );
    md.push_str(&markdown_table(
        &[
            "n",
            "structure",
            "bits/key",
            "insert ns (÷ peer)",
            "member query ns (÷ peer)",
            "non-member query ns (÷ peer)",
            "delete ns (÷ peer)",
            "FP rate",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         **A full cuckoo filter.** phishbloom's cuckoo filter refuses an insert that finds no \
         free slot after {} evictions and undoes every move, so the filter is unchanged \
         (`Err(Full)`; a list then grows or says it is full). The `cuckoofilter` crate's `add` \
         returns `NotEnoughSpace` *after* dropping the last evicted fingerprint — another key's \
         — so a key that was accepted earlier now answers \"absent\": a silent false negative, \
         the one error a blocklist must not make. Both filters below have 1,024 slots of 8-bit \
         fingerprints and are offered the same {} keys; the last column counts keys whose insert \
         succeeded and that the filter no longer finds. (The crate's eviction path draws from \
         `rand::thread_rng`, so its counts vary a little between runs; phishbloom's are fixed.)\n\n",
        phishbloom_filter::cuckoo::MAX_KICKS,
        fmt::count(eviction.offered),
    ));
    md.push_str(&markdown_table(
        &[
            "filter",
            "slots",
            "accepted",
            "refused",
            "accepted, then lost",
        ],
        &evict_rows,
    ));
    md.push_str(&format!("\n*Data: [{evict_csv}]({evict_csv}).*\n\n"));
    Ok(md)
}

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

/// Writes part (c): the CSV and the tables of delta sizes.
fn render_deltas(ctx: &mut Context, deltas: &Deltas) -> Result<String> {
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
            table.push(vec![
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
                target.as_ref().map(|t| t.0.clone()).unwrap_or_default(),
                target
                    .as_ref()
                    .map(|t| if t.1 { "yes" } else { "no" }.to_string())
                    .unwrap_or_default(),
            ]);
            rows.push(vec![
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
            ]);
        }
        tables.push((probes, rows));
    }
    let csv = ctx.write_csv("changes_deltas.csv", &table)?;

    let list = &deltas.list;
    let mut md = format!(
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
    );
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
    let n = TARGET_ADDITIONS;
    let big_n = list.entries as f64;
    let p1 = per_probe(1);
    md.push_str(&format!(
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
        fmt::count(list.entries),
        fmt::count(n),
        theory::golomb_bits_per_value(big_n / p1, n),
        theory::golomb_bits_per_value(n as f64 / p1, n),
        20f64.log2(),
        fmt::count(TARGET_ADDITION_BYTES),
        theory::golomb_bits_per_value(2f64.powi(64), n),
        fmt::count(n),
    ));
    md.push_str(&render_bound(ctx, &deltas.bound)?);
    Ok(md)
}

/// The bound table's target for a row: the 1,000 bytes for 1,000 additions.
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

/// Writes part (d): the CSV and the table of apply times.
fn render_apply(ctx: &mut Context, apply: &ApplyTimes) -> Result<String> {
    let mut table = Table::new(&[
        "run",
        "entries",
        "added",
        "removed",
        "memory_apply_ms",
        "one_category_memory_apply_ms",
        "table_update_ms",
        "open_ms",
        "delta_open_ms",
        "apply_ms",
        "save_ms",
        "open_apply_save_ms",
    ]);
    let ms = |s: f64| s * 1e3;
    for i in 0..apply.memory.len() {
        let total = apply.open[i] + apply.delta_open[i] + apply.file_apply[i] + apply.save[i];
        table.push(vec![
            (i + 1).to_string(),
            apply.entries.to_string(),
            apply.added.to_string(),
            apply.removed.to_string(),
            num(ms(apply.memory[i])),
            apply
                .one_category
                .get(i)
                .map(|&t| num(ms(t)))
                .unwrap_or_default(),
            apply
                .table_update
                .get(i)
                .map(|&t| num(ms(t)))
                .unwrap_or_default(),
            num(ms(apply.open[i])),
            num(ms(apply.delta_open[i])),
            num(ms(apply.file_apply[i])),
            num(ms(apply.save[i])),
            num(ms(total)),
        ]);
    }
    let csv = ctx.write_csv("changes_apply.csv", &table)?;
    let met = |value: f64| {
        if value <= TARGET_APPLY_MS {
            "met"
        } else {
            "**not met**"
        }
    };
    let rows = vec![
        vec![
            "`Blocklist::apply` in memory".to_string(),
            fmt::real(apply.memory_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.memory_ms())),
        ],
        vec![
            "the same, to the same entries in one category".to_string(),
            fmt::real(apply.one_category_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.one_category_ms())),
        ],
        vec![
            "open the file (`Blocklist::open`)".to_string(),
            fmt::real(median(&apply.open) * 1e3, 1),
            String::new(),
        ],
        vec![
            "read the delta (`Delta::open`)".to_string(),
            fmt::real(median(&apply.delta_open) * 1e3, 1),
            String::new(),
        ],
        vec![
            "apply it".to_string(),
            fmt::real(median(&apply.file_apply) * 1e3, 1),
            String::new(),
        ],
        vec![
            "save the file (temporary, fsync, rename)".to_string(),
            fmt::real(median(&apply.save) * 1e3, 1),
            String::new(),
        ],
        vec![
            "open + apply + save (`phishbloom apply`)".to_string(),
            fmt::real(apply.file_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.file_ms())),
        ],
    ];
    let mut md = format!(
        "### Time to apply\n\n\
         A verified cuckoo blocklist (p = 1 % per URL, 20 probes) of {} entries: {} from the list \
         above{} — {} bytes on disk. A mixed delta of {} changes ({} new entries, {} removals at \
         random; {} bytes) is applied {} times, each to a fresh copy: in memory (the list read \
         from its bytes beforehand, untimed), and as `phishbloom apply` does it on a file copied \
         into place beforehand (untimed): open it, read the delta, apply, save (a temporary file, \
         fsync, rename). Medians (ms; wall-clock on the shared 2-core machine, load average {} \
         when the runs began: under a lighter load every step is faster; compare the steps \
         with each other):\n\n",
        fmt::count(apply.entries),
        fmt::count(apply.listed_entries),
        if apply.synthetic_entries > 0 {
            format!(
                " and {} synthetic ones (`fill-<hex>.changes.test`, category `synthetic`: UT1 \
                 has fewer than {} distinct entries)",
                fmt::count(apply.synthetic_entries),
                fmt::count(apply.entries)
            )
        } else {
            String::new()
        },
        fmt::count(apply.file_bytes),
        fmt::count(apply.added + apply.removed),
        fmt::count(apply.added),
        fmt::count(apply.removed),
        fmt::count(apply.delta_bytes),
        apply.memory.len(),
        apply.load_average.as_deref().unwrap_or("unknown"),
    );
    md.push_str(&markdown_table(&["step", "median ms", "target"], &rows));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    md.push_str(&format!(
        "Where the time goes: `Verification::update` alone — the step of `apply` that rewrites \
         the verification table, timed on a copy of the table with the same change — takes {:.1} \
         ms of the {:.1}: one linear merge of the sorted table with the sorted change, each \
         entry's category set carried as an index (no allocation per entry), for the {} entries \
         and a change of {}. The same list in one category applies in {:.1} ms. Opening and \
         saving the {} file cost {:.1} + {:.1} ms more whatever the change (checksums, \
         decoding, writing and fsync of every byte).\n\n",
        median(&apply.table_update) * 1e3,
        apply.memory_ms(),
        fmt::count(apply.entries),
        fmt::count(apply.added + apply.removed),
        apply.one_category_ms(),
        fmt::bytes(apply.file_bytes),
        median(&apply.open) * 1e3,
        median(&apply.save) * 1e3,
    ));
    Ok(md)
}

/// Writes the section from [`phishbloom_lab::measure::changes::run`]'s results.
pub fn render(ctx: &mut Context, changes: &Changes) -> Result<String> {
    let mut md = String::from("## 8. Lists that change\n\n");
    md.push_str(
        "Issue 11 makes lists live: kinds that delete (a cuckoo filter, a counting Bloom filter), \
         `add`, `remove`, `merge`, and small verified deltas between versions. This section \
         measures what that costs: space and false-positive rate of each kind against p, the \
         time of each operation beside real peers, the bytes of a delta against the issue's \
         targets, and the time to apply one.\n\n",
    );
    md.push_str(&render_bits(ctx, &changes.bits)?);
    md.push_str(&render_speed(ctx, &changes.speed, &changes.eviction)?);
    md.push_str(&render_deltas(ctx, &changes.deltas)?);
    md.push_str(&render_apply(ctx, &changes.apply)?);

    let at = |structure: Structure| {
        changes
            .bits
            .iter()
            .find(|b| b.structure == structure && b.p == DELTA_RATE)
            .map_or("—".to_string(), |b| fmt::real(b.bits_per_key, 2))
    };
    ctx.headlines.push(format!(
        "lists that change: bits/key at p = 1 %: classic {}, blocked {}, cuckoo {}, counting {}",
        at(Structure::Classic),
        at(Structure::Blocked),
        at(Structure::Cuckoo),
        at(Structure::Counting)
    ));
    let addition = |probes: u32, encoding: Encoding| {
        changes
            .deltas
            .rows
            .iter()
            .find(|r| {
                r.probes == probes
                    && r.change == ChangeKind::Additions
                    && r.added == TARGET_ADDITIONS
                    && r.encoding == encoding
            })
            .map_or("—".to_string(), |r| format!("{} B", fmt::count(r.bytes)))
    };
    let removal = changes
        .deltas
        .rows
        .iter()
        .filter(|r| r.change == ChangeKind::Removals)
        .map(DeltaRow::bytes_per_change)
        .fold(0.0, f64::max);
    ctx.headlines.push(format!(
        "deltas: 1,000 additions with patch_fpp = 0.01: {} (1 probe), {} (20 probes) vs ≤ {} B; \
         removals ≤ {:.2} B each vs ≤ {TARGET_BYTES_PER_REMOVAL}",
        addition(1, Encoding::CompactAnchor),
        addition(20, Encoding::CompactAnchor),
        fmt::count(TARGET_ADDITION_BYTES),
        removal
    ));
    ctx.headlines.push(format!(
        "apply: {} changes to a {}-entry cuckoo list: {:.1} ms in memory, {:.1} ms open+apply+save \
         vs ≤ {TARGET_APPLY_MS} ms",
        fmt::count(changes.apply.added + changes.apply.removed),
        fmt::count(changes.apply.entries),
        changes.apply.memory_ms(),
        changes.apply.file_ms()
    ));
    Ok(md)
}
