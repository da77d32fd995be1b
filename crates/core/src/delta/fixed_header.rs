//! The delta format with a 160-byte fixed header ([`FIXED_HEADER_VERSION`]), still read and
//! written on request for receivers that read nothing newer: every count and term stored,
//! additions as whole fingerprints or prefixes, Golomb–Rice coded (docs/FORMAT.md, "Delta
//! files", "Format 1").

use std::path::Path;

use phishbloom_filter::golomb;

use crate::bytes::{ByteReader, PutLe};
use crate::error::Result;
use crate::keys::KeyScheme;
use crate::sections::SetFingerprint;

use super::decoded::{bad, check_distinct, check_removed, Decoded, FIXED_HEADER_LEN};
use super::{sealed, Additions, Delta, ListState, FIXED_HEADER_VERSION, MAGIC};

/// The coded parts of a fixed-header delta and their Rice parameters.
struct FixedHeaderParts {
    add_bits: u32,
    add_r: u32,
    added: Vec<u8>,
    rem_r: u32,
    removed: Vec<u8>,
    extras: Vec<u8>,
}

impl Delta {
    /// The delta file's bytes with the 160-byte fixed header ([`FIXED_HEADER_VERSION`]), for
    /// receivers that read nothing newer; `None` for additions coded as a ribbon filter or
    /// a compact table's prefixes, and for a change of the top labels, which that format
    /// cannot hold.
    pub fn to_fixed_header_bytes(&self) -> Option<Vec<u8>> {
        // Format 1 holds no filter, no table and no top labels.
        if matches!(self.added, Additions::Filter(_) | Additions::Table { .. })
            || self.tops.is_some()
        {
            return None;
        }
        let FixedHeaderParts {
            add_bits,
            add_r,
            added,
            rem_r,
            removed,
            extras,
        } = self.encode_fixed_header_parts();

        let mut out =
            Vec::with_capacity(FIXED_HEADER_LEN + added.len() + removed.len() + extras.len());
        out.extend_from_slice(&MAGIC);
        out.put_u32(FIXED_HEADER_VERSION);
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
        debug_assert_eq!(out.len(), FIXED_HEADER_LEN);
        Some(sealed(out, [&added, &removed, &extras]))
    }

    /// The coded parts of a fixed-header file, with their Rice parameters (not for a ribbon
    /// filter or a table: [`Delta::to_fixed_header_bytes`] refuses them first).
    fn encode_fixed_header_parts(&self) -> FixedHeaderParts {
        let (add_bits, add_values): (u32, &[u64]) = match &self.added {
            Additions::Exact(values) => (64, values),
            Additions::Prefixes { bits, prefixes } => (*bits, prefixes),
            Additions::Filter(_) | Additions::Table { .. } => (64, &[]),
        };
        let add_r = golomb::best_parameter(add_values, 1u128 << add_bits);
        let rem_r = golomb::best_parameter(&self.removed, u128::from(self.base.entries.max(1)));
        FixedHeaderParts {
            add_bits,
            add_r,
            added: golomb::encode(add_values, add_r),
            rem_r,
            removed: golomb::encode(&self.removed, rem_r),
            extras: self.encode_extras(false, false),
        }
    }

    /// Reads the body (all but the checksum, already checked; at least the 160-byte header)
    /// of a fixed-header delta.
    pub(super) fn from_fixed_header_body(path: &Path, body: &[u8]) -> Result<Delta> {
        let mut r = ByteReader::new(body);
        let header = FixedHeader::read(&mut r);
        let scheme = header.check(path, r.rest().len())?;
        let corrupt = |e: phishbloom_filter::Error| bad(path, e.to_string());
        let [added_len, removed_len, _] = header.lengths;
        let values = golomb::decode(
            r.take(added_len).unwrap_or_default(),
            header.added_count,
            header.add_r,
            header.add_bits,
        )
        .map_err(corrupt)?;
        // A compact delta records how many entries were removed, not where.
        let compact = header.compact == 1;
        let positions = if compact { 0 } else { header.removed_count };
        let removed = golomb::decode(
            r.take(removed_len).unwrap_or_default(),
            positions,
            header.rem_r,
            64,
        )
        .map_err(corrupt)?;
        let [base, target] = header.states;
        check_removed(path, &removed, base.entries)?;
        let added = if compact {
            Additions::Prefixes {
                bits: header.add_bits,
                prefixes: values,
            }
        } else {
            check_distinct(path, &values)?;
            if SetFingerprint::of(values.iter().copied()).0 != header.added_terms {
                return Err(bad(
                    path,
                    "the additions do not sum to the terms the header records",
                ));
            }
            Additions::Exact(values)
        };
        Decoded {
            scheme,
            probes_per_item: header.probes_per_item,
            created: header.created,
            base,
            base_categories: header.base_categories,
            target,
            added,
            added_terms: header.added_terms,
            removed_count: header.removed_count,
            removed_terms: header.removed_terms,
            removed,
        }
        .with_extras(path, r.rest(), (false, false))
    }
}

