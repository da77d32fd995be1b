//! The HTTP/JSON API (axum): handlers parse the request, delegate to
//! [`Lists`](crate::lists::Lists) and [`Checker`], and map errors to a status with a JSON body `{"error": "…"}`.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /v1/check?url=U[&list=L]` | one answer object |
//! | `POST /v1/check[?list=L]` `{"urls": [...]}` | `{"results": [...]}`, or NDJSON with `Accept: application/x-ndjson` |
//! | `POST /v1/check[?list=L]` NDJSON body | NDJSON answers, streamed as lines arrive |
//! | `POST /v1/check[?list=L]` `text/plain` body, one URL per line | the TSV lines `phishbloom check` prints for those lines, byte for byte (`text/tab-separated-values`), from `check`'s own line path; one list answers (`?list=` names it when several are served) |
//! | `POST /v1/near[?list=L][&max_distance=K]` a document (text, HTML, or a message) | the known documents within K of it, nearest first ([`crate::near`]) |
//! | `GET /v1/lists` | `{"lists": [...]}`: name, kind, version, entries, fingerprint, bytes, loaded-at, `ad_hoc` (`true` for the filters created over the Redis protocol: listed, never checked) |
//! | `GET /v1/lists/{name}/file` | the blocklist file; `ETag`, `If-None-Match` → 304 |
//! | `GET /v1/lists/{name}/delta?from=V[&to=W]` | the delta file from version V (404 if not kept, or if W is not the version served) |
//! | `GET /healthz` | liveness, always 200: `status` is `ok`, or `degraded` when a list's last reload was refused (each list's version, age, last error) |
//! | `GET /readyz` | 200 when every list serves the newest good file, else 503 |
//! | `GET /v1/lists/{name}/index.json` | the sync protocol's index (docs/SYNC.md): version, set fingerprint, file and deltas with their SHA-256; `ETag`, `If-None-Match` → 304 |
//! | `POST`/`DELETE /v1/lists/{name}/entries` `{"entries": [...]}` | add/remove, bearer token |
//! | `GET /metrics` | Prometheus text (every list's counters from 0) |

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{MatchedPath, Path, Query, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use phishbloom_core::engine::Scratch;

use crate::check::{listed, Answer, Checker};
use crate::error::Error;

use crate::Shared;

/// NDJSON's media type.
pub const NDJSON: &str = "application/x-ndjson";

/// The media type of a text batch: one URL per line.
pub const TEXT: &str = "text/plain";

/// The media type of a text batch's answers: `check`'s TSV lines. No charset: each answer
/// repeats its line's bytes as sent, which need not be UTF-8.
pub const TSV: &str = "text/tab-separated-values";

/// Items answered inline on the runtime's thread; larger batches go to the blocking pool so a
/// big batch does not hold up other connections' small requests (256 URLs take about 0.3 ms,
/// the cost of a hand-off to the pool is a few µs).
const INLINE_BATCH: usize = 256;

/// Items answered and written at a time within one batch: about 50 KiB of answers, small
/// enough that no buffer grows with the batch, large enough that pieces are few.
const ANSWER_SLICE: usize = 256;

/// Lines of a large text batch answered and sent at a time: about 150 KiB of answers. Larger
/// than [`ANSWER_SLICE`]: each piece is a hand-off to the runtime's thread and a write to the
/// socket, and the client reads one piece while the next is answered. Batches of 10,000 lines
/// were answered fastest with 2,048 (1,024 and 4,096 took 1–3 % longer, 256 lines 5 %, the
/// whole answer sent at once 12 %).
const TEXT_SLICE: usize = 2048;

/// An error answer: a status and a message, sent as `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    /// More than the message, where a protocol's fixed words say too little.
    detail: Option<String>,
}

