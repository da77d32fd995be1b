//! List views the delta tests diff: small ones by hand, and random growth of a larger one.

use crate::keys::KeyScheme;

use super::view::{DiffOptions, ListView};

/// A view of `pairs` in `categories`, hashed as URL entries, 20 probes per item.
pub(super) fn view(pairs: &[(u64, &[u16])], categories: &[&str]) -> ListView {
    ListView::new(
        KeyScheme::Expressions,
        20,
        pairs.iter().map(|(v, ids)| (*v, ids.to_vec())).collect(),
        categories.iter().map(|s| s.to_string()).collect(),
        Vec::new(),
    )
}

/// A change of every sort: 10 removed, 20 moved from category a to b, 40 added in a and the
/// new category c, the exceptions replaced.
pub(super) fn changed() -> (ListView, ListView) {
    let old = view(&[(10, &[0]), (20, &[0]), (30, &[1])], &["a", "b"]);
    let mut new = view(&[(20, &[1]), (30, &[1]), (40, &[0, 2])], &["c", "b", "a"]);
    new.exceptions = vec!["ok.example".into()];
    (old, new)
}

/// `n` additions to a list of `base` entries (fingerprints from SplitMix64).
pub(super) fn growth(base: usize, n: usize, probes: u32) -> (ListView, ListView) {
    let mut rng = phishbloom_filter::rng::SplitMix64::new(7);
    let pairs: Vec<(u64, Vec<u16>)> = (0..base + n).map(|_| (rng.next_u64(), vec![0])).collect();
    let mut old = view(&[], &["a"]);
    old.probes_per_item = probes;
    let mut new = old.clone();
    old.entries = ListView::new(
        KeyScheme::Exact,
        probes,
        pairs[..base].to_vec(),
        vec![],
        vec![],
    )
    .entries;
    new.entries = ListView::new(KeyScheme::Exact, probes, pairs, vec![], vec![]).entries;
    (old, new)
}

/// Options of a compact delta at 1 % per item, its patch at `patch_fpp`.
pub(super) fn compact(patch_fpp: Option<f64>) -> DiffOptions {
    DiffOptions {
        compact: true,
        patch_fpp,
        fpp: Some(0.01),
        ..DiffOptions::default()
    }
}

/// Views of two compact tables of universe 2⁴⁰: `base` prefixes, then `n` more, the additions'
/// category sets `a` but for every `other`-th (`a, b`), a removal and an entry moved to `a, b`.
pub(super) fn tables(base: usize, n: usize, other: usize) -> (ListView, ListView) {
    let mut rng = phishbloom_filter::rng::SplitMix64::new(8);
    let universe = 1u64 << 40;
    let pairs: Vec<(u64, Vec<u16>)> = (0..base + n)
        .map(|i| {
            let ids = if i >= base && (i - base).is_multiple_of(other) {
                vec![0, 1]
            } else {
                vec![0]
            };
            (rng.next_u64() >> 24, ids)
        })
        .collect();
    let table = |pairs: Vec<(u64, Vec<u16>)>| {
        let mut view = ListView::new(
            KeyScheme::Expressions,
            20,
            pairs,
            vec!["a".into(), "b".into()],
            vec![],
        );
        view.universe = Some(universe);
        view
    };
    let old = table(pairs[..base].to_vec());
    let mut new = table(pairs);
    new.entries.remove(1);
    new.entries[2].1 = vec![0, 1];
    (old, new)
}
