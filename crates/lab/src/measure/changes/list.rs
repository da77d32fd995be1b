//! The list that the delta and apply measurements change: every UT1 category folder beside the
//! dataset, or a synthetic stand-in when there is none.

use std::path::{Path, PathBuf};

use phishbloom_blocklist::entries::{read_entries, ut1_categories, EntrySource};
use phishbloom_core::{EntrySet, Membership};

use super::edits::synthetic_entries;
use crate::error::Result;
use crate::measure::Settings;

/// Entries of the synthetic stand-in list when the UT1 folder is absent.
pub(super) const STAND_IN_ENTRIES: u64 = 200_000;

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

/// The list of every UT1 category folder under the UT1 root (in `--quick` runs only folders
/// while their files stay within the sizes' `changes_ut1_bytes`), or a synthetic stand-in of
/// `STAND_IN_ENTRIES` entries in four categories when there is no UT1 folder.
pub fn read_list(settings: &Settings) -> Result<(EntrySet, ListSource)> {
    let root = ut1_root(settings);
    let Ok(all) = ut1_categories(&root) else {
        let entries = synthetic_entries("listed", 0, STAND_IN_ENTRIES);
        let categories: Vec<String> = ["phishing", "malware", "gambling", "adult"]
            .map(String::from)
            .to_vec();
        let membership = (0..entries.len())
            .map(|i| Membership::from_slice(&[(i % categories.len()) as u16]))
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
