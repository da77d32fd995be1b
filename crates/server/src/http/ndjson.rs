//! `POST /v1/check` with an NDJSON body (`application/x-ndjson`): each line a JSON string or
//! an object with a `url` field, answered line by line as the body arrives.

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use phishbloom_core::engine::Scratch;

use super::response::typed_response;
use super::NDJSON;
use crate::check::{listed, Answer, Checker};
use crate::Shared;

/// One NDJSON input line: a JSON string, or an object with a `url` field.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Line<'a> {
    Url(#[serde(borrow)] Cow<'a, str>),
    Object {
        #[serde(borrow)]
        url: Cow<'a, str>,
    },
}

/// Answers an NDJSON stream line by line as it arrives: one answer line per input line (blank
/// lines skipped), in order; a line that is not JSON or not a URL gets `{"error": …, "line": N}`
/// in its place. A line over the cap, a body that stops arriving or breaks ends the stream with
/// an error line.
pub(super) fn stream_ndjson(shared: Arc<Shared>, checker: Arc<Checker>, body: Body) -> Response {
    // A few chunks in flight: a client that does not read its answers stops the reading.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    tokio::spawn(async move {
        let mut line_no = 0usize;
        if let Err(message) = answer_stream(&shared, &checker, body, &tx, &mut line_no).await {
            let _ = tx.send(error_line(line_no + 1, &message)).await;
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), rx))
    });
    typed_response(Body::from_stream(stream), NDJSON)
}

/// Sends the answers of `body`'s lines to `tx` a block of complete lines at a time, numbering
/// the lines on from `*line_no`, until the body ends or the client is gone; or why the stream
/// ends early: the body broke off, stopped arriving, or holds a line over the cap.
async fn answer_stream(
    shared: &Shared,
    checker: &Checker,
    body: Body,
    tx: &tokio::sync::mpsc::Sender<Bytes>,
    line_no: &mut usize,
) -> Result<(), String> {
    let mut stream = body.into_data_stream();
    let mut pending: Vec<u8> = Vec::new();
    let mut scratch = Scratch::default();
    let limits = &shared.limits;
    let metrics = shared.lists.metrics();
    loop {
        let next = tokio::time::timeout(limits.idle_timeout, stream.next()).await;
        let (chunk, end) = match next {
            Ok(Some(Ok(chunk))) => (chunk, false),
            Ok(None) => (Bytes::new(), true),
            Ok(Some(Err(error))) => return Err(format!("the request body broke off: {error}")),
            Err(_) => return Err(format!("no input for {:?}", limits.idle_timeout)),
        };
        pending.extend_from_slice(&chunk);
        let complete = if end {
            pending.len()
        } else {
            memchr::memrchr(b'\n', &pending).map_or(0, |i| i + 1)
        };
        if complete == 0 && pending.len() > limits.max_line {
            return Err(format!("line longer than {} bytes", limits.max_line));
        }
        let block: Vec<u8> = pending.drain(..complete).collect();
        let out = answer_block(
            checker,
            &block,
            line_no,
            &mut scratch,
            metrics,
            limits.max_line,
        );
        if !out.is_empty() && tx.send(Bytes::from(out)).await.is_err() {
            return Ok(());
        }
        if end {
            return Ok(());
        }
    }
}

/// The answer line of an input line that is not answered: `{"error": …, "line": N}`.
fn error_line(line: usize, message: &str) -> Bytes {
    let mut out = serde_json::to_vec(&serde_json::json!({ "error": message, "line": line }))
        .unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

/// The lines of `block` (complete lines of an NDJSON check body) as the route reads them: each
/// line that is not blank (a `\r` before its `\n` removed), numbered on from `*line_no`, with its
/// URL (a JSON string, or an object's `url` field; borrowed where it holds no escape) or why it
/// is refused (its answer is then `{"error": …, "line": N}`): longer than `max_line` bytes, not
/// UTF-8, not JSON of either shape.
pub fn parse_ndjson<'a>(
    block: &'a [u8],
    line_no: &mut usize,
    max_line: usize,
) -> Vec<(usize, Result<Cow<'a, str>, String>)> {
    let mut parsed = Vec::new();
    for raw in block.split(|&b| b == b'\n') {
        let raw = phishbloom_text::line::content(raw);
        if raw.trim_ascii().is_empty() {
            continue;
        }
        *line_no += 1;
        let entry = if raw.len() > max_line {
            Err(format!("line longer than {max_line} bytes"))
        } else if std::str::from_utf8(raw).is_err() {
            Err("the line is not UTF-8".into())
        } else {
            match serde_json::from_slice::<Line>(raw) {
                Ok(Line::Url(url) | Line::Object { url }) => Ok(url),
                Err(error) => Err(format!(
                    "not a JSON string or {{\"url\": …}} object: {error}"
                )),
            }
        };
        parsed.push((*line_no, entry));
    }
    parsed
}

/// Answers the complete lines in `block`.
fn answer_block(
    checker: &Checker,
    block: &[u8],
    line_no: &mut usize,
    scratch: &mut Scratch,
    metrics: &crate::metrics::Metrics,
    max_line: usize,
) -> Vec<u8> {
    let parsed = parse_ndjson(block, line_no, max_line);
    let items: Vec<&[u8]> = parsed
        .iter()
        .filter_map(|(_, p)| p.as_ref().ok().map(|url| url.as_bytes()))
        .collect();
    let mut answers: Vec<Answer> = Vec::with_capacity(items.len());
    checker.check(&items, scratch, &mut answers);
    metrics.count_checks(items.len() as u64, listed(&answers));
    let mut out = Vec::with_capacity(items.len() * 96);
    let mut next = 0;
    for (line, entry) in &parsed {
        match entry {
            Err(message) => out.extend_from_slice(&error_line(*line, message)),
            Ok(url) => {
                checker.write_line(url.as_bytes(), &answers[next], &mut out);
                next += 1;
            }
        }
    }
    out
}
