//! A version's metadata hash (`NAME:vV:meta`): what a reader needs to probe the chunks (m, k,
//! chunking, key scheme), what `info` shows (the list's metadata as the file had it) and the
//! checksum of every chunk.
//!
//! | field | value |
//! |---|---|
//! | `format` | [`FORMAT`] |
//! | `kind`, `hash` | `blocked` or `compact`, and `xxh3` (the layouts and hash pushed) |
//! | `name`, `version` | the list name and this Redis version (the `vV` of the keys) |
//! | `list-version`, `created` | the file's list version and creation time |
//! | `pushed` | when the push wrote this version (Unix seconds) |
//! | `scheme` | `exact`, `exact-folded`, `url` or `url-expressions` |
//! | `probes-per-item`, `entries`, `fingerprint`, `target-fpp`, `exact-count` | the file's metadata (`target-fpp` absent when unknown); `fingerprint` is the set fingerprint, 32 hex digits; `exact-count` is `true`, or `false` when `entries` and `fingerprint` are approximate |
//! | `m`, `k`, `items`, `sized-for`, `probe-fpp` | the filter's parameters (`blocked` only) |
//! | `bytes`, `chunk-bytes`, `chunks` | the bit array's length and its cut into chunks (`blocked` only) |
//! | `sum:I` | chunk I's [`crate::layout::BitSum`], decimal; `add` increases it (`blocked` only) |
//! | `compact-bytes`, `compact-chunk-bytes`, `compact-chunks`, `compact-sum:J` | a `compact` version's table (the file's compact section), chunked as the sections below |
//! | `verify-count`, `verify-chunk-bytes`, `verify-chunks`, `verify-sum:J` | the verification table's fingerprints, chunking and xxh3-64 per chunk (hex); absent without a table |
//! | `S-bytes`, `S-chunk-bytes`, `S-chunks`, `S-sum:J` | for S = `categories` (always), `category-sets` (with a verification table of several categories, or a compact table), `exceptions` (when the list has any) and `tops` (when it has domain entries of a single label): the section's length, chunking and xxh3-64 per chunk (hex) |
//! | `file-checksum` | the pushed file's checksum (xxh3-64 of its section table), hex |

use std::collections::HashMap;

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::sections::{Meta, SetFingerprint};

use crate::error::{Error, Result};
use crate::layout::{Chunking, Section, BLOCK_BYTES, MAX_CHUNK_BYTES};

/// The value of the `format` field this version writes and reads. Version 2 added the
/// categories, category sets and exceptions: a reader of version 1 would answer without the
/// exceptions (blocking what the list allows), so it refuses version 2, and this one refuses
/// version 1 (push the list again).
pub const FORMAT: &str = "phishbloom-redis 2";

/// A section stored as chunks ([`Section`]): its bytes cut into chunks and each chunk's xxh3-64.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Stored {
    /// Its bytes cut into chunks.
    pub chunking: Chunking,
    /// xxh3-64 of each chunk.
    pub sums: Vec<u64>,
}

/// The verification table's part of the metadata.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VerifyMeta {
    /// Fingerprints in the table.
    pub count: u64,
    /// Its bytes (8 per fingerprint) in chunks.
    #[serde(flatten)]
    pub stored: Stored,
}

