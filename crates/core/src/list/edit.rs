//! Adding and removing entries of a [`Blocklist`] in memory.

use std::path::PathBuf;

use crate::engine::gate::HostGate;
use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::prepare::{self, EntryItem};
use crate::resolve::Verification;
use crate::sections::SetFingerprint;
use crate::structure::Layers;

use super::model::{Blocklist, Engine};

/// What an [`Blocklist::add`] or [`Blocklist::remove`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// Items newly in the list (added) or no longer in it (removed).
    pub changed: u64,
    /// Items that were in the list already (add) — or, for a list without a verification
    /// section, that its filter already answered for (they may or may not have been new).
    pub unchanged: u64,
}

/// What [`Blocklist::apply`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// Entries added.
    pub added: u64,
    /// Entries removed.
    pub removed: u64,
    /// Entries the delta removes that a Bloom file without a verification section keeps (it
    /// cannot forget them): they answer as false positives until the file is rebuilt.
    pub kept: u64,
    /// Entries whose categories changed.
    pub recategorized: u64,
    /// The list version now.
    pub version: u64,
}

/// What removing one listed item does: its categories, and whether it leaves the list.
struct Removal<'p> {
    item: &'p EntryItem,
    ids: Vec<u16>,
    leaves: bool,
}

impl Blocklist {
    /// Prepares items as this list's key scheme reads them ([`prepare::entries`]).
    fn prepare(&self, items: &[&[u8]]) -> Result<Vec<EntryItem>> {
        prepare::entries(self.meta.scheme, items)
    }

    /// Whether [`Blocklist::remove`] can work: a cuckoo or counting list with a verification
    /// section, or a Bloom list with one.
    pub fn supports_remove(&self) -> bool {
        self.layers().is_some() && self.resolver.verification().is_some()
    }

