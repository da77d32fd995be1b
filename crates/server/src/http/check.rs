//! `GET /v1/check?url=U[&list=L]` (one answer object) and `POST /v1/check`: the body's media
//! type chooses its reading — a JSON batch `{"urls": [...]}` (answered here, as one JSON
//! object or as NDJSON lines), an NDJSON stream ([`super::ndjson`]) or a text batch
//! ([`super::text`]).

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use phishbloom_core::engine::Scratch;

use super::error::{query_error, ApiError, ApiResult};
use super::request::{accepts_ndjson, content_type, parse_json, query_pairs, read_body};
use super::response::{pieces_response, typed_response};
use super::{compute, ndjson, text, NDJSON, TEXT};
use crate::check::{listed, Checker};
use crate::Shared;

/// Items answered and written at a time within one batch: about 50 KiB of answers, small
/// enough that no buffer grows with the batch, large enough that pieces are few.
const ANSWER_SLICE: usize = 256;

/// Bytes of answers a slice's piece starts with room for: a JSON answer takes up to about
/// 200 bytes (a piece is then sized as the one before it, with a quarter more), so that a
/// piece is not copied as it grows.
const FIRST_PIECE: usize = ANSWER_SLICE * 256;

/// `?list=L`: the list that answers (every list, without it).
#[derive(serde::Deserialize)]
pub(super) struct ListQuery {
    list: Option<String>,
}

/// The 400 of the one URL a `GET` asks for, when it cannot be read as a URL.
fn bad_url(url: &[u8], reason: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!(
            "{:?} is not a URL: {reason}",
            String::from_utf8_lossy(url).as_ref()
        ),
    )
}

/// `GET /v1/check?url=…[&list=…]`.
pub(super) async fn check_one(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let pairs = query_pairs(query.as_deref())?;
    let param = |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let url = param("url").ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "give the URL to check: GET /v1/check?url=…",
        )
    })?;
    let checker = Checker::new(&shared.lists, param("list"))?;
    let mut answers = Vec::with_capacity(1);
    checker.check(&[url.as_bytes()], &mut Scratch::default(), &mut answers);
    // One URL asked by itself: one that cannot be read is the request's mistake.
    if let Some(reason) = answers.first().and_then(|a| a.verdict.error.as_deref()) {
        return Err(bad_url(url.as_bytes(), reason));
    }
    shared.lists.metrics().count_checks(1, listed(&answers));
    let mut body = Vec::with_capacity(256);
    checker.write_line(url.as_bytes(), &answers[0], &mut body);
    body.pop();
    Ok(typed_response(body, "application/json"))
}

/// A JSON batch's body.
#[derive(serde::Deserialize)]
struct Batch<'a> {
    #[serde(borrow)]
    urls: Vec<BatchUrl<'a>>,
}

/// One URL of a batch: a newtype, because serde borrows a `Cow<str>` only where the field
/// itself says `borrow` (a `Vec<Cow<str>>` would copy every URL).
#[derive(serde::Deserialize)]
struct BatchUrl<'a>(#[serde(borrow)] Cow<'a, str>);

/// The URLs of a `POST /v1/check` JSON body `{"urls": [...]}` (borrowed from `bytes` where they
/// hold no escape): the route's whole reading of the body. Not UTF-8 or not that shape → 400;
/// more than `max_batch` URLs → 413.
pub fn parse_batch(bytes: &[u8], max_batch: usize) -> Result<Vec<Cow<'_, str>>, ApiError> {
    let urls = match plain_batch(bytes) {
        Some(urls) => urls,
        None => {
            let batch: Batch = parse_json(bytes, "{\"urls\": [...]}")?;
            batch.urls.into_iter().map(|url| url.0).collect()
        }
    };
    let count = urls.len();
    if count > max_batch {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{count} URLs in one batch, over the cap of {max_batch}: split the batch, or stream it as NDJSON"),
        ));
    }
    Ok(urls)
}

/// The URLs of a batch in its plain shape — `{"urls": [...]}` alone, whitespace anywhere
/// JSON allows it, the body UTF-8 — read by searching for quotes rather than by a JSON parser
/// (a string with an escape decoded alone): what nearly every client sends, at a fraction of
/// the cost. `None` for anything else, which serde_json then reads (or refuses with its
/// message): on every body this accepts, serde_json gives the same URLs.
fn plain_batch(bytes: &[u8]) -> Option<Vec<Cow<'_, str>>> {
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut rest = skip_space(text);
    for token in ["{", "\"urls\"", ":", "["] {
        rest = skip_space(rest.strip_prefix(token)?);
    }
    let mut urls = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        rest = after;
    } else {
        loop {
            let (url, after) = plain_string(rest)?;
            urls.push(url);
            rest = skip_space(after);
            if let Some(after) = rest.strip_prefix(',') {
                rest = skip_space(after);
            } else {
                rest = rest.strip_prefix(']')?;
                break;
            }
        }
    }
    rest = skip_space(rest).strip_prefix('}')?;
    skip_space(rest).is_empty().then_some(urls)
}

