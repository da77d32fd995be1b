//! Measures phishbloom's Bloom filters against real peer crates, side by side in one run, on the
//! phishing dataset and on synthetic URL sets that fit in and overflow the L3 cache.
//!
//! # Running
//! ```text
//! cargo bench -p phishbloom-filter --bench peers            # full sizes: ~17 min, ~10 GB RAM
//! PHISHBLOOM_BENCH_LARGE=2000000 PHISHBLOOM_BENCH_MEDIUM=500000 \
//!     cargo bench -p phishbloom-filter --bench peers        # a quick run
//! ```
//! Environment variables (all optional):
//! - `PHISHBLOOM_DATASET`: the CSV of case (a); default `../../../shared/data/dataset.csv`,
//!   relative to `crates/filter`, where cargo runs benches. Case (a) is skipped when it is absent.
//! - `PHISHBLOOM_BENCH_LARGE` / `PHISHBLOOM_BENCH_MEDIUM`: key counts of case (b); defaults
//!   40,000,000 (a filter larger than a 35.8 MiB L3) and 10,000,000 (one that fits); `0` skips.
//! - `PHISHBLOOM_BENCH_QUERIES`: size of the fixed subset that the criterion measurements cycle
//!   through in case (b); default 4,000,000.
//! - `PHISHBLOOM_BENCH_HASHSET_MAX`: largest key count at which `HashSet<String>` is built;
//!   default: no limit.
//! - `PHISHBLOOM_BENCH_STRUCTURES`: comma-separated structure names (as in the tables, e.g.
//!   `phishbloom-split,sbbf-xxh3`) to build and measure; default: all of them. For quick
//!   comparisons while iterating; the published tables come from runs of all.
//!
//! # What is measured
//! Structures, all at p = 0.01 where they take a target: phishbloom's blocked, split-block and
//! classic filters; `fastbloom` with its default hasher (SipHash-1-3) and fed xxh3-64 through its
//! `*_hash` methods; `bloomfilter` (two SipHash-1-3); `sbbf-rs-safe` fed xxh3-64 (sized to the
//! smallest whole bits/key whose theoretical rate is ≤ p); `xorf::BinaryFuse8` built from
//! xxh3-64 hashes (static, for reference); and `HashSet<String>` (exact, for reference).
//!
//! For each data set, first one timed pass with [`Instant`] over all keys (build, member queries,
//! non-member queries, phishbloom's `contains_batch`) gives the printed table of bits/key,
//! measured false-positive rate and ns/op, with the target ratios. Then criterion measures the
//! same operations per element (`Throughput::Elements(1)`, `iter_custom` cycling through the
//! keys): inserts (re-inserting members into the built filter, which touches the same memory as
//! a first insert), member and non-member queries, single and batched, and the cost of hashing
//! the same keys with xxh3-128 and xxh3-64 alone (the floor). In case (b) criterion cycles through
//! the first `PHISHBLOOM_BENCH_QUERIES` keys of each stream (a fixed random subset: keys are
//! generated independently at random).
//!
//! Under `cargo test --benches` (no `--bench` argument) criterion runs every benchmark once and
//! case (b) shrinks to small sizes, so the test suite stays fast.

use std::collections::HashSet;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use phishbloom_filter::{
    BlockedBloomFilter, Bloom, BloomFilter, Filter, KeyHash, Layout, SplitBlockBloomFilter,
};
use xorf::Filter as XorFilter;
use xxhash_rust::xxh3::xxh3_64;

/// The false-positive target of every filter, as in the issue.
const FPP: f64 = 0.01;

/// Keys passed to one `contains_batch` call: a plausible request batch, and small enough that
/// the answer vector stays in L1.
const BATCH_CALL: usize = 1024;

/// Seed of fastbloom's SipHash keys, fixed so that runs are repeatable (any value works).
const FASTBLOOM_SEED: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;

