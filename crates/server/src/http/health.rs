//! `GET /healthz` (liveness, always 200), `GET /readyz` (200 when every list serves the newest
//! good file, else 503) and `GET /metrics` (Prometheus text).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::response::typed_response;
use crate::lists::Slot;
use crate::Shared;

/// `GET /healthz`: degraded while a list's last reload was refused, or a list is older than
/// `--stale-after` (a copy that a stopped or frozen `sync` no longer updates).
pub(super) async fn health(State(shared): State<Arc<Shared>>) -> Response {
    let (health, lists) = list_health(&shared);
    let status = if health.refused || health.stale {
        "degraded"
    } else {
        "ok"
    };
    axum::Json(serde_json::json!({ "status": status, "lists": lists })).into_response()
}

/// `GET /readyz`: 200 when every list serves the newest good file of its path (no reload
/// refused since the last one that succeeded), 503 otherwise — for a load balancer that
/// should send checks elsewhere meanwhile. `/healthz` stays 200 while the process answers.
pub(super) async fn ready(State(shared): State<Arc<Shared>>) -> Response {
    let (health, lists) = list_health(&shared);
    // A stale list still answers as well as it can: not a reason to send checks elsewhere.
    let degraded = health.refused;
    let status = if degraded {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let body = serde_json::json!({ "ready": !degraded, "lists": lists });
    (status, axum::Json(body)).into_response()
}

/// What is wrong with a list, or with any of them.
#[derive(Clone, Copy, Default)]
struct Health {
    /// Its last reload was refused.
    refused: bool,
    /// It is older than `--stale-after`.
    stale: bool,
}

/// What is wrong with any list, and each list's state.
fn list_health(shared: &Shared) -> (Health, Vec<serde_json::Value>) {
    let now = phishbloom_blocklist::now();
    let stale_after = shared.limits.stale_after.map(|d| d.as_secs());
    let mut any = Health::default();
    let lists = shared
        .lists
        .registry()
        .slots()
        .iter()
        .map(|slot| {
            let (health, state) = slot_health(slot, now, stale_after);
            any.refused |= health.refused;
            any.stale |= health.stale;
            state
        })
        .collect();
    (any, lists)
}

/// What is wrong with the list, and its state: version, the age of the list served (seconds
/// since it was written, at `now`; stale past `stale_after`), and the refused reload's error
/// and time.
fn slot_health(slot: &Slot, now: u64, stale_after: Option<u64>) -> (Health, serde_json::Value) {
    let served = slot.load();
    let meta = served.read().list.meta().clone();
    let problem = slot.problem();
    let age = now.saturating_sub(meta.created);
    let health = Health {
        refused: problem.is_some(),
        // A list of unknown age (created 0) is not called stale.
        stale: meta.created > 0 && stale_after.is_some_and(|limit| age > limit),
    };
    let state = serde_json::json!({
        "name": slot.name,
        "status": if health.refused || health.stale { "degraded" } else { "ok" },
        "version": meta.version,
        "age_seconds": age,
        "stale": health.stale,
        "loaded_at": served.loaded_at,
        "last_error": problem.as_ref().map(|(error, _)| error),
        "last_error_at": problem.as_ref().map(|(_, at)| at),
    });
    (health, state)
}

/// `GET /metrics`.
pub(super) async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    typed_response(
        shared.lists.metrics().encode(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    )
}
