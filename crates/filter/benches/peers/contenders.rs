//! The structures the peer bench measures, behind one trait: phishbloom's filters, the peer
//! crates' filters, a static binary fuse filter and a `HashSet<String>`, each with its builder.

use std::collections::HashSet;
use std::sync::OnceLock;

use phishbloom_filter::{
    BlockedBloomFilter, Bloom, BloomFilter, Filter, Layout, SplitBlockBloomFilter,
};
use xorf::Filter as XorFilter;
use xxhash_rust::xxh3::xxh3_64;

use crate::{BATCH_CALL, FPP};

/// Seed of fastbloom's SipHash keys, fixed so that runs are repeatable (any value works).
pub(crate) const FASTBLOOM_SEED: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;

/// Seed of bloomfilter's two SipHash keys (its two 16-byte halves), fixed for the same reason.
/// The halves must differ: with equal keys both hashes are equal, every position is a multiple
/// of one hash, and the measured rate is ~3.7× the target.
pub(crate) const BLOOMFILTER_SEED: [u8; 32] = {
    let mut seed = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        seed[i] = i as u8; // 0, 1, …, 31: distinct halves
        i += 1;
    }
    seed
};

/// Theoretical false-positive rate of a split-block filter (256-bit buckets, one bit in each of
/// eight 32-bit words) at `bits_per_key`: the bucket load is Poisson with mean 256/b, and a
/// bucket holding `l` keys answers a non-member yes with (1 − (31/32)^l)^8.
pub(crate) fn sbbf_rate(bits_per_key: f64) -> f64 {
    // Bucket bits, bits per word, words per bucket of the Parquet split-block filter.
    const BUCKET_BITS: f64 = 256.0;
    const WORD_BITS: f64 = 32.0;
    const WORDS: i32 = 8;
    // Loads up to this many keys per bucket carry all the Poisson mass for b ≥ 1.
    const MAX_LOAD: u32 = 2_000;
    let mean = BUCKET_BITS / bits_per_key;
    let mut pmf = (-mean).exp();
    let mut rate = 0.0;
    for load in 0..MAX_LOAD {
        rate += pmf * (1.0 - (1.0 - 1.0 / WORD_BITS).powi(load as i32)).powi(WORDS);
        pmf *= mean / f64::from(load + 1);
    }
    rate
}

/// Smallest whole bits/key (sbbf-rs-safe takes an integer) whose [`sbbf_rate`] is ≤ `fpp`.
pub(crate) fn sbbf_bits_per_key(fpp: f64) -> usize {
    // 64 bits/key reaches rates far below any target used here.
    (1..=64)
        .find(|&bits| sbbf_rate(bits as f64) <= fpp)
        .expect("some bits/key ≤ 64 meets any sane rate")
}

/// One structure under test. Each method runs a whole slice, so that the per-key loop is
/// monomorphic and inlined and the dynamic call is paid once per slice.
pub(crate) trait Contender {
    fn name(&self) -> &'static str;
    /// Inserts every key (never called on static structures).
    fn insert_all(&mut self, keys: &[&str]);
    /// How many keys the structure answers "present" for.
    fn count_hits(&self, keys: &[&str]) -> usize;
    /// The same through a batched query path, if the structure has one.
    fn count_hits_batched(&self, _keys: &[&str]) -> Option<usize> {
        None
    }
    /// Bits of memory the set representation takes.
    fn size_bits(&self) -> u64;
    /// The number of hash functions or probes, for the table.
    fn probes(&self) -> String;
    /// Whether keys can be added after construction.
    fn dynamic(&self) -> bool {
        true
    }
    /// The false-positive rate theory predicts after `n` distinct keys.
    fn theory(&self, n: usize) -> f64;
}

/// phishbloom's filter of either layout.
pub(crate) struct Phish<L: Layout>(Bloom<L>, &'static str);

impl<L: Layout> Contender for Phish<L> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.insert(key);
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter().filter(|key| self.0.contains(key)).count()
    }
    fn count_hits_batched(&self, keys: &[&str]) -> Option<usize> {
        let mut out = Vec::with_capacity(BATCH_CALL);
        let mut hits = 0;
        for chunk in keys.chunks(BATCH_CALL) {
            self.0.contains_batch(chunk, &mut out);
            hits += out.iter().filter(|&&hit| hit).count();
        }
        Some(hits)
    }
    fn size_bits(&self) -> u64 {
        self.0.num_bits()
    }
    fn probes(&self) -> String {
        self.0.num_hashes().to_string()
    }
    fn theory(&self, n: usize) -> f64 {
        self.0.theoretical_fpp(n as f64)
    }
}

