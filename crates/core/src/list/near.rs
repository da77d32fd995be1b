//! A near-duplicate [`Blocklist`] ([`crate::near`]): built from fingerprinted documents, asked
//! for the known documents near a text, changed by document (add replaces by name, remove goes
//! by name), merged with another.

use std::collections::BTreeMap;

use phishbloom_text::simhash::{Fingerprint, SimHashParams, SimHasher};

use super::model::{Blocklist, Engine};
use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::kind::Kind;
use crate::near::{clip_name, doc_term, NearDoc, NearEngine, NearMatch};
use crate::resolve::{Category, Exceptions, Resolver};
use crate::sections::{Meta, SetFingerprint};

use super::edit::Change;

/// How a near-duplicate list is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NearOptions {
    /// How documents are fingerprinted.
    pub params: SimHashParams,
    /// The largest distance lookups may ask for.
    pub distance: u32,
    /// Blocks of the permuted tables (more blocks: more tables, fewer candidates).
    pub blocks: u32,
    /// Creation time to record (seconds since the Unix epoch).
    pub created: u64,
}

impl Default for NearOptions {
    fn default() -> Self {
        NearOptions {
            params: SimHashParams::default(),
            distance: crate::near::DEFAULT_DISTANCE,
            blocks: crate::near::default_blocks(crate::near::DEFAULT_DISTANCE),
            created: 0,
        }
    }
}

/// A document to put in a near-duplicate list: its fingerprint, name, and categories by name
/// (none: the list's own name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedDoc {
    /// Its fingerprint under the list's parameters.
    pub fingerprint: Fingerprint,
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
            Engine::Near(NearEngine::build(
                options.params,
                options.distance,
                options.blocks,
                Vec::new(),
            )?),
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
        hasher: &mut SimHasher,
    ) -> Result<Vec<NearMatch>> {
        let engine = self.near_engine()?;
        let fingerprint = engine.fingerprint(text, hasher);
        self.near_fingerprint(fingerprint, distance)
    }

    /// [`Blocklist::near`] for a fingerprint already computed.
    pub fn near_fingerprint(
        &self,
        fingerprint: Fingerprint,
        distance: Option<u32>,
    ) -> Result<Vec<NearMatch>> {
        let engine = self.near_engine()?;
        let distance = distance.unwrap_or(engine.tables().distance());
        let categories = self.resolver.categories();
        Ok(engine
            .lookup(fingerprint, distance)?
            .into_iter()
            .map(|(index, distance)| {
                let (name, ids) = engine.doc(index);
                let check_distance = match fingerprint {
                    Fingerprint::Sim { check, .. } => engine.check_distance(index, check),
                    Fingerprint::Exact(_) => None,
                };
                NearMatch {
                    name: name.to_string(),
                    distance,
                    check_distance,
                    categories: ids
                        .iter()
                        .filter_map(|&id| categories.get(id as usize))
                        .map(|c| c.name.clone())
                        .collect(),
                    exact: engine.is_exact(index),
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
        if mine.params() != theirs.params() {
            return Err(Error::Incompatible {
                parameter: "fingerprinting (shingle, minimum tokens, weighting)",
                left: format!("{:?}", mine.params()),
                right: format!("{:?}", theirs.params()),
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
        let engine = self.near_engine()?;
        let (params, distance, blocks) = (
            *engine.params(),
            engine.tables().distance(),
            engine.tables().blocks(),
        );
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
                fingerprint.add(doc_term(&d.name, d.fingerprint));
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
        let engine = NearEngine::build(params, distance, blocks, near_docs)?;
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

    /// A SimHash whose check equals its key (the tests' documents do the same).
    fn sim(v: u64) -> Fingerprint {
        Fingerprint::Sim { key: v, check: v }
    }

    fn doc(name: &str, v: u64, category: &str) -> NamedDoc {
        NamedDoc {
            fingerprint: Fingerprint::Sim { key: v, check: v },
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
        let (list, change) = Blocklist::from_near("known", &NearOptions::default(), docs).unwrap();
        assert_eq!(change.changed, 3);
        assert_eq!(list.meta().version, 1);
        let image = list.to_bytes();
        let mut read = Blocklist::from_bytes("known.bloom", &image).unwrap();
        assert_eq!(read.kind(), Kind::Near);
        assert_eq!(read.meta().fingerprint, list.meta().fingerprint);
        let found = read
            .near_fingerprint(sim(0x1234_5678_9abc_def7), None)
            .unwrap();
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
            .near_fingerprint(sim(0x1111_2222_3333_4444), Some(0))
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

        let (other, _) = Blocklist::from_near(
            "other",
            &NearOptions::default(),
            vec![doc("new.txt", 7, "spam")],
        )
        .unwrap();
        read.merge(&other).unwrap();
        assert_eq!(read.meta().entries, 4);
        let back = Blocklist::from_bytes("m.bloom", &read.to_bytes()).unwrap();
        assert_eq!(
            back.near_fingerprint(sim(7), Some(0)).unwrap()[0].name,
            "new.txt"
        );
    }
}
