//! From filter hits to a verdict: exact confirmation, categories, exceptions and the "most
//! specific entry wins" rule. Every engine (and a store of the filter elsewhere, such as Redis)
//! finds the candidate entries its filter answers for; [`Resolver`] decides what they mean.
//!
//! - **Confirmation.** With a verification table, a candidate counts only if its 64-bit
//!   fingerprint is in the table; without one, every candidate counts (a Bloom filter's false
//!   positives included).
//! - **Categories.** Every entry belongs to one or more categories (the UT1 folder, the list
//!   file, `--category`). With a table, the categories of the confirmed entry are exact; without
//!   one, the verdict names every category of the list as *possible* (a single-category list
//!   is exact either way). A category filter (`check --category`) keeps only candidates of those
//!   categories.
//! - **Exceptions.** Exception entries (`--allow`, UT1's `liste_blanche`) are stored exactly,
//!   never in a filter — a false "allowed" would be a false negative. Among the entries that
//!   match a URL, the most specific wins, as in squidGuard: the longer host, then the longer path;
//!   on a tie the exception wins. A URL whose block entry is overridden is `allowed`.

use std::borrow::Cow;
use std::collections::HashSet;

use phishbloom_url::{CanonicalUrl, Expression, ExpressionKind};

use crate::hits::{Candidate, Fingerprints, Hit};

/// One category of a list: its name and how many entries it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Category {
    /// The name (a UT1 folder, a list file's stem, or `--category NAME`).
    pub name: String,
    /// Distinct entries in it.
    pub entries: u64,
}

/// The most categories a list may have: ids are `u16`.
pub const MAX_CATEGORIES: usize = u16::MAX as usize;

/// Interned sets of category ids, so that each entry stores one small set index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CategorySets {
    sets: Vec<Vec<u16>>,
    index: std::collections::HashMap<Vec<u16>, u32>,
}

impl CategorySets {
    /// The index of `set` (sorted, distinct ids), adding it if new.
    pub fn intern(&mut self, set: &[u16]) -> u32 {
        if let Some(&index) = self.index.get(set) {
            return index;
        }
        let index = self.sets.len() as u32;
        self.sets.push(set.to_vec());
        self.index.insert(set.to_vec(), index);
        index
    }

    /// The set at `index`.
    pub fn get(&self, index: u32) -> &[u16] {
        self.sets.get(index as usize).map_or(&[], Vec::as_slice)
    }

    /// Every set, in index order.
    pub fn all(&self) -> &[Vec<u16>] {
        &self.sets
    }

