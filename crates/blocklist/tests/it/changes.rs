//! Lists that change: after any sequence of adds and removes (growing or not) every present
//! entry is listed and the set fingerprint is the one recomputed from scratch; a delta applied
//! to its base answers exactly like the new version and carries its fingerprint; a delta for
//! another base is refused and changes nothing; a compact delta leaves no added entry out; a
//! full cuckoo filter never loses an entry; merging two shards answers like building from both.

use phishbloom_core::delta::{Delta, DiffOptions, ListView, PatchCoding};
use phishbloom_core::engine::expression_hash;
use phishbloom_core::engine::{fingerprint, Scratch};
use phishbloom_core::resolve::Verdict;
use phishbloom_core::sections::SetFingerprint;
use phishbloom_core::EntrySet;
use phishbloom_core::Error;
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_url::Entry;
use proptest::prelude::*;

use crate::common;
use common::{entries, entry_line, entry_list, url_line};

fn options(kind: Kind, verify: bool, capacity: u64, grow: bool) -> BuildOptions {
    BuildOptions {
        kind,
        fpp: 0.05,
        verify,
        capacity: Some(capacity),
        grow,
        name: "test".into(),
        created: 1_790_000_000,
        ..BuildOptions::default()
    }
}

/// The set fingerprint of entry lines, computed from scratch.
fn fingerprint_of(lines: impl IntoIterator<Item = String>) -> SetFingerprint {
    let keys: std::collections::BTreeSet<String> = lines
        .into_iter()
        .filter_map(|l| Entry::parse(l.as_bytes()).ok())
        .map(|e| e.to_key_string())
        .collect();
    SetFingerprint::of(keys.iter().map(|k| {
        let entry = Entry::parse(k.as_bytes()).unwrap();
        fingerprint(expression_hash(entry.key()))
    }))
}

/// The first of `keys` (entry lines) that `list` does not answer listed for, if any.
fn first_unlisted<'k>(list: &Blocklist, keys: &'k [String]) -> Option<&'k String> {
    let mut scratch = Scratch::default();
    keys.iter().find(|key| {
        !list
            .check(format!("http://{key}").as_bytes(), &mut scratch)
            .listed()
    })
}

fn verdicts(list: &Blocklist, queries: &[String]) -> Vec<Verdict> {
    let mut scratch = Scratch::default();
    queries
        .iter()
        .map(|q| list.check(q.as_bytes(), &mut scratch))
        .collect()
}

/// Entries in up to three categories, each entry in one or two of them.
fn categorized(lines: &[String], picks: &[u8]) -> EntrySet {
    let mut set = EntrySet::uncategorized(entry_list(lines), "phishing");
    set.categories = vec!["phishing".into(), "malware".into(), "adult".into()];
    set.membership = (0..set.entries.len())
        .map(|i| match picks.get(i).copied().unwrap_or(0) % 4 {
            0 => vec![0],
            1 => vec![1],
            2 => vec![2],
            _ => vec![0, 2],
        })
        .map(Into::into)
        .collect();
    set
}

