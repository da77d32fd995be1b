//! Reading a delta file image: its magic and checksum (a copy cut short says so), then the
//! reader of its format.

use std::path::Path;

use crate::bytes::ByteReader;
use crate::error::Result;

use super::decoded::{bad, FIXED_HEADER_LEN};
use super::varint_header::promised_length;
use super::{
    Delta, CHECKSUM_LEN, FIXED_HEADER_VERSION, MAGIC, NEAR_VERSION, TOPS_VERSION, UNPACKED_VERSION,
    VERSION,
};

/// Bytes before the varint header: magic, format, key scheme, additions coding (the shortest
/// delta of either format is longer).
const VARINT_HEADER_START: usize = 14;

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
            VERSION | TOPS_VERSION | UNPACKED_VERSION => {
                Delta::from_varint_header_body(path, body, version)
            }
            FIXED_HEADER_VERSION if body.len() >= FIXED_HEADER_LEN => {
                Delta::from_fixed_header_body(path, body)
            }
            FIXED_HEADER_VERSION => Err(bad(path, format!("truncated at {} bytes", bytes.len()))),
            NEAR_VERSION => Err(bad(
                path,
                "a near-duplicate list's delta (format 5): apply it to a near-duplicate list",
            )),
            _ => Err(bad(
                path,
                format!(
                    "delta format {version}; this phishbloom reads formats \
                     {FIXED_HEADER_VERSION} to {NEAR_VERSION}: upgrade phishbloom"
                ),
            )),
        }
    }
}

/// The body of `bytes` (all but the checksum) when the checksum matches; otherwise the error
/// says whether the copy is cut short (when its header says how long it should be) or damaged.
pub(super) fn checked_body<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b [u8]> {
    let (body, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u64::from_le_bytes(stored.try_into().unwrap_or_default());
    let computed = xxhash_rust::xxh3::xxh3_64(body);
    if stored == computed {
        return Ok(body);
    }
    let format = bytes
        .get(8..12)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
    if matches!(format, Some(VERSION | TOPS_VERSION | UNPACKED_VERSION)) {
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