impl ApiError {
    /// An error with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            detail: None,
        }
    }

    /// The error with `detail` sent beside its message.
    pub fn with_detail(mut self, detail: String) -> Self {
        self.detail = Some(detail);
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = match &self.detail {
            Some(detail) => serde_json::json!({ "error": self.message, "detail": detail }),
            None => serde_json::json!({ "error": self.message }),
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if matches!(
            self.status,
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
        ) {
            // The request's body may be left unread, so the connection cannot carry another
            // request: say so (RFC 9112 §9.6), or a client that reuses it from its pool sees it
            // closed under its next request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        use phishbloom_core::Error as C;
        if let Error::Full { kind, items } = error {
            return ApiError::new(StatusCode::CONFLICT, crate::error::full_reason(kind))
                .with_detail(crate::error::full_detail(kind, items));
        }
        // A client's mistakes, worded for the HTTP client: JSON field names, no server paths.
        match error.core() {
            Some(C::CategoryNeeded { available, .. }) => {
                return ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the list has several categories ({available}): name the one the entries \
                         join in the request's \"category\" field"
                    ),
                )
            }
            Some(C::Full { kind, items, .. }) => {
                return ApiError::new(StatusCode::CONFLICT, crate::error::full_reason(*kind))
                    .with_detail(crate::error::full_detail(*kind, *items));
            }
            Some(C::InvalidItem { item, error }) => {
                return ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("entries: {item:?} is not a blocklist entry: {error}"),
                )
            }
            Some(C::UnknownCategory {
                name, available, ..
            }) => {
                return ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("category: the list has no category {name:?} (it has: {available})"),
                )
            }
            _ => {}
        }
        let status = match &error {
            Error::UnknownList { .. } | Error::NoDelta { .. } => StatusCode::NOT_FOUND,
            Error::BadRequest(_) => StatusCode::BAD_REQUEST,
            Error::WritesOff => StatusCode::FORBIDDEN,
            Error::Exists => StatusCode::CONFLICT,
            Error::Full { .. } | Error::Unsupported(_) => StatusCode::CONFLICT,
            _ => match error.core() {
                Some(
                    C::CannotChange { .. }
                    | C::Full { .. }
                    | C::NotListed { .. }
                    | C::RemoveNeedsVerification { .. }
                    | C::AmbiguousRemoval { .. },
                ) => StatusCode::CONFLICT,
                Some(C::InvalidItem { .. }) => StatusCode::BAD_REQUEST,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
        };
        ApiError::new(status, error.to_string())
    }
}

type ApiResult<T = Response> = Result<T, ApiError>;

/// The router with every route, the metrics layer and JSON fallbacks.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/check", get(check_one).post(check_many))
        .route("/v1/near", axum::routing::post(near_one))
        .route("/v1/lists", get(lists))
        .route("/v1/lists/{name}/file", get(file))
        .route("/v1/lists/{name}/delta", get(delta))
        .route("/v1/lists/{name}/index.json", get(index))
        .route(
            "/v1/lists/{name}/entries",
            axum::routing::post(add_entries).delete(remove_entries),
        )
        .route("/healthz", get(health))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(shared.clone(), track))
        .with_state(shared)
}

/// Counts every request by route and status, and its latency.
async fn track(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let start = Instant::now();
    let response = next.run(request).await;
    shared.lists.metrics().observe_request(
        &route,
        response.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
    response
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such route: see GET /v1/check, /v1/lists, /healthz, /metrics",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this route does not take that method",
    )
}

fn json_response(status: StatusCode, body: Vec<u8>, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[derive(serde::Deserialize)]
struct ListQuery {
    list: Option<String>,
}

fn query_error(rejection: QueryRejection) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("bad query string: {}", rejection.body_text()),
    )
}

fn path_error(rejection: PathRejection) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("bad path: {}", rejection.body_text()),
    )
}

fn bad_url(url: &[u8], reason: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!(
            "{:?} is not a URL: {reason}",
            String::from_utf8_lossy(url).as_ref()
        ),
    )
}

