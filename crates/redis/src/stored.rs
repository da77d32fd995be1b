//! The sections stored beside the filter ([`Section`]: verification table, categories, category
//! sets, exceptions), read back once per version: every chunk's length and xxh3-64 checked,
//! then decoded by the blocklist crate's own section decoders into the
//! [`Resolver`] that decides verdicts exactly as the pushed file does.

use std::path::Path;
use std::sync::Arc;

use phishbloom_core::engine::Fingerprints;
use phishbloom_core::format::{tag, SectionEntry};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::{Exceptions, Resolver, Verification};
use phishbloom_core::sections;
use redis::cmd;

use crate::error::{length_problem, Error, Result};
use crate::layout::{Keys, Section};
use crate::meta::RemoteMeta;
use crate::push::PIPELINE_BYTES;
use crate::store::Store;

/// The bytes of every stored section of the version `meta` describes, in [`Section::ALL`] order
/// (absent sections left out), each chunk's length and checksum verified.
fn read_sections(
    store: &mut Store,
    keys: &Keys,
    meta: &RemoteMeta,
) -> Result<Vec<(Section, Vec<u8>)>> {
    let version = meta.version;
    let stored = meta.sections();
    // (index into `stored`, chunk, key) of every chunk, fetched a few MiB per round trip.
    let chunks: Vec<(usize, u64, String)> = stored
        .iter()
        .enumerate()
        .flat_map(|(at, (section, s))| {
            (0..s.chunking.chunks()).map(move |j| (at, j, keys.section(version, *section, j)))
        })
        .collect();
    let mut bytes: Vec<(Section, Vec<u8>)> = stored
        .iter()
        .map(|(section, s)| (*section, Vec::with_capacity(s.chunking.bytes as usize)))
        .collect();
    let largest = stored
        .iter()
        .map(|(_, s)| s.chunking.chunk_bytes)
        .max()
        .unwrap_or(1);
    let per_trip = (PIPELINE_BYTES / largest.max(1)).max(1) as usize;
    for group in chunks.chunks(per_trip) {
        let answers = store.run(
            group
                .iter()
                .map(|(_, _, key)| cmd("GET").arg(key).clone())
                .collect(),
            "read the verification table, categories and exceptions",
        )?;
        for ((at, j, key), answer) in group.iter().zip(answers) {
            let (_, s) = stored[*at];
            let chunk: Option<Vec<u8>> = store.convert(answer, key, "GET")?;
            let chunk = chunk.unwrap_or_default();
            let expected = s.chunking.len_of(*j);
            if chunk.len() as u64 != expected {
                return Err(Error::BadChunk {
                    url: store.shown().to_string(),
                    name: keys.name().to_string(),
                    version,
                    chunk: *j,
                    key: key.clone(),
                    problem: length_problem(chunk.len() as u64, expected),
                });
            }
            let computed = xxhash_rust::xxh3::xxh3_64(&chunk);
            let recorded = s.sums[*j as usize];
            if computed != recorded {
                return Err(Error::ChecksumMismatch {
                    url: store.shown().to_string(),
                    name: keys.name().to_string(),
                    version,
                    chunk: *j,
                    key: key.clone(),
                    stored: recorded,
                    computed,
                });
            }
            bytes[*at].1.extend_from_slice(&chunk);
        }
    }
    Ok(bytes)
}

