//! What `--http ADDR` shows: `GET /metrics`, the counters of every answer in Prometheus' text
//! format (prometheus-client, as `serve` writes them) — queries by transport, answers by
//! outcome, blocked names by list and category, upstream failures and latency, reloads — and
//! `GET /healthz`, `ok` while the server answers.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::error::{Error, Result};

/// A label of one value.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Kind {
    /// `udp` or `tcp`; `blocked`, `forwarded`, `refused`, `formerr`, `servfail`; `done`,
    /// `failed`.
    pub kind: String,
}

/// The labels of a blocked name: the list and the entry's categories (comma-joined).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Block {
    /// The list's name.
    pub list: String,
    /// The entry's categories.
    pub categories: String,
}

/// The counters.
pub struct Metrics {
    registry: Registry,
    /// Queries read, by transport.
    pub queries: Family<Kind, Counter>,
    /// Answers given, by outcome.
    pub answers: Family<Kind, Counter>,
    /// Blocked names (a CNAME's too), by list and categories.
    pub blocked: Family<Block, Counter>,
    /// Seconds the upstreams took to answer a forwarded query.
    pub upstream_seconds: Histogram,
    /// List reloads, by outcome.
    pub reloads: Family<Kind, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("phishbloom_dns");
        let queries = Family::<Kind, Counter>::default();
        let answers = Family::<Kind, Counter>::default();
        let blocked = Family::<Block, Counter>::default();
        // 100 µs to about 3 s, doubling.
        let upstream_seconds = Histogram::new(exponential_buckets(1e-4, 2.0, 16));
        let reloads = Family::<Kind, Counter>::default();
        registry.register("queries", "Queries read, by transport", queries.clone());
        registry.register("answers", "Answers given, by outcome", answers.clone());
        registry.register(
            "blocked",
            "Names blocked, by list and categories",
            blocked.clone(),
        );
        registry.register(
            "upstream_seconds",
            "Seconds an upstream took to answer",
            upstream_seconds.clone(),
        );
        registry.register("reloads", "List reloads, by outcome", reloads.clone());
        Metrics {
            registry,
            queries,
            answers,
            blocked,
            upstream_seconds,
            reloads,
        }
    }
}

impl Metrics {
    /// Counts one of `family` labelled `kind`.
    pub fn count(family: &Family<Kind, Counter>, kind: &str) {
        family
            .get_or_create(&Kind {
                kind: kind.to_string(),
            })
            .inc();
    }

    /// The text `GET /metrics` answers.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// How long an HTTP connection may take to send its request.
const HTTP_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `addr` for `GET /metrics` and `GET /healthz`.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Listen {
            addr,
            transport: "http",
            source,
        })
}

/// Answers `GET /metrics` and `GET /healthz` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let metrics = metrics.clone();
                    async move { Ok::<_, Infallible>(route(&request, &metrics)) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(HTTP_READ_TIMEOUT, connection).await;
        });
    }
}

/// The response to one request.
fn route(request: &Request<hyper::body::Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let (status, body, kind) = match (request.method().as_str(), request.uri().path()) {
        ("GET", "/metrics") => (
            StatusCode::OK,
            metrics.encode(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        ("GET", "/healthz") => (StatusCode::OK, "ok\n".to_string(), "text/plain"),
        _ => (
            StatusCode::NOT_FOUND,
            "GET /metrics or /healthz\n".to_string(),
            "text/plain",
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = kind.parse() {
        response.headers_mut().insert("content-type", value);
    }
    response
}
