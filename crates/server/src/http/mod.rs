//! The HTTP/JSON API (axum): handlers parse the request, delegate to
//! [`Lists`](crate::lists::Lists) and [`Checker`](crate::check::Checker), and map errors to a
//! status with a JSON body `{"error": "…"}`.
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
//!
//! # Files
//! - this one — the router, the request metrics, and what the check routes share.
//! - `check` — `GET /v1/check` and `POST /v1/check` with a JSON batch; `ndjson` and `text` —
//!   `POST /v1/check` with an NDJSON stream or a text batch ([`TextCaps`]).
//! - `near` — `POST /v1/near`; `lists` — `/v1/lists` and the sync protocol (file, delta,
//!   index); `entries` — add and remove; `health` — `/healthz`, `/readyz`, `/metrics`.
//! - `request` — query strings, headers and bodies read; `response` — bodies sent whole, in
//!   pieces or conditionally; `error` — [`ApiError`], the error answers.

mod check;
mod entries;
mod error;
mod health;
mod lists;
mod ndjson;
mod near;
mod request;
mod response;
mod text;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use crate::Shared;
pub use check::parse_batch;
pub use error::ApiError;
use error::ApiResult;
pub use ndjson::parse_ndjson;
pub use text::TextCaps;

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

/// The router with every route, the metrics layer and JSON fallbacks.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/check", get(check::check_one).post(check::check_many))
        .route("/v1/near", post(near::near_one))
        .route("/v1/lists", get(lists::lists))
        .route("/v1/lists/{name}/file", get(lists::file))
        .route("/v1/lists/{name}/delta", get(lists::delta))
        .route("/v1/lists/{name}/index.json", get(lists::index))
        .route(
            "/v1/lists/{name}/entries",
            post(entries::change_entries).delete(entries::change_entries),
        )
        .route("/healthz", get(health::health))
        .route("/readyz", get(health::ready))
        .route("/metrics", get(health::metrics))
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

/// Runs blocking work (reading or saving a file) on the blocking pool; a task that does not
/// finish (it panicked) is a 500.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)
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
