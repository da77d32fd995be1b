//! The structures a list can be, and their peers, behind one trait: what the report's "Lists
//! that change" section ([`super::changes`]) measures and what the criterion bench
//! `cargo bench -p phishbloom-lab --bench kinds` times, so that both build, fill and probe the
//! same structures the same way.
//!
//! - [`Structure`] — the names of the structures and peers, and which peer each is judged by.
//! - [`Contender`] — one structure, one key at a time: insert, query, delete, bytes, load.
//! - [`visit_contenders`] — every structure and peer at n keys and rate p, in the report's order,
//!   handed to a [`Visitor`] as a constructor (each visit is monomorphic: no dynamic call per
//!   key).
//! - [`key_list`] — the keys of a [`KeySpace`], generated before timing.
//! - [`cuckoo_filled`] and [`cuckoo_load`] — cuckoo builds that retry at a lower load when an
//!   insert is refused.
//!
//! phishbloom's structures are fed the key's xxh3-128 hash ([`KeyHash::of`]); `fastbloom` its
//! xxh3-64 hash; the `cuckoofilter` crate hashes the key bytes itself (SipHash-1-3).
//!
//! # Example
//! ```
//! use phishbloom_lab::keys::MEMBERS;
//! use phishbloom_lab::measure::contenders::{
//!     cuckoo_load, key_list, visit_contenders, Contender, Structure, Visitor,
//! };
//!
//! /// Counts the members each structure finds after inserting them.
//! struct Found<'a>(&'a phishbloom_core::KeyList, Vec<(Structure, usize)>);
//!
//! impl Visitor for Found<'_> {
//!     fn visit<C: Contender>(
//!         &mut self,
//!         structure: Structure,
//!         make: impl Fn() -> phishbloom_lab::Result<C>,
//!     ) -> phishbloom_lab::Result<()> {
//!         let mut filter = make()?;
//!         self.0.iter().for_each(|key| {
//!             filter.insert(key);
//!         });
//!         let found = self.0.iter().filter(|key| filter.contains(key)).count();
//!         self.1.push((structure, found));
//!         Ok(())
//!     }
//! }
//!
//! let members = key_list(MEMBERS, 1_000);
//! let load = cuckoo_load(1_000, 0.01, &members)?;
//! let mut found = Found(&members, Vec::new());
//! visit_contenders(1_000, 0.01, load, &mut found)?;
//! assert_eq!(found.1.len(), 6);
//! assert!(found.1.iter().all(|&(_, count)| count == 1_000));
//! # Ok::<(), phishbloom_lab::Error>(())
//! ```

use std::collections::hash_map::DefaultHasher;

use phishbloom_core::KeyList;
use phishbloom_filter::counting::CountingFilter;
use phishbloom_filter::cuckoo::{CuckooFilter, TARGET_LOAD};
use phishbloom_filter::{Blocked, Bloom, Classic, Filter, KeyHash, Layout};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::Result;
use crate::keys::{InlineKey, KeySpace};
use crate::measure::sizing_error;

/// A structure whose space, rate or speed is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Structure {
    /// phishbloom's classic Bloom filter.
    Classic,
    /// phishbloom's cache-line blocked Bloom filter.
    Blocked,
    /// phishbloom's cuckoo filter (buckets of 4, f = ⌈log₂(8/p)⌉, 95 % load).
    Cuckoo,
    /// phishbloom's counting Bloom filter (4-bit counters).
    Counting,
    /// `xorf::BinaryFuse8`, static: the reference for 8-bit fingerprints.
    BinaryFuse8,
    /// `xorf::BinaryFuse16`, static: the reference for 16-bit fingerprints.
    BinaryFuse16,
    /// The `fastbloom` crate fed xxh3-64: the Bloom peer.
    Fastbloom,
    /// The `cuckoofilter` crate (8-bit fingerprints, SipHash): the cuckoo peer.
    CuckoofilterCrate,
}

