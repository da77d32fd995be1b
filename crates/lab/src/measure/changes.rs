//! Section 8's measurements, "Lists that change" (issue 11): what the kinds that delete cost in
//! space, time and update size.
//!
//! - [`bits_per_key`] — bits per key against p (10⁻¹ … 10⁻⁶) of the classic, blocked, cuckoo and
//!   counting structures (structure bytes × 8 / n), each with its false-positive rate measured on
//!   fixed-seed non-members, beside the static binary fuse filters of `xorf` as a reference.
//! - [`speed`] — ns per insert, member query, non-member query and delete of the four structures
//!   and of two peers timed in the same run, back to back: `fastbloom` (a blocked Bloom filter)
//!   and `cuckoofilter` (a cuckoo filter with 8-bit fingerprints); and [`eviction`], what each
//!   cuckoo filter does when it is offered more keys than it has slots.
//! - [`deltas`] — bytes of the deltas for 1,000 … 100,000 additions, removals or both to a list
//!   of every UT1 category, exact and compact, beside the Golomb–Rice formula and the targets.
//! - [`apply`] — the time to apply a 10,000-change delta to a verified cuckoo list of 10⁶
//!   entries, in memory and as `phishbloom apply` does it (open, apply, save).
//!
//! The structures and peers, and how each is built and fed, are [`super::contenders`]'s: the
//! same ones the lab's criterion bench `benches/kinds.rs` times.

use phishbloom_blocklist::BlocklistFile;
use phishbloom_blocklist::DeltaFile;
use std::path::{Path, PathBuf};
use std::time::Instant;

use phishbloom_blocklist::delta::{Additions, Delta, DiffOptions, ListView};
use phishbloom_blocklist::engine::DEFAULT_EXPRESSION_BOUND;
use phishbloom_blocklist::entries::{read_entries, ut1_categories, EntrySet, EntrySource};
use phishbloom_blocklist::{Blocklist, BuildOptions, KeyList, Kind};
use phishbloom_filter::counting::CountingFilter;
use phishbloom_filter::cuckoo::{CuckooFilter, CuckooParams, TARGET_LOAD};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{Blocked, Bloom, Classic, Filter};
use phishbloom_url::Entry;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::Result;
use crate::keys::{sum_parallel, InlineKey, KeySpace, MEMBERS, NON_MEMBERS};
use crate::measure::contenders::{
    cuckoo_filled, cuckoo_load, key_list, visit_contenders, Contender, CuckooPeer, Visitor,
};
use crate::measure::machine::load_average;
use crate::measure::{sizing_error, timed, Settings};
use crate::stats::{median, Measurement};
use crate::theory;

/// The rates of the bits-per-key sweep: one per decade from 10⁻¹ to 10⁻⁶ (the range).
pub const RATES: [f64; 6] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
/// The rate of the delta and apply measurements: the p = 1 %.
pub const DELTA_RATE: f64 = 0.01;
/// The patch rate of the "1 KB anchor" compact delta: its additions get their own 1 % budget.
pub const ANCHOR_PATCH_FPP: f64 = 0.01;
/// The addition target: a delta of this many additions …
pub const TARGET_ADDITIONS: u64 = 1_000;
/// … in at most this many bytes at p = 1 % (seed 001's "under 1 KB", within 1.5×).
pub const TARGET_ADDITION_BYTES: u64 = 1_500;
/// The removal target: at most this many bytes per removal.
pub const TARGET_BYTES_PER_REMOVAL: f64 = 4.0;
/// The apply target: a 10,000-change delta applied to a 10⁶-entry file in this many ms.
pub const TARGET_APPLY_MS: f64 = 50.0;
/// The category the synthetic additions join (the first category when the list has none of
/// that name): new phishing sites are what a live list mostly gains.
pub const ADDITIONS_CATEGORY: &str = "phishing";
/// The category of the synthetic entries that fill the apply measurement's list up to its size.
pub const FILL_CATEGORY: &str = "synthetic";

/// Seed of the removals' random choice (any fixed value: runs repeat).
const REMOVAL_SEED: u64 = 11;
/// Query-index blocks per measured point: 2^34 indices each, more than any query count, so no
/// two points share a non-member.
const STRUCTURE_STRIDE_BITS: u32 = 34;
/// Buckets of the eviction demonstration's phishbloom cuckoo filter: 256 buckets of 4 = 1,024
/// slots, the `cuckoofilter` crate's size for a capacity of 1,024.
const EVICTION_BUCKETS: u64 = 256;
/// Fingerprint bits of the demonstration's phishbloom filter: 8, the `cuckoofilter` crate's.
const EVICTION_FINGERPRINT_BITS: u32 = 8;
/// Keys offered in the demonstration: twice the slots, so that both filters fill up.
const EVICTION_KEYS: u64 = 2_048;
/// Keys of the demonstration (distinct from the sweeps' members).
const EVICTION_SPACE: KeySpace = KeySpace::new(b"evict-");
/// Synthetic additions of the deltas: `add-<hex>.changes.test` (`.test` is reserved, RFC 2606,
/// so no UT1 entry can be one).
const ADDITION_PREFIX: &str = "add";
/// Synthetic entries filling the apply measurement's list: `fill-<hex>.changes.test`.
const FILL_PREFIX: &str = "fill";
/// Entries of the synthetic stand-in list when the UT1 folder is absent.
const STAND_IN_ENTRIES: u64 = 200_000;
/// The name the apply measurement's lists go by in messages.
const BASE_NAME: &str = "base.bloom";

/// A structure whose space, rate or speed is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Structure {
    /// phishbloom's classic Bloom filter.
    Classic,
    /// phishbloom's cache-line blocked Bloom filter.
    Blocked,
    /// phishbloom's cuckoo filter (buckets of 4, f = ⌈log₂(8/p)⌉, 95 % load).
    Cuckoo,
    /// phishbloom's counting Bloom filter (4-bit counters).
    Counting,
    /// `xorf::BinaryFuse8`, static: the reference for 8-bit fingerprints.
    BinaryFuse8,
    /// `xorf::BinaryFuse16`, static: the reference for 16-bit fingerprints.
    BinaryFuse16,
    /// The `fastbloom` crate fed xxh3-64: the Bloom peer.
    Fastbloom,
    /// The `cuckoofilter` crate (8-bit fingerprints, SipHash): the cuckoo peer.
    CuckoofilterCrate,
}

