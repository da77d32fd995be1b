//! One list measured: every structure built, its bytes, its per-URL rate on the clean URLs
//! (those the list does not hold), whether it finds URLs below its entries, its check time
//! (single-threaded, interleaved repetitions, medians) and its update for the additions.

use phishbloom_core::resolve::bound_bits_per_entry;
use phishbloom_core::{Blocklist, EntrySet, KeyList};

use super::build::{build, target_per_probe, Structures, UpdateBytes};
use super::checks::{pass, FuseCheck, ListCheck, Pass, PrefixCheck};
use super::lists::{before_additions, set_counts};
use super::urls::{clean_urls_of, listed_urls, mean_expressions, per_url_rate};
use super::{ListResult, Peer, PeerRow, ADDITIONS, ADDITIONS_SEED, LISTED_SEED};
use crate::error::Result;
use crate::measure::Settings;
use crate::stats::{median, Measurement};

/// One pass of `peer` over `urls` (those `mask` keeps).
fn run_pass(s: &Structures, peer: Peer, urls: &KeyList, mask: Option<&[bool]>) -> Pass {
    match peer {
        Peer::Verify => pass(&mut ListCheck::new(&s.verify), urls, mask),
        Peer::Compact => pass(&mut ListCheck::new(&s.compact), urls, mask),
        Peer::Published => pass(&mut ListCheck::new(&s.published), urls, mask),
        Peer::SafeBrowsing => pass(&mut PrefixCheck::new(&s.prefixes), urls, mask),
        Peer::BinaryFuse16 => pass(&mut FuseCheck(&s.fuse16), urls, mask),
        Peer::BinaryFuse32 => pass(&mut FuseCheck(&s.fuse32), urls, mask),
    }
}

/// The rate at which a stranger's probe matches, by structure: `n/u` for a compact table,
/// `n/2^32` for the distinct 4-byte prefixes, `2^−f` for an f-bit fuse filter, `n/2^64` for a
/// verified list (its filter's hits are confirmed by 64-bit fingerprints).
fn per_probe(s: &Structures, peer: Peer, entries: u64) -> f64 {
    let table_rate = |list: &Blocklist| {
        list.resolver()
            .compact()
            .map_or(0.0, |t| t.len() as f64 / t.map().universe() as f64)
    };
    match peer {
        Peer::Verify => entries as f64 / 2f64.powi(64),
        Peer::Compact => table_rate(&s.compact),
        Peer::Published => table_rate(&s.published),
        Peer::SafeBrowsing => s.prefixes.distinct() as f64 / 2f64.powi(32),
        Peer::BinaryFuse16 => 2f64.powi(-16),
        Peer::BinaryFuse32 => 2f64.powi(-32),
    }
}

/// Bytes of a structure as a client gets it, and of its category table when it has one apart.
fn bytes_of(s: &Structures, peer: Peer) -> (u64, Option<u64>) {
    match peer {
        Peer::Verify => (s.verify.to_bytes().len() as u64, None),
        Peer::Compact => (s.compact.to_bytes().len() as u64, None),
        Peer::Published => (s.published.to_bytes().len() as u64, None),
        Peer::SafeBrowsing => (s.prefixes.wire_bytes(), None),
        Peer::BinaryFuse16 => (s.fuse16.bytes(), Some(s.fuse16.side_bytes())),
        Peer::BinaryFuse32 => (s.fuse32.bytes(), Some(s.fuse32.side_bytes())),
    }
}

/// The update a structure sends for the additions (the compact list ships as the published
/// form: its update is that one's).
fn update_of(updates: &UpdateBytes, peer: Peer) -> u64 {
    match peer {
        Peer::Verify => updates.verify,
        Peer::Compact | Peer::Published => updates.published,
        Peer::SafeBrowsing => updates.prefixes,
        Peer::BinaryFuse16 => updates.fuse16,
        Peer::BinaryFuse32 => updates.fuse32,
    }
}

/// The first `count` URLs of `urls` that `mask` keeps, as their own list.
fn first_kept(urls: &KeyList, mask: &[bool], count: usize) -> KeyList {
    let mut kept = KeyList::default();
    for (i, line) in urls.iter().enumerate() {
        if kept.len() == count {
            break;
        }
        if mask[i] {
            kept.push(line);
        }
    }
    kept
}

