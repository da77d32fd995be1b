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
//! - **Top labels.** A hit of a URL's top label alone (`intranet` of `a.intranet`; see
//!   [`phishbloom_url::is_top_label`]) stands for a domain entry of a single label covering
//!   every host under it. One such false positive would list a whole top-level domain, so it
//!   must be exact: the list keeps the fingerprints of its single-label domain entries in a
//!   set of their own ([`Resolver::tops`]), and a top-label hit stands only when it is there
//!   (and is confirmed as any hit is). A list without such entries never probes top labels.
//! - **Exceptions.** Exception entries (`--allow`, UT1's `liste_blanche`) are stored exactly,
//!   never in a filter — a false "allowed" would be a false negative. Among the entries that
//!   match a URL, the most specific wins, as in squidGuard: the longer host, then the longer path;
//!   on a tie the exception wins. A URL whose block entry is overridden is `allowed`.
//!
//! Each file here is one job: `categories`, `verification`, `exceptions`, `verdict` (what an
//! answer holds); this one decides.

use std::borrow::Cow;

use phishbloom_url::{is_top_label, CanonicalUrl, Expression, ExpressionKind};

use crate::hits::{Candidate, Fingerprints, Hit};

mod categories;
mod compact;
mod exceptions;
mod verdict;
mod verification;

pub use categories::{Categories, Category, CategorySets, MAX_CATEGORIES};
pub(crate) use compact::intern_run;
pub use compact::{
    bound_bits_per_entry, chain_universe, compact_universe, CompactTable, SetCoding, CHAIN_HEADROOM,
};
use exceptions::specificity;
pub use exceptions::Exceptions;
pub use verdict::{Decision, Spot, Status, Verdict};
pub use verification::Verification;

