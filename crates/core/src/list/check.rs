//! Asking a [`Blocklist`] about items: one item, a batch of owned [`Verdict`]s, or verdict lines
//! written straight into a buffer — the line path of `check`, the server's batches, the squid
//! helper and the browser. For a list of URL entries both batch forms walk the items through one
//! function ([`Blocklist::each_url_answer`]); they differ only in what they do with each
//! answer (keep it, or write it).

use std::fmt::Write as _;

use phishbloom_filter::KeyHash;
use phishbloom_url::CanonicalUrl;

use crate::engine::urls::UrlFilter;
use crate::engine::{Matcher, Scratch};
use crate::hits::Hit;
use crate::keys::{fingerprint, KeyScheme};
use crate::prepare::{Preparer, Query};
use crate::printer::{write_decision, write_invalid, write_verdict, Output};
use crate::resolve::{Decision, Status, Verdict};
use crate::structure::Layers;

use super::model::{Blocklist, Engine};

/// Counts of answered lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckStats {
    /// Lines answered.
    pub lines: u64,
    /// Lines answered `listed`.
    pub listed: u64,
}

impl std::ops::AddAssign for CheckStats {
    fn add_assign(&mut self, other: Self) {
        self.lines += other.lines;
        self.listed += other.listed;
    }
}

/// One URL item's answer on the line path, borrowed from its canonical URL and the list.
enum UrlAnswer<'u, 'r> {
    /// Blank, ruled out by the host gate, or not a URL query: clean.
    Clean,
    /// Not a URL: the reason.
    Invalid(phishbloom_url::Error),
    /// Matched against the list's entries.
    Decided(Decision<'u, 'r>),
}

impl Blocklist {
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
                    .decide(urls, url, &mut key, scratch)
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

    /// Answers one item (a line without its terminator).
    pub fn check(&self, item: &[u8], scratch: &mut Scratch) -> Verdict {
        if let Engine::Urls(urls) = &self.engine {
            // The one answer, without a vector to hold it (a DNS query, a single GET).
            let mut verdict = Verdict::default();
            self.each_url_answer(urls, [item], scratch, |_, answer, _| {
                verdict = self.owned_verdict(answer);
            });
            return verdict;
        }
        let mut out = Vec::with_capacity(1);
        self.check_batch(&[item], scratch, &mut out);
        out.pop().unwrap_or_default()
    }

    /// The owned verdict of a URL's answer.
    fn owned_verdict(&self, answer: UrlAnswer<'_, '_>) -> Verdict {
        match answer {
            UrlAnswer::Clean => Verdict::default(),
            UrlAnswer::Invalid(error) => Verdict::invalid(error),
            UrlAnswer::Decided(decision) => decision.verdict(&self.resolver),
        }
    }

    /// Answers many items, appending one verdict each to `out`, in order. Whole keys are
    /// probed as one prefetched batch; URLs are canonicalized (a line that is not a URL is never
    /// listed: it is answered `invalid` with the reason) and matched through their expressions.
    pub fn check_batch(&self, items: &[&[u8]], scratch: &mut Scratch, out: &mut Vec<Verdict>) {
        out.reserve(items.len());
        match &self.engine {
            Engine::Keywords(engine) => out.extend(items.iter().map(|item| {
                let listed = engine.check_phrase(item);
                self.resolver.key_verdict(item, listed, 0)
            })),
            // A document is not a line: `scan` asks a near-duplicate list ([`Blocklist::near`]).
            Engine::Near(_) => out.extend(items.iter().map(|_| Verdict::default())),
            Engine::Keys(layers) => self.check_keys(layers, items, scratch, out),
            Engine::Urls(urls) => {
                self.each_url_answer(urls, items.iter().copied(), scratch, |_, answer, _| {
                    out.push(self.owned_verdict(answer));
                });
            }
            Engine::Cabf(_) => {
                // Taken out of `scratch` while it lends each URL, then put back: `check_url`
                // needs the rest of `scratch` at the same time.
                let mut preparer = std::mem::take(&mut scratch.preparer);
                let scheme = self.meta.scheme;
                out.extend(items.iter().map(|item| match preparer.query(scheme, item) {
                    Query::Url(url) => self.check_url(url, scratch),
                    Query::Invalid(error) => Verdict::invalid(error),
                    Query::Blank | Query::Key(_) | Query::Phrase(_) => Verdict::default(),
                }));
                scratch.preparer = preparer;
            }
        }
    }

