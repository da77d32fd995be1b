//! Section 8, lists that change: bits per key against p of the kinds a list can be,
//! beside their formulas and the static binary fuse filters; ns per operation beside real peers;
//! what a full cuckoo filter does; delta sizes against their targets; the time to apply a
//! delta.
//!
//! Rendered here from [`phishbloom_lab::measure::changes`]'s results, which this module only
//! formats (CSV, Markdown, SVG): one module per part — [`bits`], [`speed`], [`deltas`],
//! [`apply`] — and the section's introduction and headlines here.

mod apply;
mod bits;
mod deltas;
mod speed;

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{
    ChangeKind, Changes, DeltaRow, Encoding, DELTA_RATE, TARGET_ADDITIONS, TARGET_ADDITION_BYTES,
    TARGET_APPLY_MS, TARGET_BYTES_PER_REMOVAL,
};
use phishbloom_lab::measure::contenders::Structure;

use crate::context::Context;
use crate::error::Result;

/// The own structures in the order the tables show them.
pub(super) const OURS: [Structure; 4] = [
    Structure::Classic,
    Structure::Blocked,
    Structure::Cuckoo,
    Structure::Counting,
];

/// Writes the section from [`phishbloom_lab::measure::changes::run`]'s results.
pub fn render(ctx: &mut Context, changes: &Changes) -> Result<String> {
    let mut md = String::from("## 8. Lists that change\n\n");
    md.push_str(
        "A list that lives needs kinds that delete (a cuckoo filter, a counting Bloom filter), \
         `add`, `remove`, `merge`, and small verified deltas between versions. This section \
         measures what that costs: space and false-positive rate of each kind against p, the \
         time of each operation beside real peers, the bytes of a delta against its \
         targets, and the time to apply one.\n\n",
    );
    md.push_str(&bits::render(ctx, &changes.bits)?);
    md.push_str(&speed::render(ctx, &changes.speed, &changes.eviction)?);
    md.push_str(&deltas::render(ctx, &changes.deltas)?);
    md.push_str(&apply::render(ctx, &changes.apply)?);
    headlines(ctx, changes);
    Ok(md)
}

/// The section's lines in the command's summary: bits per key, delta sizes, apply time.
fn headlines(ctx: &mut Context, changes: &Changes) {
    let at = |structure: Structure| {
        changes
            .bits
            .iter()
            .find(|b| b.structure == structure && b.p == DELTA_RATE)
            .map_or("—".to_string(), |b| fmt::real(b.bits_per_key, 2))
    };
    ctx.headlines.push(format!(
        "lists that change: bits/key at p = 1 %: classic {}, blocked {}, cuckoo {}, counting {}",
        at(Structure::Classic),
        at(Structure::Blocked),
        at(Structure::Cuckoo),
        at(Structure::Counting)
    ));
    let addition = |probes: u32, encoding: Encoding| {
        changes
            .deltas
            .rows
            .iter()
            .find(|r| {
                r.probes == probes
                    && r.change == ChangeKind::Additions
                    && r.added == TARGET_ADDITIONS
                    && r.encoding == encoding
            })
            .map_or("—".to_string(), |r| format!("{} B", fmt::count(r.bytes)))
    };
    let removal = changes
        .deltas
        .rows
        .iter()
        .filter(|r| r.change == ChangeKind::Removals)
        .map(DeltaRow::bytes_per_change)
        .fold(0.0, f64::max);
    ctx.headlines.push(format!(
        "deltas: 1,000 additions with patch_fpp = 0.01: {} (1 probe), {} (20 probes) vs ≤ {} B; \
         removals ≤ {:.2} B each vs ≤ {TARGET_BYTES_PER_REMOVAL}",
        addition(1, Encoding::CompactAnchor),
        addition(20, Encoding::CompactAnchor),
        fmt::count(TARGET_ADDITION_BYTES),
        removal
    ));
    ctx.headlines.push(format!(
        "apply: {} changes to a {}-entry cuckoo list: {:.1} ms in memory, {:.1} ms open+apply+save \
         vs ≤ {TARGET_APPLY_MS} ms",
        fmt::count(changes.apply.added + changes.apply.removed),
        fmt::count(changes.apply.entries),
        changes.apply.memory_ms(),
        changes.apply.file_ms()
    ));
}
