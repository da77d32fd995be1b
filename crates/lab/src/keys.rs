//! Synthetic keys and the parallel loops that insert and query them: members and non-members
//! are disjoint by construction (different prefixes), so every "listed" answer to a non-member
//! is a false positive, and no key list has to be held in memory.
//!
//! Inserting goes through the filter crate's one parallel inserter
//! ([`Bloom::insert_sharded`]); every parallel query loop of the lab goes through
//! [`sum_parallel`].

use std::ops::Range;

use phishbloom_filter::{Bloom, Filter, HashStrategy, KeyHash, Layout};

/// Keys per chunk in the insert and query loops: 4,096 hashes (64 KiB) stay in L2 and amortise
/// the batch call and the per-chunk counter update.
const CHUNK: usize = 4096;

/// The longest synthetic key: a prefix of at most 12 bytes and 16 hexadecimal digits.
const KEY_CAPACITY: usize = 32;

/// A family of distinct keys `prefix ‖ decimal(i)`; two families with different prefixes of the
/// same length never share a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpace {
    prefix: &'static [u8],
}

/// Members of the sweep filters (`kw-0`, …, `kw-1869f`).
pub const MEMBERS: KeySpace = KeySpace::new(b"kw-");
/// Non-members queried against them (`nq-0`, …): never inserted.
pub const NON_MEMBERS: KeySpace = KeySpace::new(b"nq-");
/// Seed 002's spam keywords (`spam-kw-0`, …).
pub const SPAM_KEYWORDS: KeySpace = KeySpace::new(b"spam-kw-");
/// Non-members for seed 002 (`clean-w-0`, …).
pub const CLEAN_WORDS: KeySpace = KeySpace::new(b"clean-w-");
/// Seed 004's phone numbers: `1` and ten digits, as a Chinese mobile number (11 bytes).
pub const PHONES: KeySpace = KeySpace::new(b"1");
/// Non-member phone numbers: `2` and ten digits (no mobile number starts with 2).
pub const OTHER_PHONES: KeySpace = KeySpace::new(b"2");

impl KeySpace {
    /// A key family with this prefix (at most 12 bytes).
    pub const fn new(prefix: &'static [u8]) -> Self {
        assert!(prefix.len() <= 12, "prefix too long for KEY_CAPACITY");
        KeySpace { prefix }
    }

    /// Writes key `index` into `key` and returns its bytes. Phone families print the index as
    /// ten decimal digits, so every phone number is 11 bytes; the others print it in lowercase
    /// hexadecimal without leading zeros (no divisions: the query loops make 10⁹ keys).
    pub fn write<'a>(&self, index: u64, key: &'a mut InlineKey) -> &'a [u8] {
        key.len = 0;
        key.extend(self.prefix);
        if self.prefix.len() == 1 {
            // Phone numbers: ten decimal digits after the leading one (indices < 10^10).
            let mut digits = [b'0'; 10];
            let mut value = index;
            for digit in digits.iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
            key.extend(&digits);
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let nibbles = (64 - index.leading_zeros()).div_ceil(4).max(1);
            for shift in (0..nibbles).rev() {
                key.extend(&[HEX[(index >> (4 * shift)) as usize & 15]]);
            }
        }
        &key.bytes[..key.len]
    }

    /// Key `index` as an owned string (for the hash-set comparison).
    pub fn string(&self, index: u64) -> String {
        let mut key = InlineKey::default();
        // Keys are ASCII by construction: a prefix and decimal digits.
        String::from_utf8_lossy(self.write(index, &mut key)).into_owned()
    }
}

/// A short key held inline (no allocation), so chunks of keys can be built and reused.
#[derive(Clone, Copy, Debug)]
pub struct InlineKey {
    bytes: [u8; KEY_CAPACITY],
    len: usize,
}

impl Default for InlineKey {
    fn default() -> Self {
        InlineKey {
            bytes: [0; KEY_CAPACITY],
            len: 0,
        }
    }
}

impl InlineKey {
    fn extend(&mut self, more: &[u8]) {
        self.bytes[self.len..self.len + more.len()].copy_from_slice(more);
        self.len += more.len();
    }
}

