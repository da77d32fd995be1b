//! Building every structure of one list, and the update each sends for the list's last 1,000
//! additions: the verified list and its exact delta, the compact list, the compact form
//! `publish` ships and its table delta, Safe Browsing's prefix lists and their Rice-coded
//! additions, and the binary fuse filters (static: an update is a new filter).

use std::path::Path;

use phishbloom_core::delta::{Delta, DiffOptions, ListView};
use phishbloom_core::rates::per_probe_fpp;
use phishbloom_core::resolve::chain_universe;
use phishbloom_core::{Blocklist, BuildOptions, EntrySet, Kind};
use xorf::{BinaryFuse16, BinaryFuse32};

use super::fuse::FuseTable;
use super::safe_browsing::PrefixLists;
use super::{EXPRESSIONS, TARGET_PER_URL, VERIFY_FPP};
use crate::error::{Error, Result};
use phishbloom_core::keys::{expression_hash, fingerprint};

/// Every structure of one list.
pub struct Structures {
    /// phishbloom `--verify`: blocked at 1 % per URL with its verification section.
    pub verify: Blocklist,
    /// phishbloom `--kind compact` at ε per URL.
    pub compact: Blocklist,
    /// The compact form `publish` ships of the verified list: no hosts gate, in the universe
    /// of the chain of deltas it starts (sized with room for additions).
    pub published: Blocklist,
    /// Safe Browsing v4's 4-byte prefix lists.
    pub prefixes: PrefixLists,
    /// `xorf::BinaryFuse16` with its category table.
    pub fuse16: FuseTable<BinaryFuse16>,
    /// `xorf::BinaryFuse32` with its category table.
    pub fuse32: FuseTable<BinaryFuse32>,
}

/// Bytes each structure sends for the additions that lead to the list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UpdateBytes {
    /// The exact delta between the verified lists.
    pub verify: u64,
    /// The table delta between the published compact forms, in one universe.
    pub published: u64,
    /// The Rice-coded prefixes new to each category's list.
    pub prefixes: u64,
    /// A new `BinaryFuse16` with its table.
    pub fuse16: u64,
    /// A new `BinaryFuse32` with its table.
    pub fuse32: u64,
}

/// The per-probe rate that gives a URL of [`EXPRESSIONS`] expressions the rate
/// [`TARGET_PER_URL`]: `q = 1 − (1 − ε)^{1/E}`.
pub fn target_per_probe() -> f64 {
    per_probe_fpp(TARGET_PER_URL, EXPRESSIONS)
}

/// The options of the verified list.
fn verify_options(threads: usize) -> BuildOptions {
    BuildOptions {
        kind: Kind::Blocked,
        fpp: VERIFY_FPP,
        expression_bound: EXPRESSIONS,
        verify: true,
        threads,
        ..BuildOptions::default()
    }
}

/// The entries' distinct `(fingerprint, category ids)` pairs, ascending.
fn fingerprint_pairs(set: &EntrySet) -> Vec<(u64, Vec<u16>)> {
    let mut pairs: Vec<(u64, Vec<u16>)> = set
        .entries
        .iter()
        .zip(&set.membership)
        .map(|(e, ids)| (fingerprint(expression_hash(e.key())), ids.to_vec()))
        .collect();
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| p.0);
    pairs
}

/// The compact table delta from `before` to `after` (verified lists) as `publish` ships it:
/// both coded in the universe of the chain `before` starts. Returns the published form of
/// `after` and the delta's bytes.
fn published_delta(before: &Blocklist, after: &Blocklist) -> Result<(Blocklist, u64)> {
    let q = target_per_probe();
    let universe = chain_universe(before.meta().entries, q, None);
    let next = chain_universe(after.meta().entries, q, Some(universe));
    if next != universe {
        return Err(Error::Unbuildable {
            experiment: "published compact delta",
            reason: format!(
                "the additions outgrow the chain's universe ({universe} → {next}): measure \
                 fewer additions"
            ),
        });
    }
    let base = before.to_compact(universe, TARGET_PER_URL)?;
    let published = after.to_compact(universe, TARGET_PER_URL)?;
    let delta = Delta::between(
        &ListView::of_compact(&base)?,
        &ListView::of_compact(&published)?,
        &DiffOptions::default(),
    )?;
    Ok((published, delta.to_bytes().len() as u64))
}

/// Builds every structure of `set`, and the update from `before` (the list without its
/// additions) to it.
pub fn build(
    set: &EntrySet,
    before: &EntrySet,
    threads: usize,
) -> Result<(Structures, UpdateBytes)> {
    let verify = Blocklist::from_entries(set, &verify_options(threads))?;
    let verify_before = Blocklist::from_entries(before, &verify_options(threads))?;
    let path = Path::new("list");
    let exact = Delta::between(
        &ListView::of_blocklist(&verify_before, path)?,
        &ListView::of_blocklist(&verify, path)?,
        &DiffOptions::default(),
    )?;
    let (published, published_bytes) = published_delta(&verify_before, &verify)?;
    let compact = Blocklist::from_entries(
        set,
        &BuildOptions {
            kind: Kind::Compact,
            fpp: TARGET_PER_URL,
            expression_bound: EXPRESSIONS,
            threads,
            ..BuildOptions::default()
        },
    )?;
    let prefixes = PrefixLists::of_entries(set);
    let pairs = fingerprint_pairs(set);
    let fuse16 = FuseTable::<BinaryFuse16>::build(&pairs)?;
    let fuse32 = FuseTable::<BinaryFuse32>::build(&pairs)?;
    let updates = UpdateBytes {
        verify: exact.to_bytes().len() as u64,
        published: published_bytes,
        prefixes: PrefixLists::of_entries(before).additions_bytes(&prefixes),
        fuse16: fuse16.bytes(),
        fuse32: fuse32.bytes(),
    };
    let structures = Structures {
        verify,
        compact,
        published,
        prefixes,
        fuse16,
        fuse32,
    };
    Ok((structures, updates))
}

#[cfg(test)]
mod tests {
    use super::super::lists::{before_additions, synthetic_domains};
    use super::*;

    #[test]
    fn every_structure_is_built_and_every_update_measured() {
        let set = synthetic_domains(5_000, 2);
        let (before, added) = before_additions(&set, 300, 3);
        let (built, updates) = build(&set, &before, 1).unwrap();
        assert_eq!(added.entries.len(), 300);
        assert_eq!(built.verify.meta().entries, 5_000);
        assert_eq!(built.compact.kind(), Kind::Compact);
        assert_eq!(built.published.kind(), Kind::Compact);
        assert_eq!(built.prefixes.distinct(), 5_000);
        // An exact delta names 64-bit fingerprints, about log₂(2⁶⁴/n) + 1.5 ≈ 53 bits each,
        // and has a header of a few hundred bytes (6 bits an addition here); the published
        // table delta names prefixes of a universe of about n/q; Safe Browsing's,
        // log₂(2³²/300) + 1.5 ≈ 25.3 bits each.
        let per = |bytes: u64| bytes as f64 * 8.0 / 300.0;
        assert!((53.0..62.0).contains(&per(updates.verify)), "{updates:?}");
        assert!(per(updates.published) < per(updates.verify), "{updates:?}");
        assert!((24.5..27.0).contains(&per(updates.prefixes)), "{updates:?}");
        assert_eq!(updates.fuse16, built.fuse16.bytes());
        assert!(updates.fuse32 > updates.fuse16);
    }
}
