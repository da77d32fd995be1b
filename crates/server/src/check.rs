//! Checking items against one or several served lists, and the JSON answer lines.
//!
//! A [`Checker`] holds the versions of the lists current when a request began, so the whole
//! request answers from them even if a reload swaps new ones in meanwhile. Against several
//! lists an item's answer is the first list's (in the order served) that lists it, else the
//! first that allows it by an exception, else clean. Each answer line is exactly the line
//! `phishbloom check --json` prints ([`printer::write_verdict`]) with a `list` field added last:
//! the list that decided, or `null` for an item clean in every one of several lists.

use std::sync::Arc;

use bytes::Bytes;
use phishbloom_blocklist::check::text_lines;
use phishbloom_core::engine::Scratch;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::prepare::{Preparer, Query};
use phishbloom_core::printer::{self, Output};
use phishbloom_core::resolve::{Status, Verdict};
use phishbloom_core::CheckStats;

use crate::buffers::Buffers;
use crate::error::{Error, Result};
use crate::lists::{Lists, Served, Slot};

/// The answer for one item: the verdict and the index of the list that decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// The verdict.
    pub verdict: Verdict,
    /// Which of the checker's lists decided (`None`: clean in several lists).
    pub list: Option<usize>,
}

/// The lists one request asks, at the versions current when it began.
pub struct Checker {
    lists: Vec<(Arc<Slot>, Arc<Served>)>,
}

impl Checker {
    /// The list named `list`, or every served list.
    pub fn new(lists: &Lists, list: Option<&str>) -> Result<Self> {
        let slots = match list {
            Some(name) => vec![lists.require(name)?],
            None => lists.registry().slots().to_vec(),
        };
        Ok(Checker {
            lists: slots
                .into_iter()
                .map(|slot| {
                    let served = slot.load();
                    (slot, served)
                })
                .collect(),
        })
    }

