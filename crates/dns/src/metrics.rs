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
use phishbloom_tls::Tls;
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

/// `/healthz`'s text for lists written at `written` (name, seconds since the epoch) at `now`:
/// `ok`, or `degraded` naming each list older than `stale_after` seconds and its age — a copy
/// the `sync` keeping it current no longer updates. The server answers either way (200).
pub fn health_text(written: &[(&str, u64)], now: u64, stale_after: Option<u64>) -> String {
    let stale: Vec<String> = written
        .iter()
        // A list of unknown age (written 0) is not called stale.
        .filter(|&&(_, at)| at > 0)
        .filter_map(|&(name, at)| {
            let age = now.saturating_sub(at);
            stale_after
                .is_some_and(|limit| age > limit)
                .then(|| format!("list {name} is {} old", age_text(age)))
        })
        .collect();
    if stale.is_empty() {
        "ok\n".to_string()
    } else {
        format!("degraded: {} (--stale-after)\n", stale.join(", "))
    }
}

/// An age in whole days, hours or seconds, the largest unit it reaches.
fn age_text(seconds: u64) -> String {
    match seconds {
        s if s >= 86_400 => format!("{} days", s / 86_400),
        s if s >= 3_600 => format!("{} hours", s / 3_600),
        s => format!("{s} seconds"),
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

/// Answers `GET /metrics` and `GET /healthz` on `listener` until the task is dropped, over TLS
/// with `tls` (its certificate as it is at each connection); `/healthz` asks `health`
/// ([`health_text`]).
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    health: Arc<dyn Fn() -> String + Send + Sync>,
    tls: Option<Arc<Tls>>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let (metrics, health) = (metrics.clone(), health.clone());
        let acceptor = tls.as_ref().map(|tls| tls.acceptor());
        tokio::spawn(async move {
            // The handshake has the time a whole exchange has.
            let Some(stream) = phishbloom_tls::accept(stream, acceptor, HTTP_READ_TIMEOUT).await
            else {
                return;
            };
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let (metrics, health) = (metrics.clone(), health.clone());
                    async move { Ok::<_, Infallible>(route(&request, &metrics, &*health)) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(HTTP_READ_TIMEOUT, connection).await;
        });
    }
}

/// The response to one request.
fn route(
    request: &Request<hyper::body::Incoming>,
    metrics: &Metrics,
    health: &dyn Fn() -> String,
) -> Response<Full<Bytes>> {
    let (status, body, kind) = match (request.method().as_str(), request.uri().path()) {
        ("GET", "/metrics") => (
            StatusCode::OK,
            metrics.encode(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        ("GET", "/healthz") => (StatusCode::OK, health(), "text/plain"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_is_degraded_by_a_list_older_than_stale_after() {
        let lists = [("phish", 1_000), ("fresh", 900_000)];
        assert_eq!(health_text(&lists, 1_000_000, None), "ok\n");
        assert_eq!(health_text(&lists, 1_000_000, Some(12 * 86_400)), "ok\n");
        assert_eq!(
            health_text(&lists, 1_000_000, Some(2 * 86_400)),
            "degraded: list phish is 11 days old (--stale-after)\n"
        );
        assert_eq!(health_text(&[("unknown", 0)], 1_000_000, Some(1)), "ok\n");
    }
}
