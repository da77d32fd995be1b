//! [`Blocklist`]: a list in one self-describing file image — whichever kind it holds — built
//! from keys or entries, read from bytes with every checksum verified, written back, asked about
//! items, and changed (add, remove, apply a delta, merge). Each file here is one job; they share
//! the type defined in `model`.

mod apply;
mod build;
mod check;
mod compact_chain;
mod describe;
mod diff;
mod edit;
mod key_filter;
mod merge;
mod model;
mod near;
mod never;
mod read;
mod tops;
mod write;

pub use build::{BuildOptions, KeyHashes};
pub use check::{write_answered, CheckStats};
pub use describe::{CompactInfo, Description, FilterInfo, GateInfo, SectionInfo};
pub use edit::{Applied, Change};
pub use key_filter::KeyFilter;
pub use model::{Blocklist, Engine};
pub use near::{NamedDoc, NearOptions};
pub use never::{never_bits_per_entry, NeverReport};
pub(crate) use tops::top_fingerprints;
