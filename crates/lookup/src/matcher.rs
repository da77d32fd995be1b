//! URL matchers: is a canonical URL listed, and by which entry? An exact reference matcher and
//! a Bloom-filter matcher with an optional exact verification stage.
//!
//! Both answer with the list semantics of `phishbloom_url`: a URL is listed if one of its lookup
//! expressions (host suffix × path prefix, or a bare host suffix for domain entries) equals an
//! entry's key. [`ExactMatcher`] keeps the keys in a hash set — zero false positives — and is the
//! oracle of tests and experiments. [`BloomMatcher`] keeps them in one Bloom filter, hashing each
//! host suffix and each path prefix once and combining the two hashes per expression, so the cost
//! of a query grows with the URL, not with the number of expressions times its length.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use phishbloom_filter::{AnyFilter, HashStrategy, KeyHash, LayoutKind};
use phishbloom_url::{CanonicalUrl, Entry, Expression, ExpressionKind};
use xxhash_rust::xxh3::Xxh3;

use crate::error::{Error, Result};
use crate::keys::KeyScheme;

/// The number of expressions per URL the Bloom matcher is sized for, unless told otherwise.
///
/// Measured on the dataset's 43,639 URLs (`phishbloom eval` prints the distribution): most URLs
/// have 2–12 expressions; 20 covers the 99th percentile. URLs with more expressions get a
/// proportionally higher false-positive rate, `1 − (1 − f)^E`.
pub const DEFAULT_EXPRESSION_BOUND: u32 = 20;

/// The expression through which a URL matched.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    /// The matched key: a host suffix (domain entry) or host suffix + path prefix (URL entry).
    pub expression: String,
    /// `domain` or `url`.
    pub kind: &'static str,
}

impl Hit {
    /// The hit for an expression.
    pub fn of(expression: Expression<'_>) -> Hit {
        Hit {
            expression: expression.to_key_string(),
            kind: match expression.kind() {
                ExpressionKind::Domain => "domain",
                ExpressionKind::Url => "url",
            },
        }
    }
}

/// Reusable buffers for [`Matcher::find`], one per thread.
#[derive(Default)]
pub struct Scratch {
    key: Vec<u8>,
    suffixes: Vec<KeyHash>,
    paths: Vec<KeyHash>,
    probes: Vec<KeyHash>,
    answers: Vec<bool>,
}

/// Something that decides whether a canonical URL is listed.
pub trait Matcher: Send + Sync {
    /// The expression that lists `url`, if any.
    fn find(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit>;
}

/// The reference matcher: entry keys in a hash set; zero false positives by construction.
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
    fn find(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        url.expressions().find_map(|expression| {
            scratch.key.clear();
            expression.write_key(&mut scratch.key);
            // Canonical keys are ASCII, so always UTF-8.
            let key = std::str::from_utf8(&scratch.key).ok()?;
            self.keys.contains(key).then(|| Hit::of(expression))
        })
    }
}

/// The hash of an expression or entry key `(host, path)`: the xxh3-128 of each part, combined.
pub fn expression_hash(expression: Expression<'_>) -> KeyHash {
    KeyHash::of(expression.host.as_bytes()).combine(KeyHash::of(expression.path.as_bytes()))
}

/// The per-probe rate `f` that gives a URL with `expressions` probes the rate `per_url`:
/// `1 − (1 − f)^E = p`, so `f = 1 − (1 − p)^{1/E}` (≈ p/E for small p).
///
/// Each expression is an independent chance to collide, so a URL's false-positive probability
/// is one minus the chance that all E probes miss.
pub fn per_probe_fpp(per_url: f64, expressions: u32) -> f64 {
    -((-per_url).ln_1p() / f64::from(expressions.max(1))).exp_m1()
}

/// The rate a URL with `expressions` probes sees when each probe has rate `per_probe`.
pub fn per_url_fpp(per_probe: f64, expressions: u32) -> f64 {
    -(f64::from(expressions) * (-per_probe).ln_1p()).exp_m1()
}

/// The verification fingerprint of a key hash: 64 bits mixed from both halves, so that it is
/// independent of the block and bit choices (which use `h1` and `h2` separately). A false
/// verification needs a 64-bit collision with one of n entries: probability n/2^64.
fn fingerprint(hash: KeyHash) -> u64 {
    hash.h1 ^ hash.h2.rotate_left(32)
}

/// Path lengths above which prefix hashes are computed by one streaming pass rather than one
/// hash per prefix: beyond this, re-hashing 64 prefixes would cost more than the streaming state.
const STREAMING_PATH_BYTES: usize = 1024;

/// Hashes of `""` followed by every path prefix of `url`, appended to `out`.
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