impl Structure {
    /// The name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Structure::Classic => "classic",
            Structure::Blocked => "blocked",
            Structure::Cuckoo => "cuckoo",
            Structure::Counting => "counting",
            Structure::BinaryFuse8 => "xorf BinaryFuse8",
            Structure::BinaryFuse16 => "xorf BinaryFuse16",
            Structure::Fastbloom => "fastbloom",
            Structure::CuckoofilterCrate => "cuckoofilter crate",
        }
    }

    /// Whether it is one of phishbloom's own structures (not a peer or a reference).
    pub fn is_ours(self) -> bool {
        matches!(
            self,
            Structure::Classic | Structure::Blocked | Structure::Cuckoo | Structure::Counting
        )
    }

    /// The peer an own structure is compared with: `fastbloom` for the Bloom kinds, the
    /// `cuckoofilter` crate for the cuckoo filter. Deletes of the counting filter are compared
    /// with the `cuckoofilter` crate's (no Bloom peer deletes).
    pub fn peer(self, delete: bool) -> Option<Structure> {
        match (self, delete) {
            (Structure::Cuckoo, _) | (Structure::Counting, true) => {
                Some(Structure::CuckoofilterCrate)
            }
            (Structure::Classic | Structure::Blocked | Structure::Counting, false) => {
                Some(Structure::Fastbloom)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Structure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Cuckoo builds retry this many times at a lower load before giving up (as the blocklist's
/// growing lists do).
pub const CUCKOO_RETRIES: u32 = 6;
/// The load factor of each cuckoo retry, relative to the previous one.
pub const CUCKOO_LOAD_STEP: f64 = 0.95;

/// The `cuckoofilter` crate's filter with its default hasher (SipHash-1-3): the cuckoo peer.
pub type CuckooPeer = cuckoofilter::CuckooFilter<DefaultHasher>;

/// One structure under test, one key at a time. The timing loops are generic over it, so each
/// loop is monomorphic: no dynamic call per key.
pub trait Contender: Sync {
    /// Inserts a key; `false` if the structure refused it (a full cuckoo filter).
    fn insert(&mut self, key: &[u8]) -> bool;
    /// Whether the structure answers "present" for a key.
    fn contains(&self, key: &[u8]) -> bool;
    /// Removes a key; `false` if it was not found. Only called when [`Contender::DELETES`].
    fn remove(&mut self, key: &[u8]) -> bool;
    /// Bytes of the structure's bits, slots or counters.
    fn bytes(&self) -> u64;
    /// The fraction of its slots in use (cuckoo filters; `None` for the others).
    fn load(&self) -> Option<f64> {
        None
    }
    /// Whether it deletes.
    const DELETES: bool;
}

impl<L: Layout> Contender for Bloom<L> {
    fn insert(&mut self, key: &[u8]) -> bool {
        Bloom::insert(self, key);
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        Bloom::contains(self, key)
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
    fn bytes(&self) -> u64 {
        self.size_in_bytes()
    }
    const DELETES: bool = false;
}

/// The [`Contender`] impl of one of phishbloom's structures that delete: each operation is the
/// structure's `*_hash` method on [`KeyHash::of`] the key; `$inserted` turns what `insert_hash`
/// returns into "accepted"; `$load` is the structure's load, if any.
macro_rules! deleting_contender {
    ($structure:ty, $inserted:expr, $load:expr) => {
        impl Contender for $structure {
            fn insert(&mut self, key: &[u8]) -> bool {
                $inserted(self.insert_hash(KeyHash::of(key)))
            }
            fn contains(&self, key: &[u8]) -> bool {
                self.contains_hash(KeyHash::of(key))
            }
            fn remove(&mut self, key: &[u8]) -> bool {
                self.remove_hash(KeyHash::of(key))
            }
            fn bytes(&self) -> u64 {
                self.size_in_bytes()
            }
            fn load(&self) -> Option<f64> {
                $load(self)
            }
            const DELETES: bool = true;
        }
    };
}

deleting_contender!(
    CuckooFilter,
    |inserted: std::result::Result<(), _>| inserted.is_ok(),
    |filter: &CuckooFilter| Some(filter.load())
);
deleting_contender!(CountingFilter, |()| true, |_: &CountingFilter| None);

impl Contender for fastbloom::BloomFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(xxh3_64(key));
        true
    }
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(xxh3_64(key))
    }
    fn remove(&mut self, _key: &[u8]) -> bool {
        false
    }
    fn bytes(&self) -> u64 {
        self.num_bits() as u64 / 8
    }
    const DELETES: bool = false;
}

impl Contender for CuckooPeer {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.add(key).is_ok()
    }
    fn contains(&self, key: &[u8]) -> bool {
        cuckoofilter::CuckooFilter::contains(self, key)
    }
    fn remove(&mut self, key: &[u8]) -> bool {
        self.delete(key)
    }
    fn bytes(&self) -> u64 {
        // One byte per slot (8-bit fingerprints), four slots per bucket; `memory_usage` adds
        // the 32-byte struct itself.
        self.memory_usage() as u64 - std::mem::size_of::<Self>() as u64
    }
    fn load(&self) -> Option<f64> {
        Some(self.len() as f64 / self.bytes() as f64)
    }
    const DELETES: bool = true;
}

/// Keys `0..n` of `space`, generated once so that the timed loops only hash and probe.
pub fn key_list(space: KeySpace, n: u64) -> KeyList {
    let mut keys = KeyList::default();
    let mut key = InlineKey::default();
    for i in 0..n {
        keys.push(space.write(i, &mut key));
    }
    keys
}

/// A cuckoo filter for `n` keys at rate `p`, filled by `fill` at 95 % load or, if an insert is
/// refused there, at up to [`CUCKOO_RETRIES`] lower loads (each [`CUCKOO_LOAD_STEP`] of the
/// last). Returns the filter, the load it was sized for and `fill`'s result.
pub fn cuckoo_filled<T>(
    n: u64,
    p: f64,
    fill: impl Fn(&mut CuckooFilter) -> Option<T>,
) -> Result<(CuckooFilter, f64, T)> {
    let mut load = TARGET_LOAD;
    for _ in 0..=CUCKOO_RETRIES {
        let mut filter =
            CuckooFilter::with_load(n, p, load).map_err(sizing_error("cuckoo filter", 0, 0))?;
        if let Some(value) = fill(&mut filter) {
            return Ok((filter, load, value));
        }
        load *= CUCKOO_LOAD_STEP;
    }
    Err(crate::Error::Unbuildable {
        experiment: "cuckoo filter",
        reason: format!("no load factor down to {load:.2} took every key"),
    })
}

/// The load at which phishbloom's cuckoo filter for `n` keys at rate `p` takes every key of
/// `members`: 95 %, lower if the keys need it (see [`cuckoo_filled`]).
pub fn cuckoo_load(n: u64, p: f64, members: &KeyList) -> Result<f64> {
    let (_, load, ()) = cuckoo_filled(n, p, |filter| {
        members.iter().all(|key| filter.insert(key)).then_some(())
    })?;
    Ok(load)
}

/// What is done with each structure of [`visit_contenders`].
pub trait Visitor {
    /// Called once per structure with a constructor of an empty one (callable any number of
    /// times; it fails only if the structure cannot be sized).
    fn visit<C: Contender>(
        &mut self,
        structure: Structure,
        make: impl Fn() -> Result<C>,
    ) -> Result<()>;
}

/// Hands every structure and peer of the speed measurement, sized for `n` keys at rate `p`, to
/// `visitor`, in the report's order: phishbloom's blocked, classic, cuckoo (at `cuckoo_load`,
/// see [`cuckoo_load`]) and counting filters, then `fastbloom` and the `cuckoofilter` crate.
///
/// The `cuckoofilter` crate is sized for n / 95 % keys, the load of ours: it rounds its slots up
/// to a power of two, so its real load is lower (the report's rows show it). Stops at the
/// visitor's first error.
pub fn visit_contenders(
    n: u64,
    p: f64,
    cuckoo_load: f64,
    visitor: &mut impl Visitor,
) -> Result<()> {
    let sized = || sizing_error("ns per operation", 0, 0);
    let peer_capacity = (n as f64 / TARGET_LOAD).ceil() as usize;
    visitor.visit(Structure::Blocked, || {
        Bloom::<Blocked>::new(n, p).map_err(sized())
    })?;
    visitor.visit(Structure::Classic, || {
        Bloom::<Classic>::new(n, p).map_err(sized())
    })?;
    visitor.visit(Structure::Cuckoo, || {
        CuckooFilter::with_load(n, p, cuckoo_load).map_err(sized())
    })?;
    visitor.visit(Structure::Counting, || {
        CountingFilter::new(n, p).map_err(sized())
    })?;
    visitor.visit(Structure::Fastbloom, || {
        Ok(fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize))
    })?;
    visitor.visit(Structure::CuckoofilterCrate, || {
        Ok(CuckooPeer::with_capacity(peer_capacity))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{MEMBERS, NON_MEMBERS};

    /// Fills every structure, checks its answers, then deletes every member where it can.
    struct Check<'a> {
        members: &'a KeyList,
        seen: Vec<Structure>,
    }

    impl Visitor for Check<'_> {
        fn visit<C: Contender>(
            &mut self,
            structure: Structure,
            make: impl Fn() -> Result<C>,
        ) -> Result<()> {
            let mut filter = make()?;
            assert!(
                self.members.iter().all(|key| filter.insert(key)),
                "{structure}"
            );
            assert!(
                self.members.iter().all(|key| filter.contains(key)),
                "{structure}"
            );
            assert!(filter.bytes() > 0, "{structure}");
            assert_eq!(
                filter.load().is_some(),
                structure == Structure::Cuckoo || structure == Structure::CuckoofilterCrate
            );
            if C::DELETES {
                assert!(
                    self.members.iter().all(|key| filter.remove(key)),
                    "{structure}"
                );
            }
            self.seen.push(structure);
            Ok(())
        }
    }

    #[test]
    fn every_contender_takes_finds_and_deletes_its_members() {
        let members = key_list(MEMBERS, 2_000);
        assert_eq!(members.get(0x1f), b"kw-1f");
        assert_eq!(key_list(NON_MEMBERS, 3).get(2), b"nq-2");
        let load = cuckoo_load(2_000, 0.01, &members).unwrap();
        assert!(load <= TARGET_LOAD);
        let mut check = Check {
            members: &members,
            seen: Vec::new(),
        };
        visit_contenders(2_000, 0.01, load, &mut check).unwrap();
        assert_eq!(
            check.seen,
            [
                Structure::Blocked,
                Structure::Classic,
                Structure::Cuckoo,
                Structure::Counting,
                Structure::Fastbloom,
                Structure::CuckoofilterCrate,
            ]
        );
    }
}
