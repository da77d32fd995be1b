//! Applying a [`Delta`] to a [`Blocklist`]: base checked, result checked before any change.

use std::path::Path;

use crate::delta::{Additions, Delta, ListState};
use crate::error::{Error, Result};
use crate::hits::Fingerprints;
use crate::resolve::Exceptions;
use crate::sections::SetFingerprint;

use super::edit::Applied;
use super::model::Blocklist;

impl Blocklist {
    /// Applies a delta made from this list's version (see [`crate::delta`]): checks the base,
    /// works out — before changing anything — the set fingerprint and entry count the change
    /// leads to and refuses the delta unless they are the ones it promises, then changes the
    /// structure, verification section, categories and exceptions. Exact additions go into a
    /// cuckoo or counting structure, or into a Bloom list's exact patch; compact ones (prefixes)
    /// into a Bloom list's patch. Removals need a kind that deletes and a verification section.
    ///
    /// On an error after the checks (a full cuckoo filter that does not grow) the blocklist in
    /// memory may be partly changed: save nothing and start again from the file.
    pub fn apply(&mut self, delta: &Delta) -> Result<Applied> {
        if self.kind == crate::Kind::Compact {
            return self.apply_table(delta);
        }
        let path = self.origin();
        self.refuse_static("apply a delta to")?;
        if self.layers().is_none() {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "apply a delta to",
            });
        }
        self.check_delta_coding(&path, delta)?;
        self.check_delta_base(&path, delta)?;
        let removed = self.removed_fingerprints(&path, delta)?;
        let recategorized = self.recategorized_fingerprints(&path, delta)?;
        let (fingerprint, entries) = self.delta_target(&path, delta)?;
        check_category_ids(&path, delta)?;
        if let Some(layers) = self.layers().filter(|_| self.kind.deletes()) {
            if let Some(&v) = removed.iter().find(|&&v| layers.holders(v) > 1) {
                return Err(Error::AmbiguousRemoval {
                    path: path.clone(),
                    layers: layers.holders(v),
                });
            }
        }
        // Checked: change everything.
        self.apply_to_structure(&path, delta, &removed, &recategorized)?;
        let version = match delta.target.version {
            0 => self.meta.version.saturating_add(1),
            version => version,
        };
        self.meta.entries = entries;
        self.meta.fingerprint = fingerprint;
        self.touch();
        self.meta.version = version;
        Ok(Applied {
            added: delta.added.len() as u64,
            removed: removed.len() as u64,
            kept: delta.removed_count - removed.len() as u64,
            recategorized: recategorized.len() as u64,
            version,
        })
    }

    /// Refuses a delta for another key scheme or sizing, or made from another version than
    /// this list's (an approximate count is never a delta's base).
    pub(super) fn check_delta_base(&self, path: &Path, delta: &Delta) -> Result<()> {
        let meta = &self.meta;
        if delta.scheme != meta.scheme || delta.probes_per_item != meta.probes_per_item {
            return Err(Error::DeltaUnsuitable {
                path: path.to_path_buf(),
                problem: format!(
                    "the delta is for a list of {} sized for {} probes per item, the file holds \
                     {} sized for {}",
                    delta.scheme.name(),
                    delta.probes_per_item,
                    meta.scheme.name(),
                    meta.probes_per_item
                ),
            });
        }
        let found = ListState {
            version: meta.version,
            entries: meta.entries,
            fingerprint: meta.fingerprint,
        };
        let base = delta.base;
        let categories = self.resolver.categories().len();
        if meta.exact_count
            && base.fingerprint == found.fingerprint
            && base.entries == found.entries
            && (base.version == 0 || base.version == found.version)
            && delta.base_categories as usize == categories
        {
            return Ok(());
        }
        let mut found_text = describe_state(found, categories);
        if !meta.exact_count {
            found_text.push_str(" (approximate: entries were added without verification)");
        }
        Err(Error::DeltaBase {
            path: path.to_path_buf(),
            expected: describe_state(base, delta.base_categories as usize),
            found: found_text,
        })
    }

    /// Refuses a compact delta where whole fingerprints are needed: a file with a verification
    /// section, or a kind that deletes.
    fn check_delta_coding(&self, path: &Path, delta: &Delta) -> Result<()> {
        if matches!(delta.added, Additions::Table { .. }) {
            return Err(Error::DeltaUnsuitable {
                path: path.to_path_buf(),
                problem: "the delta adds prefixes of a compact table, and this file is not \
                          compact: fetch the whole file"
                    .into(),
            });
        }
        let verified = self.resolver.verification().is_some();
        if delta.added.is_compact() && (verified || self.kind.deletes()) {
            return Err(Error::DeltaUnsuitable {
                path: path.to_path_buf(),
                problem: format!(
                    "the delta is compact (fingerprint prefixes or a filter, for Bloom files \
                     without a verification section), and this {} file{} needs whole \
                     fingerprints: make an exact delta, not a compact one",
                    self.kind,
                    if verified {
                        " with a verification section"
                    } else {
                        ""
                    }
                ),
            });
        }
        Ok(())
    }

    /// The fingerprints of the entries the delta removes, read from the file's own table and
    /// checked against the terms the delta records; none for a Bloom file without a table,
    /// which cannot forget them: they stay, answering as false positives until the next full
    /// file, while the version and fingerprint follow the list.
    fn removed_fingerprints(&self, path: &Path, delta: &Delta) -> Result<Vec<u64>> {
        let Some(table) = self.resolver.verification() else {
            if delta.removed_count > 0 && self.kind.deletes() {
                return Err(Error::DeltaUnsuitable {
                    path: path.to_path_buf(),
                    problem: format!(
                        "the delta removes {} entries, and a {} file needs its verification \
                         section to find them; fetch the full file (lists that change need \
                         their verification section)",
                        delta.removed_count, self.kind
                    ),
                });
            }
            return Ok(Vec::new());
        };
        let fingerprints = table.fingerprints().as_slice();
        let removed: Vec<u64> = delta
            .removed
            .iter()
            .map(|&p| fingerprints.get(p as usize).copied())
            .collect::<Option<_>>()
            .ok_or_else(|| Error::DeltaCheck {
                path: path.to_path_buf(),
                detail: "a removal past the end of the verification section".into(),
            })?;
        let terms = SetFingerprint::of(removed.iter().copied()).0;
        if removed.len() as u64 != delta.removed_count || terms != delta.removed_terms {
            return Err(Error::DeltaCheck {
                path: path.to_path_buf(),
                detail: "the entries it removes are not the ones at those positions of the \
                         verification section"
                    .into(),
            });
        }
        Ok(removed)
    }

    /// The fingerprints of the entries the delta recategorizes, with their new category ids;
    /// none without a table, where categories are not kept per entry (the counts say it all).
    fn recategorized_fingerprints(
        &self,
        path: &Path,
        delta: &Delta,
    ) -> Result<Vec<(u64, Vec<u16>)>> {
        let Some(table) = self.resolver.verification() else {
            return Ok(Vec::new());
        };
        delta
            .recategorized
            .iter()
            .map(|(p, ids)| {
                Some((
                    *table.fingerprints().as_slice().get(*p as usize)?,
                    ids.clone(),
                ))
            })
            .collect::<Option<_>>()
            .ok_or_else(|| Error::DeltaCheck {
                path: path.to_path_buf(),
                detail: "a recategorized entry past the end of the verification section".into(),
            })
    }

    /// The set fingerprint and entry count the change leads to, worked out before anything
    /// changes, refused unless they are the ones the delta promises.
    fn delta_target(&self, path: &Path, delta: &Delta) -> Result<(SetFingerprint, u64)> {
        let mut fingerprint = self.meta.fingerprint;
        fingerprint.0 = fingerprint
            .0
            .wrapping_sub(delta.removed_terms)
            .wrapping_add(delta.added_terms);
        let entries = (self.meta.entries + delta.added.len() as u64)
            .checked_sub(delta.removed_count)
            .unwrap_or(u64::MAX);
        if fingerprint != delta.target.fingerprint || entries != delta.target.entries {
            return Err(Error::DeltaCheck {
                path: path.to_path_buf(),
                detail: format!(
                    "{entries} entries with set fingerprint {fingerprint}, promised {} with {}",
                    delta.target.entries, delta.target.fingerprint
                ),
            });
        }
        Ok((fingerprint, entries))
    }

    /// Changes the structure, verification table, categories and exceptions (checked
    /// before): removals forgotten, additions inserted or patched, recategorized entries given
    /// their new categories.
    fn apply_to_structure(
        &mut self,
        path: &Path,
        delta: &Delta,
        removed: &[u64],
        recategorized: &[(u64, Vec<u16>)],
    ) -> Result<()> {
        for name in &delta.new_categories {
            self.resolver.category_id(name);
        }
        let with_sets = self.resolver.categories().len() > 1;
        let layers = self.layers_mut().ok_or_else(|| Error::DeltaUnsuitable {
            path: path.to_path_buf(),
            problem: "no structure".into(),
        })?;
        for &v in removed {
            if !layers.forget(v).map_err(|e| e.with_path(path))? {
                return Err(Error::DeltaCheck {
                    path: path.to_path_buf(),
                    detail: format!(
                        "entry {v:016x} is in the verification section, not the filter"
                    ),
                });
            }
        }
        let mut table_added: Vec<(u64, Vec<u16>)> = Vec::new();
        match &delta.added {
            Additions::Exact(values) => {
                for (i, &v) in values.iter().enumerate() {
                    layers
                        .insert_fingerprint(v)
                        .map_err(|e| e.with_path(path))?;
                    let ids = delta
                        .added_categories
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| vec![0]);
                    table_added.push((v, ids));
                }
            }
            Additions::Prefixes { bits, prefixes } => layers.patch(*bits, prefixes.clone())?,
            Additions::Filter(filter) => layers.patch_static(filter.clone()),
            // Refused by `check_delta_coding`.
            Additions::Table { .. } => {}
        }
        // The never set must hold no entry: exact additions leave it, and additions known only
        // by prefix or filter drop it (their entries could be any of its fingerprints).
        match &delta.added {
            Additions::Exact(values) => self.resolver.forget_never(values),
            _ => self.resolver.set_never(Default::default()),
        }
        let mut table_removed = removed.to_vec();
        for (v, ids) in recategorized {
            table_removed.push(*v);
            table_added.push((*v, ids.clone()));
        }
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &table_removed, with_sets);
        }
        for &(id, change) in &delta.counts {
            self.resolver.count_entries(id, change);
        }
        if let Some(keys) = &delta.exceptions {
            self.resolver
                .set_exceptions(Exceptions::new(keys.iter().cloned()));
        }
        if let Some(tops) = &delta.tops {
            self.set_tops(Fingerprints::new(tops.clone()));
        }
        Ok(())
    }
}

/// Refuses category ids beyond the base's categories and the new ones the delta names.
pub(super) fn check_category_ids(path: &Path, delta: &Delta) -> Result<()> {
    let category_count = delta.base_categories as usize + delta.new_categories.len();
    let ids_ok = delta
        .added_categories
        .iter()
        .chain(delta.recategorized.iter().map(|(_, ids)| ids))
        .flatten()
        .chain(delta.counts.iter().map(|(id, _)| id))
        .all(|&id| (id as usize) < category_count);
    if !ids_ok || category_count > crate::resolve::MAX_CATEGORIES {
        return Err(Error::DeltaCheck {
            path: path.to_path_buf(),
            detail: "a category id beyond the list's categories".into(),
        });
    }
    Ok(())
}

/// A list version as a delta base error names it: `version 7 (10 entries, 2 categories, set
/// fingerprint …)`.
fn describe_state(state: ListState, categories: usize) -> String {
    format!(
        "{} ({} entries, {} {}, set fingerprint {})",
        if state.version == 0 {
            "a version".to_string()
        } else {
            format!("version {}", state.version)
        },
        crate::fmt::count(state.entries),
        categories,
        if categories == 1 {
            "category"
        } else {
            "categories"
        },
        state.fingerprint
    )
}