/// Reads, verifies and decodes version `meta`'s categories, verification table (with its
/// category sets) and exceptions into the resolver that decides its verdicts.
pub(crate) fn load_resolver(store: &mut Store, keys: &Keys, meta: &RemoteMeta) -> Result<Resolver> {
    let version = meta.version;
    let url = store.shown().to_string();
    let mut sections = read_sections(store, keys, meta)?;
    let mut take = |wanted: Section| {
        sections
            .iter()
            .position(|(section, _)| *section == wanted)
            .map(|at| sections.swap_remove(at).1)
    };
    let (verify, compact, categories, category_sets, exceptions, tops) = (
        take(Section::Verify),
        take(Section::Compact),
        take(Section::Categories),
        take(Section::CategorySets),
        take(Section::Exceptions),
        take(Section::Tops),
    );
    let label = |section: Section| format!("{}:v{version}:{}:*", keys.name(), section.name());
    let bad = |section: Section, what: &'static str, problem: String| Error::BadSection {
        url: url.clone(),
        name: keys.name().to_string(),
        version,
        section: what,
        key: label(section),
        problem,
    };
    // The blocklist crate's decoders name the "file" they read: here, the section's keys.
    let decoded = |section: Section, what: &'static str, error: phishbloom_core::Error| {
        let problem = match error {
            phishbloom_core::Error::InvalidField { field, value, .. } => {
                format!("an invalid {field} ({value})")
            }
            other => other.to_string(),
        };
        bad(section, what, problem)
    };

    let categories = categories.unwrap_or_default();
    let categories_path = label(Section::Categories);
    let categories = sections::decode_categories(Path::new(&categories_path), &categories)
        .map_err(|e| decoded(Section::Categories, "categories", e))?;
    if let Some(bytes) = compact {
        let exceptions = decode_exceptions(meta, exceptions, &label, &bad, &decoded)?;
        let path = label(Section::Compact);
        let sets = category_sets.unwrap_or_default();
        let (_, sets) = sections::decode_category_sets(
            Path::new(&label(Section::CategorySets)),
            &sets,
            0,
            categories.len(),
        )
        .map_err(|e| decoded(Section::CategorySets, "category sets", e))?;
        let entry = SectionEntry {
            tag: tag::COMPACT,
            index: 0,
            offset: 0,
            len: bytes.len() as u64,
            checksum: xxhash_rust::xxh3::xxh3_64(&bytes),
        };
        let table = sections::read_compact(Path::new(&path), &bytes.as_slice(), &entry, sets)
            .map_err(|e| decoded(Section::Compact, "compact table", e))?;
        // Read without the file's hosts gate: the occupancy bits spare most searches.
        let table = match table.domains_only() {
            true => table,
            false => table.with_occupancy(),
        };
        let tops = decode_fingerprints(tops, Section::Tops, "top labels", &bad)?;
        return Ok(Resolver::new(categories, None, exceptions)
            .with_compact(Arc::new(table))
            .with_tops(tops));
    }
    let verification = match verify {
        None => None,
        Some(bytes) => {
            // The metadata makes it `verify-count` × 8 bytes long.
            let fingerprints =
                decode_fingerprints(Some(bytes), Section::Verify, "verification table", &bad)?;
            let (set_of, sets) = match category_sets {
                None => Default::default(),
                Some(bytes) => sections::decode_category_sets(
                    Path::new(&label(Section::CategorySets)),
                    &bytes,
                    fingerprints.len(),
                    categories.len(),
                )
                .map_err(|e| decoded(Section::CategorySets, "category sets", e))?,
            };
            Some(Verification::from_parts(fingerprints, set_of, sets))
        }
    };
    let exceptions = decode_exceptions(meta, exceptions, &label, &bad, &decoded)?;
    let tops = decode_fingerprints(tops, Section::Tops, "top labels", &bad)?;
    Ok(Resolver::new(categories, verification, exceptions).with_tops(tops))
}

/// A section of sorted little-endian u64 fingerprints from its stored bytes (none when absent);
/// `bad` names it in errors.
fn decode_fingerprints(
    bytes: Option<Vec<u8>>,
    section: Section,
    what: &'static str,
    bad: &dyn Fn(Section, &'static str, String) -> Error,
) -> Result<Fingerprints> {
    let Some(bytes) = bytes else {
        return Ok(Fingerprints::default());
    };
    if bytes.len() % 8 != 0 {
        return Err(bad(
            section,
            what,
            format!("{} bytes, not 8 a fingerprint", bytes.len()),
        ));
    }
    let words = bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(std::array::from_fn(|b| w[b])))
        .collect();
    Fingerprints::from_sorted(words).ok_or_else(|| {
        bad(
            section,
            what,
            "fingerprints not sorted strictly ascending".into(),
        )
    })
}

/// The exceptions of version `meta` from their stored bytes, if it has any (`label` and
/// `decoded` name the section in errors).
fn decode_exceptions(
    meta: &RemoteMeta,
    exceptions: Option<Vec<u8>>,
    label: &dyn Fn(Section) -> String,
    bad: &dyn Fn(Section, &'static str, String) -> Error,
    decoded: &dyn Fn(Section, &'static str, phishbloom_core::Error) -> Error,
) -> Result<Exceptions> {
    match exceptions {
        None => Ok(Exceptions::default()),
        Some(_) if meta.list.scheme != KeyScheme::Expressions => Err(bad(
            Section::Exceptions,
            "exceptions",
            "exceptions in a list of whole keys".into(),
        )),
        Some(bytes) => sections::decode_exceptions(Path::new(&label(Section::Exceptions)), &bytes)
            .map_err(|e| decoded(Section::Exceptions, "exceptions", e)),
    }
}