/// Seed of bloomfilter's two SipHash keys (its two 16-byte halves), fixed for the same reason.
/// The halves must differ: with equal keys both hashes are equal, every position is a multiple
/// of one hash, and the measured rate is ~3.7× the target.
const BLOOMFILTER_SEED: [u8; 32] = {
    let mut seed = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        seed[i] = i as u8; // 0, 1, …, 31: distinct halves
        i += 1;
    }
    seed
};

/// Seeds of the SplitMix64 streams: members, non-members, and the random URLs of case (a).
/// Distinct so that the streams are independent; the values themselves are arbitrary.
const SEED_MEMBERS: u64 = 1;
const SEED_NON_MEMBERS: u64 = 2;
const SEED_RANDOM_URLS: u64 = 3;

/// Random `http://xxxxxxxxxx.com` URLs that query case (a), from the issue.
const RANDOM_URLS: usize = 1_000_000;

/// Lowercase ASCII letters, `a` to `z`.
const LETTERS: usize = 26;

/// Letters in the host of a random URL of case (a), from the issue.
const RANDOM_HOST_LETTERS: usize = 10;

/// Default key counts of case (b), from the issue: 40M keys make a ~50 MB filter, larger than
/// this machine's 35.8 MiB L3; 10M keys make a ~13 MB one, which fits.
const DEFAULT_LARGE: usize = 40_000_000;
const DEFAULT_MEDIUM: usize = 10_000_000;

/// Default size of the subset criterion cycles through in case (b), from the issue.
const DEFAULT_QUERIES: usize = 4_000_000;

/// Key counts of case (b) under `cargo test --benches`, where criterion runs each benchmark once.
const TEST_LARGE: usize = 200_000;
const TEST_MEDIUM: usize = 50_000;

/// Shortest and longest synthetic key, in bytes, from the issue.
const MIN_KEY_LEN: usize = 20;
const MAX_KEY_LEN: usize = 80;

/// Shortest and longest host label of a synthetic key.
const MIN_HOST: usize = 3;
const MAX_HOST: usize = 12;

/// Longest fixed part of a synthetic key: `https://` (8) + `.com` (4) + `/` + the stream tag.
const MAX_FIXED: usize = 14;

/// Top-level domains of synthetic keys.
const TLDS: [&str; 6] = [".com", ".net", ".org", ".io", ".cn", ".ru"];

/// Characters of a synthetic key's path.
const PATH_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789/-_.?=";

/// The tag after the first `/` of the path: it keeps members and non-members disjoint, so every
/// positive answer to a non-member query of case (b) is a false positive.
const MEMBER_TAG: u8 = b'm';
const NON_MEMBER_TAG: u8 = b'q';

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny fixed-seed generator, the same as the tests'.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        // The golden-ratio increment and the two multipliers of the published algorithm.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-50 for these `n`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Many keys in one contiguous string, so 40M keys cost 40M × ~50 bytes and no allocation each.
#[derive(Default)]
struct KeyText {
    text: String,
    ends: Vec<usize>,
}

impl KeyText {
    fn push(&mut self, key: &str) {
        self.text.push_str(key);
        self.ends.push(self.text.len());
    }

    /// A slice of every key, in order.
    fn views(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.text[start..end];
                start = end;
                key
            })
            .collect()
    }
}

/// `count` URL-like keys of 20–80 bytes (length uniform), tagged with `tag`:
/// `http[s]://<3–12 letters><tld>/<tag><path chars>`.
fn synthetic_keys(count: usize, seed: u64, tag: u8) -> KeyText {
    let mut rng = SplitMix64(seed);
    // Mean length is 50 bytes.
    let mut bytes = Vec::with_capacity(count * (MIN_KEY_LEN + MAX_KEY_LEN) / 2);
    let mut ends = Vec::with_capacity(count);
    for _ in 0..count {
        let len = MIN_KEY_LEN + rng.below(MAX_KEY_LEN - MIN_KEY_LEN + 1);
        let end = bytes.len() + len;
        let scheme: &[u8] = if rng.next_u64() & 1 == 0 {
            b"http://"
        } else {
            b"https://"
        };
        bytes.extend_from_slice(scheme);
        // Cap the host so that the fixed parts always fit in `len`.
        let host = (MIN_HOST + rng.below(MAX_HOST - MIN_HOST + 1)).min(len - MAX_FIXED);
        for _ in 0..host {
            bytes.push(b'a' + rng.below(LETTERS) as u8);
        }
        bytes.extend_from_slice(TLDS[rng.below(TLDS.len())].as_bytes());
        bytes.push(b'/');
        bytes.push(tag);
        while bytes.len() < end {
            bytes.push(PATH_CHARS[rng.below(PATH_CHARS.len())]);
        }
        ends.push(end);
    }
    KeyText {
        text: String::from_utf8(bytes).expect("synthetic keys are ASCII"),
        ends,
    }
}

