//! Part (d) of "Lists that change": the time to apply a 10,000-change delta to a verified cuckoo
//! list of 10⁶ entries, in memory and as `phishbloom apply` does it (open, apply, save).

use phishbloom_blocklist::{BlocklistFile, DeltaFile};
use std::path::Path;

use phishbloom_core::delta::{Additions, Delta, DiffOptions, ListView};
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_core::{EntrySet, Membership};
use phishbloom_url::Entry;

use super::deltas::ChangeKind;
use super::edits::{additions, changed_view, random_positions, synthetic_entries};
use super::{ADDITIONS_CATEGORY, DELTA_RATE, REMOVAL_SEED};
use crate::error::Result;
use crate::measure::machine::load_average;
use crate::measure::{timed, Settings};
use crate::stats::median;

/// The apply target: a 10,000-change delta applied to a 10⁶-entry file in this many ms.
pub const TARGET_APPLY_MS: f64 = 50.0;
/// The category of the synthetic entries that fill the apply measurement's list up to its size.
pub const FILL_CATEGORY: &str = "synthetic";
/// Synthetic entries filling the apply measurement's list: `fill-<hex>.changes.test`.
const FILL_PREFIX: &str = "fill";
/// The name the apply measurement's lists go by in messages.
const BASE_NAME: &str = "base.bloom";

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
        Additions::Prefixes { .. } | Additions::Filter(_) | Additions::Table { .. } => Vec::new(),
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

/// The first `listed` entries of `set`, then `fill` synthetic ones in a category of their own.
fn filled(set: &EntrySet, listed: u64, fill: u64) -> EntrySet {
    let mut entries: Vec<Entry> = set.entries[..listed as usize].to_vec();
    let mut membership: Vec<Membership> = set.membership[..listed as usize].to_vec();
    let mut categories = set.categories.clone();
    if fill > 0 {
        categories.push(FILL_CATEGORY.to_string());
        let id = (categories.len() - 1) as u16;
        let synthetic = synthetic_entries(FILL_PREFIX, 0, fill);
        membership.extend(std::iter::repeat_n(
            Membership::from_slice(&[id]),
            synthetic.len(),
        ));
        entries.extend(synthetic);
    }
    EntrySet {
        entries,
        categories,
        membership,
        exceptions: set.exceptions.clone(),
    }
}

/// Applies the delta at `delta_path` `runs` times as `phishbloom apply` does, each on a fresh
/// copy of `base` at `work`: open, read the delta, apply, save — each step timed into `times`.
fn file_applies(
    base: &Path,
    work: &Path,
    delta_path: &std::path::PathBuf,
    runs: usize,
    times: &mut ApplyTimes,
) -> Result<()> {
    for _ in 0..runs {
        // As `phishbloom apply` does it, on a fresh copy of the file.
        std::fs::copy(base, work).map_err(crate::Error::io(work, "copy the base list to"))?;
        let (opened, took) = timed(|| Blocklist::open(work));
        let mut file = opened?;
        times.open.push(took.as_secs_f64());
        let (read, took) = timed(|| Delta::open(delta_path));
        let change = read?;
        times.delta_open.push(took.as_secs_f64());
        let (applied, took) = timed(|| file.apply(&change));
        applied?;
        times.file_apply.push(took.as_secs_f64());
        let (saved, took) = timed(|| file.save(work, std::slice::from_ref(delta_path)));
        saved?;
        times.save.push(took.as_secs_f64());
    }
    Ok(())
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
    let whole = filled(set, listed, fill);
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
    file_applies(&base_path, &work_path, &delta_path, runs, &mut times)?;
    // The same entries in one category.
    settings
        .progress
        .say("lists that change: apply, the same list in one category");
    let single = EntrySet {
        membership: vec![Membership::from_slice(&[0]); whole.entries.len()],
        categories: vec![FILL_CATEGORY.to_string()],
        ..whole
    };
    let (list, delta) = list_and_delta(&single, &options, sizes.changes_apply_changes)?;
    let bytes = list.to_bytes();
    drop(list);
    times.one_category = memory_applies(&bytes, &delta, runs)?;
    Ok(times)
}