impl Structure {
    /// The name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Structure::Classic => "classic",
            Structure::Blocked => "blocked",
            Structure::Cuckoo => "cuckoo",
            Structure::Counting => "counting",
            Structure::BinaryFuse8 => "xorf BinaryFuse8",
            Structure::BinaryFuse16 => "xorf BinaryFuse16",
            Structure::Fastbloom => "fastbloom",
            Structure::CuckoofilterCrate => "cuckoofilter crate",
        }
    }

    /// Whether it is one of phishbloom's own structures (not a peer or a reference).
    pub fn is_ours(self) -> bool {
        matches!(
            self,
            Structure::Classic | Structure::Blocked | Structure::Cuckoo | Structure::Counting
        )
    }

    /// The peer an own structure is compared with: `fastbloom` for the Bloom kinds, the
    /// `cuckoofilter` crate for the cuckoo filter. Deletes of the counting filter are compared
    /// with the `cuckoofilter` crate's (no Bloom peer deletes).
    pub fn peer(self, delete: bool) -> Option<Structure> {
        match (self, delete) {
            (Structure::Cuckoo, _) | (Structure::Counting, true) => {
                Some(Structure::CuckoofilterCrate)
            }
            (Structure::Classic | Structure::Blocked | Structure::Counting, false) => {
                Some(Structure::Fastbloom)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Structure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------------
// (a) Bits per key against p.

/// One measured point of the bits-per-key sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BitsPoint {
    /// The structure.
    pub structure: Structure,
    /// The rate it was sized for (a binary fuse filter's own 2^−f).
    pub p: f64,
    /// Keys inserted.
    pub n: u64,
    /// Bytes of its bits, slots, counters or fingerprints.
    pub bytes: u64,
    /// bytes × 8 / n.
    pub bits_per_key: f64,
    /// The bits per key its formula gives for p (and n, for binary fuse).
    pub formula_bits_per_key: f64,
    /// The load factor a cuckoo filter was sized for (95 %, lower if a build was refused).
    pub load: Option<f64>,
    /// Members answered "absent" (must be 0).
    pub false_negatives: u64,
    /// The rate on fresh non-members, against the structure's own predicted rate (for the
    /// cuckoo filter, the paper's upper bound 2bα/2^f).
    pub measured: Measurement,
}

/// The formula's bits per key of a structure at rate `p` and `n` keys.
pub fn formula_bits_per_key(structure: Structure, p: f64, n: u64) -> f64 {
    match structure {
        Structure::Classic | Structure::Blocked | Structure::Fastbloom => {
            theory::bloom_bits_per_key(p)
        }
        Structure::Cuckoo | Structure::CuckoofilterCrate => {
            theory::cuckoo_bits_per_key_continuous(p, TARGET_LOAD)
        }
        Structure::Counting => phishbloom_filter::counting::counting_bits_per_key(p),
        Structure::BinaryFuse8 => theory::binary_fuse_bits_per_key(8, n),
        Structure::BinaryFuse16 => theory::binary_fuse_bits_per_key(16, n),
    }
}

/// Inserts keys `0..n` of [`MEMBERS`] into a contender; `false` if one was refused.
fn insert_members<C: Contender>(filter: &mut C, n: u64) -> bool {
    let mut key = InlineKey::default();
    (0..n).all(|i| filter.insert(MEMBERS.write(i, &mut key)))
}

/// Counts the keys of `space` in `range` that a contender answers "present" for, on
/// `threads` threads.
fn count_present<C: Contender>(
    filter: &C,
    space: KeySpace,
    range: std::ops::Range<u64>,
    threads: usize,
) -> u64 {
    sum_parallel(range, threads, |part| {
        let mut key = InlineKey::default();
        part.filter(|&i| filter.contains(space.write(i, &mut key)))
            .count() as u64
    })
}

/// The points of the bits-per-key sweep at `n` keys, each queried on its own block of
/// non-members.
struct Sweep<'a> {
    settings: &'a Settings,
    n: u64,
    /// The first query index of the last point's block: each point moves it to the next
    /// block, so no two points share a non-member.
    offset: u64,
}

impl Sweep<'_> {
    /// Measures a built contender sized for rate `p`: members re-queried, then non-members
    /// from the next block, as many as `theoretical` (its predicted rate) asks for.
    fn point<C: Contender>(
        &mut self,
        structure: Structure,
        filter: &C,
        p: f64,
        load: Option<f64>,
        theoretical: f64,
    ) -> BitsPoint {
        let (settings, n) = (self.settings, self.n);
        self.offset += 1 << STRUCTURE_STRIDE_BITS;
        let offset = self.offset;
        let sizes = &settings.sizes;
        let queries = theory::queries_for(
            theoretical,
            sizes.changes_target_false_positives,
            sizes.changes_min_queries,
            sizes.changes_max_queries,
        );
        let false_negatives = n - count_present(filter, MEMBERS, 0..n, settings.threads);
        let hits = count_present(
            filter,
            NON_MEMBERS,
            offset..offset + queries,
            settings.threads,
        );
        let bytes = filter.bytes();
        BitsPoint {
            structure,
            p,
            n,
            bytes,
            bits_per_key: bytes as f64 * 8.0 / n as f64,
            formula_bits_per_key: formula_bits_per_key(structure, p, n),
            load,
            false_negatives,
            measured: Measurement::new(hits, queries, theoretical),
        }
    }

    /// Inserts the `n` members into `filter`, built for rate `p`, and measures it
    /// ([`Sweep::point`]) against the rate `theoretical` predicts for it at `n` keys.
    fn filled<C: Contender>(
        &mut self,
        structure: Structure,
        mut filter: C,
        p: f64,
        theoretical: fn(&C, u64) -> f64,
    ) -> BitsPoint {
        insert_members(&mut filter, self.n);
        let theoretical = theoretical(&filter, self.n);
        self.point(structure, &filter, p, None, theoretical)
    }
}

/// A static binary fuse filter over the members' xxh3-64 hashes, as a contender.
struct Fuse<F>(F, u64);

