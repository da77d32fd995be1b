//! A universe that never warns (`build --never FILE`): every member of a list of URLs or
//! domains — an organisation's own sites, a country's top sites — answers clean from the built
//! list, proved at build by checking each one. Where the list's structure answers for a
//! member's expression that is no entry (a Bloom filter's false positive, a compact prefix that
//! collides), that expression's 64-bit fingerprint goes into the list's never set, which
//! overrules the structure (CRLite's second stage: an exact set over the universe's false
//! positives, Larisch et al. 2017). A member that an entry lists is refused: it cannot answer
//! clean.
//!
//! The set never hides an entry: it holds no entry's fingerprint when built, `add` takes out
//! any it adds back, and a change whose additions are known only by prefix drops the set.

use std::collections::HashSet;

use crate::contents::EntrySet;
use crate::engine::{Matcher, Scratch};
use crate::error::{Error, Result};
use crate::hits::Fingerprints;
use crate::keys::{expression_hash, fingerprint};

use super::model::{Blocklist, Engine};

/// What a never set of `fingerprints` costs a list of `entries` entries, in bits per entry
/// (64 bits a fingerprint).
pub fn never_bits_per_entry(fingerprints: u64, entries: u64) -> f64 {
    fingerprints as f64 * 64.0 / entries.max(1) as f64
}

/// What [`Blocklist::never_warn`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NeverReport {
    /// Members checked.
    pub members: u64,
    /// Members that are no URL (they answer `invalid`, never `listed`).
    pub invalid: u64,
    /// Fingerprints the never set holds now.
    pub excluded: u64,
}

impl Blocklist {
    /// Makes every member of `members` (URLs or domains, as `check` reads them) answer clean,
    /// for a list of URL entries built from `set`: the fingerprints of the expressions its
    /// structure answers for without an entry behind them join the never set, and then every
    /// member is checked again. Refused when an entry lists a member ([`Error::NeverListed`],
    /// with the member's index) and for lists that are not of URL entries or are CaBF.
    pub fn never_warn(&mut self, set: &EntrySet, members: &[&[u8]]) -> Result<NeverReport> {
        let Engine::Urls(urls) = &self.engine else {
            return Err(Error::Unsupported {
                what: "a never-warn list",
                why: "it is for lists of URL entries of a kind other than CaBF",
            });
        };
        let entries: HashSet<u64> = set
            .entries
            .iter()
            .map(|e| fingerprint(expression_hash(e.key())))
            .collect();
        let mut scratch = Scratch::default();
        let mut found = Vec::new();
        let mut excluded: Vec<u64> = self.resolver.never().as_slice().to_vec();
        let mut report = NeverReport::default();
        for (index, member) in members.iter().enumerate() {
            report.members += 1;
            let Ok(url) = phishbloom_url::canonicalize(member) else {
                report.invalid += 1;
                continue;
            };
            found.clear();
            urls.candidates(&url, &mut scratch, &mut found);
            for candidate in &found {
                let v = candidate.fingerprint;
                if entries.contains(&v) {
                    return Err(Error::NeverListed {
                        member: index,
                        entry: candidate.expression().to_key_string(),
                    });
                }
                // A hit the list would not confirm (a filter's false positive a verification
                // table settles, a top label not among the list's own) needs no exclusion.
                let start = url.host().len() - candidate.expression().host.len();
                if self.resolver.confirms_top(&url, start, v) && self.resolver.confirms_hit(v) {
                    excluded.push(v);
                }
            }
        }
        excluded.sort_unstable();
        excluded.dedup();
        report.excluded = excluded.len() as u64;
        // Sorted and distinct.
        self.resolver
            .set_never(Fingerprints::from_sorted(excluded).unwrap_or_default());
        for (index, member) in members.iter().enumerate() {
            let verdict = self.check(member, &mut scratch);
            if verdict.listed() {
                return Err(Error::NeverListed {
                    member: index,
                    entry: verdict.hit.map(|hit| hit.expression).unwrap_or_default(),
                });
            }
        }
        Ok(report)
    }
}