/// The JSON string `text` starts with, and the text after it: borrowed when it holds no
/// escape, else decoded by serde_json (that string alone). `None` when it is not a string, or
/// holds a control character (which JSON refuses) or an escape serde_json refuses.
fn plain_string(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let (mut at, mut escaped) = (1, false);
    let end = loop {
        let found = at + memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        if bytes[found] == b'"' {
            break found;
        }
        // A backslash and the byte it escapes (a `\u` escape's digits hold no quote).
        escaped = true;
        at = found + 2;
    };
    let raw = &text[1..end];
    // Every byte is tested (no early exit), which the compiler does many at a time.
    if raw.bytes().fold(false, |control, b| control | (b < 0x20)) {
        return None;
    }
    let url = if escaped {
        Cow::Owned(serde_json::from_str::<String>(&text[..=end]).ok()?)
    } else {
        Cow::Borrowed(raw)
    };
    Some((url, &text[end + 1..]))
}

/// `text` after the whitespace JSON allows between tokens (RFC 8259, section 2).
fn skip_space(text: &str) -> &str {
    let spaces = text
        .bytes()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(text.len());
    &text[spaces..]
}

/// `POST /v1/check`: a JSON batch, an NDJSON stream or a text batch, by the body's media type.
pub(super) async fn check_many(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<ListQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    let Query(query) = query.map_err(query_error)?;
    let checker = Arc::new(Checker::new(&shared.lists, query.list.as_deref())?);
    match content_type(&headers) {
        Some(NDJSON) => return Ok(ndjson::stream_ndjson(shared, checker, body)),
        Some(TEXT) => return text::check_text(shared, checker, &headers, body).await,
        // curl's `-d` labels JSON as a form; read it as the JSON it is.
        None | Some("application/json" | "application/x-www-form-urlencoded") => {}
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "cannot read {other}: send application/json {{\"urls\": [...]}}, {NDJSON} \
                     or {TEXT} (one URL per line)"
                ),
            ))
        }
    }
    let bytes = read_body(&shared, &headers, body).await?;
    let ndjson_out = accepts_ndjson(&headers);
    let max_batch = shared.limits.max_batch;
    let metrics = shared.lists.metrics().clone();
    // Small bodies are answered inline; one large enough to hold many URLs goes to the blocking
    // pool (and is parsed there, so its borrowed strings live on that thread).
    let size = bytes.len() / 32;
    compute(size, move || -> ApiResult {
        let urls = parse_batch(&bytes, max_batch)?;
        let items: Vec<&[u8]> = urls.iter().map(|u| u.as_bytes()).collect();
        let (pieces, listed_count) = answer_batch(&checker, &items, ndjson_out);
        metrics.count_checks(items.len() as u64, listed_count);
        let content_type = if ndjson_out {
            NDJSON
        } else {
            "application/json"
        };
        Ok(pieces_response(pieces, content_type))
    })
    .await?
}