impl<F: xorf::Filter<u64> + Sync> Contender for Fuse<F> {
    fn insert(&mut self, _key: &[u8]) -> bool {
        // Static: built from every key at once.
        false
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(&xxh3_64(key))
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
    fn bytes(&self) -> u64 {
        self.1
    }
    const DELETES: bool = false;
}

/// The binary fuse references at `n` keys: 8- and 16-bit fingerprints.
fn fuse_points(sweep: &mut Sweep<'_>) -> Result<Vec<BitsPoint>> {
    let n = sweep.n;
    let mut key = InlineKey::default();
    let hashes: Vec<u64> = (0..n)
        .map(|i| xxh3_64(MEMBERS.write(i, &mut key)))
        .collect();
    let failed = |reason: &str| crate::Error::Unbuildable {
        experiment: "binary fuse filter",
        reason: format!("xorf could not build it from {n} keys: {reason}"),
    };
    let fuse8 = xorf::BinaryFuse8::try_from(&hashes).map_err(failed)?;
    let bytes8 = fuse8.fingerprints.len() as u64;
    let fuse16 = xorf::BinaryFuse16::try_from(&hashes).map_err(failed)?;
    let bytes16 = fuse16.fingerprints.len() as u64 * 2;
    drop(hashes);
    let (p8, p16) = (theory::binary_fuse_fpp(8), theory::binary_fuse_fpp(16));
    Ok(vec![
        sweep.point(Structure::BinaryFuse8, &Fuse(fuse8, bytes8), p8, None, p8),
        sweep.point(
            Structure::BinaryFuse16,
            &Fuse(fuse16, bytes16),
            p16,
            None,
            p16,
        ),
    ])
}

/// Part (a): every own structure at every rate of [`RATES`], then the binary fuse references,
/// all at the sizes' `changes_bits_keys`.
pub fn bits_per_key(settings: &Settings) -> Result<Vec<BitsPoint>> {
    let n = settings.sizes.changes_bits_keys;
    let mut points = Vec::new();
    let mut sweep = Sweep {
        settings,
        n,
        offset: 0,
    };
    let fill = |filter: &mut CuckooFilter| insert_members(filter, n).then_some(());
    for &p in &RATES {
        settings.progress.say(&format!(
            "lists that change: bits per key at p = {p:e}, n = {n}"
        ));
        let sized = || sizing_error("bits per key", 0, 0);
        let classic = Bloom::<Classic>::new(n, p).map_err(sized())?;
        let fpp = |filter: &Bloom<Classic>, n| filter.theoretical_fpp(n as f64);
        points.push(sweep.filled(Structure::Classic, classic, p, fpp));
        let blocked = Bloom::<Blocked>::new(n, p).map_err(sized())?;
        let fpp = |filter: &Bloom<Blocked>, n| filter.theoretical_fpp(n as f64);
        points.push(sweep.filled(Structure::Blocked, blocked, p, fpp));
        let (cuckoo, load, ()) = cuckoo_filled(n, p, fill)?;
        let theoretical = cuckoo.expected_fpp();
        points.push(sweep.point(Structure::Cuckoo, &cuckoo, p, Some(load), theoretical));
        drop(cuckoo);
        let counting = CountingFilter::new(n, p).map_err(sized())?;
        let fpp = |filter: &CountingFilter, _| filter.expected_fpp();
        points.push(sweep.filled(Structure::Counting, counting, p, fpp));
    }
    settings
        .progress
        .say("lists that change: binary fuse references");
    points.extend(fuse_points(&mut sweep)?);
    Ok(points)
}

// ---------------------------------------------------------------------------------------------
// (b) Speed.

/// The timed passes of one structure at one n: medians over the repetitions.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SpeedRow {
    /// Keys.
    pub n: u64,
    /// The structure.
    pub structure: Structure,
    /// Bytes of the structure.
    pub bytes: u64,
    /// Fraction of its slots in use after the inserts (cuckoo filters; `None` otherwise).
    pub load: Option<f64>,
    /// Median ns per insert (the whole build of n keys, from an empty structure).
    pub insert_ns: f64,
    /// Median ns per query of a member.
    pub member_ns: f64,
    /// Median ns per query of a non-member.
    pub non_member_ns: f64,
    /// Median ns per delete of a member (structures that delete).
    pub delete_ns: Option<f64>,
    /// Inserts refused (a full cuckoo filter), in the last repetition.
    pub refused: u64,
    /// Members answered "absent" after the inserts, in the last repetition (0 unless keys were
    /// dropped, as the `cuckoofilter` crate does when full).
    pub false_negatives: u64,
    /// Non-members answered "present", in the last repetition.
    pub false_positives: u64,
    /// Deletes that found nothing to delete, in the last repetition.
    pub failed_deletes: u64,
}

/// Timings of one repetition.
#[derive(Default)]
struct Pass {
    insert: f64,
    member: f64,
    non_member: f64,
    delete: Option<f64>,
    refused: u64,
    false_negatives: u64,
    false_positives: u64,
    failed_deletes: u64,
    bytes: u64,
    load: Option<f64>,
}

/// One repetition on an empty structure: times inserting `members`, querying them and
/// `non_members`, and deleting the members. Single-threaded (ns per operation).
fn pass<C: Contender>(mut filter: C, members: &KeyList, non_members: &KeyList) -> Pass {
    let n = members.len().max(1) as f64;
    let ns = |seconds: f64, count: f64| seconds * 1e9 / count;
    let started = Instant::now();
    let refused = members.iter().filter(|key| !filter.insert(key)).count() as u64;
    let insert = ns(started.elapsed().as_secs_f64(), n);
    let started = Instant::now();
    let found = members.iter().filter(|key| filter.contains(key)).count() as u64;
    let member = ns(started.elapsed().as_secs_f64(), n);
    let started = Instant::now();
    let false_positives = non_members
        .iter()
        .filter(|key| filter.contains(key))
        .count() as u64;
    let non_member = ns(
        started.elapsed().as_secs_f64(),
        non_members.len().max(1) as f64,
    );
    let bytes = filter.bytes();
    let load = filter.load();
    let (delete, failed_deletes) = if C::DELETES {
        let started = Instant::now();
        let failed = members.iter().filter(|key| !filter.remove(key)).count() as u64;
        (Some(ns(started.elapsed().as_secs_f64(), n)), failed)
    } else {
        (None, 0)
    };
    Pass {
        insert,
        member,
        non_member,
        delete,
        refused,
        false_negatives: members.len() as u64 - found,
        false_positives,
        failed_deletes,
        bytes,
        load,
    }
}

/// The median row of a structure's passes.
fn speed_row(n: u64, structure: Structure, passes: &[Pass]) -> SpeedRow {
    let of = |f: fn(&Pass) -> f64| median(&passes.iter().map(f).collect::<Vec<_>>());
    // At least one pass ran (repetitions ≥ 1).
    let last = &passes[passes.len() - 1];
    SpeedRow {
        n,
        structure,
        bytes: last.bytes,
        load: last.load,
        insert_ns: of(|p| p.insert),
        member_ns: of(|p| p.member),
        non_member_ns: of(|p| p.non_member),
        delete_ns: last.delete.map(|_| of(|p| p.delete.unwrap_or(0.0))),
        refused: last.refused,
        false_negatives: last.false_negatives,
        false_positives: last.false_positives,
        failed_deletes: last.failed_deletes,
    }
}

