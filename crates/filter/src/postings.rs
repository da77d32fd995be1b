//! Posting tables: from a key to the numbers of the documents filed under it, in about five
//! bytes a document and one bucket read a lookup.
//!
//! The keys are not kept whole. A key is known by its *prefix*, its top 32 bits; the table
//! files a document under the prefix's top `bucket_bits` bits (its bucket) and keeps the next
//! `fragment_bits` bits (at most 8) beside the document's number in one `u32` — the number in
//! the low 24 bits, the fragment in the high 8. A bucket's entries are sorted, fragment first,
//! so a lookup reads the entries of its key's bucket with its key's fragment only: every
//! document filed under the key, and those of other keys that share its bucket and fragment
//! (the caller tells them apart by what it knows of each document). Layout: the entries of all
//! buckets in one array, bucket by bucket, with the start of each bucket in a second array, as
//! a CSR matrix keeps its rows: 4 bytes a key and at most 1 of bucket starts.
//!
//! The fragment is what lets a table grow: a table rebuilt with more documents takes bucket
//! bits from the fragment (`bucket_bits + fragment_bits` bits of each prefix are known), so a
//! list that started small keeps short buckets as it grows by up to 2⁸ times, and stays
//! correct, its buckets longer, beyond.

use crate::error::{Error, Result};

/// Keys per bucket a table is built for, at least: 4 to 8 keep a bucket within a cache line
/// and cost at most one byte a key of bucket starts. Buckets are a power of two, rounded down.
pub const KEYS_PER_BUCKET: u64 = 4;

/// The fewest bucket bits a table is built with (1,024 buckets, 4 KiB of starts): a list that
/// starts with a handful of documents can grow to millions with short buckets.
pub const MIN_BUCKET_BITS: u32 = 10;

/// The most bucket bits (2²⁴ buckets of starts are 64 MiB, for 2²⁴ documents).
pub const MAX_BUCKET_BITS: u32 = 24;

/// Bits of a prefix kept beside each number.
pub const FRAGMENT_BITS: u32 = 8;

/// The fewest bits of each prefix a table built by these rules knows: its bucket bits (at
/// least [`MIN_BUCKET_BITS`]) and its fragment bits (the rest of what its documents' records
/// knew, up to [`FRAGMENT_BITS`]). A record claiming fewer comes from no such table.
pub const MIN_KNOWN_BITS: u32 = MIN_BUCKET_BITS + FRAGMENT_BITS;

/// Document numbers are below this: they take the low 24 bits of an entry.
pub const NUMBERS: u32 = 1 << 24;

/// The bucket bits for `keys` keys: keys / [`KEYS_PER_BUCKET`] buckets rounded down to a power
/// of two, within [`MIN_BUCKET_BITS`] … [`MAX_BUCKET_BITS`].
pub fn bucket_bits_for(keys: u64) -> u32 {
    let buckets = (keys / KEYS_PER_BUCKET).max(1);
    (63 - buckets.leading_zeros()).clamp(MIN_BUCKET_BITS, MAX_BUCKET_BITS)
}

/// The top `bits` bits of a prefix (0 for none, the whole prefix from 32 on).
#[inline]
pub fn top_bits(prefix: u32, bits: u32) -> u32 {
    prefix.checked_shr(32u32.saturating_sub(bits)).unwrap_or(0)
}

/// The `fragment_bits` bits of a prefix after its top `bucket_bits`.
#[inline]
pub fn fragment_of(prefix: u32, bucket_bits: u32, fragment_bits: u32) -> u32 {
    let below = prefix.checked_shl(bucket_bits).unwrap_or(0);
    top_bits(below, fragment_bits)
}

/// Document numbers by key prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Postings {
    bucket_bits: u32,
    fragment_bits: u32,
    /// Where each bucket starts in `entries`, and where the last ends (buckets + 1 values).
    starts: Vec<u32>,
    /// `fragment << 24 | number`, bucket by bucket, each bucket's ascending.
    entries: Vec<u32>,
}