    /// Builds from stored sets (as a file holds them).
    pub fn from_sets(sets: Vec<Vec<u16>>) -> Self {
        let index = sets
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        CategorySets { sets, index }
    }
}

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
        let mut incoming: Vec<(u64, Vec<u16>)> = added.to_vec();
        incoming.sort_unstable_by_key(|p| p.0);
        // Equal incoming fingerprints: one entry with the union of their ids.
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
        let old_sets = std::mem::take(&mut self.sets);
        let old_set_of = std::mem::take(&mut self.set_of);
        // The set of an existing entry at position `i`; a one-category table gaining sets puts
        // every existing entry in category 0.
        let set_at = |i: usize| -> &[u16] {
            match old_set_of.get(i) {
                Some(&set) => old_sets.get(set),
                None => &[0],
            }
        };
        let capacity = self.fingerprints.len() + incoming.len();
        let mut fingerprints = Vec::with_capacity(capacity);
        let mut set_of = Vec::with_capacity(if with_sets { capacity } else { 0 });
        let mut sets = CategorySets::default();
        // Sets interned in order of first use, as `new` numbers them: `renumber` maps an old
        // set index to the new one (u32::MAX: not yet used).
        let mut renumber = vec![u32::MAX; old_sets.all().len()];
        let mut union: Vec<u16> = Vec::new();
        let mut incoming = incoming.into_iter().peekable();
        let mut gone = removed.iter().copied().peekable();
        for (i, &f) in self.fingerprints.as_slice().iter().enumerate() {
            while let Some((g, ids)) = incoming.next_if(|(g, _)| *g < f) {
                fingerprints.push(g);
                if with_sets {
                    set_of.push(sets.intern(&ids));
                }
            }
            while gone.next_if(|&r| r < f).is_some() {}
            let joined = incoming.next_if(|(g, _)| *g == f);
            let removed_here = gone.peek() == Some(&f);
            if removed_here && joined.is_none() {
                continue;
            }
            fingerprints.push(f);
            if !with_sets {
                continue;
            }
            match joined {
                // Removed and added again: the added ids alone.
                Some((_, ids)) if removed_here => set_of.push(sets.intern(&ids)),
                Some((_, ids)) => {
                    union.clear();
                    union.extend_from_slice(set_at(i));
                    union.extend(ids);
                    union.sort_unstable();
                    union.dedup();
                    set_of.push(sets.intern(&union));
                }
                None => match old_set_of.get(i) {
                    Some(&old) => {
                        let slot = &mut renumber[old as usize];
                        if *slot == u32::MAX {
                            *slot = sets.intern(old_sets.get(old));
                        }
                        set_of.push(*slot);
                    }
                    None => set_of.push(sets.intern(&[0])),
                },
            }
        }
        for (g, ids) in incoming {
            fingerprints.push(g);
            if with_sets {
                set_of.push(sets.intern(&ids));
            }
        }
        // Sorted and distinct: a merge of two sorted, distinct sequences that joins equals.
        self.fingerprints = Fingerprints::from_sorted(fingerprints).unwrap_or_default();
        self.set_of = set_of;
        self.sets = sets;
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }
}

/// How specific an entry is among those matching one URL: the longer host (more labels), then
/// the longer path (with a query longer than without). Expressions of one URL are suffixes of
/// its host and prefixes of its path, so lengths order them.
fn specificity(expression: Expression<'_>) -> (usize, usize) {
    (expression.host.len(), expression.path.len())
}

/// What a verdict says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// No entry lists the item.
    #[default]
    Clean,
    /// An entry lists it (for a filter without verification: possibly, wrong with the list's
    /// false-positive rate).
    Listed,
    /// An entry lists it, but an equally or more specific exception allows it.
    Allowed,
    /// The item cannot be read as what the list holds (a URL that does not parse, asked of a
    /// list of URL entries): never listed, answered with the reason in [`Verdict::error`].
    Invalid,
}

impl Status {
    /// `clean`, `listed`, `allowed` or `invalid`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Clean => "clean",
            Status::Listed => "listed",
            Status::Allowed => "allowed",
            Status::Invalid => "invalid",
        }
    }

    /// Appends a tab and [`Status::name`] to `out` (a verdict's TSV column): each name a
    /// constant, so the copy is a few stores rather than a call (the TSV printer's hot path).
    #[inline(always)]
    pub fn write_tsv_column(self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self {
            Status::Clean => b"\tclean",
            Status::Listed => b"\tlisted",
            Status::Allowed => b"\tallowed",
            Status::Invalid => b"\tinvalid",
        });
    }
}

/// The answer for one checked item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Clean, listed, allowed or invalid.
    pub status: Status,
    /// The entry that lists the item (also when an exception overrides it).
    pub hit: Option<Hit>,
    /// The exception that allows it.
    pub exception: Option<Hit>,
    /// The categories of the entry: exact, or every category the entry may belong to.
    pub categories: Vec<String>,
    /// Whether `categories` are exactly the entry's (verified, or a one-category list).
    pub categories_exact: bool,
    /// Why an [`Status::Invalid`] item could not be checked.
    pub error: Option<String>,
}

impl Verdict {
    /// The answer for an item that cannot be checked, with the reason.
    pub fn invalid(reason: impl ToString) -> Self {
        Verdict {
            status: Status::Invalid,
            error: Some(reason.to_string()),
            ..Verdict::default()
        }
    }