#[derive(Clone, Debug)]
enum Op {
    Add(String),
    /// Remove the present entry at this index (modulo the count), if any.
    Remove(prop::sample::Index),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        entry_line().prop_map(Op::Add),
        any::<prop::sample::Index>().prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn after_any_adds_and_removes_present_entries_are_listed_and_the_fingerprint_is_exact(
        start in prop::collection::vec(entry_line(), 1..20),
        ops in prop::collection::vec(op(), 1..40),
        kind in prop::sample::select(vec![Kind::Cuckoo, Kind::Counting, Kind::Blocked]),
        grow in any::<bool>(),
    ) {
        // A growing list starts small so that it adds layers; one that does not grow has room.
        let capacity = if grow { 2 } else { 200 };
        let mut list = Blocklist::from_entries(&entries(&start), &options(kind, true, capacity, grow)).unwrap();
        let mut present: Vec<String> = entry_list(&start).iter().map(Entry::to_key_string).collect();
        for op in ops {
            match op {
                Op::Add(line) => {
                    let key = Entry::parse(line.as_bytes()).unwrap().to_key_string();
                    list.add(&[line.as_bytes()], None).unwrap();
                    if !present.contains(&key) {
                        present.push(key);
                    }
                }
                Op::Remove(index) if !present.is_empty() => {
                    let key = present.remove(index.index(present.len()));
                    match list.remove(&[key.as_bytes()], None) {
                        Ok(change) => prop_assert_eq!(change.changed, 1),
                        // Two layers of a growing list answer for it: refused, nothing changed.
                        Err(Error::AmbiguousRemoval { .. }) => present.push(key),
                        Err(error) => return Err(TestCaseError::fail(error.to_string())),
                    }
                }
                Op::Remove(_) => {}
            }
            prop_assert_eq!(first_unlisted(&list, &present), None);
            prop_assert_eq!(list.meta().fingerprint, fingerprint_of(present.iter().cloned()));
            prop_assert_eq!(list.meta().entries, present.len() as u64);
        }
        // Adds and removes keep the host gate (each add inserts its host); and the same after a
        // save.
        prop_assert!(list.url_gate().is_some());
        let reopened = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        prop_assert!(reopened.url_gate().is_some());
        prop_assert_eq!(first_unlisted(&reopened, &present), None);
    }

    #[test]
    fn a_delta_applied_to_its_base_answers_exactly_like_the_new_version(
        old_lines in prop::collection::vec(entry_line(), 1..30),
        new_lines in prop::collection::vec(entry_line(), 1..30),
        old_picks in prop::collection::vec(any::<u8>(), 30),
        new_picks in prop::collection::vec(any::<u8>(), 30),
        allow in prop::collection::vec(entry_line(), 0..3),
        queries in prop::collection::vec(url_line(), 1..40),
        kind in prop::sample::select(vec![Kind::Cuckoo, Kind::Counting, Kind::Blocked, Kind::Classic]),
        from_files in any::<bool>(),
    ) {
        let old_set = categorized(&old_lines, &old_picks);
        let mut new_set = categorized(&new_lines, &new_picks);
        new_set.exceptions = entry_list(&allow);
        let options = options(kind, true, 100, false);
        let mut old = Blocklist::from_entries(&old_set, &options).unwrap();
        let new = Blocklist::from_entries(&new_set, &options).unwrap();
        let (old_view, new_view) = if from_files {
            (
                ListView::of_blocklist(&old, "old".as_ref()).unwrap(),
                ListView::of_blocklist(&new, "new".as_ref()).unwrap(),
            )
        } else {
            (ListView::of_entries(&old_set, 20), ListView::of_entries(&new_set, 20))
        };
        let delta = Delta::between(&old_view, &new_view, &DiffOptions::default()).unwrap();
        let delta = Delta::from_bytes("d".as_ref(), &delta.to_bytes()).unwrap();
        old.apply(&delta).unwrap();
        // A delta names entries by fingerprint, not host: the host gate is dropped.
        prop_assert!(new.url_gate().is_some() && old.url_gate().is_none());
        prop_assert_eq!(old.meta().fingerprint, new.meta().fingerprint);
        prop_assert_eq!(old.meta().entries, new.meta().entries);
        let mut all: Vec<String> = queries;
        all.extend(old_lines.iter().chain(&new_lines).chain(&allow).map(|l| format!("http://{l}/x")));
        prop_assert_eq!(verdicts(&old, &all), verdicts(&new, &all));
        // And after a save.
        let reopened = Blocklist::from_bytes("mem", &old.to_bytes()).unwrap();
        prop_assert_eq!(verdicts(&reopened, &all), verdicts(&new, &all));
    }