/// The decoded `name=value` pairs of a query string (`+` is a space). A value that is not
/// UTF-8 once decoded is an error naming its parameter.
fn query_pairs(query: Option<&str>) -> ApiResult<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |text: &str| -> Option<String> {
            let text = text.replace('+', " ");
            percent_encoding::percent_decode_str(&text)
                .decode_utf8()
                .ok()
                .map(Cow::into_owned)
        };
        let (Some(name), Some(value)) = (decode(name), decode(value)) else {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("bad query string: {pair:?} is not UTF-8 once percent-decoded"),
            ));
        };
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// `GET /v1/check?url=…[&list=…]`.
async fn check_one(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> ApiResult {
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
    Ok(json_response(StatusCode::OK, body, "application/json"))
}

/// `POST /v1/near[?list=L][&max_distance=K]`: the body is one document.
async fn near_one(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    let pairs = query_pairs(query.as_deref())?;
    let mut list = None;
    let mut max_distance = None;
    for (name, value) in pairs {
        match name.as_str() {
            "list" => list = Some(value),
            "max_distance" => {
                max_distance = Some(value.parse::<u32>().map_err(|_| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("max_distance: {value:?} is not a whole number of bits (0 to 64)"),
                    )
                })?)
            }
            other => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("unknown parameter {other:?}: /v1/near takes list and max_distance"),
                ))
            }
        }
    }
    let bytes = read_body(&shared, &headers, body).await?;
    let format = crate::near::format_of(content_type(&headers));
    let lists = shared.clone();
    // Fingerprinting costs about 1 µs per 16 bytes of text: a document of 4 KiB costs about
    // what an inline batch of URLs does, a larger one goes to the blocking pool.
    let answer = compute(bytes.len() / 16, move || {
        crate::near::answer(&lists.lists, list.as_deref(), max_distance, format, &bytes)
    })
    .await??;
    Ok(json_response(StatusCode::OK, answer, "application/json"))
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim())
}

fn accepts_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains(NDJSON))
}

/// The length a request says its body has, if it says one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// The 413 of a body over `limit` bytes.
fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body over {limit} bytes: send less, or stream it as NDJSON"),
    )
}

/// The 408 of a body that did not arrive within the body timeout.
fn body_late(shared: &Shared) -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "the request body did not arrive within {:?}",
            shared.limits.body_timeout
        ),
    )
}

/// The answer to a body that could not be read through [`http_body_util::Limited`]: over
/// `limit` bytes (413), or broken (400).
fn body_unreadable(error: Box<dyn std::error::Error + Send + Sync>, limit: usize) -> ApiError {
    if error.is::<http_body_util::LengthLimitError>() {
        body_too_large(limit)
    } else {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {error}"),
        )
    }
}

/// Reads a whole body within the size cap and the body timeout.
async fn read_body(shared: &Shared, headers: &HeaderMap, body: Body) -> ApiResult<Bytes> {
    let limit = shared.limits.max_body;
    if declared_length(headers).is_some_and(|n| n > limit as u64) {
        return Err(body_too_large(limit));
    }
    let limited = http_body_util::Limited::new(body, limit);
    match tokio::time::timeout(shared.limits.body_timeout, limited.collect()).await {
        Err(_) => Err(body_late(shared)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) => Err(body_unreadable(error, limit)),
    }
}

/// Parses a JSON body: not UTF-8, or not JSON of the expected shape → 400.
fn parse_json<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8], shape: &str) -> ApiResult<T> {
    serde_json::from_slice(bytes).map_err(|error| {
        // serde_json checks the strings it reads; a body it refuses is checked whole only then,
        // to say which is wrong.
        match std::str::from_utf8(bytes) {
            Err(utf8) => ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("the request body is not UTF-8 ({utf8}); JSON must be"),
            ),
            Ok(_) => ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("the request body is not {shape}: {error}"),
            ),
        }
    })
}

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

/// Runs `work` inline when small, else on the blocking pool.
async fn compute<T: Send + 'static>(
    size: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> ApiResult<T> {
    if size <= INLINE_BATCH {
        return Ok(work());
    }
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the check failed: {error}"),
        )
    })
}