    /// Whether the item is listed (and not allowed).
    pub fn listed(&self) -> bool {
        self.status == Status::Listed
    }
}

/// Exception entries, exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exceptions {
    keys: HashSet<Box<str>>,
}

impl Exceptions {
    /// The exceptions with these entry keys (`docs.evil.com`, `evil.com/help`).
    pub fn new(keys: impl IntoIterator<Item = String>) -> Self {
        Exceptions {
            keys: keys.into_iter().map(String::into_boxed_str).collect(),
        }
    }

    /// The keys, sorted (as a file stores them).
    pub fn sorted_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.keys.iter().map(|k| &**k).collect();
        keys.sort_unstable();
        keys
    }

    /// Number of exceptions.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The most specific exception that matches `url`, at least as specific as `floor` (none
    /// without exceptions, at no cost).
    #[inline]
    fn most_specific<'u>(
        &self,
        url: &'u CanonicalUrl,
        floor: (usize, usize),
        key: &mut Vec<u8>,
    ) -> Option<Expression<'u>> {
        if self.is_empty() {
            return None;
        }
        self.most_specific_of(url, floor, key)
    }

    /// [`Exceptions::most_specific`] of a non-empty set (apart, so that the common empty
    /// set costs one test where it is asked).
    fn most_specific_of<'u>(
        &self,
        url: &'u CanonicalUrl,
        floor: (usize, usize),
        key: &mut Vec<u8>,
    ) -> Option<Expression<'u>> {
        url.expressions()
            .filter(|e| specificity(*e) >= floor)
            .filter(|e| {
                key.clear();
                e.write_key(key);
                std::str::from_utf8(key).is_ok_and(|k| self.keys.contains(k))
            })
            .max_by_key(|e| specificity(*e))
    }
}

/// Decides verdicts: confirmation, categories, exceptions, the category filter.
#[derive(Clone, Debug, Default)]
pub struct Resolver {
    verification: Option<Verification>,
    categories: Vec<Category>,
    /// The place of each category's name in name order (by id), so that a verdict's names are
    /// ordered without comparing strings ([`Resolver::order_categories`]).
    name_rank: Vec<u16>,
    exceptions: Exceptions,
    filter: Option<Vec<u16>>,
}

impl Resolver {
    /// A resolver for a list with these categories, table and exceptions.
    pub fn new(
        categories: Vec<Category>,
        verification: Option<Verification>,
        exceptions: Exceptions,
    ) -> Self {
        let mut resolver = Resolver {
            verification,
            categories,
            name_rank: Vec::new(),
            exceptions,
            filter: None,
        };
        resolver.rank_names();
        resolver
    }

    /// Ranks the categories' names (after they changed): `name_rank[id]` is the place of
    /// category `id`'s name among all, in byte order.
    fn rank_names(&mut self) {
        let mut ids: Vec<usize> = (0..self.categories.len()).collect();
        ids.sort_by(|&a, &b| self.categories[a].name.cmp(&self.categories[b].name));
        self.name_rank = vec![0; ids.len()];
        for (place, id) in ids.into_iter().enumerate() {
            // At most MAX_CATEGORIES (2^16 - 1) categories: every place fits in a u16.
            self.name_rank[id] = place as u16;
        }
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        &self.categories
    }

    /// The verification table.
    pub fn verification(&self) -> Option<&Verification> {
        self.verification.as_ref()
    }

    /// The exceptions.
    pub fn exceptions(&self) -> &Exceptions {
        &self.exceptions
    }

    /// The category id of `name`, added (with no entries yet) if new.
    pub fn category_id(&mut self, name: &str) -> u16 {
        match self.categories.iter().position(|c| c.name == name) {
            Some(id) => id as u16,
            None => {
                self.categories.push(Category {
                    name: name.to_string(),
                    entries: 0,
                });
                self.rank_names();
                (self.categories.len() - 1) as u16
            }
        }
    }

