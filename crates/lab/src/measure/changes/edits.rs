//! Synthetic changes to a list, shared by the delta and apply measurements: new entries, removals
//! chosen at random with a fixed seed, and the list view after them.

use phishbloom_core::delta::ListView;
use phishbloom_core::{EntrySet, Membership};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::Entry;

/// Synthetic additions of the deltas: `add-<hex>.changes.test` (`.test` is reserved, RFC 2606,
/// so no UT1 entry can be one).
const ADDITION_PREFIX: &str = "add";

/// `count` synthetic domain entries `<prefix>-<hex>.changes.test`, from index `start`.
pub(super) fn synthetic_entries(prefix: &str, start: u64, count: u64) -> Vec<Entry> {
    (start..start + count)
        .filter_map(|i| Entry::parse(format!("{prefix}-{i:x}.changes.test").as_bytes()).ok())
        .collect()
}

/// `count` distinct positions below `len`, chosen with a fixed seed (a partial Fisher–Yates
/// shuffle), ascending.
pub(crate) fn random_positions(len: usize, count: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut positions: Vec<usize> = (0..len).collect();
    let count = count.min(len);
    for i in 0..count {
        let j = i + rng.below((len - i) as u64) as usize;
        positions.swap(i, j);
    }
    positions.truncate(count);
    positions.sort_unstable();
    positions
}

/// The view after a change: `base` without the entries at `removed` (ascending positions) and
/// with `added` (fingerprints and categories).
pub(super) fn changed_view(
    base: &ListView,
    removed: &[usize],
    added: &[(u64, Vec<u16>)],
) -> ListView {
    let mut gone = removed.iter().peekable();
    let mut pairs: Vec<(u64, Vec<u16>)> = Vec::with_capacity(base.entries.len() + added.len());
    for (i, pair) in base.entries.iter().enumerate() {
        if gone.next_if_eq(&&i).is_some() {
            continue;
        }
        pairs.push(pair.clone());
    }
    pairs.extend(added.iter().cloned());
    let mut view = ListView::new(
        base.scheme,
        base.probes_per_item,
        pairs,
        base.categories.clone(),
        base.exceptions.clone(),
    );
    view.target_fpp = base.target_fpp;
    view
}

/// Fingerprints and categories of `count` synthetic additions in category `category` of a list
/// with these categories, as [`ListView::of_entries`] computes them.
pub(super) fn additions(
    categories: &[String],
    category: u16,
    start: u64,
    count: u64,
) -> Vec<(u64, Vec<u16>)> {
    let entries = synthetic_entries(ADDITION_PREFIX, start, count);
    let set = EntrySet {
        membership: vec![Membership::from_slice(&[category]); entries.len()],
        entries,
        categories: categories.to_vec(),
        exceptions: Vec::new(),
    };
    ListView::of_entries(&set, 1).entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_positions_are_distinct_sorted_and_repeatable() {
        let a = random_positions(1_000, 100, 3);
        assert_eq!(a.len(), 100);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, random_positions(1_000, 100, 3));
        assert_eq!(random_positions(5, 10, 3), vec![0, 1, 2, 3, 4]);
    }
}
