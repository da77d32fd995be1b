//! Diffing two list versions: the entries added, removed and recategorized, the category
//! numbering of the target, and the coding of a compact delta's additions.

use phishbloom_filter::prefix::prefix_bits;
use phishbloom_filter::ribbon::{ribbon_bits, RibbonFilter};

use crate::engine::per_probe_fpp;
use crate::error::{Error, Result};
use crate::keys::check_same_keys;
use crate::sections::SetFingerprint;

use super::varint_header::coded_len;
use super::view::{DiffOptions, ListView};
use super::{Additions, Delta, PatchCoding, RIBBON_MAX_ADDITIONS};

/// The changes found by walking two sorted fingerprint tables side by side, categories
/// numbered as the target numbers them.
struct Changes {
    /// Fingerprints of the entries only the new version has, ascending.
    added: Vec<u64>,
    /// The category ids of each added entry.
    added_categories: Vec<Vec<u16>>,
    /// Positions in the old table of the entries only it has, ascending.
    removed: Vec<u64>,
    /// Entries in both whose categories changed: old position, new ids.
    recategorized: Vec<(u64, Vec<u16>)>,
    /// Entry-count change per target category id.
    counts: Vec<i64>,
}

/// How the target numbers categories: the base's ids, then the new names in the new list's
/// order.
struct Numbering {
    /// Names by target id.
    names: Vec<String>,
    /// Names the target has and the base does not.
    new_categories: Vec<String>,
    /// The target id of each of the new list's ids.
    to_target: Vec<u16>,
}

impl Numbering {
    fn of(old: &ListView, new: &ListView) -> Self {
        let mut names = old.categories.clone();
        let new_categories: Vec<String> = new
            .categories
            .iter()
            .filter(|name| !old.categories.contains(name))
            .cloned()
            .collect();
        names.extend(new_categories.iter().cloned());
        let to_target = new
            .categories
            .iter()
            .map(|name| names.iter().position(|n| n == name).unwrap_or(0) as u16)
            .collect();
        Numbering {
            names,
            new_categories,
            to_target,
        }
    }

    /// The new list's `ids` as target ids, sorted.
    fn retarget(&self, ids: &[u16]) -> Vec<u16> {
        let mut ids: Vec<u16> = ids
            .iter()
            .filter_map(|&id| self.to_target.get(id as usize).copied())
            .collect();
        ids.sort_unstable();
        ids
    }
}

impl Changes {
    /// One linear walk of the two ascending tables.
    fn of(old: &ListView, new: &ListView, numbering: &Numbering) -> Self {
        let mut changes = Changes {
            added: Vec::new(),
            added_categories: Vec::new(),
            removed: Vec::new(),
            recategorized: Vec::new(),
            counts: vec![0i64; numbering.names.len()],
        };
        let (mut i, mut j) = (0, 0);
        loop {
            match (old.entries.get(i), new.entries.get(j)) {
                (Some((va, ida)), Some((vb, idb))) if va == vb => {
                    let now = numbering.retarget(idb);
                    if *ida != now {
                        changes.count(ida, -1);
                        changes.count(&now, 1);
                        changes.recategorized.push((i as u64, now));
                    }
                    i += 1;
                    j += 1;
                }
                (Some((va, ida)), b) if b.is_none_or(|(vb, _)| va < vb) => {
                    changes.removed.push(i as u64);
                    changes.count(ida, -1);
                    i += 1;
                }
                (_, Some((vb, idb))) => {
                    let ids = numbering.retarget(idb);
                    changes.count(&ids, 1);
                    changes.added.push(*vb);
                    changes.added_categories.push(ids);
                    j += 1;
                }
                // Both tables walked (a removal's guard takes every other case).
                _ => break,
            }
        }
        changes
    }

    /// Counts one entry more or fewer (`step`) in each of the categories `ids`.
    fn count(&mut self, ids: &[u16], step: i64) {
        for &id in ids {
            self.counts[id as usize] += step;
        }
    }
}

