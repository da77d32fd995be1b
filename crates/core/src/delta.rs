//! Deltas: the change between two versions of a list, small enough to ship every few minutes
//! (seed 001's CRLite push model; Safe Browsing's partial updates), and checked when applied.
//!
//! A delta names its base — list version, entry count and set fingerprint — and its target, and
//! carries the entries that change, identified by their 64-bit entry fingerprints (the values
//! of a verification section):
//! - **additions**: whole fingerprints, sorted and Golomb–Rice coded (an *exact* delta, which
//!   every kind can apply) or, for Bloom files without a verification section, a *compact*
//!   coding the receiver keeps as a patch probed beside its filter — the `b`-bit prefixes of
//!   the fingerprints, Golomb–Rice coded (`log₂(2^b/n) + 1.5` bits per addition), or a static
//!   ribbon filter of them (`f · m/n` bits per addition, `m/n` ≈ 1.01 for n in the thousands,
//!   rate `2^-f`): [`Delta::between`] writes whichever is smaller;
//! - **removals**, as positions in the base's sorted fingerprint table, Golomb–Rice coded
//!   (`log₂(N/n) + 1.5` bits each; the receiver, which holds that table, reads the fingerprint
//!   there);
//! - entries whose categories changed, categories new to the list, entry-count changes per
//!   category, and the exceptions when they changed.
//!
//! [`Blocklist::apply`](crate::Blocklist::apply) refuses a delta whose base is not the file's,
//! computes the set fingerprint the change leads to — from the fingerprints of the additions
//! and of the removals it finds in its own table, in O(changes) — and refuses the delta, before
//! changing anything, unless that is the fingerprint the delta promises. docs/FORMAT.md
//! ("Delta files") specifies every byte; the whole file is covered by an xxh3-64 checksum.
//!
//! Format 2 (written since compact deltas may carry a ribbon filter) has a varint header of
//! about 60 bytes where format 1 had 160 fixed ones, and leaves out what the receiver derives
//! (target entry count, the added and — for exact deltas — removed fingerprint terms, part
//! lengths of the last part). Format 1 deltas are still read ([`Delta::to_bytes_version1`]
//! writes them for receivers that read nothing newer).

use std::path::Path;

use phishbloom_filter::golomb;
use phishbloom_filter::prefix::prefix_bits;
use phishbloom_filter::ribbon::{ribbon_bits, RibbonFilter};

use phishbloom_filter::KeyHash;
use phishbloom_url::Entry;

use crate::bytes::{ByteReader, PutLe};
use crate::contents::{EntrySet, KeyList};
use crate::engine::fingerprint;
use crate::engine::per_probe_fpp;
use crate::error::{Error, Result};
use crate::keys::expression_hash;
use crate::keys::KeyScheme;
use crate::sections::SetFingerprint;

/// The first 8 bytes of a delta file: `\x89PHBDEL\n` (like the blocklist magic, binary-safe).
pub const MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'D', b'E', b'L', 0x0a];

/// The delta format version this build writes (it reads this one and [`VERSION_1`]).
pub const VERSION: u32 = 2;

/// The first delta format, still read.
pub const VERSION_1: u32 = 1;

/// Length of format 1's fixed header.
const HEADER_LEN: usize = 160;

/// Bytes before format 2's varint header: magic, format, key scheme, additions coding.
const FORMAT2_FIXED: usize = 14;

/// Format 2's code of how the additions are coded (the byte at offset 13).
mod coding {
    /// Whole fingerprints, Golomb–Rice coded.
    pub const EXACT: u8 = 0;
    /// `b`-bit prefixes, Golomb–Rice coded.
    pub const PREFIXES: u8 = 1;
    /// A ribbon filter's solution.
    pub const RIBBON: u8 = 2;
}

/// Largest compact delta coded as a ribbon filter: the builder tries several seeds and sizes,
/// each an O(n · 128 / 64) elimination, so beyond about a million additions it would take
/// seconds (and a full file is smaller than such a delta anyway).
const RIBBON_MAX_ADDITIONS: usize = 1 << 20;

/// Length of the trailing checksum (xxh3-64 of everything before it).
const CHECKSUM_LEN: usize = 8;

/// Bytes of each part of a delta file (see [`Delta::part_sizes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PartSizes {
    /// The header and the trailing checksum.
    pub fixed: usize,
    /// The Golomb–Rice coded additions.
    pub added: usize,
    /// The Golomb–Rice coded removal positions.
    pub removed: usize,
    /// Categories, count changes, category sets and exceptions.
    pub extras: usize,
}

/// The coded parts of a delta and their Rice parameters, as [`Delta::to_bytes_version1`]
/// writes them.
struct Encoded {
    add_bits: u32,
    add_r: u32,
    added: Vec<u8>,
    rem_r: u32,
    removed: Vec<u8>,
    extras: Vec<u8>,
}

/// The parts of a format 2 delta: header (through the part lengths), additions, removals,
/// extras.
struct Encoded2 {
    header: Vec<u8>,
    added: Vec<u8>,
    removed: Vec<u8>,
    extras: Vec<u8>,
}

/// How [`Delta::between_coded`] codes a compact delta's additions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum PatchCoding {
    /// Whichever of the two below takes fewer bytes.
    #[default]
    Smallest,
    /// Golomb–Rice coded fingerprint prefixes.
    Prefixes,
    /// A ribbon filter.
    Filter,
}

/// A list version as a delta names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ListState {
    /// The list version (0: not known — a delta made from list files names its base by
    /// fingerprint only).
    pub version: u64,
    /// Distinct entries.
    pub entries: u64,
    /// The set fingerprint.
    pub fingerprint: SetFingerprint,
}

/// The additions of a delta.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Additions {
    /// Whole 64-bit entry fingerprints, ascending: every kind can apply them.
    Exact(Vec<u64>),
    /// `bits`-bit prefixes of the fingerprints, ascending, for Bloom files without a
    /// verification section (kept as a patch).
    Prefixes {
        /// Prefix width.
        bits: u32,
        /// The prefixes.
        prefixes: Vec<u64>,
    },
    /// A static ribbon filter of the fingerprints (a compact delta's other coding, kept as a
    /// static patch by Bloom files without a verification section).
    Filter(RibbonFilter),
}

impl Additions {
    /// How many entries are added.
    pub fn len(&self) -> usize {
        match self {
            Additions::Exact(values) => values.len(),
            Additions::Prefixes { prefixes, .. } => prefixes.len(),
            Additions::Filter(filter) => filter.len() as usize,
        }
    }