/// Median ns per URL of each structure on `clean` and `listed`, over `repetitions` rounds in
/// which every structure runs once on each, in [`Peer::ALL`] order.
fn timings(
    s: &Structures,
    clean: &KeyList,
    listed: &KeyList,
    repetitions: usize,
) -> Vec<(f64, f64)> {
    let mut samples = vec![(Vec::new(), Vec::new()); Peer::ALL.len()];
    for _ in 0..repetitions.max(1) {
        for (i, &peer) in Peer::ALL.iter().enumerate() {
            samples[i]
                .0
                .push(run_pass(s, peer, clean, None).ns_per_url());
            samples[i]
                .1
                .push(run_pass(s, peer, listed, None).ns_per_url());
        }
    }
    samples
        .iter()
        .map(|(c, l)| (median(c), median(l)))
        .collect()
}

/// Measures every structure on the list `set` named `name`, asked `clean` URLs (those it does
/// not hold are the strangers).
pub fn measure_list(
    settings: &Settings,
    name: &str,
    set: &EntrySet,
    clean: &KeyList,
) -> Result<ListResult> {
    let say = |what: &str| settings.progress.say(&format!("peers: {name}: {what}"));
    say(&format!("building ({} entries)", set.entries.len()));
    let (before, _) = before_additions(set, ADDITIONS, ADDITIONS_SEED);
    let (s, updates) = build(set, &before, settings.threads)?;
    let truth = clean_urls_of(clean, &set.entries);
    let mask = &truth.mask;
    let sizes = &settings.sizes;
    let listed = listed_urls(set, sizes.peers_timed_urls, LISTED_SEED);
    let timed_clean = first_kept(clean, mask, sizes.peers_timed_urls);
    say("per-URL rates");
    let entries = set.entries.len() as u64;
    let mut rows: Vec<PeerRow> = Peer::ALL
        .iter()
        .map(|&peer| {
            let q = per_probe(&s, peer, entries);
            let found = run_pass(&s, peer, clean, Some(mask));
            let histogram = match peer {
                Peer::SafeBrowsing => &truth.v4_expressions,
                _ => &truth.expressions,
            };
            let missed = listed.len() as u64 - run_pass(&s, peer, &listed, None).listed;
            let (bytes, side_bytes) = bytes_of(&s, peer);
            PeerRow {
                peer,
                bytes,
                side_bytes,
                per_probe: q,
                clean: Measurement::new(found.listed, found.asked, per_url_rate(q, histogram)),
                missed,
                ns_clean: 0.0,
                ns_listed: 0.0,
                update_bytes: update_of(&updates, peer),
            }
        })
        .collect();
    say(&format!(
        "timing, {} rounds of {} clean and {} listed URLs",
        sizes.peers_repetitions,
        timed_clean.len(),
        listed.len()
    ));
    for (row, (ns_clean, ns_listed)) in
        rows.iter_mut()
            .zip(timings(&s, &timed_clean, &listed, sizes.peers_repetitions))
    {
        row.ns_clean = ns_clean;
        row.ns_listed = ns_listed;
    }
    let counts = set_counts(&set.membership);
    let shares: Vec<u64> = counts.iter().map(|c| c.1).collect();
    Ok(ListResult {
        name: name.to_string(),
        entries,
        categories: set.categories.clone(),
        set_counts: counts
            .iter()
            .map(|(ids, count)| {
                let names: Vec<&str> = ids
                    .iter()
                    .map(|&id| set.categories[id as usize].as_str())
                    .collect();
                (names.join(" + "), *count)
            })
            .collect(),
        bound_bits: bound_bits_per_entry(target_per_probe(), &shares),
        additions: ADDITIONS as u64,
        clean_urls: rows[0].clean.queries,
        not_clean_urls: clean.len() as u64 - rows[0].clean.queries,
        mean_expressions: mean_expressions(&truth.expressions),
        mean_v4_expressions: mean_expressions(&truth.v4_expressions),
        broad_entries: truth.broad.clone(),
        listed_urls: listed.len() as u64,
        timed_clean_urls: timed_clean.len() as u64,
        fuse_overrides: (s.fuse16.overrides() as u64, s.fuse32.overrides() as u64),
        rows,
    })
}