/// The issue's random queries of case (a): `http://` + 10 lowercase letters + `.com`.
fn random_urls(count: usize, seed: u64) -> KeyText {
    let mut rng = SplitMix64(seed);
    let mut keys = KeyText::default();
    let mut url = String::new();
    for _ in 0..count {
        url.clear();
        url.push_str("http://");
        for _ in 0..RANDOM_HOST_LETTERS {
            url.push(char::from(b'a' + rng.below(LETTERS) as u8));
        }
        url.push_str(".com");
        keys.push(&url);
    }
    keys
}

/// Phishing (label -1) and benign (label 1) URLs of `url,isMalicious` rows. Splits each line at
/// its last comma (URLs may contain commas); a URL in double quotes is unquoted (`""` → `"`).
fn read_dataset(text: &str) -> (KeyText, KeyText) {
    let (mut phishing, mut benign) = (KeyText::default(), KeyText::default());
    for line in text.lines().skip(1) {
        let Some((url, label)) = line.trim_end_matches('\r').rsplit_once(',') else {
            continue;
        };
        let url = match url.strip_prefix('"').and_then(|u| u.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => url.to_owned(),
        };
        match label.trim() {
            "-1" => phishing.push(&url),
            "1" => benign.push(&url),
            _ => {}
        }
    }
    (phishing, benign)
}