    /// Whether the additions are compact (for Bloom files without verification).
    pub fn is_compact(&self) -> bool {
        !matches!(self, Additions::Exact(_))
    }

    /// Bits per addition the coding keeps of each fingerprint: 64 (exact), the prefix width,
    /// or the ribbon filter's result bits.
    pub fn kept_bits(&self) -> u32 {
        match self {
            Additions::Exact(_) => 64,
            Additions::Prefixes { bits, .. } => *bits,
            Additions::Filter(filter) => filter.bits(),
        }
    }

    /// The false-positive rate per probe the additions add at a receiver that keeps them as a
    /// patch: 0 (exact), `n / 2^b` (prefixes) or `2^-f` (ribbon).
    pub fn patch_fpp(&self) -> f64 {
        match self {
            Additions::Exact(_) => 0.0,
            Additions::Prefixes { bits, prefixes } => {
                phishbloom_filter::prefix::prefix_fpp(prefixes.len() as u64, *bits)
            }
            Additions::Filter(filter) => filter.expected_fpp(),
        }
    }

    /// Whether nothing is added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The change between two versions of a list.
#[derive(Clone, Debug, PartialEq)]
pub struct Delta {
    /// How the list's items become keys (both versions share it).
    pub scheme: KeyScheme,
    /// Probes per checked item the list is sized for.
    pub probes_per_item: u32,
    /// When the delta was made (seconds since the Unix epoch).
    pub created: u64,
    /// The version it applies to.
    pub base: ListState,
    /// How many categories the base has (the delta numbers new ones after them).
    pub base_categories: u32,
    /// The version it leads to.
    pub target: ListState,
    /// The entries added.
    pub added: Additions,
    /// `Σ SetFingerprint::term(v)` over the added entries (mod 2^128): what a receiver of
    /// prefixes adds to its set fingerprint; checked against the fingerprints when exact.
    pub added_terms: u128,
    /// Entries removed.
    pub removed_count: u64,
    /// `Σ SetFingerprint::term(v)` over the removed entries (mod 2^128).
    pub removed_terms: u128,
    /// Positions in the base's sorted fingerprint table of the removed entries, ascending
    /// (empty in a compact delta: its receivers have no table, and keep removed entries).
    pub removed: Vec<u64>,
    /// Category names the target has and the base does not, numbered after the base's.
    pub new_categories: Vec<String>,
    /// The category ids of each added entry, in `added` order (empty for a one-category list
    /// or a compact delta).
    pub added_categories: Vec<Vec<u16>>,
    /// Entries in both versions whose categories changed: base position, new category ids.
    pub recategorized: Vec<(u64, Vec<u16>)>,
    /// Entry-count change per category id.
    pub counts: Vec<(u16, i64)>,
    /// The target's exceptions (sorted entry keys), when they differ from the base's.
    pub exceptions: Option<Vec<String>>,
}

/// A list version as [`Delta::between`] compares it: its entries' fingerprints (ascending,
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
        }
    }

    /// The view of a list of URL entries (as `build` reads it).
    pub fn of_entries(set: &EntrySet, probes_per_item: u32) -> Self {
        let pairs = set
            .entries
            .iter()
            .zip(&set.membership)
            .map(|(entry, ids)| (fingerprint(expression_hash(entry.key())), ids.clone()))
            .collect();
        ListView::new(
            KeyScheme::Expressions,
            probes_per_item,
            pairs,
            set.categories.clone(),
            set.exceptions.iter().map(Entry::to_key_string).collect(),
        )
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

/// How [`Delta::between`] encodes additions.
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

impl Delta {
    /// The change from `old` to `new`; a compact delta's additions in whichever coding is
    /// smaller ([`PatchCoding::Smallest`]).
    pub fn between(old: &ListView, new: &ListView, options: &DiffOptions) -> Result<Delta> {
        Delta::between_coded(old, new, options, PatchCoding::Smallest)
    }

    /// The change from `old` to `new`, a compact delta's additions coded as `coding` says.
    pub fn between_coded(
        old: &ListView,
        new: &ListView,
        options: &DiffOptions,
        coding: PatchCoding,
    ) -> Result<Delta> {
        let incompatible =
            |parameter: &'static str, left: String, right: String| Error::Incompatible {
                parameter,
                left,
                right,
            };
        if old.scheme != new.scheme {
            return Err(incompatible(
                "key scheme",
                old.scheme.name().into(),
                new.scheme.name().into(),
            ));
        }
        if old.probes_per_item != new.probes_per_item {
            return Err(incompatible(
                "probes per item",
                old.probes_per_item.to_string(),
                new.probes_per_item.to_string(),
            ));
        }
        // Target category ids: the base's, then the new names in the new list's order.
        let mut target_names = old.categories.clone();
        let new_categories: Vec<String> = new
            .categories
            .iter()
            .filter(|name| !old.categories.contains(name))
            .cloned()
            .collect();
        target_names.extend(new_categories.iter().cloned());
        let to_target: Vec<u16> = new
            .categories
            .iter()
            .map(|name| target_names.iter().position(|n| n == name).unwrap_or(0) as u16)
            .collect();
        let retarget = |ids: &[u16]| -> Vec<u16> {
            let mut ids: Vec<u16> = ids
                .iter()
                .filter_map(|&id| to_target.get(id as usize).copied())
                .collect();
            ids.sort_unstable();
            ids
        };
        let mut counts = vec![0i64; target_names.len()];
        let mut added = Vec::new();
        let mut added_categories = Vec::new();
        let mut removed = Vec::new();
        let mut recategorized = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < old.entries.len() || j < new.entries.len() {
            let a = old.entries.get(i);
            let b = new.entries.get(j);
            match (a, b) {
                (Some((va, ida)), Some((vb, idb))) if va == vb => {
                    let now = retarget(idb);
                    if *ida != now {
                        for &id in ida {
                            counts[id as usize] -= 1;
                        }
                        for &id in &now {
                            counts[id as usize] += 1;
                        }
                        recategorized.push((i as u64, now));
                    }
                    i += 1;
                    j += 1;
                }
                (Some((va, ida)), Some((vb, _))) if va < vb => {
                    removed.push(i as u64);
                    for &id in ida {
                        counts[id as usize] -= 1;
                    }
                    i += 1;
                }
                (Some((_, ida)), None) => {
                    removed.push(i as u64);
                    for &id in ida {
                        counts[id as usize] -= 1;
                    }
                    i += 1;
                }
                (_, Some((vb, idb))) => {
                    let ids = retarget(idb);
                    for &id in &ids {
                        counts[id as usize] += 1;
                    }
                    added.push(*vb);
                    added_categories.push(ids);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        let added_terms = added
            .iter()
            .fold(0u128, |sum, &v| sum.wrapping_add(SetFingerprint::term(v)));
        let terms = |values: &mut dyn Iterator<Item = u64>| {
            values.fold(0u128, |sum, v| sum.wrapping_add(SetFingerprint::term(v)))
        };
        let removed_terms = terms(&mut removed.iter().map(|&i| old.entries[i as usize].0));
        let removed_count = removed.len() as u64;
        let additions = if options.compact {
            // Receivers without a table: no positions, no categories of single entries.
            removed.clear();
            recategorized.clear();
            let fpp = new
                .target_fpp
                .or(old.target_fpp)
                .or(options.fpp)
                .unwrap_or(0.01);
            let probes = new.probes_per_item.max(1);
            let bits = match options.patch_fpp {
                Some(patch) => prefix_bits(added.len() as u64, per_probe_fpp(patch, probes)),
                None => prefix_bits(new.entries.len() as u64, per_probe_fpp(fpp, probes)),
            };
            let mut prefixes: Vec<u64> = added.iter().map(|&v| v >> (64 - bits)).collect();
            prefixes.sort_unstable();
            added_categories.clear();
            let prefixes = Additions::Prefixes { bits, prefixes };
            let rate = patch_rate(
                options.patch_fpp,
                fpp,
                probes,
                added.len(),
                new.entries.len(),
            );
            let ribbon = || -> Result<Additions> {
                Ok(Additions::Filter(RibbonFilter::build(
                    &added,
                    ribbon_bits(rate),
                )?))
            };
            match coding {
                _ if added.is_empty() => prefixes,
                PatchCoding::Prefixes => prefixes,
                PatchCoding::Filter => ribbon()?,
                PatchCoding::Smallest if added.len() > RIBBON_MAX_ADDITIONS => prefixes,
                PatchCoding::Smallest => {
                    let filter = ribbon()?;
                    if coded_len(&filter) < coded_len(&prefixes) {
                        filter
                    } else {
                        prefixes
                    }
                }
            }
        } else {
            if target_names.len() <= 1 {
                added_categories.clear();
            }
            Additions::Exact(added)
        };
        let exceptions = (old.exceptions != new.exceptions).then(|| new.exceptions.clone());
        Ok(Delta {
            scheme: new.scheme,
            probes_per_item: new.probes_per_item,
            created: options.created,
            base: old.state(),
            base_categories: old.categories.len() as u32,
            target: new.state(),
            added: additions,
            added_terms,
            removed_count,
            removed_terms,
            removed,
            new_categories,
            added_categories,
            recategorized,
            counts: counts
                .into_iter()
                .enumerate()
                .filter(|(_, c)| *c != 0)
                .map(|(id, c)| (id as u16, c))
                .collect(),
            exceptions,
        })
    }

    /// The delta file's bytes, in the current format ([`VERSION`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let Encoded2 {
            header,
            added,
            removed,
            extras,
        } = self.encode2();
        let mut out = header;
        out.extend_from_slice(&added);
        out.extend_from_slice(&removed);
        out.extend_from_slice(&extras);
        let checksum = xxhash_rust::xxh3::xxh3_64(&out);
        out.put_u64(checksum);
        out
    }

    /// The delta file's bytes in format 1 (160-byte header), for receivers that read nothing
    /// newer; `None` for additions coded as a ribbon filter, which format 1 cannot hold.
    pub fn to_bytes_version1(&self) -> Option<Vec<u8>> {
        if matches!(self.added, Additions::Filter(_)) {
            return None;
        }
        let Encoded {
            add_bits,
            add_r,
            added,
            rem_r,
            removed,
            extras,
        } = self.encode();

        let mut out = Vec::with_capacity(HEADER_LEN + added.len() + removed.len() + extras.len());
        out.extend_from_slice(&MAGIC);
        out.put_u32(VERSION_1);
        out.push(self.scheme.code());
        out.push(u8::from(matches!(self.added, Additions::Prefixes { .. })));
        out.push(add_bits as u8);
        out.push(add_r as u8);
        out.push(rem_r as u8);
        out.extend_from_slice(&[0; 3]);
        out.put_u32(self.probes_per_item);
        out.put_u64(self.created);
        for state in [self.base, self.target] {
            out.put_u64(state.version);
            out.put_u64(state.entries);
            out.put_u128(state.fingerprint.0);
        }
        out.put_u128(self.added_terms);
        out.put_u128(self.removed_terms);
        out.put_u64(self.added.len() as u64);
        out.put_u64(self.removed_count);
        out.put_u32(added.len() as u32);
        out.put_u32(removed.len() as u32);
        out.put_u32(extras.len() as u32);
        out.put_u32(self.base_categories);
        debug_assert_eq!(out.len(), HEADER_LEN);
        out.extend_from_slice(&added);
        out.extend_from_slice(&removed);
        out.extend_from_slice(&extras);
        let checksum = xxhash_rust::xxh3::xxh3_64(&out);
        out.put_u64(checksum);
        Some(out)
    }

    /// The parts of the format 2 file: the header, then the additions, removals and extras
    /// (docs/FORMAT.md, "Delta files").
    fn encode2(&self) -> Encoded2 {
        let (code, mut params, added) = encode_additions(&self.added);
        let removed = if self.removed.is_empty() {
            Vec::new()
        } else {
            let r = golomb::best_parameter(&self.removed, u128::from(self.base.entries.max(1)));
            params.push(r as u8);
            golomb::encode(&self.removed, r)
        };
        let mut header = Vec::with_capacity(80);
        header.extend_from_slice(&MAGIC);
        header.put_u32(VERSION);
        header.push(self.scheme.code());
        header.push(code);
        header.put_varint(u64::from(self.probes_per_item));
        header.put_varint(self.created);
        header.put_varint(self.base.version);
        header.put_varint(self.base.entries);
        header.put_u128(self.base.fingerprint.0);
        header.put_varint(self.target.version.wrapping_sub(self.base.version));
        header.put_u128(self.target.fingerprint.0);
        header.put_varint(u64::from(self.base_categories));
        header.put_varint(self.added.len() as u64);
        header.put_varint(self.removed_count);
        if self.added.is_compact() && self.removed_count > 0 {
            // Receivers of a compact delta have no table to find the removed entries' terms in.
            header.put_u128(self.removed_terms);
        }
        header.extend_from_slice(&params);
        let extras = self.encode_extras();
        header.put_varint(added.len() as u64);
        header.put_varint(removed.len() as u64);
        header.put_varint(extras.len() as u64);
        Encoded2 {
            header,
            added,
            removed,
            extras,
        }
    }

    /// The bytes of each part of the file [`Delta::to_bytes`] writes: the fixed header and
    /// trailing checksum, the Golomb–Rice coded additions and removals, and the extras
    /// (categories, count changes, category sets, exceptions) — for measuring the coding
    /// against its formula.
    pub fn part_sizes(&self) -> PartSizes {
        let encoded = self.encode2();
        PartSizes {
            fixed: encoded.header.len() + CHECKSUM_LEN,
            added: encoded.added.len(),
            removed: encoded.removed.len(),
            extras: encoded.extras.len(),
        }
    }

    /// The coded parts of a format 1 file, with their Rice parameters (not for a ribbon
    /// filter: [`Delta::to_bytes_version1`] refuses it first).
    fn encode(&self) -> Encoded {
        let (add_bits, add_values): (u32, &[u64]) = match &self.added {
            Additions::Exact(values) => (64, values),
            Additions::Prefixes { bits, prefixes } => (*bits, prefixes),
            Additions::Filter(_) => (64, &[]),
        };
        let add_r = golomb::best_parameter(add_values, 1u128 << add_bits);
        let rem_r = golomb::best_parameter(&self.removed, u128::from(self.base.entries.max(1)));
        Encoded {
            add_bits,
            add_r,
            added: golomb::encode(add_values, add_r),
            rem_r,
            removed: golomb::encode(&self.removed, rem_r),
            extras: self.encode_extras(),
        }
    }

    /// Categories, counts, category sets and exceptions, as varints.
    fn encode_extras(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let put_text = |out: &mut Vec<u8>, text: &str| {
            out.put_varint(text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        };
        out.put_varint(self.new_categories.len() as u64);
        for name in &self.new_categories {
            put_text(&mut out, name);
        }
        out.put_varint(self.counts.len() as u64);
        for &(id, change) in &self.counts {
            out.put_varint(u64::from(id));
            // Zigzag: small magnitudes of either sign take one byte.
            out.put_varint(((change << 1) ^ (change >> 63)) as u64);
        }
        // The distinct category sets, then an index per added and recategorized entry.
        let mut sets: Vec<&Vec<u16>> = self
            .added_categories
            .iter()
            .chain(self.recategorized.iter().map(|(_, ids)| ids))
            .collect();
        sets.sort_unstable();
        sets.dedup();
        let index = |ids: &Vec<u16>| sets.binary_search(&ids).unwrap_or(0) as u64;
        out.put_varint(sets.len() as u64);
        for set in &sets {
            out.put_varint(set.len() as u64);
            for &id in set.iter() {
                out.put_varint(u64::from(id));
            }
        }
        out.put_varint(self.added_categories.len() as u64);
        for ids in &self.added_categories {
            out.put_varint(index(ids));
        }
        out.put_varint(self.recategorized.len() as u64);
        let mut previous = 0;
        for (position, ids) in &self.recategorized {
            out.put_varint(position - previous);
            previous = *position;
            out.put_varint(index(ids));
        }
        match &self.exceptions {
            None => out.push(0),
            Some(keys) => {
                out.push(1);
                out.put_varint(keys.len() as u64);
                for key in keys {
                    put_text(&mut out, key);
                }
            }
        }
        out
    }

    /// Reads a delta file image, format 2 or 1; `path` names it in errors. Every length,
    /// count and value is checked: a damaged or hostile file is an error, never a panic or a
    /// huge allocation.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Delta> {
        let bad = |problem: String| Error::BadDelta {
            path: path.to_path_buf(),
            problem,
        };
        if bytes.get(..8) != Some(&MAGIC[..]) {
            return Err(bad(format!(
                "it does not start with the delta magic (it starts with {:?})",
                String::from_utf8_lossy(&bytes[..bytes.len().min(8)])
            )));
        }
        if bytes.len() < FORMAT2_FIXED + CHECKSUM_LEN {
            return Err(bad(format!("truncated at {} bytes", bytes.len())));
        }
        let (body, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        let stored = u64::from_le_bytes(stored.try_into().unwrap_or_default());
        let computed = xxhash_rust::xxh3::xxh3_64(body);
        if stored != computed {
            // A copy cut short says so, when its header says how long it should be.
            if bytes.get(8..12) == Some(&VERSION.to_le_bytes()[..]) {
                match format2_length(bytes) {
                    None => {
                        return Err(bad(format!(
                            "truncated at {} bytes, within its header: the copy is incomplete",
                            bytes.len()
                        )))
                    }
                    Some(promised) if promised > bytes.len() => {
                        return Err(bad(format!(
                            "truncated at {} bytes (its header promises {promised}): the copy \
                             is incomplete",
                            bytes.len()
                        )))
                    }
                    Some(_) => {}
                }
            }
            return Err(bad(format!(
                "checksum mismatch (stored {stored:#018x}, computed {computed:#018x}): the \
                 copy is damaged or incomplete"
            )));
        }
        let mut r = ByteReader::new(body);
        // The first 14 bytes are there (checked above): these reads succeed.
        r.take(8);
        let version = r.u32().unwrap_or_default();
        match version {
            VERSION => Delta::from_body2(path, body),
            VERSION_1 if body.len() >= HEADER_LEN => Delta::from_body1(path, body),
            VERSION_1 => Err(bad(format!("truncated at {} bytes", bytes.len()))),
            _ => Err(bad(format!(
                "delta format {version}; this phishbloom reads formats {VERSION_1} and \
                 {VERSION}: upgrade phishbloom"
            ))),
        }
    }

    /// Reads the body (all but the checksum, already checked) of a format 2 delta.
    fn from_body2(path: &Path, body: &[u8]) -> Result<Delta> {
        let bad = |problem: &str| Error::BadDelta {
            path: path.to_path_buf(),
            problem: problem.to_string(),
        };
        let truncated = || bad("its header is cut short");
        let mut r = ByteReader::new(body);
        r.take(12);
        let scheme_code = r.u8().ok_or_else(truncated)?;
        let code = r.u8().ok_or_else(truncated)?;
        let scheme = KeyScheme::from_code(scheme_code)
            .ok_or_else(|| bad(&format!("unknown key scheme {scheme_code}")))?;
        let varint = |r: &mut ByteReader<'_>| r.varint().ok_or_else(truncated);
        let probes_per_item = u32::try_from(varint(&mut r)?)
            .ok()
            .filter(|&p| p >= 1)
            .ok_or_else(|| bad("probes per item out of range"))?;
        let created = varint(&mut r)?;
        let mut base = ListState {
            version: varint(&mut r)?,
            entries: varint(&mut r)?,
            ..ListState::default()
        };
        base.fingerprint = SetFingerprint(r.u128().ok_or_else(truncated)?);
        let mut target = ListState {
            version: base.version.wrapping_add(varint(&mut r)?),
            ..ListState::default()
        };
        target.fingerprint = SetFingerprint(r.u128().ok_or_else(truncated)?);
        let base_categories =
            u32::try_from(varint(&mut r)?).map_err(|_| bad("base category count out of range"))?;
        let added_count = varint(&mut r)?;
        let removed_count = varint(&mut r)?;
        target.entries = base
            .entries
            .checked_add(added_count)
            .and_then(|n| n.checked_sub(removed_count))
            .ok_or_else(|| bad("it removes more entries than the base has"))?;
        let compact = code != coding::EXACT;
        let mut removed_terms = if compact && removed_count > 0 {
            r.u128().ok_or_else(truncated)?
        } else {
            0
        };
        let byte = |r: &mut ByteReader<'_>| r.u8().map(u32::from).ok_or_else(truncated);
        enum Params {
            Golomb { bits: u32, r: u32 },
            Ribbon { bits: u32, seed: u64, slack: u64 },
        }
        let params = match code {
            coding::EXACT => Params::Golomb {
                bits: 64,
                r: byte(&mut r)?,
            },
            coding::PREFIXES => Params::Golomb {
                bits: byte(&mut r)?,
                r: byte(&mut r)?,
            },
            coding::RIBBON => Params::Ribbon {
                bits: byte(&mut r)?,
                seed: r.varint().ok_or_else(truncated)?,
                slack: r.varint().ok_or_else(truncated)?,
            },
            _ => return Err(bad(&format!("unknown additions coding {code}"))),
        };
        // A compact delta records how many entries were removed, not where.
        let positions = if compact { 0 } else { removed_count };
        let rem_r = if positions > 0 { byte(&mut r)? } else { 0 };
        let added_len = usize::try_from(r.varint().ok_or_else(truncated)?).unwrap_or(usize::MAX);
        let removed_len = usize::try_from(r.varint().ok_or_else(truncated)?).unwrap_or(usize::MAX);
        let extras_len = usize::try_from(r.varint().ok_or_else(truncated)?).unwrap_or(usize::MAX);
        if [added_len, removed_len, extras_len]
            .iter()
            .try_fold(0usize, |sum, &len| sum.checked_add(len))
            != Some(r.rest().len())
        {
            return Err(bad("its parts do not add up to its length"));
        }
        let coded_added = r
            .take(added_len)
            .ok_or_else(|| bad("its additions are cut short"))?;
        let coded_removed = r
            .take(removed_len)
            .ok_or_else(|| bad("its removals are cut short"))?;
        let corrupt = |e: phishbloom_filter::Error| bad(&e.to_string());
        let added = match params {
            Params::Golomb { bits, r: add_r } => {
                if !(1..=64).contains(&bits) || (bits == 64) == compact || add_r > 63 {
                    return Err(bad(&format!(
                        "addition width {bits} bits, Rice parameter {add_r}"
                    )));
                }
                let values =
                    golomb::decode(coded_added, added_count, add_r, bits).map_err(corrupt)?;
                if compact {
                    Additions::Prefixes {
                        bits,
                        prefixes: values,
                    }
                } else {
                    if values.windows(2).any(|w| w[0] == w[1]) {
                        return Err(bad("an addition is listed twice"));
                    }
                    Additions::Exact(values)
                }
            }
            Params::Ribbon { bits, seed, slack } => {
                let slots = added_count
                    .checked_add(slack)
                    .ok_or_else(|| bad("ribbon filter size out of range"))?;
                if added_count == 0 {
                    return Err(bad("an empty ribbon filter"));
                }
                Additions::Filter(
                    RibbonFilter::from_solution(bits, slots, seed, added_count, coded_added)
                        .map_err(corrupt)?,
                )
            }
        };
        if rem_r > 63 {
            return Err(bad(&format!("removal Rice parameter {rem_r}")));
        }
        let removed = golomb::decode(coded_removed, positions, rem_r, 64).map_err(corrupt)?;
        if removed.windows(2).any(|w| w[0] >= w[1])
            || removed.last().is_some_and(|&p| p >= base.entries)
        {
            return Err(bad(
                "removed positions are not distinct positions of the base",
            ));
        }
        // What format 2 leaves out, derived: an exact delta's terms from its values and the
        // promised target; a compact one's added terms from the target and removed terms.
        let added_terms = match &added {
            Additions::Exact(values) => {
                let added_terms = values
                    .iter()
                    .fold(0u128, |sum, &v| sum.wrapping_add(SetFingerprint::term(v)));
                removed_terms = base
                    .fingerprint
                    .0
                    .wrapping_add(added_terms)
                    .wrapping_sub(target.fingerprint.0);
                // Without removals the promise is checked here, for every receiver (with
                // removals, by the receiver that finds them in its table).
                if removed_count == 0 && removed_terms != 0 {
                    return Err(bad(
                        "its additions do not lead to the set fingerprint it promises",
                    ));
                }
                added_terms
            }
            _ => target
                .fingerprint
                .0
                .wrapping_sub(base.fingerprint.0)
                .wrapping_add(removed_terms),
        };
        let mut delta = Delta {
            scheme,
            probes_per_item,
            created,
            base,
            base_categories,
            target,
            added,
            added_terms,
            removed_count,
            removed_terms,
            removed,
            new_categories: Vec::new(),
            added_categories: Vec::new(),
            recategorized: Vec::new(),
            counts: Vec::new(),
            exceptions: None,
        };
        delta
            .decode_extras(r.rest())
            .ok_or_else(|| bad("its categories or exceptions do not decode"))?;
        Ok(delta)
    }

    /// Reads the body (all but the checksum, already checked; at least the 160-byte header)
    /// of a format 1 delta.
    fn from_body1(path: &Path, body: &[u8]) -> Result<Delta> {
        let bad = |problem: String| Error::BadDelta {
            path: path.to_path_buf(),
            problem,
        };
        let mut r = ByteReader::new(body);
        // The header is there (checked by the caller): these reads succeed.
        r.take(12);
        let scheme_code = r.u8().unwrap_or_default();
        let compact = r.u8().unwrap_or(9);
        let add_bits = u32::from(r.u8().unwrap_or_default());
        let add_r = u32::from(r.u8().unwrap_or_default());
        let rem_r = u32::from(r.u8().unwrap_or_default());
        let reserved = r.take(3).unwrap_or_default();
        let probes_per_item = r.u32().unwrap_or_default();
        let created = r.u64().unwrap_or_default();
        let mut states = [ListState::default(); 2];
        for state in &mut states {
            state.version = r.u64().unwrap_or_default();
            state.entries = r.u64().unwrap_or_default();
            state.fingerprint = SetFingerprint(r.u128().unwrap_or_default());
        }
        let added_terms = r.u128().unwrap_or_default();
        let removed_terms = r.u128().unwrap_or_default();
        let added_count = r.u64().unwrap_or_default();
        let removed_count = r.u64().unwrap_or_default();
        let lengths = [
            r.u32().unwrap_or_default() as usize,
            r.u32().unwrap_or_default() as usize,
            r.u32().unwrap_or_default() as usize,
        ];
        let base_categories = r.u32().unwrap_or_default();
        let scheme = KeyScheme::from_code(scheme_code)
            .ok_or_else(|| bad(format!("unknown key scheme {scheme_code}")))?;
        if reserved.iter().any(|&b| b != 0) || compact > 1 {
            return Err(bad("reserved header bytes are not zero".into()));
        }
        if (compact == 0) != (add_bits == 64) || probes_per_item == 0 {
            return Err(bad(format!(
                "addition width {add_bits} bits, probes per item {probes_per_item}"
            )));
        }
        if lengths.iter().sum::<usize>() != r.rest().len() {
            return Err(bad(format!(
                "the parts add up to {} bytes, the body has {}",
                lengths.iter().sum::<usize>(),
                r.rest().len()
            )));
        }
        let corrupt = |e: phishbloom_filter::Error| bad(e.to_string());
        let values = golomb::decode(
            r.take(lengths[0]).unwrap_or_default(),
            added_count,
            add_r,
            add_bits,
        )
        .map_err(corrupt)?;
        // A compact delta records how many entries were removed, not where.
        let positions = if compact == 1 { 0 } else { removed_count };
        let removed = golomb::decode(r.take(lengths[1]).unwrap_or_default(), positions, rem_r, 64)
            .map_err(corrupt)?;
        let [base, target] = states;
        if removed.windows(2).any(|w| w[0] >= w[1])
            || removed.last().is_some_and(|&p| p >= base.entries)
        {
            return Err(bad(
                "removed positions are not distinct positions of the base".into(),
            ));
        }
        let added = if compact == 1 {
            Additions::Prefixes {
                bits: add_bits,
                prefixes: values,
            }
        } else {
            if values.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad("an addition is listed twice".into()));
            }
            let terms = values
                .iter()
                .fold(0u128, |sum, &v| sum.wrapping_add(SetFingerprint::term(v)));
            if terms != added_terms {
                return Err(bad(
                    "the additions do not sum to the terms the header records".into(),
                ));
            }
            Additions::Exact(values)
        };
        let mut delta = Delta {
            scheme,
            probes_per_item,
            created,
            base,
            base_categories,
            target,
            added,
            added_terms,
            removed_count,
            removed_terms,
            removed,
            new_categories: Vec::new(),
            added_categories: Vec::new(),
            recategorized: Vec::new(),
            counts: Vec::new(),
            exceptions: None,
        };
        delta
            .decode_extras(r.rest())
            .ok_or_else(|| bad("its categories or exceptions do not decode".into()))?;
        Ok(delta)
    }

    fn decode_extras(&mut self, bytes: &[u8]) -> Option<()> {
        let mut r = ByteReader::new(bytes);
        let text = |r: &mut ByteReader<'_>| -> Option<String> {
            let len = r.count()?;
            String::from_utf8(r.take(len)?.to_vec()).ok()
        };
        for _ in 0..r.count()? {
            self.new_categories.push(text(&mut r)?);
        }
        for _ in 0..r.count()? {
            let id = u16::try_from(r.varint()?).ok()?;
            let zigzag = r.varint()?;
            self.counts
                .push((id, ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64)));
        }
        let mut sets: Vec<Vec<u16>> = Vec::new();
        for _ in 0..r.count()? {
            let len = r.count()?;
            let set: Option<Vec<u16>> = (0..len).map(|_| u16::try_from(r.varint()?).ok()).collect();
            sets.push(set?);
        }
        let added_sets = r.count()?;
        if added_sets != 0 && added_sets != self.added.len() {
            return None;
        }
        for _ in 0..added_sets {
            self.added_categories
                .push(sets.get(usize::try_from(r.varint()?).ok()?)?.clone());
        }
        let mut position: u64 = 0;
        for _ in 0..r.count()? {
            position = position.checked_add(r.varint()?)?;
            let set = sets.get(usize::try_from(r.varint()?).ok()?)?.clone();
            self.recategorized.push((position, set));
        }
        match r.u8()? {
            0 => {}
            1 => {
                let mut keys = Vec::new();
                for _ in 0..r.count()? {
                    keys.push(text(&mut r)?);
                }
                self.exceptions = Some(keys);
            }
            _ => return None,
        }
        r.rest().is_empty().then_some(())
    }
}

