//! CaBF as a phishbloom engine: a URL matcher with the exact matcher's semantics, saved as one
//! checksummed file holding the parallel filters, the check filter and an optional fingerprint
//! table for verification.
//!
//! A query URL is looked up once per host suffix (as the expression matcher does), each time as
//! a component sequence whose longest listed prefix CaBF finds; so domain entries match every
//! subdomain and URL entries every URL below them, under any subdomain.

use std::path::Path;

use phishbloom_filter::{BloomFilter, KeyHash};
use phishbloom_url::{CanonicalUrl, Entry, Expression};

use crate::cabf::{
    entry_components, longest_confirmed, url_components, Allocation, Cabf, CheckStore, Split,
};
use crate::error::{Error, Result};
use crate::matcher::{per_probe_fpp, Hit, Matcher, Scratch};

/// Magic bytes of a CaBF file (PNG-style high-bit first byte).
pub const CABF_MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'C', b'A', b'B', b'F'];
/// Version of the CaBF file format.
const CABF_VERSION: u32 = 1;
/// Parallel filters of the engine (the paper's p = 8).
pub const ENGINE_FILTERS: usize = 8;
/// Split used by the engine; chosen from `phishbloom experiment cabf` (see docs/cabf).
pub const ENGINE_SPLIT: Split = Split::Slash;

/// The CaBF engine.
pub struct CabfMatcher {
    cabf: Cabf,
    split: Split,
    fingerprints: Option<Vec<u64>>,
    entries: u64,
    per_url_fpp: f64,
    expression_bound: u32,
}

/// Fingerprint of a component sequence (for verification).
fn sequence_fingerprint(components: &[String]) -> u64 {
    let mut hash = KeyHash::of(b"");
    for component in components {
        hash = hash.combine(KeyHash::of(component.as_bytes()));
    }
    hash.h1 ^ hash.h2.rotate_left(32)
}

impl CabfMatcher {
    /// Builds the engine for `entries`, sized so that each prefix probe has rate
    /// `1 − (1 − p)^{1/E}` (E probes per URL).
    pub fn build(
        entries: &[Entry],
        per_url_fpp: f64,
        expression_bound: u32,
        verify: bool,
    ) -> Result<Self> {
        phishbloom_filter::math::validate_fpp(per_url_fpp)?;
        let split = ENGINE_SPLIT;
        let sequences: Vec<Vec<String>> =
            entries.iter().map(|e| entry_components(split, e)).collect();
        // Size every element like a classic filter at the per-probe rate; CaBF's proportional
        // allocation then gives each filter m_i = (m/n)·n_i.
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
        let fingerprints = verify.then(|| {
            let mut table: Vec<u64> = sequences.iter().map(|s| sequence_fingerprint(s)).collect();
            table.sort_unstable();
            table.dedup();
            table
        });
        Ok(CabfMatcher {
            cabf,
            split,
            fingerprints,
            entries: entries.len() as u64,
            per_url_fpp,
            expression_bound,
        })
    }

    /// Total bits of the filters.
    pub fn bits(&self) -> u64 {
        use crate::cabf::PrefixFilter;
        self.cabf.bits()
    }

    /// Entries held.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Whether hits are confirmed against the fingerprint table.
    pub fn verifies(&self) -> bool {
        self.fingerprints.is_some()
    }

