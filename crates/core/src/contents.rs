//! A list's contents in memory, as the builders take them: [`KeyList`] (whole keys) and
//! [`EntrySet`] (URL entries with their categories, and the exceptions). Reading them from files
//! is `phishbloom-blocklist`'s.

use phishbloom_url::Entry;

/// Distinct normalized keys, stored contiguously.
#[derive(Clone, Debug, Default)]
pub struct KeyList {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyList {
    /// Appends a key.
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `index`-th key.
    pub fn get(&self, index: usize) -> &[u8] {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        &self.bytes[start..self.ends[index]]
    }

    /// The keys in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The keys as borrowed slices (for batch APIs).
    pub fn as_slices(&self) -> Vec<&[u8]> {
        self.iter().collect()
    }

    /// Appends every key of `other`.
    pub fn extend(&mut self, other: &KeyList) {
        for key in other.iter() {
            self.push(key);
        }
    }
}

/// An entry's category ids, sorted: up to four inline, without an allocation.
pub type Membership = smallvec::SmallVec<[u16; 4]>;

/// Distinct entries with their categories, and the exceptions.
#[derive(Clone, Debug, Default)]
pub struct EntrySet {
    /// The entries to block, distinct.
    pub entries: Vec<Entry>,
    /// Category names; ids are indices.
    pub categories: Vec<String>,
    /// Per entry (parallel to `entries`): its category ids, sorted.
    pub membership: Vec<Membership>,
    /// The exceptions, distinct.
    pub exceptions: Vec<Entry>,
}

impl EntrySet {
    /// Entries of category `id`.
    pub fn count_in(&self, id: u16) -> u64 {
        self.membership.iter().filter(|m| m.contains(&id)).count() as u64
    }

    /// Entries without categories (each in one category named `category`), no exceptions.
    pub fn uncategorized(entries: Vec<Entry>, category: &str) -> Self {
        let membership = vec![smallvec::smallvec![0]; entries.len()];
        EntrySet {
            entries,
            categories: vec![category.to_string()],
            membership,
            exceptions: Vec::new(),
        }
    }
}
