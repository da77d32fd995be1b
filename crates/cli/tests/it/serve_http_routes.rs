//! `phishbloom serve`'s routes over HTTP, one server taken through each in turn: health and
//! lists, checks and their errors, the file with its ETag, deltas, writes with the bearer
//! token, removals, unknown routes, and the metrics every answer leaves.

use crate::serve_common;

use std::path::PathBuf;

use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};
use serve_common::*;

/// A server of two lists (`phish`, URL entries with room to add, and `pw`, whole keys) that
/// takes writes with a token, with a client.
/// (Fields drop in order: the server stops before its folder goes.)
struct Routes {
    server: Server,
    http: Client,
    phish: PathBuf,
    dir: tempfile::TempDir,
}

impl Routes {
    /// The server's URL of `path`.
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.http)
    }
}

/// The entries the write steps add: one new, one listed already.
fn new_entries() -> Value {
    json!({"entries": ["new1.example", "evil1.example"]})
}

#[test]
fn every_route_and_error() {
    let r = start();
    let lists = health_and_lists(&r);
    checks_name_the_deciding_list(&r);
    check_errors(&r);
    file_etag_and_refused_deltas(&r, &lists);
    writes_need_the_token_and_give_deltas(&r);
    removals_and_refused_writes(&r);
    unknown_routes_and_metrics(&r);
}

/// Starts the server: a batch cap of 50 and a body cap of 20,000 bytes.
fn start() -> Routes {
    let dir = tempfile::tempdir().unwrap();
    // Room to add (a list sized for exactly its entries is full).
    let phish = build_urls_sized(dir.path(), "phish", &phish_entries(), 2000);
    let keys: Vec<String> = (0..100).map(|i| format!("secret{i}")).collect();
    let leaked = build_keys(dir.path(), "leaked", &keys, 1000);
    let spec = format!("pw={}", leaked.display());
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret-token\n").unwrap();
    let server = Server::start(
        dir.path(),
        &[
            phish.to_str().unwrap(),
            &spec,
            "--token-file",
            token.to_str().unwrap(),
            "--max-batch",
            "50",
            "--max-body",
            "20000",
        ],
    );

    Routes {
        server,
        http: client(),
        phish,
        dir,
    }
}