impl Delta {
    /// The change from `old` to `new`; a compact delta's additions in whichever coding is
    /// smaller ([`PatchCoding::Smallest`]).
    pub fn between(old: &ListView, new: &ListView, options: &DiffOptions) -> Result<Delta> {
        Delta::between_coded(old, new, options, PatchCoding::Smallest)
    }

    /// The change from `old` to `new`, a compact delta's additions coded as `coding` says.
    pub fn between_coded(
        old: &ListView,
        new: &ListView,
        options: &DiffOptions,
        coding: PatchCoding,
    ) -> Result<Delta> {
        check_same_keys(
            (old.scheme, old.probes_per_item),
            (new.scheme, new.probes_per_item),
        )?;
        let numbering = Numbering::of(old, new);
        let mut changes = Changes::of(old, new, &numbering);
        let added_terms = SetFingerprint::of(changes.added.iter().copied()).0;
        let removed_terms =
            SetFingerprint::of(changes.removed.iter().map(|&i| old.entries[i as usize].0)).0;
        let removed_count = changes.removed.len() as u64;
        let additions = if let Some(universe) = table_universe(old, new)? {
            Additions::Table {
                universe,
                prefixes: changes.added,
            }
        } else if options.compact {
            // Receivers without a table: no positions, no categories of single entries.
            changes.removed.clear();
            changes.recategorized.clear();
            changes.added_categories.clear();
            compact_additions(old, new, options, coding, &changes.added)?
        } else {
            if numbering.names.len() <= 1 {
                changes.added_categories.clear();
            }
            Additions::Exact(changes.added)
        };
        let exceptions = (old.exceptions != new.exceptions).then(|| new.exceptions.clone());
        let tops = (old.tops != new.tops).then(|| new.tops.clone());
        Ok(Delta {
            scheme: new.scheme,
            probes_per_item: new.probes_per_item,
            created: options.created,
            base: old.state(),
            base_categories: old.categories.len() as u32,
            target: new.state(),
            added: additions,
            added_terms,
            removed_count,
            removed_terms,
            removed: changes.removed,
            new_categories: numbering.new_categories,
            added_categories: changes.added_categories,
            recategorized: changes.recategorized,
            counts: changes
                .counts
                .into_iter()
                .enumerate()
                .filter(|(_, c)| *c != 0)
                .map(|(id, c)| (id as u16, c))
                .collect(),
            exceptions,
            tops,
        })
    }
}

/// The universe of two compact tables' views, when both are (`None` when neither is); refused
/// when only one is, or their universes differ: prefixes of different universes do not compare.
fn table_universe(old: &ListView, new: &ListView) -> Result<Option<u64>> {
    match (old.universe, new.universe) {
        (None, None) => Ok(None),
        (Some(a), Some(b)) if a == b => Ok(Some(a)),
        (a, b) => Err(Error::DeltaUnsuitable {
            path: new.origin.clone(),
            problem: format!(
                "a delta between compact tables needs one universe for both, and {} holds {} \
                 while {} holds {}; publish the newer list whole",
                old.origin.display(),
                describe_universe(a),
                new.origin.display(),
                describe_universe(b)
            ),
        }),
    }
}

/// A view's universe, in words.
fn describe_universe(universe: Option<u64>) -> String {
    match universe {
        Some(u) => format!("prefixes of a universe of {u}"),
        None => "whole fingerprints".to_string(),
    }
}

