//! A near-duplicate [`Blocklist`] ([`crate::near`]): built from fingerprinted documents, asked
//! for the known documents near a text, changed by document (add replaces by name, remove goes
//! by name), merged with another.

use std::collections::BTreeMap;

use super::model::{Blocklist, Engine};
use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::kind::Kind;
use crate::near::{
    clip_name, doc_term, NearDoc, NearEngine, NearHasher, NearMatch, NearMethod, Print,
};
use crate::resolve::{Category, Exceptions, Resolver};
use crate::sections::{Meta, SetFingerprint};

use super::edit::{Applied, Change};
use crate::delta::{AnyDelta, NearDelta, NearEntry, NearState};

/// How a near-duplicate list is built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NearOptions {
    /// How documents are printed and found.
    pub method: NearMethod,
    /// Creation time to record (seconds since the Unix epoch).
    pub created: u64,
}

/// A document to put in a near-duplicate list: its fingerprint, name, and categories by name
/// (none: the list's own name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedDoc {
    /// Its print under the list's method.
    pub fingerprint: Print,
    /// Its name (cut to [`crate::near::MAX_NAME_BYTES`]).
    pub name: String,
    /// Its categories.
    pub categories: Vec<String>,
}

impl Blocklist {
    /// A near-duplicate list named `name` holding `docs`; a later document with the name of an
    /// earlier one replaces it (counted in the returned `unchanged`).
    pub fn from_near(
        name: &str,
        options: &NearOptions,
        docs: Vec<NamedDoc>,
    ) -> Result<(Self, Change)> {
        let meta = Meta {
            name: name.to_string(),
            version: 1,
            created: options.created,
            scheme: KeyScheme::Near,
            probes_per_item: 1,
            entries: 0,
            fingerprint: SetFingerprint::default(),
            target_fpp: None,
            exact_count: true,
        };
        let mut list = Blocklist::from_parts(
            Kind::Near,
            meta,
            Engine::Near(NearEngine::build(&options.method, Vec::new())?),
        );
        // A list with no document yet has no categories but its own name's.
        list.resolver = Resolver::new(Vec::new(), None, Exceptions::default());
        let change = list.put_docs(docs, false)?;
        list.meta.version = 1;
        Ok((list, change))
    }

    /// The near-duplicate engine, or the error naming what this list is instead.
    pub fn near_engine(&self) -> Result<&NearEngine> {
        match &self.engine {
            Engine::Near(engine) => Ok(engine),
            _ => Err(Error::NotNear {
                path: self.origin(),
                kind: self.kind,
            }),
        }
    }

    /// The known documents within `distance` (the list's own when `None`) of `text`, nearest
    /// first.
    pub fn near(
        &self,
        text: &str,
        distance: Option<u32>,
        hasher: &mut NearHasher,
    ) -> Result<Vec<NearMatch>> {
        let engine = self.near_engine()?;
        let print = engine.print(text, hasher);
        self.near_print(&print, distance)
    }

    /// [`Blocklist::near`] for a print already computed.
    pub fn near_print(&self, print: &Print, distance: Option<u32>) -> Result<Vec<NearMatch>> {
        let engine = self.near_engine()?;
        let distance = distance.unwrap_or(engine.max_distance());
        let categories = self.resolver.categories();
        Ok(engine
            .lookup(print, distance)?
            .into_iter()
            .map(|found| {
                let (name, ids) = engine.doc(found.index);
                NearMatch {
                    name: name.to_string(),
                    distance: found.distance,
                    check_distance: found.check_distance,
                    resemblance: found.resemblance,
                    categories: ids
                        .iter()
                        .filter_map(|&id| categories.get(id as usize))
                        .map(|c| c.name.clone())
                        .collect(),
                    exact: engine.is_exact(found.index),
                }
            })
            .collect())
    }

    /// Adds documents (a name already held is replaced: `unchanged` counts those) and moves
    /// the version on.
    pub fn add_near(&mut self, docs: Vec<NamedDoc>) -> Result<Change> {
        self.near_engine()?;
        self.put_docs(docs, false)
    }

