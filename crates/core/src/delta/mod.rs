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
//! - or, between two compact lists of one universe (what `publish` ships), a *table* delta:
//!   the prefixes new to the table, Golomb–Rice coded in its universe, merged into the
//!   receiver's table (`crate::list::compact_chain`);
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
//! Three formats share the magic, the format number at bytes 8–11, the extras and the trailing
//! checksum ([`VERSION`]: `varint_header`, written, its added sets packed; [`UNPACKED_VERSION`]:
//! the same header, a varint per added set, still read; [`FIXED_HEADER_VERSION`]:
//! `fixed_header`, still read). The varint header takes about 60 bytes where the fixed one takes 160, can hold a
//! ribbon filter, and leaves out what the receiver derives (target entry count, the added and —
//! for exact deltas — removed fingerprint terms, part lengths of the last part);
//! [`Delta::to_fixed_header_bytes`] writes the fixed-header format for receivers that read
//! nothing newer.
//!
//! Each file here is one job: `view` (what is compared), `diff` (comparing), `extras`,
//! `varint_header` and `fixed_header` (the coders of each format), `read` (the checks on a
//! file before its format's reader, and what both readers check).

use phishbloom_filter::ribbon::RibbonFilter;

use crate::bytes::PutLe;
use crate::keys::KeyScheme;
use crate::sections::SetFingerprint;

mod decoded;
mod diff;
mod extras;
mod fixed_header;
pub mod near;
mod read;
#[cfg(test)]
mod samples;
mod varint_header;
mod view;

pub use near::{NearDelta, NearEntry, NearState};
pub use view::{DiffOptions, ListView};

/// A delta of either species: of entries ([`Delta`]) or of a near-duplicate list's documents
/// ([`NearDelta`]), told apart by the format number after the magic.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyDelta {
    /// The change of a list of entries.
    Entries(Box<Delta>),
    /// The change of a near-duplicate list.
    Near(NearDelta),
}

impl AnyDelta {
    /// Reads a delta file image of either species; `path` names it in errors.
    pub fn from_bytes(path: &std::path::Path, bytes: &[u8]) -> crate::error::Result<Self> {
        let format = bytes
            .get(8..12)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
        match format {
            Some(NEAR_VERSION) if bytes.get(..8) == Some(&MAGIC[..]) => {
                Ok(AnyDelta::Near(NearDelta::from_bytes(path, bytes)?))
            }
            _ => Ok(AnyDelta::Entries(Box::new(Delta::from_bytes(path, bytes)?))),
        }
    }
}

/// The first 8 bytes of a delta file: `\x89PHBDEL\n` (like the blocklist magic, binary-safe).
pub const MAGIC: [u8; 8] = [0x89, b'P', b'H', b'B', b'D', b'E', b'L', 0x0a];

/// The delta format this build writes, with a varint header and the added entries' category
/// sets packed (it reads this one, [`UNPACKED_VERSION`] and [`FIXED_HEADER_VERSION`]).
pub const VERSION: u32 = 3;

/// [`VERSION`] with the target's set of single-label domain entries after the extras, written
/// when a change touches that set (a reader of [`VERSION`] alone refuses it by its number).
pub const TOPS_VERSION: u32 = 4;

/// The varint-header format whose extras give each added entry's category set a varint,
/// still read.
pub const UNPACKED_VERSION: u32 = 2;

/// The delta format of near-duplicate lists' documents ([`NearDelta`]).
pub const NEAR_VERSION: u32 = 5;

/// The delta format with a 160-byte fixed header, still read.
pub const FIXED_HEADER_VERSION: u32 = 1;

