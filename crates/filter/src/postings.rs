//! Posting tables: from a 64-bit key to the numbers of the documents filed under it, in about
//! five bytes a document and one bucket read a lookup.
//!
//! The keys themselves are not kept. A key chooses a bucket (its top bits, about one bucket
//! per [`KEYS_PER_BUCKET`] keys); a bucket holds the document numbers of every key that
//! chose it, so a lookup returns them all and the caller tells its own key's documents from
//! the others by what it knows of each document (a near-duplicate index compares a few bits of
//! the document's sketch). Layout: the numbers of all buckets in one array, bucket by bucket,
//! each bucket's in ascending order; and the start of each bucket in a second array, as a
//! CSR matrix keeps its rows. A key costs 4 bytes of number and `4 / KEYS_PER_BUCKET` of start.

use crate::error::{Error, Result};

/// Keys per bucket a table is built for, at least: 4 to 8 keep a bucket within a cache line
/// of numbers and cost at most one byte a key of bucket starts. Buckets are a power of two,
/// rounded down, so a table built with `n` keys has between 4 and 8 keys a bucket on average.
pub const KEYS_PER_BUCKET: u64 = 4;

/// The most bucket bits (2³² buckets of starts would be 16 GiB).
pub const MAX_BUCKET_BITS: u32 = 31;

/// Document numbers by key.
///
/// A key's bucket is its top `bucket_bits` bits, so that a table can drop to fewer bits
/// without knowing its keys (bucket `b` at `s` bits is bucket `b >> (s − s')` at `s'`):
/// what merging two tables of different sizes needs. Tables are changed by rebuilding from
/// their `(bucket, number)` entries, which they can list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Postings {
    /// The bucket bits.
    bucket_bits: u32,
    /// Where each bucket starts in `numbers`, and where the last ends (buckets + 1 values).
    starts: Vec<u32>,
    /// The document numbers, bucket by bucket, each bucket's ascending.
    numbers: Vec<u32>,
}

/// The bucket bits for `keys` keys: buckets = keys / [`KEYS_PER_BUCKET`] rounded down to a
/// power of two (at least one bucket).
pub fn bucket_bits_for(keys: u64) -> u32 {
    let buckets = (keys / KEYS_PER_BUCKET).max(1);
    (63 - buckets.leading_zeros()).min(MAX_BUCKET_BITS)
}

/// The bucket of `key` at `bits` bucket bits: its top bits.
#[inline]
pub fn bucket_of(key: u64, bits: u32) -> u32 {
    key.checked_shr(64 - bits).unwrap_or(0) as u32
}

impl Postings {
    /// The table of `(key, number)` pairs (in any order; a number may appear under many keys),
    /// sized for their count.
    pub fn build(pairs: &[(u64, u32)]) -> Result<Self> {
        let bits = bucket_bits_for(pairs.len() as u64);
        Self::from_entries(
            bits,
            pairs
                .iter()
                .map(|&(key, number)| (bucket_of(key, bits), number))
                .collect(),
        )
    }

    /// The table of `(bucket, number)` entries at `bucket_bits` bits.
    pub fn from_entries(bucket_bits: u32, mut entries: Vec<(u32, u32)>) -> Result<Self> {
        if bucket_bits > MAX_BUCKET_BITS {
            return Err(Error::invalid(
                "bucket bits",
                bucket_bits,
                format!("a posting table has at most {MAX_BUCKET_BITS}"),
            ));
        }
        if entries.len() as u64 >= u64::from(u32::MAX) {
            return Err(Error::invalid(
                "postings",
                entries.len(),
                "a posting table holds fewer than 2^32 − 1 keys; split the list",
            ));
        }
        let buckets = 1u64 << bucket_bits;
        if entries.iter().any(|&(b, _)| u64::from(b) >= buckets) {
            return Err(Error::invalid(
                "posting bucket",
                buckets,
                "an entry's bucket is past the table's last",
            ));
        }
        entries.sort_unstable();
        let mut starts = Vec::with_capacity(buckets as usize + 1);
        let mut at = 0usize;
        for bucket in 0..buckets {
            starts.push(at as u32);
            while at < entries.len() && u64::from(entries[at].0) == bucket {
                at += 1;
            }
        }
        starts.push(at as u32);
        Ok(Postings {
            bucket_bits,
            starts,
            numbers: entries.into_iter().map(|(_, number)| number).collect(),
        })
    }