    /// The name of list `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.lists[index].0.name
    }

    /// How many lists are asked.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// Whether no list is asked (no list is served).
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Answers `items` in order, appending one answer each to `out`. Each item is prepared
    /// once ([`phishbloom_core::prepare`], as `check` prepares it): lists of keys answer
    /// the whole batch at once (one prefetched pass), lists of URL entries item by item from
    /// the one canonical form. An item a list of URL entries cannot read is answered
    /// `invalid`, with the reason, and the others as usual.
    pub fn check(&self, items: &[&[u8]], scratch: &mut Scratch, out: &mut Vec<Answer>) {
        let guards: Vec<_> = self.lists.iter().map(|(_, served)| served.read()).collect();
        let is_url = |g: &crate::lists::State| g.list.meta().scheme == KeyScheme::Expressions;
        let url_lists = guards.iter().any(|g| is_url(g));
        let mut key_verdicts: Vec<Option<Vec<Verdict>>> = guards
            .iter()
            .map(|g| {
                (!is_url(g)).then(|| {
                    let mut verdicts = Vec::with_capacity(items.len());
                    g.list.check_batch(items, scratch, &mut verdicts);
                    verdicts
                })
            })
            .collect();
        let single = guards.len() == 1;
        let mut preparer = Preparer::default();
        out.reserve(items.len());
        for (index, item) in items.iter().enumerate() {
            let query = if url_lists {
                preparer.query(KeyScheme::Expressions, item)
            } else {
                Query::Blank
            };
            let mut answer = Answer::default();
            for (at, guard) in guards.iter().enumerate() {
                let verdict = match &mut key_verdicts[at] {
                    Some(verdicts) => std::mem::take(&mut verdicts[index]),
                    None => match &query {
                        Query::Url(url) => guard.list.check_url(url, scratch),
                        Query::Invalid(error) => Verdict::invalid(error),
                        Query::Blank | Query::Key(_) | Query::Phrase(_) => Verdict::default(),
                    },
                };
                let better = at == 0 || rank(verdict.status) > rank(answer.verdict.status);
                if better {
                    answer = Answer {
                        list: (single
                            || !matches!(verdict.status, Status::Clean | Status::Invalid))
                        .then_some(at),
                        verdict,
                    };
                }
            }
            out.push(answer);
        }
    }

    /// The one list asked, for answers only one list can give (a text batch, as `check`
    /// answers it): asking several lists (none named) is [`Error::BadRequest`], saying to name
    /// one.
    pub fn one_list(&self) -> Result<&Served> {
        match self.lists.as_slice() {
            [(_, served)] => Ok(served),
            lists => {
                let names: Vec<&str> = lists.iter().map(|(s, _)| s.name.as_str()).collect();
                Err(Error::BadRequest(format!(
                    "a text batch is answered by one list, as `phishbloom check` answers it: name \
                     it with ?list=NAME (served: {})",
                    names.join(", ")
                )))
            }
        }
    }

    /// Answers a text batch — one item per line, cut as `phishbloom check` cuts its input
    /// ([`text_lines`]) — with the TSV lines `check` prints for them, through `check`'s own line
    /// path ([`Blocklist::write_checks`](phishbloom_core::Blocklist::write_checks)), `slice`
    /// lines at a time: `piece` gets each slice's answers (never empty), written into a buffer
    /// from `buffers` that goes back there once the piece is dropped, so that no buffer grows
    /// with the batch and none is new once a few were sent; it says whether to go on (`false`:
    /// the answers are no longer wanted). One list answers ([`Checker::one_list`]), read-locked
    /// only while a slice is answered (never while a piece waits to be taken, or the text to
    /// arrive), as a JSON batch's slices are. The counts are of the lines answered.
    pub fn write_text(
        &self,
        text: &[u8],
        slice: usize,
        buffers: &Arc<Buffers>,
        piece: impl FnMut(Bytes) -> bool,
    ) -> Result<CheckStats> {
        self.write_text_frames([text], slice, buffers, piece)
    }

    /// [`Checker::write_text`] of a text that arrives in `frames` (in order; the text ends with
    /// the last), answered as it arrives: each frame's whole lines at once, a line cut between
    /// frames once it is whole, and text after the last line feed as a last line at the end —
    /// the same answers, in the same pieces, as `write_text` of the frames joined.
    pub fn write_text_frames<F: AsRef<[u8]>>(
        &self,
        frames: impl IntoIterator<Item = F>,
        slice: usize,
        buffers: &Arc<Buffers>,
        piece: impl FnMut(Bytes) -> bool,
    ) -> Result<CheckStats> {
        let mut slicer = Slicer {
            served: self.one_list()?,
            scratch: Scratch::default(),
            slice: slice.max(1),
            out: Vec::new(),
            lines: 0,
            stats: CheckStats::default(),
            buffers,
            piece,
        };
        // The start of a line that the frames so far have not ended.
        let mut carry: Vec<u8> = Vec::new();
        for frame in frames {
            let frame = frame.as_ref();
            let Some(last) = frame.iter().rposition(|&b| b == b'\n') else {
                carry.extend_from_slice(frame);
                continue;
            };
            let (mut whole, rest) = frame.split_at(last + 1);
            if !carry.is_empty() {
                // `whole` ends with a line feed: the carried line ends at its first one.
                let first = whole.iter().position(|&b| b == b'\n').unwrap_or(last);
                carry.extend_from_slice(&whole[..=first]);
                if !slicer.answer(&carry) {
                    return Ok(slicer.stats);
                }
                carry.clear();
                whole = &whole[first + 1..];
            }
            if !slicer.answer(whole) {
                return Ok(slicer.stats);
            }
            carry.extend_from_slice(rest);
        }
        // A last line without its line feed.
        if slicer.answer(&carry) {
            slicer.flush();
        }
        Ok(slicer.stats)
    }

    /// Appends the answer lines of `items` to `out` — byte for byte what [`Checker::check`] and
    /// [`Checker::write_line`] write, as NDJSON lines or (`ndjson` false) as JSON array members,
    /// each followed by a comma instead of its newline (the caller takes the last one back) —
    /// through `check`'s own line path, each object written once with its list field
    /// ([`phishbloom_core::Blocklist::write_json_checks_with`], `tail` its scratch space); the
    /// number of listed items. `None`, with nothing written, where that path does not apply:
    /// several lists asked, a list not of URL entries, or an item with a trailing `\r` (which
    /// `check` drops from the line it prints, and a JSON batch keeps).
    pub fn write_json_lines(
        &self,
        items: &[&[u8]],
        ndjson: bool,
        scratch: &mut Scratch,
        tail: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Option<u64> {
        let [(slot, served)] = self.lists.as_slice() else {
            return None;
        };
        if items.iter().any(|item| item.ends_with(b"\r")) {
            return None;
        }
        // Each object ends with the list's field, then a newline (NDJSON) or a comma (an
        // array's separator, the last one taken back by the caller).
        tail.clear();
        tail.extend_from_slice(b",\"list\":");
        printer::write_json_string(&slot.name, tail);
        tail.push(b'}');
        tail.push(if ndjson { b'\n' } else { b',' });
        let stats =
            served
                .read()
                .list
                .write_json_checks_with(items.iter().copied(), tail, scratch, out)?;
        Some(stats.listed)
    }

    /// Appends the answer line for `item` (with its `\n`).
    pub fn write_line(&self, item: &[u8], answer: &Answer, out: &mut Vec<u8>) {
        printer::write_verdict(item, &answer.verdict, Output::Json, out);
        // The printer writes one JSON object and a newline: reopen the object to add the list.
        let closed = out.ends_with(b"}\n");
        debug_assert!(closed, "the printer ends a JSON line with }} and a newline");
        if closed {
            out.truncate(out.len() - 2);
            out.extend_from_slice(b",\"list\":");
            match answer.list {
                Some(index) => printer::write_json_string(self.name(index), out),
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(b"}\n");
        }
    }
}

/// How decisive a verdict is among several lists' verdicts for one item: listed, then allowed,
/// then invalid (a list of URL entries could not read it: worth saying even when a list of keys
/// found it clean), then clean.
fn rank(status: Status) -> u8 {
    match status {
        Status::Listed => 3,
        Status::Allowed => 2,
        Status::Invalid => 1,
        Status::Clean => 0,
    }
}

/// Counts listed answers.
pub fn listed(answers: &[Answer]) -> u64 {
    answers.iter().filter(|a| a.verdict.listed()).count() as u64
}

/// Answers lines into pieces of `slice` lines' answers for [`Checker::write_text_frames`].
struct Slicer<'l, P> {
    served: &'l Served,
    scratch: Scratch,
    slice: usize,
    /// The answers of the piece being filled (no buffer until a line is answered).
    out: Vec<u8>,
    /// Lines answered into `out`.
    lines: usize,
    stats: CheckStats,
    /// Where `out` comes from, and where a sent piece's buffer goes back.
    buffers: &'l Arc<Buffers>,
    piece: P,
}