/// `/healthz` and `/v1/lists`; answers the lists.
fn health_and_lists(r: &Routes) -> Vec<Value> {
    let http = &r.http;
    let phish = &r.phish;
    let url = |path: &str| r.url(path);
    // Health and lists.
    let health: Value = http.get(url("/healthz")).send().unwrap().json().unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["lists"].as_array().map(Vec::len), Some(2));
    let lists: Value = http.get(url("/v1/lists")).send().unwrap().json().unwrap();
    let lists = lists["lists"].as_array().unwrap();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0]["name"], "phish");
    assert_eq!(lists[0]["kind"], "blocked");
    assert_eq!(lists[0]["version"], 1);
    assert_eq!(lists[0]["entries"], 1000);
    assert_eq!(lists[0]["bytes"], std::fs::metadata(phish).unwrap().len());
    assert_eq!(lists[0]["fingerprint"].as_str().unwrap().len(), 32);
    assert!(lists[0]["loaded_at"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(lists[1]["name"], "pw");
    assert_eq!(lists[1]["scheme"], "exact");
    lists.clone()
}

/// Checks against every list: the deciding list is named; clean everywhere is null; a batch
/// answers an item that is no URL `invalid`.
fn checks_name_the_deciding_list(r: &Routes) {
    let http = &r.http;
    let url = |path: &str| r.url(path);
    // Checking against every list: the deciding list is named; clean everywhere is null.
    let got: Value = http
        .get(url("/v1/check?list=pw&url=secret7"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        (got["verdict"].clone(), got["list"].clone()),
        (json!("listed"), json!("pw"))
    );
    let got: Value = http
        .get(url("/v1/check?url=http://evil5.example/"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(got["list"], "phish");
    let got: Value = http
        .get(url("/v1/check?url=http://fine.example/"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        (got["verdict"].clone(), got["list"].clone()),
        (json!("clean"), Value::Null)
    );

    // A batch with one item that is no URL answers that item `invalid` and the others as
    // usual (200), as `check` answers every line.
    let response = http
        .post(url("/v1/check"))
        .json(&json!({"urls": ["http://evil1.example/", "http://[::1", "http://fine.example/"]}))
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().unwrap();
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["verdict"], "listed");
    assert_eq!(results[1]["verdict"], "invalid");
    assert!(!results[1]["error"].as_str().unwrap().is_empty());
    assert_eq!(results[2]["verdict"], "clean");
}

/// The check routes' errors: GET, then POST bodies.
fn check_errors(r: &Routes) {
    let http = &r.http;
    let url = |path: &str| r.url(path);
    // Errors of the check routes: GET, then POST bodies.
    for (path, status, needle) in [
        ("/v1/check", StatusCode::BAD_REQUEST, "give the URL"),
        (
            "/v1/check?url=x&list=nope",
            StatusCode::NOT_FOUND,
            "no list named \"nope\"",
        ),
        (
            "/v1/check?url=http://[::1",
            StatusCode::BAD_REQUEST,
            "is not a URL",
        ),
        ("/v1/check?url=%FF%FE", StatusCode::BAD_REQUEST, "not UTF-8"),
    ] {
        let e = error_of(http.get(url(path)).send().unwrap(), status);
        assert!(e.contains(needle), "{path}: {e}");
    }
    let many: Vec<String> = (0..51).map(|i| format!("http://a{i}.example/")).collect();
    let json_of = |value: Value| serde_json::to_vec(&value).unwrap();
    for (body, content_type, status, needle) in [
        (
            b"{\"urls\": [".to_vec(),
            "application/json",
            StatusCode::BAD_REQUEST,
            "not {\"urls\": [...]}",
        ),
        (
            b"{\"urls\": \"x\"}".to_vec(),
            "application/json",
            StatusCode::BAD_REQUEST,
            "not {\"urls\": [...]}",
        ),
        (
            b"{\"urls\": [\"\xff\"]}".to_vec(),
            "application/json",
            StatusCode::BAD_REQUEST,
            "not UTF-8",
        ),
        (
            b"{}".to_vec(),
            "application/xml",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "application/x-ndjson",
        ),
        (
            json_of(json!({ "urls": many })),
            "application/json",
            StatusCode::PAYLOAD_TOO_LARGE,
            "over the cap of 50",
        ),
        (
            vec![b' '; 30_000],
            "application/json",
            StatusCode::PAYLOAD_TOO_LARGE,
            "over 20000 bytes",
        ),
    ] {
        let response = http
            .post(url("/v1/check"))
            .header("content-type", content_type)
            .body(body)
            .send()
            .unwrap();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            // The body may be unread: the connection is not reused.
            assert_eq!(response.headers()["connection"], "close", "{needle}");
        }
        let e = error_of(response, status);
        assert!(e.contains(needle), "{needle}: {e}");
    }
}

/// The file with its ETag (and 304); unknown lists and deltas refused.
fn file_etag_and_refused_deltas(r: &Routes, lists: &[Value]) {
    let http = &r.http;
    let phish = &r.phish;
    let url = |path: &str| r.url(path);
    // The file, its ETag and 304.
    let response = http.get(url("/v1/lists/phish/file")).send().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(
        etag,
        format!("\"{}\"", lists[0]["checksum"].as_str().unwrap())
    );
    assert_eq!(
        response.bytes().unwrap().to_vec(),
        std::fs::read(phish).unwrap()
    );
    let response = http
        .get(url("/v1/lists/phish/file"))
        .header("if-none-match", &etag)
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(response.headers()["etag"].to_str().unwrap(), etag);
    let response = http
        .get(url("/v1/lists/phish/file"))
        .header("if-none-match", "\"0000\"")
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    // Unknown lists; deltas start from versions the server kept, none for a list without
    // verification.
    for (path, status, needle) in [
        (
            "/v1/lists/nope/file",
            StatusCode::NOT_FOUND,
            "no list named",
        ),
        (
            "/v1/lists/pw/delta?from=1",
            StatusCode::NOT_FOUND,
            "no delta of \"pw\" from version 1",
        ),
        ("/v1/lists/phish/delta", StatusCode::BAD_REQUEST, ""),
        (
            "/v1/lists/nope/delta?from=1",
            StatusCode::NOT_FOUND,
            "no list named",
        ),
    ] {
        let e = error_of(http.get(url(path)).send().unwrap(), status);
        assert!(e.contains(needle), "{path}: {e}");
    }
}

/// Writes need the bearer token, compared whole; a write gives a delta from the version before.
fn writes_need_the_token_and_give_deltas(r: &Routes) {
    let http = &r.http;
    let dir = &r.dir;
    let phish = &r.phish;
    let url = |path: &str| r.url(path);
    let version_1 = dir.path().join("phish-v1.bloom");
    std::fs::copy(phish, &version_1).unwrap();

    // Writes: the bearer token, compared whole.
    let entries = new_entries();
    let e = error_of(
        http.post(url("/v1/lists/phish/entries"))
            .json(&entries)
            .send()
            .unwrap(),
        StatusCode::UNAUTHORIZED,
    );
    assert!(e.contains("Authorization: Bearer"), "{e}");
    let wrong = http
        .post(url("/v1/lists/phish/entries"))
        .bearer_auth("s3cret-toke")
        .json(&entries)
        .send()
        .unwrap();
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
    error_of(wrong, StatusCode::UNAUTHORIZED);
    let added: Value = http
        .post(url("/v1/lists/phish/entries"))
        .bearer_auth("s3cret-token")
        .json(&entries)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        added,
        json!({"list": "phish", "changed": 1, "unchanged": 1, "version": 2, "entries": 1001})
    );
    // The delta from version 1 turns a copy of version 1 into version 2.
    let delta = http
        .get(url("/v1/lists/phish/delta?from=1"))
        .send()
        .unwrap();
    assert_eq!(delta.status(), StatusCode::OK);
    let delta_file = dir.path().join("1-2.delta");
    std::fs::write(&delta_file, delta.bytes().unwrap()).unwrap();
    phishbloom(
        &[
            "apply",
            version_1.to_str().unwrap(),
            delta_file.to_str().unwrap(),
        ],
        b"",
    );
    let out = phishbloom(
        &[
            "check",
            version_1.to_str().unwrap(),
            "http://x.new1.example/",
        ],
        b"",
    );
    assert!(String::from_utf8(out).unwrap().contains("\tlisted\t"));
    let e = error_of(
        http.get(url("/v1/lists/phish/delta?from=7"))
            .send()
            .unwrap(),
        StatusCode::NOT_FOUND,
    );
    assert!(e.contains("versions kept ([1, 2]"), "{e}");
    let lists_now: Value = http.get(url("/v1/lists")).send().unwrap().json().unwrap();
    assert_eq!(lists_now["lists"][0]["delta_from"], json!([1, 2]));
    let got: Value = http
        .get(url("/v1/check?url=http://x.new1.example/"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(got["verdict"], "listed");
    // Saved over the file: the CLI sees it too.
    let cli = phishbloom(
        &["check", phish.to_str().unwrap(), "http://x.new1.example/"],
        b"",
    );
    assert!(String::from_utf8(cli).unwrap().contains("\tlisted\t"));
    let e = error_of(
        http.post(url("/v1/lists/phish/entries"))
            .bearer_auth("s3cret-token")
            .json(&json!({"entries": ["http://[::1"]}))
            .send()
            .unwrap(),
        StatusCode::BAD_REQUEST,
    );
    assert!(e.contains("[::1"), "{e}");
}

/// Removals by the verification section, and the writes refused.
fn removals_and_refused_writes(r: &Routes) {
    let http = &r.http;
    let url = |path: &str| r.url(path);
    let entries = new_entries();
    // A verified Bloom list removes by its verification section: the entry answers clean.
    let removed: Value = http
        .delete(url("/v1/lists/phish/entries"))
        .bearer_auth("s3cret-token")
        .json(&json!({"entries": ["new1.example"]}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        (removed["changed"].clone(), removed["version"].clone()),
        (json!(1), json!(3))
    );
    let got: Value = http
        .get(url("/v1/check?url=http://x.new1.example/"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(got["verdict"], "clean");
    // Removing what is not listed changes nothing: 409.
    let e = error_of(
        http.delete(url("/v1/lists/phish/entries"))
            .bearer_auth("s3cret-token")
            .json(&json!({"entries": ["evil2.example", "never-listed.example"]}))
            .send()
            .unwrap(),
        StatusCode::CONFLICT,
    );
    assert!(e.contains("never-listed.example"), "{e}");
    // A list without a verification section cannot remove: 409.
    error_of(
        http.delete(url("/v1/lists/pw/entries"))
            .bearer_auth("s3cret-token")
            .json(&json!({"entries": ["secret1"]}))
            .send()
            .unwrap(),
        StatusCode::CONFLICT,
    );
    error_of(
        http.post(url("/v1/lists/nope/entries"))
            .bearer_auth("s3cret-token")
            .json(&entries)
            .send()
            .unwrap(),
        StatusCode::NOT_FOUND,
    );
    error_of(
        http.post(url("/v1/lists/phish/entries"))
            .bearer_auth("s3cret-token")
            .body("{")
            .send()
            .unwrap(),
        StatusCode::BAD_REQUEST,
    );
}

/// Unknown routes and methods, then the metrics of every answer given.
fn unknown_routes_and_metrics(r: &Routes) {
    let http = &r.http;
    let url = |path: &str| r.url(path);
    // Unknown routes and methods.
    error_of(
        http.get(url("/v2/nothing")).send().unwrap(),
        StatusCode::NOT_FOUND,
    );
    error_of(
        http.put(url("/v1/check")).send().unwrap(),
        StatusCode::METHOD_NOT_ALLOWED,
    );

    let metrics = http.get(url("/metrics")).send().unwrap().text().unwrap();
    for series in [
        "route=\"/v1/lists/{name}/file\",status=\"304\"",
        "route=\"/v1/check\",status=\"413\"",
        "route=\"/v1/lists/{name}/entries\",status=\"401\"",
        "route=\"/v1/lists/{name}/delta\",status=\"200\"",
        "route=\"unmatched\",status=\"404\"",
        "phishbloom_list_version{list=\"phish\"} 3",
    ] {
        assert!(metrics.contains(series), "{series} missing from\n{metrics}");
    }
}

#[test]
fn a_list_older_than_stale_after_makes_healthz_degraded_but_not_readyz() {
    let dir = tempfile::tempdir().unwrap();
    let list = crate::serve_common::build_urls(dir.path(), "phish", &["evil.example".into()]);
    let server = crate::serve_common::Server::start(
        dir.path(),
        &[list.to_str().unwrap(), "--stale-after", "1s"],
    );
    let http = crate::serve_common::client();
    let get = |path: &str| http.get(format!("{}{path}", server.http)).send().unwrap();
    let fresh: Value = get("/healthz").json().unwrap();
    assert_eq!(fresh["status"], "ok", "{fresh}");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let stale: Value = get("/healthz").json().unwrap();
    assert_eq!(stale["status"], "degraded", "{stale}");
    assert_eq!(stale["lists"][0]["stale"], true, "{stale}");
    assert!(
        stale["lists"][0]["age_seconds"].as_u64().unwrap() >= 2,
        "{stale}"
    );
    // Still answering from the list it has: ready.
    assert_eq!(get("/readyz").status().as_u16(), 200);
}