/// One version of a list in Redis, as its metadata hash describes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RemoteMeta {
    /// The Redis version (the `vV` of the keys).
    pub version: u64,
    /// The list's metadata as the pushed file had it (its `version` is the file's list version).
    pub list: Meta,
    /// When the version was pushed (Unix seconds).
    pub pushed: u64,
    /// m: bits of the filter.
    pub num_bits: u64,
    /// k: bits per key, all in one 512-bit block.
    pub num_hashes: u32,
    /// Keys the file's filter had inserted.
    pub items: u64,
    /// The item count the filter was sized for (0 when unknown).
    pub sized_for: u64,
    /// The per-probe rate the filter was sized for.
    pub probe_fpp: Option<f64>,
    /// The bit array's chunks.
    pub chunking: Chunking,
    /// Each chunk's checksum, as pushed plus what `add` added.
    pub sums: Vec<u64>,
    /// The verification table, if the list has one.
    pub verify: Option<VerifyMeta>,
    /// A compact version's table (it then has no bit array: `num_bits` 0, no chunks).
    pub compact: Option<Stored>,
    /// The categories section.
    pub categories: Stored,
    /// The category sets section, for a table of a list of several categories.
    pub category_sets: Option<Stored>,
    /// The exceptions section, if the list has exceptions.
    pub exceptions: Option<Stored>,
    /// The top-labels section, if the list has domain entries of a single label.
    pub tops: Option<Stored>,
    /// The pushed file's checksum, hex.
    pub file_checksum: Option<String>,
}

impl RemoteMeta {
    /// The stored sections this version has, in [`Section::ALL`] order.
    pub fn sections(&self) -> Vec<(Section, &Stored)> {
        Section::ALL
            .into_iter()
            .filter_map(|section| self.section(section).map(|stored| (section, stored)))
            .collect()
    }

    /// One stored section, if this version has it.
    pub fn section(&self, section: Section) -> Option<&Stored> {
        match section {
            Section::Verify => self.verify.as_ref().map(|v| &v.stored),
            Section::Compact => self.compact.as_ref(),
            Section::Categories => Some(&self.categories),
            Section::CategorySets => self.category_sets.as_ref(),
            Section::Exceptions => self.exceptions.as_ref(),
            Section::Tops => self.tops.as_ref(),
        }
    }

    /// Whether this version is a compact list's (a table read whole, no bit array).
    pub fn is_compact(&self) -> bool {
        self.compact.is_some()
    }

    /// The hash fields, in a fixed order.
    pub fn to_fields(&self) -> Vec<(String, String)> {
        let kind = if self.is_compact() {
            "compact"
        } else {
            "blocked"
        };
        let mut fields: Vec<(String, String)> = vec![
            ("format".into(), FORMAT.into()),
            ("kind".into(), kind.into()),
            ("hash".into(), "xxh3".into()),
            ("name".into(), self.list.name.clone()),
            ("version".into(), self.version.to_string()),
            ("list-version".into(), self.list.version.to_string()),
            ("created".into(), self.list.created.to_string()),
            ("pushed".into(), self.pushed.to_string()),
            ("scheme".into(), self.list.scheme.name().into()),
            (
                "probes-per-item".into(),
                self.list.probes_per_item.to_string(),
            ),
            ("entries".into(), self.list.entries.to_string()),
            ("fingerprint".into(), self.list.fingerprint.to_string()),
            ("exact-count".into(), self.list.exact_count.to_string()),
        ];
        if !self.is_compact() {
            fields.extend([
                ("m".into(), self.num_bits.to_string()),
                ("k".into(), self.num_hashes.to_string()),
                ("items".into(), self.items.to_string()),
                ("sized-for".into(), self.sized_for.to_string()),
                ("bytes".into(), self.chunking.bytes.to_string()),
                ("chunk-bytes".into(), self.chunking.chunk_bytes.to_string()),
                ("chunks".into(), self.chunking.chunks().to_string()),
            ]);
        }
        if let Some(p) = self.list.target_fpp {
            fields.push(("target-fpp".into(), format!("{p:e}")));
        }
        if let Some(p) = self.probe_fpp {
            fields.push(("probe-fpp".into(), format!("{p:e}")));
        }
        if let Some(checksum) = &self.file_checksum {
            fields.push(("file-checksum".into(), checksum.clone()));
        }
        if !self.is_compact() {
            for (i, sum) in self.sums.iter().enumerate() {
                fields.push((format!("sum:{i}"), sum.to_string()));
            }
        }
        for (section, stored) in self.sections() {
            let prefix = section.name();
            match (section, &self.verify) {
                (Section::Verify, Some(verify)) => {
                    fields.push((format!("{prefix}-count"), verify.count.to_string()))
                }
                _ => fields.push((format!("{prefix}-bytes"), stored.chunking.bytes.to_string())),
            }
            fields.push((
                format!("{prefix}-chunk-bytes"),
                stored.chunking.chunk_bytes.to_string(),
            ));
            fields.push((
                format!("{prefix}-chunks"),
                stored.chunking.chunks().to_string(),
            ));
            for (j, sum) in stored.sums.iter().enumerate() {
                fields.push((format!("{prefix}-sum:{j}"), format!("{sum:016x}")));
            }
        }
        fields
    }