/// The Bloom matcher: every entry key in one filter, sized so that a URL with up to
/// `expression_bound` expressions is a false positive with probability at most `per_url_fpp`;
/// optionally a sorted table of 64-bit fingerprints confirms each filter hit.
#[derive(Debug)]
pub struct BloomMatcher {
    filter: AnyFilter,
    fingerprints: Option<Vec<u64>>,
}

impl BloomMatcher {
    /// Builds a blocked filter of `entries` for a per-URL rate `per_url_fpp` at `expression_bound`
    /// expressions per URL; `verify` also keeps the fingerprint table.
    pub fn build(
        entries: &[Entry],
        per_url_fpp: f64,
        expression_bound: u32,
        layout: LayoutKind,
        verify: bool,
    ) -> Result<Self> {
        phishbloom_filter::math::validate_fpp(per_url_fpp)?;
        let probe_fpp = per_probe_fpp(per_url_fpp, expression_bound);
        let count = entries.len().max(1) as u64;
        let mut filter = AnyFilter::new(layout, count, probe_fpp, HashStrategy::Xxh3)?;
        filter.set_key_scheme(KeyScheme::Expressions.code(), expression_bound);
        let hashes: Vec<KeyHash> = entries.iter().map(|e| expression_hash(e.key())).collect();
        for &hash in &hashes {
            filter.insert_hash(hash);
        }
        let fingerprints = verify.then(|| {
            let mut table: Vec<u64> = hashes.iter().map(|&h| fingerprint(h)).collect();
            table.sort_unstable();
            table.dedup();
            table
        });
        Ok(BloomMatcher {
            filter,
            fingerprints,
        })
    }

    /// The filter.
    pub fn filter(&self) -> &AnyFilter {
        &self.filter
    }

    /// The expressions per URL the filter was sized for (E).
    pub fn expression_bound(&self) -> u32 {
        self.filter.key_param().max(1)
    }

    /// The per-URL false-positive rate at E expressions implied by the filter's target.
    pub fn per_url_target(&self) -> Option<f64> {
        self.filter
            .target_fpp()
            .map(|f| per_url_fpp(f, self.expression_bound()))
    }

    /// Whether hits are confirmed against the fingerprint table.
    pub fn verifies(&self) -> bool {
        self.fingerprints.is_some()
    }

    /// Wraps a loaded filter (which must hold URL expressions) and, with `verify`, loads its
    /// fingerprint table from [`verify_path`].
    pub fn from_filter(filter: AnyFilter, path: &Path, verify: bool) -> Result<Self> {
        let scheme = KeyScheme::from_code(filter.key_scheme(), path)?;
        if scheme != KeyScheme::Expressions {
            return Err(Error::VerifyTable {
                path: path.to_path_buf(),
                problem: format!("holds `{}` keys, not URL entries", scheme.name()),
            });
        }
        let fingerprints = if verify {
            Some(read_fingerprints(&verify_path(path), &filter)?)
        } else {
            None
        };
        Ok(BloomMatcher {
            filter,
            fingerprints,
        })
    }

    /// Writes the filter to `path` and, if present, the fingerprint table beside it (a stale
    /// table from an earlier build is removed, so a filter never meets a table not made for it).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.filter.save(path)?;
        let table = verify_path(path);
        match &self.fingerprints {
            Some(fingerprints) => write_fingerprints(&table, fingerprints, &self.filter),
            None => match std::fs::remove_file(&table) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(Error::io(table, "remove stale verification table", e))
                }
                _ => Ok(()),
            },
        }
    }

    fn confirmed(&self, hash: KeyHash) -> bool {
        match &self.fingerprints {
            Some(table) => table.binary_search(&fingerprint(hash)).is_ok(),
            None => true,
        }
    }
}

impl Matcher for BloomMatcher {
    fn find(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        scratch.suffixes.clear();
        scratch
            .suffixes
            .extend(url.host_suffixes().map(|s| KeyHash::of(s.as_bytes())));
        path_prefix_hashes(url, &mut scratch.paths);
        scratch.probes.clear();
        for &host in &scratch.suffixes {
            scratch
                .probes
                .extend(scratch.paths.iter().map(|&path| host.combine(path)));
        }
        scratch.answers.clear();
        self.filter
            .contains_hash_batch(&scratch.probes, &mut scratch.answers);
        let per_host = scratch.paths.len();
        let index = (0..scratch.probes.len())
            .find(|&i| scratch.answers[i] && self.confirmed(scratch.probes[i]))?;
        // Rebuild the matched expression's text only on a hit (rare for clean traffic).
        let host = url.host_suffixes().nth(index / per_host)?;
        let path = match index % per_host {
            0 => "",
            prefix => url.path_prefixes().nth(prefix - 1)?,
        };
        Some(Hit::of(Expression { host, path }))
    }
}

/// The fingerprint table's path for a filter at `path`: `path` + `.verify`.
pub fn verify_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".verify");
    PathBuf::from(name)
}

