//! The URL filter: every entry key in one structure, probed with every lookup expression of a
//! URL ([`super::probes::UrlProbes`]) whose host suffix passes the list's host gate
//! ([`super::gate::HostGate`]); all probes of a URL go to the structure as one prefetched batch.

use phishbloom_url::CanonicalUrl;

use super::gate::HostGate;
use super::scratch::{Matcher, Scratch};
use crate::hits::Candidate;
use crate::keys::fingerprint;
use crate::resolve::Spot;
use crate::structure::Layers;

/// URL entries in the list's structure (a Bloom, cuckoo or counting filter, or layers of one),
/// with the gate of their hosts when the list has one.
#[derive(Clone, Debug)]
pub struct UrlFilter {
    layers: Layers,
    gate: Option<HostGate>,
    /// No entry has a path (a compact list of domains says so): only domain expressions are
    /// probed.
    no_paths: bool,
    /// The list has domain entries of a single label: URLs' top labels are probed (see
    /// `crate::list::tops`).
    tops: bool,
}

impl UrlFilter {
    /// Wraps a structure that holds [`expression_hash`](crate::keys::expression_hash)es of
    /// entry keys, and the gate of the entries' hosts (`None`: every expression is probed).
    pub fn new(layers: Layers, gate: Option<HostGate>) -> Self {
        let no_paths = layers.compact_table().is_some_and(|t| t.domains_only());
        UrlFilter {
            layers,
            gate,
            no_paths,
            tops: false,
        }
    }

    /// Whether URLs' top labels are probed: set by the list when its set of single-label
    /// domain entries becomes empty or not.
    pub(crate) fn set_tops(&mut self, tops: bool) {
        self.tops = tops;
    }

    /// The structure.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The gate of the entries' hosts, if the list has one.
    pub fn gate(&self) -> Option<&HostGate> {
        self.gate.as_ref()
    }

    /// The structure, for a change whose entries' hosts are not known (a delta names entries by
    /// fingerprint; a merge may bring hosts from a list without a gate): the gate is dropped,
    /// since it could no longer vouch for every entry. Take [`UrlFilter::parts_mut`] to add
    /// entries whose hosts are known.
    pub fn layers_mut(&mut self) -> &mut Layers {
        self.gate = None;
        &mut self.layers
    }

    /// The structure and the gate, for a change that keeps the gate whole: adding entries and
    /// inserting each one's host into the gate, or removing entries (a removed entry's host
    /// may stay: it costs a probe, never an answer).
    pub fn parts_mut(&mut self) -> (&mut Layers, Option<&mut HostGate>) {
        (&mut self.layers, self.gate.as_mut())
    }

    /// Sets the gate (after a merge of two gated lists: the union of their gates).
    pub fn set_gate(&mut self, gate: Option<HostGate>) {
        self.gate = gate;
    }
}

impl UrlFilter {
    /// Whether the gate rules out every expression of a URL whose canonical host is `host` — a
    /// host read off the input before canonicalizing it ([`phishbloom_url::written_host`]):
    /// no suffix of `host` is an entry's host, so the URL is clean without canonicalizing or
    /// hashing the rest (most URLs checked are on no listed host). `false` without a gate.
    /// Otherwise the suffixes' hashes and the gate's answers stay in `scratch` for
    /// [`UrlFilter::first_spot`] of that URL.
    pub fn rules_out_host(&self, host: &str, scratch: &mut Scratch) -> bool {
        match &self.gate {
            Some(gate) => scratch.url.gate_host(host, gate, self.tops),
            None => false,
        }
    }

    /// The most specific expression of `url` that the structure holds and `accept` takes
    /// (confirms), with what `accept` gave: expressions are probed in order of specificity,
    /// and the walk stops there
    /// ([`UrlProbes::first_in_order`](super::probes::UrlProbes::first_in_order)). Nothing is allocated once
    /// the scratch buffers have grown. `prefetch` is given each expression's fingerprint before
    /// it is probed ([`crate::resolve::Resolver::prefetch_confirmation`] there has the
    /// confirmation's memory fetched while the probe's is).
    #[inline(always)]
    pub fn first_spot<T>(
        &self,
        url: &CanonicalUrl,
        scratch: &mut Scratch,
        prefetch: impl Fn(u64),
        accept: impl FnMut(Spot) -> Option<T>,
    ) -> Option<(Spot, T)> {
        let layers = &self.layers;
        let single = layers.single_bloom();
        // A compact table's probe is its confirmation's own lookup: every expression goes to
        // `accept`, which looks it up once.
        let compact = layers.is_compact();
        scratch.url.first_in_order(
            url,
            self.gate.as_ref(),
            (self.no_paths, self.tops),
            |hash| {
                if compact {
                    return true;
                }
                // Behind the gate most probes hit: the confirmation's memory is asked for now,
                // while the filter's block is fetched.
                prefetch(fingerprint(hash));
                match single {
                    Some(filter) => filter.contains_hash(hash),
                    None => layers.contains_hash(hash),
                }
            },
            accept,
        )
    }
}