/// The fields of a fixed header, as stored (checked by [`FixedHeader::check`]).
struct FixedHeader {
    scheme_code: u8,
    compact: u8,
    add_bits: u32,
    add_r: u32,
    rem_r: u32,
    reserved_zero: bool,
    probes_per_item: u32,
    created: u64,
    /// Base and target.
    states: [ListState; 2],
    added_terms: u128,
    removed_terms: u128,
    added_count: u64,
    removed_count: u64,
    /// Bytes of the additions, removals and extras.
    lengths: [usize; 3],
    base_categories: u32,
}

impl FixedHeader {
    /// Reads the 160 bytes (there: checked by the caller, so every read succeeds).
    fn read(r: &mut ByteReader<'_>) -> FixedHeader {
        r.take(12);
        let scheme_code = r.u8().unwrap_or_default();
        let compact = r.u8().unwrap_or(9);
        let add_bits = u32::from(r.u8().unwrap_or_default());
        let add_r = u32::from(r.u8().unwrap_or_default());
        let rem_r = u32::from(r.u8().unwrap_or_default());
        let reserved_zero = r.take(3).unwrap_or_default().iter().all(|&b| b == 0);
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
        let mut lengths = [0usize; 3];
        for length in &mut lengths {
            *length = r.u32().unwrap_or_default() as usize;
        }
        FixedHeader {
            scheme_code,
            compact,
            add_bits,
            add_r,
            rem_r,
            reserved_zero,
            probes_per_item,
            created,
            states,
            added_terms,
            removed_terms,
            added_count,
            removed_count,
            lengths,
            base_categories: r.u32().unwrap_or_default(),
        }
    }

    /// Refuses an unknown scheme, reserved bytes that are not zero, a width that is not the
    /// coding's, no probes, or parts that do not fill the `body_left` bytes after the header;
    /// returns the key scheme.
    fn check(&self, path: &Path, body_left: usize) -> Result<KeyScheme> {
        let scheme_code = self.scheme_code;
        let scheme = KeyScheme::from_code(scheme_code)
            .ok_or_else(|| bad(path, format!("unknown key scheme {scheme_code}")))?;
        if !self.reserved_zero || self.compact > 1 {
            return Err(bad(path, "reserved header bytes are not zero"));
        }
        let (add_bits, probes_per_item) = (self.add_bits, self.probes_per_item);
        if (self.compact == 0) != (add_bits == 64) || probes_per_item == 0 {
            return Err(bad(
                path,
                format!("addition width {add_bits} bits, probes per item {probes_per_item}"),
            ));
        }
        let total = self.lengths.iter().sum::<usize>();
        if total != body_left {
            return Err(bad(
                path,
                format!("the parts add up to {total} bytes, the body has {body_left}"),
            ));
        }
        Ok(scheme)
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{changed, compact};
    use super::super::{reseal, DiffOptions, NEAR_VERSION, VERSION};
    use super::*;

    #[test]
    fn fixed_header_deltas_are_still_read_and_varint_header_ones_are_smaller() {
        let (old, new) = changed();
        for options in [DiffOptions::default(), compact(None)] {
            let delta = Delta::between(&old, &new, &options).unwrap();
            let fixed = delta.to_fixed_header_bytes().unwrap();
            assert_eq!(&fixed[8..12], &FIXED_HEADER_VERSION.to_le_bytes());
            assert_eq!(Delta::from_bytes(Path::new("d"), &fixed).unwrap(), delta);
            let varint = delta.to_bytes();
            assert_eq!(&varint[8..12], &VERSION.to_le_bytes());
            assert!(
                varint.len() + 80 < fixed.len(),
                "{} vs {}",
                varint.len(),
                fixed.len()
            );
        }
        let mut future = Delta::between(&old, &new, &DiffOptions::default())
            .unwrap()
            .to_bytes();
        future[8] = (NEAR_VERSION + 1) as u8;
        reseal(&mut future);
        let error = Delta::from_bytes(Path::new("d"), &future).unwrap_err();
        assert!(error.to_string().contains("upgrade"), "{error}");
    }
}
