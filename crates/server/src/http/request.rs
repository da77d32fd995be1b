//! What the routes read of a request: query strings, the headers that choose a body's reading,
//! and the body itself — within the size cap and the body timeout — as bytes or as JSON.

use std::borrow::Cow;

use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use bytes::Bytes;
use http_body_util::BodyExt;

use super::error::{body_late, body_too_large, body_unreadable, ApiError, ApiResult};
use super::NDJSON;
use crate::Shared;

/// The decoded `name=value` pairs of a query string (`+` is a space). A value that is not
/// UTF-8 once decoded is an error naming its parameter.
pub(super) fn query_pairs(query: Option<&str>) -> ApiResult<Vec<(String, String)>> {
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

pub(super) fn content_type(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim())
}

pub(super) fn accepts_ndjson(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains(NDJSON))
}

/// The length a request says its body has, if it says one.
pub(super) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Reads a whole body within the size cap and the body timeout.
pub(super) async fn read_body(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
) -> ApiResult<Bytes> {
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
pub(super) fn parse_json<'a, T: serde::Deserialize<'a>>(
    bytes: &'a [u8],
    shape: &str,
) -> ApiResult<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