impl Matcher for UrlFilter {
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        scratch
            .url
            .compute_gated(url, self.gate.as_ref(), (self.no_paths, self.tops));
        let probes = scratch.url.hashes();
        scratch.answers.clear();
        if probes.is_empty() {
            return;
        }
        self.layers
            .contains_hash_batch(probes, &mut scratch.answers);
        for (index, _) in scratch.answers.iter().enumerate().filter(|(_, &hit)| hit) {
            // Rebuild the expression's text only on a hit (rare for clean traffic).
            if let Some(expression) = scratch.url.expression(url, index) {
                out.push(Candidate::new(fingerprint(probes[index]), expression));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::exact::ExactMatcher;
    use crate::engine::probes::path_prefix_hashes;
    use crate::engine::Hit;
    use crate::keys::expression_hash;
    use crate::kind::Kind;
    use phishbloom_filter::HashStrategy;
    use phishbloom_filter::KeyHash;
    use phishbloom_url::{canonicalize, Entry};

    fn entries(lines: &[&str]) -> Vec<Entry> {
        lines
            .iter()
            .map(|l| Entry::parse(l.as_bytes()).unwrap())
            .collect()
    }

    fn url_filter(list: &[Entry], fpp: f64) -> UrlFilter {
        let mut layers = Layers::new(
            Kind::Blocked,
            list.len() as u64,
            fpp,
            HashStrategy::Xxh3,
            false,
        )
        .unwrap();
        for entry in list {
            layers.insert_hash(expression_hash(entry.key())).unwrap();
        }
        UrlFilter::new(layers, None)
    }

    fn find(matcher: &dyn Matcher, url: &str) -> Option<Hit> {
        matcher.find(
            &canonicalize(url.as_bytes()).unwrap(),
            &mut Scratch::default(),
        )
    }

    #[test]
    fn list_semantics_in_both_engines() {
        let list = entries(&["evil.com", "sig2fa.wixsite.com/sig2faverify"]);
        let exact = ExactMatcher::new(&list);
        let bloom = url_filter(&list, 1e-9);
        for matcher in [&exact as &dyn Matcher, &bloom] {
            for url in [
                "HTTP://Evil.COM:80/login/../a/./b#x",
                "evil.com/a/b",
                "http://www.evil.com/a/b/c?x=1",
            ] {
                let hit = find(matcher, url).unwrap_or_else(|| panic!("{url}"));
                assert_eq!(
                    hit,
                    Hit {
                        expression: "evil.com".into(),
                        kind: "domain"
                    }
                );
            }
            let hit = find(matcher, "sig2fa.wixsite.com/sig2faverify/step?id=1").unwrap();
            assert_eq!(hit.kind, "url");
            assert_eq!(hit.expression, "sig2fa.wixsite.com/sig2faverify");
            for clean in [
                "sig2fa.wixsite.com/other",
                "notevil.com",
                "sig2fa.wixsite.com/sig2faverifyX",
            ] {
                assert_eq!(find(matcher, clean), None, "{clean}");
            }
        }
    }

    #[test]
    fn every_hit_is_a_candidate_with_its_fingerprint() {
        let list = entries(&["evil.com"]);
        // A filter whose every bit is set: every probe is a hit.
        let mut full = url_filter(&list, 0.5);
        full.layers_mut()
            .single_bloom_mut()
            .unwrap()
            .bit_bytes_mut()
            .fill(0xff);
        // As for a list with single-label domains: the top label is probed too.
        full.set_tops(true);
        let url = canonicalize(b"http://a.clean.example/x/y").unwrap();
        let mut found = Vec::new();
        full.candidates(&url, &mut Scratch::default(), &mut found);
        assert_eq!(found.len(), url.expression_count());
        for (candidate, expression) in found.iter().zip(url.expressions()) {
            assert_eq!(
                candidate.fingerprint,
                fingerprint(expression_hash(expression))
            );
            assert_eq!(
                (&*candidate.host, &*candidate.path),
                (expression.host, expression.path)
            );
        }
    }

    #[test]
    fn streaming_prefix_hashes_equal_one_shot_hashes() {
        let long = format!("http://a.com/{}/x/y?q=1", "s".repeat(3000));
        let url = canonicalize(long.as_bytes()).unwrap();
        let mut streamed = Vec::new();
        path_prefix_hashes(&url, &mut streamed);
        let one_shot: Vec<KeyHash> = std::iter::once(KeyHash::of(b""))
            .chain(url.path_prefixes().map(|p| KeyHash::of(p.as_bytes())))
            .collect();
        assert_eq!(streamed, one_shot);
    }
}
