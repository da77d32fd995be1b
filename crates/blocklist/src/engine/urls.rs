//! The URL filter: every entry key in one Bloom filter, probed with every lookup expression of a
//! URL. Each host suffix and each path prefix is hashed once and the two hashes combined per
//! expression, so the cost of a query grows with the URL, not with the number of expressions
//! times its length; all probes of a URL go to the filter as one prefetched batch.

use phishbloom_filter::KeyHash;
use phishbloom_url::{CanonicalUrl, Expression};
use xxhash_rust::xxh3::Xxh3;

use super::{fingerprint, Matcher, Scratch};
use crate::resolve::Candidate;
use crate::structure::Layers;

/// The hash of an expression or entry key `(host, path)`: the xxh3-128 of each part, combined.
pub fn expression_hash(expression: Expression<'_>) -> KeyHash {
    KeyHash::of(expression.host.as_bytes()).combine(KeyHash::of(expression.path.as_bytes()))
}

/// Path lengths above which prefix hashes are computed by one streaming pass rather than one
/// hash per prefix: beyond this, re-hashing 64 prefixes would cost more than the streaming state.
const STREAMING_PATH_BYTES: usize = 1024;

/// The probes of one URL: the combined hash of every (host suffix, path prefix) pair, host
/// suffixes in [`CanonicalUrl::host_suffixes`] order, each with `""` (the domain key) first and
/// then every [`CanonicalUrl::path_prefixes`] item. A store of the filter elsewhere (Redis)
/// computes them here and probes its own bits.
#[derive(Clone, Debug, Default)]
pub struct UrlProbes {
    suffixes: Vec<KeyHash>,
    paths: Vec<KeyHash>,
    probes: Vec<KeyHash>,
}

impl UrlProbes {
    /// Computes the probes of `url` (replacing the previous ones).
    pub fn compute(&mut self, url: &CanonicalUrl) {
        self.suffixes.clear();
        self.suffixes
            .extend(url.host_suffixes().map(|s| KeyHash::of(s.as_bytes())));
        path_prefix_hashes(url, &mut self.paths);
        self.probes.clear();
        for &host in &self.suffixes {
            self.probes
                .extend(self.paths.iter().map(|&path| host.combine(path)));
        }
    }

    /// The probe hashes, in the order above.
    pub fn hashes(&self) -> &[KeyHash] {
        &self.probes
    }

    /// The expression probe `index` stands for (rebuilt from the URL: call only on a hit).
    pub fn expression<'u>(&self, url: &'u CanonicalUrl, index: usize) -> Option<Expression<'u>> {
        let per_host = self.paths.len().max(1);
        let host = url.host_suffixes().nth(index / per_host)?;
        let path = match index % per_host {
            0 => "",
            prefix => url.path_prefixes().nth(prefix - 1)?,
        };
        Some(Expression { host, path })
    }
}

/// Hashes of `""` followed by every path prefix of `url`, into `out`.
fn path_prefix_hashes(url: &CanonicalUrl, out: &mut Vec<KeyHash>) {
    out.clear();
    out.push(KeyHash::of(b""));
    let base = url.path_and_query();
    if base.len() <= STREAMING_PATH_BYTES {
        out.extend(url.path_prefixes().map(|p| KeyHash::of(p.as_bytes())));
        return;
    }
    // Every prefix is a prefix of `base`: hash `base` once, reading the digest at each length.
    let lengths: Vec<usize> = url.path_prefixes().map(str::len).collect();
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let start = out.len();
    out.resize(start + lengths.len(), KeyHash::of(b""));
    let mut hasher = Xxh3::new();
    let mut fed = 0;
    for i in order {
        hasher.update(&base.as_bytes()[fed..lengths[i]]);
        fed = lengths[i];
        out[start + i] = KeyHash::from_u128(hasher.digest128());
    }
}

/// URL entries in the list's structure (a Bloom, cuckoo or counting filter, or layers of one).
#[derive(Clone, Debug)]
pub struct UrlFilter {
    layers: Layers,
}

impl UrlFilter {
    /// Wraps a structure that holds [`expression_hash`]es of entry keys.
    pub fn new(layers: Layers) -> Self {
        UrlFilter { layers }
    }

    /// The structure.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The structure, for changing it.
    pub fn layers_mut(&mut self) -> &mut Layers {
        &mut self.layers
    }
}

impl Matcher for UrlFilter {
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        scratch.url.compute(url);
        let probes = scratch.url.hashes();
        scratch.answers.clear();
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
    use crate::blocklist::Kind;
    use crate::engine::exact::ExactMatcher;
    use crate::engine::Hit;
    use phishbloom_filter::HashStrategy;
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
        UrlFilter::new(layers)
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
