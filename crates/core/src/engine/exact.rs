//! The reference engine: entry keys in a hash set. Zero false positives by construction; the
//! oracle that tests and experiments judge the filters against.

use std::collections::HashSet;

use phishbloom_url::{CanonicalUrl, Entry};

use super::scratch::{Matcher, Scratch};
use crate::hits::Candidate;
use crate::keys::{expression_hash, fingerprint};

/// Entry keys in a hash set.
#[derive(Clone, Debug, Default)]
pub struct ExactMatcher {
    keys: HashSet<Box<str>>,
}

impl ExactMatcher {
    /// A matcher for `entries`.
    pub fn new<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Self {
        ExactMatcher {
            keys: entries
                .into_iter()
                .map(|e| e.to_key_string().into_boxed_str())
                .collect(),
        }
    }

    /// Number of distinct entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Matcher for ExactMatcher {
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        for expression in url.expressions() {
            scratch.key.clear();
            expression.write_key(&mut scratch.key);
            // Canonical keys are ASCII, so always UTF-8.
            if std::str::from_utf8(&scratch.key).is_ok_and(|k| self.keys.contains(k)) {
                let print = fingerprint(expression_hash(expression));
                out.push(Candidate::new(print, expression));
            }
        }
    }
}