    /// Counts `delta` more (or fewer) entries in category `id`.
    pub fn count_entries(&mut self, id: u16, delta: i64) {
        if let Some(category) = self.categories.get_mut(id as usize) {
            category.entries = category.entries.saturating_add_signed(delta);
        }
    }

    /// The ids of named categories, in order; an unknown name is an error listing the list's
    /// categories (`path` names the list in it).
    pub fn category_ids(
        &self,
        names: &[String],
        path: &std::path::Path,
    ) -> crate::Result<Vec<u16>> {
        names
            .iter()
            .map(|name| {
                self.categories
                    .iter()
                    .position(|c| c.name == *name)
                    .map(|id| id as u16)
                    .ok_or_else(|| crate::Error::UnknownCategory {
                        path: path.to_path_buf(),
                        name: name.clone(),
                        available: self
                            .categories
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
            })
            .collect()
    }

    /// Replaces the exceptions.
    pub fn set_exceptions(&mut self, exceptions: Exceptions) {
        self.exceptions = exceptions;
    }

    /// The verification table, to change it.
    pub fn verification_mut(&mut self) -> Option<&mut Verification> {
        self.verification.as_mut()
    }

    /// Answers only for entries of these categories (ids into [`Resolver::categories`]).
    pub fn set_filter(&mut self, ids: Vec<u16>) {
        self.filter = Some(ids);
    }

    /// The categories a confirmed candidate with category ids `ids` names, if it passes the
    /// category filter (`None` if it does not).
    fn categorize<'r>(&'r self, ids: Cow<'r, [u16]>) -> Option<Categories<'r>> {
        let single = self.categories.len() == 1;
        let exact_ids: Option<Cow<'r, [u16]>> = match ids {
            ids if !ids.is_empty() => Some(ids),
            // One category: every entry is in it.
            _ if single => Some(Cow::Borrowed(&[0])),
            _ => None,
        };
        match (exact_ids, &self.filter) {
            (Some(ids), Some(filter)) => {
                ids.iter()
                    .any(|i| filter.contains(i))
                    .then_some(Categories {
                        named: Named::Ids(ids),
                        exact: true,
                    })
            }
            (Some(ids), None) => Some(Categories {
                named: Named::Ids(ids),
                exact: true,
            }),
            // Possible categories: the filter's, or every category of the list.
            (None, Some(filter)) => (!filter.is_empty()).then_some(Categories {
                named: Named::Ids(Cow::Borrowed(filter)),
                exact: false,
            }),
            (None, None) => Some(Categories {
                named: Named::All,
                exact: false,
            }),
        }
    }

    /// The names of `categories`, sorted by name, so that a verdict does not depend on the
    /// order the list's categories were numbered in (a list patched by deltas numbers new
    /// categories after the old ones). Ids without a category are skipped.
    pub fn category_names(&self, categories: &Categories<'_>) -> Vec<String> {
        let mut names = Vec::new();
        categories.each_id(self.categories.len(), |id| {
            // In range: `each_id` gives only ids below the count.
            names.push(self.categories[id as usize].name.clone());
        });
        names.sort_unstable();
        names
    }

    /// Puts the ids of `categories` into `order` (replacing its contents) as
    /// [`Resolver::category_names`] orders their names, with no allocation once `order` has
    /// grown; [`Resolver::category_name`] names each.
    pub fn order_categories(&self, categories: &Categories<'_>, order: &mut Vec<u16>) {
        order.clear();
        categories.each_id(self.categories.len(), |id| order.push(id));
        // Names sort as their ranks do (names are distinct). Most entries have one or two
        // categories: those need no sort call.
        let rank = |id: u16| self.name_rank.get(id as usize).copied();
        match order.as_mut_slice() {
            [] | [_] => {}
            [a, b] => {
                if rank(*a) > rank(*b) {
                    std::mem::swap(a, b);
                }
            }
            more => more.sort_unstable_by_key(|&id| rank(id)),
        }
    }

    /// Calls `visit` with each name of `categories`, in [`Resolver::category_names`] order —
    /// one or two ids (most entries) straight from their ranks, more through
    /// [`Resolver::order_categories`] into `order` (scratch space, replaced), with nothing
    /// allocated once it has grown.
    #[inline]
    pub fn each_category_name<'s>(
        &'s self,
        categories: &Categories<'_>,
        order: &mut Vec<u16>,
        mut visit: impl FnMut(&'s str),
    ) {
        let name = |id: u16| self.categories.get(id as usize).map(|c| c.name.as_str());
        let rank = |id: u16| self.name_rank.get(id as usize).copied();
        if let Named::Ids(ids) = &categories.named {
            match **ids {
                [a] => return name(a).into_iter().for_each(visit),
                [a, b] => {
                    let (first, second) = if rank(a) > rank(b) { (b, a) } else { (a, b) };
                    // An id beyond the list's categories is skipped, as `each_id` skips it.
                    name(first).into_iter().for_each(&mut visit);
                    name(second).into_iter().for_each(visit);
                    return;
                }
                _ => {}
            }
        }
        self.order_categories(categories, order);
        for &id in order.iter() {
            visit(self.category_name(id));
        }
    }

    /// The name of category `id` (`""` for an id beyond the list's categories, which
    /// [`Resolver::order_categories`] never gives).
    pub fn category_name(&self, id: u16) -> &str {
        self.categories
            .get(id as usize)
            .map_or("", |c| c.name.as_str())
    }

    /// The verdict for `url` given the entries its filter answered for (in any order; the
    /// vector is reordered). `key` is scratch space.
    pub fn url_verdict(
        &self,
        url: &CanonicalUrl,
        candidates: &mut [Candidate],
        key: &mut Vec<u8>,
    ) -> Verdict {
        self.url_verdict_with(url, candidates, key, &|_| None)
    }

    /// [`Resolver::url_verdict`], where a candidate missing from the verification table still
    /// counts if `extra` vouches for its fingerprint (entries added to a copy of the list
    /// elsewhere, such as keys added in Redis) with the ids of its categories — none when they
    /// are not known, and its categories are then the possible ones.
    pub fn url_verdict_with(
        &self,
        url: &CanonicalUrl,
        candidates: &mut [Candidate],
        key: &mut Vec<u8>,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
    ) -> Verdict {
        let decided = self.decide_core(
            url,
            candidates,
            |c| specificity(c.expression()),
            |c| c.fingerprint,
            key,
            extra,
        );
        match decided {
            None => Verdict::default(),
            Some((at, categories, exception)) => {
                self.verdict_of(candidates[at].expression(), exception, &categories)
            }
        }
    }

    /// Hints the processor to load what confirming a candidate of `fingerprint` will read (the
    /// verification table's bucket; nothing without a table): see [`Fingerprints::prefetch`].
    #[inline]
    pub fn prefetch_confirmation(&self, fingerprint: u64) {
        if let Some(table) = &self.verification {
            table.prefetch(fingerprint);
        }
    }

    /// The decision for `url`, borrowing from the URL and the list — what
    /// [`Resolver::url_verdict_with`] answers, without allocating (see [`Decision::verdict`]
    /// for the owned form) — with its candidates found in order of specificity, most specific
    /// first: `find` offers each [`Spot`] to its argument, which confirms it and names its
    /// categories (`None`: not confirmed, or filtered out), and stops at the first taken. That
    /// is the winner of the one decision rule, so the less specific candidates need not be
    /// found at all. `find` returns the winner, if any.
    pub fn decide_in_order<'u, 'r>(
        &'r self,
        url: &'u CanonicalUrl,
        key: &mut Vec<u8>,
        find: impl FnOnce(
            &mut dyn FnMut(Spot) -> Option<Categories<'r>>,
        ) -> Option<(Spot, Categories<'r>)>,
    ) -> Decision<'u, 'r> {
        let Some((winner, categories)) = find(&mut |spot: Spot| {
            let ids = self.confirm(spot.fingerprint, &|_| None)?;
            self.categorize(ids)
        }) else {
            return Decision::default();
        };
        let exception =
            self.exceptions
                .most_specific(url, winner.specificity(url.host().len()), key);
        Decision {
            status: if exception.is_some() {
                Status::Allowed
            } else {
                Status::Listed
            },
            hit: Some(winner.expression(url)),
            exception,
            categories: Some(categories),
        }
    }

    /// The one decision rule, over candidates of any form: the most specific confirmed
    /// candidate that passes the category filter (stable order among equals), then the most
    /// specific exception at least as specific. Returns the winner's index in the reordered
    /// slice, its categories and the exception, or `None` when nothing lists the URL.
    fn decide_core<'u, 'r, T>(
        &'r self,
        url: &'u CanonicalUrl,
        candidates: &mut [T],
        specificity_of: impl Fn(&T) -> (usize, usize),
        fingerprint_of: impl Fn(&T) -> u64,
        key: &mut Vec<u8>,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
    ) -> Option<(usize, Categories<'r>, Option<Expression<'u>>)> {
        if candidates.is_empty() {
            return None;
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(specificity_of(c)));
        let (at, categories) = candidates.iter().enumerate().find_map(|(at, candidate)| {
            let ids = self.confirm(fingerprint_of(candidate), extra)?;
            Some((at, self.categorize(ids)?))
        })?;
        let exception = self
            .exceptions
            .most_specific(url, specificity_of(&candidates[at]), key);
        Some((at, categories, exception))
    }

    /// The owned verdict of a decided block entry.
    fn verdict_of(
        &self,
        hit: Expression<'_>,
        exception: Option<Expression<'_>>,
        categories: &Categories<'_>,
    ) -> Verdict {
        Verdict {
            status: if exception.is_some() {
                Status::Allowed
            } else {
                Status::Listed
            },
            hit: Some(Hit::of(hit)),
            exception: exception.map(Hit::of),
            categories: self.category_names(categories),
            categories_exact: categories.exact,
            error: None,
        }
    }

    /// Whether a candidate is confirmed, and the ids of its categories: `None` if not
    /// confirmed; no ids if confirmed without knowing them (no table, a one-category table, or
    /// vouched for by `extra` without them).
    fn confirm<'s>(
        &'s self,
        fingerprint: u64,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
    ) -> Option<Cow<'s, [u16]>> {
        match &self.verification {
            None => Some(Cow::Borrowed(&[])),
            Some(table) => match table.lookup(fingerprint) {
                Some(ids) => Some(Cow::Borrowed(ids)),
                None => extra(fingerprint).map(Cow::Owned),
            },
        }
    }

