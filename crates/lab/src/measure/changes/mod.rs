//! Section 8's measurements, "Lists that change": what the kinds that delete cost in
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
//! One file per part (`bits`, `speed`, `deltas`, `apply`), with the list the last two change
//! (`list`) and the synthetic changes they make (`edits`). The structures and peers, and how
//! each is built and fed, are [`super::contenders`]'s: the same ones the lab's criterion bench
//! `benches/kinds.rs` times.

mod apply;
mod bits;
mod deltas;
pub(crate) mod edits;
mod list;
mod speed;

pub use apply::{apply, ApplyTimes, FILL_CATEGORY, TARGET_APPLY_MS};
pub use bits::{bits_per_key, formula_bits_per_key, BitsPoint, RATES};
pub use deltas::{
    deltas, BoundRow, ChangeKind, DeltaRow, Deltas, Encoding, ANCHOR_PATCH_FPP, TARGET_ADDITIONS,
    TARGET_ADDITION_BYTES, TARGET_BYTES_PER_REMOVAL,
};
pub use list::{read_list, ut1_root, ListSource};
pub use speed::{eviction, speed, Eviction, EvictionFilter, SpeedRow};

use crate::error::Result;
use crate::measure::Settings;

/// The rate of the delta and apply measurements: p = 1 %.
pub const DELTA_RATE: f64 = 0.01;
/// The category the synthetic additions join (the first category when the list has none of
/// that name): new phishing sites are what a live list mostly gains.
pub const ADDITIONS_CATEGORY: &str = "phishing";
/// Seed of the removals' random choice (any fixed value: runs repeat).
const REMOVAL_SEED: u64 = 11;

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
pub(crate) mod tests {
    use super::list::STAND_IN_ENTRIES;
    use super::*;
    use phishbloom_core::EntrySet;

    /// Settings small enough for a unit test of every part.
    pub(crate) fn tiny() -> Settings {
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
    fn deltas_and_apply_on_the_stand_in_list() {
        let settings = tiny();
        let (set, source) = read_list(&settings).unwrap();
        assert_eq!(source.folders, 0);
        assert_eq!(source.entries, STAND_IN_ENTRIES);
        let deltas = deltas(&settings, &set, source).unwrap();
        // Two probe settings × (3 + 1 + 3 encodings).
        assert_eq!(deltas.rows.len(), 2 * 7);
        // 2 probe settings × (100 and 1,000 additions) × 2 codings; the ribbon at 1 probe
        // per item meets the 1,000-byte target.
        assert_eq!(deltas.bound.len(), 2 * 2 * 2);
        let anchor = deltas
            .bound
            .iter()
            .find(|r| r.probes == 1 && r.added == 1_000 && r.coding == "ribbon")
            .unwrap();
        assert!(anchor.bytes <= TARGET_ADDITION_BYTES, "{anchor:?}");
        assert!(anchor.ratio() < 1.2, "{anchor:?}");
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
}
