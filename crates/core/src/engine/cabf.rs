//! CaBF as a lookup engine: seed 003's parallel cardinality-adaptive filters with the same URL
//! semantics as the other engines.
//!
//! A URL (or entry) is cut into components — by [`Split`] — and a list entry is a prefix of the
//! component sequences of the URLs it covers. A query URL is looked up once per host suffix (as
//! the expression engines do), each time as a component sequence whose longest listed prefix
//! CaBF finds; so domain entries match every subdomain and URL entries every URL below them,
//! under any subdomain. The structures themselves are `phishbloom_filter::cabf`.

use phishbloom_filter::cabf::{Allocation, Cabf, CheckStore, PrefixFilter};
use phishbloom_filter::{BloomFilter, KeyHash};
use phishbloom_url::{is_top_label, CanonicalUrl, Entry, HostSuffixes};

use super::scratch::{Matcher, Scratch};
use crate::error::Result;
use crate::hits::Candidate;
use crate::rates::per_probe_fpp;

/// Parallel filters of the engine (the paper's p = 8).
pub const ENGINE_FILTERS: usize = 8;

/// Split used by the engine; chosen from `phishbloom-lab experiment cabf` (see docs/cabf).
pub const ENGINE_SPLIT: Split = Split::Slash;

/// How a URL is cut into components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The paper's split at `/`: the whole host, then path segments.
    Slash,
    /// The host's labels in reverse order (`com`, `evil`, `www`), then path segments: a domain
    /// entry is a prefix of every URL on its subdomains.
    ReversedHost,
}

impl Split {
    /// The name used in experiment output and by `info`.
    pub fn name(self) -> &'static str {
        match self {
            Split::Slash => "slash",
            Split::ReversedHost => "reversed-host",
        }
    }

    /// The code a blocklist file stores (docs/FORMAT.md, CaBF section).
    pub fn code(self) -> u8 {
        match self {
            Split::Slash => 0,
            Split::ReversedHost => 1,
        }
    }

    /// The split for a stored code.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Split::Slash),
            1 => Some(Split::ReversedHost),
            _ => None,
        }
    }
}

/// Components of a host (as `split` cuts it), then, if `path` is given, `/`, each segment as
/// `/seg`, and the query as `?q`.
pub fn components(
    split: Split,
    host: &str,
    is_ip: bool,
    path: Option<(&str, Option<&str>)>,
) -> Vec<String> {
    let mut out: Vec<String> = match split {
        Split::ReversedHost if !is_ip => host.rsplit('.').map(str::to_string).collect(),
        _ => vec![host.to_string()],
    };
    if let Some((path, query)) = path {
        out.push("/".to_string());
        out.extend(
            path.split('/')
                .filter(|s| !s.is_empty())
                .map(|s| format!("/{s}")),
        );
        if let Some(query) = query {
            out.push(format!("?{query}"));
        }
    }
    out
}

/// An entry's components: a domain entry stops at the host.
pub fn entry_components(split: Split, entry: &Entry) -> Vec<String> {
    match entry {
        Entry::Domain { host } => components(split, host, is_ip(host), None),
        Entry::Url {
            host,
            path_and_query,
        } => {
            let (path, query) = match path_and_query.split_once('?') {
                Some((path, query)) => (path, Some(query)),
                None => (path_and_query.as_str(), None),
            };
            components(split, host, is_ip(host), Some((path, query)))
        }
    }
}