/// Theoretical false-positive rate of a split-block filter (256-bit buckets, one bit in each of
/// eight 32-bit words) at `bits_per_key`: the bucket load is Poisson with mean 256/b, and a
/// bucket holding `l` keys answers a non-member yes with (1 − (31/32)^l)^8.
fn sbbf_rate(bits_per_key: f64) -> f64 {
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
fn sbbf_bits_per_key(fpp: f64) -> usize {
    // 64 bits/key reaches rates far below any target used here.
    (1..=64)
        .find(|&bits| sbbf_rate(bits as f64) <= fpp)
        .expect("some bits/key ≤ 64 meets any sane rate")
}

/// One structure under test. Each method runs a whole slice, so that the per-key loop is
/// monomorphic and inlined and the dynamic call is paid once per slice.
trait Contender {
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
struct Phish<L: Layout>(Bloom<L>, &'static str);

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
struct FastSip(fastbloom::BloomFilter);

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
struct FastXxh3(fastbloom::BloomFilter);

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
struct BloomfilterCrate(bloomfilter::Bloom<str>);

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
struct Sbbf(sbbf_rs_safe::Filter, usize);

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
struct Fuse(xorf::BinaryFuse8);

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
struct StdSet(HashSet<String>);

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
type Builder = fn(&[&str]) -> Box<dyn Contender>;

fn build_blocked(keys: &[&str]) -> Box<dyn Contender> {
    let filter = BlockedBloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-blocked");
    c.insert_all(keys);
    Box::new(c)
}

fn build_split(keys: &[&str]) -> Box<dyn Contender> {
    let filter = SplitBlockBloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-split");
    c.insert_all(keys);
    Box::new(c)
}

fn build_classic(keys: &[&str]) -> Box<dyn Contender> {
    let filter = BloomFilter::new(keys.len() as u64, FPP).expect("valid parameters");
    let mut c = Phish(filter, "phishbloom-classic");
    c.insert_all(keys);
    Box::new(c)
}

fn build_fast_sip(keys: &[&str]) -> Box<dyn Contender> {
    let filter = fastbloom::BloomFilter::with_false_pos(FPP)
        .seed(&FASTBLOOM_SEED)
        .expected_items(keys.len());
    let mut c = FastSip(filter);
    c.insert_all(keys);
    Box::new(c)
}

fn build_fast_xxh3(keys: &[&str]) -> Box<dyn Contender> {
    let filter = fastbloom::BloomFilter::with_false_pos(FPP)
        .seed(&FASTBLOOM_SEED)
        .expected_items(keys.len());
    let mut c = FastXxh3(filter);
    c.insert_all(keys);
    Box::new(c)
}

fn build_bloomfilter(keys: &[&str]) -> Box<dyn Contender> {
    let filter = bloomfilter::Bloom::new_for_fp_rate_with_seed(keys.len(), FPP, &BLOOMFILTER_SEED)
        .expect("valid parameters");
    let mut c = BloomfilterCrate(filter);
    c.insert_all(keys);
    Box::new(c)
}

/// sbbf-rs-safe's bits/key at [`FPP`], computed once (in `main`, before any timing) so that
/// the ~1 ms of this benchmark's own sizing arithmetic is not charged to sbbf's build.
fn sbbf_bits() -> usize {
    static BITS: OnceLock<usize> = OnceLock::new();
    *BITS.get_or_init(|| sbbf_bits_per_key(FPP))
}

fn build_sbbf(keys: &[&str]) -> Box<dyn Contender> {
    let bits_per_key = sbbf_bits();
    let mut c = Sbbf(
        sbbf_rs_safe::Filter::new(bits_per_key, keys.len()),
        bits_per_key,
    );
    c.insert_all(keys);
    Box::new(c)
}

fn build_fuse(keys: &[&str]) -> Box<dyn Contender> {
    let mut hashes: Vec<u64> = keys.iter().map(|key| xxh3_64(key.as_bytes())).collect();
    // Construction fails on duplicate keys (and the dataset repeats some URLs).
    hashes.sort_unstable();
    hashes.dedup();
    Box::new(Fuse(
        xorf::BinaryFuse8::try_from(&hashes).expect("distinct keys build"),
    ))
}

fn build_hashset(keys: &[&str]) -> Box<dyn Contender> {
    let mut c = StdSet(HashSet::with_capacity(keys.len()));
    c.insert_all(keys);
    Box::new(c)
}

/// Every structure, in the order of the tables.
const BUILDERS: [(&str, Builder); 9] = [
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

/// A stream of non-member queries: its name, its keys, and how many of them are in fact members
/// (dataset URLs can be both benign and phishing), which false positives must not count.
struct Queries<'a> {
    name: &'static str,
    keys: Vec<&'a str>,
    true_members: usize,
}

impl<'a> Queries<'a> {
    /// A stream whose keys that are in `members` are counted as true members.
    fn new(name: &'static str, keys: Vec<&'a str>, members: &HashSet<&str>) -> Self {
        let true_members = keys.iter().filter(|k| members.contains(*k)).count();
        Queries {
            name,
            keys,
            true_members,
        }
    }
}

/// One case: members and query streams, with the criterion settings that suit its size.
struct Case<'a> {
    label: String,
    members: Vec<&'a str>,
    queries: Vec<Queries<'a>>,
    /// How many keys of each stream criterion cycles through.
    subset: usize,
    /// Largest member count at which the HashSet is built.
    hashset_max: usize,
    sample_size: usize,
    warm_up: Duration,
    measurement: Duration,
}

/// One row of the plain table.
struct Row {
    name: String,
    bits_per_key: f64,
    probes: String,
    theory: f64,
    build_ns: Option<f64>,
    member_ns: f64,
    /// Per query stream: ns/query and measured false-positive rate.
    non_member: Vec<(f64, f64)>,
}

/// Nanoseconds per item of `items` operations that took `elapsed`.
fn ns_per(elapsed: Duration, items: usize) -> f64 {
    elapsed.as_secs_f64() * 1e9 / items.max(1) as f64
}

/// Times `f` once, returning its result and the elapsed time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// The one-pass, criterion-independent measurements of one structure: rows for its single and
/// (if it has one) batched query paths.
fn one_pass(case: &Case, contender: &dyn Contender, build: Option<Duration>) -> Vec<Row> {
    let n = case.members.len();
    let bits_per_key = contender.size_bits() as f64 / n as f64;
    let mut rows = Vec::new();
    type Counter<'c> = Box<dyn Fn(&[&str]) -> usize + 'c>;
    let mut paths: Vec<(String, Counter)> = vec![(
        contender.name().to_owned(),
        Box::new(|keys: &[&str]| contender.count_hits(keys)),
    )];
    if contender.count_hits_batched(&[]).is_some() {
        paths.push((
            format!("{} batch", contender.name()),
            Box::new(|keys: &[&str]| contender.count_hits_batched(keys).unwrap_or(0)),
        ));
    }
    for (i, (name, count)) in paths.iter().enumerate() {
        let (hits, elapsed) = timed(|| count(&case.members));
        assert_eq!(hits, n, "{name}: a member was reported absent");
        let member_ns = ns_per(elapsed, n);
        let non_member = case
            .queries
            .iter()
            .map(|q| {
                let (hits, elapsed) = timed(|| count(&q.keys));
                let negatives = q.keys.len() - q.true_members;
                let fpp = (hits - q.true_members) as f64 / negatives.max(1) as f64;
                (ns_per(elapsed, q.keys.len()), fpp)
            })
            .collect();
        rows.push(Row {
            name: name.clone(),
            bits_per_key,
            probes: contender.probes(),
            theory: contender.theory(n),
            build_ns: if i == 0 {
                build.map(|b| ns_per(b, n))
            } else {
                None
            },
            member_ns,
            non_member,
        });
    }
    rows
}

/// The xxh3 floors of one pass over every stream: (name, member ns/key, per-stream ns/key).
fn hash_floor_rows(case: &Case) -> Vec<Row> {
    let floors: [(&str, Sweep); 2] = [
        ("xxh3-128 only", sweep_xxh3_128),
        ("xxh3-64 only", sweep_xxh3_64),
    ];
    floors
        .iter()
        .map(|&(name, sweep)| {
            let (sum, elapsed) = timed(|| sweep(&case.members));
            black_box(sum);
            let member_ns = ns_per(elapsed, case.members.len());
            let non_member = case
                .queries
                .iter()
                .map(|q| {
                    let (sum, elapsed) = timed(|| sweep(&q.keys));
                    black_box(sum);
                    (ns_per(elapsed, q.keys.len()), f64::NAN)
                })
                .collect();
            Row {
                name: name.to_owned(),
                bits_per_key: f64::NAN,
                probes: "-".to_owned(),
                theory: f64::NAN,
                build_ns: None,
                member_ns,
                non_member,
            }
        })
        .collect()
}

/// A pass that only hashes keys, returning a fold of the hashes.
type Sweep = fn(&[&str]) -> u64;

/// Hashes every key with xxh3-128 as phishbloom does ([`KeyHash::of`]), folding the results.
fn sweep_xxh3_128(keys: &[&str]) -> u64 {
    keys.iter().fold(0, |acc, key| {
        let hash = KeyHash::of(key.as_bytes());
        acc ^ hash.h1 ^ hash.h2
    })
}

/// Hashes every key with xxh3-64, folding the results.
fn sweep_xxh3_64(keys: &[&str]) -> u64 {
    keys.iter()
        .fold(0, |acc, key| acc ^ xxh3_64(key.as_bytes()))
}

/// Prints the plain table of one case.
fn print_table(case: &Case, rows: &[Row]) {
    let n = case.members.len();
    println!();
    println!(
        "== {}: {} members; one timed pass over all keys (Instant), ns/op ==",
        case.label, n
    );
    let mut header = format!(
        "{:<28} {:>8} {:>14} {:>8} {:>9} {:>9}",
        "structure", "bits/key", "k", "theory", "build", "member"
    );
    for q in &case.queries {
        header.push_str(&format!(
            " {:>11} {:>9}",
            format!("{}({})", short(q.name), q.keys.len()),
            "fpp"
        ));
    }
    println!("{header}");
    let cell = |x: f64, digits: usize| {
        if x.is_nan() {
            "-".to_owned()
        } else {
            format!("{x:.digits$}")
        }
    };
    for row in rows {
        let mut line = format!(
            "{:<28} {:>8} {:>14} {:>8} {:>9} {:>9.1}",
            row.name,
            cell(row.bits_per_key, 2),
            row.probes,
            cell(row.theory, 5),
            row.build_ns.map_or("-".to_owned(), |b| format!("{b:.1}")),
            row.member_ns
        );
        for &(ns, fpp) in &row.non_member {
            line.push_str(&format!(" {:>11.1} {:>9}", ns, cell(fpp, 5)));
        }
        println!("{line}");
    }
}

/// A short column label for a query stream.
fn short(name: &str) -> &str {
    name.trim_start_matches("query-")
}

/// Prints the issue's target ratios from the one-pass table, for each phishbloom layout with a
/// batched path.
fn print_ratios(case: &Case, rows: &[Row]) {
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    println!(
        "-- {} targets (one-pass ratios; criterion's follow below) --",
        case.label
    );
    for (ours, label) in [
        ("phishbloom-blocked", "blocked"),
        ("phishbloom-split", "split"),
    ] {
        let (Some(single_row), Some(batch)) = (find(ours), find(&format!("{ours} batch"))) else {
            continue;
        };
        for (i, q) in case.queries.iter().enumerate() {
            let single = single_row.non_member[i].0;
            let batched = batch.non_member[i].0;
            for peer in ["fastbloom-xxh3", "sbbf-xxh3"] {
                if let Some(p) = find(peer) {
                    let ns = p.non_member[i].0;
                    println!(
                        "{:<18} {label}/{peer} = {:.3}, {label} batch/{peer} = {:.3}",
                        q.name,
                        single / ns,
                        batched / ns
                    );
                }
            }
            println!(
                "{:<18} {label} batch/single = {:.3}",
                q.name,
                batched / single
            );
            let fpp = single_row.non_member[i].1;
            println!(
                "{:<18} {label} fpp = {:.5} (theory {:.5}; ≤ {FPP}: {}), bits/key = {:.2} (≤ 11: {})",
                q.name,
                fpp,
                single_row.theory,
                if fpp <= FPP { "met" } else { "NOT met" },
                single_row.bits_per_key,
                if single_row.bits_per_key <= 11.0 {
                    "met"
                } else {
                    "NOT met"
                }
            );
        }
        println!(
            "{:<18} {label} batch/single = {:.3}",
            "members",
            batch.member_ns / single_row.member_ns
        );
    }
}

/// Runs `op` on `iters` keys taken cyclically from `keys`, continuing from `*pos`.
fn cycle(keys: &[&str], pos: &mut usize, iters: u64, mut op: impl FnMut(&[&str])) {
    let mut left = iters;
    while left > 0 {
        let take = (keys.len() - *pos).min(usize::try_from(left).unwrap_or(usize::MAX));
        op(&keys[*pos..*pos + take]);
        *pos = (*pos + take) % keys.len();
        left -= take as u64;
    }
}

/// A criterion group for one operation of one case, timing single elements.
fn group<'c>(c: &'c mut Criterion, case: &Case, operation: &str) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(format!("{}/{operation}", case.label));
    group
        .throughput(Throughput::Elements(1))
        // Flat: every sample runs the same number of iterations, so the slow structures of
        // the 40M case finish in (sample_size × one sample) instead of a linear ramp.
        .sampling_mode(SamplingMode::Flat)
        .sample_size(case.sample_size)
        .warm_up_time(case.warm_up)
        .measurement_time(case.measurement);
    group
}