/// Magic bytes of a fingerprint table (PNG-style, like the filter file's).
const TABLE_MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'V', b'F', b'Y', 0x0a];
/// Version of the table format.
const TABLE_VERSION: u32 = 1;
/// Header bytes: magic, version, reserved, count, filter m, filter items.
const TABLE_HEADER: usize = 40;

fn write_fingerprints(path: &Path, table: &[u64], filter: &AnyFilter) -> Result<()> {
    let mut header = Vec::with_capacity(TABLE_HEADER);
    header.extend_from_slice(&TABLE_MAGIC);
    header.extend_from_slice(&TABLE_VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(table.len() as u64).to_le_bytes());
    header.extend_from_slice(&filter.num_bits().to_le_bytes());
    header.extend_from_slice(&filter.items().to_le_bytes());
    let body: Vec<u8> = table.iter().flat_map(|f| f.to_le_bytes()).collect();
    Ok(phishbloom_filter::format::write_atomic_parts(
        path,
        &[&header, &body],
    )?)
}

fn read_fingerprints(path: &Path, filter: &AnyFilter) -> Result<Vec<u64>> {
    let problem = |problem: &str| Error::VerifyTable {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    };
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            problem("no verification table (the filter was built without --verify)")
        }
        _ => Error::io(path, "read", e),
    })?;
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    if bytes.len() < TABLE_HEADER + 8 || bytes[..8] != TABLE_MAGIC {
        return Err(problem("not a phishbloom verification table"));
    }
    if word(8) as u32 != TABLE_VERSION {
        return Err(problem("unsupported verification table version"));
    }
    let count = word(16);
    if Some(bytes.len() as u64)
        != count
            .checked_mul(8)
            .and_then(|b| b.checked_add((TABLE_HEADER + 8) as u64))
    {
        return Err(problem("truncated or oversized verification table"));
    }
    let body_end = bytes.len() - 8;
    if xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]) != word(body_end) {
        return Err(problem(
            "checksum mismatch: the verification table is corrupted",
        ));
    }
    if word(24) != filter.num_bits() || word(32) != filter.items() {
        return Err(problem("the verification table belongs to another filter"));
    }
    let table: Vec<u64> = (TABLE_HEADER..body_end).step_by(8).map(word).collect();
    if table.windows(2).any(|w| w[0] >= w[1]) {
        return Err(problem("verification table is not sorted"));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_url::canonicalize;

    fn entries(lines: &[&str]) -> Vec<Entry> {
        lines
            .iter()
            .map(|l| Entry::parse(l.as_bytes()).unwrap())
            .collect()
    }

    fn find(matcher: &dyn Matcher, url: &str) -> Option<Hit> {
        matcher.find(
            &canonicalize(url.as_bytes()).unwrap(),
            &mut Scratch::default(),
        )
    }

    #[test]
    fn the_issue_examples_match_in_both_matchers() {
        let list = entries(&["evil.com", "sig2fa.wixsite.com/sig2faverify"]);
        let exact = ExactMatcher::new(&list);
        let bloom = BloomMatcher::build(&list, 1e-6, 20, LayoutKind::Blocked, false).unwrap();
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
    fn per_probe_and_per_url_rates_invert_each_other() {
        let f = per_probe_fpp(0.01, 20);
        assert!((f - 0.01 / 20.0).abs() / f < 0.01, "{f}");
        assert!((per_url_fpp(f, 20) - 0.01).abs() < 1e-12);
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

    #[test]
    fn verification_table_round_trips_and_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bloom");
        let list = entries(&["evil.com", "bad.org/x"]);
        let matcher = BloomMatcher::build(&list, 0.01, 20, LayoutKind::Blocked, true).unwrap();
        matcher.save(&path).unwrap();
        let loaded =
            BloomMatcher::from_filter(AnyFilter::load(&path).unwrap(), &path, true).unwrap();
        assert!(loaded.verifies());
        assert_eq!(loaded.expression_bound(), 20);
        assert!(find(&loaded, "a.evil.com/z").is_some());

        let mut bytes = std::fs::read(verify_path(&path)).unwrap();
        bytes[TABLE_HEADER] ^= 1;
        std::fs::write(verify_path(&path), &bytes).unwrap();
        let error = BloomMatcher::from_filter(AnyFilter::load(&path).unwrap(), &path, true);
        assert!(error.unwrap_err().to_string().contains("checksum"));

        // A rebuild without --verify removes the stale table.
        let plain = BloomMatcher::build(&list, 0.01, 20, LayoutKind::Blocked, false).unwrap();
        plain.save(&path).unwrap();
        assert!(!verify_path(&path).exists());
        let error = BloomMatcher::from_filter(AnyFilter::load(&path).unwrap(), &path, true);
        assert!(error.unwrap_err().to_string().contains("--verify"));
    }
}