    /// The verdict for a whole key the filter answered `hit` for, with its fingerprint.
    pub fn key_verdict(&self, key: &[u8], hit: bool, fingerprint: u64) -> Verdict {
        self.key_verdict_with(key, hit, fingerprint, &|_| None)
    }

    /// [`Resolver::key_verdict`] with an extra confirmation (see
    /// [`Resolver::url_verdict_with`]).
    pub fn key_verdict_with(
        &self,
        key: &[u8],
        hit: bool,
        fingerprint: u64,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
    ) -> Verdict {
        if !hit || key.is_empty() {
            // An empty key (a blank line) is never listed: no list entry is empty.
            return Verdict::default();
        }
        let Some(ids) = self.confirm(fingerprint, extra) else {
            return Verdict::default();
        };
        let Some(categories) = self.categorize(ids) else {
            return Verdict::default();
        };
        Verdict {
            status: Status::Listed,
            hit: Some(Hit {
                expression: String::from_utf8_lossy(key).into_owned(),
                kind: "key",
            }),
            exception: None,
            categories: self.category_names(&categories),
            categories_exact: categories.exact,
            error: None,
        }
    }
}

/// The categories a verdict names: exactly the entry's, or the possible ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Categories<'r> {
    named: Named<'r>,
    /// Whether they are exactly the entry's (verified, or a one-category list).
    pub exact: bool,
}

