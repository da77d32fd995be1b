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
    let batch: Batch = parse_json(bytes, "{\"urls\": [...]}")?;
    let count = batch.urls.len();
    if count > max_batch {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{count} URLs in one batch, over the cap of {max_batch}: split the batch, or stream it as NDJSON"),
        ));
    }
    Ok(batch.urls.into_iter().map(|url| url.0).collect())
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
    let mut out = Vec::with_capacity(ANSWER_SLICE * 128);
    if !ndjson_out {
        out.extend_from_slice(b"{\"results\":[");
    }
    let mut lines = Vec::new();
    for (n, slice) in items.chunks(ANSWER_SLICE).enumerate() {
        // One list: `check`'s own line path, nothing allocated per URL.
        let one_list =
            checker.write_json_lines(slice, n > 0, ndjson_out, &mut scratch, &mut lines, &mut out);
        listed_count += match one_list {
            Some(listed) => listed,
            None => {
                answers.clear();
                // An item that is not a URL is answered `invalid` with its reason, in place.
                checker.check(slice, &mut scratch, &mut answers);
                for (i, (item, answer)) in slice.iter().zip(&answers).enumerate() {
                    // A JSON array holds the lines without their newlines, a comma between them.
                    if !ndjson_out && n + i > 0 {
                        out.push(b',');
                    }
                    checker.write_line(item, answer, &mut out);
                    if !ndjson_out {
                        out.pop();
                    }
                }
                listed(&answers)
            }
        };
        pieces.push(Bytes::from(std::mem::replace(
            &mut out,
            Vec::with_capacity(ANSWER_SLICE * 128),
        )));
    }
    if !ndjson_out {
        out.extend_from_slice(b"]}");
    }
    pieces.push(Bytes::from(out));
    (pieces, listed_count)
}

#[cfg(test)]
mod tests {
    use super::*;

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
