//! Part (b) of "Lists that change": ns per insert, member query, non-member query and delete of
//! the four structures and of two peers timed in the same run, back to back (`fastbloom`, a
//! blocked Bloom filter, and `cuckoofilter`, a cuckoo filter with 8-bit fingerprints); and what
//! each cuckoo filter does when it is offered more keys than it has slots.

use std::time::Instant;

use phishbloom_core::KeyList;
use phishbloom_filter::cuckoo::{CuckooFilter, CuckooParams};

use super::DELTA_RATE;
use crate::error::Result;
use crate::keys::{InlineKey, KeySpace, MEMBERS, NON_MEMBERS};
use crate::measure::contenders::{
    cuckoo_load, key_list, visit_contenders, Contender, CuckooPeer, Structure, Visitor,
};
use crate::measure::{sizing_error, Settings};
use crate::stats::median;

/// Buckets of the eviction demonstration's phishbloom cuckoo filter: 256 buckets of 4 = 1,024
/// slots, the `cuckoofilter` crate's size for a capacity of 1,024.
const EVICTION_BUCKETS: u64 = 256;
/// Fingerprint bits of the demonstration's phishbloom filter: 8, the `cuckoofilter` crate's.
const EVICTION_FINGERPRINT_BITS: u32 = 8;
/// Keys offered in the demonstration: twice the slots, so that both filters fill up.
const EVICTION_KEYS: u64 = 2_048;
/// Keys of the demonstration (distinct from the sweeps' members).
const EVICTION_SPACE: KeySpace = KeySpace::new(b"evict-");

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::changes::tests::tiny;

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
}
