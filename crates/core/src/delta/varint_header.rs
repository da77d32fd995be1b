//! The delta format this build writes ([`VERSION`]): a varint header that leaves out what the
//! receiver derives, additions coded as whole fingerprints, prefixes or a ribbon filter
//! (docs/FORMAT.md, "Delta files", "Format 2").

use std::path::Path;

use phishbloom_filter::golomb;
use phishbloom_filter::ribbon::RibbonFilter;

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::sections::SetFingerprint;

use super::decoded::{bad, check_distinct, check_removed, Decoded};
use super::{
    coding, sealed, Additions, Delta, ListState, PartSizes, CHECKSUM_LEN, MAGIC, TOPS_VERSION,
    UNPACKED_VERSION, VERSION,
};

/// The parts of a varint-header delta: header (through the part lengths), additions,
/// removals, extras.
struct VarintHeaderParts {
    header: Vec<u8>,
    added: Vec<u8>,
    removed: Vec<u8>,
    extras: Vec<u8>,
}

impl Delta {
    /// The delta file's bytes, in the current format ([`VERSION`], a varint header; or
    /// [`TOPS_VERSION`] when it carries the target's top labels).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_varint_header_bytes(self.current_version())
    }

    /// The format [`Delta::to_bytes`] writes.
    fn current_version(&self) -> u32 {
        if self.tops.is_some() {
            TOPS_VERSION
        } else {
            VERSION
        }
    }

    /// The delta file's bytes in varint-header format `version` (the current one, or — for
    /// the tests of its reader — [`UNPACKED_VERSION`]).
    fn to_varint_header_bytes(&self, version: u32) -> Vec<u8> {
        let parts = self.encode_varint_header_parts(version);
        sealed(parts.header, [&parts.added, &parts.removed, &parts.extras])
    }

    /// The parts of the varint-header file: the header, then the additions, removals and
    /// extras (docs/FORMAT.md, "Delta files").
    fn encode_varint_header_parts(&self, version: u32) -> VarintHeaderParts {
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
        header.put_u32(version);
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
        let extras = self.encode_extras(version != UNPACKED_VERSION, version == TOPS_VERSION);
        header.put_varint(added.len() as u64);
        header.put_varint(removed.len() as u64);
        header.put_varint(extras.len() as u64);
        VarintHeaderParts {
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
        let encoded = self.encode_varint_header_parts(self.current_version());
        PartSizes {
            fixed: encoded.header.len() + CHECKSUM_LEN,
            added: encoded.added.len(),
            removed: encoded.removed.len(),
            extras: encoded.extras.len(),
        }
    }

    /// Reads the body (all but the checksum, already checked) of a varint-header delta of
    /// format `version` ([`VERSION`], [`TOPS_VERSION`], or [`UNPACKED_VERSION`], which holds no
    /// table).
    pub(super) fn from_varint_header_body(path: &Path, body: &[u8], version: u32) -> Result<Delta> {
        let mut fields = Fields {
            r: ByteReader::new(body),
            path,
        };
        fields.r.take(12);
        let header = VarintHeader::read(&mut fields)?;
        let packed = version != UNPACKED_VERSION;
        if header.table && !packed {
            return Err(bad(path, format!("a table delta in format {version}")));
        }
        let [added_len, removed_len, _] = fields.part_lengths()?;
        let coded_added = fields
            .r
            .take(added_len)
            .ok_or_else(|| bad(path, "its additions are cut short"))?;
        let coded_removed = fields
            .r
            .take(removed_len)
            .ok_or_else(|| bad(path, "its removals are cut short"))?;
        let added = header.decode_additions(path, coded_added)?;
        let rem_r = header.removal_parameter;
        if rem_r > 63 {
            return Err(bad(path, format!("removal Rice parameter {rem_r}")));
        }
        // A compact delta records how many entries were removed, not where.
        let positions = if header.compact {
            0
        } else {
            header.states.removed_count
        };
        let removed = golomb::decode(coded_removed, positions, rem_r, 64)
            .map_err(|e| bad(path, e.to_string()))?;
        check_removed(path, &removed, header.states.base.entries)?;
        let (added_terms, removed_terms) = header.terms(path, &added)?;
        let states = header.states;
        Decoded {
            scheme: header.scheme,
            probes_per_item: header.probes_per_item,
            created: header.created,
            base: states.base,
            base_categories: states.base_categories,
            target: states.target,
            added,
            added_terms,
            removed_count: states.removed_count,
            removed_terms,
            removed,
        }
        .with_extras(path, fields.r.rest(), (packed, version == TOPS_VERSION))
    }
}