/// Which category ids [`Categories`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Named<'r> {
    /// These ids.
    Ids(Cow<'r, [u16]>),
    /// Every category of the list.
    All,
}

impl Categories<'_> {
    /// Calls `each` with every id named that is one of a list of `count` categories
    /// (unsorted): the slice of ids or the range of all, each walked as it is (not one iterator
    /// chaining both: most verdicts name one or two ids, where the chain costs more than the
    /// rest).
    #[inline]
    fn each_id(&self, count: usize, mut each: impl FnMut(u16)) {
        match &self.named {
            Named::Ids(ids) => ids
                .iter()
                .filter(|&&id| (id as usize) < count)
                .for_each(|&id| each(id)),
            Named::All => (0..count.min(MAX_CATEGORIES) as u16).for_each(each),
        }
    }
}

/// A candidate entry of one URL named by where its expression lies in the URL: the host suffix
/// that starts at byte `host_start` of the host, and the first `path_len` bytes of the path and
/// query (`0`: a domain expression). Copyable, so that a batch of them needs no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    /// The entry's 64-bit fingerprint, for confirmation.
    pub fingerprint: u64,
    /// Start of the host suffix in [`CanonicalUrl::host`].
    pub host_start: u32,
    /// Length of the path prefix in [`CanonicalUrl::path_and_query`].
    pub path_len: u32,
}