/// The passes of one repetition, structure by structure: a [`Visitor`] that times each
/// structure of [`visit_contenders`] once.
struct Passes<'a> {
    members: &'a KeyList,
    non_members: &'a KeyList,
    /// Every structure's passes so far, in the order visited.
    passes: Vec<(Structure, Vec<Pass>)>,
}

impl Visitor for Passes<'_> {
    fn visit<C: Contender>(
        &mut self,
        structure: Structure,
        make: impl Fn() -> Result<C>,
    ) -> Result<()> {
        let run = pass(make()?, self.members, self.non_members);
        match self.passes.iter_mut().find(|(s, _)| *s == structure) {
            Some((_, runs)) => runs.push(run),
            None => self.passes.push((structure, vec![run])),
        }
        Ok(())
    }
}

/// Part (b): at each n of the sizes' `changes_speed_keys`, every structure and peer built and
/// timed `changes_speed_repetitions` times, interleaved (all structures once, then again), at
/// p = 1 %; the rows hold the medians.
pub fn speed(settings: &Settings) -> Result<Vec<SpeedRow>> {
    let sizes = &settings.sizes;
    let reps = sizes.changes_speed_repetitions.max(1);
    let p = DELTA_RATE;
    let mut rows = Vec::new();
    for &n in &sizes.changes_speed_keys {
        settings.progress.say(&format!(
            "lists that change: ns per operation at n = {n}, {reps} repetitions"
        ));
        let members = key_list(MEMBERS, n);
        let non_members = key_list(NON_MEMBERS, n);
        // The cuckoo filter's load: 95 %, lower if the keys need it (found once, untimed).
        let load = cuckoo_load(n, p, &members)?;
        let mut passes = Passes {
            members: &members,
            non_members: &non_members,
            passes: Vec::new(),
        };
        for _ in 0..reps {
            visit_contenders(n, p, load, &mut passes)?;
        }
        for (structure, runs) in &passes.passes {
            rows.push(speed_row(n, *structure, runs));
        }
    }
    Ok(rows)
}

/// What each cuckoo filter did with more keys than slots.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EvictionFilter {
    /// Slots (buckets × 4).
    pub slots: u64,
    /// Bits per fingerprint.
    pub fingerprint_bits: u32,
    /// Inserts that reported success.
    pub accepted: u64,
    /// Inserts that reported failure.
    pub refused: u64,
    /// Keys whose insert reported success and that the filter then answered "absent": silent
    /// false negatives.
    pub lost: u64,
}

/// The demonstration: the same keys offered to both cuckoo filters, twice their slots.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Eviction {
    /// Keys offered.
    pub offered: u64,
    /// phishbloom's cuckoo filter.
    pub ours: EvictionFilter,
    /// The `cuckoofilter` crate (its eviction path uses `rand::thread_rng`, so its counts vary
    /// a little from run to run).
    pub peer: EvictionFilter,
}

/// Offers [`EVICTION_KEYS`] keys to a contender; counts accepted and refused keys, then how
/// many accepted keys it no longer finds.
fn offer<C: Contender>(filter: &mut C) -> (u64, u64, u64) {
    let mut key = InlineKey::default();
    let accepted: Vec<u64> = (0..EVICTION_KEYS)
        .filter(|&i| filter.insert(EVICTION_SPACE.write(i, &mut key)))
        .collect();
    let lost = accepted
        .iter()
        .filter(|&&i| !filter.contains(EVICTION_SPACE.write(i, &mut key)))
        .count() as u64;
    let accepted_count = accepted.len() as u64;
    (accepted_count, EVICTION_KEYS - accepted_count, lost)
}

/// Offers twice as many keys as slots to phishbloom's cuckoo filter and to the `cuckoofilter`
/// crate's (both 1,024 slots of 8-bit fingerprints) and counts the keys each lost silently.
pub fn eviction() -> Result<Eviction> {
    let mut ours = CuckooFilter::with_params(&CuckooParams {
        num_buckets: EVICTION_BUCKETS,
        fingerprint_bits: EVICTION_FINGERPRINT_BITS,
        items: 0,
        expected_items: 0,
        target_fpp: None,
    })
    .map_err(sizing_error("eviction", 0, 0))?;
    let (accepted, refused, lost) = offer(&mut ours);
    let ours = EvictionFilter {
        slots: EVICTION_BUCKETS * 4,
        fingerprint_bits: EVICTION_FINGERPRINT_BITS,
        accepted,
        refused,
        lost,
    };
    let slots = EVICTION_BUCKETS as usize * 4;
    let mut peer = CuckooPeer::with_capacity(slots);
    let (accepted, refused, lost) = offer(&mut peer);
    let peer = EvictionFilter {
        slots: peer.bytes(),
        fingerprint_bits: 8,
        accepted,
        refused,
        lost,
    };
    Ok(Eviction {
        offered: EVICTION_KEYS,
        ours,
        peer,
    })
}

// ---------------------------------------------------------------------------------------------
// (c) Delta sizes.

/// Where the delta measurement's list came from.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ListSource {
    /// What was read: `UT1 (N category folders)`, or the stand-in's description.
    pub description: String,
    /// Category folders read (0 for the stand-in).
    pub folders: usize,
    /// Distinct entries.
    pub entries: u64,
    /// Categories.
    pub categories: usize,
}

/// What changes between the two versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ChangeKind {
    /// New (synthetic) entries only.
    Additions,
    /// Existing entries, chosen at random, only.
    Removals,
    /// Half additions, half removals.
    Mixed,
}

impl ChangeKind {
    /// The name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Additions => "additions",
            ChangeKind::Removals => "removals",
            ChangeKind::Mixed => "mixed",
        }
    }

    /// Additions and removals of a change of `count` entries.
    pub fn split(self, count: u64) -> (u64, u64) {
        match self {
            ChangeKind::Additions => (count, 0),
            ChangeKind::Removals => (0, count),
            ChangeKind::Mixed => (count / 2, count - count / 2),
        }
    }
}

/// How the delta encodes its additions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Encoding {
    /// Whole 64-bit fingerprints and removal positions (every kind can apply it).
    Exact,
    /// Prefixes at the default patch rate: the list's rate × additions / entries.
    Compact,
    /// Prefixes with `patch_fpp = 0.01`: the additions get their own 1 % budget.
    CompactAnchor,
}

impl Encoding {
    /// The name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Exact => "exact",
            Encoding::Compact => "compact (default patch rate)",
            Encoding::CompactAnchor => "compact, patch_fpp = 0.01",
        }
    }
}

