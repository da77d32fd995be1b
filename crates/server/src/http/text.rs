//! `POST /v1/check` with a `text/plain` body, one URL per line: answered with the TSV lines
//! `phishbloom check` prints for those lines, byte for byte, from `check`'s own line path
//! ([`Checker::write_text`]), within the caps of a text batch ([`TextCaps`]).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use http_body_util::BodyExt;

use super::error::{body_late, body_too_large, body_unreadable, ApiError, ApiResult};
use super::request::{declared_length, read_body};
use super::response::{pieces_response, streamed_response};
use super::{INLINE_BATCH, TSV};
use crate::check::Checker;
use crate::Shared;

/// Lines of a large text batch answered and sent at a time: about 150 KiB of answers. Larger
/// than a JSON batch's slice (`ANSWER_SLICE`, in `check`): each piece is a hand-off to the
/// runtime's thread and a write to the socket, and the client reads one piece while the next
/// is answered. Batches of 10,000 lines were answered fastest with 2,048 (1,024 and 4,096
/// took 1–3 % longer, 256 lines 5 %, the whole answer sent at once 12 %).
const TEXT_SLICE: usize = 2048;

/// The caps of a `POST /v1/check` text batch, checked as its body arrives (a line's length
/// as soon as it is over, the count once the body is in): its lines, cut as
/// `phishbloom check` cuts its input ([`text_lines`]: each `\n` ends one, and text after the
/// last is one more), are counted and measured (without a `\r` before the `\n`, as an NDJSON
/// line is); what they hold is answered as it is. More than `max_batch` lines, or one longer
/// than `max_line` bytes → 413 naming it, as `check` names a line over its cap.
///
/// [`text_lines`]: phishbloom_blocklist::check::text_lines
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TextCaps {
    /// Lines ended so far.
    lines: usize,
    /// Bytes of the line not ended yet.
    current: usize,
    /// Whether that line's last byte so far is `\r`.
    cr: bool,
}

impl TextCaps {
    /// Counts and measures the lines in the next `bytes` of the body; the first line over
    /// `max_line` bytes is refused.
    pub fn feed(&mut self, bytes: &[u8], max_line: usize) -> ApiResult<()> {
        // Nearly always every line is far below the cap: then only the line feeds are counted
        // (a few instructions per line, where measuring every line costs dozens). Otherwise, or
        // when that cannot be told at a glance, every line is measured.
        if !self.feed_short_lines(bytes, max_line) {
            self.feed_measured(bytes, max_line)?;
        }
        Ok(())
    }

    /// Takes `bytes` if none of their lines can be over `max_line` bytes, as told from a few
    /// line feeds: the line not ended yet ends within the cap, each run of `max_line + 1`
    /// bytes after it holds a line feed, and what follows the last fits within the cap. Then
    /// only the line feeds are counted. `false`, with nothing taken, if that does not hold (a
    /// line may be too long, or only a `\r` keeps it within the cap).
    fn feed_short_lines(&mut self, bytes: &[u8], max_line: usize) -> bool {
        let Some(first) = memchr::memchr(b'\n', bytes) else {
            if self.current + bytes.len() > max_line {
                return false;
            }
            self.extend(bytes);
            return true;
        };
        // `first` found a line feed, so `memrchr` does too (at `first` or later).
        let last = memchr::memrchr(b'\n', bytes).unwrap_or(first);
        let (whole, rest) = (&bytes[first + 1..=last], &bytes[last + 1..]);
        if self.current + first > max_line
            || rest.len() > max_line
            || !lines_within(whole, max_line)
        {
            return false;
        }
        self.lines += 1 + bytecount::count(whole, b'\n');
        (self.current, self.cr) = (0, false);
        self.extend(rest);
        true
    }

    /// [`TextCaps::feed`], measuring every line.
    fn feed_measured(&mut self, bytes: &[u8], max_line: usize) -> ApiResult<()> {
        // Where the line not ended yet starts in `bytes` (0: it started before them).
        let mut start = 0;
        // Each line end as `text_lines` finds it. (Only frames with a line near or over the
        // cap come here: the shortcut takes the others.)
        for end in phishbloom_url::scan::positions(bytes, b'\n') {
            self.extend(&bytes[start..end]);
            self.end_line(max_line)?;
            start = end + 1;
        }
        self.extend(&bytes[start..]);
        // A line already too long for its `\r` to bring it within the cap is refused before
        // it ends (it is not held or answered meanwhile).
        if self.current > max_line.saturating_add(1) {
            return Err(line_too_long(self.lines + 1, max_line));
        }
        Ok(())
    }

