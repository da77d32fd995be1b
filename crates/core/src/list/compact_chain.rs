//! A compact list that changes, the way `publish` ships one: a list with a verification section
//! coded as a compact table in a universe that stays while the chain of deltas lasts
//! ([`Blocklist::to_compact`]), the view a delta between two such tables compares
//! ([`ListView::of_compact`]), and a table delta merged into the table it was made from
//! ([`Blocklist::apply_table`]).
//!
//! Every copy of a version holds the same table whether it came whole or through deltas: the
//! entries' prefixes in the chain's universe (equal prefixes united) and their category sets,
//! categories numbered by name. So a removal or a category change names a position in it, the
//! receiver checks the set fingerprint of its prefixes exactly as an exact delta's receiver
//! checks its fingerprints, and a client answers as the publisher's table of that version
//! does.

use std::path::Path;
use std::sync::Arc;

use crate::delta::{Additions, Delta, ListView};
use crate::engine::urls::UrlFilter;
use crate::error::{Error, Result};
use crate::hits::Fingerprints;
use crate::keys::KeyScheme;
use crate::kind::Kind;
use crate::resolve::{Category, CompactTable, Exceptions, Resolver};
use crate::sections::{Meta, SetFingerprint};
use crate::structure::Layers;

use super::edit::Applied;
use super::model::{Blocklist, Engine};

impl ListView {
    /// The view of a compact list: its table's prefixes with their category ids, and its
    /// universe (a delta between two views of one universe carries table additions).
    pub fn of_compact(list: &Blocklist) -> Result<Self> {
        let table = compact_table(list)?;
        let meta = list.meta();
        Ok(ListView {
            scheme: meta.scheme,
            probes_per_item: meta.probes_per_item,
            version: Some(meta.version),
            target_fpp: meta.target_fpp,
            entries: table.entries().map(|(p, ids)| (p, ids.to_vec())).collect(),
            categories: list.categories().iter().map(|c| c.name.clone()).collect(),
            exceptions: exception_keys(list.resolver().exceptions()),
            origin: list.origin(),
            universe: Some(table.map().universe()),
            tops: list.resolver().tops().as_slice().to_vec(),
        })
    }
}

impl Blocklist {
    /// This list — which must have a verification section, the record of its entries — as a
    /// compact list of its entries' prefixes in `universe`, answering at `fpp` per checked
    /// item: same name, version, key scheme, categories (numbered by name, those with
    /// entries), exceptions. Its set fingerprint is its prefixes' (what a table delta
    /// changes), and it has no hosts gate (the entries' hosts are not in a verification
    /// section), so it probes every expression of a URL.
    pub fn to_compact(&self, universe: u64, fpp: f64) -> Result<Blocklist> {
        let path = self.origin();
        let view = ListView::of_blocklist(self, &path)?;
        let names = view.categories.clone();
        let pairs = view
            .entries
            .into_iter()
            .map(|(v, ids)| (phishbloom_filter::prefix_map::prefix_in(v, universe), ids))
            .collect();
        let meta = Meta {
            target_fpp: Some(fpp),
            ..self.meta.clone()
        };
        let exceptions = Exceptions::new(view.exceptions);
        let mut list = compact_list(&path, meta, pairs, &names, exceptions, universe)?;
        list.set_tops(self.resolver.tops().clone());
        Ok(list)
    }