/// One delta measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeltaRow {
    /// Probes per checked item the list is sized for: 20 (URL entries, the default build) or 1
    /// (p = 1 % per probe, as a list of whole keys).
    pub probes: u32,
    /// What changed.
    pub change: ChangeKind,
    /// Entries changed.
    pub changed: u64,
    /// Of those, added.
    pub added: u64,
    /// Of those, removed.
    pub removed: u64,
    /// How the additions are encoded.
    pub encoding: Encoding,
    /// Prefix bits of a compact delta's additions (64 for an exact one).
    pub addition_bits: u32,
    /// Bytes of the delta file.
    pub bytes: u64,
    /// The formula's bytes: the delta's uncoded parts as written (header, checksum, and the
    /// extras: category names, count changes, category indices, exceptions), plus
    /// `log₂(U/n) + 1.5` bits per coded value (additions over 2^bits, removal positions over
    /// the base's entries).
    pub formula_bytes: f64,
}

impl DeltaRow {
    /// Bytes per changed entry.
    pub fn bytes_per_change(&self) -> f64 {
        self.bytes as f64 / self.changed.max(1) as f64
    }
}

/// Part (c)'s results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Deltas {
    /// The list.
    pub list: ListSource,
    /// Bytes of a delta that changes nothing (header, checksum, empty parts).
    pub empty_bytes: u64,
    /// Every delta measured.
    pub rows: Vec<DeltaRow>,
}

/// The UT1 folder beside the dataset (`../shared/data/ut1` for `../shared/data/dataset.csv`).
pub fn ut1_root(settings: &Settings) -> PathBuf {
    settings.data.parent().unwrap_or(Path::new(".")).join("ut1")
}

/// Bytes of a UT1 category folder's `domains` and `urls` files.
fn folder_bytes(folder: &Path) -> u64 {
    ["domains", "urls"]
        .iter()
        .filter_map(|name| std::fs::metadata(folder.join(name)).ok())
        .map(|m| m.len())
        .sum()
}

/// `count` synthetic domain entries `<prefix>-<hex>.changes.test`, from index `start`.
fn synthetic_entries(prefix: &str, start: u64, count: u64) -> Vec<Entry> {
    (start..start + count)
        .filter_map(|i| Entry::parse(format!("{prefix}-{i:x}.changes.test").as_bytes()).ok())
        .collect()
}

/// The list of every UT1 category folder under the UT1 root (in `--quick` runs only folders
/// while their files stay within the sizes' `changes_ut1_bytes`), or a synthetic stand-in of
/// [`STAND_IN_ENTRIES`] entries in four categories when there is no UT1 folder.
pub fn read_list(settings: &Settings) -> Result<(EntrySet, ListSource)> {
    let root = ut1_root(settings);
    let Ok(all) = ut1_categories(&root) else {
        let entries = synthetic_entries("listed", 0, STAND_IN_ENTRIES);
        let categories: Vec<String> = ["phishing", "malware", "gambling", "adult"]
            .map(String::from)
            .to_vec();
        let membership = (0..entries.len())
            .map(|i| vec![(i % categories.len()) as u16])
            .collect();
        let set = EntrySet {
            entries,
            categories,
            membership,
            exceptions: Vec::new(),
        };
        let source = ListSource {
            description: format!(
                "a synthetic stand-in ({} domain entries in 4 categories): no UT1 folder at {}",
                set.entries.len(),
                root.display()
            ),
            folders: 0,
            entries: set.entries.len() as u64,
            categories: set.categories.len(),
        };
        return Ok((set, source));
    };
    let budget = settings.sizes.changes_ut1_bytes;
    let mut used = 0u64;
    let folders: Vec<PathBuf> = all
        .into_iter()
        .filter(|folder| {
            let bytes = folder_bytes(folder);
            let fits = used.saturating_add(bytes) <= budget;
            if fits {
                used += bytes;
            }
            fits
        })
        .collect();
    let sources: Vec<EntrySource> = folders.iter().cloned().map(EntrySource::Ut1).collect();
    let (set, _) = read_entries(&sources)?;
    let source = ListSource {
        description: format!(
            "UT1 at {}: {} category folders{}",
            root.display(),
            folders.len(),
            if budget == u64::MAX {
                " (all)".to_string()
            } else {
                format!(" (those that fit in {budget} bytes of list files: a --quick run)")
            }
        ),
        folders: folders.len(),
        entries: set.entries.len() as u64,
        categories: set.categories.len(),
    };
    Ok((set, source))
}

/// `count` distinct positions below `len`, chosen with a fixed seed (a partial Fisher–Yates
/// shuffle), ascending.
fn random_positions(len: usize, count: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut positions: Vec<usize> = (0..len).collect();
    let count = count.min(len);
    for i in 0..count {
        let j = i + rng.below((len - i) as u64) as usize;
        positions.swap(i, j);
    }
    positions.truncate(count);
    positions.sort_unstable();
    positions
}

/// The view after a change: `base` without the entries at `removed` (ascending positions) and
/// with `added` (fingerprints and categories).
fn changed_view(base: &ListView, removed: &[usize], added: &[(u64, Vec<u16>)]) -> ListView {
    let mut gone = removed.iter().peekable();
    let mut pairs: Vec<(u64, Vec<u16>)> = Vec::with_capacity(base.entries.len() + added.len());
    for (i, pair) in base.entries.iter().enumerate() {
        if gone.next_if_eq(&&i).is_some() {
            continue;
        }
        pairs.push(pair.clone());
    }
    pairs.extend(added.iter().cloned());
    let mut view = ListView::new(
        base.scheme,
        base.probes_per_item,
        pairs,
        base.categories.clone(),
        base.exceptions.clone(),
    );
    view.target_fpp = base.target_fpp;
    view
}

/// Fingerprints and categories of `count` synthetic additions in category `category` of a list
/// with these categories, as [`ListView::of_entries`] computes them.
fn additions(categories: &[String], category: u16, start: u64, count: u64) -> Vec<(u64, Vec<u16>)> {
    let entries = synthetic_entries(ADDITION_PREFIX, start, count);
    let set = EntrySet {
        membership: vec![vec![category]; entries.len()],
        entries,
        categories: categories.to_vec(),
        exceptions: Vec::new(),
    };
    ListView::of_entries(&set, 1).entries
}

