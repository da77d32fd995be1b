//! Exception entries (`--allow`, UT1's `liste_blanche`), stored exactly, and the rule that
//! orders the entries matching one URL: the most specific wins.

use std::collections::HashSet;

use phishbloom_url::{CanonicalUrl, Expression};

/// How specific an entry is among those matching one URL: the longer host (more labels), then
/// the longer path (with a query longer than without). Expressions of one URL are suffixes of
/// its host and prefixes of its path, so lengths order them.
pub(super) fn specificity(expression: Expression<'_>) -> (usize, usize) {
    (expression.host.len(), expression.path.len())
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
    pub(super) fn most_specific<'u>(
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
