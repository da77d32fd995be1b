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

use phishbloom_filter::postings::{bucket_bits_for, Postings};

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
    /// the bucket bits its size asks for, or fewer when a record has fewer (one read from a
    /// smaller list: a bucket at more bits lies within one at fewer).
    pub fn from_records(params: MinHashParams, records: &[SketchRecord]) -> Result<Self> {
        if let Some(problem) = params.problem() {
            return Err(Error::MinHashParams { problem });
        }
        let words = params.words();
        let mut packed = Vec::with_capacity(records.len() * words);
        let mut bits = bucket_bits_for(records.len() as u64);
        for record in records {
            if record.packed.len() != words || record.buckets.len() != params.postings as usize {
                return Err(Error::MinHashParams {
                    problem: format!(
                        "a sketch of {} words and {} keys in an index of {words} and {}",
                        record.packed.len(),
                        record.buckets.len(),
                        params.postings
                    ),
                });
            }
            packed.extend_from_slice(&record.packed);
            bits = bits.min(record.bucket_bits);
        }
        let tables = (0..params.postings as usize)
            .map(|t| {
                Postings::from_entries(
                    bits,
                    records
                        .iter()
                        .enumerate()
                        .map(|(n, r)| (r.buckets[t] >> (r.bucket_bits - bits), n as u32))
                        .collect(),
                )
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Self::from_parts(params, packed, tables)
    }

    /// Every document's record, in number order: what rebuilding the index after an edit
    /// starts from.
    pub fn records(&self) -> Vec<SketchRecord> {
        let bits = self.bucket_bits();
        let mut records: Vec<SketchRecord> = (0..self.len() as u32)
            .map(|n| SketchRecord {
                packed: self.packed(n).to_vec(),
                buckets: vec![0; self.tables.len()],
                bucket_bits: bits,
            })
            .collect();
        for (t, table) in self.tables.iter().enumerate() {
            for (bucket, n) in table.entries() {
                records[n as usize].buckets[t] = bucket;
            }
        }
        records
    }

    /// The bucket bits of the posting tables.
    pub fn bucket_bits(&self) -> u32 {
        self.tables.first().map_or(0, Postings::bucket_bits)
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
        let bits = tables.first().map_or(0, Postings::bucket_bits);
        let consistent = packed.len().is_multiple_of(words)
            && tables.len() == params.postings as usize
            && tables.iter().all(|t| t.bucket_bits() == bits)
            && tables.iter().all(|t| {
                t.numbers().len() == documents
                    && t.numbers().iter().all(|&n| (n as usize) < documents)
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
        // A bucket holds other keys' documents too; of those, one in 2^b passes the bin test,
        // so reading 2^b × SCANNED_PER_KEY of them finds SCANNED_PER_KEY candidates of the
        // query's key while bounding the time a key shared by a whole campaign takes.
        let readable = (SCANNED_PER_KEY as usize) << self.params.bits;
        for (key_bin, (table, &key)) in self.tables.iter().zip(&query.keys).enumerate() {
            let wanted = self.bin(&query.packed, key_bin);
            let mut candidates = 0;
            for &number in table.bucket(key).iter().take(readable) {
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
        assert!(index.bytes() as f64 <= params.index_bytes() * 2_000.0 + 64.0);
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
    fn an_index_rebuilt_from_its_records_and_new_sketches_finds_them_all() {
        let params = MinHashParams::default();
        let mut rng = SplitMix64::new(8);
        let mut hasher = MinHasher::new();
        let sketches: Vec<Sketch> = (0..600)
            .map(|_| {
                hasher
                    .of_features(features(&mut rng, 200), &params)
                    .unwrap()
            })
            .collect();
        let small = SketchIndex::build(params, &sketches[..100]).unwrap();
        let large = SketchIndex::build(params, &sketches[100..]).unwrap();
        assert!(small.bucket_bits() < large.bucket_bits());
        // The large list's records, every third dropped, then the small list's: the bucket
        // bits fall to the small list's and every document is still found.
        let mut records: Vec<SketchRecord> = large
            .records()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, r)| r)
            .collect();
        let mut expected: Vec<&Sketch> = sketches[100..]
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, s)| s)
            .collect();
        records.extend(small.records());
        expected.extend(&sketches[..100]);
        let edited = SketchIndex::from_records(params, &records).unwrap();
        assert_eq!(edited.bucket_bits(), small.bucket_bits());
        for (n, sketch) in expected.iter().enumerate() {
            assert_eq!(edited.nearest(sketch).unwrap().document, n as u32);
        }
        let again = SketchIndex::from_records(params, &edited.records()).unwrap();
        assert!(
            again == edited,
            "an index rebuilt from its own records is itself"
        );
    }

    #[test]
    fn inconsistent_parts_are_refused() {
        let params = MinHashParams::default();
        assert!(SketchIndex::from_parts(params, vec![0; 5], vec![]).is_err());
        let table = Postings::build(&[(1, 3)]).unwrap();
        let tables = vec![table; params.postings as usize];
        assert!(SketchIndex::from_parts(params, vec![0; 4], tables).is_err());
    }
}