/// The formula's bytes of a delta (see [`DeltaRow::formula_bytes`]): its uncoded parts as
/// written, plus `log₂(U/n) + 1.5` bits per coded value.
fn formula_bytes(delta: &Delta, addition_bits: u32) -> f64 {
    let coded = |count: usize, universe: f64| {
        if count == 0 {
            0.0
        } else {
            count as f64 * theory::golomb_bits_per_value(universe, count as u64) / 8.0
        }
    };
    let parts = delta.part_sizes();
    (parts.fixed + parts.extras) as f64
        + coded(delta.added.len(), 2f64.powi(addition_bits as i32))
        + coded(delta.removed.len(), delta.base.entries as f64)
}

/// Part (c): deltas of every count of the sizes' `changes_delta_counts`, for additions,
/// removals and both, exact and (with additions) compact at the default patch rate and at
/// `patch_fpp = 0.01` — for the list sized for 20 probes per URL and for 1 probe per item, both
/// at p = 1 %.
pub fn deltas(settings: &Settings, set: &EntrySet, list: ListSource) -> Result<Deltas> {
    settings.progress.say(&format!(
        "lists that change: delta sizes on {} entries",
        list.entries
    ));
    let category = set
        .categories
        .iter()
        .position(|c| c == ADDITIONS_CATEGORY)
        .unwrap_or(0) as u16;
    let base20 = ListView::of_entries(set, DEFAULT_EXPRESSION_BOUND);
    let options = |encoding: Encoding| DiffOptions {
        compact: encoding != Encoding::Exact,
        patch_fpp: (encoding == Encoding::CompactAnchor).then_some(ANCHOR_PATCH_FPP),
        fpp: Some(DELTA_RATE),
        created: 0,
    };
    let empty_bytes = Delta::between(&base20, &base20, &options(Encoding::Exact))?
        .to_bytes()
        .len() as u64;
    let mut rows = Vec::new();
    for probes in [DEFAULT_EXPRESSION_BOUND, 1] {
        let mut base = base20.clone();
        base.probes_per_item = probes;
        for &count in &settings.sizes.changes_delta_counts {
            for change in [
                ChangeKind::Additions,
                ChangeKind::Removals,
                ChangeKind::Mixed,
            ] {
                let (add, remove) = change.split(count);
                let removed =
                    random_positions(base.entries.len(), remove as usize, REMOVAL_SEED ^ count);
                let added = additions(&set.categories, category, 0, add);
                let new = changed_view(&base, &removed, &added);
                let encodings: &[Encoding] = if add > 0 {
                    &[Encoding::Exact, Encoding::Compact, Encoding::CompactAnchor]
                } else {
                    &[Encoding::Exact]
                };
                for &encoding in encodings {
                    let delta = Delta::between(&base, &new, &options(encoding))?;
                    let addition_bits = match &delta.added {
                        Additions::Exact(_) => 64,
                        Additions::Prefixes { bits, .. } => *bits,
                    };
                    rows.push(DeltaRow {
                        probes,
                        change,
                        changed: added.len() as u64 + removed.len() as u64,
                        added: added.len() as u64,
                        removed: removed.len() as u64,
                        encoding,
                        addition_bits,
                        bytes: delta.to_bytes().len() as u64,
                        formula_bytes: formula_bytes(&delta, addition_bits),
                    });
                }
            }
        }
    }
    Ok(Deltas {
        list,
        empty_bytes,
        rows,
    })
}

// ---------------------------------------------------------------------------------------------
// (d) Time to apply.

/// Part (d)'s results: the list, the delta, and the timed runs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ApplyTimes {
    /// Entries of the list the delta is applied to.
    pub entries: u64,
    /// Of those, read from the delta measurement's list (UT1).
    pub listed_entries: u64,
    /// Of those, synthetic (`fill-<hex>.changes.test`) to reach the size.
    pub synthetic_entries: u64,
    /// Categories of the list.
    pub categories: usize,
    /// Bytes of the blocklist file.
    pub file_bytes: u64,
    /// Entries the delta adds.
    pub added: u64,
    /// Entries the delta removes.
    pub removed: u64,
    /// Bytes of the delta file.
    pub delta_bytes: u64,
    /// Seconds of `Blocklist::apply` on a list in memory, per run.
    pub memory: Vec<f64>,
    /// Seconds of `Blocklist::open` of the file, per run.
    pub open: Vec<f64>,
    /// Seconds of `Delta::open`, per run.
    pub delta_open: Vec<f64>,
    /// Seconds of `Blocklist::apply` after opening the file, per run.
    pub file_apply: Vec<f64>,
    /// Seconds of `Blocklist::save` over the file (temporary file, fsync, rename), per run.
    pub save: Vec<f64>,
    /// The machine's load averages when the runs started (`None` off Linux): the times are
    /// wall-clock on a shared machine.
    pub load_average: Option<String>,
    /// Seconds of `Verification::update` alone — the step of `apply` that rewrites the
    /// verification table — on a copy of the list's table with the delta's change, per run.
    pub table_update: Vec<f64>,
    /// Seconds of `Blocklist::apply` in memory to the same entries in one category (a delta of
    /// the same size), per run: the verification table's one-category path.
    pub one_category: Vec<f64>,
}

impl ApplyTimes {
    /// Median ms of the apply in memory.
    pub fn memory_ms(&self) -> f64 {
        median(&self.memory) * 1e3
    }

    /// Median ms of the apply in memory to the one-category list.
    pub fn one_category_ms(&self) -> f64 {
        median(&self.one_category) * 1e3
    }

    /// Median ms of open + apply + save (what `phishbloom apply` does), per run summed.
    pub fn file_ms(&self) -> f64 {
        let totals: Vec<f64> = (0..self.open.len())
            .map(|i| self.open[i] + self.delta_open[i] + self.file_apply[i] + self.save[i])
            .collect();
        median(&totals) * 1e3
    }
}

/// The blocklist of `set` built with `options`, and a mixed delta of `changes` changes to it:
/// half new synthetic entries (in [`ADDITIONS_CATEGORY`] or the first category), half removals
/// of entries chosen at random.
fn list_and_delta(
    set: &EntrySet,
    options: &BuildOptions,
    changes: u64,
) -> Result<(Blocklist, Delta)> {
    let list = Blocklist::from_entries(set, options)?;
    let base = ListView::of_blocklist(&list, Path::new(BASE_NAME))?;
    let (add, remove) = ChangeKind::Mixed.split(changes);
    let removed = random_positions(base.entries.len(), remove as usize, REMOVAL_SEED);
    let category = set
        .categories
        .iter()
        .position(|c| c == ADDITIONS_CATEGORY)
        .unwrap_or(0) as u16;
    let added = additions(&set.categories, category, 0, add);
    let new = changed_view(&base, &removed, &added);
    let delta = Delta::between(
        &base,
        &new,
        &DiffOptions {
            fpp: Some(DELTA_RATE),
            ..DiffOptions::default()
        },
    )?;
    Ok((list, delta))
}

