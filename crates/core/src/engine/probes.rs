//! The probes of one URL: each host suffix and each path prefix hashed once, the two hashes
//! combined per lookup expression, so the cost grows with the URL, not with the number of
//! expressions times its length.

use phishbloom_filter::KeyHash;
use phishbloom_url::{is_top_label, CanonicalUrl, Expression, HostSuffixes};

use super::gate::{HostGate, Kept, Pass};
use crate::keys::fingerprint;
use crate::resolve::Spot;
use xxhash_rust::xxh3::Xxh3;

/// Path lengths above which prefix hashes are computed by one streaming pass rather than one
/// hash per prefix: beyond this, re-hashing 64 prefixes would cost more than the streaming state.
const STREAMING_PATH_BYTES: usize = 1024;

/// The probes of one URL: the combined hash of (host suffix, path prefix) pairs, host suffixes
/// in [`CanonicalUrl::host_suffixes`] order, each with `""` (the domain key) first and then every
/// [`CanonicalUrl::path_prefixes`] item — all of them, or as a list's host gate lets through
/// ([`UrlProbes::compute_gated`]). A store of the filter elsewhere (Redis) computes them here and
/// probes its own bits. Where each part lies in the URL is kept beside its hash, so that a hit
/// names its expression ([`UrlProbes::spot`]) without walking the URL again, and nothing is
/// allocated once the buffers have grown.
#[derive(Clone, Debug, Default)]
pub struct UrlProbes {
    /// Each host suffix kept: its start in the host, its hash, and what the gate let through
    /// (never [`Pass::Nothing`]): only its domain key, every path prefix, or each path prefix
    /// whose length the gate holds for it.
    kept: Vec<Kept>,
    /// Length of each path prefix in the path and query (`0` first: the domain key).
    path_lens: Vec<u32>,
    paths: Vec<KeyHash>,
    probes: Vec<KeyHash>,
    /// The (suffix, path prefix) indices of each probe.
    pairs: Vec<(u16, u16)>,
    /// A host whose suffixes were hashed and passed through the gate before its URL was
    /// canonicalized ([`UrlProbes::gate_host`]), kept for the next walk
    /// ([`UrlProbes::first_in_order`], [`UrlProbes::compute_gated`]) of a URL with this host
    /// through the same gate (empty: none).
    gated_host: Vec<u8>,
    /// The address of the gate that answered for `gated_host`: answers are reused only for the
    /// gate that gave them (a scratch may serve several lists).
    gated_by: usize,
    /// The start in `gated_host`, hash and gate answer of each of its suffixes the gate let
    /// through, in [`CanonicalUrl::host_suffixes`] order.
    gated: Vec<Kept>,
}

impl UrlProbes {
    /// Computes the probes of `url` (replacing the previous ones): every expression.
    pub fn compute(&mut self, url: &CanonicalUrl) {
        self.compute_gated(url, None, (false, true));
    }

    /// Hashes each suffix of `host` — a URL's canonical host, known before its URL is
    /// canonicalized ([`phishbloom_url::written_host`]; never an IP address; its top label only
    /// with `tops`) — and asks `gate` about it; returns whether the gate lets none through (the
    /// URL has no candidate). The
    /// answers are kept for the next walk ([`UrlProbes::first_in_order`],
    /// [`UrlProbes::compute_gated`]) of a URL with this host, which then neither hashes nor asks
    /// again.
    // Inlined into the line loop, which calls it once a line: as a call, saving and restoring
    // its registers cost more than a suffix's probe.
    #[inline(always)]
    pub fn gate_host(&mut self, host: &str, gate: &HostGate, tops: bool) -> bool {
        // Only the suffixes let through are kept: the walk probes nothing of the others.
        self.gated.clear();
        let gated = &mut self.gated;
        gate.each_passing(host, false, tops, |kept| gated.push(kept));
        let nothing = self.gated.is_empty();
        // Kept only for a URL that is probed next; a URL ruled out is not.
        self.gated_host.clear();
        if !nothing {
            self.gated_host.extend_from_slice(host.as_bytes());
            self.gated_by = gate_address(gate);
        }
        nothing
    }

