//! The verification table: the entries' sorted 64-bit fingerprints, which confirm filter hits,
//! with the category set of each fingerprint for lists of several categories; built from pairs
//! or changed in place in one merge.

use crate::hits::Fingerprints;

use super::CategorySets;

/// The verification table and, for lists of several categories, the category set of each
/// fingerprint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verification {
    fingerprints: Fingerprints,
    /// Parallel to the fingerprints; empty when the list has one category.
    set_of: Vec<u32>,
    sets: CategorySets,
}

impl Verification {
    /// A table from `(fingerprint, category ids)` pairs (in any order; entries of equal
    /// fingerprints are merged, their categories united). `with_sets` keeps the categories.
    pub fn new(mut pairs: Vec<(u64, Vec<u16>)>, with_sets: bool) -> Self {
        pairs.sort_unstable_by_key(|p| p.0);
        let mut fingerprints: Vec<u64> = Vec::with_capacity(pairs.len());
        let mut merged: Vec<Vec<u16>> = Vec::with_capacity(if with_sets { pairs.len() } else { 0 });
        for (fingerprint, ids) in pairs {
            if fingerprints.last() == Some(&fingerprint) {
                if let Some(last) = merged.last_mut() {
                    last.extend(ids);
                    last.sort_unstable();
                    last.dedup();
                }
                continue;
            }
            fingerprints.push(fingerprint);
            if with_sets {
                merged.push(ids);
            }
        }
        let mut sets = CategorySets::default();
        let set_of = merged.iter().map(|s| sets.intern(s)).collect();
        // Sorted and deduplicated above.
        let fingerprints = Fingerprints::from_sorted(fingerprints).unwrap_or_default();
        Verification {
            fingerprints,
            set_of,
            sets,
        }
    }

    /// A table as a file stores it (checked by the caller: `set_of` is empty or parallel, and
    /// every index is in `sets`).
    pub fn from_parts(fingerprints: Fingerprints, set_of: Vec<u32>, sets: CategorySets) -> Self {
        Verification {
            fingerprints,
            set_of,
            sets,
        }
    }

    /// The fingerprints.
    pub fn fingerprints(&self) -> &Fingerprints {
        &self.fingerprints
    }

    /// The set index of each fingerprint (empty without categories).
    pub fn set_of(&self) -> &[u32] {
        &self.set_of
    }

    /// The interned category sets.
    pub fn sets(&self) -> &CategorySets {
        &self.sets
    }

    /// Whether `fingerprint` is an entry's; with its category ids when the table keeps them.
    pub fn lookup(&self, fingerprint: u64) -> Option<&[u16]> {
        let at = self.fingerprints.position(fingerprint).ok()?;
        Some(match self.set_of.get(at) {
            Some(&set) => self.sets.get(set),
            None => &[],
        })
    }

    /// Hints the processor to load what [`Verification::lookup`] of `fingerprint` will read
    /// (see [`Fingerprints::prefetch`]): its bucket of fingerprints and their category sets.
    #[inline]
    pub fn prefetch(&self, fingerprint: u64) {
        let from = self.fingerprints.prefetch(fingerprint);
        if let Some(set) = self.set_of.get(from) {
            phishbloom_filter::prefetch(set);
        }
    }

    /// Number of fingerprints.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Adds fingerprints with their category ids (an existing fingerprint gains the ids) and
    /// removes others, in one linear merge of the sorted table with the sorted change:
    /// O(n + changes · log changes), no allocation per entry. The result is the table
    /// [`Verification::new`] builds from the same pairs, set indices included (sets are
    /// numbered in order of first use), so a list changed in place and one built from its new
    /// entries are byte-identical. `with_sets` keeps the categories.
    pub fn update(&mut self, added: &[(u64, Vec<u16>)], removed: &[u64], with_sets: bool) {
        let mut removed = removed.to_vec();
        removed.sort_unstable();
        let incoming = united(added);
        let old_sets = std::mem::take(&mut self.sets);
        let old_set_of = std::mem::take(&mut self.set_of);
        let capacity = self.fingerprints.len() + incoming.len();
        let mut table = Rebuild {
            fingerprints: Vec::with_capacity(capacity),
            set_of: Vec::with_capacity(if with_sets { capacity } else { 0 }),
            sets: CategorySets::default(),
            with_sets,
            old_sets: &old_sets,
            old_set_of: &old_set_of,
            renumber: vec![u32::MAX; old_sets.all().len()],
            union: Vec::new(),
        };
        let mut incoming = incoming.into_iter().peekable();
        let mut gone = removed.iter().copied().peekable();
        for (i, &f) in self.fingerprints.as_slice().iter().enumerate() {
            while let Some((g, ids)) = incoming.next_if(|(g, _)| *g < f) {
                table.push_new(g, &ids);
            }
            while gone.next_if(|&r| r < f).is_some() {}
            let joined = incoming.next_if(|(g, _)| *g == f);
            let removed_here = gone.peek() == Some(&f);
            match joined {
                None if removed_here => {}
                // Removed and added again: the added ids alone.
                Some((_, ids)) if removed_here => table.push_new(f, &ids),
                Some((_, ids)) => table.push_joined(i, f, &ids),
                None => table.push_kept(i, f),
            }
        }
        for (g, ids) in incoming {
            table.push_new(g, &ids);
        }
        // Sorted and distinct: a merge of two sorted, distinct sequences that joins equals.
        self.fingerprints = Fingerprints::from_sorted(table.fingerprints).unwrap_or_default();
        self.set_of = table.set_of;
        self.sets = table.sets;
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }
}