    /// Removes the documents of these names; refuses, changing nothing, when one is not held.
    pub fn remove_near(&mut self, names: &[&[u8]]) -> Result<Change> {
        let engine = self.near_engine()?;
        let held: std::collections::HashSet<&str> =
            (0..engine.len()).map(|i| engine.doc(i).0).collect();
        let mut gone = std::collections::HashSet::new();
        for &raw in names {
            // The name exactly: a file name may end in anything, `\r` too.
            let name = String::from_utf8_lossy(raw);
            let name = name.as_ref();
            if !held.contains(name) {
                return Err(Error::NearNameUnknown {
                    path: self.origin(),
                    name: name.to_string(),
                });
            }
            gone.insert(name.to_string());
        }
        let removed = gone.len() as u64;
        let categories = self.category_names();
        let docs: Vec<NamedDoc> = engine
            .docs()
            .filter(|d| !gone.contains(&d.name))
            .map(|d| named(d, &categories))
            .collect();
        self.rebuild_near(docs)?;
        Ok(Change {
            changed: removed,
            unchanged: 0,
        })
    }

    /// Adds every document of `other` (a near-duplicate list fingerprinted the same way); a
    /// name in both takes `other`'s document.
    pub(super) fn merge_near(&mut self, other: &Blocklist) -> Result<()> {
        let (mine, theirs) = (self.near_engine()?, other.near_engine()?);
        let (left, right) = (mine.method(), theirs.method());
        let same = match (&left, &right) {
            (NearMethod::SimHash { params: a, .. }, NearMethod::SimHash { params: b, .. }) => {
                a == b
            }
            _ => left == right,
        };
        if !same {
            return Err(Error::Incompatible {
                parameter: "fingerprinting (method, shingles, parameters, boilerplate)",
                left: near_method_summary(&left),
                right: near_method_summary(&right),
            });
        }
        let categories = other.category_names();
        let docs = theirs.docs().map(|d| named(d, &categories)).collect();
        self.put_docs(docs, true)?;
        Ok(())
    }

    fn category_names(&self) -> Vec<String> {
        self.resolver
            .categories()
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// Puts `docs` into the list (replacing by name) and rebuilds the tables.
    fn put_docs(&mut self, docs: Vec<NamedDoc>, _merging: bool) -> Result<Change> {
        let engine = self.near_engine()?;
        let categories = self.category_names();
        let mut all: BTreeMap<String, NamedDoc> = engine
            .docs()
            .map(|d| (d.name.clone(), named(d, &categories)))
            .collect();
        let mut change = Change::default();
        for mut doc in docs {
            doc.name = clip_name(&doc.name).to_string();
            if doc.categories.is_empty() {
                doc.categories.push(self.meta.name.clone());
            }
            match all.insert(doc.name.clone(), doc) {
                Some(_) => change.unchanged += 1,
                None => change.changed += 1,
            }
        }
        self.rebuild_near(all.into_values().collect())?;
        Ok(change)
    }

    /// Replaces the documents: categories renumbered (only those in use, in order of first
    /// name), tables rebuilt, counts and set fingerprint recomputed, version moved on.
    fn rebuild_near(&mut self, docs: Vec<NamedDoc>) -> Result<()> {
        let method = self.near_engine()?.method();
        let mut names: Vec<String> = docs
            .iter()
            .flat_map(|d| d.categories.iter().cloned())
            .collect();
        names.sort();
        names.dedup();
        if names.len() > crate::resolve::MAX_CATEGORIES {
            return Err(Error::NearTooManyCategories {
                path: self.origin(),
                count: names.len(),
            });
        }
        let mut counts = vec![0u64; names.len()];
        let mut fingerprint = SetFingerprint::default();
        let near_docs: Vec<NearDoc> = docs
            .into_iter()
            .map(|d| {
                fingerprint.add(doc_term(&d.name, &d.fingerprint));
                let mut ids: Vec<u16> = d
                    .categories
                    .iter()
                    .map(|c| {
                        // Every category was collected into `names` above.
                        let id = names.binary_search(c).unwrap_or_default();
                        counts[id] += 1;
                        id as u16
                    })
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                NearDoc {
                    fingerprint: d.fingerprint,
                    name: d.name,
                    categories: ids,
                }
            })
            .collect();
        let entries = near_docs.len() as u64;
        let engine = NearEngine::build(&method, near_docs)?;
        let categories = names
            .into_iter()
            .zip(counts)
            .map(|(name, entries)| Category { name, entries })
            .collect();
        self.engine = Engine::Near(engine);
        self.resolver = Resolver::new(categories, None, Exceptions::default());
        self.meta.entries = entries;
        self.meta.fingerprint = fingerprint;
        self.meta.exact_count = true;
        self.touch();
        Ok(())
    }
}

/// A method's code in a near delta: 0 SimHash, 1 MinHash.
fn method_code(method: &NearMethod) -> u8 {
    match method {
        NearMethod::SimHash { .. } => 0,
        NearMethod::MinHash { .. } => 1,
    }
}

impl Blocklist {
    /// This list's documents as a near delta carries them, and its state.
    fn near_entries(&self) -> Result<(NearState, Vec<NearEntry>)> {
        let engine = self.near_engine()?;
        let categories = self.category_names();
        let entries = engine
            .docs()
            .map(|d| {
                let named = named(d, &categories);
                NearEntry {
                    name: named.name,
                    categories: named.categories,
                    print: named.fingerprint,
                }
            })
            .collect();
        let state = NearState {
            version: self.meta.version,
            entries: self.meta.entries,
            fingerprint: self.meta.fingerprint,
        };
        Ok((state, entries))
    }