/// fastbloom with its default hasher (SipHash-1-3 over the `Hash` of `str`).
pub(crate) struct FastSip(fastbloom::BloomFilter);

impl Contender for FastSip {
    fn name(&self) -> &'static str {
        "fastbloom-sip"
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.insert(*key);
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter().filter(|key| self.0.contains(**key)).count()
    }
    fn size_bits(&self) -> u64 {
        self.0.num_bits() as u64
    }
    fn probes(&self) -> String {
        self.0.num_hashes().to_string()
    }
    fn theory(&self, n: usize) -> f64 {
        self.0.expected_false_pos(n)
    }
}

/// fastbloom fed xxh3-64 through `insert_hash` / `contains_hash`.
pub(crate) struct FastXxh3(fastbloom::BloomFilter);

impl Contender for FastXxh3 {
    fn name(&self) -> &'static str {
        "fastbloom-xxh3"
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.insert_hash(xxh3_64(key.as_bytes()));
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter()
            .filter(|key| self.0.contains_hash(xxh3_64(key.as_bytes())))
            .count()
    }
    fn size_bits(&self) -> u64 {
        self.0.num_bits() as u64
    }
    fn probes(&self) -> String {
        self.0.num_hashes().to_string()
    }
    fn theory(&self, n: usize) -> f64 {
        self.0.expected_false_pos(n)
    }
}

/// The `bloomfilter` crate (two SipHash-1-3 per key, then double hashing modulo m).
pub(crate) struct BloomfilterCrate(bloomfilter::Bloom<str>);

impl Contender for BloomfilterCrate {
    fn name(&self) -> &'static str {
        "bloomfilter"
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.set(key);
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter().filter(|key| self.0.check(key)).count()
    }
    fn size_bits(&self) -> u64 {
        self.0.len()
    }
    fn probes(&self) -> String {
        self.0.number_of_hash_functions().to_string()
    }
    fn theory(&self, n: usize) -> f64 {
        // The classic (1 − e^(−kn/m))^k.
        let k = f64::from(self.0.number_of_hash_functions());
        (1.0 - (-k * n as f64 / self.0.len() as f64).exp()).powf(k)
    }
}

/// sbbf-rs-safe, the Parquet split-block filter, fed xxh3-64.
pub(crate) struct Sbbf(sbbf_rs_safe::Filter, usize);

impl Contender for Sbbf {
    fn name(&self) -> &'static str {
        "sbbf-xxh3"
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.insert_hash(xxh3_64(key.as_bytes()));
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter()
            .filter(|key| self.0.contains_hash(xxh3_64(key.as_bytes())))
            .count()
    }
    fn size_bits(&self) -> u64 {
        self.0.as_bytes().len() as u64 * 8
    }
    fn probes(&self) -> String {
        // Eight bits per key, one per 32-bit word of the bucket; sized at `self.1` bits/key.
        format!("8 ({} b/key)", self.1)
    }
    fn theory(&self, n: usize) -> f64 {
        sbbf_rate(self.size_bits() as f64 / n as f64)
    }
}

/// xorf's BinaryFuse8 over xxh3-64 hashes (static: built once from all keys).
pub(crate) struct Fuse(xorf::BinaryFuse8);

impl Contender for Fuse {
    fn name(&self) -> &'static str {
        "xorf-bfuse8-xxh3"
    }
    fn insert_all(&mut self, _keys: &[&str]) {
        unreachable!("a binary fuse filter is static");
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter()
            .filter(|key| self.0.contains(&xxh3_64(key.as_bytes())))
            .count()
    }
    fn size_bits(&self) -> u64 {
        self.0.fingerprints.len() as u64 * 8
    }
    fn probes(&self) -> String {
        // Three fingerprint lookups per query.
        "3".to_owned()
    }
    fn dynamic(&self) -> bool {
        false
    }
    fn theory(&self, _n: usize) -> f64 {
        // An 8-bit fingerprint matches by chance with probability 2^-8.
        1.0 / 256.0
    }
}

/// The exact set, std's SipHash-1-3.
pub(crate) struct StdSet(HashSet<String>);

