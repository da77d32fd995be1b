//! [`Blocklist`]: a list held in memory — metadata, engine, resolver — with its accessors and
//! the check path (one item, or a batch).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use phishbloom_filter::{AnyFilter, KeyHash};
use phishbloom_url::CanonicalUrl;

use crate::engine::cabf::CabfEngine;
use crate::engine::urls::UrlFilter;
use crate::engine::{Matcher, Scratch};
use crate::error::{Error, Result};
use crate::format::Directory;
use crate::hits::Hit;
use crate::keys::{fingerprint, KeyScheme};
use crate::keywords::KeywordEngine;
use crate::kind::Kind;
use crate::near::NearEngine;
use crate::prepare::{Preparer, Query};
use crate::printer::{write_decision, write_invalid, write_verdict, Output};
use crate::resolve::{Category, Decision, Resolver, Status, Verdict, Verification};
use crate::sections::Meta;
use crate::structure::Layers;

/// The structure that answers queries.
pub enum Engine {
    /// Whole keys (exact or URL-normalized) in the list's structure.
    Keys(Layers),
    /// URL entries in the list's structure, probed with every lookup expression.
    Urls(UrlFilter),
    /// URL entries in CaBF.
    Cabf(CabfEngine),
    /// Keywords and phrases, found inside text by `scan`.
    Keywords(KeywordEngine),
    /// Known documents by SimHash: near-copies found by `scan`.
    Near(NearEngine),
}

/// A blocklist: metadata, the engine, and what turns its hits into verdicts (verification
/// table, categories, exceptions).
pub struct Blocklist {
    pub(super) kind: Kind,
    pub(super) meta: Meta,
    pub(super) engine: Engine,
    pub(super) resolver: Resolver,
    pub(super) directory: Option<Directory>,
    /// The file it was read from (its name for a list built in memory), for messages.
    pub(super) origin: PathBuf,
}

impl Blocklist {
    /// The structure.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The host gate of a list of URL entries, if it has one ([`crate::engine::gate`]).
    pub fn url_gate(&self) -> Option<&crate::engine::gate::HostGate> {
        match &self.engine {
            Engine::Urls(urls) => urls.gate(),
            _ => None,
        }
    }

    /// The verification table, if the blocklist has one.
    pub fn verification(&self) -> Option<&Verification> {
        self.resolver.verification()
    }