/// A varint header's fields as they are read: a read past the end of the body is "its header
/// is cut short".
struct Fields<'b, 'p> {
    r: ByteReader<'b>,
    path: &'p Path,
}

impl Fields<'_, '_> {
    fn truncated(&self) -> Error {
        bad(self.path, "its header is cut short")
    }

    fn u8(&mut self) -> Result<u8> {
        self.r.u8().ok_or_else(|| self.truncated())
    }

    fn varint(&mut self) -> Result<u64> {
        self.r.varint().ok_or_else(|| self.truncated())
    }

    fn u128(&mut self) -> Result<u128> {
        self.r.u128().ok_or_else(|| self.truncated())
    }

    /// The lengths of the additions, removals and extras, which fill the rest of the body.
    fn part_lengths(&mut self) -> Result<[usize; 3]> {
        let mut lengths = [0usize; 3];
        for length in &mut lengths {
            *length = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
        }
        if lengths
            .iter()
            .try_fold(0usize, |sum, &len| sum.checked_add(len))
            != Some(self.r.rest().len())
        {
            return Err(bad(self.path, "its parts do not add up to its length"));
        }
        Ok(lengths)
    }
}

/// How a varint-header delta's additions are coded, with their parameters.
enum Params {
    /// Golomb–Rice coded values of `bits` bits (64: whole fingerprints), parameter `r`.
    Golomb { bits: u32, r: u32 },
    /// A ribbon filter of `bits`-bit results, its seed, and its slots beyond the additions.
    Ribbon { bits: u32, seed: u64, slack: u64 },
    /// Golomb–Rice coded prefixes of a compact table's universe, parameter `r`.
    Table { universe: u64, r: u32 },
}

impl Params {
    /// The parameters of additions coding `code`.
    fn read(fields: &mut Fields<'_, '_>, code: u8) -> Result<Params> {
        Ok(match code {
            coding::EXACT => Params::Golomb {
                bits: 64,
                r: u32::from(fields.u8()?),
            },
            coding::PREFIXES => Params::Golomb {
                bits: u32::from(fields.u8()?),
                r: u32::from(fields.u8()?),
            },
            coding::RIBBON => Params::Ribbon {
                bits: u32::from(fields.u8()?),
                seed: fields.varint()?,
                slack: fields.varint()?,
            },
            coding::TABLE => Params::Table {
                universe: fields.varint()?,
                r: u32::from(fields.u8()?),
            },
            _ => return Err(bad(fields.path, format!("unknown additions coding {code}"))),
        })
    }
}

/// The base and target a varint header names, and the counts of the change.
struct States {
    base: ListState,
    target: ListState,
    base_categories: u32,
    added_count: u64,
    removed_count: u64,
}

impl Fields<'_, '_> {
    /// Reads the base and target, deriving the target's entry count.
    fn states(&mut self) -> Result<States> {
        let path = self.path;
        let mut base = ListState {
            version: self.varint()?,
            entries: self.varint()?,
            ..ListState::default()
        };
        base.fingerprint = SetFingerprint(self.u128()?);
        let mut target = ListState {
            version: base.version.wrapping_add(self.varint()?),
            ..ListState::default()
        };
        target.fingerprint = SetFingerprint(self.u128()?);
        let base_categories = u32::try_from(self.varint()?)
            .map_err(|_| bad(path, "base category count out of range"))?;
        let added_count = self.varint()?;
        let removed_count = self.varint()?;
        target.entries = base
            .entries
            .checked_add(added_count)
            .and_then(|n| n.checked_sub(removed_count))
            .ok_or_else(|| bad(path, "it removes more entries than the base has"))?;
        Ok(States {
            base,
            target,
            base_categories,
            added_count,
            removed_count,
        })
    }
}