impl Contender for StdSet {
    fn name(&self) -> &'static str {
        "hashset-string"
    }
    fn insert_all(&mut self, keys: &[&str]) {
        for key in keys {
            self.0.insert((*key).to_owned());
        }
    }
    fn count_hits(&self, keys: &[&str]) -> usize {
        keys.iter().filter(|key| self.0.contains(**key)).count()
    }
    /// The table (buckets × (String + one control byte)) plus the key bytes; allocator
    /// overhead per string is not counted, so this is a lower bound.
    fn size_bits(&self) -> u64 {
        // hashbrown keeps buckets at most 7/8 full and a power of two.
        let buckets = (self.0.capacity() * 8 / 7).next_power_of_two();
        let table = buckets * (std::mem::size_of::<String>() + 1);
        let heap: usize = self.0.iter().map(String::len).sum();
        (table + heap) as u64 * 8
    }
    fn probes(&self) -> String {
        "-".to_owned()
    }
    fn theory(&self, _n: usize) -> f64 {
        0.0
    }
}

/// Builds one structure from `keys`, sized for all of them.
pub(crate) type Builder = fn(&[&str]) -> Box<dyn Contender>;

pub(crate) fn build_blocked(keys: &[&str]) -> Box<dyn Contender> {
    let filter = BlockedBloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-blocked");
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_split(keys: &[&str]) -> Box<dyn Contender> {
    let filter = SplitBlockBloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-split");
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_classic(keys: &[&str]) -> Box<dyn Contender> {
    let filter = BloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-classic");
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_fast_sip(keys: &[&str]) -> Box<dyn Contender> {
    let filter = fastbloom::BloomFilter::with_false_pos(FPP)
        .seed(&FASTBLOOM_SEED)
        .expected_items(keys.len());
    let mut c = FastSip(filter);
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_fast_xxh3(keys: &[&str]) -> Box<dyn Contender> {
    let filter = fastbloom::BloomFilter::with_false_pos(FPP)
        .seed(&FASTBLOOM_SEED)
        .expected_items(keys.len());
    let mut c = FastXxh3(filter);
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_bloomfilter(keys: &[&str]) -> Box<dyn Contender> {
    let filter = bloomfilter::Bloom::new_for_fp_rate_with_seed(keys.len(), FPP, &BLOOMFILTER_SEED)
        .expect("valid parameters");
    let mut c = BloomfilterCrate(filter);
    c.insert_all(keys);
    Box::new(c)
}

/// sbbf-rs-safe's bits/key at [`FPP`], computed once (in `main`, before any timing) so that
/// the ~1 ms of this benchmark's own sizing arithmetic is not charged to sbbf's build.
pub(crate) fn sbbf_bits() -> usize {
    static BITS: OnceLock<usize> = OnceLock::new();
    *BITS.get_or_init(|| sbbf_bits_per_key(FPP))
}

pub(crate) fn build_sbbf(keys: &[&str]) -> Box<dyn Contender> {
    let bits_per_key = sbbf_bits();
    let mut c = Sbbf(
        sbbf_rs_safe::Filter::new(bits_per_key, keys.len()),
        bits_per_key,
    );
    c.insert_all(keys);
    Box::new(c)
}

pub(crate) fn build_fuse(keys: &[&str]) -> Box<dyn Contender> {
    let mut hashes: Vec<u64> = keys.iter().map(|key| xxh3_64(key.as_bytes())).collect();
    // Construction fails on duplicate keys (and the dataset repeats some URLs).
    hashes.sort_unstable();
    hashes.dedup();
    Box::new(Fuse(
        xorf::BinaryFuse8::try_from(&hashes).expect("distinct keys build"),
    ))
}

pub(crate) fn build_hashset(keys: &[&str]) -> Box<dyn Contender> {
    let mut c = StdSet(HashSet::with_capacity(keys.len()));
    c.insert_all(keys);
    Box::new(c)
}

/// Every structure, in the order of the tables.
pub(crate) const BUILDERS: [(&str, Builder); 9] = [
    ("phishbloom-blocked", build_blocked),
    ("phishbloom-split", build_split),
    ("phishbloom-classic", build_classic),
    ("fastbloom-sip", build_fast_sip),
    ("fastbloom-xxh3", build_fast_xxh3),
    ("bloomfilter", build_bloomfilter),
    ("sbbf-xxh3", build_sbbf),
    ("xorf-bfuse8-xxh3", build_fuse),
    ("hashset-string", build_hashset),
];