impl Postings {
    /// The table of `(prefix, number)` pairs, at `bucket_bits` bucket bits and
    /// `fragment_bits` fragment bits (their sum at most the bits of every prefix known).
    pub fn build(bucket_bits: u32, fragment_bits: u32, pairs: &[(u32, u32)]) -> Result<Self> {
        if bucket_bits > MAX_BUCKET_BITS || fragment_bits > FRAGMENT_BITS {
            return Err(Error::invalid(
                "posting table shape",
                format!("{bucket_bits} bucket bits and {fragment_bits} fragment bits"),
                format!("use at most {MAX_BUCKET_BITS} and {FRAGMENT_BITS}"),
            ));
        }
        if let Some(&(_, number)) = pairs.iter().find(|&&(_, n)| n >= NUMBERS) {
            return Err(Error::invalid(
                "document number",
                number,
                "a posting table numbers fewer than 2^24 documents; split the list",
            ));
        }
        let mut keyed: Vec<(u32, u32)> = pairs
            .iter()
            .map(|&(prefix, number)| {
                let fragment = fragment_of(prefix, bucket_bits, fragment_bits);
                (top_bits(prefix, bucket_bits), fragment << 24 | number)
            })
            .collect();
        keyed.sort_unstable();
        let buckets = 1usize << bucket_bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut at = 0usize;
        for bucket in 0..buckets as u32 {
            starts.push(at as u32);
            while at < keyed.len() && keyed[at].0 == bucket {
                at += 1;
            }
        }
        starts.push(at as u32);
        Ok(Postings {
            bucket_bits,
            fragment_bits,
            starts,
            entries: keyed.into_iter().map(|(_, entry)| entry).collect(),
        })
    }

    /// The table read back from its parts, checked: `starts` has 2^`bucket_bits` + 1 values
    /// running up from 0 to the length of `entries`, each bucket's entries ascending, every
    /// fragment within `fragment_bits` and every number below `documents` and there once.
    pub fn from_parts(
        bucket_bits: u32,
        fragment_bits: u32,
        starts: Vec<u32>,
        entries: Vec<u32>,
        documents: u32,
    ) -> Result<Self> {
        let corrupt = |detail: String| Error::Corrupt {
            what: "posting table",
            detail,
        };
        if bucket_bits > MAX_BUCKET_BITS
            || fragment_bits > FRAGMENT_BITS
            || starts.len() as u64 != (1u64 << bucket_bits) + 1
            || entries.len() != documents as usize
        {
            return Err(corrupt(format!(
                "{} bucket starts, {bucket_bits} bucket bits, {fragment_bits} fragment bits, {} \
                 entries for {documents} documents",
                starts.len(),
                entries.len()
            )));
        }
        let ascending = starts[0] == 0
            && starts.windows(2).all(|w| w[0] <= w[1])
            && starts.last().copied() == Some(entries.len() as u32)
            && starts.windows(2).all(|w| {
                entries[w[0] as usize..w[1] as usize]
                    .windows(2)
                    .all(|e| e[0] < e[1])
            });
        if !ascending {
            return Err(corrupt(
                "bucket starts or a bucket's entries are not ascending".into(),
            ));
        }
        let mut seen = vec![false; documents as usize];
        for &entry in &entries {
            let (fragment, number) = (entry >> 24, entry & (NUMBERS - 1));
            if fragment.checked_shr(fragment_bits).unwrap_or(0) != 0
                || number >= documents
                || std::mem::replace(&mut seen[number as usize], true)
            {
                return Err(corrupt(format!(
                    "entry {entry:#x}: a fragment past {fragment_bits} bits, or a document \
                     numbered twice or past {documents}"
                )));
            }
        }
        Ok(Postings {
            bucket_bits,
            fragment_bits,
            starts,
            entries,
        })
    }

