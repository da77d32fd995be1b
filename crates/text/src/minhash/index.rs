//! An index of known documents' sketches: the known document nearest a query, if any is near
//! enough, from a few bucket reads whatever the number of documents.
//!
//! Each of the sketch's posting keys has a [`Postings`] table. A query reads, per key, the
//! bucket its key chooses; a document there is a *candidate* when its value of that bin equals
//! the query's (the bucket also holds other keys' documents, and they differ there but for a
//! 2⁻ᵇ chance). Every candidate's packed bins are compared with the query's and the one with
//! the most agreeing bins wins if it has at least [`match_threshold`] of them. At most
//! [`SCANNED_PER_KEY`] candidates are compared per key, which is the bound the threshold's
//! false-match rate rests on.

use phishbloom_filter::postings::{
    bucket_bits_for, Postings, FRAGMENT_BITS, MIN_KNOWN_BITS, NUMBERS,
};

use super::{
    agreements, estimated_resemblance, match_threshold, MinHashParams, Sketch, SketchRecord,
    SCANNED_PER_KEY,
};
use crate::error::{Error, Result};

/// A known document near a query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NearMatch {
    /// The document's number (its position among the sketches the index was built from).
    pub document: u32,
    /// Bins of the two sketches that agree.
    pub agree: u32,
    /// The resemblance estimated from them.
    pub resemblance: f64,
}

/// Known documents' sketches with a posting table per key.
#[derive(Clone, Debug, PartialEq)]
pub struct SketchIndex {
    params: MinHashParams,
    threshold: u32,
    /// `params.words()` words per document, document by document.
    packed: Vec<u64>,
    /// One table per posting key.
    tables: Vec<Postings>,
}

impl SketchIndex {
    /// The index of `sketches` (document `i` is `sketches[i]`), all made under `params`.
    pub fn build(params: MinHashParams, sketches: &[Sketch]) -> Result<Self> {
        let records: Vec<SketchRecord> = sketches.iter().map(Sketch::record).collect();
        Self::from_records(params, &records)
    }

