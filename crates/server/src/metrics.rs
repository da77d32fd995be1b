//! [`Metrics`]: the counters, gauges and histograms `GET /metrics` exposes in Prometheus' text
//! format (through `prometheus-client`).
//!
//! Hot paths count in batches (one increment per request or per pipelined read, not per URL),
//! so the counters cost nothing measurable.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Metric, Registry};

/// Labels of an HTTP request: the route template (`/v1/check`, `/v1/lists/{name}/file`, …) and
/// the status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The matched route, or `unmatched`.
    pub route: String,
    /// The HTTP status code.
    pub status: u16,
}

/// The label of a latency histogram: the route.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// The matched route, or `unmatched`.
    pub route: String,
}

/// The label of per-list series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListLabels {
    /// The served list's name.
    pub list: String,
}

/// The label of Redis-protocol command counts.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CommandLabels {
    /// The command, upper case (`BF.EXISTS`), or `unknown`.
    pub command: String,
}

type HistogramFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// Every series the server exports.
pub struct Metrics {
    registry: Registry,
    /// HTTP requests by route and status.
    pub requests: Family<RequestLabels, Counter>,
    /// HTTP request latency by route, in seconds (time to the response head).
    pub latency: HistogramFamily,
    /// Redis-protocol commands by name.
    pub commands: Family<CommandLabels, Counter>,
    /// URLs and keys checked, over every protocol.
    pub checked: Counter,
    /// Of those, listed.
    pub listed: Counter,
    /// Reloads that swapped a new file in, by list.
    pub reloads: Family<ListLabels, Counter>,
    /// Reloads refused (unreadable or corrupt file; the old list keeps serving), by list.
    pub reload_failures: Family<ListLabels, Counter>,
    /// Of those, files of an older list version (a rollback), by list.
    pub reload_rollbacks: Family<ListLabels, Counter>,
    /// The served list version, by list.
    pub list_version: Family<ListLabels, Gauge>,
    /// Entries in the served list, by list.
    pub list_entries: Family<ListLabels, Gauge>,
    /// Bytes of the served list's file, by list.
    pub list_bytes: Family<ListLabels, Gauge>,
    /// Connections open now (HTTP and Redis protocol).
    pub connections: Gauge,
}

/// Latency buckets: 50 µs doubling 18 times, to about 6.5 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 18))
}

/// A new series of type `M`, registered as `name` with `help`; the handle kept to update it.
fn registered<M: Metric + Clone + Default>(registry: &mut Registry, name: &str, help: &str) -> M {
    let metric = M::default();
    registry.register(name, help, metric.clone());
    metric
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with every series registered (counters gain Prometheus' `_total` suffix).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("phishbloom");
        let r = &mut registry;
        let requests = registered(r, "http_requests", "HTTP requests by route and status");
        let latency: HistogramFamily = Family::new_with_constructor(latency_histogram);
        r.register(
            "http_request_duration_seconds",
            "HTTP request latency by route (to the response head)",
            latency.clone(),
        );
        let commands = registered(r, "resp_commands", "Redis-protocol commands by name");
        let checked = registered(
            r,
            "urls_checked",
            "URLs and keys checked (HTTP, Redis protocol)",
        );
        let listed = registered(r, "urls_listed", "Checked URLs and keys found listed");
        let reloads = registered(r, "reloads", "Reloads that swapped a new file in");
        let reload_failures = registered(
            r,
            "reload_failures",
            "Reloads refused because the new file could not be read or was corrupt",
        );
        let reload_rollbacks = registered(
            r,
            "reload_rollbacks",
            "Reloads refused because the new file holds an older list version, by list",
        );
        let list_version = registered(r, "list_version", "Served list version");
        let list_entries = registered(r, "list_entries", "Entries in the served list");
        let list_bytes = registered(r, "list_bytes", "Bytes of the served list's file image");
        let connections = registered(r, "connections", "Open connections");
        Metrics {
            registry,
            requests,
            latency,
            commands,
            checked,
            listed,
            reloads,
            reload_failures,
            reload_rollbacks,
            list_version,
            list_entries,
            list_bytes,
            connections,
        }
    }

    /// The exposition text (`text/plain; version=0.0.4` … OpenMetrics text, which Prometheus
    /// reads).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// Counts `checked` items of which `listed` were listed.
    pub fn count_checks(&self, checked: u64, listed: u64) {
        self.checked.inc_by(checked);
        self.listed.inc_by(listed);
    }

    /// Sets a list's gauges.
    pub fn set_list(&self, list: &str, version: u64, entries: u64, bytes: u64) {
        let labels = ListLabels {
            list: list.to_owned(),
        };
        // Gauges are i64; a version, count or size beyond i64::MAX cannot occur in practice and
        // saturates.
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.list_version.get_or_create(&labels).set(clamp(version));
        self.list_entries.get_or_create(&labels).set(clamp(entries));
        self.list_bytes.get_or_create(&labels).set(clamp(bytes));
        // Every counter of a list is exported from the start, at 0: a rate or an alert on it
        // needs the series before its first event.
        let _ = self.reloads.get_or_create(&labels);
        let _ = self.reload_failures.get_or_create(&labels);
        let _ = self.reload_rollbacks.get_or_create(&labels);
    }

    /// Records one HTTP request.
    pub fn observe_request(&self, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .observe(seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_names_every_series_with_its_labels() {
        let metrics = Metrics::new();
        metrics.observe_request("/v1/check", 200, 0.001);
        metrics.count_checks(10, 3);
        metrics.set_list("phish", 7, 100, 4096);
        metrics
            .reload_failures
            .get_or_create(&ListLabels {
                list: "phish".into(),
            })
            .inc();
        let text = metrics.encode();
        assert!(
            text.contains("phishbloom_http_requests_total{route=\"/v1/check\",status=\"200\"} 1")
        );
        assert!(text.contains("phishbloom_urls_checked_total 10"));
        assert!(text.contains("phishbloom_urls_listed_total 3"));
        assert!(text.contains("phishbloom_list_version{list=\"phish\"} 7"));
        assert!(text.contains("phishbloom_reload_failures_total{list=\"phish\"} 1"));
        assert!(text.contains("phishbloom_http_request_duration_seconds_bucket"));
    }
}
