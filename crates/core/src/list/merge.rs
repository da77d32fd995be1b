//! Merging two [`Blocklist`]s of the same kind and sizing.

use crate::error::{Error, Result};
use crate::keys::check_same_keys;
use crate::resolve::Exceptions;
use crate::structure::Layers;

use super::model::{Blocklist, Engine};

impl Blocklist {
    /// Adds every entry of `other` — a list of the same kind, key scheme and sizing (shards
    /// built apart with the same `--capacity`, or two versions) — and moves the version on.
    ///
    /// With verification sections in both, the result is the union of the two sets: entries
    /// are matched by fingerprint (an entry in both is kept once, in the categories of both),
    /// cuckoo and counting structures take only the other's new entries, Bloom bits are OR-ed,
    /// and the set fingerprint and counts are exact. Without them, the structures are combined
    /// as they are (Bloom bits OR-ed, cuckoo fingerprints inserted, counters added) and the entry
    /// count and set fingerprint — sums, exact only if the lists are disjoint — are marked
    /// approximate.
    pub fn merge(&mut self, other: &Blocklist) -> Result<()> {
        self.refuse_static("merge into")?;
        other.refuse_static("merge from")?;
        self.check_mergeable(other)?;
        if self.kind == crate::Kind::Near {
            return self.merge_near(other);
        }
        let origin = self.origin();
        let (Some(mine), Some(theirs)) = (self.layers(), other.layers()) else {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "merge into",
            });
        };
        if mine.grows() != theirs.grows() {
            return Err(Error::Incompatible {
                parameter: "growth",
                left: mine.grows().to_string(),
                right: theirs.grows().to_string(),
            });
        }
        // Same parameters (layer by layer). Cuckoo and counting lists with verification take
        // the other's new entries one by one; the others take the union, computed aside.
        let verified = self.resolver.verification().is_some() && other.verification().is_some();
        let union = if verified && self.kind.deletes() {
            mine.check_compatible(theirs)?;
            None
        } else {
            let mut union = mine.clone();
            union.union(theirs).map_err(|e| e.with_path(&origin))?;
            Some(union)
        };
        // The union of two host gates of the same size holds every host of the merged list; a
        // list without one (or one sized apart) leaves the merged list without a gate.
        let gate = match (self.url_gate(), other.url_gate()) {
            (Some(mine), Some(theirs)) => {
                let mut gate = mine.clone();
                gate.union(theirs).ok().map(|()| gate)
            }
            _ => None,
        };
        // The other's category ids, as this list numbers them (new names appended).
        let ids: Vec<u16> = other
            .categories()
            .iter()
            .map(|c| self.resolver.category_id(&c.name))
            .collect();
        let exceptions: Vec<String> = self
            .resolver
            .exceptions()
            .sorted_keys()
            .into_iter()
            .chain(other.resolver.exceptions().sorted_keys())
            .map(str::to_string)
            .collect();
        match (self.resolver.verification(), other.resolver.verification()) {
            (Some(_), Some(_)) => self.merge_verified(other, &ids, union)?,
            (None, None) => self.merge_unverified(other, &ids, union)?,
            (mine, _) => {
                let which = if mine.is_some() {
                    "the second"
                } else {
                    "the first"
                };
                return Err(Error::DeltaUnsuitable {
                    path: self.origin(),
                    problem: format!(
                        "{which} list has no verification section, so the entries of the two \
                         cannot be matched; build both with their verification section, or both without"
                    ),
                });
            }
        }
        if let Engine::Urls(urls) = &mut self.engine {
            urls.set_gate(gate);
        }
        // The single-label domain entries of both.
        self.add_tops(other.resolver.tops().as_slice());
        // The other list's entries could be fingerprints of this one's never set: the union
        // keeps no never set (its members then answer at the list's rate).
        self.resolver.set_never(Default::default());
        self.resolver.set_exceptions(Exceptions::new(exceptions));
        self.meta.version = self.meta.version.max(other.meta.version);
        self.touch();
        Ok(())
    }

    /// Refuses a list of another kind, key scheme or sizing.
    fn check_mergeable(&self, other: &Blocklist) -> Result<()> {
        if self.kind != other.kind {
            return Err(Error::Incompatible {
                parameter: "kind",
                left: self.kind.to_string(),
                right: other.kind.to_string(),
            });
        }
        check_same_keys(
            (self.meta.scheme, self.meta.probes_per_item),
            (other.meta.scheme, other.meta.probes_per_item),
        )
    }

    /// The structure to change when merging `other`: the union computed aside, or this one.
    fn layers_to_merge(&mut self, other: &Blocklist) -> Result<&mut Layers> {
        let origin = self.origin();
        self.layers_mut().ok_or(Error::CannotChange {
            path: origin,
            kind: other.kind,
            action: "merge into",
        })
    }

    /// Merges `other`'s entries by fingerprint (both lists have a verification table): an entry
    /// in both is kept once, in the categories of both (`ids` numbers `other`'s categories as
    /// this list does); a deleting structure takes only the new entries when `union` is not
    /// given.
    fn merge_verified(
        &mut self,
        other: &Blocklist,
        ids: &[u16],
        union: Option<Layers>,
    ) -> Result<()> {
        let origin = self.origin();
        let with_sets = self.resolver.categories().len() > 1;
        let mut added: Vec<(u64, Vec<u16>)> = Vec::new();
        let mut new_entries = Vec::new();
        if let Some(table) = other.resolver.verification() {
            let fingerprints = table.fingerprints().as_slice();
            for (i, &v) in fingerprints.iter().enumerate() {
                let theirs_ids: Vec<u16> = match table.set_of().get(i) {
                    Some(&set) => table
                        .sets()
                        .get(set)
                        .iter()
                        .map(|&id| ids[id as usize])
                        .collect(),
                    None => vec![ids[0]],
                };
                match self.resolver.verification().and_then(|t| t.lookup(v)) {
                    Some(existing) => {
                        let mut all: Vec<u16> = if existing.is_empty() {
                            vec![0]
                        } else {
                            existing.to_vec()
                        };
                        all.extend(theirs_ids);
                        added.push((v, all));
                    }
                    None => {
                        new_entries.push(v);
                        added.push((v, theirs_ids));
                    }
                }
            }
        }
        let layers = self.layers_to_merge(other)?;
        match union {
            Some(union) => *layers = union,
            None => {
                for &v in &new_entries {
                    layers
                        .insert_fingerprint(v)
                        .map_err(|e| e.with_path(&origin))?;
                }
            }
        }
        let with_sets = with_sets || self.resolver.categories().len() > 1;
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&added, &[], with_sets);
        }
        self.recount();
        Ok(())
    }

    /// Merges `other`'s structure as it is (neither list has a verification table): the entry
    /// count and set fingerprint become sums, exact only if the lists are disjoint, and are
    /// marked approximate.
    fn merge_unverified(
        &mut self,
        other: &Blocklist,
        ids: &[u16],
        union: Option<Layers>,
    ) -> Result<()> {
        let layers = self.layers_to_merge(other)?;
        if let Some(union) = union {
            *layers = union;
        }
        for (category, &id) in other.categories().iter().zip(ids) {
            self.resolver.count_entries(id, category.entries as i64);
        }
        self.meta.entries += other.meta.entries;
        self.meta.fingerprint.0 = self
            .meta
            .fingerprint
            .0
            .wrapping_add(other.meta.fingerprint.0);
        self.meta.exact_count = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Blocklist, BuildOptions, EntrySet, Kind};
    use phishbloom_url::Entry;

    /// A list of `lines` and 300 more entries, at a rate where its filter answers for many
    /// other expressions (no host gate to rule them out first).
    fn list(kind: Kind, lines: &[&str]) -> (Blocklist, EntrySet) {
        let fillers = (0..300).map(|i| format!("filler{i}.example"));
        let entries = lines
            .iter()
            .map(|l| l.to_string())
            .chain(fillers)
            .map(|l| Entry::parse(l.as_bytes()).unwrap());
        let set = EntrySet::uncategorized(entries.collect(), "phishing");
        let options = BuildOptions {
            kind,
            fpp: 0.5,
            expression_bound: 1,
            host_gate: false,
            ..BuildOptions::default()
        };
        (Blocklist::from_entries(&set, &options).unwrap(), set)
    }

    /// A merge refused for want of a matching kind changes nothing: the never set stays.
    #[test]
    fn a_refused_merge_leaves_the_never_set() {
        let (mut mine, set) = list(Kind::Blocked, &["evil.com", "intranet"]);
        let members: Vec<String> = (0..200).map(|i| format!("site{i}.example")).collect();
        let members: Vec<&[u8]> = members.iter().map(|m| m.as_bytes()).collect();
        let report = mine.never_warn(&set, &members).unwrap();
        // At this rate the filter answers for some members: the set is not empty.
        assert!(report.excluded > 0, "{report:?}");
        let before = mine.resolver.never().clone();
        let (other, _) = list(Kind::Classic, &["bad.org"]);
        assert!(mine.merge(&other).is_err());
        assert_eq!(mine.resolver.never(), &before);
        assert_eq!(mine.resolver.tops().len(), 1);
    }
}
