//! Safe Browsing v4's own encoding of a list, as the peer of a compact list: one list per
//! category (v4 has one per threat type), each the sorted distinct 4-byte prefixes of the
//! SHA-256 of its entries' expressions, sent Rice-coded as the v4 API sends additions
//! (`ThreatEntrySet.rice_hashes`: the first value, the Rice parameter, the count and the coded
//! gaps); a client binary-searches a sorted `u32` array per list for each expression of a URL.
//! A prefix hit is not a verdict: the v4 client confirms it online with the full hashes.

use phishbloom_core::EntrySet;
use phishbloom_filter::golomb;
use phishbloom_url::{CanonicalUrl, Expression};
use sha2::{Digest, Sha256};

use super::urls::v4_skips;

/// The 4-byte SHA-256 prefix lists of a list, one per category.
#[derive(Clone, Debug)]
pub struct PrefixLists {
    /// Per category id: its entries' prefixes, sorted and distinct.
    lists: Vec<Vec<u32>>,
    /// Distinct prefixes across the lists (what a stranger's probe can hit).
    distinct: u64,
}

/// The string v4 hashes for an expression: `host/` for a host alone, `host/path` otherwise
/// (the Safe Browsing "URLs and hashing" suffix/prefix expressions).
fn expression_text(expression: Expression<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(expression.host.as_bytes());
    if expression.path.is_empty() {
        out.push(b'/');
    } else {
        out.extend_from_slice(expression.path.as_bytes());
    }
}