impl<P: FnMut(Bytes) -> bool> Slicer<'_, P> {
    /// Answers the lines of `text` ([`text_lines`]); sends each piece as it fills. `false`
    /// once the answers are no longer wanted.
    fn answer(&mut self, text: &[u8]) -> bool {
        // The lines go straight from the cutting to the answering, a slice at a time (not
        // gathered first: that costs as much as cutting them).
        if text.is_empty() {
            return true;
        }
        let mut lines = text_lines(text);
        loop {
            if self.out.is_empty() {
                // Room for a slice's lines and half again (an entry, a category), as `check`
                // makes it — or for all of `text`'s, if fewer (a line is rarely over 128 bytes;
                // a longer one grows the piece as a vector grows). In a sent piece's buffer
                // where one is back (its pages already mapped).
                let length = text.len().min(self.slice * 128);
                let room = length + length / 2;
                if self.out.capacity() == 0 {
                    self.out = self.buffers.take(room);
                } else {
                    self.out.reserve(room);
                }
            }
            // The list is read-locked for this slice only.
            let answered = self.served.read().list.write_checks(
                lines.by_ref().take(self.slice - self.lines),
                Output::Tsv,
                &mut self.scratch,
                &mut self.out,
            );
            if answered.lines == 0 {
                // The lines of `text` are all answered.
                return true;
            }
            self.stats += answered;
            // At most a slice of lines: far below `usize::MAX`.
            self.lines += answered.lines as usize;
            if self.lines == self.slice && !self.flush() {
                return false;
            }
        }
    }

    /// Sends the piece being filled, if it holds any answer; whether to go on.
    fn flush(&mut self) -> bool {
        self.lines = 0;
        if self.out.is_empty() {
            // Kept for the next slice, or given back when the slicer is dropped.
            return true;
        }
        let out = std::mem::take(&mut self.out);
        (self.piece)(self.buffers.piece(out))
    }
}

