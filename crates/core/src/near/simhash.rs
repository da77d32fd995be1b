//! The near tables section (tag `0x12`) of a SimHash near-duplicate list: how documents are
//! fingerprinted ([`SimHashParams`]), the largest distance the tables answer, and Manku's
//! permuted tables ([`phishbloom_filter::near`]) of the SimHash fingerprints — table 0 is the
//! fingerprints sorted — then the check fingerprints and the exact hashes of short documents,
//! sorted (docs/FORMAT.md, "Near-duplicate sections").

use std::path::Path;

use phishbloom_filter::near::PermutedTables;
use phishbloom_text::simhash::{SimHashParams, Weighting, MAX_SHINGLE};

use crate::bytes::{ByteReader, PutLe};
use crate::error::{Error, Result};

/// Length of the near-tables section's header.
pub(super) const TABLES_HEADER: usize = 64;

/// The SimHash tables of a list: the permuted tables and the check fingerprints in table 0's
/// order (empty without a check).
#[derive(Clone, Debug)]
pub(super) struct SimTables {
    pub(super) tables: PermutedTables,
    pub(super) checks: Vec<u64>,
}

/// Encodes the near-tables section.
pub(super) fn encode(params: &SimHashParams, sim: &SimTables, exact: &[u64]) -> Vec<u8> {
    let tables = &sim.tables;
    let sims = tables.len();
    let mut out = Vec::with_capacity(
        TABLES_HEADER + 8 * (tables.tables() * sims + sim.checks.len() + exact.len()),
    );
    out.put_u32(params.shingle);
    out.put_u32(params.min_tokens);
    out.push(params.weighting.code());
    out.push(tables.distance() as u8);
    out.push(tables.blocks() as u8);
    out.push(params.check_shingle as u8);
    out.put_u32(tables.tables() as u32);
    out.put_u64(sims as u64);
    out.put_u64(exact.len() as u64);
    out.put_u32(params.check_distance);
    out.resize(TABLES_HEADER, 0);
    for table in tables.table_values() {
        for &v in table {
            out.put_u64(v);
        }
    }
    for &v in sim.checks.iter().chain(exact) {
        out.put_u64(v);
    }
    out
}

/// Decodes the near-tables section: parameters, tables and checks, exact hashes.
pub(super) fn decode(path: &Path, tables: &[u8]) -> Result<(SimHashParams, SimTables, Vec<u64>)> {
    let header = TablesHeader::read(path, tables)?;
    let (stored, checks, exact) = header.values(tables);
    if exact.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::invalid(path, "near exact hashes", "not sorted"));
    }
    let permuted = PermutedTables::from_tables(header.distance, header.blocks, stored)
        .map_err(|e| Error::invalid(path, "near tables", e))?;
    Ok((
        header.params,
        SimTables {
            tables: permuted,
            checks,
        },
        exact,
    ))
}

/// The near tables section's header, checked against the section's length.
struct TablesHeader {
    params: SimHashParams,
    distance: u32,
    blocks: u32,
    table_count: usize,
    /// Fingerprints in each table.
    sims: u64,
    /// Check fingerprints (one per fingerprint, or none).
    check_count: u64,
}

impl TablesHeader {
    /// Reads and checks the header of the near tables section `tables`.
    fn read(path: &Path, tables: &[u8]) -> Result<Self> {
        let bad = |field: &'static str, value: String| Error::invalid(path, field, value);
        let mut reader = ByteReader::new(tables);
        let short = || bad("near tables", "header shorter than 64 bytes".into());
        let shingle = reader.u32().ok_or_else(short)?;
        let min_tokens = reader.u32().ok_or_else(short)?;
        let weighting = reader.u8().ok_or_else(short)?;
        let distance = u32::from(reader.u8().ok_or_else(short)?);
        let blocks = u32::from(reader.u8().ok_or_else(short)?);
        let check_shingle = u32::from(reader.u8().ok_or_else(short)?);
        let table_count = reader.u32().ok_or_else(short)? as usize;
        let sims = reader.u64().ok_or_else(short)?;
        let exact_count = reader.u64().ok_or_else(short)?;
        let check_distance = reader.u32().ok_or_else(short)?;
        if tables.len() < TABLES_HEADER || tables[36..TABLES_HEADER].iter().any(|&b| b != 0) {
            return Err(short());
        }
        if !(1..=MAX_SHINGLE).contains(&shingle) {
            return Err(bad("near shingle length", shingle.to_string()));
        }
        if check_shingle > MAX_SHINGLE {
            return Err(bad("near check shingle length", check_shingle.to_string()));
        }
        if check_distance > 64 || (check_shingle == 0 && check_distance != 0) {
            return Err(bad("near check distance", check_distance.to_string()));
        }
        let check_count = if check_shingle == 0 { 0 } else { sims };
        let weighting = Weighting::from_code(weighting)
            .ok_or_else(|| bad("near weighting", weighting.to_string()))?;
        let expected_tables = PermutedTables::check_shape(distance, blocks)?;
        if table_count != expected_tables {
            return Err(bad(
                "near table count",
                format!("{table_count}, expected {expected_tables}"),
            ));
        }
        let body = tables.len() - TABLES_HEADER;
        let values = (table_count as u64)
            .checked_mul(sims)
            .and_then(|v| v.checked_add(check_count))
            .and_then(|v| v.checked_add(exact_count))
            .and_then(|v| v.checked_mul(8));
        if values != Some(body as u64) {
            return Err(bad(
                "near tables length",
                format!(
                    "{body} bytes for {table_count} tables of {sims} and {exact_count} exact \
                     hashes"
                ),
            ));
        }
        Ok(TablesHeader {
            params: SimHashParams {
                shingle,
                check_shingle,
                check_distance,
                min_tokens,
                weighting,
            },
            distance,
            blocks,
            table_count,
            sims,
            check_count,
        })
    }

    /// The permuted tables, check fingerprints and exact hashes of `tables` (whose length
    /// [`TablesHeader::read`] checked).
    fn values(&self, tables: &[u8]) -> (Vec<Vec<u64>>, Vec<u64>, Vec<u64>) {
        let words = |bytes: &[u8]| -> Vec<u64> {
            bytes
                .chunks_exact(8)
                .map(|c| {
                    // `chunks_exact(8)` yields 8-byte slices.
                    u64::from_le_bytes(c.try_into().unwrap_or_default())
                })
                .collect()
        };
        let (sims, table_count) = (self.sims as usize, self.table_count);
        let mut stored = Vec::with_capacity(table_count);
        for t in 0..table_count {
            let start = TABLES_HEADER + 8 * t * sims;
            stored.push(words(&tables[start..start + 8 * sims]));
        }
        let checks_start = TABLES_HEADER + 8 * table_count * sims;
        let checks_end = checks_start + 8 * self.check_count as usize;
        let checks = words(&tables[checks_start..checks_end]);
        let exact = words(&tables[checks_end..]);
        (stored, checks, exact)
    }
}
