//! The near sketches section (tag `0x14`) of a MinHash near-duplicate list: how documents are
//! sketched ([`MinHashParams`]), the boilerplate shingles dropped from every sketch, the
//! documents' packed sketches, one posting table per key ([`SketchIndex`]), and the exact
//! hashes of short documents, sorted (docs/FORMAT.md, "Near sketches").

use std::path::Path;

use phishbloom_filter::postings::{
    Postings, FRAGMENT_BITS, MAX_BUCKET_BITS, MIN_BUCKET_BITS, MIN_KNOWN_BITS, NUMBERS,
};
use phishbloom_text::minhash::{Boilerplate, MinHashParams, SketchIndex};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};

/// Length of the section's header.
const HEADER: usize = 64;

/// Encodes the near sketches section.
pub(super) fn encode(boilerplate: &Boilerplate, index: &SketchIndex, exact: &[u64]) -> Vec<u8> {
    let params = index.params();
    let tables = index.tables();
    let table_bytes: usize = tables.iter().map(Postings::bytes).sum();
    let mut out = Vec::with_capacity(
        HEADER + 8 * (boilerplate.len() + index.len() * params.words() + exact.len()) + table_bytes,
    );
    out.put_u32(params.shingle);
    out.put_u32(params.min_features);
    out.put_u32(params.bins);
    out.push(params.bits as u8);
    out.push(params.postings as u8);
    out.push(index.bucket_bits() as u8);
    out.push(index.fragment_bits() as u8);
    out.put_u64(index.len() as u64);
    out.put_u64(exact.len() as u64);
    out.put_u64(boilerplate.len() as u64);
    out.resize(HEADER, 0);
    for &feature in boilerplate.features() {
        out.put_u64(feature);
    }
    for number in 0..index.len() as u32 {
        for &word in index.packed(number) {
            out.put_u64(word);
        }
    }
    for table in tables {
        for &start in table.starts() {
            out.put_u32(start);
        }
        for &entry in table.entries() {
            out.put_u32(entry);
        }
    }
    for &hash in exact {
        out.put_u64(hash);
    }
    out
}

/// Decodes the near sketches section, checking every field: parameters usable, lengths
/// exact, boilerplate and exact hashes ascending, posting tables well formed and numbering
/// every document once.
pub(super) fn decode(
    path: &Path,
    bytes: &[u8],
) -> Result<(MinHashParams, Boilerplate, SketchIndex, Vec<u64>)> {
    let bad = |field: &'static str, value: String| Error::invalid(path, field, value);
    let mut reader = ByteReader::new(bytes);
    let short = || bad("near sketches", "header shorter than 64 bytes".into());
    let shingle = reader.u32().ok_or_else(short)?;
    let min_features = reader.u32().ok_or_else(short)?;
    let bins = reader.u32().ok_or_else(short)?;
    let bits = u32::from(reader.u8().ok_or_else(short)?);
    let postings = u32::from(reader.u8().ok_or_else(short)?);
    let bucket_bits = u32::from(reader.u8().ok_or_else(short)?);
    let fragment_bits = u32::from(reader.u8().ok_or_else(short)?);
    let documents = reader.u64().ok_or_else(short)?;
    let exact_count = reader.u64().ok_or_else(short)?;
    let boilerplate_count = reader.u64().ok_or_else(short)?;
    if bytes.len() < HEADER || bytes[40..HEADER].iter().any(|&b| b != 0) {
        return Err(short());
    }
    let params = MinHashParams {
        shingle,
        bins,
        bits,
        postings,
        min_features,
    };
    if let Some(problem) = params.problem() {
        return Err(bad("near sketch parameters", problem));
    }
    // Every table these rules build has at least MIN_BUCKET_BITS bucket bits and knows at
    // least MIN_KNOWN_BITS of each key: a section with fewer would refuse its own edits.
    if !(MIN_BUCKET_BITS..=MAX_BUCKET_BITS).contains(&bucket_bits)
        || fragment_bits > FRAGMENT_BITS
        || bucket_bits + fragment_bits < MIN_KNOWN_BITS
        || documents >= u64::from(NUMBERS)
    {
        return Err(bad(
            "near sketch tables",
            format!(
                "{documents} documents in 2^{bucket_bits} buckets with {fragment_bits} fragment \
                 bits"
            ),
        ));
    }
    let words = params.words() as u64;
    let per_table = ((1u64 << bucket_bits) + 1 + documents) * 4;
    let expected = boilerplate_count
        .checked_add(exact_count)
        .and_then(|v| v.checked_add(documents.checked_mul(words)?))
        .and_then(|v| v.checked_mul(8))
        .and_then(|v| v.checked_add(per_table.checked_mul(u64::from(postings))?))
        .and_then(|v| v.checked_add(HEADER as u64));
    if expected != Some(bytes.len() as u64) {
        return Err(bad(
            "near sketches length",
            format!(
                "{} bytes for {documents} sketches, {exact_count} exact hashes and \
                 {boilerplate_count} boilerplate shingles",
                bytes.len()
            ),
        ));
    }
    let mut body = ByteReader::new(&bytes[HEADER..]);
    // Every read below is within the length just checked.
    let mut u64s = |n: u64| -> Vec<u64> { (0..n).map(|_| body.u64().unwrap_or(0)).collect() };
    let boilerplate_features = u64s(boilerplate_count);
    let packed = u64s(documents * words);
    if boilerplate_features.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad("near boilerplate shingles", "not ascending".into()));
    }
    let mut tables = Vec::with_capacity(postings as usize);
    for _ in 0..postings {
        let starts = (0..(1u64 << bucket_bits) + 1)
            .map(|_| body.u32().unwrap_or(0))
            .collect();
        let entries = (0..documents).map(|_| body.u32().unwrap_or(0)).collect();
        tables.push(
            Postings::from_parts(
                bucket_bits,
                fragment_bits,
                starts,
                entries,
                documents as u32,
            )
            .map_err(|e| bad("near sketch tables", e.to_string()))?,
        );
    }
    let exact: Vec<u64> = (0..exact_count).map(|_| body.u64().unwrap_or(0)).collect();
    if exact.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("near exact hashes", "not sorted".into()));
    }
    let index = SketchIndex::from_parts(params, packed, tables)
        .map_err(|e| bad("near sketch tables", e.to_string()))?;
    Ok((
        params,
        Boilerplate::from_features(boilerplate_features),
        index,
        exact,
    ))
}