/// `added` sorted by fingerprint, equal fingerprints as one entry with the union of their
/// ids, each entry's ids sorted and distinct.
fn united(added: &[(u64, Vec<u16>)]) -> Vec<(u64, Vec<u16>)> {
    let mut incoming: Vec<(u64, Vec<u16>)> = added.to_vec();
    incoming.sort_unstable_by_key(|p| p.0);
    incoming.dedup_by(|later, kept| {
        if later.0 != kept.0 {
            return false;
        }
        kept.1.append(&mut later.1);
        true
    });
    for (_, ids) in &mut incoming {
        ids.sort_unstable();
        ids.dedup();
    }
    incoming
}

/// The table [`Verification::update`] builds, entry by entry in fingerprint order, with the
/// old table's sets to carry over.
struct Rebuild<'o> {
    fingerprints: Vec<u64>,
    set_of: Vec<u32>,
    sets: CategorySets,
    with_sets: bool,
    old_sets: &'o CategorySets,
    old_set_of: &'o [u32],
    /// Sets interned in order of first use, as `new` numbers them: maps an old set index to
    /// the new one (u32::MAX: not yet used).
    renumber: Vec<u32>,
    /// Scratch for a joined entry's ids.
    union: Vec<u16>,
}

impl Rebuild<'_> {
    /// An entry with exactly `ids`.
    fn push_new(&mut self, f: u64, ids: &[u16]) {
        self.fingerprints.push(f);
        if self.with_sets {
            self.set_of.push(self.sets.intern(ids));
        }
    }

    /// The set of the old table's entry at position `i`; a one-category table gaining sets
    /// puts every existing entry in category 0.
    fn old_set(&self, i: usize) -> &[u16] {
        match self.old_set_of.get(i) {
            Some(&set) => self.old_sets.get(set),
            None => &[0],
        }
    }

    /// The old table's entry at position `i`, gaining `ids`.
    fn push_joined(&mut self, i: usize, f: u64, ids: &[u16]) {
        self.fingerprints.push(f);
        if !self.with_sets {
            return;
        }
        let mut union = std::mem::take(&mut self.union);
        union.clear();
        union.extend_from_slice(self.old_set(i));
        union.extend_from_slice(ids);
        union.sort_unstable();
        union.dedup();
        self.set_of.push(self.sets.intern(&union));
        self.union = union;
    }

    /// The old table's entry at position `i`, unchanged.
    fn push_kept(&mut self, i: usize, f: u64) {
        self.fingerprints.push(f);
        if !self.with_sets {
            return;
        }
        match self.old_set_of.get(i) {
            Some(&old) => {
                let slot = &mut self.renumber[old as usize];
                if *slot == u32::MAX {
                    *slot = self.sets.intern(self.old_sets.get(old));
                }
                self.set_of.push(*slot);
            }
            None => self.set_of.push(self.sets.intern(&[0])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs over a small fingerprint range (so additions, removals and existing entries
    /// collide) and a few categories, each pair's ids sorted and distinct as callers give them.
    fn pairs() -> impl proptest::strategy::Strategy<Value = Vec<(u64, Vec<u16>)>> {
        use proptest::prelude::*;
        let ids = proptest::collection::btree_set(0u16..4, 1..3)
            .prop_map(|set| set.into_iter().collect::<Vec<u16>>());
        proptest::collection::vec((0u64..64, ids), 0..40)
    }

    proptest::proptest! {
        /// `update` in place builds the table `new` builds from the changed pairs: the same
        /// fingerprints, set indices and sets — with and without categories, from a table with
        /// or without them.
        #[test]
        fn update_is_new_of_the_changed_pairs(
            base in pairs(),
            added in pairs(),
            removed in proptest::collection::vec(0u64..64, 0..20),
            base_sets: bool,
            with_sets: bool,
        ) {
            let mut table = Verification::new(base.clone(), base_sets);
            table.update(&added, &removed, with_sets);
            let mut expected: Vec<(u64, Vec<u16>)> = base
                .into_iter()
                .map(|(f, ids)| (f, if base_sets { ids } else { vec![0] }))
                .filter(|(f, _)| !removed.contains(f))
                .collect();
            expected.extend(added);
            proptest::prop_assert_eq!(table, Verification::new(expected, with_sets));
        }
    }
}