/// A compact delta's `added` fingerprints, as prefixes or a ribbon filter as `coding` says.
fn compact_additions(
    old: &ListView,
    new: &ListView,
    options: &DiffOptions,
    coding: PatchCoding,
    added: &[u64],
) -> Result<Additions> {
    let fpp = new
        .target_fpp
        .or(old.target_fpp)
        .or(options.fpp)
        .unwrap_or(0.01);
    let probes = new.probes_per_item.max(1);
    let bits = match options.patch_fpp {
        Some(patch) => prefix_bits(added.len() as u64, per_probe_fpp(patch, probes)),
        None => prefix_bits(new.entries.len() as u64, per_probe_fpp(fpp, probes)),
    };
    let mut prefixes: Vec<u64> = added.iter().map(|&v| v >> (64 - bits)).collect();
    prefixes.sort_unstable();
    let prefixes = Additions::Prefixes { bits, prefixes };
    let rate = patch_rate(
        options.patch_fpp,
        fpp,
        probes,
        added.len(),
        new.entries.len(),
    );
    let ribbon = || -> Result<Additions> {
        Ok(Additions::Filter(RibbonFilter::build(
            added,
            ribbon_bits(rate),
        )?))
    };
    Ok(match coding {
        _ if added.is_empty() => prefixes,
        PatchCoding::Prefixes => prefixes,
        PatchCoding::Filter => ribbon()?,
        PatchCoding::Smallest if added.len() > RIBBON_MAX_ADDITIONS => prefixes,
        PatchCoding::Smallest => {
            let filter = ribbon()?;
            if coded_len(&filter) < coded_len(&prefixes) {
                filter
            } else {
                prefixes
            }
        }
    })
}