    /// Writes the engine to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let (filters, check) = self.cabf.parts();
        let mut header = Vec::new();
        header.extend_from_slice(&CABF_MAGIC);
        header.extend_from_slice(&CABF_VERSION.to_le_bytes());
        header.push(match self.split {
            Split::Slash => 0,
            Split::ReversedHost => 1,
        });
        header.push(u8::from(self.fingerprints.is_some()));
        header.extend_from_slice(&[0, 0]);
        header.extend_from_slice(&(filters.len() as u32).to_le_bytes());
        header.extend_from_slice(&self.expression_bound.to_le_bytes());
        header.extend_from_slice(&self.per_url_fpp.to_le_bytes());
        header.extend_from_slice(&self.entries.to_le_bytes());
        let mut body = Vec::new();
        for filter in filters.iter().chain(check) {
            let image = filter.to_bytes();
            body.extend_from_slice(&(image.len() as u64).to_le_bytes());
            body.extend_from_slice(&image);
        }
        let table = self.fingerprints.as_deref().unwrap_or(&[]);
        body.extend_from_slice(&(table.len() as u64).to_le_bytes());
        body.extend(table.iter().flat_map(|f| f.to_le_bytes()));
        Ok(phishbloom_filter::format::write_atomic_parts(
            path,
            &[&header, &body],
        )?)
    }

    /// Whether the file at `path` is a CaBF engine file (by its magic bytes).
    pub fn is_cabf_file(path: &Path) -> bool {
        let mut magic = [0u8; 8];
        std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
            .is_ok()
            && magic == CABF_MAGIC
    }

    /// Reads and checks an engine file; with `verify`, it must hold a fingerprint table.
    pub fn load(path: &Path, verify: bool) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, "read", e))?;
        let bad = |problem: &str| Error::VerifyTable {
            path: path.to_path_buf(),
            problem: problem.to_string(),
        };
        if bytes.len() < 48 || bytes[..8] != CABF_MAGIC {
            return Err(bad("not a phishbloom CaBF file (truncated or wrong magic)"));
        }
        let body_end = bytes.len() - 8;
        let stored =
            u64::from_le_bytes(bytes[body_end..].try_into().map_err(|_| bad("truncated"))?);
        if xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]) != stored {
            return Err(bad("checksum mismatch: the CaBF file is corrupted"));
        }
        let mut reader = Reader {
            bytes: &bytes[..body_end],
            at: 8,
        };
        if reader.u32()? != CABF_VERSION {
            return Err(bad("unsupported CaBF file version"));
        }
        let split = match reader.u8()? {
            0 => Split::Slash,
            1 => Split::ReversedHost,
            _ => return Err(bad("unknown split code")),
        };
        let has_table = reader.u8()? == 1;
        reader.take(2)?;
        let count = reader.u32()? as usize;
        if count == 0 || count > 64 {
            return Err(bad("invalid filter count"));
        }
        let expression_bound = reader.u32()?;
        let per_url_fpp =
            f64::from_le_bytes(reader.take(8)?.try_into().map_err(|_| bad("truncated"))?);
        let entries = reader.u64()?;
        let mut filters = Vec::with_capacity(count + 1);
        for _ in 0..=count {
            let len = reader.u64()? as usize;
            filters.push(BloomFilter::from_bytes(path, reader.take(len)?)?);
        }
        let check = filters.pop().ok_or_else(|| bad("missing check filter"))?;
        let table_len = reader.u64()? as usize;
        let table: Vec<u64> = reader
            .take(
                table_len
                    .checked_mul(8)
                    .ok_or_else(|| bad("table too large"))?,
            )?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if verify && !has_table {
            return Err(bad(
                "no fingerprint table (the engine was built without --verify)",
            ));
        }
        Ok(CabfMatcher {
            cabf: Cabf::from_parts(filters, check),
            split,
            fingerprints: verify.then_some(table),
            entries,
            per_url_fpp,
            expression_bound,
        })
    }
}

/// Bounds-checked little-endian reading of a byte image.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| Error::VerifyTable {
                path: "<cabf>".into(),
                problem: "truncated CaBF file".into(),
            })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        let mut w = [0u8; 4];
        w.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(w))
    }
    fn u64(&mut self) -> Result<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
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

impl Matcher for CabfMatcher {
    fn find(&self, url: &CanonicalUrl, _scratch: &mut Scratch) -> Option<Hit> {
        let mut candidates = Vec::new();
        for host in url.host_suffixes() {
            let sequence = url_components(self.split, url, host);
            let len = longest_confirmed(&self.cabf, &sequence, &mut candidates, |len| match &self
                .fingerprints
            {
                Some(table) => table
                    .binary_search(&sequence_fingerprint(&sequence[..len]))
                    .is_ok(),
                None => true,
            });
            if len > 0 {
                let (host, path) = prefix_expression(self.split, &sequence[..len]);
                let hit = Hit::of(Expression {
                    host: &host,
                    path: &path,
                });
                // A reversed-host prefix that stops inside the host names a parent domain, but the
                // query was for this suffix: only whole-host prefixes are entries.
                if self.split == Split::Slash || url.host().ends_with(&host) {
                    return Some(hit);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_url::canonicalize;

    #[test]
    fn engine_has_list_semantics_and_round_trips() {
        let list: Vec<Entry> = ["evil.com", "sig2fa.wixsite.com/sig2faverify", "x.org/a?q=1"]
            .iter()
            .map(|l| Entry::parse(l.as_bytes()).unwrap())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.cabf");
        CabfMatcher::build(&list, 0.001, 20, true)
            .unwrap()
            .save(&path)
            .unwrap();
        assert!(CabfMatcher::is_cabf_file(&path));
        let engine = CabfMatcher::load(&path, true).unwrap();
        let mut scratch = Scratch::default();
        let find = |u: &str| {
            engine.find(
                &canonicalize(u.as_bytes()).unwrap(),
                &mut Scratch::default(),
            )
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
            assert!(
                engine
                    .find(&canonicalize(clean.as_bytes()).unwrap(), &mut scratch)
                    .is_none(),
                "{clean}"
            );
        }
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[60] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(CabfMatcher::load(&path, false).is_err());
    }
}