impl AsRef<[u8]> for InlineKey {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Splits `range` into `parts` contiguous pieces of nearly equal length.
pub fn split(range: Range<u64>, parts: usize) -> Vec<Range<u64>> {
    let parts = parts.max(1) as u64;
    let len = range.end.saturating_sub(range.start);
    (0..parts)
        .map(|i| range.start + len * i / parts..range.start + len * (i + 1) / parts)
        .filter(|r| !r.is_empty())
        .collect()
}

/// Inserts keys `range` of `space` into `filter` on `threads` threads, through the filter
/// crate's one parallel inserter ([`Bloom::insert_sharded`]): each thread generates its share
/// of the keys one at a time, so 10⁸ keys never have to exist at once.
pub fn insert_range<L: Layout>(
    filter: &mut Bloom<L>,
    space: KeySpace,
    range: Range<u64>,
    threads: usize,
) {
    let parts = split(range, threads);
    filter.insert_sharded(parts.len(), |share, target| {
        let mut key = InlineKey::default();
        for index in parts[share].clone() {
            target.insert(space.write(index, &mut key));
        }
    });
}

/// How many keys of `range` in `space` the filter answers "listed", on `threads` threads.
///
/// xxh3 filters are queried through the prefetching batch path (`contains_hash_batch`) on the
/// keys' real xxh3 hashes; SHA-256 filters key by key.
pub fn count_listed(
    filter: &dyn Filter,
    space: KeySpace,
    range: Range<u64>,
    threads: usize,
) -> u64 {
    sum_parallel(range, threads, |part| count_part(filter, space, part))
}

/// Splits `range` into `threads` contiguous parts, runs `count` on each part on its own thread
/// and returns the sum: the lab's one parallel query loop.
pub fn sum_parallel<F>(range: Range<u64>, threads: usize, count: F) -> u64
where
    F: Fn(Range<u64>) -> u64 + Sync,
{
    let count = &count;
    std::thread::scope(|scope| {
        let workers: Vec<_> = split(range, threads)
            .into_iter()
            .map(|part| scope.spawn(move || count(part)))
            .collect();
        workers
            .into_iter()
            // A worker panics only on a bug (index out of bounds); propagate it.
            .map(|w| w.join().expect("query worker panicked"))
            .sum()
    })
}

/// One thread's share of [`count_listed`].
fn count_part(filter: &dyn Filter, space: KeySpace, part: Range<u64>) -> u64 {
    let mut key = InlineKey::default();
    let mut hits = 0u64;
    if filter.hash_strategy() == HashStrategy::Sha256 {
        for index in part {
            hits += u64::from(filter.contains(space.write(index, &mut key)));
        }
        return hits;
    }
    let mut hashes = Vec::with_capacity(CHUNK);
    let mut answers = Vec::with_capacity(CHUNK);
    let mut next = part.start;
    while next < part.end {
        let len = (part.end - next).min(CHUNK as u64);
        hashes.clear();
        hashes.extend((next..next + len).map(|i| KeyHash::of(space.write(i, &mut key))));
        answers.clear();
        filter.contains_hash_batch(&hashes, &mut answers);
        hits += answers.iter().filter(|&&a| a).count() as u64;
        next += len;
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::BloomFilter;

    #[test]
    fn keys_are_distinct_across_families_and_phones_have_eleven_digits() {
        let mut key = InlineKey::default();
        assert_eq!(MEMBERS.write(0, &mut key), b"kw-0");
        assert_eq!(NON_MEMBERS.write(0x1234, &mut key), b"nq-1234");
        assert_eq!(
            NON_MEMBERS.write(u64::MAX, &mut key),
            b"nq-ffffffffffffffff"
        );
        assert_eq!(PHONES.write(42, &mut key), b"10000000042");
        assert_eq!(OTHER_PHONES.write(9_999_999_999, &mut key), b"29999999999");
        assert_eq!(SPAM_KEYWORDS.string(u64::MAX).len(), 8 + 16);
    }

    #[test]
    fn split_covers_the_range_exactly() {
        let parts = split(10..21, 3);
        assert_eq!(parts, vec![10..13, 13..17, 17..21]);
        assert_eq!(split(0..2, 4).len(), 2);
        assert!(split(5..5, 2).is_empty());
    }

    #[test]
    fn parallel_insert_has_no_false_negatives() {
        let mut filter = BloomFilter::with_num_bits(100_000, 7).unwrap();
        insert_range(&mut filter, MEMBERS, 0..10_000, 2);
        assert_eq!(Filter::items(&filter), 10_000);
        assert_eq!(count_listed(&filter, MEMBERS, 0..10_000, 2), 10_000);
        let mut sha =
            BloomFilter::with_num_bits_and_strategy(100_000, 7, HashStrategy::Sha256).unwrap();
        insert_range(&mut sha, MEMBERS, 0..1_000, 2);
        assert_eq!(count_listed(&sha, MEMBERS, 0..1_000, 1), 1_000);
    }

    #[test]
    fn sum_parallel_visits_every_index_once() {
        // Σ i over 0..1000 = 499,500, whatever the number of threads.
        for threads in [1, 2, 7] {
            let total = sum_parallel(0..1_000, threads, |part| part.sum());
            assert_eq!(total, 499_500, "{threads} threads");
        }
        assert_eq!(sum_parallel(5..5, 3, |part| part.count() as u64), 0);
    }
}