    /// The structure of a list that is not CaBF.
    pub fn layers(&self) -> Option<&Layers> {
        match &self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => Some(urls.layers()),
            Engine::Cabf(_) | Engine::Keywords(_) | Engine::Near(_) => None,
        }
    }

    /// The structure, for a change whose entries' hosts are unknown: a list of URL entries
    /// drops its host gate ([`UrlFilter::layers_mut`](crate::engine::urls::UrlFilter::layers_mut)).
    pub(super) fn layers_mut(&mut self) -> Option<&mut Layers> {
        match &mut self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => Some(urls.layers_mut()),
            Engine::Cabf(_) | Engine::Keywords(_) | Engine::Near(_) => None,
        }
    }

    /// The structure and the host gate, for adding entries whose hosts go into the gate, or
    /// removing entries ([`UrlFilter::parts_mut`](crate::engine::urls::UrlFilter::parts_mut)).
    fn edit_parts_mut(&mut self) -> Option<(&mut Layers, Option<&mut HostGate>)> {
        match &mut self.engine {
            Engine::Keys(layers) => Some((layers, None)),
            Engine::Urls(urls) => Some(urls.parts_mut()),
            Engine::Cabf(_) | Engine::Keywords(_) | Engine::Near(_) => None,
        }
    }

    /// For a list that does not grow and whose structure bounds its size: the entries it holds
    /// (exact when the count is, else the structure's insertions) and the room left.
    fn room(&self) -> Option<(u64, u64)> {
        let layers = self.layers().filter(|l| !l.grows())?;
        let capacity = layers.newest_capacity()?;
        let held = if self.meta.exact_count {
            self.meta.entries
        } else {
            layers.items()
        };
        Some((held, capacity.saturating_sub(held)))
    }

    /// Whether the list already answers for a prepared item: its verification section holds it
    /// (in any category), or, without one, its structure does.
    fn holds(&self, layers: &Layers, item: &EntryItem) -> bool {
        match self.resolver.verification() {
            Some(table) => table.lookup(item.fingerprint).is_some(),
            None => Self::structure_holds(layers, self.meta.scheme, item),
        }
    }

    /// Whether the structure may hold a prepared item.
    fn structure_holds(layers: &Layers, scheme: KeyScheme, item: &EntryItem) -> bool {
        match scheme {
            KeyScheme::Expressions => layers.contains_hash(item.hash),
            _ => layers.contains_key(&item.key),
        }
    }

    /// Adds items (URL entries, or keys for a list of keys) in category `category` (a new name
    /// adds a category; `None` is the list's category when it has one, and an error naming
    /// them when it has several), and moves the list version forward. With a verification section an item
    /// already listed is counted `unchanged` and the set fingerprint stays exact; without one,
    /// an item the filter already answers for is counted `unchanged` (RedisBloom's `BF.ADD`
    /// rule) and the count and fingerprint are marked approximate.
    ///
    /// On an error (a full cuckoo filter that does not grow) the blocklist in memory may hold
    /// some of the items: save nothing and start again from the file.
    pub fn add(&mut self, items: &[&[u8]], category: Option<&str>) -> Result<Change> {
        self.refuse_static("add to")?;
        if self.layers().is_none() {
            return Err(Error::CannotChange {
                path: self.origin(),
                kind: self.kind,
                action: "add to",
            });
        }
        let prepared = self.prepare(items)?;
        self.check_room(&prepared)?;
        let id = self.resolver.category_id(&self.category_for_add(category)?);
        let with_sets = self.resolver.categories().len() > 1;
        let mut change = Change::default();
        let mut table_added = Vec::new();
        // An entry is never overruled by the never set.
        let added: Vec<u64> = prepared.iter().map(|item| item.fingerprint).collect();
        self.resolver.forget_never(&added);
        for item in &prepared {
            if !self.add_one(item, id, &mut change, &mut table_added)? {
                break;
            }
        }
        let with_sets = with_sets || self.resolver.categories().len() > 1;
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &[], with_sets);
        }
        if matches!(self.engine, Engine::Urls(_)) && self.meta.scheme == KeyScheme::Expressions {
            let tops: Vec<u64> = prepared
                .iter()
                .filter(|item| super::tops::is_top_key(&item.key))
                .map(|item| item.fingerprint)
                .collect();
            self.add_tops(&tops);
        }
        self.touch();
        Ok(change)
    }

    /// The one capacity rule of every add path: a list that does not grow takes new entries
    /// only while it holds fewer than it was sized for, and refuses a batch that would pass
    /// that whole, before anything changes and before its items' category is asked about —
    /// every front end gets the same answer.
    fn check_room(&self, prepared: &[EntryItem]) -> Result<()> {
        if let Some((held, room)) = self.room() {
            let layers = self.layers();
            let new = prepared
                .iter()
                .filter(|item| !layers.is_some_and(|l| self.holds(l, item)))
                .count() as u64;
            if new > room {
                return Err(Error::Full {
                    path: self.origin(),
                    kind: self.kind,
                    items: held,
                });
            }
        }
        Ok(())
    }

    /// Adds one prepared item to category `id`, counting it in `change` and queuing its
    /// table entry in `table_added`; `false` when the list has no structure to add to.
    fn add_one(
        &mut self,
        item: &EntryItem,
        id: u16,
        change: &mut Change,
        table_added: &mut Vec<(u64, Vec<u16>)>,
    ) -> Result<bool> {
        let scheme = self.meta.scheme;
        // A table without category sets belongs to a one-category list: category 0.
        let listed: Option<Option<Vec<u16>>> = self.resolver.verification().map(|table| {
            table.lookup(item.fingerprint).map(|ids| {
                if ids.is_empty() {
                    vec![0]
                } else {
                    ids.to_vec()
                }
            })
        });
        let known = match listed {
            Some(Some(ids)) if ids.contains(&id) => Some(true),
            // Listed in another category: it joins this one too, the set is unchanged.
            Some(Some(ids)) => {
                table_added.push((item.fingerprint, ids.into_iter().chain([id]).collect()));
                self.resolver.count_entries(id, 1);
                change.unchanged += 1;
                return Ok(true);
            }
            Some(None) => Some(false),
            None => None,
        };
        let origin = self.origin();
        // `layers()` was checked by the caller.
        let Some((layers, gate)) = self.edit_parts_mut() else {
            return Ok(false);
        };
        match known {
            Some(true) => {
                change.unchanged += 1;
                return Ok(true);
            }
            None if Self::structure_holds(layers, scheme, item) => {
                self.meta.exact_count = false;
                change.unchanged += 1;
                return Ok(true);
            }
            _ => {}
        }
        let inserted = match scheme {
            KeyScheme::Expressions => layers.insert_hash(item.hash),
            _ => layers.insert_key(&item.key),
        };
        inserted.map_err(|e| e.with_path(&origin))?;
        if let Some(gate) = gate {
            let (host, path_len) = entry_host(&item.key);
            gate.insert(&host, path_len);
        }
        table_added.push((item.fingerprint, vec![id]));
        self.meta.fingerprint.add(item.fingerprint);
        self.meta.entries += 1;
        self.resolver.count_entries(id, 1);
        change.changed += 1;
        Ok(true)
    }

    /// The category items join ([`prepare::join_category`]).
    fn category_for_add(&self, category: Option<&str>) -> Result<String> {
        prepare::join_category(category, self.resolver.categories(), &self.meta.name)
            .map_err(|e| e.with_path(&self.origin))
    }

    /// Removes items from a list with a verification section: from category `category` only if
    /// given (an entry left in no category leaves the list), else from the list. Every item is
    /// checked against the verification section first, and the call changes nothing unless all
    /// of them are listed: removing a key that is not in a cuckoo or counting structure would
    /// take another key's fingerprint or counters and turn it clean. A cuckoo or counting
    /// structure forgets the entry; a Bloom filter cannot, so its bits stay and the section,
    /// which no longer confirms them, makes the entry answer clean. A Bloom list without a
    /// verification section cannot remove at all.
    pub fn remove(&mut self, items: &[&[u8]], category: Option<&str>) -> Result<Change> {
        if self.kind == crate::Kind::Near && category.is_none() {
            // A near-duplicate list's documents are removed by name.
            return self.remove_near(items);
        }
        self.refuse_static("remove from")?;
        let cannot = Error::CannotChange {
            path: self.origin(),
            kind: self.kind,
            action: "remove from",
        };
        let Some(layers) = self.layers() else {
            return Err(cannot);
        };
        let Some(table) = self.resolver.verification() else {
            return Err(if self.kind.deletes() {
                Error::RemoveNeedsVerification {
                    path: self.origin(),
                }
            } else {
                cannot
            });
        };
        let prepared = self.prepare(items)?;
        let category_id = match category {
            Some(name) => Some(
                self.resolver
                    .category_ids(&[name.to_string()], &self.origin())?[0],
            ),
            None => None,
        };
        let (plan, unchanged) = self.plan_removal(layers, table, &prepared, category_id)?;
        let with_sets = self.resolver.categories().len() > 1;
        let mut table_added = Vec::new();
        let mut table_removed = Vec::new();
        for removal in &plan {
            let (item, ids) = (removal.item, &removal.ids);
            let gone: Vec<u16> = match category_id {
                Some(id) => vec![id],
                None => ids.clone(),
            };
            for &id in &gone {
                self.resolver.count_entries(id, -1);
            }
            table_removed.push(item.fingerprint);
            if !removal.leaves {
                table_added.push((
                    item.fingerprint,
                    ids.iter().copied().filter(|i| !gone.contains(i)).collect(),
                ));
                continue;
            }
            self.forget_entry(item)?;
        }
        let gone: Vec<u64> = plan
            .iter()
            .filter(|removal| removal.leaves)
            .map(|removal| removal.item.fingerprint)
            .collect();
        self.forget_tops(&gone);
        if let Some(table) = self.resolver.verification_mut() {
            table.update(&table_added, &table_removed, with_sets);
        }
        self.touch();
        Ok(Change {
            changed: plan.len() as u64,
            unchanged,
        })
    }

    /// What removing `prepared` (from category `category_id`, or the list) does to each item,
    /// and how many are not in that category (unchanged), checked before anything changes:
    /// every item listed, and none a deleting structure could not take out of one layer.
    fn plan_removal<'p>(
        &self,
        layers: &Layers,
        table: &Verification,
        prepared: &'p [EntryItem],
        category_id: Option<u16>,
    ) -> Result<(Vec<Removal<'p>>, u64)> {
        let mut missing = prepared
            .iter()
            .filter(|item| table.lookup(item.fingerprint).is_none());
        if let Some(first) = missing.next() {
            return Err(Error::NotListed {
                path: self.origin(),
                count: 1 + missing.count(),
                first: String::from_utf8_lossy(&first.key).into_owned(),
            });
        }
        let mut plan = Vec::with_capacity(prepared.len());
        let mut unchanged = 0;
        for item in prepared {
            let ids = match table.lookup(item.fingerprint) {
                Some([]) | None => vec![0],
                Some(ids) => ids.to_vec(),
            };
            let leaves = match category_id {
                Some(id) if !ids.contains(&id) => {
                    unchanged += 1;
                    continue;
                }
                Some(_) => ids.len() == 1,
                None => true,
            };
            if leaves && self.kind.deletes() {
                let holders = layers.holders(item.fingerprint);
                if holders > 1 {
                    return Err(Error::AmbiguousRemoval {
                        path: self.origin(),
                        layers: holders,
                    });
                }
            }
            plan.push(Removal { item, ids, leaves });
        }
        Ok((plan, unchanged))
    }

    /// Takes an entry that leaves the list out of its structure and set fingerprint. Checked
    /// before: a kind that deletes has the item in one layer; a Bloom filter keeps its bits,
    /// settled by the verification section from now on.
    fn forget_entry(&mut self, item: &EntryItem) -> Result<()> {
        let origin = self.origin();
        if let Some((layers, _)) = self.edit_parts_mut() {
            if !layers
                .forget(item.fingerprint)
                .map_err(|e| e.with_path(&origin))?
            {
                return Err(Error::invalid(
                    origin,
                    "filter",
                    format!(
                        "`{}` is in the verification section but not in the filter",
                        String::from_utf8_lossy(&item.key)
                    ),
                ));
            }
        }
        self.meta.fingerprint.remove(item.fingerprint);
        self.meta.entries = self.meta.entries.saturating_sub(1);
        Ok(())
    }

    /// Recomputes the entry count, set fingerprint and per-category counts from the
    /// verification section.
    pub(super) fn recount(&mut self) {
        let Some(table) = self.resolver.verification() else {
            return;
        };
        let fingerprints = table.fingerprints().as_slice();
        let mut counts = vec![0i64; self.resolver.categories().len()];
        for i in 0..fingerprints.len() {
            match table.set_of().get(i) {
                Some(&set) => {
                    for &id in table.sets().get(set) {
                        counts[id as usize] += 1;
                    }
                }
                None => counts[0] += 1,
            }
        }
        self.meta.entries = fingerprints.len() as u64;
        self.meta.fingerprint = SetFingerprint::of(fingerprints.iter().copied());
        self.meta.exact_count = true;
        let current: Vec<u64> = self
            .resolver
            .categories()
            .iter()
            .map(|c| c.entries)
            .collect();
        for (id, (count, now)) in counts.into_iter().zip(current).enumerate() {
            self.resolver.count_entries(id as u16, count - now as i64);
        }
    }

    /// A new version: the version goes up by one, the old directory is gone, and its time is
    /// unknown (0) until a clock stamps it ([`Blocklist::stamp`], or the file writer when it
    /// writes a list whose time is unknown): this crate has no clock.
    pub(super) fn touch(&mut self) {
        // Saturating: a file claiming the last version (2⁶⁴ − 1) stays there rather than wrap to
        // the invalid version 0.
        self.meta.version = self.meta.version.saturating_add(1);
        self.meta.created = 0;
        self.directory = None;
    }

    /// Refuses to `action` a list of a static kind ([`crate::Kind::is_static`]).
    pub fn refuse_static(&self, action: &'static str) -> Result<()> {
        match self.kind.is_static() {
            true => Err(Error::StaticList {
                path: self.origin(),
                action,
            }),
            false => Ok(()),
        }
    }

    /// Sets the list version (a rebuild continues the version of the file it replaces).
    pub fn set_version(&mut self, version: u64) {
        self.meta.version = version.max(1);
    }

    /// Records when this version was made (seconds since the Unix epoch): what a holder of the
    /// list in memory calls after changing it, so that the image it serves and the file it
    /// writes carry the same time.
    pub fn stamp(&mut self, created: u64) {
        self.meta.created = created;
    }

    /// The file the blocklist was read from, or its name if it was built in memory.
    pub fn origin(&self) -> PathBuf {
        self.origin.clone()
    }
}