    /// Answers many items as [`Blocklist::check_batch`] does and hands each answer to
    /// `answered`, in order: `None` for a clean item — for a list of URL entries nothing is
    /// built for it, as on the line path of [`Blocklist::write_checks`] — else its verdict.
    /// The path of callers that keep answers as columns (the Python `check_many`).
    pub fn each_check(
        &self,
        items: &[&[u8]],
        scratch: &mut Scratch,
        mut answered: impl FnMut(Option<Verdict>),
    ) {
        let Engine::Urls(urls) = &self.engine else {
            let mut verdicts = Vec::with_capacity(items.len());
            self.check_batch(items, scratch, &mut verdicts);
            for verdict in verdicts {
                answered((verdict.status != Status::Clean).then_some(verdict));
            }
            return;
        };
        self.each_url_answer(urls, items.iter().copied(), scratch, |_, answer, _| {
            answered(match answer {
                UrlAnswer::Clean => None,
                UrlAnswer::Invalid(error) => Some(Verdict::invalid(error)),
                UrlAnswer::Decided(decision) => decision.entry_verdict(&self.resolver),
            })
        });
    }

    /// Answers many items as [`Blocklist::check_batch`] does and appends one verdict line
    /// each to `out`, as [`write_verdict`] writes them.
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
    ) -> CheckStats {
        let Engine::Urls(urls) = &self.engine else {
            let answered = write_answered(
                items,
                |items, verdicts| {
                    self.check_batch(items, scratch, verdicts);
                    Ok::<(), std::convert::Infallible>(())
                },
                output,
                out,
            );
            let Ok(stats) = answered;
            return stats;
        };
        self.write_url_checks(urls, items, output, None, scratch, out)
    }

    /// [`Blocklist::write_checks`] in JSON, each object ending in `tail` instead of `}` and
    /// its newline — a field more and the separator the caller wants (the server's batches:
    /// `,"list":"NAME"}` and a comma or a newline) — written once, not rewritten. `None` for a
    /// list not of URL entries, with nothing written.
    pub fn write_json_checks_with<'i>(
        &self,
        items: impl IntoIterator<Item = &'i [u8]>,
        tail: &[u8],
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> Option<CheckStats> {
        let Engine::Urls(urls) = &self.engine else {
            return None;
        };
        Some(self.write_url_checks(urls, items, Output::Json, Some(tail), scratch, out))
    }

    /// The line path of a list of URL entries (see [`Blocklist::write_checks`]); a JSON line's
    /// closing `}` and newline replaced by `tail` when given.
    #[inline(always)]
    fn write_url_checks<'i>(
        &self,
        urls: &UrlFilter,
        items: impl IntoIterator<Item = &'i [u8]>,
        output: Output,
        tail: Option<&[u8]>,
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> CheckStats {
        let mut stats = CheckStats::default();
        self.each_url_answer(urls, items, scratch, |shown, answer, scratch| {
            stats.lines += 1;
            match answer {
                UrlAnswer::Decided(decision) => {
                    stats.listed += u64::from(decision.status == Status::Listed);
                    let order = &mut scratch.order;
                    write_decision(shown, &decision, &self.resolver, order, output, out);
                }
                UrlAnswer::Invalid(error) => {
                    scratch.reason.clear();
                    // Writing into a String cannot fail.
                    let _ = write!(scratch.reason, "{error}");
                    write_invalid(shown, &scratch.reason, output, out);
                }
                UrlAnswer::Clean => write_verdict(shown, &Verdict::default(), output, out),
            }
            if let Some(tail) = tail {
                // Every JSON line ends in `}` and a newline (the printer's form).
                out.truncate(out.len().saturating_sub(2));
                out.extend_from_slice(tail);
            }
        });
        stats
    }

    /// The one walk of a list of URL entries over `items`: each item prepared (unless its host
    /// rules it out), matched and decided, and handed to `answered` with the line as shown
    /// (without a trailing `\r`) and `scratch` back for its own use. Inlined into each caller
    /// (measured: a call per line cost `check` about 40 instructions a line).
    #[inline(always)]
    fn each_url_answer<'i>(
        &self,
        urls: &UrlFilter,
        items: impl IntoIterator<Item = &'i [u8]>,
        scratch: &mut Scratch,
        mut answered: impl FnMut(&'i [u8], UrlAnswer<'_, '_>, &mut Scratch),
    ) {
        // Taken out of `scratch` while they lend each URL, then put back.
        let mut preparer = std::mem::take(&mut scratch.preparer);
        let mut key = std::mem::take(&mut scratch.key);
        let gated = urls.gate().is_some().then_some(urls);
        let scheme = self.meta.scheme;
        for item in items {
            let shown = phishbloom_text::line::content(item);
            let answer = match query_unless_ruled_out(gated, &mut preparer, scheme, shown, scratch)
            {
                None | Some(Query::Blank | Query::Key(_) | Query::Phrase(_)) => UrlAnswer::Clean,
                Some(Query::Invalid(error)) => UrlAnswer::Invalid(error),
                Some(Query::Url(url)) => {
                    UrlAnswer::Decided(self.decide(urls, url, &mut key, scratch))
                }
            };
            answered(shown, answer, scratch);
        }
        scratch.preparer = preparer;
        scratch.key = key;
    }

    /// The decision for one canonical URL of a list of URL entries: its most specific listed
    /// expression, confirmed, with the exception that may allow it.
    #[inline(always)]
    fn decide<'u>(
        &self,
        urls: &UrlFilter,
        url: &'u CanonicalUrl,
        key: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Decision<'u, '_> {
        self.resolver.decide_in_order(url, key, |accept| {
            urls.first_spot(
                url,
                scratch,
                |f| self.resolver.prefetch_confirmation(f),
                accept,
            )
        })
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

/// Answers `items` (lines without their `\n`; a trailing `\r` is dropped) with `answer`, which
/// appends one owned verdict per item, and writes one verdict line each to `out`: the line path
/// of whatever answers with owned verdicts (lists of whole keys and keywords here, a list in
/// Redis above).
pub fn write_answered<'i, E>(
    items: impl IntoIterator<Item = &'i [u8]>,
    answer: impl FnOnce(&[&'i [u8]], &mut Vec<Verdict>) -> Result<(), E>,
    output: Output,
    out: &mut Vec<u8>,
) -> Result<CheckStats, E> {
    let lines: Vec<&[u8]> = items
        .into_iter()
        .map(phishbloom_text::line::content)
        .collect();
    let mut verdicts = Vec::with_capacity(lines.len());
    answer(&lines, &mut verdicts)?;
    let mut stats = CheckStats::default();
    for (line, verdict) in lines.iter().zip(&verdicts) {
        write_verdict(line, verdict, output, out);
        stats.lines += 1;
        stats.listed += u64::from(verdict.listed());
    }
    Ok(stats)
}

/// An item of a list of URL entries, prepared — unless the list's host gate (`gated`: its URL
/// filter, when it has one) rules it out by its host as written, when that is its canonical
/// host ([`phishbloom_url::read_written_host`]): then `None`, clean whatever its path, and it
/// is not canonicalized at all. An item not ruled out is canonicalized from after that host.
#[inline(always)]
fn query_unless_ruled_out<'p>(
    gated: Option<&UrlFilter>,
    preparer: &'p mut Preparer,
    scheme: KeyScheme,
    shown: &'p [u8],
    scratch: &mut Scratch,
) -> Option<Query<'p>> {
    let written = gated.and_then(|_| phishbloom_url::read_written_host(shown));
    if let (Some(urls), Some(written)) = (gated, &written) {
        if urls.rules_out_host(written.host(), scratch) {
            return None;
        }
    }
    Some(match &written {
        Some(written) => preparer.query_written(written),
        None => preparer.query(scheme, shown),
    })
}