/// Benchmarks a query path: `count` per element, cycling through the case's subset of `keys`.
fn bench_queries(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    keys: &[&str],
    count: &dyn Fn(&[&str]) -> usize,
) {
    group.bench_function(id, |b| {
        let mut pos = 0;
        b.iter_custom(|iters| {
            let mut hits = 0;
            let start = Instant::now();
            cycle(keys, &mut pos, iters, |chunk| hits += count(chunk));
            let elapsed = start.elapsed();
            black_box(hits);
            elapsed
        })
    });
}

/// The criterion measurements of one case over the built structures.
fn criterion_case(c: &mut Criterion, case: &Case, contenders: &mut [Box<dyn Contender>]) {
    let members = &case.members[..case.subset.min(case.members.len())];
    let streams: Vec<(&str, &[&str])> = case
        .queries
        .iter()
        .map(|q| (q.name, &q.keys[..case.subset.min(q.keys.len())]))
        .collect();

    let mut floor = group(c, case, "hash-only");
    for (id, sweep) in [
        ("xxh3-128", sweep_xxh3_128 as Sweep),
        ("xxh3-64", sweep_xxh3_64),
    ] {
        let count = |keys: &[&str]| sweep(keys) as usize;
        bench_queries(&mut floor, id, streams[0].1, &count);
    }
    floor.finish();

    let mut insert = group(c, case, "insert");
    for contender in contenders.iter_mut().filter(|c| c.dynamic()) {
        // HashSet re-inserts would allocate and drop a String per existing key: not an insert.
        if contender.name() == "hashset-string" {
            continue;
        }
        let name = contender.name();
        insert.bench_function(name, |b| {
            let mut pos = 0;
            b.iter_custom(|iters| {
                let start = Instant::now();
                cycle(members, &mut pos, iters, |chunk| {
                    contender.insert_all(chunk)
                });
                start.elapsed()
            })
        });
    }
    insert.finish();

    let mut query_streams = vec![("query-member", members)];
    query_streams.extend(streams.iter().map(|&(name, keys)| (name, keys)));
    for (operation, keys) in query_streams {
        let mut g = group(c, case, operation);
        for contender in contenders.iter() {
            let single = |k: &[&str]| contender.count_hits(k);
            bench_queries(&mut g, contender.name(), keys, &single);
            if contender.count_hits_batched(&[]).is_some() {
                let batched = |k: &[&str]| contender.count_hits_batched(k).unwrap_or(0);
                bench_queries(
                    &mut g,
                    &format!("{}-batch", contender.name()),
                    keys,
                    &batched,
                );
            }
        }
        g.finish();
    }
}

