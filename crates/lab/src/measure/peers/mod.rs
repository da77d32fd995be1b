//! "Compact lists against their peers": phishbloom's compact list beside the structures that
//! answer the same question, measured in one run on the same lists and URLs — for each,
//! bits per entry, the per-URL false-positive rate on clean URLs, ns per checked URL, and the
//! bytes of an update per addition.
//!
//! The structures ([`Peer`]), at ε = 10⁻⁹ per checked URL of up to E = 20 expressions (per
//! probe `q = 1 − (1 − ε)^{1/E}`) where a structure has a rate to choose:
//! - phishbloom `--verify` (blocked at 1 %, confirmed by its verification section) and
//!   `--kind compact`, and the compact form `publish` ships (no hosts gate, a universe with
//!   room for the chain of deltas);
//! - Safe Browsing v4's own encoding ([`safe_browsing`]): sorted 4-byte SHA-256 prefixes per
//!   category, Rice-coded — its rate is fixed by the 32-bit prefixes, and a hit asks the
//!   server;
//! - `xorf`'s `BinaryFuse16` and `BinaryFuse32` with a category table ([`fuse`]) — their rates
//!   are fixed by the fingerprint width.
//!
//! The lists ([`lists`]): UT1's phishing and malware folders (beside the dataset, read in
//! place) and synthetic domain lists of the sizes' `peers_domains`. Each list's last 1,000
//! additions are its entries chosen with a fixed seed; the version before them is the rest.
//! The URLs ([`urls`]): `peers_clean_urls` clean URLs of random hosts, and URLs below entries.
//!
//! One file per job: `lists`, `urls`, `safe_browsing`, `fuse`, `checks` (the timed loops),
//! `build` (the structures and updates), `measure` (one list).

mod build;
mod checks;
pub mod fuse;
pub mod lists;
mod measure;
pub mod safe_browsing;
pub mod urls;

pub use build::{target_per_probe, UpdateBytes};

use crate::error::Result;
use crate::measure::changes::ut1_root;
use crate::measure::Settings;
use crate::stats::Measurement;

/// ε: the per-URL false-positive target of the compact list.
pub const TARGET_PER_URL: f64 = 1e-9;
/// E: the expressions per URL the target holds for.
pub const EXPRESSIONS: u32 = phishbloom_core::rates::DEFAULT_EXPRESSION_BOUND;
/// The verified list's filter rate per URL (its default; hits are then confirmed exactly).
pub const VERIFY_FPP: f64 = 0.01;
/// The additions each update carries.
pub const ADDITIONS: usize = 1_000;
/// Seed of the synthetic domain lists (`gen_domains.py`'s default seed).
pub const DOMAIN_SEED: u64 = 37;
/// Seed of the clean URLs (`gen_urls.py`'s).
pub const CLEAN_SEED: u64 = 15;
/// Seed of the additions' choice.
pub const ADDITIONS_SEED: u64 = 1_000;
/// Seed of the entries the listed URLs are below.
pub const LISTED_SEED: u64 = 7;

/// A structure measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Peer {
    /// phishbloom `--verify`: blocked at 1 % with the verification section.
    Verify,
    /// phishbloom `--kind compact` (with its hosts gate on a list of URLs).
    Compact,
    /// The compact form `publish` ships of the verified list: what a client of a published
    /// list holds, and what the table deltas change.
    Published,
    /// Safe Browsing v4's Rice-coded 4-byte SHA-256 prefixes, one list per category.
    SafeBrowsing,
    /// `xorf::BinaryFuse16` of the entries' fingerprints, with a category table.
    BinaryFuse16,
    /// `xorf::BinaryFuse32` of the entries' fingerprints, with a category table.
    BinaryFuse32,
}

impl Peer {
    /// Every structure, in the report's order.
    pub const ALL: [Peer; 6] = [
        Peer::Verify,
        Peer::Compact,
        Peer::Published,
        Peer::SafeBrowsing,
        Peer::BinaryFuse16,
        Peer::BinaryFuse32,
    ];

    /// The name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Verify => "phishbloom --verify",
            Peer::Compact => "phishbloom compact",
            Peer::Published => "phishbloom compact, as published",
            Peer::SafeBrowsing => "Safe Browsing v4 prefixes",
            Peer::BinaryFuse16 => "xorf BinaryFuse16 + table",
            Peer::BinaryFuse32 => "xorf BinaryFuse32 + table",
        }
    }
}

/// One structure on one list.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PeerRow {
    /// The structure.
    pub peer: Peer,
    /// Bytes a client gets: the file (phishbloom), the Rice-coded lists (Safe Browsing), the
    /// serialized filter and its table (binary fuse).
    pub bytes: u64,
    /// Of those, the category table kept apart from the filter (binary fuse).
    pub side_bytes: Option<u64>,
    /// The rate at which one probe of a stranger matches.
    pub per_probe: f64,
    /// Clean URLs answered "listed", with the rate the per-probe rate gives these URLs.
    pub clean: Measurement,
    /// URLs below entries answered clean (0 for every structure: none has false negatives).
    pub missed: u64,
    /// Median ns per clean URL, canonicalization included.
    pub ns_clean: f64,
    /// Median ns per URL below an entry.
    pub ns_listed: f64,
    /// Bytes of the update that brings the list from the version before its additions.
    pub update_bytes: u64,
}

impl PeerRow {
    /// Bits per entry of the structure as a client gets it.
    pub fn bits_per_entry(&self, entries: u64) -> f64 {
        self.bytes as f64 * 8.0 / entries.max(1) as f64
    }

    /// ns per URL of a mix of half clean URLs and half URLs below entries.
    pub fn ns_per_url(&self) -> f64 {
        (self.ns_clean + self.ns_listed) / 2.0
    }