    /// The index of `records` (document `i` is `records[i]`), all made under `params`, at
    /// the bucket bits its size asks for when the records know enough of their keys (one read
    /// from a list knows its bucket and fragment bits), else at as many as they know; and with
    /// as many of the known bits after those as fragments (at most 8).
    pub fn from_records(params: MinHashParams, records: &[SketchRecord]) -> Result<Self> {
        if let Some(problem) = params.problem() {
            return Err(Error::MinHashParams { problem });
        }
        if records.len() >= NUMBERS as usize {
            return Err(Error::MinHashParams {
                problem: format!(
                    "{} documents: a list of sketches holds fewer than 2^24; split it",
                    records.len()
                ),
            });
        }
        let words = params.words();
        let mut packed = Vec::with_capacity(records.len() * words);
        let mut known = 32;
        for record in records {
            if record.packed.len() != words
                || record.prefixes.len() != params.postings as usize
                || !(MIN_KNOWN_BITS..=32).contains(&record.known)
            {
                return Err(Error::MinHashParams {
                    problem: format!(
                        "a sketch of {} words and {} keys ({} bits of each known) in an index \
                         of {words} words and {} keys (at least {MIN_KNOWN_BITS} bits known)",
                        record.packed.len(),
                        record.prefixes.len(),
                        record.known,
                        params.postings
                    ),
                });
            }
            packed.extend_from_slice(&record.packed);
            known = known.min(record.known);
        }
        let bits = bucket_bits_for(records.len() as u64).min(known);
        let fragment_bits = (known - bits).min(FRAGMENT_BITS);
        let tables = (0..params.postings as usize)
            .map(|t| {
                let pairs: Vec<(u32, u32)> = records
                    .iter()
                    .enumerate()
                    .map(|(n, r)| (r.prefixes[t], n as u32))
                    .collect();
                Postings::build(bits, fragment_bits, &pairs)
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Self::from_parts(params, packed, tables)
    }

    /// Every document's record, in number order: what rebuilding the index after an edit
    /// starts from.
    pub fn records(&self) -> Vec<SketchRecord> {
        let known = self
            .tables
            .first()
            .map_or(32, |t| t.bucket_bits() + t.fragment_bits());
        let mut records: Vec<SketchRecord> = (0..self.len() as u32)
            .map(|n| SketchRecord {
                packed: self.packed(n).to_vec(),
                prefixes: vec![0; self.tables.len()],
                known,
            })
            .collect();
        for (t, table) in self.tables.iter().enumerate() {
            for (n, prefix) in table.prefixes() {
                records[n as usize].prefixes[t] = prefix;
            }
        }
        records
    }

    /// The bucket bits of the posting tables.
    pub fn bucket_bits(&self) -> u32 {
        self.tables.first().map_or(0, Postings::bucket_bits)
    }

    /// The fragment bits of the posting tables.
    pub fn fragment_bits(&self) -> u32 {
        self.tables.first().map_or(0, Postings::fragment_bits)
    }

    /// The index from its stored parts, checked against each other.
    pub fn from_parts(
        params: MinHashParams,
        packed: Vec<u64>,
        tables: Vec<Postings>,
    ) -> Result<Self> {
        if let Some(problem) = params.problem() {
            return Err(Error::MinHashParams { problem });
        }
        let words = params.words();
        let documents = packed.len() / words;
        let shape = tables.first().map(|t| (t.bucket_bits(), t.fragment_bits()));
        // Each table numbers every document once: by construction, or checked when it was read
        // (`Postings::from_parts`).
        let consistent = packed.len().is_multiple_of(words)
            && tables.len() == params.postings as usize
            && tables
                .iter()
                .all(|t| Some((t.bucket_bits(), t.fragment_bits())) == shape)
            && tables.iter().all(|t| {
                t.entries().len() == documents
                    && t.entries()
                        .iter()
                        .all(|&e| ((e & (NUMBERS - 1)) as usize) < documents)
            });
        if !consistent {
            return Err(Error::MinHashParams {
                problem: format!(
                    "{} sketch words and {} posting tables do not describe the same documents",
                    packed.len(),
                    tables.len()
                ),
            });
        }
        Ok(SketchIndex {
            threshold: match_threshold(&params),
            params,
            packed,
            tables,
        })
    }

    /// The parameters of the sketches.
    pub fn params(&self) -> &MinHashParams {
        &self.params
    }

    /// The agreeing bins a match needs ([`match_threshold`]).
    pub fn threshold(&self) -> u32 {
        self.threshold
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.packed.len() / self.params.words()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// Document `number`'s packed bins.
    pub fn packed(&self, number: u32) -> &[u64] {
        let words = self.params.words();
        &self.packed[number as usize * words..(number as usize + 1) * words]
    }

    /// The posting tables, one per key.
    pub fn tables(&self) -> &[Postings] {
        &self.tables
    }

    /// Bytes held: the packed bins and the posting tables.
    pub fn bytes(&self) -> usize {
        8 * self.packed.len() + self.tables.iter().map(Postings::bytes).sum::<usize>()
    }

    /// The b-bit value of `bin` in packed bins.
    #[inline]
    fn bin(&self, packed: &[u64], bin: usize) -> u64 {
        let bits = self.params.bits as usize;
        let per_word = 64 / bits;
        (packed[bin / per_word] >> ((bin % per_word) * bits)) & ((1u64 << bits) - 1)
    }

    /// The known document with the most bins agreeing with `query`, if it has at least the
    /// threshold; ties go to the lower number.
    pub fn nearest(&self, query: &Sketch) -> Option<NearMatch> {
        self.within(query, self.threshold).into_iter().next()
    }

    /// The known documents with at least `min_agree` bins agreeing with `query`, most agreeing
    /// first, ties by number.
    pub fn within(&self, query: &Sketch, min_agree: u32) -> Vec<NearMatch> {
        let mut found = self.compared(query);
        found.retain(|m| m.agree >= min_agree);
        found
    }

    /// Every candidate compared with `query`, near enough or not, most agreeing first, ties by
    /// number (what the lab measures).
    pub fn compared(&self, query: &Sketch) -> Vec<NearMatch> {
        let mut out: Vec<NearMatch> = Vec::new();
        if query.packed.len() != self.params.words()
            || query.keys.len() != self.tables.len()
            || self.is_empty()
        {
            return out;
        }
        // A bucket's entries with the key's fragment hold other keys' documents too; of those,
        // one in 2^b passes the bin test, so reading 2^b × SCANNED_PER_KEY of them finds
        // SCANNED_PER_KEY candidates of the query's key while bounding the time a key shared
        // by a whole campaign takes.
        let readable = (SCANNED_PER_KEY as usize) << self.params.bits;
        for (key_bin, (table, &key)) in self.tables.iter().zip(&query.keys).enumerate() {
            let wanted = self.bin(&query.packed, key_bin);
            let mut candidates = 0;
            for number in table.matching((key >> 32) as u32).take(readable) {
                let packed = self.packed(number);
                if self.bin(packed, key_bin) != wanted {
                    continue;
                }
                candidates += 1;
                if candidates > SCANNED_PER_KEY {
                    break;
                }
                if out.iter().any(|m| m.document == number) {
                    continue;
                }
                let agree = agreements(packed, &query.packed, self.params.bits);
                out.push(NearMatch {
                    document: number,
                    agree,
                    resemblance: estimated_resemblance(agree, self.params.bins, self.params.bits),
                });
            }
        }
        out.sort_by(|a, b| b.agree.cmp(&a.agree).then(a.document.cmp(&b.document)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::MinHasher;
    use phishbloom_filter::rng::SplitMix64;

    fn features(rng: &mut SplitMix64, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn copies_find_their_document_and_strangers_find_none() {
        let params = MinHashParams::default();
        let mut rng = SplitMix64::new(21);
        let mut hasher = MinHasher::new();
        let known: Vec<Vec<u64>> = (0..2_000).map(|_| features(&mut rng, 300)).collect();
        let sketches: Vec<Sketch> = known
            .iter()
            .map(|f| hasher.of_features(f.clone(), &params).unwrap())
            .collect();
        let index = SketchIndex::build(params, &sketches).unwrap();
        assert_eq!(index.len(), 2_000);
        // The sketches and entries, and each table's bucket starts (at least 1,024 buckets).
        let starts = f64::from(params.postings) * 4.0 * 1_025.0;
        assert!(index.bytes() as f64 <= params.index_bytes() * 2_000.0 + starts);
        // A copy keeping 80 % of the features (resemblance 240 / 360 = 0.67).
        let mut found = 0;
        for (number, doc) in known.iter().enumerate().take(500) {
            let mut copy = doc[..240].to_vec();
            copy.extend(features(&mut rng, 60));
            let query = hasher.of_features(copy, &params).unwrap();
            if let Some(m) = index.nearest(&query) {
                assert_eq!(m.document, number as u32);
                assert!(m.resemblance > 0.4, "{m:?}");
                found += 1;
            }
        }
        // 1 − (1/3)^6 of the copies are found through a key, and all of those pass: at least
        // 490 of 500 is far inside the binomial spread of 0.9986 × 500.
        assert!(found >= 490, "{found} of 500 copies found");
        for _ in 0..2_000 {
            let query = hasher
                .of_features(features(&mut rng, 300), &params)
                .unwrap();
            assert_eq!(index.nearest(&query), None);
        }
    }

    #[test]
    fn an_index_grown_from_a_few_documents_finds_every_one_as_a_built_one_does() {
        let params = MinHashParams::default();
        let mut rng = SplitMix64::new(8);
        let mut hasher = MinHasher::new();
        let sketches: Vec<Sketch> = (0..60_000)
            .map(|_| hasher.of_features(features(&mut rng, 80), &params).unwrap())
            .collect();
        // Ten documents, then the rest added a thousand at a time from the records (an edit),
        // then every third of the first half dropped: each document is still found, through
        // buckets that grew from the fragments.
        let mut index = SketchIndex::build(params, &sketches[..10]).unwrap();
        let mut held: Vec<&Sketch> = sketches[..10].iter().collect();
        for chunk in sketches[10..].chunks(1_000).take(20) {
            let mut records = index.records();
            records.extend(chunk.iter().map(Sketch::record));
            index = SketchIndex::from_records(params, &records).unwrap();
            held.extend(chunk);
        }
        let records: Vec<SketchRecord> = index
            .records()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0 || *i >= 10_000)
            .map(|(_, r)| r)
            .collect();
        held = held
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0 || *i >= 10_000)
            .map(|(_, s)| s)
            .collect();
        let index = SketchIndex::from_records(params, &records).unwrap();
        assert_eq!(index.bucket_bits(), bucket_bits_for(records.len() as u64));
        for (n, sketch) in held.iter().enumerate() {
            assert_eq!(
                index.nearest(sketch).map(|m| m.document),
                Some(n as u32),
                "{n}"
            );
        }
        let again = SketchIndex::from_records(params, &index.records()).unwrap();
        assert!(
            again == index,
            "an index rebuilt from its own records is itself"
        );
    }

    #[test]
    fn inconsistent_parts_are_refused() {
        let params = MinHashParams::default();
        assert!(SketchIndex::from_parts(params, vec![0; 5], vec![]).is_err());
        let table = Postings::build(0, 0, &[(1, 3)]).unwrap();
        let tables = vec![table; params.postings as usize];
        assert!(SketchIndex::from_parts(params, vec![0; 4], tables).is_err());
    }
}
