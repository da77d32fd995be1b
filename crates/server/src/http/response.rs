//! How the routes answer: a body whole, in pieces made up front or sent as they are made, or
//! only if it changed since the client's copy (`ETag`, `If-None-Match` → 304).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;

use super::error::{ApiError, ApiResult};

/// A 200 answer of `body`, of `content_type`.
pub(super) fn typed_response(body: impl Into<Body>, content_type: &'static str) -> Response {
    let mut response = Response::new(body.into());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A 200 answer of `pieces` in order, its length said up front.
pub(super) fn pieces_response(pieces: Vec<Bytes>, content_type: &'static str) -> Response {
    let length: usize = pieces.iter().map(Bytes::len).sum();
    let body = Body::from_stream(futures_util::stream::iter(
        pieces.into_iter().map(Ok::<_, Infallible>),
    ));
    let mut response = typed_response(body, content_type);
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// A 200 answer of the pieces `pieces` receives, sent as they arrive, until an empty piece
/// marks the end. Pieces that stop before it (the sender dropped: its work failed) break the
/// answer off with an error, so that no client takes a cut answer for a whole one.
pub(super) fn streamed_response(
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
    typed_response(Body::from_stream(stream), content_type)
}

/// Whether an `If-None-Match` value names `etag` (or is `*`).
pub(super) fn none_match(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// A response with `ETag: etag`: 304 when `If-None-Match` names it, else 200 with the body
/// `body` makes and `content_type`.
pub(super) fn conditional(
    headers: &HeaderMap,
    etag: &str,
    content_type: &'static str,
    body: impl FnOnce() -> Body,
) -> ApiResult {
    let etag_value = HeaderValue::from_str(etag).map_err(ApiError::internal)?;
    let matched = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| none_match(v, etag));
    let mut response = if matched {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        typed_response(body(), content_type)
    };
    response.headers_mut().insert(header::ETAG, etag_value);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_lists_and_wildcards() {
        assert!(none_match("\"abc\"", "\"abc\""));
        assert!(none_match("\"x\", W/\"abc\"", "\"abc\""));
        assert!(none_match("*", "\"abc\""));
        assert!(!none_match("\"abd\"", "\"abc\""));
    }
}