    /// Reads the metadata from its hash fields, checking every value; `url` and `key` label
    /// errors.
    pub fn from_fields(url: &str, key: &str, fields: &HashMap<String, String>) -> Result<Self> {
        let reader = Fields { url, key, fields };
        let compact = reader.check_format()?;
        let list = reader.list_meta()?;
        let filter = if compact {
            FilterFields::none(&list)
        } else {
            reader.filter()?
        };
        let verify = reader.verify()?;
        let compact = match compact {
            false => None,
            true => Some(
                reader
                    .optional_section(Section::Compact)?
                    .ok_or_else(|| reader.bad("compact-bytes", "missing".into()))?,
            ),
        };
        let categories = reader
            .optional_section(Section::Categories)?
            .ok_or_else(|| reader.bad("categories-bytes", "missing".into()))?;
        let category_sets = reader.optional_section(Section::CategorySets)?;
        if category_sets.is_some() && verify.is_none() && compact.is_none() {
            return Err(reader.bad(
                "category-sets-bytes",
                "present without a verification table (`verify-count`) or a compact table".into(),
            ));
        }
        let exceptions = reader.optional_section(Section::Exceptions)?;
        let tops = reader.optional_section(Section::Tops)?;
        Ok(RemoteMeta {
            version: reader.number("version")?,
            list,
            pushed: reader.number("pushed")?,
            num_bits: filter.num_bits,
            num_hashes: filter.num_hashes,
            items: filter.items,
            sized_for: filter.sized_for,
            probe_fpp: filter.probe_fpp,
            chunking: filter.chunking,
            sums: filter.sums,
            verify,
            compact,
            categories,
            category_sets,
            exceptions,
            tops,
            file_checksum: fields.get("file-checksum").cloned(),
        })
    }
}

/// What a version's metadata says of its bit array (nothing, for a compact version).
struct FilterFields {
    num_bits: u64,
    num_hashes: u32,
    items: u64,
    sized_for: u64,
    probe_fpp: Option<f64>,
    chunking: Chunking,
    sums: Vec<u64>,
}

impl FilterFields {
    /// A compact version's: no bits, no chunks; its items are the list's entries.
    fn none(list: &Meta) -> Self {
        FilterFields {
            num_bits: 0,
            num_hashes: 0,
            items: list.entries,
            sized_for: 0,
            probe_fpp: None,
            chunking: Chunking {
                bytes: 0,
                chunk_bytes: MAX_CHUNK_BYTES,
            },
            sums: Vec::new(),
        }
    }
}