    /// Computes the probes of `url` (replacing the previous ones) as `gate` lets each host
    /// suffix through ([`HostGate::pass`]; every expression without a gate): a suffix that is
    /// no entry's host has no probe, one that is only a domain entry's host its domain probe,
    /// and only the others their path prefixes hashed and probed. `(no_paths, tops)` are as
    /// [`UrlProbes::first_in_order`] takes them. [`UrlProbes::spot`] names the probes kept.
    pub fn compute_gated(
        &mut self,
        url: &CanonicalUrl,
        gate: Option<&HostGate>,
        (no_paths, tops): (bool, bool),
    ) {
        self.path_lens.clear();
        self.paths.clear();
        self.probes.clear();
        self.pairs.clear();
        let any_paths = self.gate_suffixes(url, gate, no_paths, tops);
        // Every path prefix is a prefix of the path and query: their lengths name them.
        self.path_lens.push(0);
        self.paths.push(EMPTY_HASH);
        let base = url.path_and_query().as_bytes();
        // Bit `j`: `paths[j]` holds the hash of prefix `j` (`0`: the domain key's, `""`; at most
        // 1 + MAX_PATH_PREFIXES = 65 of them, `phishbloom_url`'s expression rules).
        let mut hashed = 1u128;
        if any_paths {
            for prefix in url.path_prefixes() {
                self.path_lens.push(prefix.len() as u32);
            }
            if base.len() <= STREAMING_PATH_BYTES {
                // Hashed when first needed, below: a prefix whose length the gate holds for no
                // suffix is not hashed at all.
                self.paths.resize(self.path_lens.len(), EMPTY_HASH);
            } else {
                streamed_prefix_hashes(base, &self.path_lens[1..], &mut self.paths);
                hashed = u128::MAX;
            }
        }
        for (
            i,
            &Kept {
                hash: host, pass, ..
            },
        ) in self.kept.iter().enumerate()
        {
            let count = if pass == Pass::Domain {
                1
            } else {
                self.path_lens.len()
            };
            let by_length = gate.filter(|_| pass == Pass::ByLength);
            for j in 0..count {
                let len = self.path_lens[j];
                if j > 0 && by_length.is_some_and(|gate| !gate.passes_path(host, len)) {
                    continue;
                }
                if hashed & (1 << j) == 0 {
                    hashed |= 1 << j;
                    self.paths[j] = KeyHash::of(&base[..len as usize]);
                }
                self.probes.push(host.combine(self.paths[j]));
                // At most 5 host suffixes and 1 + 64 path prefixes (`phishbloom_url`'s
                // expression rules): far below 2^16.
                self.pairs.push((i as u16, j as u16));
            }
        }
    }

    /// Keeps the host suffixes of `url` that `gate` lets through (all without a gate; with
    /// `no_paths`, a list none of whose entries has a path, their domain expressions alone;
    /// the top label only with `tops`) with their hashes, answered as
    /// [`UrlProbes::gate_host`] answered before if it did for this host and gate; returns
    /// whether any has its path prefixes probed.
    fn gate_suffixes(
        &mut self,
        url: &CanonicalUrl,
        gate: Option<&HostGate>,
        no_paths: bool,
        tops: bool,
    ) -> bool {
        // The gate's answers for this host, if they were asked before canonicalizing (used
        // once: the next URL asks again), are taken as they are.
        let known = gate.is_some_and(|gate| gate_address(gate) == self.gated_by)
            && !self.gated_host.is_empty()
            && self.gated_host == url.host().as_bytes();
        self.gated_host.clear();
        if known {
            // Only suffixes let through were kept.
            std::mem::swap(&mut self.kept, &mut self.gated);
        } else {
            self.kept.clear();
            let (host, kept) = (url.host(), &mut self.kept);
            match gate {
                Some(gate) => gate.each_passing(host, url.is_ip_host(), tops, |k| kept.push(k)),
                None => kept.extend(suffixes(url, tops).map(|suffix| {
                    let hash = KeyHash::of(suffix.as_bytes());
                    Kept {
                        // Hosts are at most a line long, far below 4 GiB (lines are capped).
                        start: (host.len() - suffix.len()) as u32,
                        hash,
                        // The top label stands for a domain entry only.
                        pass: if no_paths || (tops && is_top_label(host, suffix)) {
                            Pass::Domain
                        } else {
                            Pass::All
                        },
                    }
                })),
            }
        }
        self.kept
            .iter()
            .any(|kept| matches!(kept.pass, Pass::All | Pass::ByLength))
    }