impl Spot {
    /// The expression this spot names in `url` (the URL it was found in).
    #[inline]
    pub fn expression(self, url: &CanonicalUrl) -> Expression<'_> {
        url.expression_at(self.host_start as usize, self.path_len as usize)
    }

    /// [`specificity`] of its expression, for a host of `host_len` bytes.
    fn specificity(&self, host_len: usize) -> (usize, usize) {
        (
            host_len.saturating_sub(self.host_start as usize),
            self.path_len as usize,
        )
    }
}

/// A verdict for a URL that borrows from the URL and the list
/// ([`Resolver::decide_in_order`]): what a printer needs, with nothing allocated. Clean when
/// `hit` is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision<'u, 'r> {
    /// Clean, listed or allowed.
    pub status: Status,
    /// The block entry that lists the URL (also when an exception overrides it).
    pub hit: Option<Expression<'u>>,
    /// The exception that allows it.
    pub exception: Option<Expression<'u>>,
    /// The block entry's categories.
    pub categories: Option<Categories<'r>>,
}

impl Decision<'_, '_> {
    /// The owned [`Verdict`] (`resolver` is the one that decided).
    pub fn verdict(&self, resolver: &Resolver) -> Verdict {
        match (self.hit, &self.categories) {
            (Some(hit), Some(categories)) => resolver.verdict_of(hit, self.exception, categories),
            _ => Verdict::default(),
        }
    }
}