/// The host of a URL entry's key and the length of its path (`evil.com/login` → `evil.com`,
/// 6; 0 for a domain entry): a canonical host holds no `/` or `?`, and a key's path, when it has
/// one, starts with one of them.
fn entry_host(key: &[u8]) -> (std::borrow::Cow<'_, str>, usize) {
    let end = key
        .iter()
        .position(|&b| b == b'/' || b == b'?')
        .unwrap_or(key.len());
    (String::from_utf8_lossy(&key[..end]), key.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contents::KeyList;
    use crate::list::BuildOptions;

    #[test]
    fn an_entry_host_is_its_key_up_to_the_path() {
        for (key, host) in [
            ("evil.com", "evil.com"),
            ("evil.com/login", "evil.com"),
            ("a.b.evil.com/x/y?z=1", "a.b.evil.com"),
            ("1.2.3.4/arm", "1.2.3.4"),
            ("evil.com?x", "evil.com"),
        ] {
            assert_eq!(entry_host(key.as_bytes()).0, host);
            let entry = phishbloom_url::Entry::parse(key.as_bytes()).unwrap();
            let key = entry.to_key_string();
            let (host, path_len) = entry_host(key.as_bytes());
            assert_eq!(host, entry.key().host);
            assert_eq!(path_len, entry.key().path.len(), "{key}");
        }
    }

    #[test]
    fn a_change_makes_a_version_whose_time_the_holder_stamps() {
        let mut keys = KeyList::default();
        keys.push(b"a");
        let options = BuildOptions {
            created: 1_700_000_000,
            capacity: Some(8),
            ..BuildOptions::default()
        };
        let mut list =
            Blocklist::from_keys(&[("k".into(), keys)], KeyScheme::Exact, &options).unwrap();
        list.add(&[b"b"], None).unwrap();
        assert_eq!(list.meta().version, 2);
        // Unknown until stamped: this crate has no clock.
        assert_eq!(list.meta().created, 0);
        list.stamp(1_800_000_000);
        let read = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        assert_eq!(read.meta().created, 1_800_000_000);
    }

    /// A file written before the split-block gate (its host gate blocked, tag 0x8000) reads with
    /// that gate, answers as a list without a gate does, takes an added entry's host into it,
    /// and is written back with it under its own tag.
    #[test]
    fn a_list_with_a_blocked_gate_reads_adds_and_writes_it_as_it_was() {
        use crate::engine::gate::{path_key, HostGate, HOST_GATE_FPP};
        use crate::engine::Scratch;
        use crate::format::tag;
        use crate::EntrySet;
        use phishbloom_filter::{AnyFilter, BlockedBloomFilter, HashStrategy, KeyHash};
        use phishbloom_url::Entry;

        let keys: [&[u8]; 3] = [b"evil.com", b"bad.org/login", b"a.b.worse.net/x/y"];
        let entries = keys.iter().map(|k| Entry::parse(k).unwrap()).collect();
        let set = EntrySet::uncategorized(entries, "phishing");
        let options = BuildOptions {
            verify: true,
            capacity: Some(100),
            ..BuildOptions::default()
        };
        let mut list = Blocklist::from_entries(&set, &options).unwrap();
        let mut filter =
            BlockedBloomFilter::with_strategy(100, HOST_GATE_FPP, HashStrategy::Xxh3).unwrap();
        for (host, with_path) in [
            ("evil.com", false),
            ("bad.org", true),
            ("a.b.worse.net", true),
        ] {
            let hash = KeyHash::of(host.as_bytes());
            filter.insert_hash(hash);
            if with_path {
                filter.insert_hash(path_key(hash));
            }
        }
        let Engine::Urls(urls) = &mut list.engine else {
            panic!("a list of URL entries");
        };
        urls.set_gate(HostGate::from_filter(AnyFilter::Blocked(filter)));
        let mut read = Blocklist::from_bytes("old.bloom", &list.to_bytes()).unwrap();
        assert_eq!(
            read.url_gate().map(HostGate::section_tag),
            Some(tag::HOST_GATE)
        );
        read.add(&[b"new.example/path"], None).unwrap();
        let again = Blocklist::from_bytes("old.bloom", &read.to_bytes()).unwrap();
        assert_eq!(
            again.url_gate().map(HostGate::section_tag),
            Some(tag::HOST_GATE)
        );
        let mut scratch = Scratch::default();
        for (url, listed) in [
            ("http://www.evil.com/a", true),
            ("bad.org/login/more?x", true),
            ("bad.org/other", false),
            ("x.a.b.worse.net/x/y/z", true),
            ("new.example/path/deeper", true),
            ("new.example/", false),
            ("fine.net", false),
        ] {
            assert_eq!(
                again.check(url.as_bytes(), &mut scratch).listed(),
                listed,
                "{url}"
            );
        }
    }
}
