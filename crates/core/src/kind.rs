//! [`Kind`]: which structure a blocklist file holds (the header's kind code).

use phishbloom_filter::LayoutKind;

/// What structure a blocklist file holds (the header's kind code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One textbook Bloom filter: k bits anywhere in the array.
    Classic,
    /// One cache-line blocked Bloom filter: k bits in one 512-bit block.
    Blocked,
    /// Seed 003's CaBF: parallel component filters and a check filter (URL entries only).
    Cabf,
    /// A cuckoo filter (Fan et al. 2014): deletes; never evicts a resident fingerprint.
    Cuckoo,
    /// A counting Bloom filter with 4-bit counters: deletes; four times a Bloom filter's memory.
    Counting,
    /// One split-block Bloom filter (Parquet's SBBF): one bit in each 32-bit word of a 256-bit
    /// block, a branch-free probe; its 64-bit hash is the `h1` half of the key's [`KeyHash`](phishbloom_filter::KeyHash).
    Split,
    /// Known documents by SimHash in Manku's permuted tables: near-duplicates within a Hamming
    /// distance (`phishbloom build --near`, [`crate::near`]).
    Near,
    /// Entries' fingerprint prefixes with their category sets, Elias–Fano coded: what a
    /// verified list answers, near the information bound ([`crate::resolve::CompactTable`]).
    /// Static: changed by rebuilding, shipped by `publish`.
    Compact,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 8] = [
        Kind::Classic,
        Kind::Blocked,
        Kind::Cabf,
        Kind::Cuckoo,
        Kind::Counting,
        Kind::Split,
        Kind::Near,
        Kind::Compact,
    ];

    /// Every kind built from keys or entries (all but [`Kind::Near`], which holds documents).
    pub const FILTERS: [Kind; 7] = [
        Kind::Classic,
        Kind::Blocked,
        Kind::Cabf,
        Kind::Cuckoo,
        Kind::Counting,
        Kind::Split,
        Kind::Compact,
    ];

    /// The code stored in the file header.
    pub fn code(self) -> u16 {
        match self {
            Kind::Classic => 1,
            Kind::Blocked => 2,
            Kind::Cabf => 3,
            Kind::Cuckoo => 4,
            Kind::Counting => 5,
            Kind::Split => 6,
            Kind::Near => 7,
            Kind::Compact => 8,
        }
    }

    /// The kind of a header code, if it is one.
    pub fn from_code(code: u16) -> Option<Self> {
        Kind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The kind a user's name ([`Kind::name`]) names.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The name users see (`blocked`, `classic`, `cabf`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Classic => "classic",
            Kind::Blocked => "blocked",
            Kind::Cabf => "cabf",
            Kind::Cuckoo => "cuckoo",
            Kind::Counting => "counting",
            Kind::Split => "split",
            Kind::Near => "near",
            Kind::Compact => "compact",
        }
    }

    /// The Bloom layout of a Bloom kind.
    pub fn layout(self) -> Option<LayoutKind> {
        match self {
            Kind::Classic => Some(LayoutKind::Classic),
            Kind::Blocked => Some(LayoutKind::Blocked),
            Kind::Split => Some(LayoutKind::Split),
            _ => None,
        }
    }

    /// Whether lists of this kind are built once and never changed in place (`compact`: its
    /// table is coded whole; a change is a rebuild).
    pub fn is_static(self) -> bool {
        self == Kind::Compact
    }

    /// The false-positive rate per checked item a list of this kind is built for unless told:
    /// 1 % for the filters (seed 000's rate), and 10⁻⁹ for `compact` — an exact-answering list
    /// meant to travel, whose prefixes cost only `log₂(1/p)` bits each, so a rate at which a
    /// client checking a million URLs a day sees a false "listed" once in about three years
    /// costs about 34 bits per entry (log₂ of 20 expressions / 10⁻⁹).
    pub fn default_fpp(self) -> f64 {
        match self {
            Kind::Compact => 1e-9,
            _ => 0.01,
        }
    }

    /// Whether lists of this kind can delete entries.
    pub fn deletes(self) -> bool {
        matches!(self, Kind::Cuckoo | Kind::Counting)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_its_name() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(Kind::from_name("round"), None);
    }
}
