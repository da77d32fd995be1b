//! Reading a delta file image: its magic and checksum (a copy cut short says so), then the
//! reader of its format; and what both formats' readers check of the values they decode and
//! how they assemble the delta.

use std::path::Path;

use crate::bytes::ByteReader;
use crate::error::{Error, Result};
use crate::keys::KeyScheme;

use super::varint_header::promised_length;
use super::{Additions, Delta, ListState, CHECKSUM_LEN, FIXED_HEADER_VERSION, MAGIC, VERSION};

/// Bytes before the varint header: magic, format, key scheme, additions coding (the shortest
/// delta of either format is longer).
pub(super) const VARINT_HEADER_START: usize = 14;

/// Length of the fixed header.
pub(super) const FIXED_HEADER_LEN: usize = 160;

impl Delta {
    /// Reads a delta file image, in either format; `path` names it in errors. Every length,
    /// count and value is checked: a damaged or hostile file is an error, never a panic or a
    /// huge allocation.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Delta> {
        if bytes.get(..8) != Some(&MAGIC[..]) {
            return Err(bad(
                path,
                format!(
                    "it does not start with the delta magic (it starts with {:?})",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(8)])
                ),
            ));
        }
        if bytes.len() < VARINT_HEADER_START + CHECKSUM_LEN {
            return Err(bad(path, format!("truncated at {} bytes", bytes.len())));
        }
        let body = checked_body(path, bytes)?;
        let mut r = ByteReader::new(body);
        // The first 14 bytes are there (checked above): these reads succeed.
        r.take(8);
        let version = r.u32().unwrap_or_default();
        match version {
            VERSION => Delta::from_varint_header_body(path, body),
            FIXED_HEADER_VERSION if body.len() >= FIXED_HEADER_LEN => {
                Delta::from_fixed_header_body(path, body)
            }
            FIXED_HEADER_VERSION => Err(bad(path, format!("truncated at {} bytes", bytes.len()))),
            _ => Err(bad(
                path,
                format!(
                    "delta format {version}; this phishbloom reads formats \
                     {FIXED_HEADER_VERSION} and {VERSION}: upgrade phishbloom"
                ),
            )),
        }
    }
}

/// The body of `bytes` (all but the checksum) when the checksum matches; otherwise the error
/// says whether the copy is cut short (when its header says how long it should be) or damaged.
fn checked_body<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b [u8]> {
    let (body, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u64::from_le_bytes(stored.try_into().unwrap_or_default());
    let computed = xxhash_rust::xxh3::xxh3_64(body);
    if stored == computed {
        return Ok(body);
    }
    if bytes.get(8..12) == Some(&VERSION.to_le_bytes()[..]) {
        match promised_length(bytes) {
            None => {
                return Err(bad(
                    path,
                    format!(
                        "truncated at {} bytes, within its header: the copy is incomplete",
                        bytes.len()
                    ),
                ))
            }
            Some(promised) if promised > bytes.len() => {
                return Err(bad(
                    path,
                    format!(
                        "truncated at {} bytes (its header promises {promised}): the copy \
                         is incomplete",
                        bytes.len()
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Err(bad(
        path,
        format!(
            "checksum mismatch (stored {stored:#018x}, computed {computed:#018x}): the \
             copy is damaged or incomplete"
        ),
    ))
}

/// The error for a delta file `path` that cannot be read, and why.
pub(super) fn bad(path: &Path, problem: impl Into<String>) -> Error {
    Error::BadDelta {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

/// Refuses removed positions that are not ascending, distinct positions of a base of
/// `base_entries` entries.
pub(super) fn check_removed(path: &Path, removed: &[u64], base_entries: u64) -> Result<()> {
    if removed.windows(2).any(|w| w[0] >= w[1])
        || removed.last().is_some_and(|&p| p >= base_entries)
    {
        return Err(bad(
            path,
            "removed positions are not distinct positions of the base",
        ));
    }
    Ok(())
}

/// Refuses exact additions (ascending) that list a fingerprint twice.
pub(super) fn check_distinct(path: &Path, values: &[u64]) -> Result<()> {
    if values.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad(path, "an addition is listed twice"));
    }
    Ok(())
}

/// What a delta's header and coded parts say, decoded and checked, before its extras are read.
pub(super) struct Decoded {
    pub(super) scheme: KeyScheme,
    pub(super) probes_per_item: u32,
    pub(super) created: u64,
    pub(super) base: ListState,
    pub(super) base_categories: u32,
    pub(super) target: ListState,
    pub(super) added: Additions,
    pub(super) added_terms: u128,
    pub(super) removed_count: u64,
    pub(super) removed_terms: u128,
    pub(super) removed: Vec<u64>,
}

impl Decoded {
    /// The delta, with its `extras` read.
    pub(super) fn with_extras(self, path: &Path, extras: &[u8]) -> Result<Delta> {
        let mut delta = Delta {
            scheme: self.scheme,
            probes_per_item: self.probes_per_item,
            created: self.created,
            base: self.base,
            base_categories: self.base_categories,
            target: self.target,
            added: self.added,
            added_terms: self.added_terms,
            removed_count: self.removed_count,
            removed_terms: self.removed_terms,
            removed: self.removed,
            new_categories: Vec::new(),
            added_categories: Vec::new(),
            recategorized: Vec::new(),
            counts: Vec::new(),
            exceptions: None,
        };
        delta
            .decode_extras(extras)
            .ok_or_else(|| bad(path, "its categories or exceptions do not decode"))?;
        Ok(delta)
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::view;
    use super::super::DiffOptions;
    use super::*;

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
}