    /// Walks the expressions of `url` in order of specificity — the longest host suffix first
    /// and, within one, the longest path prefix first, its domain expression last — as `gate`
    /// lets each suffix through (every expression without a gate), hashing a path prefix only
    /// when it is first needed. Each expression that `probe` says the structure holds is
    /// offered to `accept` as a [`Spot`]; the walk stops at the first accepted, which is
    /// returned with what `accept` gave. This is the order of the decision rule
    /// ([`crate::resolve::Resolver::decide_in_order`]), so a URL's listed entry is found
    /// without hashing or probing the expressions less specific than it. The probes of
    /// [`UrlProbes::compute_gated`] are cleared. `no_paths`: no entry of the list has a path
    /// (domain expressions alone); `tops`: the list has domain entries of a single label (the
    /// top label is probed).
    pub fn first_in_order<T>(
        &mut self,
        url: &CanonicalUrl,
        gate: Option<&HostGate>,
        (no_paths, tops): (bool, bool),
        mut probe: impl FnMut(KeyHash) -> bool,
        mut accept: impl FnMut(Spot) -> Option<T>,
    ) -> Option<(Spot, T)> {
        self.path_lens.clear();
        self.paths.clear();
        self.probes.clear();
        self.pairs.clear();
        let base = url.path_and_query().as_bytes();
        // Bit `j`: `paths[j]` holds the hash of prefix `j` (at most MAX_PATH_PREFIXES = 64
        // prefixes, `phishbloom_url`'s expression rules: bits 0..=63).
        let mut hashed = 0u64;
        if self.gate_suffixes(url, gate, no_paths, tops) {
            url.path_prefix_lengths(&mut self.path_lens);
            if base.len() > STREAMING_PATH_BYTES {
                streamed_prefix_hashes(base, &self.path_lens, &mut self.paths);
                hashed = u64::MAX;
            } else {
                // Hashed when first needed, below.
                self.paths.resize(self.path_lens.len(), EMPTY_HASH);
            }
        }
        // The domain expression: the shortest path, last.
        let domain = self.path_lens.len();
        self.path_lens.push(0);
        for i in (0..self.kept.len()).rev() {
            let Kept {
                start,
                hash: host,
                pass,
            } = self.kept[i];
            let first = if pass == Pass::Domain { domain } else { 0 };
            let by_length = gate.filter(|_| pass == Pass::ByLength);
            for j in first..=domain {
                let len = self.path_lens[j];
                let path = if j == domain {
                    EMPTY_HASH
                } else {
                    // No entry of this host has a path of this length: not hashed.
                    if by_length.is_some_and(|gate| !gate.passes_path(host, len)) {
                        continue;
                    }
                    // Each prefix is hashed once for every suffix, when first needed.
                    if hashed & (1 << j) == 0 {
                        hashed |= 1 << j;
                        self.paths[j] = KeyHash::of(&base[..len as usize]);
                    }
                    self.paths[j]
                };
                let hash = host.combine(path);
                if !probe(hash) {
                    continue;
                }
                let spot = Spot {
                    fingerprint: fingerprint(hash),
                    host_start: start,
                    path_len: len,
                };
                if let Some(taken) = accept(spot) {
                    return Some((spot, taken));
                }
            }
        }
        None
    }

    /// The probe hashes, in the order above.
    pub fn hashes(&self) -> &[KeyHash] {
        &self.probes
    }

    /// Where the expression of probe `index` lies in the URL, with `fingerprint`.
    pub fn spot(&self, index: usize, fingerprint: u64) -> Option<Spot> {
        let &(suffix, path) = self.pairs.get(index)?;
        Some(Spot {
            fingerprint,
            host_start: self.kept.get(suffix as usize)?.start,
            path_len: *self.path_lens.get(path as usize)?,
        })
    }

    /// The expression probe `index` stands for (`url` is the URL computed last).
    pub fn expression<'u>(&self, url: &'u CanonicalUrl, index: usize) -> Option<Expression<'u>> {
        Some(self.spot(index, 0)?.expression(url))
    }
}