    /// The numbers filed under `prefix`'s bucket and fragment: every document filed under a
    /// key with this prefix, and those of other keys that share its bucket and fragment.
    #[inline]
    pub fn matching(&self, prefix: u32) -> impl Iterator<Item = u32> + '_ {
        let b = top_bits(prefix, self.bucket_bits) as usize;
        let bucket = &self.entries[self.starts[b] as usize..self.starts[b + 1] as usize];
        let fragment = fragment_of(prefix, self.bucket_bits, self.fragment_bits);
        let first = bucket.partition_point(|&e| e >> 24 < fragment);
        let last = bucket.partition_point(|&e| e >> 24 <= fragment);
        bucket[first..last].iter().map(|&e| e & (NUMBERS - 1))
    }

    /// Every `(number, prefix)` the table can tell: the prefix's top
    /// `bucket_bits + fragment_bits` bits, the others zero.
    pub fn prefixes(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (bits, fragment_bits) = (self.bucket_bits, self.fragment_bits);
        self.starts.windows(2).enumerate().flat_map(move |(b, w)| {
            self.entries[w[0] as usize..w[1] as usize]
                .iter()
                .map(move |&e| {
                    let bucket = (b as u32).checked_shl(32 - bits).unwrap_or(0);
                    let fragment = (e >> 24)
                        .checked_shl(32 - bits - fragment_bits)
                        .filter(|_| fragment_bits > 0)
                        .unwrap_or(0);
                    (e & (NUMBERS - 1), bucket | fragment)
                })
        })
    }

    /// The bucket bits.
    pub fn bucket_bits(&self) -> u32 {
        self.bucket_bits
    }

    /// The fragment bits.
    pub fn fragment_bits(&self) -> u32 {
        self.fragment_bits
    }

    /// The bucket starts (buckets + 1 values).
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The entries (`fragment << 24 | number`), bucket by bucket.
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        4 * (self.starts.len() + self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn pairs(seed: u64, n: u32) -> Vec<(u32, u32)> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|i| (rng.next_u64() as u32, i)).collect()
    }

    #[test]
    fn every_number_matches_its_prefix_and_few_others_do() {
        let pairs = pairs(1, 20_000);
        let bits = bucket_bits_for(pairs.len() as u64);
        let table = Postings::build(bits, FRAGMENT_BITS, &pairs).unwrap();
        let mut others = 0;
        for &(prefix, number) in &pairs {
            let found: Vec<u32> = table.matching(prefix).collect();
            assert!(found.contains(&number));
            others += found.len() - 1;
        }
        // 4 to 8 keys a bucket, one in 256 of them with the same fragment.
        assert!(others < pairs.len() / 20, "{others} other numbers");
        assert!(table.bytes() <= 5 * pairs.len() + 8);
    }

    #[test]
    fn prefixes_read_back_rebuild_the_table_at_more_or_fewer_bucket_bits() {
        let pairs = pairs(2, 5_000);
        let table = Postings::build(MIN_BUCKET_BITS, FRAGMENT_BITS, &pairs).unwrap();
        let known = MIN_BUCKET_BITS + FRAGMENT_BITS;
        let back: Vec<(u32, u32)> = table.prefixes().map(|(n, p)| (p, n)).collect();
        for &(prefix, number) in &back {
            let (original, _) = pairs[number as usize];
            assert_eq!(top_bits(prefix, known), top_bits(original, known));
        }
        for (bits, fragment) in [(MIN_BUCKET_BITS + 8, 0), (MIN_BUCKET_BITS - 3, 8)] {
            let rebuilt = Postings::build(bits, fragment, &back).unwrap();
            for &(prefix, number) in &pairs {
                assert!(rebuilt.matching(prefix).any(|n| n == number));
            }
        }
    }

    #[test]
    fn parts_read_back_are_checked() {
        let table = Postings::build(2, 8, &[(1 << 31, 0), (7, 1)]).unwrap();
        let parts = |starts: Vec<u32>, entries: Vec<u32>, documents| {
            Postings::from_parts(2, 8, starts, entries, documents)
        };
        let again = parts(table.starts().to_vec(), table.entries().to_vec(), 2).unwrap();
        assert_eq!(again, table);
        // Cut, unordered, a number twice, a number past the documents, a fragment too wide.
        assert!(parts(vec![0, 2], vec![0, 1], 2).is_err());
        assert!(parts(vec![0, 2, 2, 2, 2], vec![1, 0], 2).is_err());
        assert!(parts(vec![0, 1, 2, 2, 2], vec![0, 0], 2).is_err());
        assert!(parts(vec![0, 1, 2, 2, 2], vec![0, 5], 2).is_err());
        assert!(Postings::from_parts(2, 4, vec![0, 1, 2, 2, 2], vec![0, 0xff00_0001], 2).is_err());
        assert!(Postings::build(2, 8, &[(0, NUMBERS)]).is_err());
        assert_eq!(bucket_bits_for(7), MIN_BUCKET_BITS);
        assert_eq!(bucket_bits_for(4_000_000), 19);
        assert_eq!(bucket_bits_for(u64::MAX), MAX_BUCKET_BITS);
    }
}