/// The 4-byte prefix of a SHA-256 digest, read big-endian so that integer order is the byte
/// order v4 sorts raw prefixes in.
fn prefix(text: &[u8]) -> u32 {
    let digest = Sha256::digest(text);
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// Bytes of a protobuf varint holding `value`.
fn varint_len(value: u64) -> u64 {
    u64::from((64 - value.leading_zeros()).max(1)).div_ceil(7)
}

/// Bytes of one length-delimited protobuf field of `len` bytes: tag, length, body.
fn field_len(len: u64) -> u64 {
    1 + varint_len(len) + len
}

/// Bytes of the `ThreatEntrySet` v4 sends for these sorted distinct prefixes: compression type
/// RICE and `rice_hashes` (`first_value`, `rice_parameter`, `num_entries`, `encoded_data`: the
/// gaps after the first value, Rice-coded with the parameter that codes them in the fewest
/// bits). The list update's other fields (client state, checksum, list names) are not counted.
pub fn rice_message_bytes(prefixes: &[u32]) -> u64 {
    let Some((&first, rest)) = prefixes.split_first() else {
        return 0;
    };
    // The values after the first, from it: their gaps are what the coder writes.
    let offsets: Vec<u64> = rest.iter().map(|&p| u64::from(p - first)).collect();
    let r = golomb::best_parameter(&offsets, 1u128 << 32);
    let data = golomb::encode(&offsets, r).len() as u64;
    let rice = (1 + varint_len(u64::from(first)))
        + (1 + varint_len(u64::from(r)))
        + (1 + varint_len(offsets.len() as u64))
        + field_len(data);
    // compression_type (tag and enum value), then the rice_hashes message.
    2 + field_len(rice)
}

impl PrefixLists {
    /// The prefix lists of `set`'s entries, one per category.
    pub fn of_entries(set: &EntrySet) -> Self {
        let mut lists = vec![Vec::new(); set.categories.len()];
        let mut text = Vec::new();
        for (entry, ids) in set.entries.iter().zip(&set.membership) {
            expression_text(entry.key(), &mut text);
            let p = prefix(&text);
            for &id in ids.iter() {
                lists[usize::from(id)].push(p);
            }
        }
        for list in &mut lists {
            list.sort_unstable();
            list.dedup();
        }
        let mut all: Vec<u32> = lists.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        PrefixLists {
            lists,
            distinct: all.len() as u64,
        }
    }

    /// Distinct prefixes across the lists.
    pub fn distinct(&self) -> u64 {
        self.distinct
    }

    /// Prefixes summed over the lists (a URL in two categories counts twice): what a client
    /// holds as `u32` arrays.
    pub fn stored(&self) -> u64 {
        self.lists.iter().map(|l| l.len() as u64).sum()
    }

    /// Bytes of the lists as v4 sends them whole: one Rice-coded message per category.
    pub fn wire_bytes(&self) -> u64 {
        self.lists.iter().map(|l| rice_message_bytes(l)).sum()
    }

    /// Bytes of the update from `self` to `after` (same categories): per category, the
    /// prefixes `after` holds that `self` does not, Rice-coded (no removals: `after` only adds).
    pub fn additions_bytes(&self, after: &PrefixLists) -> u64 {
        self.lists
            .iter()
            .zip(&after.lists)
            .map(|(before, after)| {
                let new: Vec<u32> = after
                    .iter()
                    .copied()
                    .filter(|p| before.binary_search(p).is_err())
                    .collect();
                rice_message_bytes(&new)
            })
            .sum()
    }

    /// Whether some expression of `url` has its prefix in some list (a local hit, which a v4
    /// client confirms online); `text` is a reused buffer. Each string is hashed once: the
    /// path `/` of a host suffix is the host's own string.
    pub fn hits(&self, url: &CanonicalUrl, text: &mut Vec<u8>) -> bool {
        let mut expressions = url.expressions().filter(|e| !v4_skips(url.host(), e));
        expressions.any(|expression| {
            expression_text(expression, text);
            let p = prefix(text);
            self.lists.iter().any(|list| list.binary_search(&p).is_ok())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::Membership;
    use phishbloom_url::{canonicalize, Entry};

    #[test]
    fn varints_and_fields_have_their_protobuf_lengths() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u64::from(u32::MAX)), 5);
        assert_eq!(field_len(300), 1 + 2 + 300);
    }

    #[test]
    fn uniform_prefixes_cost_about_the_golomb_rice_formula() {
        let mut rng = phishbloom_filter::rng::SplitMix64::new(8);
        let mut prefixes: Vec<u32> = (0..10_000).map(|_| rng.next_u64() as u32).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        let bits = rice_message_bytes(&prefixes) as f64 * 8.0 / prefixes.len() as f64;
        // log₂(2³² / 10⁴) + 1.5 ≈ 20.2 bits; Rice codes a geometric source within 0.1 bit of
        // it, and the message's own fields are a few bytes.
        let formula = (2f64.powi(32) / 1e4).log2() + 1.5;
        assert!((bits - formula).abs() < 0.2, "{bits} vs {formula}");
        assert_eq!(rice_message_bytes(&[]), 0);
    }

    #[test]
    fn entries_hit_by_category_and_additions_are_only_the_new_prefixes() {
        let entries: Vec<Entry> = ["evil.com", "bad.org/login", "both.net"]
            .iter()
            .map(|e| Entry::parse(e.as_bytes()).unwrap())
            .collect();
        let set = EntrySet {
            entries,
            categories: vec!["phishing".into(), "malware".into()],
            membership: vec![
                Membership::from_slice(&[0]),
                Membership::from_slice(&[1]),
                Membership::from_slice(&[0, 1]),
            ],
            exceptions: Vec::new(),
        };
        let lists = PrefixLists::of_entries(&set);
        assert_eq!((lists.stored(), lists.distinct()), (4, 3));
        let mut text = Vec::new();
        for url in [
            "http://a.evil.com/x",
            "bad.org/login?x=1",
            "https://both.net/",
        ] {
            assert!(lists.hits(&canonicalize(url.as_bytes()).unwrap(), &mut text));
        }
        assert!(!lists.hits(&canonicalize(b"bad.org/other").unwrap(), &mut text));
        let before = PrefixLists::of_entries(&EntrySet {
            entries: set.entries[..2].to_vec(),
            membership: set.membership[..2].to_vec(),
            ..set.clone()
        });
        // One new prefix in each of the two lists.
        assert_eq!(
            before.additions_bytes(&lists),
            2 * rice_message_bytes(&[prefix(b"both.net/")])
        );
        assert_eq!(lists.additions_bytes(&lists), 0);
    }
}