    /// Applies a table delta (made between two [`ListView::of_compact`] views) to this compact
    /// list: the base checked, then — before any change — the prefixes at the removed
    /// positions checked against the removed terms the delta's promised target implies, and
    /// the additions checked to be new; then the table rebuilt with the change. The never-warn
    /// set goes (a prefix added could be any of its fingerprints).
    pub(super) fn apply_table(&mut self, delta: &Delta) -> Result<Applied> {
        let path = self.origin();
        let Additions::Table { universe, prefixes } = &delta.added else {
            return Err(unsuitable(
                &path,
                "the delta adds fingerprints or a filter, and a compact list takes only the \
                 prefixes of its own table: fetch the whole file",
            ));
        };
        let table = compact_table(self)?;
        if *universe != table.map().universe() {
            return Err(unsuitable(
                &path,
                &format!(
                    "the delta's prefixes are of a universe of {universe}, the list's of {}: \
                     fetch the whole file",
                    table.map().universe()
                ),
            ));
        }
        self.check_delta_base(&path, delta)?;
        super::apply::check_category_ids(&path, delta)?;
        let mut entries: Vec<(u64, Vec<u16>)> =
            table.entries().map(|(p, ids)| (p, ids.to_vec())).collect();
        let removed = checked_removals(&path, &entries, delta)?;
        for (position, ids) in &delta.recategorized {
            let entry = entries.get_mut(*position as usize).ok_or_else(|| {
                check_failed(&path, "a recategorized entry past the end of the table")
            })?;
            entry.1 = ids.clone();
        }
        let fingerprint = SetFingerprint(
            self.meta
                .fingerprint
                .0
                .wrapping_sub(delta.removed_terms)
                .wrapping_add(SetFingerprint::of(prefixes.iter().copied()).0),
        );
        if fingerprint != delta.target.fingerprint {
            return Err(check_failed(
                &path,
                &format!(
                    "its prefixes lead to set fingerprint {fingerprint}, it promises {}",
                    delta.target.fingerprint
                ),
            ));
        }
        let kept = merged(&path, entries, &removed, prefixes, &delta.added_categories)?;
        let mut names: Vec<String> = self.categories().iter().map(|c| c.name.clone()).collect();
        names.extend(delta.new_categories.iter().cloned());
        let exceptions = match &delta.exceptions {
            Some(keys) => Exceptions::new(keys.iter().cloned()),
            None => Exceptions::new(exception_keys(self.resolver.exceptions())),
        };
        let version = match delta.target.version {
            0 => self.meta.version.saturating_add(1),
            version => version,
        };
        let meta = Meta {
            version,
            created: 0,
            ..self.meta.clone()
        };
        let tops = match &delta.tops {
            Some(tops) => Fingerprints::new(tops.clone()),
            None => self.resolver.tops().clone(),
        };
        *self = compact_list(&path, meta, kept, &names, exceptions, *universe)?;
        self.set_tops(tops);
        Ok(Applied {
            added: prefixes.len() as u64,
            removed: removed.len() as u64,
            kept: 0,
            recategorized: delta.recategorized.len() as u64,
            version,
        })
    }
}

/// The table's `entries` without those at the `removed` positions, with the `prefixes` added
/// (each with its `categories`), ascending; refused when an addition is a prefix the table
/// keeps or has no categories.
fn merged(
    path: &Path,
    entries: Vec<(u64, Vec<u16>)>,
    removed: &[u64],
    prefixes: &[u64],
    categories: &[Vec<u16>],
) -> Result<Vec<(u64, Vec<u16>)>> {
    let mut kept: Vec<(u64, Vec<u16>)> = entries
        .into_iter()
        .enumerate()
        .filter(|(i, _)| removed.binary_search(&(*i as u64)).is_err())
        .map(|(_, e)| e)
        .collect();
    let before = kept.len();
    kept.extend(
        prefixes
            .iter()
            .zip(categories)
            .map(|(&p, ids)| (p, ids.clone())),
    );
    kept.sort_unstable_by_key(|e| e.0);
    kept.dedup_by_key(|e| e.0);
    if kept.len() != before + prefixes.len() || categories.len() != prefixes.len() {
        return Err(check_failed(
            path,
            "it adds a prefix the table holds, or names no categories for its additions",
        ));
    }
    Ok(kept)
}

/// The positions a table delta removes, each checked to be in the table, with the set
/// fingerprint terms of the prefixes there checked against the delta's.
fn checked_removals(path: &Path, entries: &[(u64, Vec<u16>)], delta: &Delta) -> Result<Vec<u64>> {
    let prefixes: Option<Vec<u64>> = delta
        .removed
        .iter()
        .map(|&p| entries.get(p as usize).map(|e| e.0))
        .collect();
    let prefixes =
        prefixes.ok_or_else(|| check_failed(path, "a removal past the end of the table"))?;
    if prefixes.len() as u64 != delta.removed_count
        || SetFingerprint::of(prefixes.iter().copied()).0 != delta.removed_terms
    {
        return Err(check_failed(
            path,
            "the entries it removes are not the ones at those positions of the table",
        ));
    }
    Ok(delta.removed.clone())
}