/// The whole length a format 2 delta's header promises (header, parts, checksum), read from
/// its first bytes without checking anything else: `None` when they do not hold the header.
fn format2_length(bytes: &[u8]) -> Option<usize> {
    let mut r = ByteReader::new(bytes);
    r.take(8)?;
    if r.u32()? != VERSION {
        return None;
    }
    r.u8()?;
    let code = r.u8()?;
    // Probes per item, created, base version, base entries; base fingerprint; target version
    // step; target fingerprint; base categories, added count.
    for _ in 0..4 {
        r.varint()?;
    }
    r.take(16)?;
    r.varint()?;
    r.take(16)?;
    r.varint()?;
    r.varint()?;
    let removed_count = r.varint()?;
    let compact = code != coding::EXACT;
    if compact && removed_count > 0 {
        r.take(16)?;
    }
    match code {
        coding::EXACT => {
            r.take(1)?;
        }
        coding::PREFIXES => {
            r.take(2)?;
        }
        _ => {
            r.u8()?;
            r.varint()?;
            r.varint()?;
        }
    }
    if !compact && removed_count > 0 {
        r.u8()?;
    }
    let mut parts = 0usize;
    for _ in 0..3 {
        parts = parts.checked_add(usize::try_from(r.varint()?).ok()?)?;
    }
    r.position().checked_add(parts)?.checked_add(CHECKSUM_LEN)
}