/// Builds every structure, prints the one-pass table and ratios, then runs criterion.
fn run_case(c: &mut Criterion, case: &Case) {
    let n = case.members.len();
    let mut contenders = Vec::new();
    let mut rows = hash_floor_rows(case);
    let chosen = std::env::var("PHISHBLOOM_BENCH_STRUCTURES").ok();
    for (name, build) in BUILDERS {
        if chosen
            .as_deref()
            .is_some_and(|list| !list.split(',').any(|s| s.trim() == name))
        {
            continue;
        }
        if name == "hashset-string" && n > case.hashset_max {
            println!(
                "{}: HashSet<String> skipped at {n} keys (PHISHBLOOM_BENCH_HASHSET_MAX)",
                case.label
            );
            continue;
        }
        let (contender, elapsed) = timed(|| build(&case.members));
        rows.extend(one_pass(case, contender.as_ref(), Some(elapsed)));
        eprintln!(
            "{}: built {name} ({:.1} MB) in {:.1} s",
            case.label,
            contender.size_bits() as f64 / 8e6,
            elapsed.as_secs_f64()
        );
        contenders.push(contender);
    }
    print_table(case, &rows);
    for contender in &contenders {
        println!(
            "{:<28} size {:.2} MB",
            contender.name(),
            contender.size_bits() as f64 / 8e6
        );
    }
    print_ratios(case, &rows);
    criterion_case(c, case, &mut contenders);
}

