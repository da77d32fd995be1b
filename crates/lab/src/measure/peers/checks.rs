//! Asking each structure about URLs, one loop per structure (generic, so that no call per URL
//! is dynamic): every structure gets the same URL lines, canonicalized by the same
//! [`Canonicalizer`], and answers "listed" or not from the URL's expressions.

use std::time::Instant;

use phishbloom_core::engine::Scratch;
use phishbloom_core::{Blocklist, KeyList};
use phishbloom_url::{CanonicalUrl, Canonicalizer};

use super::fuse::{Fuse, FuseTable};
use super::safe_browsing::PrefixLists;

/// A structure asked whether it lists a URL.
pub trait UrlCheck {
    /// Whether it answers "listed" (for Safe Browsing's prefixes: a local hit, which a client
    /// would confirm online).
    fn listed(&mut self, url: &CanonicalUrl) -> bool;
}

/// A phishbloom list, asked through [`Blocklist::check_url`] (the verdict's categories
/// included).
pub struct ListCheck<'a> {
    list: &'a Blocklist,
    scratch: Scratch,
}

impl<'a> ListCheck<'a> {
    /// Asks `list`, with its own scratch buffers.
    pub fn new(list: &'a Blocklist) -> Self {
        ListCheck {
            list,
            scratch: Scratch::default(),
        }
    }
}

impl UrlCheck for ListCheck<'_> {
    fn listed(&mut self, url: &CanonicalUrl) -> bool {
        self.list.check_url(url, &mut self.scratch).listed()
    }
}

/// Safe Browsing's prefix lists: SHA-256 of each expression, binary search of each list.
pub struct PrefixCheck<'a> {
    lists: &'a PrefixLists,
    text: Vec<u8>,
}

impl<'a> PrefixCheck<'a> {
    /// Asks `lists`.
    pub fn new(lists: &'a PrefixLists) -> Self {
        PrefixCheck {
            lists,
            text: Vec::new(),
        }
    }
}

impl UrlCheck for PrefixCheck<'_> {
    fn listed(&mut self, url: &CanonicalUrl) -> bool {
        self.lists.hits(url, &mut self.text)
    }
}

/// A binary fuse filter with its category table: the set of the first expression it holds.
pub struct FuseCheck<'a, F>(pub &'a FuseTable<F>);

impl<F: Fuse> UrlCheck for FuseCheck<'_, F> {
    fn listed(&mut self, url: &CanonicalUrl) -> bool {
        self.0.check(url).is_some()
    }
}

/// What one pass over URLs found and took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pass {
    /// URLs asked (those the mask kept).
    pub asked: u64,
    /// Of those, answered "listed".
    pub listed: u64,
    /// Wall seconds of the pass, canonicalization included.
    pub seconds: f64,
}

impl Pass {
    /// Nanoseconds per URL asked.
    pub fn ns_per_url(&self) -> f64 {
        self.seconds * 1e9 / self.asked.max(1) as f64
    }
}

/// Asks `check` about every URL of `urls` that `mask` keeps (all without one), on this thread.
/// A line that does not canonicalize counts as asked and not listed, as `check` answers it.
pub fn pass<C: UrlCheck>(check: &mut C, urls: &KeyList, mask: Option<&[bool]>) -> Pass {
    let mut canonicalizer = Canonicalizer::new();
    let started = Instant::now();
    let (mut asked, mut listed) = (0u64, 0u64);
    for (i, line) in urls.iter().enumerate() {
        if mask.is_some_and(|m| !m[i]) {
            continue;
        }
        asked += 1;
        if let Ok(url) = canonicalizer.canonicalize(line) {
            listed += u64::from(check.listed(url));
        }
    }
    Pass {
        asked,
        listed,
        seconds: started.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::{BuildOptions, EntrySet};
    use phishbloom_url::Entry;

    #[test]
    fn a_pass_counts_what_the_mask_keeps_and_what_is_listed() {
        let entries = vec![Entry::parse(b"evil.com").unwrap()];
        let set = EntrySet::uncategorized(entries, "phishing");
        let options = BuildOptions {
            verify: true,
            ..BuildOptions::default()
        };
        let list = Blocklist::from_entries(&set, &options).unwrap();
        let mut urls = KeyList::default();
        for line in ["http://evil.com/a", "good.org/", "http://a.evil.com/", "::"] {
            urls.push(line.as_bytes());
        }
        let all = pass(&mut ListCheck::new(&list), &urls, None);
        assert_eq!((all.asked, all.listed), (4, 2));
        assert!(all.ns_per_url() > 0.0);
        let kept = pass(
            &mut ListCheck::new(&list),
            &urls,
            Some(&[false, true, true, true]),
        );
        assert_eq!((kept.asked, kept.listed), (3, 1));
    }
}
