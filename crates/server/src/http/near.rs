//! `POST /v1/near[?list=L][&max_distance=K]`: the body is one document (text, HTML, or a
//! message); the answer lists the known documents within K bits of it, nearest first
//! ([`crate::near`]).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};

use super::compute;
use super::error::{ApiError, ApiResult};
use super::request::{content_type, query_pairs, read_body};
use super::response::typed_response;
use crate::Shared;

/// `POST /v1/near[?list=L][&max_distance=K]`: the body is one document.
pub(super) async fn near_one(
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
    Ok(typed_response(answer, "application/json"))
}