    /// The table read back from its parts, checked: `starts` has 2^`bucket_bits` + 1 values
    /// running up from 0 to the length of `numbers`, each bucket's numbers ascending.
    pub fn from_parts(bucket_bits: u32, starts: Vec<u32>, numbers: Vec<u32>) -> Result<Self> {
        let well_formed = bucket_bits <= MAX_BUCKET_BITS
            && starts.len() as u64 == (1u64 << bucket_bits) + 1
            && starts[0] == 0
            && starts.windows(2).all(|w| w[0] <= w[1])
            && starts.last().copied() == Some(numbers.len() as u32)
            && starts.windows(2).all(|w| {
                numbers[w[0] as usize..w[1] as usize]
                    .windows(2)
                    .all(|n| n[0] <= n[1])
            });
        if !well_formed {
            return Err(Error::Corrupt {
                what: "posting table",
                detail: format!(
                    "{} bucket starts (for {bucket_bits} bucket bits) do not run from 0 up to its                      {} ascending document numbers",
                    starts.len(),
                    numbers.len()
                ),
            });
        }
        Ok(Postings {
            bucket_bits,
            starts,
            numbers,
        })
    }

    /// The document numbers of the bucket `key` chooses: every number filed under `key`, and
    /// those of the other keys that share its bucket.
    #[inline]
    pub fn bucket(&self, key: u64) -> &[u32] {
        let b = bucket_of(key, self.bucket_bits) as usize;
        &self.numbers[self.starts[b] as usize..self.starts[b + 1] as usize]
    }

    /// Every `(bucket, number)` entry, at the table's bucket bits.
    pub fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.starts.windows(2).enumerate().flat_map(move |(b, w)| {
            self.numbers[w[0] as usize..w[1] as usize]
                .iter()
                .map(move |&n| (b as u32, n))
        })
    }

    /// The bucket bits.
    pub fn bucket_bits(&self) -> u32 {
        self.bucket_bits
    }

    /// The bucket starts (buckets + 1 values).
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The document numbers, bucket by bucket.
    pub fn numbers(&self) -> &[u32] {
        &self.numbers
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        4 * (self.starts.len() + self.numbers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn every_number_is_in_its_keys_bucket() {
        let mut rng = SplitMix64::new(1);
        let pairs: Vec<(u64, u32)> = (0..10_000).map(|i| (rng.next_u64(), i / 3)).collect();
        let table = Postings::build(&pairs).unwrap();
        for &(key, number) in &pairs {
            assert!(table.bucket(key).contains(&number));
        }
        assert_eq!(table.numbers().len(), pairs.len());
        assert!(table.bytes() <= 5 * pairs.len() + 8);
    }

    #[test]
    fn an_empty_table_answers_nothing() {
        let table = Postings::build(&[]).unwrap();
        assert!(table.bucket(42).is_empty());
    }

    #[test]
    fn parts_read_back_are_checked() {
        let table = Postings::build(&[(1, 7), (2, 8)]).unwrap();
        let again = Postings::from_parts(
            table.bucket_bits(),
            table.starts().to_vec(),
            table.numbers().to_vec(),
        )
        .unwrap();
        assert_eq!(again, table);
        assert!(Postings::from_parts(0, vec![0, 3], vec![1, 2]).is_err());
        assert!(Postings::from_parts(0, vec![1, 2], vec![1, 2]).is_err());
        assert!(Postings::from_parts(0, vec![0, 2], vec![2, 1]).is_err());
        assert!(Postings::from_parts(1, vec![0, 2], vec![1, 2]).is_err());
        assert!(Postings::from_parts(0, vec![0], vec![]).is_err());
    }

    #[test]
    fn fewer_bucket_bits_keep_every_key_findable() {
        let mut rng = SplitMix64::new(2);
        let pairs: Vec<(u64, u32)> = (0..5_000).map(|i| (rng.next_u64(), i)).collect();
        let table = Postings::build(&pairs).unwrap();
        let bits = table.bucket_bits() - 3;
        let coarse =
            Postings::from_entries(bits, table.entries().map(|(b, n)| (b >> 3, n)).collect())
                .unwrap();
        for &(key, number) in &pairs {
            assert!(coarse.bucket(key).contains(&number));
        }
        assert_eq!(bucket_bits_for(0), 0);
        assert_eq!(bucket_bits_for(7), 0);
        assert_eq!(bucket_bits_for(8), 1);
        assert_eq!(bucket_bits_for(4_000_000), 19);
    }
}
