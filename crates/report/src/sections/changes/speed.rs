//! The "Lists that change" section's speed: ns per operation of each kind beside its peer
//! measured in the same run, and what a full cuckoo filter does with one more key.

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{Eviction, SpeedRow};
use phishbloom_lab::measure::contenders::Structure;
use phishbloom_lab::measure::Sizes;

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// `ns (÷ peer)` for a table cell.
fn ratio_cell(ours: f64, peer: Option<f64>) -> String {
    match peer {
        Some(peer) if peer > 0.0 => format!("{:.1} ({:.2}×)", ours, ours / peer),
        _ => format!("{ours:.1}"),
    }
}

/// Writes the CSV and tables of the speed rows and the eviction test; returns the Markdown.
pub(super) fn render(ctx: &mut Context, speed: &[SpeedRow], eviction: &Eviction) -> Result<String> {
    let (table, rows) = speed_table(speed);
    let csv = ctx.write_csv("changes_speed.csv", &table)?;
    let (evict, evict_rows) = eviction_table(eviction);
    let evict_csv = ctx.write_csv("changes_eviction.csv", &evict)?;
    let mut md = speed_intro(&ctx.settings.sizes);
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

/// The speed rows as a CSV table (`changes_speed.csv`) and as Markdown rows, each own
/// structure beside its peer.
fn speed_table(speed: &[SpeedRow]) -> (Table, Vec<Vec<String>>) {
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
        table.push(speed_cells(r, peer, delete_peer));
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
    (table, rows)
}

/// One speed row's CSV cells, with the ratios to its peer and to its delete peer.
fn speed_cells(
    r: &SpeedRow,
    peer: Option<&SpeedRow>,
    delete_peer: Option<&SpeedRow>,
) -> Vec<String> {
    let ratio = |ours: f64, theirs: Option<f64>| theirs.map(|t| num(ours / t));
    let delete_ratio = match (r.delete_ns, delete_peer.and_then(|p| p.delete_ns)) {
        (Some(ours), Some(theirs)) => num(ours / theirs),
        _ => String::new(),
    };
    vec![
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
    ]
}

/// The eviction test as a CSV table (`changes_eviction.csv`) and as Markdown rows.
fn eviction_table(eviction: &Eviction) -> (Table, Vec<Vec<String>>) {
    let mut evict = Table::new(&[
        "filter",
        "slots",
        "fingerprint_bits",
        "offered",
        "accepted",
        "refused",
        "accepted_then_lost",
    ]);
    let mut rows = Vec::new();
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
        rows.push(vec![
            name.to_string(),
            format!("{} × {} bits", fmt::count(f.slots), f.fingerprint_bits),
            fmt::count(f.accepted),
            fmt::count(f.refused),
            format!("**{}**", fmt::count(f.lost)),
        ]);
    }
    (evict, rows)
}

/// How the operations were timed, and against which peers.
fn speed_intro(sizes: &Sizes) -> String {
    format!(
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
    )
}