    /// The whole body was fed: its last line if it has no line feed, then the count.
    pub fn finish(mut self, max_batch: usize, max_line: usize) -> ApiResult<()> {
        if self.current > 0 {
            self.end_line(max_line)?;
        }
        if self.lines > max_batch {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "{} lines in one batch, over the cap of {max_batch}: split the batch, or \
                     stream it as NDJSON",
                    self.lines
                ),
            ));
        }
        Ok(())
    }

    /// The whole text batch `bytes` within the caps.
    pub fn check(bytes: &[u8], max_batch: usize, max_line: usize) -> ApiResult<()> {
        let mut caps = TextCaps::default();
        caps.feed(bytes, max_line)?;
        caps.finish(max_batch, max_line)
    }

    fn extend(&mut self, part: &[u8]) {
        if let Some(&last) = part.last() {
            self.current += part.len();
            self.cr = last == b'\r';
        }
    }

    fn end_line(&mut self, max_line: usize) -> ApiResult<()> {
        self.lines += 1;
        let length = self.current - usize::from(self.cr);
        (self.current, self.cr) = (0, false);
        if length > max_line {
            return Err(line_too_long(self.lines, max_line));
        }
        Ok(())
    }
}

/// Whether every line of `whole` — lines that each end with a line feed — is at most
/// `max_line` bytes, told from the last line feed in each run of `max_line + 1` bytes (a line
/// that ends within a run is no longer than it), not from every line. `false` also for a line
/// of `max_line + 1` bytes whose last is a `\r`, which is within the cap: the caller measures.
fn lines_within(whole: &[u8], max_line: usize) -> bool {
    // `run` ≤ `max_line + 1`: a cap near `usize::MAX` cannot overflow.
    let run = max_line.saturating_add(1);
    let mut start = 0;
    while whole.len() - start > run {
        match memchr::memrchr(b'\n', &whole[start..start + run]) {
            Some(at) => start += at + 1,
            None => return false,
        }
    }
    // What is left ends with a line feed and is at most `max_line + 1` bytes.
    true
}

/// The 413 of line `number` of a text batch, longer than `max_line` bytes.
fn line_too_long(number: usize, max_line: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("line {number} is longer than {max_line} bytes: no URL is that long"),
    )
}

/// `POST /v1/check` with a `text/plain` body: answered with `check`'s TSV lines
/// ([`Checker::write_text`]), a slice of lines at a time. A small batch (its length said up
/// front) is read whole, answered inline and sent whole. A larger one is answered on the
/// blocking pool as its body arrives ([`Checker::write_text_frames`]), while the caps are
/// checked ([`TextCaps`]); the answer starts once the whole body is in and within them — so
/// that every refusal comes before it — and each slice's answers are sent as soon as they are
/// written (the client reads one while the next is answered).
pub(super) async fn check_text(
    shared: Arc<Shared>,
    checker: Arc<Checker>,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult {
    checker.one_list()?;
    let limit = shared.limits.max_body;
    let declared = declared_length(headers);
    // As a JSON batch: a body large enough to hold many URLs goes to the blocking pool.
    if declared.is_some_and(|n| n / 32 <= INLINE_BATCH as u64) {
        return answer_whole(&shared, &checker, headers, body).await;
    }
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(body_too_large(limit));
    }
    // The body's frames reach the answerer as they arrive (unbounded: the body is capped).
    let (frames_tx, frames_rx) = std::sync::mpsc::channel::<Bytes>();
    let rx = answer_frames(&shared, checker, frames_rx);
    // A refusal returns with `rx` dropped before `frames_tx` (locals drop in reverse order),
    // so the answerer, released, finds no one to take its last answers or its end mark.
    read_within_caps(&shared, body, &frames_tx).await?;
    // The whole text is in and within the caps: the answerer ends with its last line.
    drop(frames_tx);
    Ok(streamed_response(rx, TSV))
}