/// The per-probe false-positive rate a compact delta's patch may add at its receiver: the
/// per-item `patch_fpp` given (`diff --patch-fpp`) over the probes of a checked item, or else
/// the list's per-probe rate times the share of the target's `entries` the `added` entries are
/// (so that patched entries cost what they would have cost built in: see docs/FORMAT.md,
/// "Sizes").
fn patch_rate(
    patch_fpp: Option<f64>,
    list_fpp: f64,
    probes: u32,
    added: usize,
    entries: usize,
) -> f64 {
    match patch_fpp {
        Some(patch) => per_probe_fpp(patch, probes),
        None => per_probe_fpp(list_fpp, probes) * added as f64 / entries.max(1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::samples::{changed, compact, growth, tables, view};
    use super::*;

    #[test]
    fn a_delta_lists_additions_removals_and_recategorized_entries_and_round_trips() {
        let (old, new) = changed();
        let delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        assert_eq!(delta.added, Additions::Exact(vec![40]));
        assert_eq!(delta.removed, vec![0]);
        // Target ids: a = 0, b = 1, c = 2 (new).
        assert_eq!(delta.new_categories, ["c"]);
        assert_eq!(delta.added_categories, [vec![0, 2]]);
        assert_eq!(delta.recategorized, [(1, vec![1])]);
        // a: −1 (10 removed), −1 (20 moved to b), +1 (40); b: +1; c: +1.
        assert_eq!(delta.counts, [(0, -1), (1, 1), (2, 1)]);
        assert_eq!(
            delta.exceptions.as_deref(),
            Some(&["ok.example".to_string()][..])
        );
        assert_eq!(delta.base.fingerprint, old.fingerprint());
        assert_eq!(delta.target.fingerprint, new.fingerprint());
        let bytes = delta.to_bytes();
        assert_eq!(Delta::from_bytes(Path::new("d"), &bytes).unwrap(), delta);
        let parts = delta.part_sizes();
        assert!(parts.added > 0 && parts.removed > 0 && parts.extras > 0);
        assert_eq!(
            parts.fixed + parts.added + parts.removed + parts.extras,
            bytes.len()
        );
    }

    #[test]
    fn a_compact_delta_carries_prefixes_and_counts_removals() {
        let old = view(&[(1 << 60, &[0])], &["a"]);
        let new = view(&[(1 << 60, &[0]), (u64::MAX, &[0])], &["a"]);
        let options = DiffOptions {
            compact: true,
            fpp: Some(0.01),
            ..DiffOptions::default()
        };
        let delta = Delta::between(&old, &new, &options).unwrap();
        let Additions::Prefixes { bits, prefixes } = &delta.added else {
            panic!("{:?}", delta.added);
        };
        // Two entries at 1 % over 20 probes: ⌈log₂(2 / 5.025e-4)⌉ = 12 bits.
        assert_eq!(*bits, 12);
        assert_eq!(prefixes, &[u64::MAX >> 52]);
        assert_eq!(
            Delta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap(),
            delta
        );
        // Removals: counted with their terms, not located (Bloom receivers keep them).
        let back = Delta::between(&new, &old, &options).unwrap();
        assert_eq!((back.removed_count, back.removed.len()), (1, 0));
        assert_eq!(back.removed_terms, SetFingerprint::term(u64::MAX));
        assert_eq!(
            Delta::from_bytes(Path::new("d"), &back.to_bytes()).unwrap(),
            back
        );
    }

    #[test]
    fn a_ribbon_coded_delta_round_trips_and_holds_every_addition() {
        let (old, new) = growth(5_000, 1_000, 1);
        let delta =
            Delta::between_coded(&old, &new, &compact(Some(0.01)), PatchCoding::Filter).unwrap();
        let Additions::Filter(filter) = &delta.added else {
            panic!("{:?}", delta.added.kept_bits());
        };
        // 1 % per probe: 7-bit results.
        assert_eq!(filter.bits(), 7);
        let added: Vec<u64> = new
            .entries
            .iter()
            .map(|e| e.0)
            .filter(|v| old.entries.binary_search_by_key(v, |e| e.0).is_err())
            .collect();
        assert!(added.iter().all(|&v| filter.contains(v)));
        let bytes = delta.to_bytes();
        let back = Delta::from_bytes(Path::new("d"), &bytes).unwrap();
        assert_eq!(back, delta);
        assert_eq!(back.target, new.state());
        let parts = delta.part_sizes();
        assert_eq!(
            parts.fixed + parts.added + parts.removed + parts.extras,
            bytes.len()
        );
        // The fixed-header format cannot hold a filter.
        assert_eq!(delta.to_fixed_header_bytes(), None);
    }

    #[test]
    fn smallest_picks_the_filter_for_a_thousand_additions_under_a_kilobyte() {
        let (old, new) = growth(5_000, 1_000, 1);
        let delta = Delta::between(&old, &new, &compact(Some(0.01))).unwrap();
        assert!(matches!(delta.added, Additions::Filter(_)));
        let prefixes =
            Delta::between_coded(&old, &new, &compact(Some(0.01)), PatchCoding::Prefixes).unwrap();
        let (filter_bytes, prefix_bytes) = (delta.to_bytes().len(), prefixes.to_bytes().len());
        assert!(
            filter_bytes < prefix_bytes,
            "{filter_bytes} vs {prefix_bytes}"
        );
        assert!(filter_bytes <= 1_000, "{filter_bytes} bytes");
    }

    #[test]
    fn a_table_delta_round_trips_and_packs_its_added_sets() {
        // Mostly one set: the majority packing, a fraction of a bit per addition.
        for (other, most_bits) in [(50, 0.3), (2, 1.1)] {
            let (old, new) = tables(5_000, 1_000, other);
            let delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
            let Additions::Table { universe, prefixes } = &delta.added else {
                panic!("{:?}", delta.added.kept_bits());
            };
            assert_eq!((*universe, prefixes.len()), (1 << 40, 1_000));
            assert_eq!((delta.removed.len(), delta.recategorized.len()), (1, 1));
            let bytes = delta.to_bytes();
            assert_eq!(Delta::from_bytes(Path::new("d"), &bytes).unwrap(), delta);
            let parts = delta.part_sizes();
            // log₂(2⁴⁰/1000) + 1.5 ≈ 31.5 bits an addition, Golomb–Rice coded.
            let bits = parts.added as f64 * 8.0 / 1_000.0;
            assert!((31.0..32.5).contains(&bits), "{bits} bits an addition");
            // The extras: two sets and the packed indices, a few bytes beside them.
            let set_bits = (parts.extras as f64 - 16.0) * 8.0 / 1_000.0;
            assert!(set_bits <= most_bits, "{set_bits} bits a set index");
        }
        // Tables of two universes do not compare.
        let (old, mut new) = tables(100, 10, 3);
        new.universe = Some(1 << 41);
        let error = Delta::between(&old, &new, &DiffOptions::default()).unwrap_err();
        assert!(error.to_string().contains("one universe"), "{error}");
    }
}