    /// Update bytes per addition.
    pub fn update_bytes_per_addition(&self, additions: u64) -> f64 {
        self.update_bytes as f64 / additions.max(1) as f64
    }
}

/// Every structure on one list.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ListResult {
    /// The list's name.
    pub name: String,
    /// Distinct entries.
    pub entries: u64,
    /// Its categories.
    pub categories: Vec<String>,
    /// Each distinct category set (names joined by ` + `) with its entries.
    pub set_counts: Vec<(String, u64)>,
    /// The information bound at `q` with these sets: `log₂(1/q)` + their entropy, bits per
    /// entry.
    pub bound_bits: f64,
    /// Additions the updates carry.
    pub additions: u64,
    /// Clean URLs asked: the generated ones the list does not hold.
    pub clean_urls: u64,
    /// Generated clean URLs the list holds after all (left out).
    pub not_clean_urls: u64,
    /// Mean expressions of the clean URLs asked.
    pub mean_expressions: f64,
    /// Mean strings Safe Browsing hashes for them (the path `/` is the host's own string).
    pub mean_v4_expressions: f64,
    /// Entries that list at least 1 % of the generated clean URLs, with how many (those URLs
    /// are left out).
    pub broad_entries: Vec<(String, u64)>,
    /// URLs below entries asked (and timed).
    pub listed_urls: u64,
    /// Clean URLs timed.
    pub timed_clean_urls: u64,
    /// Entries in the override tables of the BinaryFuse16 and BinaryFuse32 category tables.
    pub fuse_overrides: (u64, u64),
    /// One row per structure, in [`Peer::ALL`] order.
    pub rows: Vec<PeerRow>,
}

impl ListResult {
    /// The row of `peer`.
    pub fn row(&self, peer: Peer) -> Option<&PeerRow> {
        self.rows.iter().find(|r| r.peer == peer)
    }
}

/// The section's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Peers {
    /// Every list measured, UT1 first.
    pub lists: Vec<ListResult>,
    /// Why UT1 is not among them, when it is not.
    pub ut1_missing: Option<String>,
    /// Timed rounds per structure.
    pub repetitions: usize,
    /// Clean URLs generated.
    pub generated_clean_urls: u64,
}

/// Measures every structure on UT1's phishing and malware lists and on the synthetic domain
/// lists.
pub fn run(settings: &Settings) -> Result<Peers> {
    let sizes = &settings.sizes;
    settings
        .progress
        .say(&format!("peers: {} clean URLs", sizes.peers_clean_urls));
    let clean = urls::clean_urls(sizes.peers_clean_urls, CLEAN_SEED);
    let root = ut1_root(settings);
    let mut lists = Vec::new();
    let ut1_missing = match lists::ut1_list(&root)? {
        Some(set) => {
            lists.push(measure::measure_list(
                settings,
                "UT1 phishing + malware",
                &set,
                &clean,
            )?);
            None
        }
        None => Some(format!(
            "no phishing/urls and malware/urls under {}",
            root.display()
        )),
    };
    for &n in &sizes.peers_domains {
        let set = lists::synthetic_domains(n, DOMAIN_SEED);
        let name = format!("domains, {}", phishbloom_core::fmt::power_of_ten(n));
        lists.push(measure::measure_list(settings, &name, &set, &clean)?);
    }
    Ok(Peers {
        lists,
        ut1_missing,
        repetitions: sizes.peers_repetitions,
        generated_clean_urls: clean.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Sizes;

    /// Settings with one small domain list and no UT1 folder.
    fn tiny() -> Settings {
        Settings {
            sizes: Sizes {
                peers_domains: vec![4_000],
                peers_clean_urls: 30_000,
                peers_timed_urls: 300,
                peers_repetitions: 1,
                ..Sizes::quick()
            },
            ..Settings::new("/nonexistent/dataset.csv".into(), true, 1, false)
        }
    }

    #[test]
    fn every_structure_finds_every_entry_and_misses_strangers_at_its_own_rate() {
        let peers = run(&tiny()).unwrap();
        assert!(peers.ut1_missing.is_some());
        assert_eq!(peers.lists.len(), 1);
        let list = &peers.lists[0];
        assert_eq!(list.entries, 4_000);
        assert_eq!((list.clean_urls, list.not_clean_urls), (30_000, 0));
        let order: Vec<Peer> = list.rows.iter().map(|r| r.peer).collect();
        assert_eq!(order, Peer::ALL);
        for row in &list.rows {
            assert_eq!(row.missed, 0, "{row:?}");
            assert!(row.ns_clean > 0.0 && row.ns_listed > 0.0, "{row:?}");
            // The count of a binomial within 5 σ of its mean (and one for rounding).
            let expected = row.clean.theoretical * row.clean.queries as f64;
            let tolerance = 5.0 * expected.sqrt() + 1.0;
            let hits = row.clean.false_positives as f64;
            assert!((hits - expected).abs() <= tolerance, "{row:?}");
        }
        let row = |peer| list.row(peer).unwrap();
        let bits = |peer| row(peer).bits_per_entry(list.entries);
        // A compact list is within a fifth above the bound, and well below the verified file.
        assert!(bits(Peer::Compact) < list.bound_bits * 1.2, "{list:?}");
        assert!(bits(Peer::Compact) < bits(Peer::Verify) / 2.0, "{list:?}");
        let per_addition = |peer| row(peer).update_bytes_per_addition(list.additions);
        assert!(per_addition(Peer::Published) < per_addition(Peer::Verify));
        assert_eq!(
            row(Peer::BinaryFuse16).update_bytes,
            row(Peer::BinaryFuse16).bytes
        );
    }
}