/// Decides verdicts: confirmation, categories, exceptions, the category filter.
#[derive(Clone, Debug, Default)]
pub struct Resolver {
    verification: Option<Verification>,
    /// A compact list's table: it confirms hits as a verification table does.
    compact: Option<std::sync::Arc<CompactTable>>,
    /// Fingerprints never confirmed: the false positives of a universe that never warns
    /// ([`crate::Blocklist::never_warn`]).
    never: Fingerprints,
    /// Fingerprints of the domain entries of a single label: a top-label hit stands only when
    /// it is one of them.
    tops: Fingerprints,
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
            compact: None,
            never: Fingerprints::default(),
            tops: Fingerprints::default(),
            categories,
            name_rank: Vec::new(),
            exceptions,
            filter: None,
        };
        resolver.rank_names();
        resolver
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        &self.categories
    }

    /// The verification table.
    pub fn verification(&self) -> Option<&Verification> {
        self.verification.as_ref()
    }

    /// Confirms hits with a compact list's table (shared with the list's structure).
    pub fn with_compact(mut self, table: std::sync::Arc<CompactTable>) -> Self {
        self.compact = Some(table);
        self
    }

    /// A compact list's table.
    pub fn compact(&self) -> Option<&CompactTable> {
        self.compact.as_deref()
    }

    /// A compact list's table, shared.
    pub fn compact_arc(&self) -> Option<std::sync::Arc<CompactTable>> {
        self.compact.clone()
    }

    /// The never set: fingerprints no hit is confirmed for.
    pub fn never(&self) -> &Fingerprints {
        &self.never
    }

    /// Replaces the never set.
    pub fn set_never(&mut self, never: Fingerprints) {
        self.never = never;
    }

    /// The fingerprints of the list's domain entries of a single label: a top-label hit stands
    /// only when it is one of them (see the module docs).
    pub fn tops(&self) -> &Fingerprints {
        &self.tops
    }

    /// Replaces the set of single-label domain entries (see [`Resolver::tops`]); a list changes
    /// it through `Blocklist`, which also tells its engine whether to probe top labels.
    pub(crate) fn set_tops(&mut self, tops: Fingerprints) {
        self.tops = tops;
    }

    /// The resolver with `tops` as its set of single-label domain entries: for a store of the
    /// list elsewhere (Redis), which probes top labels only when the set is not empty.
    pub fn with_tops(mut self, tops: Fingerprints) -> Self {
        self.tops = tops;
        self
    }

    /// Takes entries added to the list out of the never set (an entry is never overruled).
    pub fn forget_never(&mut self, added: &[u64]) {
        self.never = self.never.without(added);
    }

    /// Whether a hit of fingerprint `v` would be confirmed (the never set, then the table).
    pub fn confirms_hit(&self, v: u64) -> bool {
        self.confirm(v, &|_| None).is_some()
    }

    /// Whether every hit is confirmed exactly (a verification table or a compact table).
    pub fn confirms(&self) -> bool {
        self.verification.is_some() || self.compact.is_some()
    }

    /// The exceptions.
    pub fn exceptions(&self) -> &Exceptions {
        &self.exceptions
    }

    /// Replaces the exceptions.
    pub fn set_exceptions(&mut self, exceptions: Exceptions) {
        self.exceptions = exceptions;
    }

    /// The verification table, to change it.
    pub fn verification_mut(&mut self) -> Option<&mut Verification> {
        self.verification.as_mut()
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
    /// verification table's bucket; nothing without a table): see
    /// [`Fingerprints::prefetch`](crate::hits::Fingerprints::prefetch).
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
    /// found at all. `find` returns the winner, if any. Inlined into the line loops that call
    /// it (`check`'s, the server's, the squid helper's): a call would hide the walk's closures
    /// from the optimizer, about 90 instructions a line.
    #[inline(always)]
    pub fn decide_in_order<'u, 'r>(
        &'r self,
        url: &'u CanonicalUrl,
        key: &mut Vec<u8>,
        find: impl FnOnce(
            &mut dyn FnMut(Spot) -> Option<Categories<'r>>,
        ) -> Option<(Spot, Categories<'r>)>,
    ) -> Decision<'u, 'r> {
        let Some((winner, categories)) = find(&mut |spot: Spot| {
            // The walks that call this probe top labels only for a list that has single-label
            // domains (`UrlFilter`'s flag follows this set): without any, no spot is one.
            if !self.tops.is_empty()
                && !self.confirms_top(url, spot.host_start as usize, spot.fingerprint)
            {
                return None;
            }
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
        let host_len = url.host().len();
        let (at, categories) = candidates.iter().enumerate().find_map(|(at, candidate)| {
            let fingerprint = fingerprint_of(candidate);
            let start = host_len.saturating_sub(specificity_of(candidate).0);
            if !self.confirms_top(url, start, fingerprint) {
                return None;
            }
            let ids = self.confirm(fingerprint, extra)?;
            Some((at, self.categorize(ids)?))
        })?;
        let exception = self
            .exceptions
            .most_specific(url, specificity_of(&candidates[at]), key);
        Some((at, categories, exception))
    }

    /// The owned verdict of a decided block entry.
    pub(super) fn verdict_of(
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

    /// Whether a hit of the host suffix from byte `start` of `url`'s host, of `fingerprint`,
    /// may stand: `false` only for a top-label hit that is not one of the list's single-label
    /// domain entries (see the module docs).
    #[inline(always)]
    pub(crate) fn confirms_top(&self, url: &CanonicalUrl, start: usize, fingerprint: u64) -> bool {
        let host = url.host();
        let suffix = host.get(start..).unwrap_or(host);
        !is_top_label(host, suffix) || self.tops.contains(fingerprint)
    }

    /// Whether a candidate is confirmed, and the ids of its categories: `None` if not
    /// confirmed; no ids if confirmed without knowing them (no table, a one-category table, or
    /// vouched for by `extra` without them).
    fn confirm<'s>(
        &'s self,
        fingerprint: u64,
        extra: &dyn Fn(u64) -> Option<Vec<u16>>,
    ) -> Option<Cow<'s, [u16]>> {
        if !self.never.is_empty() && self.never.contains(fingerprint) {
            return None;
        }
        let found = match (&self.verification, &self.compact) {
            (None, None) => return Some(Cow::Borrowed(&[])),
            (Some(table), _) => table.lookup(fingerprint),
            (None, Some(table)) => table.lookup(fingerprint),
        };
        match found {
            Some(ids) => Some(Cow::Borrowed(ids)),
            None => extra(fingerprint).map(Cow::Owned),
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
    use phishbloom_url::canonicalize;

    fn candidate(fingerprint: u64, host: &str, path: &str) -> Candidate {
        Candidate {
            fingerprint,
            host: host.into(),
            path: path.into(),
        }
    }

    /// Categories of these names, one entry each.
    pub(super) fn categories(names: &[&str]) -> Vec<Category> {
        names
            .iter()
            .map(|n| Category {
                name: n.to_string(),
                entries: 1,
            })
            .collect()
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
