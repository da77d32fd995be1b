//! Part (c) of "Lists that change": bytes of the deltas for 1,000 … 100,000 additions, removals
//! or both to a list of every UT1 category, exact and compact, beside the Golomb–Rice formula
//! and the targets.

use phishbloom_core::delta::{Additions, Delta, DiffOptions, ListView, PatchCoding};
use phishbloom_core::engine::per_probe_fpp;
use phishbloom_core::engine::DEFAULT_EXPRESSION_BOUND;
use phishbloom_core::EntrySet;

use super::edits::{additions, changed_view, random_positions};
use super::list::ListSource;
use super::{ADDITIONS_CATEGORY, DELTA_RATE, REMOVAL_SEED};
use crate::error::Result;
use crate::measure::Settings;
use crate::theory;

/// The patch rate of the "1 KB anchor" compact delta: its additions get their own 1 % budget.
pub const ANCHOR_PATCH_FPP: f64 = 0.01;
/// The addition target: a delta of this many additions …
pub const TARGET_ADDITIONS: u64 = 1_000;
/// … in at most this many bytes at a 1 % patch rate per probe (after seed 001's CRLite:
/// "under 1 KB for under 1,000 new entries").
pub const TARGET_ADDITION_BYTES: u64 = 1_000;
/// The addition counts of the bound table besides the sizes' delta counts: a small delta,
/// where the header weighs most.
const BOUND_SMALL_COUNT: u64 = 100;
/// The removal target: at most this many bytes per removal.
pub const TARGET_BYTES_PER_REMOVAL: f64 = 4.0;

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
    /// Bytes of the delta file (format 2).
    pub bytes: u64,
    /// Bytes of the same delta in format 1, when it can hold it (not a ribbon filter).
    pub bytes_version1: Option<u64>,
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

/// A compact delta of additions against the membership bound.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BoundRow {
    /// Probes per checked item.
    pub probes: u32,
    /// Entries added.
    pub added: u64,
    /// The patch's false-positive rate per probe asked for (`patch_fpp = 0.01` per item
    /// over the probes).
    pub rate: f64,
    /// The coding: `prefixes` or `ribbon`.
    pub coding: &'static str,
    /// Bits kept per addition (prefix width or ribbon result bits).
    pub kept_bits: u32,
    /// Bytes of the delta file, format 2.
    pub bytes: u64,
    /// Bytes of the same delta in format 1 (prefixes only).
    pub bytes_version1: Option<u64>,
    /// The membership bound at `rate`: `log₂(1/rate)` bits per addition.
    pub bound_bits: f64,
}

impl BoundRow {
    /// Bits per addition, the whole file included.
    pub fn bits_per_entry(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.added.max(1) as f64
    }

    /// Bits per addition over the bound.
    pub fn ratio(&self) -> f64 {
        self.bits_per_entry() / self.bound_bits
    }
}

/// Part (c)'s results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Deltas {
    /// The list.
    pub list: ListSource,
    /// Bytes of a delta that changes nothing (header, checksum, empty parts).
    pub empty_bytes: u64,
    /// Bytes of that delta in format 1.
    pub empty_bytes_version1: u64,
    /// Every delta measured.
    pub rows: Vec<DeltaRow>,
    /// Compact deltas of additions at `patch_fpp = 0.01`, each coding, against the bound.
    pub bound: Vec<BoundRow>,
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
    let added = match &delta.added {
        // A ribbon filter: f bits per key at its best (m = n).
        Additions::Filter(filter) => filter.len() as f64 * f64::from(filter.bits()) / 8.0,
        _ => coded(delta.added.len(), 2f64.powi(addition_bits as i32)),
    };
    (parts.fixed + parts.extras) as f64
        + added
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
    let empty = Delta::between(&base20, &base20, &options(Encoding::Exact))?;
    let empty_bytes = empty.to_bytes().len() as u64;
    let empty_bytes_version1 = empty.to_fixed_header_bytes().map_or(0, |b| b.len() as u64);
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
                    let addition_bits = delta.added.kept_bits();
                    rows.push(DeltaRow {
                        probes,
                        change,
                        changed: added.len() as u64 + removed.len() as u64,
                        added: added.len() as u64,
                        removed: removed.len() as u64,
                        encoding,
                        addition_bits,
                        bytes: delta.to_bytes().len() as u64,
                        bytes_version1: delta.to_fixed_header_bytes().map(|b| b.len() as u64),
                        formula_bytes: formula_bytes(&delta, addition_bits),
                    });
                }
            }
        }
    }
    let bound = bound_rows(settings, &base20, &set.categories, category)?;
    Ok(Deltas {
        list,
        empty_bytes,
        empty_bytes_version1,
        rows,
        bound,
    })
}

/// Compact deltas of 100 and the sizes' counts of additions at `patch_fpp = 0.01`, as prefixes
/// and as a ribbon filter, for 1 and 20 probes per item: bytes against `log₂(1/q)` per addition.
fn bound_rows(
    settings: &Settings,
    base20: &ListView,
    categories: &[String],
    category: u16,
) -> Result<Vec<BoundRow>> {
    let options = DiffOptions {
        compact: true,
        patch_fpp: Some(ANCHOR_PATCH_FPP),
        fpp: Some(DELTA_RATE),
        created: 0,
    };
    let mut counts = vec![BOUND_SMALL_COUNT];
    counts.extend(settings.sizes.changes_delta_counts.iter().copied());
    let mut rows = Vec::new();
    for probes in [1, DEFAULT_EXPRESSION_BOUND] {
        let mut base = base20.clone();
        base.probes_per_item = probes;
        let rate = per_probe_fpp(ANCHOR_PATCH_FPP, probes);
        for &count in &counts {
            let new = changed_view(&base, &[], &additions(categories, category, 0, count));
            for (name, coding) in [
                ("prefixes", PatchCoding::Prefixes),
                ("ribbon", PatchCoding::Filter),
            ] {
                let delta = Delta::between_coded(&base, &new, &options, coding)?;
                rows.push(BoundRow {
                    probes,
                    added: delta.added.len() as u64,
                    rate,
                    coding: name,
                    kept_bits: delta.added.kept_bits(),
                    bytes: delta.to_bytes().len() as u64,
                    bytes_version1: delta.to_fixed_header_bytes().map(|b| b.len() as u64),
                    bound_bits: theory::membership_bound_bits(rate),
                });
            }
        }
    }
    Ok(rows)
}