/// A key count from the environment (underscores allowed), or `default`.
fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a whole number")),
        Err(_) => default,
    }
}

/// `40000000` → `40M`, `200000` → `200k`.
fn human(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

fn main() {
    let mut criterion = Criterion::default().without_plots().configure_from_args();
    // Criterion benchmarks only under `cargo bench` (`--bench` without `--test`); otherwise it
    // runs each benchmark once as a test, and so should the data be small.
    let args: Vec<String> = std::env::args().collect();
    let benchmarking =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let (large_default, medium_default) = if benchmarking {
        (DEFAULT_LARGE, DEFAULT_MEDIUM)
    } else {
        (TEST_LARGE, TEST_MEDIUM)
    };
    let hashset_max = env_count("PHISHBLOOM_BENCH_HASHSET_MAX", usize::MAX);
    let subset = env_count("PHISHBLOOM_BENCH_QUERIES", DEFAULT_QUERIES).max(1);
    sbbf_bits();

    // (a) The phishing dataset.
    let dataset = std::env::var_os("PHISHBLOOM_DATASET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../../../shared/data/dataset.csv"));
    match std::fs::read_to_string(&dataset) {
        Ok(text) => {
            let (phishing, benign) = read_dataset(&text);
            let random = random_urls(RANDOM_URLS, SEED_RANDOM_URLS);
            let members = phishing.views();
            let truth: HashSet<&str> = members.iter().copied().collect();
            let queries = vec![
                Queries::new("query-benign", benign.views(), &truth),
                Queries::new("query-random", random.views(), &truth),
            ];
            println!(
                "(a) {}: {} phishing URLs ({} distinct), {} benign ({} of them also phishing), {} random",
                dataset.display(),
                members.len(),
                truth.len(),
                queries[0].keys.len(),
                queries[0].true_members,
                queries[1].keys.len()
            );
            let case = Case {
                label: "a-dataset".to_owned(),
                members,
                queries,
                subset: usize::MAX,
                hashset_max: usize::MAX,
                // Small sets: 20 samples of ~0.1 s each resolve tens of ns well.
                sample_size: 20,
                warm_up: Duration::from_millis(500),
                measurement: Duration::from_secs(2),
            };
            run_case(&mut criterion, &case);
        }
        Err(error) => println!(
            "(a) skipped: cannot read the dataset {} ({error}); set PHISHBLOOM_DATASET",
            dataset.display()
        ),
    }

    // (b) Synthetic URL sets: one that fits in L3 and one that does not.
    for (var, default) in [
        ("PHISHBLOOM_BENCH_MEDIUM", medium_default),
        ("PHISHBLOOM_BENCH_LARGE", large_default),
    ] {
        let n = env_count(var, default);
        if n == 0 {
            println!("(b) {var}=0: skipped");
            continue;
        }
        let (members, elapsed) = timed(|| synthetic_keys(n, SEED_MEMBERS, MEMBER_TAG));
        let non_members = synthetic_keys(n, SEED_NON_MEMBERS, NON_MEMBER_TAG);
        eprintln!(
            "(b) generated 2 × {n} keys in {:.1} s",
            elapsed.as_secs_f64() * 2.0
        );
        let case = Case {
            label: format!("b-{}", human(n)),
            members: members.views(),
            queries: vec![Queries {
                name: "query-non-member",
                keys: non_members.views(),
                true_members: 0,
            }],
            subset,
            hashset_max,
            // Large sets: 10 samples (the minimum) of ~0.6 s, each a few million operations;
            // the whole run (three cases, ~90 benchmarks) then takes about 15 minutes.
            sample_size: 10,
            warm_up: Duration::from_millis(1500),
            measurement: Duration::from_secs(6),
        };
        run_case(&mut criterion, &case);
    }

    criterion.final_summary();
}