/// A small text batch: read whole, answered inline and sent whole.
async fn answer_whole(
    shared: &Shared,
    checker: &Checker,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult {
    let (max_batch, max_line) = (shared.limits.max_batch, shared.limits.max_line);
    let bytes = read_body(shared, headers, body).await?;
    TextCaps::check(&bytes, max_batch, max_line)?;
    let mut pieces = Vec::new();
    let stats = checker.write_text(&bytes, TEXT_SLICE, &shared.buffers, |piece| {
        pieces.push(piece);
        true
    })?;
    shared
        .lists
        .metrics()
        .count_checks(stats.lines, stats.listed);
    Ok(pieces_response(pieces, TSV))
}

/// Answers the frames `frames` receives on the blocking pool, a slice of lines at a time: the
/// pieces of the answer, then an empty piece once the text ended and was answered whole.
fn answer_frames(
    shared: &Shared,
    checker: Arc<Checker>,
    frames: std::sync::mpsc::Receiver<Bytes>,
) -> tokio::sync::mpsc::Receiver<Bytes> {
    // A few slices in flight: a client that does not read its answers stops the answering.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let buffers = Arc::clone(&shared.buffers);
    let metrics = shared.lists.metrics().clone();
    tokio::task::spawn_blocking(move || {
        let answered = checker.write_text_frames(frames, TEXT_SLICE, &buffers, |piece| {
            tx.blocking_send(piece).is_ok()
        });
        // The end mark reaches only an answer that was started (a refused batch's answers
        // are dropped, and not counted). Without it (the one list cannot fail to answer), the
        // answer breaks off.
        if let Ok(stats) = answered {
            if tx.blocking_send(Bytes::new()).is_ok() {
                metrics.count_checks(stats.lines, stats.listed);
            }
        }
    });
    rx
}

/// Reads the whole body within the body timeout, handing each frame to `frames` while the
/// text is within its caps; the first cap passed is the error, once the body is in.
async fn read_within_caps(
    shared: &Shared,
    body: Body,
    frames: &std::sync::mpsc::Sender<Bytes>,
) -> ApiResult<()> {
    let (max_batch, max_line) = (shared.limits.max_batch, shared.limits.max_line);
    let limit = shared.limits.max_body;
    let mut caps = TextCaps::default();
    let mut refused = None;
    let mut limited = http_body_util::Limited::new(body, limit);
    let read = async {
        while let Some(frame) = limited.frame().await {
            let frame = frame.map_err(|error| body_unreadable(error, limit))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            // Past a refusal the body is still read (the client is answered once it has sent
            // it), but not answered.
            if refused.is_none() {
                match caps.feed(&data, max_line) {
                    // The answerer stops only when the answer is dropped: nothing to do.
                    Ok(()) => drop(frames.send(data)),
                    Err(error) => refused = Some(error),
                }
            }
        }
        Ok::<_, ApiError>(())
    };
    match tokio::time::timeout(shared.limits.body_timeout, read).await {
        Err(_) => return Err(body_late(shared)),
        Ok(read) => read?,
    }
    if let Some(error) = refused {
        return Err(error);
    }
    caps.finish(max_batch, max_line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::rng::SplitMix64;

    /// The caps of a text batch fed in frames cut anywhere (between `\r` and `\n` too) say
    /// what they say of the whole body: lines counted as `text_lines` cuts them, each measured
    /// without its `\r\n`.
    #[test]
    fn text_caps_count_and_measure_lines_across_frames() {
        let verdict = |frames: &[&[u8]], max_batch: usize, max_line: usize| {
            let mut caps = TextCaps::default();
            for frame in frames {
                if let Err(e) = caps.feed(frame, max_line) {
                    return Err(e.message);
                }
            }
            caps.finish(max_batch, max_line).map_err(|e| e.message)
        };
        let body: &[u8] = b"abc\r\nabcd\n\n\rx\r";
        let lines = phishbloom_blocklist::check::text_lines(body).count();
        assert_eq!(lines, 4);
        for cut in 0..=body.len() {
            let frames = [&body[..cut], &body[cut..]];
            assert_eq!(verdict(&frames, 4, 4), Ok(()), "cut at {cut}");
            let over = verdict(&frames, 3, 4).unwrap_err();
            assert!(
                over.contains("4 lines in one batch, over the cap of 3"),
                "{over}"
            );
            // `abcd` is 4 bytes, `abc\r` 3, `\rx\r` 2: only the second line is over 3.
            let long = verdict(&frames, 10, 3).unwrap_err();
            assert!(long.contains("line 2 is longer than 3 bytes"), "{long}");
        }
        // A line past its cap (and a `\r`) is refused before it ends, named by its number.
        let mut caps = TextCaps::default();
        caps.feed(b"a\nbbbb", 3).unwrap();
        let early = caps.feed(b"b", 3).unwrap_err().message;
        assert!(early.contains("line 2 is longer than 3 bytes"), "{early}");
        assert_eq!(verdict(&[b"", b"\n"], 1, 0), Ok(()));
        assert_eq!(verdict(&[b""], 0, 0), Ok(()));
        assert!(verdict(&[b"a\nb"], 1, 5).is_err());
    }

    /// A random text batch: fewer than 40 lines of fewer than 70 bytes (one in ten fewer than
    /// 200), one in four ending with `\r\n`, and half the time a tail without a line feed.
    fn random_body(rng: &mut SplitMix64) -> Vec<u8> {
        let mut next = |n: u64| rng.next_u64() % n;
        let mut body = Vec::new();
        for _ in 0..next(40) {
            let longest = if next(10) == 0 { 200 } else { 70 };
            let len = next(longest);
            body.extend((0..len).map(|i| b'a' + (i % 26) as u8));
            if next(4) == 0 {
                body.push(b'\r');
            }
            body.push(b'\n');
        }
        if next(2) == 0 {
            let tail = next(25) as usize;
            body.extend_from_slice(&b"tail without a line feed"[..tail]);
        }
        body
    }

    /// The caps say what a line-by-line reference says of the whole body, whether a frame is
    /// taken by its line feeds or measured line by line: random lines near and over caps of
    /// 63–130 bytes (some with `\r`) in random frames, on a fixed seed.
    #[test]
    fn text_caps_measure_long_lines_as_the_line_by_line_rule() {
        let mut rng = SplitMix64::new(0x9e37_79b9_7f4a_7c15);
        // Frames measured line by line, and frames taken by their line feeds alone.
        let mut taken = [0usize; 2];
        for round in 0..300 {
            let max_line = [63, 64, 65, 100, 130][round % 5];
            let body = random_body(&mut rng);
            // The reference: each line as `text_lines` cuts it, without its `\r`.
            let lines: Vec<&[u8]> = phishbloom_blocklist::check::text_lines(&body).collect();
            let first_long = lines
                .iter()
                .position(|l| phishbloom_text::line::content(l).len() > max_line);
            let mut caps = TextCaps::default();
            // Beside it, every line measured: the same state after each frame, and the same
            // refusal (the shortcut of short lines decides nothing the measuring would not).
            let mut measured = TextCaps::default();
            let mut at = 0;
            let mut refused = None;
            while at < body.len() && refused.is_none() {
                let len = ((rng.next_u64() % 300) as usize).min(body.len() - at);
                let frame = &body[at..at + len];
                taken[usize::from(caps.clone().feed_short_lines(frame, max_line))] += 1;
                refused = caps.feed(frame, max_line).err();
                let by_measure = measured.feed_measured(frame, max_line).err();
                assert_eq!(
                    refused.as_ref().map(|e| &e.message),
                    by_measure.as_ref().map(|e| &e.message),
                    "round {round}"
                );
                if refused.is_none() {
                    assert_eq!(caps, measured, "round {round}, frame at {at}");
                }
                at += len;
            }
            let refused = match refused {
                Some(error) => Some(error.message),
                None => caps.finish(usize::MAX, max_line).err().map(|e| e.message),
            };
            match first_long {
                Some(index) => {
                    let message = refused.expect("a long line is refused");
                    assert!(
                        message.contains(&format!("line {} is longer", index + 1)),
                        "round {round}: {message}"
                    );
                }
                None => assert_eq!(refused, None, "round {round}"),
            }
            if first_long.is_none() {
                let mut caps = TextCaps::default();
                caps.feed(&body, max_line).unwrap();
                let over = caps.finish(lines.len().saturating_sub(1), max_line);
                assert_eq!(
                    over.is_err(),
                    !lines.is_empty(),
                    "round {round}: line count"
                );
            }
        }
        assert!(
            taken[0] > 100 && taken[1] > 100,
            "both ways taken: {taken:?}"
        );
    }
}