/// The compact list of `pairs` (prefixes of `universe` with category ids into `names`), its
/// categories those with entries numbered by name, `meta`'s entry count and set fingerprint
/// its table's.
fn compact_list(
    path: &Path,
    mut meta: Meta,
    pairs: Vec<(u64, Vec<u16>)>,
    names: &[String],
    exceptions: Exceptions,
    universe: u64,
) -> Result<Blocklist> {
    if matches!(meta.scheme, KeyScheme::Keywords | KeyScheme::Near) {
        return Err(unsuitable(
            path,
            "a keyword or near-duplicate list has no compact form; publish it whole",
        ));
    }
    // Categories numbered by name, those that hold entries: the numbering a copy reached
    // through deltas and the one built whole from the same entries share.
    let mut used = vec![false; names.len()];
    for (_, ids) in &pairs {
        for &id in ids {
            if let Some(u) = used.get_mut(id as usize) {
                *u = true;
            }
        }
    }
    let mut order: Vec<usize> = (0..names.len()).filter(|&i| used[i]).collect();
    order.sort_by(|&a, &b| names[a].cmp(&names[b]));
    let mut renumber = vec![0u16; names.len()];
    for (new, &old) in order.iter().enumerate() {
        renumber[old] = new as u16;
    }
    let pairs = pairs
        .into_iter()
        .map(|(p, ids)| {
            let mut ids: Vec<u16> = ids
                .iter()
                .map(|&id| renumber.get(id as usize).copied())
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    unsuitable(path, "an entry names a category the list does not have")
                })?;
            ids.sort_unstable();
            ids.dedup();
            Ok((p, ids))
        })
        .collect::<Result<Vec<_>>>()?;
    // No hosts gate: the occupancy bits spare most of the map's searches instead.
    let table = Arc::new(CompactTable::of_prefixes(pairs, universe)?.with_occupancy());
    let mut counts = vec![0u64; order.len()];
    for (_, ids) in table.entries() {
        for &id in ids {
            counts[id as usize] += 1;
        }
    }
    let categories = order
        .iter()
        .zip(counts)
        .map(|(&old, entries)| Category {
            name: names[old].clone(),
            entries,
        })
        .collect();
    meta.entries = table.len();
    meta.fingerprint = SetFingerprint::of(table.entries().map(|(p, _)| p));
    meta.exact_count = true;
    let layers = Layers::compact(table.clone());
    let engine = match meta.scheme {
        KeyScheme::Expressions => Engine::Urls(UrlFilter::new(layers, None)),
        _ => Engine::Keys(layers),
    };
    Ok(Blocklist {
        kind: Kind::Compact,
        meta,
        engine,
        resolver: Resolver::new(categories, None, exceptions).with_compact(table),
        directory: None,
        origin: path.to_path_buf(),
    })
}

/// A compact list's table, or the error for a list of another kind.
fn compact_table(list: &Blocklist) -> Result<Arc<CompactTable>> {
    list.resolver()
        .compact_arc()
        .ok_or_else(|| unsuitable(&list.origin(), "the list is not compact"))
}

