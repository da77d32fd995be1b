//! Reloading without a failed request: 10,000 HTTP requests while the served file is replaced
//! 20 times (answers switch to the new list, none fails); SIGHUP; a corrupt replacement refused
//! and counted while the old list keeps serving.

use crate::serve_common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use serve_common::*;

/// Lists A (`alpha.example` listed) and B (`beta.example` listed), built in `dir`.
fn two_lists(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let a = build_urls(
        dir,
        "a",
        &["alpha.example".to_string(), "common.example".to_string()],
    );
    let b = build_urls(
        dir,
        "b",
        &["beta.example".to_string(), "common.example".to_string()],
    );
    (a, b)
}

/// Replaces `target` by renaming a copy of `source` over it.
fn replace(source: &std::path::Path, target: &std::path::Path) {
    let tmp = target.with_extension("tmp");
    std::fs::copy(source, &tmp).unwrap();
    std::fs::rename(&tmp, target).unwrap();
}

fn verdict(
    client: &reqwest::blocking::Client,
    server: &Server,
    url: &str,
) -> Result<String, String> {
    let response = client
        .get(format!("{}/v1/check", server.http))
        .query(&[("url", url), ("list", "served")])
        .send()
        .map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("status {}", response.status()));
    }
    let body: Value = response.json().map_err(|e| e.to_string())?;
    Ok(body["verdict"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn ten_thousand_requests_while_the_file_is_replaced_twenty_times() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_lists(dir.path());
    let served = dir.path().join("served.bloom");
    replace(&b, &served);
    let server = Arc::new(Server::start(
        dir.path(),
        &[served.to_str().unwrap(), "--reload-interval", "0.05"],
    ));

    const REQUESTS: u64 = 10_000;
    const CLIENTS: u64 = 4;
    let failures = Arc::new(AtomicU64::new(0));
    let alpha_listed = Arc::new(AtomicU64::new(0));
    let beta_listed = Arc::new(AtomicU64::new(0));
    let completed = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (server, failures, alpha, beta, completed) = (
                server.clone(),
                failures.clone(),
                alpha_listed.clone(),
                beta_listed.clone(),
                completed.clone(),
            );
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                for i in 0..REQUESTS / CLIENTS {
                    let url = if (i + c) % 2 == 0 {
                        "http://alpha.example/x"
                    } else {
                        "http://beta.example/x"
                    };
                    match verdict(&client, &server, url) {
                        Ok(v) if v == "listed" && url.contains("alpha") => {
                            alpha.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(v) if v == "listed" => {
                            beta.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(v) if v == "clean" => {}
                        other => {
                            eprintln!("request failed: {other:?}");
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    completed.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // 20 replacements, A and B in turn after B (so B last), one every 450 requests answered.
    let replacer = {
        let completed = completed.clone();
        std::thread::spawn(move || {
            for i in 0..20u64 {
                while completed.load(Ordering::Relaxed) < (i + 1) * 450 {
                    std::thread::sleep(Duration::from_millis(2));
                }
                replace(if i % 2 == 0 { &a } else { &b }, &served);
            }
        })
    };
    for client in clients {
        client.join().unwrap();
    }
    replacer.join().unwrap();

    assert_eq!(failures.load(Ordering::Relaxed), 0, "{}", server.log());
    // Both lists answered during the run.
    assert!(alpha_listed.load(Ordering::Relaxed) > 0);
    assert!(beta_listed.load(Ordering::Relaxed) > 0);
    // After the last replacement (B), answers are B's.
    let client = reqwest::blocking::Client::new();
    assert!(
        eventually(Duration::from_secs(5), || {
            verdict(&client, &server, "http://beta.example/").as_deref() == Ok("listed")
                && verdict(&client, &server, "http://alpha.example/").as_deref() == Ok("clean")
        }),
        "{}",
        server.log()
    );
    let metrics = client
        .get(format!("{}/metrics", server.http))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let reloads: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("phishbloom_reloads_total{list=\"served\"} "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((2..=20).contains(&reloads), "{reloads} reloads");
}

#[test]
fn sighup_reloads_and_a_corrupt_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_lists(dir.path());
    let served = dir.path().join("served.bloom");
    replace(&a, &served);
    // Polling once an hour: only SIGHUP reloads here.
    let server = Server::start(
        dir.path(),
        &[served.to_str().unwrap(), "--reload-interval", "3600"],
    );
    let client = reqwest::blocking::Client::new();
    assert_eq!(
        verdict(&client, &server, "http://alpha.example/").unwrap(),
        "listed"
    );
    replace(&b, &served);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        verdict(&client, &server, "http://alpha.example/").unwrap(),
        "listed"
    );
    server.signal(libc::SIGHUP);
    assert!(eventually(Duration::from_secs(5), || {
        verdict(&client, &server, "http://beta.example/").as_deref() == Ok("listed")
    }));

    // A corrupt file: refused, logged, counted; B keeps serving.
    let mut bytes = std::fs::read(&a).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let tmp = dir.path().join("corrupt.tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, &served).unwrap();
    server.signal(libc::SIGHUP);
    let failures = || {
        let metrics = client
            .get(format!("{}/metrics", server.http))
            .send()
            .unwrap()
            .text()
            .unwrap();
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("phishbloom_reload_failures_total{list=\"served\"} "))
            .map(|v| v.to_owned())
    };
    assert!(eventually(Duration::from_secs(5), || failures().as_deref()
        == Some("1")));
    assert_eq!(
        verdict(&client, &server, "http://beta.example/").unwrap(),
        "listed"
    );
    assert!(server.log().contains("reload refused"), "{}", server.log());
    // An unreadable (missing) file: the same.
    std::fs::remove_file(&served).unwrap();
    server.signal(libc::SIGHUP);
    assert!(eventually(Duration::from_secs(5), || failures().as_deref()
        == Some("2")));
    assert_eq!(
        verdict(&client, &server, "http://beta.example/").unwrap(),
        "listed"
    );
}