    /// The delta from this near-duplicate list to `new`, a later version of it: refused when
    /// the two print documents differently (another method, parameters or boilerplate), since
    /// a document's print would then change without its text changing.
    pub fn near_delta_to(&self, new: &Blocklist, created: u64) -> Result<NearDelta> {
        let (mine, theirs) = (self.near_engine()?.method(), new.near_engine()?.method());
        if mine != theirs {
            return Err(Error::DeltaUnsuitable {
                path: new.origin(),
                problem: format!(
                    "the two near-duplicate lists print documents differently ({} and {}): \
                     ship the whole file",
                    near_method_summary(&mine),
                    near_method_summary(&theirs)
                ),
            });
        }
        let (old_state, old) = self.near_entries()?;
        let (new_state, new) = new.near_entries()?;
        Ok(NearDelta::between(
            (old_state, &old),
            (new_state, &new),
            method_code(&mine),
            created,
        ))
    }

    /// Applies a near delta made from this list's version: checks its base and method, works
    /// out — before changing anything — the set fingerprint the change leads to and refuses
    /// the delta unless it is the one promised, then removes and adds the documents.
    pub fn apply_near_delta(&mut self, delta: &NearDelta) -> Result<Applied> {
        let path = self.origin();
        let method = self.near_engine()?.method();
        if delta.method != method_code(&method) {
            return Err(Error::DeltaUnsuitable {
                path,
                problem: format!(
                    "the delta is for a near-duplicate list of the other method than this {} \
                     one: fetch the whole file",
                    method.name()
                ),
            });
        }
        let (state, entries) = self.near_entries()?;
        let base = delta.base;
        if !self.meta.exact_count
            || base.fingerprint != state.fingerprint
            || base.entries != state.entries
            || (base.version != 0 && base.version != state.version)
        {
            let describe = |s: &NearState| {
                format!(
                    "version {}, {} documents, set fingerprint {:032x}",
                    s.version, s.entries, s.fingerprint.0
                )
            };
            return Err(Error::DeltaBase {
                path,
                expected: describe(&base),
                found: describe(&state),
            });
        }
        let mut held: BTreeMap<String, NearEntry> =
            entries.into_iter().map(|e| (e.name.clone(), e)).collect();
        let mut removed = Vec::with_capacity(delta.removed.len());
        for name in &delta.removed {
            let entry = held.remove(name).ok_or_else(|| Error::DeltaCheck {
                path: path.clone(),
                detail: format!("it removes `{name}`, which the list does not hold"),
            })?;
            removed.push((entry.name, entry.print));
        }
        for entry in &delta.added {
            if held.contains_key(&entry.name) {
                return Err(Error::DeltaCheck {
                    path,
                    detail: format!("it adds `{}`, which the list holds", entry.name),
                });
            }
        }
        let promised = delta.fingerprint_after(&removed);
        if promised != delta.target_fingerprint {
            return Err(Error::DeltaCheck {
                path,
                detail: format!(
                    "its changes lead to set fingerprint {:032x}, not the promised {:032x}",
                    promised.0, delta.target_fingerprint.0
                ),
            });
        }
        // Checked: change everything.
        let docs = held
            .into_values()
            .chain(delta.added.iter().cloned())
            .map(|e| NamedDoc {
                fingerprint: e.print,
                name: e.name,
                categories: e.categories,
            })
            .collect();
        self.rebuild_near(docs)?;
        let version = match delta.target_version {
            0 => state.version.saturating_add(1),
            version => version,
        };
        self.meta.version = version;
        Ok(Applied {
            added: delta.added.len() as u64,
            removed: removed.len() as u64,
            kept: 0,
            recategorized: 0,
            version,
        })
    }

