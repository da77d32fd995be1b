//! What [`Delta::between`](super::Delta::between) compares: a list version's entry
//! fingerprints with their categories, its categories and exceptions ([`ListView`]), and how it
//! codes the additions ([`DiffOptions`]).

use phishbloom_filter::KeyHash;
use phishbloom_url::Entry;

use crate::contents::{EntrySet, KeyList};
use crate::engine::fingerprint;
use crate::keys::expression_hash;
use crate::keys::KeyScheme;
use crate::sections::SetFingerprint;

use super::ListState;

/// A list version as [`Delta::between`](super::Delta::between) compares it: its entries' fingerprints (ascending,
/// distinct) with their categories, its categories and exceptions.
#[derive(Clone, Debug, PartialEq)]
pub struct ListView {
    /// How its items become keys.
    pub scheme: KeyScheme,
    /// Probes per checked item.
    pub probes_per_item: u32,
    /// Its version, if known.
    pub version: Option<u64>,
    /// Its per-item false-positive target, if known.
    pub target_fpp: Option<f64>,
    /// `(fingerprint, category ids)`, ascending by fingerprint, distinct.
    pub entries: Vec<(u64, Vec<u16>)>,
    /// Category names, by id.
    pub categories: Vec<String>,
    /// Exception entry keys, sorted.
    pub exceptions: Vec<String>,
    /// The file or list it was read from, for messages.
    pub origin: std::path::PathBuf,
    /// For a compact list: its table's universe, the entries being the table's prefixes
    /// (a delta between two such views carries table additions).
    pub universe: Option<u64>,
    /// The fingerprints of its domain entries of a single label, ascending (see
    /// `crate::list::tops`).
    pub tops: Vec<u64>,
}

impl ListView {
    /// A view of `pairs` (in any order; equal fingerprints are merged, their categories
    /// united).
    pub fn new(
        scheme: KeyScheme,
        probes_per_item: u32,
        mut pairs: Vec<(u64, Vec<u16>)>,
        categories: Vec<String>,
        mut exceptions: Vec<String>,
    ) -> Self {
        pairs.sort_unstable_by_key(|p| p.0);
        let mut entries: Vec<(u64, Vec<u16>)> = Vec::with_capacity(pairs.len());
        for (v, ids) in pairs {
            match entries.last_mut() {
                Some((last, existing)) if *last == v => existing.extend(ids),
                _ => entries.push((v, ids)),
            }
        }
        for (_, ids) in &mut entries {
            ids.sort_unstable();
            ids.dedup();
        }
        exceptions.sort_unstable();
        exceptions.dedup();
        ListView {
            scheme,
            probes_per_item,
            version: None,
            target_fpp: None,
            entries,
            categories,
            exceptions,
            origin: std::path::PathBuf::new(),
            universe: None,
            tops: Vec::new(),
        }
    }

    /// The view of a list of URL entries (as `build` reads it).
    pub fn of_entries(set: &EntrySet, probes_per_item: u32) -> Self {
        let pairs = set
            .entries
            .iter()
            .zip(&set.membership)
            .map(|(entry, ids)| (fingerprint(expression_hash(entry.key())), ids.to_vec()))
            .collect();
        let mut view = ListView::new(
            KeyScheme::Expressions,
            probes_per_item,
            pairs,
            set.categories.clone(),
            set.exceptions.iter().map(Entry::to_key_string).collect(),
        );
        view.tops = crate::list::top_fingerprints(&set.entries, None);
        view.tops.sort_unstable();
        view.tops.dedup();
        view
    }

    /// The view of lists of whole keys, one group per category (as `build --exact` reads them).
    pub fn of_keys(groups: &[(String, KeyList)], scheme: KeyScheme) -> Self {
        let pairs = groups
            .iter()
            .enumerate()
            .flat_map(|(id, (_, keys))| {
                keys.iter()
                    .map(move |key| (fingerprint(KeyHash::of(key)), vec![id as u16]))
            })
            .collect();
        let names = groups.iter().map(|(name, _)| name.clone()).collect();
        ListView::new(scheme, 1, pairs, names, Vec::new())
    }

    /// The set fingerprint of its entries.
    pub fn fingerprint(&self) -> SetFingerprint {
        SetFingerprint::of(self.entries.iter().map(|(v, _)| *v))
    }

    /// Its state as a delta names it.
    pub fn state(&self) -> ListState {
        ListState {
            version: self.version.unwrap_or(0),
            entries: self.entries.len() as u64,
            fingerprint: self.fingerprint(),
        }
    }
}

/// How [`Delta::between`](super::Delta::between) encodes additions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiffOptions {
    /// Prefixes rather than whole fingerprints (for Bloom files without verification).
    pub compact: bool,
    /// For a compact delta: the false-positive rate per checked item its patch may add at the
    /// receiver. `None`: the list's rate times the share of the list the additions are, so that
    /// patched entries cost the rate they would have cost built in.
    pub patch_fpp: Option<f64>,
    /// The list's per-item rate, when the views do not know it (list files).
    pub fpp: Option<f64>,
    /// Creation time of the delta.
    pub created: u64,
}