/// Seconds of `runs` applies of `delta` in memory, each to a fresh copy of the list of `bytes`
/// (read untimed).
fn memory_applies(bytes: &[u8], delta: &Delta, runs: usize) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut copy = Blocklist::from_bytes(BASE_NAME, bytes)?;
        let (applied, took) = timed(|| copy.apply(delta));
        applied?;
        times.push(took.as_secs_f64());
    }
    Ok(times)
}

/// Seconds of `runs` calls of `Verification::update` with `delta`'s change (the entries it adds
/// with their categories, the fingerprints at the positions it removes), each on a fresh copy
/// of `list`'s table (copied untimed): the step of `Blocklist::apply` that rewrites the table.
fn table_updates(list: &Blocklist, delta: &Delta, runs: usize) -> Result<Vec<f64>> {
    let table = list
        .verification()
        .ok_or_else(|| crate::Error::Unbuildable {
            experiment: "apply",
            reason: "the list was built without its verification section".to_string(),
        })?;
    let fingerprints = table.fingerprints().as_slice();
    let removed: Vec<u64> = delta
        .removed
        .iter()
        .filter_map(|&p| fingerprints.get(p as usize).copied())
        .collect();
    let added: Vec<(u64, Vec<u16>)> = match &delta.added {
        Additions::Exact(values) => values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let ids = delta.added_categories.get(i).cloned();
                (v, ids.unwrap_or_else(|| vec![0]))
            })
            .collect(),
        Additions::Prefixes { .. } => Vec::new(),
    };
    let with_sets = list.categories().len() > 1;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut copy = table.clone();
        let ((), took) = timed(|| copy.update(&added, &removed, with_sets));
        times.push(took.as_secs_f64());
    }
    Ok(times)
}

/// Part (d): a verified cuckoo blocklist (p = 1 %, 20 probes per URL) of the sizes'
/// `changes_apply_entries` entries — the list's entries first, synthetic ones after them if it
/// has fewer — and a mixed delta of `changes_apply_changes` changes (half new entries, half
/// removals chosen at random), applied `changes_apply_runs` times to a fresh copy: in memory
/// (`Blocklist::from_bytes`, untimed, then `apply`), and as a file (copied into place, untimed,
/// then `Blocklist::open`, `Delta::open`, `apply`, `save`); and, for comparison, in memory to
/// the same entries in one category.
pub fn apply(settings: &Settings, set: &EntrySet) -> Result<ApplyTimes> {
    let sizes = &settings.sizes;
    let target = sizes.changes_apply_entries;
    let listed = (set.entries.len() as u64).min(target);
    let fill = target - listed;
    settings.progress.say(&format!(
        "lists that change: apply, a cuckoo list of {listed} listed + {fill} synthetic entries"
    ));
    let mut entries: Vec<Entry> = set.entries[..listed as usize].to_vec();
    let mut membership: Vec<Vec<u16>> = set.membership[..listed as usize].to_vec();
    let mut categories = set.categories.clone();
    if fill > 0 {
        categories.push(FILL_CATEGORY.to_string());
        let id = (categories.len() - 1) as u16;
        let synthetic = synthetic_entries(FILL_PREFIX, 0, fill);
        membership.extend(std::iter::repeat_n(vec![id], synthetic.len()));
        entries.extend(synthetic);
    }
    let whole = EntrySet {
        entries,
        categories,
        membership,
        exceptions: set.exceptions.clone(),
    };
    let options = BuildOptions {
        kind: Kind::Cuckoo,
        fpp: DELTA_RATE,
        verify: true,
        threads: settings.threads,
        name: "changes".to_string(),
        created: 0,
        ..BuildOptions::default()
    };
    let (list, delta) = list_and_delta(&whole, &options, sizes.changes_apply_changes)?;
    let bytes = list.to_bytes();
    let delta_bytes = delta.to_bytes();
    let table_update = table_updates(&list, &delta, sizes.changes_apply_runs.max(1))?;
    drop(list);
    let (add, remove) = ChangeKind::Mixed.split(sizes.changes_apply_changes);
    let runs = sizes.changes_apply_runs.max(1);
    let dir = tempfile::tempdir().map_err(crate::Error::io(
        std::env::temp_dir(),
        "create a directory in",
    ))?;
    let base_path = dir.path().join("base.bloom");
    let work_path = dir.path().join("list.bloom");
    let delta_path = dir.path().join("change.delta");
    let write = |path: &Path, data: &[u8]| {
        std::fs::write(path, data).map_err(crate::Error::io(path, "write"))
    };
    write(&base_path, &bytes)?;
    write(&delta_path, &delta_bytes)?;
    let mut times = ApplyTimes {
        entries: whole.entries.len() as u64,
        listed_entries: listed,
        synthetic_entries: fill,
        categories: whole.categories.len(),
        file_bytes: bytes.len() as u64,
        added: add,
        removed: remove,
        delta_bytes: delta_bytes.len() as u64,
        memory: Vec::new(),
        open: Vec::new(),
        delta_open: Vec::new(),
        file_apply: Vec::new(),
        save: Vec::new(),
        one_category: Vec::new(),
        table_update: Vec::new(),
        load_average: load_average(),
    };
    times.memory = memory_applies(&bytes, &delta, runs)?;
    times.table_update = table_update;
    for _ in 0..runs {
        // As `phishbloom apply` does it, on a fresh copy of the file.
        std::fs::copy(&base_path, &work_path)
            .map_err(crate::Error::io(&work_path, "copy the base list to"))?;
        let (opened, took) = timed(|| Blocklist::open(&work_path));
        let mut file = opened?;
        times.open.push(took.as_secs_f64());
        let (read, took) = timed(|| Delta::open(&delta_path));
        let change = read?;
        times.delta_open.push(took.as_secs_f64());
        let (applied, took) = timed(|| file.apply(&change));
        applied?;
        times.file_apply.push(took.as_secs_f64());
        let (saved, took) = timed(|| file.save(&work_path, std::slice::from_ref(&delta_path)));
        saved?;
        times.save.push(took.as_secs_f64());
    }
    // The same entries in one category.
    settings
        .progress
        .say("lists that change: apply, the same list in one category");
    let single = EntrySet {
        membership: vec![vec![0]; whole.entries.len()],
        categories: vec![FILL_CATEGORY.to_string()],
        ..whole
    };
    let (list, delta) = list_and_delta(&single, &options, sizes.changes_apply_changes)?;
    let bytes = list.to_bytes();
    drop(list);
    times.one_category = memory_applies(&bytes, &delta, runs)?;
    Ok(times)
}