    /// Applies a delta of either species ([`AnyDelta`]).
    pub fn apply_any(&mut self, delta: &AnyDelta) -> Result<Applied> {
        match delta {
            AnyDelta::Entries(delta) => self.apply(delta),
            AnyDelta::Near(delta) => self.apply_near_delta(delta),
        }
    }
}

/// A method as an error message names it: its name and parameters (not the boilerplate's
/// shingles, only their count).
fn near_method_summary(method: &NearMethod) -> String {
    match method {
        NearMethod::MinHash {
            params,
            boilerplate,
        } => format!(
            "minhash {params:?}, {} boilerplate shingles",
            boilerplate.len()
        ),
        NearMethod::SimHash { params, .. } => format!("simhash {params:?}"),
    }
}

/// A stored document with its category names.
fn named(doc: NearDoc, categories: &[String]) -> NamedDoc {
    NamedDoc {
        fingerprint: doc.fingerprint,
        name: doc.name,
        categories: doc
            .categories
            .iter()
            .filter_map(|&id| categories.get(id as usize).cloned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::near::tests::text;
    use std::path::Path;

    /// A SimHash whose check equals its key (the tests' documents do the same).
    fn sim(v: u64) -> Print {
        Print::Sim { key: v, check: v }
    }

    fn simhash() -> NearOptions {
        NearOptions {
            method: NearMethod::simhash(),
            created: 0,
        }
    }

    fn doc(name: &str, v: u64, category: &str) -> NamedDoc {
        NamedDoc {
            fingerprint: Print::Sim { key: v, check: v },
            name: name.into(),
            categories: if category.is_empty() {
                vec![]
            } else {
                vec![category.into()]
            },
        }
    }

    #[test]
    fn a_list_round_trips_and_is_edited_by_name() {
        let docs = vec![
            doc("kit-a.html", 0x1234_5678_9abc_def0, "phishing"),
            doc("run-7.eml", 0x0fed_cba9_8765_4321, "spam"),
            doc("plain.txt", 0x1111_2222_3333_4444, ""),
        ];
        let (list, change) = Blocklist::from_near("known", &simhash(), docs).unwrap();
        assert_eq!(change.changed, 3);
        assert_eq!(list.meta().version, 1);
        let image = list.to_bytes();
        let mut read = Blocklist::from_bytes("known.bloom", &image).unwrap();
        assert_eq!(read.kind(), Kind::Near);
        assert_eq!(read.meta().fingerprint, list.meta().fingerprint);
        let found = read.near_print(&sim(0x1234_5678_9abc_def7), None).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (
                found[0].name.as_str(),
                found[0].distance,
                found[0].categories.clone()
            ),
            ("kit-a.html", 3, vec!["phishing".to_string()])
        );
        let unnamed = read
            .near_print(&sim(0x1111_2222_3333_4444), Some(0))
            .unwrap();
        assert_eq!(unnamed[0].categories, ["known"]);
        assert!(read.require_checkable().is_err());

        read.remove_near(&[b"run-7.eml"]).unwrap();
        assert_eq!(read.meta().entries, 2);
        assert_eq!(read.meta().version, 2);
        assert!(read.remove_near(&[b"nope"]).is_err());
        let again = read
            .add_near(vec![doc("run-7.eml", 0x0fed_cba9_8765_4321, "spam")])
            .unwrap();
        assert_eq!(again.changed, 1);
        // Back to the same set: the same set fingerprint.
        assert_eq!(read.meta().fingerprint, list.meta().fingerprint);

        let (other, _) =
            Blocklist::from_near("other", &simhash(), vec![doc("new.txt", 7, "spam")]).unwrap();
        read.merge(&other).unwrap();
        assert_eq!(read.meta().entries, 4);
        let back = Blocklist::from_bytes("m.bloom", &read.to_bytes()).unwrap();
        assert_eq!(
            back.near_print(&sim(7), Some(0)).unwrap()[0].name,
            "new.txt"
        );
    }

    #[test]
    fn a_near_delta_turns_each_version_into_the_next_and_refuses_a_wrong_base() {
        let method = NearMethod::default();
        let doc = |i: u64, category: &str| NamedDoc {
            fingerprint: method.print(&text(i, 200), &mut NearHasher::new()),
            name: format!("doc-{i}"),
            categories: vec![category.into()],
        };
        let mut hasher = NearHasher::new();
        let options = NearOptions {
            method: method.clone(),
            created: 0,
        };
        let docs: Vec<NamedDoc> = (0..30).map(|i| doc(i, "spam")).collect();
        let (mut publisher, _) = Blocklist::from_near("known", &options, docs).unwrap();
        let mut copy = Blocklist::from_bytes("copy.bloom", &publisher.to_bytes()).unwrap();
        for round in 0..5u64 {
            let before = Blocklist::from_bytes("before.bloom", &publisher.to_bytes()).unwrap();
            publisher
                .remove_near(&[format!("doc-{}", round * 3).as_bytes()])
                .unwrap();
            publisher
                .add_near(vec![
                    doc(100 + round, "phishing"),
                    doc(round * 3 + 1, "other"),
                ])
                .unwrap();
            let delta = before.near_delta_to(&publisher, 0).unwrap();
            let read = NearDelta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap();
            copy.apply_near_delta(&read).unwrap();
            assert_eq!(copy.meta().fingerprint, publisher.meta().fingerprint);
            assert_eq!(copy.meta().version, publisher.meta().version);
            let query = method.print(&text(100 + round, 200), &mut hasher);
            let found = copy.near_print(&query, None).unwrap();
            assert_eq!(found[0].name, format!("doc-{}", 100 + round));
            assert_eq!(found[0].categories, ["phishing"]);
            // The same delta again: its base is gone.
            assert!(copy.apply_near_delta(&read).is_err());
        }
        // A delta whose promise does not follow from its changes changes nothing.
        let before = Blocklist::from_bytes("before.bloom", &publisher.to_bytes()).unwrap();
        publisher.add_near(vec![doc(500, "spam")]).unwrap();
        let mut delta = before.near_delta_to(&publisher, 0).unwrap();
        delta.target_fingerprint = before.meta().fingerprint;
        let held = copy.meta().fingerprint;
        assert!(copy.apply_near_delta(&delta).is_err());
        assert_eq!(copy.meta().fingerprint, held);
    }
}