/// A varint header, read through the removals' Rice parameter.
struct VarintHeader {
    scheme: KeyScheme,
    /// Whether the additions are compact (prefixes or a ribbon filter).
    compact: bool,
    /// Whether they are a compact table's.
    table: bool,
    probes_per_item: u32,
    created: u64,
    states: States,
    /// The removed terms, recorded only by a compact delta that removes entries.
    removed_terms: u128,
    params: Params,
    removal_parameter: u32,
}

impl VarintHeader {
    /// Reads the header after the format number, checking each field as it comes.
    fn read(fields: &mut Fields<'_, '_>) -> Result<VarintHeader> {
        let path = fields.path;
        let scheme_code = fields.u8()?;
        let code = fields.u8()?;
        let scheme = KeyScheme::from_code(scheme_code)
            .ok_or_else(|| bad(path, format!("unknown key scheme {scheme_code}")))?;
        let probes_per_item = u32::try_from(fields.varint()?)
            .ok()
            .filter(|&p| p >= 1)
            .ok_or_else(|| bad(path, "probes per item out of range"))?;
        let created = fields.varint()?;
        let states = fields.states()?;
        let compact = is_compact(code);
        let removed_terms = if compact && states.removed_count > 0 {
            fields.u128()?
        } else {
            0
        };
        let params = Params::read(fields, code)?;
        let removal_parameter = if !compact && states.removed_count > 0 {
            u32::from(fields.u8()?)
        } else {
            0
        };
        Ok(VarintHeader {
            scheme,
            compact,
            table: code == coding::TABLE,
            probes_per_item,
            created,
            states,
            removed_terms,
            params,
            removal_parameter,
        })
    }

    /// The additions coded in `coded`, as the header's parameters say.
    fn decode_additions(&self, path: &Path, coded: &[u8]) -> Result<Additions> {
        let corrupt = |e: phishbloom_filter::Error| bad(path, e.to_string());
        let count = self.states.added_count;
        match self.params {
            Params::Golomb { bits, r } => {
                if !(1..=64).contains(&bits) || (bits == 64) == self.compact || r > 63 {
                    return Err(bad(
                        path,
                        format!("addition width {bits} bits, Rice parameter {r}"),
                    ));
                }
                let values = golomb::decode(coded, count, r, bits).map_err(corrupt)?;
                if self.compact {
                    return Ok(Additions::Prefixes {
                        bits,
                        prefixes: values,
                    });
                }
                check_distinct(path, &values)?;
                Ok(Additions::Exact(values))
            }
            Params::Table { universe, r } => {
                if universe == 0 || r > 63 {
                    return Err(bad(
                        path,
                        format!("table universe {universe}, Rice parameter {r}"),
                    ));
                }
                let prefixes = golomb::decode(coded, count, r, 64).map_err(corrupt)?;
                check_distinct(path, &prefixes)?;
                if prefixes.last().is_some_and(|&p| p >= universe) {
                    return Err(bad(
                        path,
                        "an added prefix lies beyond its table's universe",
                    ));
                }
                Ok(Additions::Table { universe, prefixes })
            }
            Params::Ribbon { bits, seed, slack } => {
                let slots = count
                    .checked_add(slack)
                    .ok_or_else(|| bad(path, "ribbon filter size out of range"))?;
                if count == 0 {
                    return Err(bad(path, "an empty ribbon filter"));
                }
                Ok(Additions::Filter(
                    RibbonFilter::from_solution(bits, slots, seed, count, coded)
                        .map_err(corrupt)?,
                ))
            }
        }
    }

    /// The added and removed terms, which this format leaves out, derived: an exact delta's
    /// from its values and the promised target; a compact one's added terms from the target
    /// and the removed terms it records.
    fn terms(&self, path: &Path, added: &Additions) -> Result<(u128, u128)> {
        let (base, target) = (
            self.states.base.fingerprint.0,
            self.states.target.fingerprint.0,
        );
        let Some(values) = added.known_values() else {
            let added_terms = target.wrapping_sub(base).wrapping_add(self.removed_terms);
            return Ok((added_terms, self.removed_terms));
        };
        let added_terms = SetFingerprint::of(values.iter().copied()).0;
        let removed_terms = base.wrapping_add(added_terms).wrapping_sub(target);
        // Without removals the promise is checked here, for every receiver (with removals, by
        // the receiver that finds them in its table).
        if self.states.removed_count == 0 && removed_terms != 0 {
            return Err(bad(
                path,
                "its additions do not lead to the set fingerprint it promises",
            ));
        }
        Ok((added_terms, removed_terms))
    }
}