impl Fields<'_> {
    /// Refuses metadata of another format, kind or hash; answers whether the kind is
    /// `compact` (else `blocked`).
    fn check_format(&self) -> Result<bool> {
        let format = self.text("format")?;
        if format != FORMAT {
            return Err(self.bad(
                "format",
                format!("`{format}`, not `{FORMAT}` (written by another phishbloom version?)"),
            ));
        }
        let hash = self.text("hash")?;
        if hash != "xxh3" {
            return Err(self.bad("hash", format!("`{hash}`, not `xxh3`")));
        }
        match self.text("kind")? {
            "blocked" => Ok(false),
            "compact" => Ok(true),
            other => Err(self.bad("kind", format!("`{other}`, not `blocked` or `compact`"))),
        }
    }

    /// The bit array's parameters, chunks and chunk sums.
    fn filter(&self) -> Result<FilterFields> {
        let (num_bits, num_hashes, bytes) = self.bits()?;
        let chunking = self.chunking("chunk-bytes", "chunks", bytes)?;
        let sums = (0..chunking.chunks())
            .map(|i| self.number(&format!("sum:{i}")))
            .collect::<Result<Vec<u64>>>()?;
        Ok(FilterFields {
            num_bits,
            num_hashes,
            items: self.number("items")?,
            sized_for: self.number("sized-for")?,
            probe_fpp: self.optional_rate("probe-fpp")?,
            chunking,
            sums,
        })
    }

    /// The list's own metadata, as its file holds it.
    fn list_meta(&self) -> Result<Meta> {
        let scheme_name = self.text("scheme")?;
        let scheme = [
            KeyScheme::Exact,
            KeyScheme::Folded,
            KeyScheme::Url,
            KeyScheme::Expressions,
        ]
        .into_iter()
        .find(|s| s.name() == scheme_name)
        .ok_or_else(|| self.bad("scheme", format!("`{scheme_name}`")))?;
        let fingerprint_text = self.text("fingerprint")?;
        let fingerprint = u128::from_str_radix(fingerprint_text, 16)
            .ok()
            .filter(|_| fingerprint_text.len() == 32)
            .ok_or_else(|| self.bad("fingerprint", "not 32 hex digits".into()))?;
        Ok(Meta {
            name: self.text("name")?.to_string(),
            version: self.number("list-version")?,
            created: self.number("created")?,
            scheme,
            probes_per_item: self.number("probes-per-item")?,
            entries: self.number("entries")?,
            fingerprint: SetFingerprint(fingerprint),
            target_fpp: self.optional_rate("target-fpp")?,
            exact_count: match self.text("exact-count")? {
                "true" => true,
                "false" => false,
                other => {
                    return Err(self.bad("exact-count", format!("`{other}`, not true or false")))
                }
            },
        })
    }

    /// The bit array's bits, hash count and bytes: whole 512-bit blocks, 1 to 512 hashes.
    fn bits(&self) -> Result<(u64, u32, u64)> {
        let num_bits: u64 = self.number("m")?;
        let num_hashes: u32 = self.number("k")?;
        let bytes: u64 = self.number("bytes")?;
        if num_bits == 0 || !num_bits.is_multiple_of(BLOCK_BYTES * 8) || bytes != num_bits / 8 {
            return Err(self.bad(
                "m",
                format!("{num_bits} bits for {bytes} bytes: not whole 512-bit blocks"),
            ));
        }
        if !(1..=512).contains(&num_hashes) {
            return Err(self.bad("k", format!("{num_hashes}")));
        }
        Ok((num_bits, num_hashes, bytes))
    }

    /// The verification table's count and chunks, if the version has one.
    fn verify(&self) -> Result<Option<VerifyMeta>> {
        if !self.fields.contains_key("verify-count") {
            return Ok(None);
        }
        let count: u64 = self.number("verify-count")?;
        let bytes = count
            .checked_mul(8)
            .ok_or_else(|| self.bad("verify-count", format!("{count}: too large")))?;
        Ok(Some(VerifyMeta {
            count,
            stored: self.stored(Section::Verify, bytes)?,
        }))
    }

    /// The chunks of `section`, if the version has its `SECTION-bytes` field.
    fn optional_section(&self, section: Section) -> Result<Option<Stored>> {
        let field = format!("{}-bytes", section.name());
        match self.fields.get(&field) {
            None => Ok(None),
            Some(_) => self.stored(section, self.number(&field)?).map(Some),
        }
    }
}