    /// What turns hits into verdicts: categories, verification, exceptions.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        self.resolver.categories()
    }

    /// Answers only for entries of the named categories from now on; an unknown name is an
    /// error listing the list's categories. `path` names the file in that error.
    pub fn keep_categories(&mut self, names: &[String], path: &Path) -> Result<()> {
        let ids = self.resolver.category_ids(names, path)?;
        self.resolver.set_filter(ids);
        Ok(())
    }

    /// The file's header and section table, for a blocklist read from a file.
    pub fn directory(&self) -> Option<&Directory> {
        self.directory.as_ref()
    }

    /// The per-checked-item false-positive rate implied by the filter's per-probe target at
    /// the probes per item it was sized for.
    pub fn per_item_target(&self) -> Option<f64> {
        self.meta.target_fpp
    }

    /// The single Bloom filter of a classic, blocked or split blocklist that does not grow (`None`
    /// for the other kinds).
    pub fn filter(&self) -> Option<&AnyFilter> {
        match &self.engine {
            Engine::Keywords(engine) => Some(engine.filter()),
            Engine::Near(_) => None,
            _ => self.layers().and_then(Layers::single_bloom),
        }
    }

    /// The verdict for a canonical URL, for blocklists of URL entries (whole keys have no URL
    /// semantics: clean). Hits are confirmed when the list has verification; categories,
    /// exceptions and the most specific entry decide the rest (see [`crate::resolve`]).
    pub fn check_url(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Verdict {
        let matcher: &dyn Matcher = match &self.engine {
            Engine::Keys(_) | Engine::Keywords(_) | Engine::Near(_) => return Verdict::default(),
            Engine::Urls(urls) => {
                // Taken out of `scratch` while the walk borrows the rest, then put back.
                let mut key = std::mem::take(&mut scratch.key);
                let verdict = self
                    .resolver
                    .decide_in_order(url, &mut key, |accept| {
                        urls.first_spot(
                            url,
                            scratch,
                            |f| self.resolver.prefetch_confirmation(f),
                            accept,
                        )
                    })
                    .verdict(&self.resolver);
                scratch.key = key;
                return verdict;
            }
            Engine::Cabf(cabf) => cabf,
        };
        let mut candidates = std::mem::take(&mut scratch.found);
        candidates.clear();
        matcher.candidates(url, scratch, &mut candidates);
        let verdict = self
            .resolver
            .url_verdict(url, &mut candidates, &mut scratch.key);
        scratch.found = candidates;
        verdict
    }

    /// The entry that lists a canonical URL (not allowed by an exception), if any.
    pub fn find_url(&self, url: &CanonicalUrl, scratch: &mut Scratch) -> Option<Hit> {
        let verdict = self.check_url(url, scratch);
        if verdict.listed() {
            verdict.hit
        } else {
            None
        }
    }

    /// Verifies the parts opening leaves to be checked when first read — the blocks of a
    /// keyword index, which a scan reads only on hits — so that a file said to be verified is
    /// verified whole (`info`).
    pub fn verify_all(&self) -> Result<()> {
        if let Engine::Keywords(engine) = self.engine() {
            if let Some(index) = engine.index() {
                index.verify()?;
            }
        }
        Ok(())
    }

    /// Refuses a list that does not answer `check`: a keyword list finds its phrases inside
    /// text (`scan`); checked as whole items it would answer only for lines that are exactly a
    /// keyword, and clean for any text that contains one.
    pub fn require_checkable(&self) -> Result<()> {
        match self.meta().scheme {
            KeyScheme::Keywords => Err(Error::KeywordList {
                path: self.origin(),
            }),
            KeyScheme::Near => Err(Error::NearList {
                path: self.origin(),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses a list without a verification section, for a caller that wants every hit
    /// confirmed exactly.
    pub fn require_verification(&self) -> Result<()> {
        match self.verification() {
            Some(_) => Ok(()),
            None => Err(Error::NoVerification {
                path: self.origin(),
            }),
        }
    }

    /// Answers one item (a line without its terminator).
    pub fn check(&self, item: &[u8], scratch: &mut Scratch) -> Verdict {
        let mut out = Vec::with_capacity(1);
        self.check_batch(&[item], scratch, &mut out);
        out.pop().unwrap_or_default()
    }

    /// Answers many items, appending one verdict each to `out`, in order. Whole keys are
    /// probed as one prefetched batch; URLs are canonicalized (a line that is not a URL is never
    /// listed: it is answered `invalid` with the reason) and matched through their expressions.
    pub fn check_batch(&self, items: &[&[u8]], scratch: &mut Scratch, out: &mut Vec<Verdict>) {
        out.reserve(items.len());
        if let Engine::Keywords(engine) = &self.engine {
            out.extend(items.iter().map(|item| {
                let listed = engine.check_phrase(item);
                self.resolver.key_verdict(item, listed, 0)
            }));
            return;
        }
        if let Engine::Near(_) = &self.engine {
            // A document is not a line: `scan` asks a near-duplicate list ([`Blocklist::near`]).
            out.extend(items.iter().map(|_| Verdict::default()));
            return;
        }
        if let Engine::Keys(layers) = &self.engine {
            self.check_keys(layers, items, scratch, out);
            return;
        }
        // Taken out of `scratch` while it lends each URL, then put back: `check_url` needs the
        // rest of `scratch` at the same time.
        let mut preparer = std::mem::take(&mut scratch.preparer);
        let scheme = self.meta.scheme;
        let gated = match &self.engine {
            Engine::Urls(urls) if urls.gate().is_some() => Some(urls),
            _ => None,
        };
        out.extend(items.iter().map(|item| {
            let Some(query) = query_unless_ruled_out(gated, &mut preparer, scheme, item, scratch)
            else {
                return Verdict::default();
            };
            match query {
                Query::Url(url) => self.check_url(url, scratch),
                Query::Invalid(error) => Verdict::invalid(error),
                // A URL engine is asked only of lists of URL entries: nothing else is listed.
                Query::Blank | Query::Key(_) | Query::Phrase(_) => Verdict::default(),
            }
        }));
        scratch.preparer = preparer;
    }

    /// Answers many items as [`Blocklist::check_batch`] does and appends one verdict line
    /// each to `out`, as [`write_verdict`] writes them; returns `(lines, listed)`.
    ///
    /// The line path of `check`, the server's batches and the squid helper: for a list of URL
    /// entries, in TSV or JSON, nothing is allocated per item once `scratch` and `out` have grown — the
    /// URL is canonicalized into a reused buffer, its candidates are [`crate::resolve::Spot`]s
    /// of that buffer, and the verdict ([`crate::resolve::Decision`]) borrows from the URL and
    /// the list and is written at once. Other lists take the owned verdicts.
    pub fn write_checks<'i>(
        &self,
        items: impl IntoIterator<Item = &'i [u8]>,
        output: Output,
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> (u64, u64) {
        let (mut lines, mut listed) = (0u64, 0u64);
        let urls = match &self.engine {
            Engine::Urls(urls) => urls,
            _ => {
                // Lines as printed and asked: without a trailing `\r`.
                let items: Vec<&[u8]> = items
                    .into_iter()
                    .map(|l| phishbloom_text::line::content(l))
                    .collect();
                let mut verdicts = Vec::with_capacity(items.len());
                self.check_batch(&items, scratch, &mut verdicts);
                for (item, verdict) in items.iter().zip(&verdicts) {
                    write_verdict(item, verdict, output, out);
                    lines += 1;
                    listed += u64::from(verdict.listed());
                }
                return (lines, listed);
            }
        };
        // Taken out of `scratch` while it lends each URL, then put back.
        let mut preparer = std::mem::take(&mut scratch.preparer);
        let mut key = std::mem::take(&mut scratch.key);
        let scheme = self.meta.scheme;
        let gated = urls.gate().is_some().then_some(urls);
        for item in items {
            // The line as printed: without a trailing `\r`, as `check_batch`'s callers print it.
            let shown = phishbloom_text::line::content(item);
            lines += 1;
            let Some(query) = query_unless_ruled_out(gated, &mut preparer, scheme, item, scratch)
            else {
                write_decision(
                    shown,
                    &Decision::default(),
                    &self.resolver,
                    &mut scratch.order,
                    output,
                    out,
                );
                continue;
            };
            match query {
                Query::Url(url) => {
                    let decision = self.resolver.decide_in_order(url, &mut key, |accept| {
                        urls.first_spot(
                            url,
                            scratch,
                            |f| self.resolver.prefetch_confirmation(f),
                            accept,
                        )
                    });
                    listed += u64::from(decision.status == Status::Listed);
                    write_decision(
                        shown,
                        &decision,
                        &self.resolver,
                        &mut scratch.order,
                        output,
                        out,
                    );
                }
                Query::Invalid(error) => {
                    scratch.reason.clear();
                    // Writing into a String cannot fail.
                    let _ = write!(scratch.reason, "{error}");
                    write_invalid(shown, &scratch.reason, output, out);
                }
                Query::Blank | Query::Key(_) | Query::Phrase(_) => {
                    write_verdict(shown, &Verdict::default(), output, out);
                }
            }
        }
        scratch.preparer = preparer;
        scratch.key = key;
        (lines, listed)
    }

    /// Whole-key verdicts: normalize every item into one arena, then one batched query.
    fn check_keys(
        &self,
        layers: &Layers,
        items: &[&[u8]],
        scratch: &mut Scratch,
        out: &mut Vec<Verdict>,
    ) {
        let scheme = self.meta.scheme;
        scratch.key.clear();
        let mut ends = Vec::with_capacity(items.len());
        for item in items {
            Preparer::append_key(scheme, item, &mut scratch.key);
            ends.push(scratch.key.len());
        }
        let mut start = 0;
        let keys: Vec<&[u8]> = ends
            .iter()
            .map(|&end| {
                let key = &scratch.key[start..end];
                start = end;
                key
            })
            .collect();
        scratch.answers.clear();
        layers.contains_key_batch(&keys, &mut scratch.answers);
        out.extend(keys.iter().zip(&scratch.answers).map(|(key, &hit)| {
            // The fingerprint only matters for a hit; hashing is skipped for the rest.
            let print = if hit {
                fingerprint(KeyHash::of(key))
            } else {
                0
            };
            self.resolver.key_verdict(key, hit, print)
        }));
    }
}

/// An item of a list of URL entries, prepared — unless the list's host gate (`gated`: its URL
/// filter, when it has one) rules it out by its host as written, when that is its canonical
/// host ([`phishbloom_url::read_written_host`]): then `None`, clean whatever its path, and it
/// is not canonicalized at all. An item not ruled out is canonicalized from after that host.
/// The first step of both line paths ([`Blocklist::check_batch`], [`Blocklist::write_checks`]);
/// inlined into each (measured: a call here cost `check` about 40 instructions a line).
#[inline(always)]
fn query_unless_ruled_out<'p>(
    gated: Option<&UrlFilter>,
    preparer: &'p mut Preparer,
    scheme: KeyScheme,
    item: &'p [u8],
    scratch: &mut Scratch,
) -> Option<Query<'p>> {
    let shown = phishbloom_text::line::content(item);
    let written = gated.and_then(|_| phishbloom_url::read_written_host(shown));
    if let (Some(urls), Some(written)) = (gated, &written) {
        if urls.rules_out_host(written.host(), scratch) {
            return None;
        }
    }
    Some(match &written {
        Some(written) => preparer.query_written(written),
        None => preparer.query(scheme, item),
    })
}