    #[test]
    fn a_delta_for_another_base_is_refused_and_changes_nothing(
        old_lines in prop::collection::vec(entry_line(), 1..20),
        new_lines in prop::collection::vec(entry_line(), 1..20),
        other_lines in prop::collection::vec(entry_line(), 1..20),
        kind in prop::sample::select(vec![Kind::Cuckoo, Kind::Blocked]),
    ) {
        let (old, new, other) = (entries(&old_lines), entries(&new_lines), entries(&other_lines));
        prop_assume!(fingerprint_of(old_lines.clone()) != fingerprint_of(other_lines.clone()));
        let delta = Delta::between(&ListView::of_entries(&old, 20), &ListView::of_entries(&new, 20), &DiffOptions::default()).unwrap();
        let mut list = Blocklist::from_entries(&other, &options(kind, true, 100, false)).unwrap();
        let before = list.to_bytes();
        let refused = list.apply(&delta);
        prop_assert!(matches!(refused, Err(Error::DeltaBase { .. })), "{:?}", refused.err());
        prop_assert_eq!(list.to_bytes(), before);
    }

    #[test]
    fn a_compact_delta_leaves_no_added_entry_out_of_a_bloom_file(
        old_lines in prop::collection::vec(entry_line(), 1..30),
        new_lines in prop::collection::vec(entry_line(), 1..30),
        kind in prop::sample::select(vec![Kind::Blocked, Kind::Classic]),
    ) {
        let (old_set, new_set) = (entries(&old_lines), entries(&new_lines));
        let mut list = Blocklist::from_entries(&old_set, &options(kind, false, 1, false)).unwrap();
        let compact = DiffOptions { compact: true, ..DiffOptions::default() };
        let delta = Delta::between(&ListView::of_entries(&old_set, 20), &ListView::of_entries(&new_set, 20), &compact).unwrap();
        list.apply(&Delta::from_bytes("d".as_ref(), &delta.to_bytes()).unwrap()).unwrap();
        prop_assert_eq!(list.meta().fingerprint, fingerprint_of(new_lines.clone()));
        let reopened = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        prop_assert_eq!(first_unlisted(&reopened, &new_lines), None);
    }

    #[test]
    fn compact_deltas_of_either_coding_and_format_leave_no_added_entry_out(
        old_lines in prop::collection::vec(entry_line(), 1..30),
        steps in prop::collection::vec(prop::collection::vec(entry_line(), 1..40), 1..4),
        kind in prop::sample::select(vec![Kind::Blocked, Kind::Classic, Kind::Split]),
        coding in prop::sample::select(vec![PatchCoding::Filter, PatchCoding::Prefixes, PatchCoding::Smallest]),
        version1 in any::<bool>(),
    ) {
        // A chain of deltas, each adding entries: after each, every entry of that version is
        // listed, in memory and in the saved file, and the fingerprint is the version's.
        let mut list = Blocklist::from_entries(&entries(&old_lines), &options(kind, false, 1, false)).unwrap();
        let mut lines = old_lines.clone();
        let compact = DiffOptions { compact: true, patch_fpp: Some(0.01), ..DiffOptions::default() };
        for step in steps {
            let old_view = ListView::of_entries(&entries(&lines), 20);
            lines.extend(step);
            let new_view = ListView::of_entries(&entries(&lines), 20);
            let delta = Delta::between_coded(&old_view, &new_view, &compact, coding).unwrap();
            let bytes = match delta.to_fixed_header_bytes() {
                Some(bytes) if version1 => bytes,
                _ => delta.to_bytes(),
            };
            list.apply(&Delta::from_bytes("d".as_ref(), &bytes).unwrap()).unwrap();
            prop_assert_eq!(list.meta().fingerprint, fingerprint_of(lines.clone()));
            prop_assert_eq!(first_unlisted(&list, &lines), None);
            list = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
            prop_assert_eq!(first_unlisted(&list, &lines), None);
        }
    }