// ---------------------------------------------------------------------------------------------

/// The section's results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Changes {
    /// (a) Bits per key and measured rate against p.
    pub bits: Vec<BitsPoint>,
    /// (b) ns per operation, own structures and peers.
    pub speed: Vec<SpeedRow>,
    /// (b) The cuckoo filters past capacity.
    pub eviction: Eviction,
    /// (c) Delta sizes.
    pub deltas: Deltas,
    /// (d) Time to apply.
    pub apply: ApplyTimes,
}

/// Runs the section's measurements.
pub fn run(settings: &Settings) -> Result<Changes> {
    let bits = bits_per_key(settings)?;
    let speed = speed(settings)?;
    let eviction = eviction()?;
    let (set, source) = read_list(settings)?;
    let deltas = deltas(settings, &set, source)?;
    let apply = apply(settings, &set)?;
    Ok(Changes {
        bits,
        speed,
        eviction,
        deltas,
        apply,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Settings {
        Settings {
            sizes: crate::measure::Sizes {
                changes_bits_keys: 5_000,
                changes_min_queries: 20_000,
                changes_max_queries: 20_000,
                changes_speed_keys: vec![2_000],
                changes_delta_counts: vec![1_000],
                changes_apply_entries: 5_000,
                changes_apply_changes: 200,
                changes_apply_runs: 1,
                ..crate::measure::Sizes::quick()
            },
            ..Settings::new("/nonexistent/dataset.csv".into(), true, 2, false)
        }
    }

    #[test]
    fn bits_per_key_follow_the_formulas_and_rates_stay_binomial() {
        let points = bits_per_key(&tiny()).unwrap();
        assert_eq!(points.len(), RATES.len() * 4 + 2);
        for point in &points {
            assert_eq!(point.false_negatives, 0, "{point:?}");
            let m = &point.measured;
            // The count is binomial around the structure's own rate (an upper bound for the
            // cuckoo filter): 5 σ plus one count, fixed seeds.
            let expected = m.queries as f64 * m.theoretical;
            let sigma = (expected * (1.0 - m.theoretical)).sqrt();
            let excess = m.false_positives as f64 - expected;
            assert!(excess <= 5.0 * sigma + 1.0, "{point:?}");
            if point.structure != Structure::Cuckoo {
                assert!(-excess <= 5.0 * sigma + 1.0, "{point:?}");
            }
            // Measured bytes against the formula: the classic and counting filters round m up;
            // the cuckoo filter rounds f up to whole bits (7 for 6.3 at p = 0.1) and buckets
            // up; binary fuse rounds to whole segments. The blocked layout is sized by its own
            // exact formula, which at small p and n needs far more than 1.44·log₂(1/p).
            let ratio = point.bits_per_key / point.formula_bits_per_key;
            if point.structure == Structure::Blocked {
                let (m, _) = phishbloom_filter::math::blocked_size(point.n, point.p).unwrap();
                assert_eq!(point.bytes, m / 8, "{point:?}");
            } else {
                assert!((0.99..1.2).contains(&ratio), "{point:?}");
            }
        }
    }

    #[test]
    fn speed_rows_cover_every_structure_without_losing_keys() {
        let rows = speed(&tiny()).unwrap();
        assert_eq!(rows.len(), 6);
        for row in &rows {
            assert!(row.insert_ns > 0.0 && row.member_ns > 0.0 && row.non_member_ns > 0.0);
            assert_eq!((row.refused, row.false_negatives), (0, 0), "{row:?}");
            let deletes = matches!(
                row.structure,
                Structure::Cuckoo | Structure::Counting | Structure::CuckoofilterCrate
            );
            assert_eq!(row.delete_ns.is_some(), deletes, "{row:?}");
            assert_eq!(row.failed_deletes, 0, "{row:?}");
        }
    }

    #[test]
    fn only_the_peer_cuckoo_filter_loses_keys_when_full() {
        let eviction = eviction().unwrap();
        assert_eq!(eviction.ours.lost, 0);
        assert!(eviction.ours.refused > 0 && eviction.ours.accepted >= 900);
        assert_eq!(
            eviction.ours.accepted + eviction.ours.refused,
            EVICTION_KEYS
        );
        // Each refused insert of the crate drops a resident fingerprint: with ~1,000 refusals,
        // that no accepted key goes missing would need every dropped fingerprint to be shadowed
        // by an equal one in the same buckets.
        assert!(
            eviction.peer.refused > 0 && eviction.peer.lost > 0,
            "{eviction:?}"
        );
    }

    #[test]
    fn deltas_and_apply_on_the_stand_in_list() {
        let settings = tiny();
        let (set, source) = read_list(&settings).unwrap();
        assert_eq!(source.folders, 0);
        assert_eq!(source.entries, STAND_IN_ENTRIES);
        let deltas = deltas(&settings, &set, source).unwrap();
        // Two probe settings × (3 + 1 + 3 encodings).
        assert_eq!(deltas.rows.len(), 2 * 7);
        for row in &deltas.rows {
            assert!(row.bytes >= deltas.empty_bytes, "{row:?}");
            // Golomb–Rice with the best parameter lands within 10 % of the formula.
            let ratio = row.bytes as f64 / row.formula_bytes;
            assert!((0.9..1.1).contains(&ratio), "{row:?}");
        }
        // 3,000 listed entries, filled with 2,000 synthetic ones up to the 5,000 asked for.
        let few = EntrySet {
            entries: set.entries[..3_000].to_vec(),
            membership: set.membership[..3_000].to_vec(),
            ..set.clone()
        };
        let times = apply(&settings, &few).unwrap();
        assert_eq!(times.entries, 5_000);
        assert_eq!(
            (times.listed_entries, times.synthetic_entries),
            (3_000, 2_000)
        );
        assert_eq!(times.categories, 5);
        assert_eq!((times.one_category.len(), times.table_update.len()), (1, 1));
        assert_eq!((times.added, times.removed), (100, 100));
        assert_eq!(times.memory.len(), 1);
        assert!(times.memory_ms() > 0.0 && times.file_ms() > 0.0);
    }

    #[test]
    fn random_positions_are_distinct_sorted_and_repeatable() {
        let a = random_positions(1_000, 100, 3);
        assert_eq!(a.len(), 100);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, random_positions(1_000, 100, 3));
        assert_eq!(random_positions(5, 10, 3), vec![0, 1, 2, 3, 4]);
    }
}