/// The host suffixes of `url`, the top label only with `tops`.
#[inline(always)]
fn suffixes(url: &CanonicalUrl, tops: bool) -> HostSuffixes<'_> {
    HostSuffixes::of_host_with(url.host(), url.is_ip_host(), tops)
}

/// The address of `gate`, which names it while it lives (compared, never dereferenced).
fn gate_address(gate: &HostGate) -> usize {
    std::ptr::from_ref(gate) as usize
}

/// The xxh3-128 of `""`: the path part of every domain expression.
const EMPTY_HASH: KeyHash = KeyHash {
    h1: 0x6001_c324_468d_497f,
    h2: 0x99aa_06d3_0147_98d8,
};

/// Hashes of `""` followed by every path prefix of `url`, into `out`.
#[cfg(test)]
pub(crate) fn path_prefix_hashes(url: &CanonicalUrl, out: &mut Vec<KeyHash>) {
    out.clear();
    out.push(EMPTY_HASH);
    let base = url.path_and_query();
    if base.len() <= STREAMING_PATH_BYTES {
        out.extend(url.path_prefixes().map(|p| KeyHash::of(p.as_bytes())));
        return;
    }
    let lengths: Vec<u32> = url.path_prefixes().map(|p| p.len() as u32).collect();
    streamed_prefix_hashes(base.as_bytes(), &lengths, out);
}

/// Appends the hashes of the prefixes of `base` of these `lengths` (in their order) to `out`:
/// `base` is hashed once, the digest read at each length (for long paths, where re-hashing up
/// to 64 prefixes would cost more than the streaming state).
fn streamed_prefix_hashes(base: &[u8], lengths: &[u32], out: &mut Vec<KeyHash>) {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let start = out.len();
    out.resize(start + lengths.len(), EMPTY_HASH);
    let mut hasher = Xxh3::new();
    let mut fed = 0;
    for i in order {
        let len = lengths[i] as usize;
        hasher.update(&base[fed..len]);
        fed = len;
        out[start + i] = KeyHash::from_u128(hasher.digest128());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate's answers asked before canonicalizing serve the URL probed next through the
    /// same gate, and never another gate's URL: a scratch may serve several lists.
    #[test]
    fn answers_asked_early_serve_only_their_gate() {
        let url = phishbloom_url::canonicalize(b"http://www.evil.com/a/b?x").unwrap();
        let host = url.host();
        let domain_only = HostGate::of_entries([("evil.com", 0)], 10).unwrap();
        let with_path = HostGate::of_entries([("evil.com", 2)], 10).unwrap();
        let elsewhere = HostGate::of_entries([("other.org", 2)], 10).unwrap();
        let fresh = |gate: &HostGate| {
            let mut probes = UrlProbes::default();
            probes.compute_gated(&url, Some(gate), (false, true));
            probes.hashes().to_vec()
        };
        assert!(fresh(&with_path).len() > fresh(&domain_only).len());
        let mut probes = UrlProbes::default();
        // Asked early, then probed through the same gate: the same probes as asking late.
        for gate in [&domain_only, &with_path] {
            assert!(!probes.gate_host(host, gate, true));
            probes.compute_gated(&url, Some(gate), (false, true));
            assert_eq!(probes.hashes(), fresh(gate));
        }
        // Asked of one gate, probed through another: the other gate's own answers.
        assert!(!probes.gate_host(host, &domain_only, true));
        probes.compute_gated(&url, Some(&with_path), (false, true));
        assert_eq!(probes.hashes(), fresh(&with_path));
        // Ruled out by one gate, probed through another: nothing kept from the first.
        assert!(probes.gate_host(host, &elsewhere, true));
        probes.compute_gated(&url, Some(&with_path), (false, true));
        assert_eq!(probes.hashes(), fresh(&with_path));
        // Without a gate, every expression.
        assert!(!probes.gate_host(host, &domain_only, true));
        probes.compute_gated(&url, None, (false, true));
        assert_eq!(probes.hashes().len(), url.expression_count());
    }

    #[test]
    fn the_empty_hash_is_xxh3_of_nothing() {
        assert_eq!(EMPTY_HASH, KeyHash::of(b""));
    }
}
