//! Collecting a list's keys: distinct keys per group (category), duplicates counted, a list's
//! own exceptions kept apart — or, for streamed builds, only the keys' hashes, partitioned.

use rustc_hash::FxHashSet as HashSet;

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::KeyList;
use phishbloom_filter::KeyHash;

use super::{ListSummary, MAX_KEY_BYTES};
use crate::formats::Skip;
use crate::partition::Partitioner;
use crate::Result;

/// Collects distinct keys per group (category) and counts duplicates (by 128-bit xxh3: a false
/// "duplicate" needs a 128-bit collision, probability ~n²/2^129) — or, streaming
/// ([`Collector::hashing`]), only hashes the keys into partitions, which
/// [`crate::stream`] deduplicates afterwards.
pub(crate) struct Collector {
    pub(super) groups: Vec<(String, KeyList, HashSet<u128>)>,
    scratch: Vec<u8>,
    scheme: KeyScheme,
    hashes: Option<Partitioner>,
    /// A list's own exceptions (AdBlock `@@` rules), when its lines are entries; `None` for
    /// whole keys, which have none.
    pub(super) exceptions: Option<KeyList>,
}

impl Collector {
    /// A collector of keys read as `scheme`, into the group `default_group` unless a row
    /// names another.
    pub(super) fn new(scheme: KeyScheme, default_group: &str) -> Self {
        Collector {
            groups: vec![(
                default_group.to_string(),
                KeyList::default(),
                HashSet::default(),
            )],
            scratch: Vec::new(),
            scheme,
            hashes: None,
            exceptions: None,
        }
    }

    /// A collector that also keeps the list's own exceptions (lines that are entries).
    pub(super) fn with_exceptions(scheme: KeyScheme, default_group: &str) -> Self {
        Collector {
            exceptions: Some(KeyList::default()),
            ..Collector::new(scheme, default_group)
        }
    }

    /// Records an exception rule's entry, or counts it skipped when the list holds keys.
    pub(super) fn add_exception(&mut self, raw: &[u8], summary: &mut ListSummary) {
        match &mut self.exceptions {
            Some(exceptions) if self.scheme.normalize_into(raw, &mut self.scratch) => {
                summary.exceptions += 1;
                exceptions.push(&self.scratch);
            }
            Some(_) => summary.blank += 1,
            None => summary.skip(Skip::Exception),
        }
    }

    /// A collector that keeps no key, only its hash, in `partitioner` (one group).
    pub(crate) fn hashing(scheme: KeyScheme, partitioner: Partitioner) -> Self {
        Collector {
            hashes: Some(partitioner),
            ..Collector::new(scheme, "")
        }
    }

    /// The partitions of a hashing collector.
    pub(crate) fn into_partitioner(self) -> Option<Partitioner> {
        self.hashes
    }

    /// Normalizes and records one selected raw key, in group `group` (0 is the default). Fails
    /// only when a hashing collector cannot write its temporary file.
    pub(super) fn add(
        &mut self,
        raw: &[u8],
        line: u64,
        summary: &mut ListSummary,
        group: usize,
    ) -> Result<()> {
        summary.selected += 1;
        if raw.len() > MAX_KEY_BYTES {
            summary.malformed(line, format!("key longer than {MAX_KEY_BYTES} bytes"));
            return Ok(());
        }
        if !self.scheme.normalize_into(raw, &mut self.scratch) {
            summary.blank += 1;
            return Ok(());
        }
        let hash = KeyHash::of(&self.scratch);
        if let Some(partitioner) = &mut self.hashes {
            return partitioner.push(hash);
        }
        let (_, keys, seen) = &mut self.groups[group];
        if seen.insert(u128::from(hash.h1) | u128::from(hash.h2) << 64) {
            keys.push(&self.scratch);
        } else {
            summary.duplicates += 1;
        }
        Ok(())
    }

    /// The group named `name`, created if new.
    pub(super) fn group(&mut self, name: &[u8]) -> usize {
        let name = String::from_utf8_lossy(name.trim_ascii());
        match self.groups.iter().position(|(n, _, _)| *n == name) {
            Some(index) => index,
            None => {
                self.groups
                    .push((name.into_owned(), KeyList::default(), HashSet::default()));
                self.groups.len() - 1
            }
        }
    }
}