impl<P> Drop for Slicer<'_, P> {
    /// A buffer taken and not sent (no line came after the last piece, the answers stopped,
    /// or answering panicked) goes back for reuse.
    fn drop(&mut self) {
        self.buffers.give_back(std::mem::take(&mut self.out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lists::ListSpec;
    use phishbloom_blocklist::BlocklistFile;
    use phishbloom_core::EntrySet;
    use phishbloom_core::{Blocklist, BuildOptions};
    use phishbloom_url::Entry;

    fn url_file(
        dir: &std::path::Path,
        name: &str,
        entries: &[&str],
        exceptions: &[&str],
    ) -> String {
        let entries = entries
            .iter()
            .map(|e| Entry::parse(e.as_bytes()).unwrap())
            .collect();
        let mut set = EntrySet::uncategorized(entries, name);
        set.exceptions = exceptions
            .iter()
            .map(|e| Entry::parse(e.as_bytes()).unwrap())
            .collect();
        let options = BuildOptions {
            verify: true,
            name: name.into(),
            ..BuildOptions::default()
        };
        let path = dir.join(format!("{name}.bloom"));
        Blocklist::from_entries(&set, &options)
            .unwrap()
            .save(&path, &[])
            .unwrap();
        path.to_str().unwrap().to_owned()
    }

    /// A text answered as it arrives, cut anywhere (inside a line, between `\r` and `\n`,
    /// into empty frames), gives the same pieces as the whole text.
    #[test]
    fn text_in_frames_is_answered_as_the_whole_text() {
        let dir = tempfile::tempdir().unwrap();
        let a = url_file(dir.path(), "a", &["evil.com", "b.org/x"], &["ok.evil.com"]);
        let lists = Lists::open(&[ListSpec::parse(&a).unwrap()], Arc::default()).unwrap();
        let checker = Checker::new(&lists, None).unwrap();
        let mut text = Vec::new();
        for i in 0..300 {
            let line: &[u8] = match i % 7 {
                0 => b"http://www.evil.com/a",
                1 => b"b.org/x/y?z\r",
                2 => b"",
                3 => b"http://ok.evil.com/",
                4 => b"clean.example/path",
                5 => b"http://[x",
                _ => b"\xff\xfe.example",
            };
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        text.extend_from_slice(b"evil.com/last-line-unended");
        let buffers = Arc::new(Buffers::default());
        let pieces_of = |frames: Vec<&[u8]>| {
            let mut pieces = Vec::new();
            let stats = checker
                .write_text_frames(frames, 64, &buffers, |piece| {
                    pieces.push(piece);
                    true
                })
                .unwrap();
            (pieces, stats)
        };
        let (whole, stats) = pieces_of(vec![&text]);
        assert_eq!(stats.lines, 301);
        assert!(whole.len() > 2, "several pieces");
        // Pieces dropped as they come: each buffer is back for the next, which holds only its
        // own answers.
        assert_eq!(buffers.kept(), 0);
        let mut copies = Vec::new();
        checker
            .write_text(&text, 64, &buffers, |piece| {
                copies.push(piece.to_vec());
                true
            })
            .unwrap();
        assert_eq!(copies, whole);
        assert_eq!(buffers.kept(), 1, "one buffer served every piece");
        let mut seed = 7u64;
        for round in 0..50 {
            let mut frames: Vec<&[u8]> = Vec::new();
            let mut at = 0;
            while at < text.len() {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                // Frames of 0 to 3 (round 0) or up to 200 bytes.
                let cap = if round == 0 { 4 } else { 201 };
                let len = ((seed >> 33) as usize % cap).min(text.len() - at);
                frames.push(&text[at..at + len]);
                at += len;
            }
            assert_eq!(pieces_of(frames), (whole.clone(), stats), "round {round}");
        }
        // A text cut at every line feed, and one ending with a line feed.
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        assert_eq!(pieces_of(lines), (whole, stats));
        let ended = b"evil.com\n\n";
        let (pieces, stats) = pieces_of(vec![&ended[..5], &ended[5..]]);
        assert_eq!(stats.lines, 2);
        assert_eq!(
            pieces.concat(),
            b"evil.com\tlisted\tevil.com\tdomain\ta\n\tclean\n"
        );
    }

    #[test]
    fn first_listing_list_decides_and_lines_match_the_cli() {
        let dir = tempfile::tempdir().unwrap();
        let a = url_file(dir.path(), "a", &["evil.com"], &["ok.evil.com"]);
        let b = url_file(dir.path(), "b", &["ok.evil.com", "bad.org"], &[]);
        let specs = [ListSpec::parse(&a).unwrap(), ListSpec::parse(&b).unwrap()];
        let lists = Lists::open(&specs, Arc::default()).unwrap();
        let checker = Checker::new(&lists, None).unwrap();
        let items: [&[u8]; 4] = [
            b"http://evil.com/x",
            b"http://ok.evil.com/",
            b"bad.org",
            b"fine.net",
        ];
        let mut answers = Vec::new();
        checker.check(&items, &mut Scratch::default(), &mut answers);
        let lists_of: Vec<_> = answers.iter().map(|a| a.list).collect();
        assert_eq!(lists_of, [Some(0), Some(1), Some(1), None]);
        assert!(answers[1].verdict.listed());

        let mut line = Vec::new();
        checker.write_line(items[0], &answers[0], &mut line);
        let mut cli = Vec::new();
        printer::write_verdict(items[0], &answers[0].verdict, Output::Json, &mut cli);
        assert_eq!(line[..cli.len() - 2], cli[..cli.len() - 2]);
        assert!(line.ends_with(b",\"list\":\"a\"}\n"));
        line.clear();
        checker.write_line(items[3], &answers[3], &mut line);
        assert!(line.ends_with(b",\"list\":null}\n"));

        let only_a = Checker::new(&lists, Some("a")).unwrap();
        answers.clear();
        only_a.check(&items, &mut Scratch::default(), &mut answers);
        assert_eq!(answers[1].verdict.status, Status::Allowed);
        assert_eq!(answers[3].list, Some(0));
        assert_eq!(listed(&answers), 1);

        answers.clear();
        checker.check(
            &[b"fine.net", b"http://[x"],
            &mut Scratch::default(),
            &mut answers,
        );
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[0].verdict.status, Status::Clean);
        assert_eq!(answers[1].verdict.status, Status::Invalid);
        assert!(answers[1].verdict.error.is_some());
        assert!(Checker::new(&lists, Some("zzz")).is_err());
    }

    #[test]
    fn the_line_path_writes_what_check_and_write_line_write() {
        let dir = tempfile::tempdir().unwrap();
        let a = url_file(
            dir.path(),
            "a\"q",
            &["evil.com", "bad.org/x"],
            &["ok.evil.com"],
        );
        let b = url_file(dir.path(), "b", &["bad.org"], &[]);
        let specs = [ListSpec::parse(&a).unwrap(), ListSpec::parse(&b).unwrap()];
        let lists = Lists::open(&specs, Arc::default()).unwrap();
        let items: [&[u8]; 9] = [
            b"http://evil.com/x",
            b"http://ok.evil.com/",
            b"bad.org/x/y?z=\"1\"",
            b"fine.net",
            b"",
            b"   ",
            b"http://[x",
            b"http://a.b/\xff\x01",
            b"line\nbreak.com",
        ];
        for ndjson in [true, false] {
            let one = Checker::new(&lists, Some("a\"q")).unwrap();
            let (mut want, mut answers) = (Vec::new(), Vec::new());
            one.check(&items, &mut Scratch::default(), &mut answers);
            for (item, answer) in items.iter().zip(&answers) {
                one.write_line(item, answer, &mut want);
                if !ndjson {
                    // In an array every object is followed by a comma (the caller takes the
                    // last one back).
                    want.pop();
                    want.push(b',');
                }
            }
            // In two slices, the second after the first.
            let (mut got, mut tail, mut scratch) = (Vec::new(), Vec::new(), Scratch::default());
            let first =
                one.write_json_lines(&items[..4], ndjson, &mut scratch, &mut tail, &mut got);
            let rest = one.write_json_lines(&items[4..], ndjson, &mut scratch, &mut tail, &mut got);
            assert_eq!(first.zip(rest).map(|(a, b)| a + b), Some(listed(&answers)));
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
            // Not for several lists, nor for an item with a trailing `\r`.
            let both = Checker::new(&lists, None).unwrap();
            assert_eq!(
                both.write_json_lines(&items, ndjson, &mut scratch, &mut tail, &mut got),
                None
            );
            assert_eq!(
                one.write_json_lines(&[b"evil.com\r"], ndjson, &mut scratch, &mut tail, &mut got),
                None
            );
        }
    }
}