/// The coding code, parameter bytes and coded values of a format 2 delta's additions.
fn encode_additions(additions: &Additions) -> (u8, Vec<u8>, Vec<u8>) {
    match additions {
        Additions::Exact(values) => {
            let r = golomb::best_parameter(values, 1u128 << 64);
            (coding::EXACT, vec![r as u8], golomb::encode(values, r))
        }
        Additions::Prefixes { bits, prefixes } => {
            let r = golomb::best_parameter(prefixes, 1u128 << bits);
            (
                coding::PREFIXES,
                vec![*bits as u8, r as u8],
                golomb::encode(prefixes, r),
            )
        }
        Additions::Filter(filter) => {
            let mut params = vec![filter.bits() as u8];
            params.put_varint(filter.seed());
            params.put_varint(filter.slots() - filter.len());
            (coding::RIBBON, params, filter.solution())
        }
    }
}

/// Bytes a format 2 delta spends on `additions` (parameters and coded values): what
/// [`PatchCoding::Smallest`] compares.
fn coded_len(additions: &Additions) -> usize {
    let (_, params, coded) = encode_additions(additions);
    params.len() + coded.len()
}

/// The per-probe false-positive rate a compact delta's patch may add at its receiver: the
/// per-item `patch_fpp` given (`diff --patch-fpp`) over the probes of a checked item, or else
/// the list's per-probe rate times the share of the target's `entries` the `added` entries are
/// (so that patched entries cost what they would have cost built in: see docs/FORMAT.md,
/// "Sizes").
fn patch_rate(
    patch_fpp: Option<f64>,
    list_fpp: f64,
    probes: u32,
    added: usize,
    entries: usize,
) -> f64 {
    match patch_fpp {
        Some(patch) => per_probe_fpp(patch, probes),
        None => per_probe_fpp(list_fpp, probes) * added as f64 / entries.max(1) as f64,
    }
}