/// The answers to a JSON batch's `items` as the pieces of the body — one JSON object
/// `{"results": [...]}`, or NDJSON lines with `ndjson_out` — and how many items were listed.
/// Answered and written a slice at a time, into pieces of the body: no buffer grows with the
/// batch (large allocations are what the allocator is slowest at).
fn answer_batch(checker: &Checker, items: &[&[u8]], ndjson_out: bool) -> (Vec<Bytes>, u64) {
    let mut scratch = Scratch::default();
    let mut answers = Vec::with_capacity(ANSWER_SLICE);
    let mut pieces: Vec<Bytes> = Vec::with_capacity(items.len() / ANSWER_SLICE + 2);
    let mut listed_count = 0;
    let mut out = Vec::with_capacity(FIRST_PIECE);
    if !ndjson_out {
        out.extend_from_slice(b"{\"results\":[");
    }
    let mut tail = Vec::new();
    // In a JSON array every object is followed by a comma, and the last one taken back.
    let mut comma_last = false;
    for slice in items.chunks(ANSWER_SLICE) {
        // One list: `check`'s own line path, nothing allocated per URL.
        let one_list =
            checker.write_json_lines(slice, ndjson_out, &mut scratch, &mut tail, &mut out);
        listed_count += match one_list {
            Some(listed) => listed,
            None => {
                answers.clear();
                // An item that is not a URL is answered `invalid` with its reason, in place.
                checker.check(slice, &mut scratch, &mut answers);
                for (item, answer) in slice.iter().zip(&answers) {
                    checker.write_line(item, answer, &mut out);
                    if !ndjson_out {
                        // The line's newline becomes the array's separator.
                        out.pop();
                        out.push(b',');
                    }
                }
                listed(&answers)
            }
        };
        comma_last = !ndjson_out && !slice.is_empty();
        let room = (out.len() + out.len() / 4).max(FIRST_PIECE);
        let piece = std::mem::replace(&mut out, Vec::with_capacity(room));
        pieces.push(Bytes::from(piece));
    }
    if !ndjson_out {
        if comma_last {
            // The last piece ends with the comma after the last object.
            if let Some(last) = pieces.pop() {
                pieces.push(last.slice(..last.len() - 1));
            }
        }
        out.extend_from_slice(b"]}");
    }
    pieces.push(Bytes::from(out));
    (pieces, listed_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json reads from a batch body (the reference of the plain reading).
    fn by_serde(body: &[u8]) -> Option<Vec<String>> {
        let batch: Batch = serde_json::from_slice(body).ok()?;
        Some(batch.urls.into_iter().map(|u| u.0.into_owned()).collect())
    }

    #[test]
    fn the_plain_reading_agrees_with_serde_json_or_leaves_the_body_to_it() {
        let bodies: [&[u8]; 14] = [
            br#"{"urls": ["http://evil.com/a", "b.org"]}"#,
            b"{\n \"urls\" :\t[ \"a\" ,\"b\"\r\n] }\n",
            br#"{"urls":[]}"#,
            br#"{"urls": [""]}"#,
            br#"{"urls": ["a",]}"#,
            br#"{"urls": ["a" "b"]}"#,
            br#"{"urls": ["a"]} x"#,
            br#"{"urls": ["a"], "x": 1}"#,
            br#"{"urls": ["a"b"]}"#,
            b"{\"urls\": [\"a\x01\"]}",
            b"{\"urls\": [\"\xff\"]}",
            br#"{"urls": ["a"]"#,
            br#"{"urls": "a"}"#,
            br#"["a"]"#,
        ];
        for body in bodies {
            let plain = plain_batch(body)
                .map(|urls| urls.into_iter().map(Cow::into_owned).collect::<Vec<_>>());
            if let Some(plain) = &plain {
                assert_eq!(Some(plain), by_serde(body).as_ref(), "{body:?}");
            }
            let read = parse_batch(body, 10).ok();
            let read = read.map(|urls| urls.into_iter().map(Cow::into_owned).collect());
            assert_eq!(read, by_serde(body), "{}", String::from_utf8_lossy(body));
        }
        // The plain shape is read without serde_json.
        assert!(plain_batch(bodies[0]).is_some() && plain_batch(bodies[1]).is_some());
    }

    proptest::proptest! {
        /// Any body made of the batch's tokens, whitespace and quoted bytes reads as
        /// serde_json reads it.
        #[test]
        fn any_batch_like_body_reads_as_serde_json_reads_it(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", ",", ":", "\"urls\"", "\"a.b/c\"", "\"\"", " ", "\n",
                "\"x\\\"y\"", "\"\u{e9}\"", "\"\\u0041\"", "1",
            ]), 0..16)
        ) {
            let body = parts.concat();
            let read = parse_batch(body.as_bytes(), 100).ok();
            let read = read.map(|urls| urls.into_iter().map(Cow::into_owned).collect::<Vec<_>>());
            proptest::prop_assert_eq!(read, by_serde(body.as_bytes()));
        }

        /// Batches as clients write them — any strings, escaped as JSON escapes them, with
        /// whitespace between tokens — read back exactly, those without escapes by the plain
        /// reading.
        #[test]
        fn written_batches_read_back_exactly(
            urls in proptest::collection::vec(proptest::prelude::any::<String>(), 0..8),
            space in proptest::collection::vec(proptest::sample::select(vec!["", " ", "\n\t"]), 6)
        ) {
            let strings: Vec<String> = urls
                .iter()
                .map(|u| serde_json::to_string(u).unwrap())
                .collect();
            let body = format!(
                "{}{{{}\"urls\"{}:[{}]{}}}{}",
                space[0],
                space[1],
                space[2],
                strings.join(&format!(",{}", space[3])),
                space[4],
                space[5]
            );
            let read = parse_batch(body.as_bytes(), 100).unwrap();
            let read: Vec<String> = read.into_iter().map(Cow::into_owned).collect();
            proptest::prop_assert_eq!(&read, &urls);
            let plain = plain_batch(body.as_bytes()).map(|urls| {
                urls.into_iter().map(Cow::into_owned).collect::<Vec<_>>()
            });
            proptest::prop_assert_eq!(plain, Some(urls));
        }
    }

    #[test]
    fn a_batch_borrows_its_urls_unless_they_hold_escapes() {
        let body = br#"{"urls": ["http://evil.com/a", "http:\/\/x.org", "b\u00e9.fr"]}"#;
        let urls = parse_batch(body, 10).unwrap();
        assert!(matches!(&urls[0], Cow::Borrowed("http://evil.com/a")));
        assert_eq!(urls[1], "http://x.org");
        assert_eq!(urls[2], "bé.fr");
        assert!(matches!(&urls[1], Cow::Owned(_)));
        assert_eq!(
            parse_batch(body, 2).unwrap_err().status,
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }
}