/// `POST /v1/check`: a JSON batch, or an NDJSON stream.
async fn check_many(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<ListQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    let Query(query) = query.map_err(query_error)?;
    let checker = Arc::new(Checker::new(&shared.lists, query.list.as_deref())?);
    match content_type(&headers) {
        Some(NDJSON) => return Ok(stream_ndjson(shared, checker, body)),
        Some(TEXT) => return check_text(shared, checker, &headers, body).await,
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
        // Answered and written a slice at a time, into pieces of the body: no buffer grows with
        // the batch (large allocations are what the allocator is slowest at).
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
            if let Some(listed) = checker.write_json_lines(
                slice,
                n > 0,
                ndjson_out,
                &mut scratch,
                &mut lines,
                &mut out,
            ) {
                listed_count += listed;
                pieces.push(Bytes::from(std::mem::replace(
                    &mut out,
                    Vec::with_capacity(ANSWER_SLICE * 128),
                )));
                continue;
            }
            answers.clear();
            // An item that is not a URL is answered `invalid` with its reason, in place.
            checker.check(slice, &mut scratch, &mut answers);
            listed_count += listed(&answers);
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
            pieces.push(Bytes::from(std::mem::replace(
                &mut out,
                Vec::with_capacity(ANSWER_SLICE * 128),
            )));
        }
        if !ndjson_out {
            out.extend_from_slice(b"]}");
        }
        pieces.push(Bytes::from(out));
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

/// A 200 answer of `pieces` in order, its length said up front.
fn pieces_response(pieces: Vec<Bytes>, content_type: &'static str) -> Response {
    let length: usize = pieces.iter().map(Bytes::len).sum();
    let body = Body::from_stream(futures_util::stream::iter(
        pieces.into_iter().map(Ok::<_, Infallible>),
    ));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

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
async fn check_text(
    shared: Arc<Shared>,
    checker: Arc<Checker>,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult {
    checker.one_list()?;
    let (max_batch, max_line) = (shared.limits.max_batch, shared.limits.max_line);
    let metrics = shared.lists.metrics().clone();
    let limit = shared.limits.max_body;
    let declared = declared_length(headers);
    // As a JSON batch: a body large enough to hold many URLs goes to the blocking pool.
    if declared.is_some_and(|n| n / 32 <= INLINE_BATCH as u64) {
        let bytes = read_body(&shared, headers, body).await?;
        TextCaps::check(&bytes, max_batch, max_line)?;
        let mut pieces = Vec::new();
        let stats = checker.write_text(&bytes, TEXT_SLICE, &shared.buffers, |piece| {
            pieces.push(piece);
            true
        })?;
        metrics.count_checks(stats.lines, stats.listed);
        return Ok(pieces_response(pieces, TSV));
    }
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(body_too_large(limit));
    }
    // The body's frames reach the answerer as they arrive (unbounded: the body is capped).
    let (frames_tx, frames_rx) = std::sync::mpsc::channel::<Bytes>();
    // A few slices in flight: a client that does not read its answers stops the answering.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let buffers = Arc::clone(&shared.buffers);
    tokio::task::spawn_blocking(move || {
        let answered = checker.write_text_frames(frames_rx, TEXT_SLICE, &buffers, |piece| {
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
                    Ok(()) => drop(frames_tx.send(data)),
                    Err(error) => refused = Some(error),
                }
            }
        }
        Ok::<_, ApiError>(())
    };
    match tokio::time::timeout(shared.limits.body_timeout, read).await {
        Err(_) => return Err(body_late(&shared)),
        Ok(read) => read?,
    }
    // A refusal returns with `rx` dropped before `frames_tx` (locals drop in reverse order),
    // so the answerer, released, finds no one to take its last answers or its end mark.
    if let Some(error) = refused {
        return Err(error);
    }
    caps.finish(max_batch, max_line)?;
    // The whole text is in and within the caps: the answerer ends with its last line.
    drop(frames_tx);
    Ok(streamed_response(rx, TSV))
}

/// A 200 answer of the pieces `pieces` receives, sent as they arrive, until an empty piece
/// marks the end. Pieces that stop before it (the sender dropped: its work failed) break the
/// answer off with an error, so that no client takes a cut answer for a whole one.
fn streamed_response(
    pieces: tokio::sync::mpsc::Receiver<Bytes>,
    content_type: &'static str,
) -> Response {
    let stream = futures_util::stream::unfold(Some(pieces), |pieces| async move {
        let mut pieces = pieces?;
        match pieces.recv().await {
            Some(piece) if piece.is_empty() => None,
            Some(piece) => Some((Ok(piece), Some(pieces))),
            None => Some((
                Err(std::io::Error::other("the answer stopped before its end")),
                None,
            )),
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

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
fn stream_ndjson(shared: Arc<Shared>, checker: Arc<Checker>, body: Body) -> Response {
    // A few chunks in flight: a client that does not read its answers stops the reading.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    tokio::spawn(async move {
        let mut stream = body.into_data_stream();
        let mut pending: Vec<u8> = Vec::new();
        let mut line_no = 0usize;
        let mut scratch = Scratch::default();
        let limits = shared.limits.clone();
        let metrics = shared.lists.metrics().clone();
        loop {
            let next = tokio::time::timeout(limits.idle_timeout, stream.next()).await;
            let (chunk, end) = match next {
                Ok(Some(Ok(chunk))) => (chunk, false),
                Ok(None) => (Bytes::new(), true),
                Ok(Some(Err(error))) => {
                    let _ = tx
                        .send(error_line(
                            line_no + 1,
                            &format!("the request body broke off: {error}"),
                        ))
                        .await;
                    return;
                }
                Err(_) => {
                    let _ = tx
                        .send(error_line(
                            line_no + 1,
                            &format!("no input for {:?}", limits.idle_timeout),
                        ))
                        .await;
                    return;
                }
            };
            pending.extend_from_slice(&chunk);
            let complete = if end {
                pending.len()
            } else {
                memchr::memrchr(b'\n', &pending).map_or(0, |i| i + 1)
            };
            if complete == 0 && pending.len() > limits.max_line {
                let _ = tx
                    .send(error_line(
                        line_no + 1,
                        &format!("line longer than {} bytes", limits.max_line),
                    ))
                    .await;
                return;
            }
            let block: Vec<u8> = pending.drain(..complete).collect();
            let out = answer_block(
                &checker,
                &block,
                &mut line_no,
                &mut scratch,
                &metrics,
                limits.max_line,
            );
            if !out.is_empty() && tx.send(Bytes::from(out)).await.is_err() {
                return;
            }
            if end {
                return;
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(NDJSON));
    response
}

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

/// `GET /v1/lists`.
async fn lists(State(shared): State<Arc<Shared>>) -> Response {
    let mut lists: Vec<serde_json::Value> = shared
        .lists
        .registry()
        .slots()
        .iter()
        .map(|slot| {
            let served = slot.load();
            // Before the read guard below (the checksum takes its own).
            let checksum = served.file_checksum();
            let state = served.read();
            let list = &state.list;
            let meta = list.meta();
            let bytes = list.directory().map(|d| d.file_len).or_else(|| {
                slot.path
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map(|m| m.len())
            });
            serde_json::json!({
                "name": slot.name,
                "kind": list.kind(),
                "scheme": meta.scheme.name(),
                "version": meta.version,
                "entries": meta.entries,
                "entries_exact": meta.exact_count,
                "fingerprint": meta.fingerprint,
                "checksum": checksum.map(|c| format!("{c:016x}")),
                "bytes": bytes,
                "capacity": state.capacity(),
                "grows": state.grows(),
                "categories": list.categories().iter().map(|c| &c.name).collect::<Vec<_>>(),
                "created": meta.created,
                "loaded_at": served.loaded_at,
                "file": slot.path.as_ref().map(|p| p.display().to_string()),
                "writable": shared.token.is_some() && list.kind() != phishbloom_core::Kind::Cabf,
                "supports_remove": list.supports_remove(),
                "delta_from": slot.delta_versions(),
                "ad_hoc": false,
            })
        })
        .collect();
    // Filters created over the Redis protocol: held in memory, never asked by a check.
    lists.extend(shared.lists.adhoc().summaries().into_iter().map(|f| {
        serde_json::json!({
            "name": f.name,
            "ad_hoc": true,
            "type": f.kind,
            "entries": f.items,
            "capacity": f.capacity,
            "bytes": f.bytes,
            "filters": f.filters,
            "grows": f.grows,
            "file": null,
        })
    }));
    axum::Json(serde_json::json!({ "lists": lists })).into_response()
}

/// Whether an `If-None-Match` value names `etag` (or is `*`).
fn none_match(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// `GET /v1/lists/{name}/file`.
async fn file(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> ApiResult {
    let Path(name) = name.map_err(path_error)?;
    let slot = shared.lists.require(&name)?;
    let served = slot.load();
    let image = tokio::task::spawn_blocking(move || served.image())
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    let etag = format!("\"{}\"", image.checksum);
    conditional(&headers, &etag, "application/octet-stream", || {
        Body::from(image.bytes.clone())
    })
}

/// A response with `ETag: etag`: 304 when `If-None-Match` names it, else 200 with the body
/// `body` makes and `content_type`.
fn conditional(
    headers: &HeaderMap,
    etag: &str,
    content_type: &'static str,
    body: impl FnOnce() -> Body,
) -> ApiResult {
    let etag_value = HeaderValue::from_str(etag)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let matched = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| none_match(v, etag));
    let mut response = if matched {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(body());
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    };
    response.headers_mut().insert(header::ETAG, etag_value);
    Ok(response)
}

/// `GET /v1/lists/{name}/delta?from=VERSION`: the delta file from that version to the one
/// served now (`phishbloom apply FILE DELTA` applies it), for the versions kept.
async fn delta(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let Path(name) = name.map_err(path_error)?;
    let slot = shared.lists.require(&name)?;
    let pairs = query_pairs(query.as_deref())?;
    let version = |key: &str| {
        pairs
            .iter()
            .find(|(n, _)| n == key)
            .map(|(_, v)| v.parse::<u64>())
    };
    let from = version("from").and_then(Result::ok).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "give the version you have: /delta?from=VERSION",
        )
    })?;
    let to = version("to")
        .transpose()
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "to=VERSION: give a version number"))?;
    let bytes = tokio::task::spawn_blocking(move || slot.delta(from, to))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    let bytes = Bytes::from(Arc::unwrap_or_clone(bytes));
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    Ok(response)
}

/// `GET /v1/lists/{name}/index.json`: the sync protocol's index (docs/SYNC.md), so that
/// `phishbloom sync http://HOST:PORT/v1/lists/NAME FILE` and the browser extension follow a
/// served list as they follow a `publish` directory.
async fn index(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> ApiResult {
    let Path(name) = name.map_err(path_error)?;
    let slot = shared.lists.require(&name)?;
    let min_interval = shared.limits.sync_interval.as_secs();
    let (json, etag) = tokio::task::spawn_blocking(move || slot.index(min_interval))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    conditional(&headers, &etag, "application/json", || Body::from(json))
}

#[derive(serde::Deserialize)]
struct Entries<'a> {
    #[serde(borrow)]
    entries: Vec<Cow<'a, str>>,
    #[serde(borrow, default)]
    category: Option<Cow<'a, str>>,
}

/// Checks the bearer token: writes are off without a token file; a missing or wrong token is
/// 401.
fn authorize(shared: &Shared, headers: &HeaderMap) -> ApiResult<()> {
    let Some(token) = &shared.token else {
        return Err(Error::WritesOff.into());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .and_then(|v| {
            let (scheme, rest) = v.split_at(v.len().min(7));
            scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
        });
    match given {
        Some(given) if token.matches(given) => Ok(()),
        Some(_) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "wrong bearer token",
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "writes need Authorization: Bearer TOKEN (the token in the server's --token-file)",
        )),
    }
}

/// `POST /v1/lists/{name}/entries`.
async fn add_entries(
    state: State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    change_entries(state, name, headers, body, true).await
}

/// `DELETE /v1/lists/{name}/entries`.
async fn remove_entries(
    state: State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    change_entries(state, name, headers, body, false).await
}

async fn change_entries(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
    add: bool,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let Path(name) = name.map_err(path_error)?;
    shared.lists.require(&name)?;
    let bytes = read_body(&shared, &headers, body).await?;
    parse_json::<Entries>(&bytes, "{\"entries\": [...]}")?;
    let lists: Arc<Shared> = shared.clone();
    tokio::task::spawn_blocking(move || -> ApiResult {
        let entries: Entries = parse_json(&bytes, "{\"entries\": [...]}")?;
        let items: Vec<&[u8]> = entries.entries.iter().map(|e| e.as_bytes()).collect();
        let change = if add {
            lists
                .lists
                .add(&name, &items, entries.category.as_deref())?
        } else {
            lists.lists.remove(&name, &items)?
        };
        let slot = lists.lists.require(&name)?;
        let served = slot.load();
        let state = served.read();
        let body = serde_json::json!({
            "list": name,
            "changed": change.changed,
            "unchanged": change.unchanged,
            "version": state.list.meta().version,
            "entries": state.list.meta().entries,
        });
        Ok(axum::Json(body).into_response())
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// `GET /healthz`.
async fn health(State(shared): State<Arc<Shared>>) -> Response {
    let (degraded, lists) = list_health(&shared);
    let status = if degraded { "degraded" } else { "ok" };
    axum::Json(serde_json::json!({ "status": status, "lists": lists })).into_response()
}

/// `GET /readyz`: 200 when every list serves the newest good file of its path (no reload
/// refused since the last one that succeeded), 503 otherwise — for a load balancer that
/// should send checks elsewhere meanwhile. `/healthz` stays 200 while the process answers.
async fn ready(State(shared): State<Arc<Shared>>) -> Response {
    let (degraded, lists) = list_health(&shared);
    let status = if degraded {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let body = serde_json::json!({ "ready": !degraded, "lists": lists });
    (status, axum::Json(body)).into_response()
}

/// Whether any list's last reload was refused, and each list's state: version, the age of the
/// list served (seconds since it was written), and the refused reload's error and time.
fn list_health(shared: &Shared) -> (bool, Vec<serde_json::Value>) {
    let now = phishbloom_blocklist::now();
    let mut degraded = false;
    let lists = shared
        .lists
        .registry()
        .slots()
        .iter()
        .map(|slot| {
            let served = slot.load();
            let meta = served.read().list.meta().clone();
            let problem = slot.problem();
            degraded |= problem.is_some();
            serde_json::json!({
                "name": slot.name,
                "status": if problem.is_some() { "degraded" } else { "ok" },
                "version": meta.version,
                "age_seconds": now.saturating_sub(meta.created),
                "loaded_at": served.loaded_at,
                "last_error": problem.as_ref().map(|(error, _)| error),
                "last_error_at": problem.as_ref().map(|(_, at)| at),
            })
        })
        .collect();
    (degraded, lists)
}

/// `GET /metrics`.
async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let mut response = Response::new(Body::from(shared.lists.metrics().encode()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
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

    /// The caps say what a line-by-line reference says of the whole body, whether a frame is
    /// taken by its line feeds or measured line by line: random lines near and over caps of
    /// 63–130 bytes (some with `\r`) in random frames, on a fixed seed.
    #[test]
    fn text_caps_measure_long_lines_as_the_line_by_line_rule() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            // SplitMix64 (Steele, Lea, Flood 2014): a fixed-seed generator for the test.
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        };
        // Frames measured line by line, and frames taken by their line feeds alone.
        let mut taken = [0usize; 2];
        for round in 0..300 {
            let max_line = [63, 64, 65, 100, 130][round % 5];
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
                let len = (next(300) as usize).min(body.len() - at);
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

    #[test]
    fn if_none_match_lists_and_wildcards() {
        assert!(none_match("\"abc\"", "\"abc\""));
        assert!(none_match("\"x\", W/\"abc\"", "\"abc\""));
        assert!(none_match("*", "\"abc\""));
        assert!(!none_match("\"abd\"", "\"abc\""));
    }

    #[test]
    fn query_strings_decode_to_utf8_or_fail() {
        let pairs = query_pairs(Some("url=http%3A%2F%2Fa.b%2F%3Fq%3D1+2&list=x&flag")).unwrap();
        assert_eq!(
            pairs,
            [
                ("url".to_string(), "http://a.b/?q=1 2".to_string()),
                ("list".into(), "x".into()),
                ("flag".into(), "".into())
            ]
        );
        assert!(query_pairs(Some("url=%FF")).is_err());
        assert!(query_pairs(None).unwrap().is_empty());
    }
}
