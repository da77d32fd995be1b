//! What both delta formats' readers share: the error for a delta that cannot be read, the checks
//! of the values they decode, the fixed header's length, and how a decoded header becomes a
//! [`Delta`].

use std::path::Path;

use crate::error::{Error, Result};
use crate::keys::KeyScheme;

use super::{Additions, Delta, ListState};

/// Length of the fixed header.
pub(super) const FIXED_HEADER_LEN: usize = 160;

/// The error for a delta file `path` that cannot be read, and why.
pub(super) fn bad(path: &Path, problem: impl Into<String>) -> Error {
    Error::BadDelta {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// Refuses removed positions that are not ascending, distinct positions of a base of
/// `base_entries` entries.
pub(super) fn check_removed(path: &Path, removed: &[u64], base_entries: u64) -> Result<()> {
    if removed.windows(2).any(|w| w[0] >= w[1])
        || removed.last().is_some_and(|&p| p >= base_entries)
    {
        return Err(bad(
            path,
            "removed positions are not distinct positions of the base",
        ));
    }
    Ok(())
}

/// Refuses exact additions (ascending) that list a fingerprint twice.
pub(super) fn check_distinct(path: &Path, values: &[u64]) -> Result<()> {
    if values.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad(path, "an addition is listed twice"));
    }
    Ok(())
}

/// What a delta's header and coded parts say, decoded and checked, before its extras are read.
pub(super) struct Decoded {
    pub(super) scheme: KeyScheme,
    pub(super) probes_per_item: u32,
    pub(super) created: u64,
    pub(super) base: ListState,
    pub(super) base_categories: u32,
    pub(super) target: ListState,
    pub(super) added: Additions,
    pub(super) added_terms: u128,
    pub(super) removed_count: u64,
    pub(super) removed_terms: u128,
    pub(super) removed: Vec<u64>,
}

impl Decoded {
    /// The delta, with its `extras` read (the added sets packed when `packed`).
    pub(super) fn with_extras(
        self,
        path: &Path,
        extras: &[u8],
        (packed, tops): (bool, bool),
    ) -> Result<Delta> {
        let mut delta = Delta {
            scheme: self.scheme,
            probes_per_item: self.probes_per_item,
            created: self.created,
            base: self.base,
            base_categories: self.base_categories,
            target: self.target,
            added: self.added,
            added_terms: self.added_terms,
            removed_count: self.removed_count,
            removed_terms: self.removed_terms,
            removed: self.removed,
            new_categories: Vec::new(),
            added_categories: Vec::new(),
            recategorized: Vec::new(),
            counts: Vec::new(),
            exceptions: None,
            tops: None,
        };
        delta
            .decode_extras(extras, packed, tops)
            .ok_or_else(|| bad(path, "its categories or exceptions do not decode"))?;
        Ok(delta)
    }
}
