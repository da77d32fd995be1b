//! A list's categories: their names and counts, the interned category sets entries point to,
//! the categories a verdict names, and how a [`Resolver`] numbers, filters and orders them.

use std::borrow::Cow;

use super::Resolver;

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

/// The categories a verdict names: exactly the entry's, or the possible ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Categories<'r> {
    pub(super) named: Named<'r>,
    /// Whether they are exactly the entry's (verified, or a one-category list).
    pub exact: bool,
}

/// Which category ids [`Categories`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Named<'r> {
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

impl Resolver {
    /// Ranks the categories' names (after they changed): `name_rank[id]` is the place of
    /// category `id`'s name among all, in byte order.
    pub(super) fn rank_names(&mut self) {
        let mut ids: Vec<usize> = (0..self.categories.len()).collect();
        ids.sort_by(|&a, &b| self.categories[a].name.cmp(&self.categories[b].name));
        self.name_rank = vec![0; ids.len()];
        for (place, id) in ids.into_iter().enumerate() {
            // At most MAX_CATEGORIES (2^16 - 1) categories: every place fits in a u16.
            self.name_rank[id] = place as u16;
        }
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

    /// Answers only for entries of these categories (ids into [`Resolver::categories`]).
    pub fn set_filter(&mut self, ids: Vec<u16>) {
        self.filter = Some(ids);
    }

    /// The categories a confirmed candidate with category ids `ids` names, if it passes the
    /// category filter (`None` if it does not).
    pub(super) fn categorize<'r>(&'r self, ids: Cow<'r, [u16]>) -> Option<Categories<'r>> {
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::categories;
    use super::super::Exceptions;
    use super::*;

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
}
