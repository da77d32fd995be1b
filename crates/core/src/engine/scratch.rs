//! The [`Matcher`] every URL engine implements, and the [`Scratch`] buffers a thread lends it.

use phishbloom_url::CanonicalUrl;

use super::probes::UrlProbes;
use crate::hits::{Candidate, Hit};

/// Reusable buffers for [`Matcher::find`], one per thread.
#[derive(Default)]
pub struct Scratch {
    pub(crate) key: Vec<u8>,
    pub(crate) url: UrlProbes,
    pub(crate) answers: Vec<bool>,
    pub(crate) candidates: Vec<bool>,
    pub(crate) found: Vec<Candidate>,
    /// The order of a verdict's category names ([`crate::resolve::Resolver::order_categories`]).
    pub(crate) order: Vec<u16>,
    /// The reason an item is invalid, as text.
    pub(crate) reason: String,
    /// Prepares the items of a batch ([`crate::prepare`]) into reused buffers.
    pub(crate) preparer: crate::prepare::Preparer,
}

/// What finds the entries that may list a canonical URL; [`crate::resolve::Resolver`] then
/// confirms them and decides the verdict.
pub trait Matcher: Send + Sync {
    /// Appends to `out` every expression of `url` that the structure answers for (in any
    /// order; a filter's false positives included), with its fingerprint.
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>);

    /// The most specific candidate, for callers without a resolver (tests, experiments): the
    /// entry that lists `url` according to the structure alone.
    fn find(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        let mut found = Vec::new();
        self.candidates(url, scratch, &mut found);
        let resolver = crate::resolve::Resolver::default();
        resolver.url_verdict(url, &mut found, &mut scratch.key).hit
    }
}