/// Whether an expression is a domain or URL key (`evil.com` or `evil.com/x`).
pub fn key_kind(key: &str) -> ExpressionKind {
    if key.contains('/') {
        ExpressionKind::Url
    } else {
        ExpressionKind::Domain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TSV column's constant names are [`Status::name`]'s.
    #[test]
    fn the_tsv_column_is_a_tab_and_the_name() {
        for status in [
            Status::Clean,
            Status::Listed,
            Status::Allowed,
            Status::Invalid,
        ] {
            let mut out = Vec::new();
            status.write_tsv_column(&mut out);
            assert_eq!(out, format!("\t{}", status.name()).as_bytes());
        }
    }
    use phishbloom_url::canonicalize;

    fn candidate(fingerprint: u64, host: &str, path: &str) -> Candidate {
        Candidate {
            fingerprint,
            host: host.into(),
            path: path.into(),
        }
    }

    /// Category names are ordered by their ranks as `category_names` orders the strings,
    /// for categories given out of order and for one added later.
    #[test]
    fn categories_are_named_in_name_order() {
        let mut resolver = Resolver::new(
            categories(&["zeta", "alpha", "mid"]),
            None,
            Exceptions::default(),
        );
        let late = resolver.category_id("beta");
        let ids = [0u16, 1, 2, late];
        let named = Categories {
            named: Named::Ids(Cow::Borrowed(&ids)),
            exact: true,
        };
        let mut order = Vec::new();
        resolver.order_categories(&named, &mut order);
        let ordered: Vec<&str> = order.iter().map(|&id| resolver.category_name(id)).collect();
        assert_eq!(ordered, ["alpha", "beta", "mid", "zeta"]);
        assert_eq!(resolver.category_names(&named), ordered);
    }

    fn categories(names: &[&str]) -> Vec<Category> {
        names
            .iter()
            .map(|n| Category {
                name: n.to_string(),
                entries: 1,
            })
            .collect()
    }

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

    #[test]
    fn the_most_specific_entry_wins_and_ties_go_to_the_exception() {
        let url = canonicalize(b"http://docs.evil-hosting.com/guide/x").unwrap();
        let exceptions = Exceptions::new(["docs.evil-hosting.com".to_string()]);
        let resolver = Resolver::new(categories(&["malware"]), None, exceptions);
        let mut key = Vec::new();
        // Block evil-hosting.com, except docs.evil-hosting.com: allowed.
        let mut found = vec![candidate(1, "evil-hosting.com", "")];
        let verdict = resolver.url_verdict(&url, &mut found, &mut key);
        assert_eq!(verdict.status, Status::Allowed);
        assert_eq!(
            verdict.exception.unwrap().expression,
            "docs.evil-hosting.com"
        );
        assert_eq!(verdict.hit.unwrap().expression, "evil-hosting.com");
        // A block entry below the exception is more specific: listed.
        let mut found = vec![
            candidate(1, "evil-hosting.com", ""),
            candidate(2, "docs.evil-hosting.com", "/guide"),
        ];
        let verdict = resolver.url_verdict(&url, &mut found, &mut key);
        assert_eq!(verdict.status, Status::Listed);
        assert_eq!(
            verdict.hit.unwrap().expression,
            "docs.evil-hosting.com/guide"
        );
        // The same entry blocked and allowed: the exception wins.
        let mut found = vec![candidate(3, "docs.evil-hosting.com", "")];
        assert_eq!(
            resolver.url_verdict(&url, &mut found, &mut key).status,
            Status::Allowed
        );
    }

    #[test]
    fn categories_are_exact_with_a_table_and_possible_without() {
        let names = categories(&["phishing", "gambling", "malware"]);
        let table = Verification::new(vec![(7, vec![1]), (8, vec![0, 2]), (7, vec![2])], true);
        let exact = Resolver::new(names.clone(), Some(table), Exceptions::default());
        let url = canonicalize(b"http://a.example/").unwrap();
        let mut key = Vec::new();
        let verdict = exact.url_verdict(&url, &mut [candidate(7, "a.example", "")], &mut key);
        assert_eq!(verdict.categories, ["gambling", "malware"]);
        assert!(verdict.categories_exact);
        // Not in the table: a false positive, clean.
        let verdict = exact.url_verdict(&url, &mut [candidate(9, "a.example", "")], &mut key);
        assert_eq!(verdict.status, Status::Clean);
        // Without the table: every category is possible.
        let possible = Resolver::new(names, None, Exceptions::default());
        let verdict = possible.url_verdict(&url, &mut [candidate(9, "a.example", "")], &mut key);
        assert_eq!(verdict.categories, ["gambling", "malware", "phishing"]);
        assert!(!verdict.categories_exact);
        // The category filter: only entries of that category count.
        let mut filtered = exact.clone();
        filtered.set_filter(vec![0]);
        let verdict = filtered.url_verdict(&url, &mut [candidate(7, "a.example", "")], &mut key);
        assert_eq!(verdict.status, Status::Clean);
        let verdict = filtered.url_verdict(&url, &mut [candidate(8, "a.example", "")], &mut key);
        assert_eq!(verdict.status, Status::Listed);
    }
}
