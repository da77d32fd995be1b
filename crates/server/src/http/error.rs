//! The HTTP API's error answers: [`ApiError`] — a status and a JSON body `{"error": …}` — and
//! the mapping of the server's [`Error`] to them (a client's mistake worded for an HTTP client,
//! 4xx; the server's own, 5xx), with the errors every route group shares: bad query strings and
//! paths, bodies too large, late or broken.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::Error;
use crate::Shared;

/// An error answer: a status and a message, sent as `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    pub(super) status: StatusCode,
    pub(super) message: String,
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

    /// A 500: the server's own failure, `error` saying what it was.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
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

/// A route's answer, or its error.
pub(super) type ApiResult<T = Response> = Result<T, ApiError>;

pub(super) fn query_error(rejection: QueryRejection) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("bad query string: {}", rejection.body_text()),
    )
}

pub(super) fn path_error(rejection: PathRejection) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        format!("bad path: {}", rejection.body_text()),
    )
}

/// The 413 of a body over `limit` bytes.
pub(super) fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body over {limit} bytes: send less, or stream it as NDJSON"),
    )
}

/// The 408 of a body that did not arrive within the body timeout.
pub(super) fn body_late(shared: &Shared) -> ApiError {
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
pub(super) fn body_unreadable(
    error: Box<dyn std::error::Error + Send + Sync>,
    limit: usize,
) -> ApiError {
    if error.is::<http_body_util::LengthLimitError>() {
        body_too_large(limit)
    } else {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {error}"),
        )
    }
}
