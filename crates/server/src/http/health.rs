//! `GET /healthz` (liveness, always 200), `GET /readyz` (200 when every list serves the newest
//! good file, else 503) and `GET /metrics` (Prometheus text).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::response::typed_response;
use crate::lists::Slot;
use crate::Shared;

/// `GET /healthz`.
pub(super) async fn health(State(shared): State<Arc<Shared>>) -> Response {
    let (degraded, lists) = list_health(&shared);
    let status = if degraded { "degraded" } else { "ok" };
    axum::Json(serde_json::json!({ "status": status, "lists": lists })).into_response()
}

/// `GET /readyz`: 200 when every list serves the newest good file of its path (no reload
/// refused since the last one that succeeded), 503 otherwise — for a load balancer that
/// should send checks elsewhere meanwhile. `/healthz` stays 200 while the process answers.
pub(super) async fn ready(State(shared): State<Arc<Shared>>) -> Response {
    let (degraded, lists) = list_health(&shared);
    let status = if degraded {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let body = serde_json::json!({ "ready": !degraded, "lists": lists });
    (status, axum::Json(body)).into_response()
}

/// Whether any list's last reload was refused, and each list's state.
fn list_health(shared: &Shared) -> (bool, Vec<serde_json::Value>) {
    let now = phishbloom_blocklist::now();
    let registry = shared.lists.registry();
    let (refused, lists): (Vec<bool>, Vec<serde_json::Value>) = registry
        .slots()
        .iter()
        .map(|slot| slot_health(slot, now))
        .unzip();
    (refused.contains(&true), lists)
}

/// Whether the list's last reload was refused, and its state: version, the age of the list
/// served (seconds since it was written, at `now`), and the refused reload's error and time.
fn slot_health(slot: &Slot, now: u64) -> (bool, serde_json::Value) {
    let served = slot.load();
    let meta = served.read().list.meta().clone();
    let problem = slot.problem();
    let state = serde_json::json!({
        "name": slot.name,
        "status": if problem.is_some() { "degraded" } else { "ok" },
        "version": meta.version,
        "age_seconds": now.saturating_sub(meta.created),
        "loaded_at": served.loaded_at,
        "last_error": problem.as_ref().map(|(error, _)| error),
        "last_error_at": problem.as_ref().map(|(_, at)| at),
    });
    (problem.is_some(), state)
}

/// `GET /metrics`.
pub(super) async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    typed_response(
        shared.lists.metrics().encode(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    )
}