/// Whether a canonical host is an IP address (canonical IPv4 is a dotted quad of digits; IPv6
/// literals are bracketed).
fn is_ip(host: &str) -> bool {
    host.starts_with('[')
        || (host.split('.').count() == 4
            && host
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

/// A URL's component sequence with `host` (the URL's host or one of its suffixes) as its host.
pub fn url_components(split: Split, url: &CanonicalUrl, host: &str) -> Vec<String> {
    components(
        split,
        host,
        url.is_ip_host(),
        Some((url.path(), url.query())),
    )
}

/// The verification fingerprint of a component sequence: the chained hash of its components
/// (as [`Cabf`] chains them), folded to 64 bits.
pub fn sequence_fingerprint(components: &[String]) -> u64 {
    let mut hash = KeyHash::of(b"");
    for component in components {
        hash = hash.combine(KeyHash::of(component.as_bytes()));
    }
    super::fingerprint(hash)
}

/// The CaBF engine: the structure and the split its sequences were cut with.
pub struct CabfEngine {
    cabf: Cabf,
    split: Split,
    /// The list has domain entries of a single label: URLs' top labels are probed.
    tops: bool,
}

impl CabfEngine {
    /// Builds the engine for `entries`, sized so that each prefix probe has rate
    /// `1 − (1 − p)^{1/E}` (E probes per URL); returns it with the entries' sequence
    /// fingerprints (for a verification section).
    pub fn build(
        entries: &[Entry],
        per_url_fpp: f64,
        expression_bound: u32,
    ) -> Result<(Self, Vec<u64>)> {
        phishbloom_filter::math::validate_fpp(per_url_fpp)?;
        let split = ENGINE_SPLIT;
        let sequences: Vec<Vec<String>> =
            entries.iter().map(|e| entry_components(split, e)).collect();
        // Size every element like a classic filter at the per-probe rate; CaBF's proportional
        // allocation then gives each filter m_i = (m/n)·n_i. The bits per element come from the
        // classic formula at n = 10^6 (any n: m/n does not depend on it).
        let probe = per_probe_fpp(per_url_fpp, expression_bound);
        let bits_per_element =
            phishbloom_filter::math::optimal_num_bits(1_000_000, probe)? as f64 / 1e6;
        let elements = Cabf::element_count(&sequences, ENGINE_FILTERS) + sequences.len() as u64;
        let bits = (bits_per_element * elements as f64).ceil() as u64;
        let cabf = Cabf::build(
            &sequences,
            ENGINE_FILTERS,
            bits,
            Allocation::Proportional,
            CheckStore::Bloom,
            None,
        )?;
        let fingerprints = sequences.iter().map(|s| sequence_fingerprint(s)).collect();
        let tops = false;
        Ok((CabfEngine { cabf, split, tops }, fingerprints))
    }

    /// The engine from stored parts: the split, the component filters and the check filter.
    pub fn from_parts(split: Split, filters: Vec<BloomFilter>, check: BloomFilter) -> Self {
        CabfEngine {
            cabf: Cabf::from_parts(filters, check),
            split,
            tops: false,
        }
    }

    /// Whether URLs' top labels are probed: set by the list when its set of single-label
    /// domain entries becomes empty or not.
    pub(crate) fn set_tops(&mut self, tops: bool) {
        self.tops = tops;
    }

    /// The split.
    pub fn split(&self) -> Split {
        self.split
    }

    /// The component filters, then the check filter (for saving and describing).
    pub fn filters(&self) -> impl Iterator<Item = &BloomFilter> {
        let (filters, check) = self.cabf.parts();
        filters.iter().chain(check)
    }

    /// Number of component filters (the check filter not counted).
    pub fn component_filters(&self) -> usize {
        self.cabf.parts().0.len()
    }

    /// Total bits of all filters.
    pub fn bits(&self) -> u64 {
        self.cabf.bits()
    }
}

/// The entry text of a component prefix: the host (labels restored to their order) and the path.
fn prefix_expression(split: Split, components: &[String]) -> (String, String) {
    let host_len = components
        .iter()
        .position(|c| c.starts_with('/') || c.starts_with('?'))
        .unwrap_or(components.len());
    let host = match split {
        Split::ReversedHost => components[..host_len]
            .iter()
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("."),
        Split::Slash => components[..host_len].concat(),
    };
    let mut path = String::new();
    for component in &components[host_len..] {
        if component == "/" {
            path.push('/');
        } else if component.starts_with('?') {
            path.push_str(component);
        } else {
            if !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(&component[1..]);
        }
    }
    (host, path)
}

impl Matcher for CabfEngine {
    fn candidates(&self, url: &CanonicalUrl, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        for host in HostSuffixes::of_host_with(url.host(), url.is_ip_host(), self.tops) {
            let sequence = if is_top_label(url.host(), host) {
                // The top label stands for a domain entry only.
                components(self.split, host, false, None)
            } else {
                url_components(self.split, url, host)
            };
            self.cabf.probe(&sequence, &mut scratch.candidates);
            for len in (1..=sequence.len()).filter(|&l| scratch.candidates[l - 1]) {
                let (host, path) = prefix_expression(self.split, &sequence[..len]);
                // A reversed-host prefix that stops inside the host names a parent domain, but
                // the query was for this suffix: only whole-host prefixes are entries.
                if self.split == Split::Slash || url.host().ends_with(&host) {
                    out.push(Candidate {
                        fingerprint: sequence_fingerprint(&sequence[..len]),
                        host,
                        path,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{Resolver, Verification};
    use phishbloom_url::canonicalize;

    fn entry(line: &str) -> Entry {
        Entry::parse(line.as_bytes()).unwrap()
    }

    #[test]
    fn components_mark_hosts_paths_and_queries() {
        assert_eq!(
            entry_components(Split::ReversedHost, &entry("evil.com")),
            ["com", "evil"]
        );
        assert_eq!(
            entry_components(Split::ReversedHost, &entry("evil.com/a/b?x=1")),
            ["com", "evil", "/", "/a", "/b", "?x=1"]
        );
        assert_eq!(
            entry_components(Split::Slash, &entry("evil.com/a/")),
            ["evil.com", "/", "/a"]
        );
        assert_eq!(
            entry_components(Split::ReversedHost, &entry("1.2.3.4/x")),
            ["1.2.3.4", "/", "/x"]
        );
        let url = canonicalize(b"http://www.evil.com/a/b?q").unwrap();
        assert_eq!(
            url_components(Split::ReversedHost, &url, url.host()),
            ["com", "evil", "www", "/", "/a", "/b", "?q"]
        );
    }

    #[test]
    fn engine_has_list_semantics_with_and_without_confirmation() {
        let list: Vec<Entry> = ["evil.com", "sig2fa.wixsite.com/sig2faverify", "x.org/a?q=1"]
            .iter()
            .map(|l| entry(l))
            .collect();
        let (engine, fingerprints) = CabfEngine::build(&list, 0.001, 20).unwrap();
        let table = Verification::new(
            fingerprints.into_iter().map(|f| (f, vec![])).collect(),
            false,
        );
        let verified = Resolver::new(Vec::new(), Some(table), Default::default());
        for resolver in [Resolver::default(), verified] {
            let find = |u: &str| {
                let url = canonicalize(u.as_bytes()).unwrap();
                let mut scratch = Scratch::default();
                let mut found = Vec::new();
                engine.candidates(&url, &mut scratch, &mut found);
                resolver.url_verdict(&url, &mut found, &mut Vec::new()).hit
            };
            assert_eq!(
                find("http://a.b.evil.com/x").map(|h| h.expression),
                Some("evil.com".into())
            );
            assert_eq!(
                find("www.sig2fa.wixsite.com/sig2faverify/z?y").map(|h| h.kind),
                Some("url")
            );
            assert_eq!(
                find("x.org/a?q=1").map(|h| h.expression),
                Some("x.org/a?q=1".into())
            );
            for clean in ["notevil.com", "sig2fa.wixsite.com/other", "x.org/a?q=2"] {
                assert!(find(clean).is_none(), "{clean}");
            }
        }
    }
}
