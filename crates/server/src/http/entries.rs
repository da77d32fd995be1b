//! `POST` and `DELETE /v1/lists/{name}/entries` `{"entries": [...]}`: entries added to or
//! removed from a served list (saved over its file), with the bearer token of the server's
//! `--token-file`.

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::IntoResponse;

use super::blocking;
use super::error::{path_error, ApiError, ApiResult};
use super::request::{parse_json, read_body};
use crate::error::Error;
use crate::Shared;

/// The body both routes read.
#[derive(serde::Deserialize)]
struct Entries<'a> {
    #[serde(borrow)]
    entries: Vec<Cow<'a, str>>,
    #[serde(borrow, default)]
    category: Option<Cow<'a, str>>,
}

/// What the body is, for the error of one that is not.
const ENTRIES_SHAPE: &str = "{\"entries\": [...]}";

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

/// `POST /v1/lists/{name}/entries` (add) and `DELETE` (remove): the change, and the list's
/// version and entries after it.
pub(super) async fn change_entries(
    State(shared): State<Arc<Shared>>,
    method: Method,
    name: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let Path(name) = name.map_err(path_error)?;
    shared.lists.require(&name)?;
    let bytes = read_body(&shared, &headers, body).await?;
    parse_json::<Entries>(&bytes, ENTRIES_SHAPE)?;
    let add = method == Method::POST;
    blocking(move || -> ApiResult {
        let entries: Entries = parse_json(&bytes, ENTRIES_SHAPE)?;
        let items: Vec<&[u8]> = entries.entries.iter().map(|e| e.as_bytes()).collect();
        let lists = &shared.lists;
        let change = if add {
            lists.add(&name, &items, entries.category.as_deref())?
        } else {
            lists.remove(&name, &items)?
        };
        let slot = lists.require(&name)?;
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
    .await?
}
