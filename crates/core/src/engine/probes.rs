//! The probes of one URL: each host suffix and each path prefix hashed once, the two hashes
//! combined per lookup expression, so the cost grows with the URL, not with the number of
//! expressions times its length.

use phishbloom_filter::KeyHash;
use phishbloom_url::{CanonicalUrl, Expression};
use xxhash_rust::xxh3::Xxh3;

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
pub(crate) fn path_prefix_hashes(url: &CanonicalUrl, out: &mut Vec<KeyHash>) {
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