/// Recomputes a delta image's trailing checksum in place (for tests and fuzzing, which edit a
/// delta and want the edit, not the checksum, to be what is refused).
pub fn reseal(bytes: &mut [u8]) {
    if let Some(body) = bytes.len().checked_sub(8) {
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        bytes[body..].copy_from_slice(&checksum.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(pairs: &[(u64, &[u16])], categories: &[&str]) -> ListView {
        ListView::new(
            KeyScheme::Expressions,
            20,
            pairs.iter().map(|(v, ids)| (*v, ids.to_vec())).collect(),
            categories.iter().map(|s| s.to_string()).collect(),
            Vec::new(),
        )
    }

    #[test]
    fn a_delta_lists_additions_removals_and_recategorized_entries_and_round_trips() {
        let old = view(&[(10, &[0]), (20, &[0]), (30, &[1])], &["a", "b"]);
        let mut new = view(&[(20, &[1]), (30, &[1]), (40, &[0, 2])], &["c", "b", "a"]);
        new.exceptions = vec!["ok.example".into()];
        let delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        assert_eq!(delta.added, Additions::Exact(vec![40]));
        assert_eq!(delta.removed, vec![0]);
        // Target ids: a = 0, b = 1, c = 2 (new).
        assert_eq!(delta.new_categories, ["c"]);
        assert_eq!(delta.added_categories, [vec![0, 2]]);
        assert_eq!(delta.recategorized, [(1, vec![1])]);
        // a: −1 (10 removed), −1 (20 moved to b), +1 (40); b: +1; c: +1.
        assert_eq!(delta.counts, [(0, -1), (1, 1), (2, 1)]);
        assert_eq!(
            delta.exceptions.as_deref(),
            Some(&["ok.example".to_string()][..])
        );
        assert_eq!(delta.base.fingerprint, old.fingerprint());
        assert_eq!(delta.target.fingerprint, new.fingerprint());
        let bytes = delta.to_bytes();
        assert_eq!(Delta::from_bytes(Path::new("d"), &bytes).unwrap(), delta);
        let parts = delta.part_sizes();
        assert!(parts.added > 0 && parts.removed > 0 && parts.extras > 0);
        assert_eq!(
            parts.fixed + parts.added + parts.removed + parts.extras,
            bytes.len()
        );
    }

    #[test]
    fn damaged_deltas_are_refused() {
        let old = view(&[(10, &[0])], &["a"]);
        let new = view(&[(10, &[0]), (u64::MAX, &[0])], &["a"]);
        let bytes = Delta::between(&old, &new, &DiffOptions::default())
            .unwrap()
            .to_bytes();
        for len in 0..bytes.len() {
            assert!(Delta::from_bytes(Path::new("d"), &bytes[..len]).is_err());
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            assert!(
                Delta::from_bytes(Path::new("d"), &flipped).is_err(),
                "byte {at}"
            );
        }
    }

    #[test]
    fn a_compact_delta_carries_prefixes_and_counts_removals() {
        let old = view(&[(1 << 60, &[0])], &["a"]);
        let new = view(&[(1 << 60, &[0]), (u64::MAX, &[0])], &["a"]);
        let options = DiffOptions {
            compact: true,
            fpp: Some(0.01),
            ..DiffOptions::default()
        };
        let delta = Delta::between(&old, &new, &options).unwrap();
        let Additions::Prefixes { bits, prefixes } = &delta.added else {
            panic!("{:?}", delta.added);
        };
        // Two entries at 1 % over 20 probes: ⌈log₂(2 / 5.025e-4)⌉ = 12 bits.
        assert_eq!(*bits, 12);
        assert_eq!(prefixes, &[u64::MAX >> 52]);
        assert_eq!(
            Delta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap(),
            delta
        );
        // Removals: counted with their terms, not located (Bloom receivers keep them).
        let back = Delta::between(&new, &old, &options).unwrap();
        assert_eq!((back.removed_count, back.removed.len()), (1, 0));
        assert_eq!(back.removed_terms, SetFingerprint::term(u64::MAX));
        assert_eq!(
            Delta::from_bytes(Path::new("d"), &back.to_bytes()).unwrap(),
            back
        );
    }

    /// `n` additions to a list of `base` entries (fingerprints from SplitMix64).
    fn growth(base: usize, n: usize, probes: u32) -> (ListView, ListView) {
        let mut rng = phishbloom_filter::rng::SplitMix64::new(7);
        let pairs: Vec<(u64, Vec<u16>)> =
            (0..base + n).map(|_| (rng.next_u64(), vec![0])).collect();
        let mut old = view(&[], &["a"]);
        old.probes_per_item = probes;
        let mut new = old.clone();
        old.entries = ListView::new(
            KeyScheme::Exact,
            probes,
            pairs[..base].to_vec(),
            vec![],
            vec![],
        )
        .entries;
        new.entries = ListView::new(KeyScheme::Exact, probes, pairs, vec![], vec![]).entries;
        (old, new)
    }

    fn compact(patch_fpp: Option<f64>) -> DiffOptions {
        DiffOptions {
            compact: true,
            patch_fpp,
            fpp: Some(0.01),
            ..DiffOptions::default()
        }
    }

    #[test]
    fn a_ribbon_coded_delta_round_trips_and_holds_every_addition() {
        let (old, new) = growth(5_000, 1_000, 1);
        let delta =
            Delta::between_coded(&old, &new, &compact(Some(0.01)), PatchCoding::Filter).unwrap();
        let Additions::Filter(filter) = &delta.added else {
            panic!("{:?}", delta.added.kept_bits());
        };
        // 1 % per probe: 7-bit results.
        assert_eq!(filter.bits(), 7);
        let added: Vec<u64> = new
            .entries
            .iter()
            .map(|e| e.0)
            .filter(|v| old.entries.binary_search_by_key(v, |e| e.0).is_err())
            .collect();
        assert!(added.iter().all(|&v| filter.contains(v)));
        let bytes = delta.to_bytes();
        let back = Delta::from_bytes(Path::new("d"), &bytes).unwrap();
        assert_eq!(back, delta);
        assert_eq!(back.target, new.state());
        let parts = delta.part_sizes();
        assert_eq!(
            parts.fixed + parts.added + parts.removed + parts.extras,
            bytes.len()
        );
        // Format 1 cannot hold a filter.
        assert_eq!(delta.to_bytes_version1(), None);
    }

    #[test]
    fn smallest_picks_the_filter_for_a_thousand_additions_under_a_kilobyte() {
        let (old, new) = growth(5_000, 1_000, 1);
        let delta = Delta::between(&old, &new, &compact(Some(0.01))).unwrap();
        assert!(matches!(delta.added, Additions::Filter(_)));
        let prefixes =
            Delta::between_coded(&old, &new, &compact(Some(0.01)), PatchCoding::Prefixes).unwrap();
        let (filter_bytes, prefix_bytes) = (delta.to_bytes().len(), prefixes.to_bytes().len());
        assert!(
            filter_bytes < prefix_bytes,
            "{filter_bytes} vs {prefix_bytes}"
        );
        assert!(filter_bytes <= 1_000, "{filter_bytes} bytes");
    }

    #[test]
    fn format_1_deltas_are_still_read_and_format_2_is_smaller() {
        let old = view(&[(10, &[0]), (20, &[0]), (30, &[1])], &["a", "b"]);
        let mut new = view(&[(20, &[1]), (30, &[1]), (40, &[0, 2])], &["c", "b", "a"]);
        new.exceptions = vec!["ok.example".into()];
        for options in [DiffOptions::default(), compact(None)] {
            let delta = Delta::between(&old, &new, &options).unwrap();
            let v1 = delta.to_bytes_version1().unwrap();
            assert_eq!(&v1[8..12], &VERSION_1.to_le_bytes());
            assert_eq!(Delta::from_bytes(Path::new("d"), &v1).unwrap(), delta);
            let v2 = delta.to_bytes();
            assert_eq!(&v2[8..12], &VERSION.to_le_bytes());
            assert!(v2.len() + 80 < v1.len(), "{} vs {}", v2.len(), v1.len());
        }
        let mut future = Delta::between(&old, &new, &DiffOptions::default())
            .unwrap()
            .to_bytes();
        future[8] = 3;
        reseal(&mut future);
        let error = Delta::from_bytes(Path::new("d"), &future).unwrap_err();
        assert!(error.to_string().contains("upgrade"), "{error}");
    }

    #[test]
    fn damaged_format_2_deltas_of_every_coding_are_refused() {
        let (old, new) = growth(300, 40, 1);
        let mut removal = new.clone();
        removal.entries.remove(3);
        for (coding, to) in [
            (PatchCoding::Filter, &new),
            (PatchCoding::Prefixes, &new),
            (PatchCoding::Filter, &removal),
        ] {
            for options in [compact(Some(0.01)), DiffOptions::default()] {
                let bytes = Delta::between_coded(&old, to, &options, coding)
                    .unwrap()
                    .to_bytes();
                for len in 0..bytes.len() {
                    let error = Delta::from_bytes(Path::new("d"), &bytes[..len]).unwrap_err();
                    if len >= 14 {
                        assert!(error.to_string().contains("truncated"), "{error}");
                    }
                }
                for at in 0..bytes.len() {
                    let mut flipped = bytes.clone();
                    flipped[at] ^= 0x10;
                    assert!(Delta::from_bytes(Path::new("d"), &flipped).is_err());
                    // Resealed, an edit may read (a different delta) but never panics.
                    reseal(&mut flipped);
                    let _ = Delta::from_bytes(Path::new("d"), &flipped);
                    let mut cut = bytes[..at].to_vec();
                    cut.extend_from_slice(&[0; 8]);
                    reseal(&mut cut);
                    let _ = Delta::from_bytes(Path::new("d"), &cut);
                }
            }
        }
    }

    #[test]
    fn a_wrong_promised_fingerprint_is_refused() {
        let (old, new) = growth(50, 10, 1);
        let mut delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        delta.target.fingerprint.0 ^= 1;
        let error = Delta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap_err();
        assert!(error.to_string().contains("promises"), "{error}");
    }

    /// Prints the bytes of deltas of n additions at 1 % per probe in both formats and
    /// codings, beside the bound n·log₂(1/p) bits:
    /// `cargo test --release -p phishbloom-core --lib delta_sizes -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn delta_sizes() {
        println!("n\tcoding\tformat1\tformat2\tbits/entry\tbound\tratio");
        for n in [100usize, 1_000, 10_000, 100_000] {
            let (old, new) = growth(100_000, n, 1);
            let bound = n as f64 * (1.0f64 / 0.01).log2();
            for (name, options, coding) in [
                ("exact", DiffOptions::default(), PatchCoding::Smallest),
                ("prefixes", compact(Some(0.01)), PatchCoding::Prefixes),
                ("ribbon", compact(Some(0.01)), PatchCoding::Filter),
            ] {
                let delta = Delta::between_coded(&old, &new, &options, coding).unwrap();
                let v1 = delta
                    .to_bytes_version1()
                    .map_or("-".to_string(), |b| b.len().to_string());
                let v2 = delta.to_bytes().len();
                let bits = v2 as f64 * 8.0 / n as f64;
                println!(
                    "{n}\t{name}\t{v1}\t{v2}\t{bits:.2}\t{:.2}\t{:.3}",
                    bound / n as f64,
                    v2 as f64 * 8.0 / bound
                );
            }
        }
    }
}
