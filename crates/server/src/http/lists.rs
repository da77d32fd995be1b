//! The served lists and their sync protocol (docs/SYNC.md): `GET /v1/lists` (every list, and
//! the filters created over the Redis protocol), `GET /v1/lists/{name}/file`, `…/delta` and
//! `…/index.json`, so that `phishbloom sync` and the browser extension follow a served list as
//! they follow a `publish` directory.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use super::blocking;
use super::error::{path_error, ApiError, ApiResult};
use super::request::query_pairs;
use super::response::{conditional, none_match, typed_response};
use crate::adhoc::Summary;
use crate::lists::Slot;
use crate::Shared;

/// `GET /v1/lists`.
pub(super) async fn lists(State(shared): State<Arc<Shared>>) -> Response {
    let registry = shared.lists.registry();
    let served = registry
        .slots()
        .iter()
        .map(|slot| served_json(&shared, slot));
    // Filters created over the Redis protocol: held in memory, never asked by a check.
    let adhoc = shared.lists.adhoc().summaries().into_iter().map(adhoc_json);
    let lists: Vec<serde_json::Value> = served.chain(adhoc).collect();
    axum::Json(serde_json::json!({ "lists": lists })).into_response()
}

/// A served list, as `GET /v1/lists` describes it.
fn served_json(shared: &Shared, slot: &Slot) -> serde_json::Value {
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
}

/// A filter created over the Redis protocol, as `GET /v1/lists` describes it.
fn adhoc_json(f: Summary) -> serde_json::Value {
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
}

/// The slot the path's `{name}` names: a bad path is 400, a name not served 404.
fn named_slot(shared: &Shared, name: Result<Path<String>, PathRejection>) -> ApiResult<Arc<Slot>> {
    let Path(name) = name.map_err(path_error)?;
    Ok(shared.lists.require(&name)?)
}

/// `GET /v1/lists/{name}/file`.
pub(super) async fn file(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> ApiResult {
    let slot = named_slot(&shared, name)?;
    let served = slot.load();
    let image = blocking(move || served.image()).await??;
    let etag = format!("\"{}\"", image.checksum);
    conditional(&headers, &etag, "application/octet-stream", || {
        Body::from(image.bytes.clone())
    })
}

/// `GET /v1/lists/{name}/delta?from=VERSION`: the delta file from that version to the one
/// served now (`phishbloom apply FILE DELTA` applies it), for the versions kept.
pub(super) async fn delta(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let slot = named_slot(&shared, name)?;
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
    let bytes = blocking(move || slot.delta(from, to)).await??;
    let bytes = Bytes::from(Arc::unwrap_or_clone(bytes));
    Ok(typed_response(bytes, "application/octet-stream"))
}

/// `GET /v1/lists/{name}/index.json`: the sync protocol's index (docs/SYNC.md), so that
/// `phishbloom sync http://HOST:PORT/v1/lists/NAME FILE` and the browser extension follow a
/// served list as they follow a `publish` directory.
pub(super) async fn index(
    State(shared): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> ApiResult {
    let slot = named_slot(&shared, name)?;
    let min_interval = shared.limits.sync_interval.as_secs();
    let signer = shared.signer.clone();
    let now = phishbloom_blocklist::now();
    let held = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (json, etag) = blocking(move || {
        slot.index(min_interval, signer.as_ref(), now, |etag| {
            held.is_some_and(|held| none_match(&held, etag))
        })
    })
    .await??;
    // No index was made only when the client holds this one: `conditional` answers 304.
    conditional(&headers, &etag, "application/json", || {
        Body::from(json.unwrap_or_default())
    })
}