/// The varint header's code of how the additions are coded (the byte at offset 13).
mod coding {
    /// Whole fingerprints, Golomb–Rice coded.
    pub const EXACT: u8 = 0;
    /// `b`-bit prefixes, Golomb–Rice coded.
    pub const PREFIXES: u8 = 1;
    /// A ribbon filter's solution.
    pub const RIBBON: u8 = 2;
    /// A compact table's prefixes, Golomb–Rice coded in the table's universe, with the
    /// added entries' category sets packed (see `extras`).
    pub const TABLE: u8 = 3;
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
    /// Prefixes in a compact table's universe, ascending and distinct: the additions to a
    /// compact list, which merges them into its table (so they are exact for that table, and
    /// removals and category changes name positions in it, as an exact delta's do).
    Table {
        /// The universe of the table the prefixes belong to.
        universe: u64,
        /// The prefixes.
        prefixes: Vec<u64>,
    },
}

impl Additions {
    /// How many entries are added.
    pub fn len(&self) -> usize {
        match self {
            Additions::Exact(values) => values.len(),
            Additions::Prefixes { prefixes, .. } => prefixes.len(),
            Additions::Filter(filter) => filter.len() as usize,
            Additions::Table { prefixes, .. } => prefixes.len(),
        }
    }

    /// Whether the additions are compact (for Bloom files without verification: they name
    /// no removal positions).
    pub fn is_compact(&self) -> bool {
        matches!(self, Additions::Prefixes { .. } | Additions::Filter(_))
    }

    /// The values whose set fingerprint terms the receiver computes itself: whole fingerprints
    /// or a compact table's prefixes (`None` for a Bloom patch, whose terms the delta records).
    pub fn known_values(&self) -> Option<&[u64]> {
        match self {
            Additions::Exact(values) => Some(values),
            Additions::Table { prefixes, .. } => Some(prefixes),
            Additions::Prefixes { .. } | Additions::Filter(_) => None,
        }
    }

    /// Bits per addition the coding keeps of each fingerprint: 64 (exact), the prefix width,
    /// the ribbon filter's result bits, or `⌈log₂ u⌉` of a table's universe.
    pub fn kept_bits(&self) -> u32 {
        match self {
            Additions::Exact(_) => 64,
            Additions::Prefixes { bits, .. } => *bits,
            Additions::Filter(filter) => filter.bits(),
            Additions::Table { universe, .. } => 64 - universe.saturating_sub(1).leading_zeros(),
        }
    }

    /// The false-positive rate per probe the additions add at a receiver that keeps them as a
    /// patch: 0 (exact, or merged into a compact table, whose rate is the table's), `n / 2^b`
    /// (prefixes) or `2^-f` (ribbon).
    pub fn patch_fpp(&self) -> f64 {
        match self {
            Additions::Exact(_) | Additions::Table { .. } => 0.0,
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
    /// or a compact delta; always present in a table delta).
    pub added_categories: Vec<Vec<u16>>,
    /// Entries in both versions whose categories changed: base position, new category ids.
    pub recategorized: Vec<(u64, Vec<u16>)>,
    /// Entry-count change per category id.
    pub counts: Vec<(u16, i64)>,
    /// The target's exceptions (sorted entry keys), when they differ from the base's.
    pub exceptions: Option<Vec<String>>,
    /// The fingerprints of the target's domain entries of a single label (ascending), when
    /// they differ from the base's (see `crate::list::tops`).
    pub tops: Option<Vec<u64>>,
}

/// `header` followed by `parts` and the checksum of them all: a whole delta file.
fn sealed(mut header: Vec<u8>, parts: [&[u8]; 3]) -> Vec<u8> {
    for part in parts {
        header.extend_from_slice(part);
    }
    let checksum = xxhash_rust::xxh3::xxh3_64(&header);
    header.put_u64(checksum);
    header
}

/// Recomputes a delta image's trailing checksum in place (for tests and fuzzing, which edit a
/// delta and want the edit, not the checksum, to be what is refused).
pub fn reseal(bytes: &mut [u8]) {
    if let Some(body) = bytes.len().checked_sub(CHECKSUM_LEN) {
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        bytes[body..].copy_from_slice(&checksum.to_le_bytes());
    }
}