/// The sorted keys of `exceptions`, owned.
fn exception_keys(exceptions: &Exceptions) -> Vec<String> {
    exceptions
        .sorted_keys()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The error for a delta that does not suit the list.
fn unsuitable(path: &Path, problem: &str) -> Error {
    Error::DeltaUnsuitable {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    }
}

/// The error for a delta whose change is not what it promises.
fn check_failed(path: &Path, detail: &str) -> Error {
    Error::DeltaCheck {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use phishbloom_filter::rng::SplitMix64;

    use super::*;
    use crate::contents::KeyList;
    use crate::delta::DiffOptions;
    use crate::engine::Scratch;
    use crate::list::BuildOptions;
    use crate::resolve::chain_universe;

    /// Keys with their category names.
    type State = BTreeMap<String, Vec<&'static str>>;

    /// The verified list of `state` at `version`.
    fn verified(state: &State, version: u64) -> Blocklist {
        let mut groups: BTreeMap<&str, KeyList> = BTreeMap::new();
        for (key, names) in state {
            for name in names {
                groups.entry(name).or_default().push(key.as_bytes());
            }
        }
        let groups: Vec<(String, KeyList)> = groups
            .into_iter()
            .map(|(n, k)| (n.to_string(), k))
            .collect();
        let options = BuildOptions {
            verify: true,
            version,
            ..BuildOptions::default()
        };
        Blocklist::from_keys(&groups, KeyScheme::Exact, &options).unwrap()
    }

    /// One step of random change: additions, removals, category changes.
    fn mutate(state: &mut State, rng: &mut SplitMix64, next: &mut u64, removed: &mut Vec<String>) {
        const SETS: [&[&str]; 4] = [&["a"], &["b"], &["a", "b"], &["c"]];
        for _ in 0..rng.next_u64() % 200 {
            *next += 1;
            let set = SETS[(rng.next_u64() % 4) as usize];
            state.insert(format!("key-{next}"), set.to_vec());
        }
        let keys: Vec<String> = state.keys().cloned().collect();
        for _ in 0..rng.next_u64() % 25 {
            let key = &keys[(rng.next_u64() % keys.len() as u64) as usize];
            if rng.next_u64().is_multiple_of(2) {
                if state.remove(key).is_some() {
                    removed.push(key.clone());
                }
            } else if let Some(names) = state.get_mut(key) {
                *names = SETS[(rng.next_u64() % 4) as usize].to_vec();
            }
        }
    }

    /// What a copy answers for `key`: listed or not, and its categories.
    fn answer(list: &Blocklist, key: &str) -> (bool, Vec<String>) {
        let verdict = list.check(key.as_bytes(), &mut Scratch::default());
        (verdict.listed(), verdict.categories)
    }

    #[test]
    fn a_copy_kept_by_table_deltas_holds_the_table_the_publisher_codes_and_answers_as_it() {
        let mut rng = SplitMix64::new(36);
        let (mut state, mut next, mut removed) = (State::new(), 0u64, Vec::new());
        mutate(&mut state, &mut rng, &mut next, &mut removed);
        let fpp = 1e-6;
        let per_probe = fpp;
        let (mut chain, mut copy): (Option<(u64, Blocklist)>, Option<Blocklist>) = (None, None);
        let (mut rollovers, mut applied) = (0, 0);
        for version in 1..=60u64 {
            let list = verified(&state, version);
            let current = chain.as_ref().map(|(u, _)| *u);
            let universe = chain_universe(list.meta().entries, per_probe, current);
            if current != Some(universe) {
                let whole = list.to_compact(universe, fpp).unwrap();
                let bytes = whole.to_bytes();
                copy = Some(Blocklist::from_bytes("copy", &bytes).unwrap());
                chain = Some((universe, whole));
                rollovers += 1;
            } else {
                let (_, base) = chain.take().unwrap();
                let target = list.to_compact(universe, fpp).unwrap();
                let delta = Delta::between(
                    &ListView::of_compact(&base).unwrap(),
                    &ListView::of_compact(&target).unwrap(),
                    &DiffOptions::default(),
                )
                .unwrap();
                let delta = Delta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap();
                let mut held = copy.take().unwrap();
                held.apply(&delta).unwrap();
                copy = Some(Blocklist::from_bytes("copy", &held.to_bytes()).unwrap());
                chain = Some((universe, target));
                applied += 1;
            }
            let (_, published) = chain.as_ref().unwrap();
            let held = copy.as_ref().unwrap();
            // The same table, categories, version and set as the publisher's whole file.
            let (a, b) = (
                ListView::of_compact(held).unwrap(),
                ListView::of_compact(published).unwrap(),
            );
            assert_eq!(a.entries, b.entries, "version {version}");
            assert_eq!(a.categories, b.categories, "version {version}");
            assert_eq!(held.meta().fingerprint, published.meta().fingerprint);
            assert_eq!(held.meta().version, version);
            // Every listed key answers with its categories; removed ones answer clean (a
            // stranger matches at 10⁻⁶ per probe: over the ≤ 1,500 removed keys here the
            // chance of any is below 0.2 %, and the seed is fixed).
            for (key, names) in &state {
                let (listed, categories) = answer(held, key);
                assert!(listed, "{key} answers clean at version {version}");
                assert_eq!(categories, *names, "{key} at version {version}");
            }
            for key in removed.iter().filter(|k| !state.contains_key(*k)) {
                assert!(!answer(held, key).0, "removed {key} still listed");
            }
            mutate(&mut state, &mut rng, &mut next, &mut removed);
        }
        assert!(
            rollovers >= 2 && applied >= 30,
            "{rollovers} rollovers, {applied} deltas"
        );
    }

    #[test]
    fn a_table_delta_is_refused_by_a_copy_of_another_universe_or_state() {
        let state: State = (0..50).map(|i| (format!("k{i}"), vec!["a"])).collect();
        let list = verified(&state, 1);
        let base = list.to_compact(1 << 30, 1e-6).unwrap();
        let mut grown = state.clone();
        grown.insert("new".into(), vec!["b"]);
        let target = verified(&grown, 2).to_compact(1 << 30, 1e-6).unwrap();
        let delta = Delta::between(
            &ListView::of_compact(&base).unwrap(),
            &ListView::of_compact(&target).unwrap(),
            &DiffOptions::default(),
        )
        .unwrap();
        let mut other = list.to_compact(1 << 31, 1e-6).unwrap();
        let error = other.apply(&delta).unwrap_err().to_string();
        assert!(error.contains("universe"), "{error}");
        let mut ahead = target;
        let error = ahead.apply(&delta).unwrap_err().to_string();
        assert!(error.contains("version 1"), "{error}");
        let mut verified_copy = verified(&state, 1);
        let error = verified_copy.apply(&delta).unwrap_err().to_string();
        assert!(error.contains("not compact"), "{error}");
    }
}