    #[test]
    fn merging_two_shards_answers_like_building_from_both(
        first in prop::collection::vec(entry_line(), 1..30),
        second in prop::collection::vec(entry_line(), 1..30),
        queries in prop::collection::vec(url_line(), 1..40),
        kind in prop::sample::select(vec![Kind::Cuckoo, Kind::Counting, Kind::Blocked, Kind::Classic]),
    ) {
        let options = options(kind, true, 100, false);
        let shard = |lines: &[String], name: &str| EntrySet::uncategorized(entry_list(lines), name);
        let mut merged = Blocklist::from_entries(&shard(&first, "phishing"), &options).unwrap();
        merged.merge(&Blocklist::from_entries(&shard(&second, "malware"), &options).unwrap()).unwrap();
        // Both lists at once: the first's entries in phishing, the second's in malware.
        let mut both = EntrySet::uncategorized(Vec::new(), "phishing");
        both.categories.push("malware".into());
        let mut keys: Vec<String> = Vec::new();
        for (id, lines) in [(0u16, &first), (1, &second)] {
            for entry in entry_list(lines) {
                match keys.iter().position(|k| *k == entry.to_key_string()) {
                    Some(at) => both.membership[at].push(id),
                    None => {
                        keys.push(entry.to_key_string());
                        both.entries.push(entry);
                        both.membership.push([id].as_slice().into());
                    }
                }
            }
        }
        let built = Blocklist::from_entries(&both, &options).unwrap();
        // Shards of the same capacity have gates of one size: the merge keeps their union.
        prop_assert!(merged.url_gate().is_some());
        prop_assert_eq!(merged.meta().fingerprint, built.meta().fingerprint);
        prop_assert_eq!(merged.meta().entries, built.meta().entries);
        let mut all = queries;
        all.extend(first.iter().chain(&second).map(|l| format!("http://{l}")));
        prop_assert_eq!(verdicts(&merged, &all), verdicts(&built, &all));
        // A Bloom filter's bits are the OR of the shards': exactly the filter built from both.
        if let (Some(a), Some(b)) = (merged.filter(), built.filter()) {
            prop_assert!(a.bit_bytes() == b.bit_bytes());
        }
    }
}

#[test]
fn a_full_cuckoo_filter_refuses_an_entry_and_never_loses_one() {
    let options = options(Kind::Cuckoo, true, 8, false);
    let mut list = Blocklist::from_entries(&entries(&["seed.com".to_string()]), &options).unwrap();
    let mut added = vec!["seed.com".to_string()];
    let mut refused = 0;
    for i in 0..200 {
        let line = format!("host{i}.com");
        match list.add(&[line.as_bytes()], None) {
            Ok(_) => added.push(line),
            Err(Error::Full { .. }) => refused += 1,
            Err(error) => panic!("{error}"),
        }
        assert_eq!(first_unlisted(&list, &added), None, "after {i} adds");
    }
    assert!(
        refused > 0,
        "a filter sized for 8 took {} entries",
        added.len()
    );
    assert_eq!(list.meta().entries, added.len() as u64);
}

#[test]
fn a_delta_promising_another_fingerprint_is_refused_and_changes_nothing() {
    let old: Vec<String> = ["a.com", "b.com", "c.com"].map(String::from).to_vec();
    let new: Vec<String> = ["a.com", "c.com", "d.com"].map(String::from).to_vec();
    let mut delta = Delta::between(
        &ListView::of_entries(&entries(&old), 20),
        &ListView::of_entries(&entries(&new), 20),
        &DiffOptions::default(),
    )
    .unwrap();
    delta.target.fingerprint.0 ^= 1;
    let read = Delta::from_bytes("d".as_ref(), &delta.to_bytes()).unwrap();
    let mut list =
        Blocklist::from_entries(&entries(&old), &options(Kind::Cuckoo, true, 10, false)).unwrap();
    let before = list.to_bytes();
    let refused = list.apply(&read);
    assert!(
        matches!(refused, Err(Error::DeltaCheck { .. })),
        "{:?}",
        refused.err()
    );
    assert_eq!(list.to_bytes(), before);
}
