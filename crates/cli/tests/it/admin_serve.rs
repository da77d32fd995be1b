//! Monitoring a running `phishbloom serve`: `/healthz` says `degraded` and `/readyz` 503 while
//! reloads are refused, every list's counters are exported from 0, a served list does not go
//! back to an older version unless allowed, `/v1/lists` names the checksum of the file an HTTP
//! write saved, and logs to a file carry no colour codes.

use crate::serve_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use serve_common::*;

fn get(url: &str) -> (u16, String) {
    let response = reqwest::blocking::get(url).unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

fn json(url: &str) -> (u16, Value) {
    let (status, text) = get(url);
    (status, serde_json::from_str(&text).unwrap())
}

/// Replaces `target` by `bytes` the way a deployment does: a new file renamed over it.
fn replace(target: &Path, bytes: &[u8]) {
    let temp = target.with_extension("new");
    std::fs::write(&temp, bytes).unwrap();
    std::fs::rename(&temp, target).unwrap();
}

/// A served list of `n` entries `host-I.example` named `name` in `dir`.
fn list(dir: &Path, name: &str, n: usize) -> PathBuf {
    let entries: Vec<String> = (0..n).map(|i| format!("host-{i}.example")).collect();
    build_urls_sized(dir, name, &entries, 1000)
}

#[test]
fn health_says_degraded_and_ready_fails_while_reloads_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let served = list(dir.path(), "phish", 10);
    let good = std::fs::read(&served).unwrap();
    let server = Server::start(
        dir.path(),
        &[served.to_str().unwrap(), "--reload-interval", "0.05"],
    );
    let (status, health) = json(&format!("{}/healthz", server.http));
    assert_eq!((status, health["status"].as_str()), (200, Some("ok")));
    assert_eq!(get(&format!("{}/readyz", server.http)).0, 200);

    for damage in [b"garbage".to_vec(), good[..good.len() / 2].to_vec()] {
        replace(&served, &damage);
        assert!(
            eventually(Duration::from_secs(10), || {
                json(&format!("{}/healthz", server.http)).1["status"] == "degraded"
            }),
            "{}",
            server.log()
        );
        let (status, health) = json(&format!("{}/healthz", server.http));
        assert_eq!(status, 200, "liveness stays 200");
        let list = &health["lists"][0];
        assert_eq!(list["name"], "phish");
        assert!(
            list["last_error"].as_str().unwrap().contains("phish.bloom"),
            "{list}"
        );
        assert!(list["age_seconds"].as_u64().is_some(), "{list}");
        let (status, ready) = json(&format!("{}/readyz", server.http));
        assert_eq!((status, &ready["ready"]), (503, &Value::Bool(false)));
        // Still answering from the list it had.
        let (_, answer) = json(&format!(
            "{}/v1/check?url=http://host-1.example/",
            server.http
        ));
        assert_eq!(answer["verdict"], "listed");
        replace(&served, &good);
        assert!(eventually(Duration::from_secs(10), || {
            get(&format!("{}/readyz", server.http)).0 == 200
        }));
    }
}

#[test]
fn every_counter_of_a_list_is_exported_from_zero() {
    let dir = tempfile::tempdir().unwrap();
    let served = list(dir.path(), "phish", 10);
    let server = Server::start(dir.path(), &[served.to_str().unwrap()]);
    let (_, metrics) = get(&format!("{}/metrics", server.http));
    for counter in ["reloads", "reload_failures", "reload_rollbacks"] {
        let line = format!("phishbloom_{counter}_total{{list=\"phish\"}} 0");
        assert!(metrics.contains(&line), "no `{line}` in:\n{metrics}");
    }
}

#[test]
fn an_older_version_is_not_reloaded_unless_allowed() {
    for allow in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let served = list(dir.path(), "phish", 10);
        let old = std::fs::read(&served).unwrap();
        // Version 3 of the list, served.
        for host in ["new-1.example", "new-2.example"] {
            phishbloom(&["add", served.to_str().unwrap(), host], b"");
        }
        let mut args = vec![served.to_str().unwrap(), "--reload-interval", "0.05"];
        if allow {
            args.push("--allow-rollback");
        }
        let server = Server::start(dir.path(), &args);
        let version =
            || json(&format!("{}/v1/lists", server.http)).1["lists"][0]["version"].clone();
        assert_eq!(version(), 3);
        replace(&served, &old);
        let metrics = || get(&format!("{}/metrics", server.http)).1;
        if allow {
            assert!(eventually(Duration::from_secs(10), || version() == 1));
        } else {
            assert!(
                eventually(Duration::from_secs(10), || metrics()
                    .contains("phishbloom_reload_rollbacks_total{list=\"phish\"} 1")),
                "{}",
                server.log()
            );
            assert_eq!(version(), 3);
            let (_, health) = json(&format!("{}/healthz", server.http));
            let error = health["lists"][0]["last_error"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(error.contains("older than the version 3"), "{error}");
            // A rebuild of the same set from scratch (version 1) is no rollback: it loads.
            let fresh = dir.path().join("fresh");
            std::fs::create_dir(&fresh).unwrap();
            let mut entries: Vec<String> = (0..10).map(|i| format!("host-{i}.example")).collect();
            entries.extend(["new-1.example".to_string(), "new-2.example".to_string()]);
            let rebuilt = build_urls_sized(&fresh, "phish", &entries, 1000);
            replace(&served, &std::fs::read(&rebuilt).unwrap());
            assert!(
                eventually(Duration::from_secs(10), || version() == 1),
                "{}",
                server.log()
            );
        }
    }
}

#[test]
fn lists_name_the_saved_checksum_and_logs_carry_no_colour() {
    let dir = tempfile::tempdir().unwrap();
    let served = list(dir.path(), "phish", 10);
    let token = dir.path().join("token");
    std::fs::write(&token, "t0ken-for-tests\n").unwrap();
    let server = Server::start(
        dir.path(),
        &[
            served.to_str().unwrap(),
            "--token-file",
            token.to_str().unwrap(),
            "--reload-interval",
            "0.05",
        ],
    );
    let response = reqwest::blocking::Client::new()
        .post(format!("{}/v1/lists/phish/entries", server.http))
        .bearer_auth("t0ken-for-tests")
        .json(&serde_json::json!({"entries": ["added.example"]}))
        .send()
        .unwrap();
    assert!(response.status().is_success());
    let (_, lists) = json(&format!("{}/v1/lists", server.http));
    let checksum = lists["lists"][0]["checksum"].clone();
    let info: Value = serde_json::from_slice(&phishbloom(
        &["info", "--json", served.to_str().unwrap()],
        b"",
    ))
    .unwrap();
    assert_eq!(checksum, info["checksum"], "{lists}");
    // A refused reload logs an error line (to a file here, not a terminal).
    replace(&served, b"garbage");
    assert!(eventually(Duration::from_secs(10), || server
        .log()
        .contains("reload refused")));
    let log = server.log();
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log file:\n{log}"
    );
}