/// The whole length a varint-header delta's header promises (header, parts, checksum), read
/// from its first bytes without checking anything else: `None` when they do not hold the
/// header.
pub(super) fn promised_length(bytes: &[u8]) -> Option<usize> {
    let mut r = ByteReader::new(bytes);
    r.take(8)?;
    if !matches!(r.u32()?, VERSION | TOPS_VERSION | UNPACKED_VERSION) {
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
    let compact = is_compact(code);
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
        coding::TABLE => {
            r.varint()?;
            r.take(1)?;
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

/// The coding code, parameter bytes and coded values of a varint-header delta's additions.
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
        Additions::Table { universe, prefixes } => {
            let r = golomb::best_parameter(prefixes, u128::from(*universe));
            let mut params = Vec::new();
            params.put_varint(*universe);
            params.push(r as u8);
            (coding::TABLE, params, golomb::encode(prefixes, r))
        }
    }
}

/// Whether additions coding `code` is a Bloom patch's (prefixes or a ribbon filter): its
/// receivers have no table, so it records the removed terms instead of removal positions.
fn is_compact(code: u8) -> bool {
    matches!(code, coding::PREFIXES | coding::RIBBON)
}

/// Bytes a varint-header delta spends on `additions` (parameters and coded values): what
/// [`PatchCoding::Smallest`](super::PatchCoding::Smallest) compares.
pub(super) fn coded_len(additions: &Additions) -> usize {
    let (_, params, coded) = encode_additions(additions);
    params.len() + coded.len()
}

#[cfg(test)]
mod tests {
    use super::super::samples::{compact, growth, tables};
    use super::super::{reseal, DiffOptions, PatchCoding};
    use super::*;

    #[test]
    fn damaged_varint_header_deltas_of_every_coding_are_refused() {
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
    fn damaged_table_deltas_are_refused_or_read_as_another_delta_never_a_panic() {
        let (old, new) = tables(300, 40, 4);
        let bytes = Delta::between(&old, &new, &DiffOptions::default())
            .unwrap()
            .to_bytes();
        for len in 0..bytes.len() {
            assert!(Delta::from_bytes(Path::new("d"), &bytes[..len]).is_err());
        }
        for at in 0..bytes.len() {
            for bit in [0x01, 0x10, 0x80] {
                let mut flipped = bytes.clone();
                flipped[at] ^= bit;
                assert!(Delta::from_bytes(Path::new("d"), &flipped).is_err());
                reseal(&mut flipped);
                let _ = Delta::from_bytes(Path::new("d"), &flipped);
            }
        }
    }

    #[test]
    fn unpacked_format_deltas_are_still_read_and_hold_no_table() {
        let (old, new) = super::super::samples::changed();
        let delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        let unpacked = delta.to_varint_header_bytes(UNPACKED_VERSION);
        assert_eq!(&unpacked[8..12], &UNPACKED_VERSION.to_le_bytes());
        assert_eq!(Delta::from_bytes(Path::new("d"), &unpacked).unwrap(), delta);
        let (old, new) = tables(50, 10, 3);
        let table = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        let error = Delta::from_bytes(
            Path::new("d"),
            &table.to_varint_header_bytes(UNPACKED_VERSION),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("table delta in format 2"),
            "{error}"
        );
    }

    #[test]
    fn a_wrong_promised_fingerprint_is_refused() {
        let (old, new) = growth(50, 10, 1);
        let mut delta = Delta::between(&old, &new, &DiffOptions::default()).unwrap();
        delta.target.fingerprint.0 ^= 1;
        let error = Delta::from_bytes(Path::new("d"), &delta.to_bytes()).unwrap_err();
        assert!(error.to_string().contains("promises"), "{error}");
    }
}