/// Typed access to the fields of one metadata hash, with errors that name the field.
struct Fields<'a> {
    url: &'a str,
    key: &'a str,
    fields: &'a HashMap<String, String>,
}

impl Fields<'_> {
    fn bad(&self, field: &str, problem: String) -> Error {
        Error::BadMeta {
            url: self.url.to_string(),
            key: self.key.to_string(),
            field: field.to_string(),
            problem,
        }
    }

    fn text(&self, field: &str) -> Result<&str> {
        self.fields
            .get(field)
            .map(String::as_str)
            .ok_or_else(|| self.bad(field, "missing".into()))
    }

    fn number<T: std::str::FromStr>(&self, field: &str) -> Result<T> {
        let text = self.text(field)?;
        text.parse()
            .map_err(|_| self.bad(field, format!("`{text}`, not a whole number in range")))
    }

    fn hex(&self, field: &str) -> Result<u64> {
        let text = self.text(field)?;
        u64::from_str_radix(text, 16).map_err(|_| self.bad(field, format!("`{text}`, not hex")))
    }

    fn optional_rate(&self, field: &str) -> Result<Option<f64>> {
        match self.fields.get(field) {
            None => Ok(None),
            Some(text) => match text.parse::<f64>() {
                Ok(p) if p > 0.0 && p < 1.0 => Ok(Some(p)),
                _ => Err(self.bad(field, format!("`{text}`, not a rate between 0 and 1"))),
            },
        }
    }

    /// The chunking and chunk checksums of a stored section of `bytes` bytes.
    fn stored(&self, section: Section, bytes: u64) -> Result<Stored> {
        let prefix = section.name();
        let chunking = self.chunking(
            &format!("{prefix}-chunk-bytes"),
            &format!("{prefix}-chunks"),
            bytes,
        )?;
        let sums = (0..chunking.chunks())
            .map(|j| self.hex(&format!("{prefix}-sum:{j}")))
            .collect::<Result<Vec<u64>>>()?;
        Ok(Stored { chunking, sums })
    }

    fn chunking(&self, bytes_field: &str, count_field: &str, bytes: u64) -> Result<Chunking> {
        let chunk_bytes: u64 = self.number(bytes_field)?;
        if chunk_bytes == 0
            || !chunk_bytes.is_multiple_of(BLOCK_BYTES)
            || chunk_bytes > MAX_CHUNK_BYTES
        {
            return Err(self.bad(
                bytes_field,
                format!("{chunk_bytes}: not a multiple of 64 bytes up to 1 MiB"),
            ));
        }
        let chunking = Chunking { bytes, chunk_bytes };
        let chunks: u64 = self.number(count_field)?;
        if chunks != chunking.chunks() {
            return Err(self.bad(
                count_field,
                format!(
                    "{chunks}, but {bytes} bytes in chunks of {chunk_bytes} make {}",
                    chunking.chunks()
                ),
            ));
        }
        Ok(chunking)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RemoteMeta {
        RemoteMeta {
            version: 3,
            list: Meta {
                name: "phish".into(),
                version: 2,
                created: 1_700_000_000,
                scheme: KeyScheme::Expressions,
                probes_per_item: 20,
                entries: 10,
                fingerprint: SetFingerprint(0x1234),
                target_fpp: Some(0.01),
                exact_count: true,
            },
            pushed: 1_700_000_100,
            num_bits: 1024,
            num_hashes: 7,
            items: 10,
            sized_for: 10,
            probe_fpp: Some(5e-4),
            chunking: Chunking {
                bytes: 128,
                chunk_bytes: 64,
            },
            sums: vec![1, 2],
            verify: Some(VerifyMeta {
                count: 10,
                stored: Stored {
                    chunking: Chunking {
                        bytes: 80,
                        chunk_bytes: 64,
                    },
                    sums: vec![u64::MAX, 5],
                },
            }),
            compact: None,
            categories: Stored {
                chunking: Chunking {
                    bytes: 30,
                    chunk_bytes: MAX_CHUNK_BYTES,
                },
                sums: vec![7],
            },
            category_sets: Some(Stored {
                chunking: Chunking {
                    bytes: 70,
                    chunk_bytes: 64,
                },
                sums: vec![8, 9],
            }),
            exceptions: Some(Stored {
                chunking: Chunking {
                    bytes: 12,
                    chunk_bytes: MAX_CHUNK_BYTES,
                },
                sums: vec![10],
            }),
            tops: Some(Stored {
                chunking: Chunking {
                    bytes: 16,
                    chunk_bytes: MAX_CHUNK_BYTES,
                },
                sums: vec![11],
            }),
            file_checksum: Some("00ff".into()),
        }
    }

    fn decode(fields: Vec<(String, String)>) -> Result<RemoteMeta> {
        RemoteMeta::from_fields("redis://x", "phish:v3:meta", &fields.into_iter().collect())
    }

    #[test]
    fn fields_round_trip() {
        let meta = sample();
        assert_eq!(decode(meta.to_fields()).unwrap(), meta);
        let mut plain = sample();
        plain.verify = None;
        plain.category_sets = None;
        plain.exceptions = None;
        plain.list.target_fpp = None;
        plain.list.exact_count = false;
        assert_eq!(decode(plain.to_fields()).unwrap(), plain);
        // A compact version: no bit array, its table and category sets.
        let mut compact = sample();
        compact.verify = None;
        compact.compact = Some(Stored {
            chunking: Chunking {
                bytes: 100,
                chunk_bytes: 64,
            },
            sums: vec![3, 4],
        });
        let fields = compact.to_fields();
        assert!(fields
            .iter()
            .all(|(name, _)| name != "m" && !name.starts_with("sum:")));
        let back = decode(fields).unwrap();
        assert_eq!(back.compact, compact.compact);
        assert_eq!(
            (back.num_bits, back.chunking.chunks(), back.items),
            (0, 0, 10)
        );
        // Category sets belong to a verification or compact table.
        let orphan: Vec<_> = sample()
            .to_fields()
            .into_iter()
            .filter(|(name, _)| !name.starts_with("verify-"))
            .collect();
        let error = decode(orphan).unwrap_err();
        assert!(
            matches!(&error, Error::BadMeta { field, .. } if field == "category-sets-bytes"),
            "{error}"
        );
    }

    #[test]
    fn damaged_fields_are_named() {
        for (field, value) in [
            ("m", "1000"),
            ("chunks", "3"),
            ("k", "0"),
            ("scheme", "morse"),
            ("fingerprint", "12"),
            ("format", "phishbloom-redis 9"),
            ("chunk-bytes", "100"),
            ("categories-chunks", "2"),
            ("exact-count", "maybe"),
            ("exceptions-sum:0", "xyz"),
        ] {
            let mut fields = sample().to_fields();
            for (name, old) in fields.iter_mut() {
                if name == field {
                    *old = value.to_string();
                }
            }
            let error = decode(fields).unwrap_err();
            assert!(
                matches!(&error, Error::BadMeta { field: f, .. } if f == field),
                "{field}: {error}"
            );
        }
        let fields: Vec<_> = sample()
            .to_fields()
            .into_iter()
            .filter(|(name, _)| name != "sum:1")
            .collect();
        assert!(decode(fields)
            .unwrap_err()
            .to_string()
            .contains("`sum:1` is missing"));
        // A version written before categories existed (format 1) is refused, not misread.
        let old: Vec<_> = sample()
            .to_fields()
            .into_iter()
            .map(|(name, value)| match name.as_str() {
                "format" => (name, "phishbloom-redis 1".to_string()),
                _ => (name, value),
            })
            .collect();
        assert!(decode(old).unwrap_err().to_string().contains("format"));
    }
}
