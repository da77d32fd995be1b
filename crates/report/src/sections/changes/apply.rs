//! The "Lists that change" section's time to apply a delta: in memory and as
//! `phishbloom apply` does it on a file, step by step, against the target.

use phishbloom_core::fmt;
use phishbloom_lab::measure::changes::{ApplyTimes, TARGET_APPLY_MS};
use phishbloom_lab::stats::median;

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// Writes the CSV and the table of apply times; returns the Markdown.
pub(super) fn render(ctx: &mut Context, apply: &ApplyTimes) -> Result<String> {
    let csv = ctx.write_csv("changes_apply.csv", &apply_csv(apply))?;
    let mut md = intro(apply);
    md.push_str(&markdown_table(
        &["step", "median ms", "target"],
        &step_rows(apply),
    ));
    md.push_str(&format!("\n*Data: [{csv}]({csv}).*\n\n"));
    md.push_str(&where_the_time_goes(apply));
    Ok(md)
}

/// Every run's times as a CSV table (`changes_apply.csv`).
fn apply_csv(apply: &ApplyTimes) -> Table {
    let mut table = Table::new(&[
        "run",
        "entries",
        "added",
        "removed",
        "memory_apply_ms",
        "one_category_memory_apply_ms",
        "table_update_ms",
        "open_ms",
        "delta_open_ms",
        "apply_ms",
        "save_ms",
        "open_apply_save_ms",
    ]);
    let ms = |s: f64| s * 1e3;
    for i in 0..apply.memory.len() {
        let total = apply.open[i] + apply.delta_open[i] + apply.file_apply[i] + apply.save[i];
        table.push(vec![
            (i + 1).to_string(),
            apply.entries.to_string(),
            apply.added.to_string(),
            apply.removed.to_string(),
            num(ms(apply.memory[i])),
            apply
                .one_category
                .get(i)
                .map(|&t| num(ms(t)))
                .unwrap_or_default(),
            apply
                .table_update
                .get(i)
                .map(|&t| num(ms(t)))
                .unwrap_or_default(),
            num(ms(apply.open[i])),
            num(ms(apply.delta_open[i])),
            num(ms(apply.file_apply[i])),
            num(ms(apply.save[i])),
            num(ms(total)),
        ]);
    }
    table
}

/// The median of each step, with the target where there is one.
fn step_rows(apply: &ApplyTimes) -> Vec<Vec<String>> {
    let met = |value: f64| {
        if value <= TARGET_APPLY_MS {
            "met"
        } else {
            "**not met**"
        }
    };
    vec![
        vec![
            "`Blocklist::apply` in memory".to_string(),
            fmt::real(apply.memory_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.memory_ms())),
        ],
        vec![
            "the same, to the same entries in one category".to_string(),
            fmt::real(apply.one_category_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.one_category_ms())),
        ],
        vec![
            "open the file (`Blocklist::open`)".to_string(),
            fmt::real(median(&apply.open) * 1e3, 1),
            String::new(),
        ],
        vec![
            "read the delta (`Delta::open`)".to_string(),
            fmt::real(median(&apply.delta_open) * 1e3, 1),
            String::new(),
        ],
        vec![
            "apply it".to_string(),
            fmt::real(median(&apply.file_apply) * 1e3, 1),
            String::new(),
        ],
        vec![
            "save the file (temporary, fsync, rename)".to_string(),
            fmt::real(median(&apply.save) * 1e3, 1),
            String::new(),
        ],
        vec![
            "open + apply + save (`phishbloom apply`)".to_string(),
            fmt::real(apply.file_ms(), 1),
            format!("≤ {TARGET_APPLY_MS} ms: {}", met(apply.file_ms())),
        ],
    ]
}

/// The list, the delta, and how the runs were timed.
fn intro(apply: &ApplyTimes) -> String {
    format!(
        "### Time to apply\n\n\
         A verified cuckoo blocklist (p = 1 % per URL, 20 probes) of {} entries: {} from the list \
         above{} — {} bytes on disk. A mixed delta of {} changes ({} new entries, {} removals at \
         random; {} bytes) is applied {} times, each to a fresh copy: in memory (the list read \
         from its bytes beforehand, untimed), and as `phishbloom apply` does it on a file copied \
         into place beforehand (untimed): open it, read the delta, apply, save (a temporary file, \
         fsync, rename). Medians (ms; wall-clock on the shared 2-core machine, load average {} \
         when the runs began: under a lighter load every step is faster; compare the steps \
         with each other):\n\n",
        fmt::count(apply.entries),
        fmt::count(apply.listed_entries),
        if apply.synthetic_entries > 0 {
            format!(
                " and {} synthetic ones (`fill-<hex>.changes.test`, category `synthetic`: UT1 \
                 has fewer than {} distinct entries)",
                fmt::count(apply.synthetic_entries),
                fmt::count(apply.entries)
            )
        } else {
            String::new()
        },
        fmt::count(apply.file_bytes),
        fmt::count(apply.added + apply.removed),
        fmt::count(apply.added),
        fmt::count(apply.removed),
        fmt::count(apply.delta_bytes),
        apply.memory.len(),
        apply.load_average.as_deref().unwrap_or("unknown"),
    )
}

/// Which step takes the time.
fn where_the_time_goes(apply: &ApplyTimes) -> String {
    format!(
        "Where the time goes: `Verification::update` alone — the step of `apply` that rewrites \
         the verification table, timed on a copy of the table with the same change — takes {:.1} \
         ms of the {:.1}: one linear merge of the sorted table with the sorted change, each \
         entry's category set carried as an index (no allocation per entry), for the {} entries \
         and a change of {}. The same list in one category applies in {:.1} ms. Opening and \
         saving the {} file cost {:.1} + {:.1} ms more whatever the change (checksums, \
         decoding, writing and fsync of every byte).\n\n",
        median(&apply.table_update) * 1e3,
        apply.memory_ms(),
        fmt::count(apply.entries),
        fmt::count(apply.added + apply.removed),
        apply.one_category_ms(),
        fmt::bytes(apply.file_bytes),
        median(&apply.open) * 1e3,
        median(&apply.save) * 1e3,
    )
}
