//! `phishbloom serve` over HTTP, asked with a real client (reqwest) on loopback: every route,
//! status and error, answers equal to `phishbloom check --json`, limits and timeouts, and the
//! graceful drain on SIGTERM.

use crate::serve_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::StatusCode;
use serde_json::{json, Value};
use serve_common::*;

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The error message of a JSON error answer with `status`.
fn error_of(response: reqwest::blocking::Response, status: StatusCode) -> String {
    assert_eq!(response.status(), status);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body: Value = response.json().unwrap();
    body["error"].as_str().unwrap().to_owned()
}

/// `phishbloom check --json FILE` lines for `queries`, as JSON values.
fn cli_answers(file: &std::path::Path, queries: &[String]) -> Vec<Value> {
    let stdin = queries.join("\n") + "\n";
    let out = phishbloom(
        &["check", "--json", file.to_str().unwrap()],
        stdin.as_bytes(),
    );
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Without the `list` field: what `check --json` prints.
fn without_list(mut value: Value) -> Value {
    value.as_object_mut().unwrap().remove("list");
    value
}

#[test]
fn checks_agree_with_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let server = Server::start(dir.path(), &[phish.to_str().unwrap()]);
    let http = client();
    let queries = queries();
    let expected = cli_answers(&phish, &queries);
    assert!(expected.iter().any(|v| v["verdict"] == "listed"));
    assert!(expected.iter().any(|v| v["verdict"] == "allowed"));
    assert!(expected.iter().any(|v| v["verdict"] == "clean"));

    // One at a time.
    for (query, want) in queries.iter().zip(&expected).step_by(5) {
        let got: Value = http
            .get(format!("{}/v1/check", server.http))
            .query(&[("url", query)])
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(got["list"], "phish");
        assert_eq!(&without_list(got), want, "{query}");
    }

    // A JSON batch.
    let response = http
        .post(format!("{}/v1/check?list=phish", server.http))
        .json(&json!({ "urls": queries }))
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().unwrap();
    let results: Vec<Value> = body["results"].as_array().unwrap().clone();
    assert_eq!(
        results.into_iter().map(without_list).collect::<Vec<_>>(),
        expected
    );

    // NDJSON out for a JSON batch, and NDJSON in and out: byte for byte the CLI's lines with the
    // list added.
    let cli_lines = phishbloom(
        &["check", "--json", phish.to_str().unwrap()],
        (queries.join("\n") + "\n").as_bytes(),
    );
    let with_list: Vec<u8> = String::from_utf8(cli_lines)
        .unwrap()
        .lines()
        .flat_map(|l| format!("{},\"list\":\"phish\"}}\n", &l[..l.len() - 1]).into_bytes())
        .collect();
    let response = http
        .post(format!("{}/v1/check", server.http))
        .header("accept", "application/x-ndjson")
        .json(&json!({ "urls": queries }))
        .send()
        .unwrap();
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    assert_eq!(response.bytes().unwrap().to_vec(), with_list);
    let ndjson: String = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            if i % 2 == 0 {
                format!("{}\n", json!(q))
            } else {
                format!("{}\n\n", json!({ "url": q }))
            }
        })
        .collect();
    let response = http
        .post(format!("{}/v1/check", server.http))
        .header("content-type", "application/x-ndjson")
        .body(ndjson)
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.bytes().unwrap().to_vec(), with_list);

    // Bad NDJSON lines answer an error in their place; the stream goes on.
    let response = http
        .post(format!("{}/v1/check", server.http))
        .header("content-type", "application/x-ndjson")
        .body("\"http://evil3.example/\"\nnot json\n\"http://[::1\"\n\"http://clean.example/\"\n")
        .send()
        .unwrap();
    let lines: Vec<Value> = response
        .text()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["verdict"], "listed");
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("not a JSON string"));
    // A line that is no URL is answered in place, as `check --json` answers it.
    assert_eq!(lines[2]["verdict"], "invalid");
    assert_eq!(lines[2]["listed"], false);
    assert!(!lines[2]["error"].as_str().unwrap().is_empty());
    assert_eq!(lines[3]["verdict"], "clean");

    // The metrics counted them.
    let metrics = http
        .get(format!("{}/metrics", server.http))
        .send()
        .unwrap()
        .text()
        .unwrap();
    for series in [
        "phishbloom_http_requests_total{route=\"/v1/check\",status=\"200\"}",
        "phishbloom_http_request_duration_seconds_bucket{",
        "phishbloom_urls_checked_total",
        "phishbloom_urls_listed_total",
        "phishbloom_list_version{list=\"phish\"} 1",
        "phishbloom_list_entries{list=\"phish\"} 1000",
    ] {
        assert!(metrics.contains(series), "{series} missing from\n{metrics}");
    }
    let checked: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("phishbloom_urls_checked_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(checked >= 3 * queries.len() as u64);
}

/// A text batch (`Content-Type: text/plain`, one URL per line) is answered with exactly the
/// TSV lines `phishbloom check` prints for the same lines, by one list, within the caps of the
/// other batches.
#[test]
fn text_batches_answer_byte_for_byte_as_check() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let keys: Vec<String> = (0..10).map(|i| format!("secret{i}")).collect();
    let leaked = build_keys(dir.path(), "leaked", &keys, 100);
    let spec = format!("pw={}", leaked.display());
    let server = Server::start(
        dir.path(),
        &[phish.to_str().unwrap(), &spec, "--max-body", "200000"],
    );
    let http = client();
    let post = |query: &str, content_type: &str, body: Vec<u8>| {
        http.post(format!("{}/v1/check{query}", server.http))
            .header("content-type", content_type)
            .body(body)
            .send()
            .unwrap()
    };

    // Listed (in several spellings), allowed and clean URLs (more lines than one piece of the
    // answer holds), then a blank line, a CRLF line, a line that is no URL, lines that are not
    // UTF-8, a line of spaces, a key, and a last line without its newline.
    let mut text = (queries().join("\n") + "\n").repeat(8).into_bytes();
    assert!(text.iter().filter(|&&b| b == b'\n').count() > 2048);
    text.extend_from_slice(
        b"\nhttp://evil3.example/a\r\nhttp://[::1\n\xff\xfe.example\r\nhttp://x.example/\xc3(\n   \n\
          secret3\r\n\r\nhttp://phish7.example/login",
    );
    for (list, file) in [("phish", &phish), ("pw", &leaked)] {
        let expected = phishbloom(&["check", file.to_str().unwrap()], &text);
        let response = post(&format!("?list={list}"), "text/plain", text.clone());
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/tab-separated-values"
        );
        let got = response.bytes().unwrap().to_vec();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{list}"
        );
        assert_eq!(got, expected, "{list}");
        let lines = String::from_utf8_lossy(&got).into_owned();
        for verdict in ["\tlisted\t", "\tclean\n"] {
            assert!(
                lines.contains(verdict),
                "{list}: no {verdict:?} in\n{lines}"
            );
        }
        if list == "phish" {
            for verdict in [
                "\tallowed\t",
                "\tinvalid\t",
                "http://evil3.example/a\tlisted",
            ] {
                assert!(lines.contains(verdict), "no {verdict:?} in\n{lines}");
            }
        }
    }
    // A charset is allowed; the last newline ends the last line; no line, no answer.
    for body in [&b"http://evil3.example/\n"[..], b"\n", b"\r\n", b""] {
        let expected = phishbloom(&["check", phish.to_str().unwrap()], body);
        let response = post("?list=phish", "text/plain; charset=utf-8", body.to_vec());
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.bytes().unwrap().to_vec(), expected, "{body:?}");
    }

    // One list answers: several served and none named is the request's mistake; an unknown list
    // is 404. Caps: the body, the lines in one batch, one line.
    let long_line = format!(
        "http://a.example/\nhttp://b.example/{}\n",
        "x".repeat(70_000)
    );
    for (query, body, status, needle) in [
        (
            "",
            b"http://evil3.example/\n".to_vec(),
            StatusCode::BAD_REQUEST,
            "name it with ?list=NAME (served: phish, pw)",
        ),
        (
            "?list=nope",
            b"http://evil3.example/\n".to_vec(),
            StatusCode::NOT_FOUND,
            "no list named \"nope\"",
        ),
        (
            "?list=phish",
            vec![b'a'; 200_001],
            StatusCode::PAYLOAD_TOO_LARGE,
            "over 200000 bytes",
        ),
        (
            "?list=phish",
            "a\n".repeat(10_001).into_bytes(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "10001 lines in one batch, over the cap of 10000",
        ),
        (
            "?list=phish",
            long_line.into_bytes(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "line 2 is longer than 65536 bytes",
        ),
    ] {
        let e = error_of(post(query, "text/plain", body), status);
        assert!(e.contains(needle), "{needle}: {e}");
    }
    // Another media type is refused with the ones accepted.
    let e = error_of(
        post("?list=phish", "text/csv", b"http://a.example/\n".to_vec()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
    );
    for accepted in ["application/json", "application/x-ndjson", "text/plain"] {
        assert!(e.contains(accepted), "{accepted}: {e}");
    }
}

#[test]
fn every_route_and_error() {
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
    let http = client();
    let url = |path: &str| format!("{}{path}", server.http);

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
    assert_eq!(lists[0]["bytes"], std::fs::metadata(&phish).unwrap().len());
    assert_eq!(lists[0]["fingerprint"].as_str().unwrap().len(), 32);
    assert!(lists[0]["loaded_at"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(lists[1]["name"], "pw");
    assert_eq!(lists[1]["scheme"], "exact");

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
        std::fs::read(&phish).unwrap()
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
    let version_1 = dir.path().join("phish-v1.bloom");
    std::fs::copy(&phish, &version_1).unwrap();

    // Writes: the bearer token, compared whole.
    let entries = json!({"entries": ["new1.example", "evil1.example"]});
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
fn a_list_that_deletes_takes_removals() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..50).map(|i| format!("user{i}@example.com")).collect();
    let list = build_keys_of(
        dir.path(),
        "spam",
        &keys,
        100,
        &["--kind", "cuckoo", "--verify"],
    );
    let token = dir.path().join("token");
    std::fs::write(&token, "t").unwrap();
    let server = Server::start(
        dir.path(),
        &[
            list.to_str().unwrap(),
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    let http = client();
    let check = |key: &str| -> Value {
        http.get(format!("{}/v1/check", server.http))
            .query(&[("url", key), ("list", "spam")])
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    assert_eq!(check("user7@example.com")["verdict"], "listed");
    let lists: Value = http
        .get(format!("{}/v1/lists", server.http))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(lists["lists"][0]["kind"], "cuckoo");
    assert_eq!(lists["lists"][0]["supports_remove"], true);
    // A text batch slow to arrive (answered as it comes) holds the list only while a slice is
    // answered: an edit and checks go on meanwhile, long before its body timeout.
    let mut slow = TcpStream::connect(server.http.trim_start_matches("http://")).unwrap();
    slow.write_all(
        b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n\
          Content-Length: 100000\r\n\r\nuser7@example.com\nuser8@",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let removed: Value = http
        .delete(format!("{}/v1/lists/spam/entries", server.http))
        .bearer_auth("t")
        .json(&json!({"entries": ["user7@example.com"]}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(removed["changed"], 1);
    assert_eq!(removed["entries"], 49);
    assert_eq!(check("user7@example.com")["verdict"], "clean");
    assert_eq!(check("user8@example.com")["verdict"], "listed");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}");
    drop(slow);
    // Removing what is not listed changes nothing: 409, naming it.
    let e = error_of(
        http.delete(format!("{}/v1/lists/spam/entries", server.http))
            .bearer_auth("t")
            .json(&json!({"entries": ["user8@example.com", "nobody@example.com"]}))
            .send()
            .unwrap(),
        StatusCode::CONFLICT,
    );
    assert!(e.contains("nobody@example.com"), "{e}");
    assert_eq!(check("user8@example.com")["verdict"], "listed");
    // The file has the removal: the CLI agrees.
    let out = phishbloom(
        &[
            "check",
            list.to_str().unwrap(),
            "user7@example.com",
            "user8@example.com",
        ],
        b"",
    );
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with("user7@example.com\tclean\n"), "{out}");
}

#[test]
fn writes_are_off_without_a_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let server = Server::start(dir.path(), &[phish.to_str().unwrap()]);
    let response = client()
        .post(format!("{}/v1/lists/phish/entries", server.http))
        .bearer_auth("anything")
        .json(&json!({"entries": ["x.example"]}))
        .send()
        .unwrap();
    let e = error_of(response, StatusCode::FORBIDDEN);
    assert!(e.contains("--token-file"), "{e}");
}

/// Asserts that `server` still answers `/healthz` with 200.
fn assert_healthy(server: &Server) {
    assert_eq!(
        client()
            .get(format!("{}/healthz", server.http))
            .send()
            .unwrap()
            .status(),
        StatusCode::OK
    );
}

/// Reads from `stream` until it is closed; returns what came and how long it took.
fn read_to_close(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let start = Instant::now();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    (got, start.elapsed())
}

#[test]
fn half_sent_requests_and_idle_connections_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let server = Server::start(
        dir.path(),
        &[
            phish.to_str().unwrap(),
            "--header-timeout",
            "0.5",
            "--body-timeout",
            "0.5",
            "--idle-timeout",
            "1",
        ],
    );
    let addr = server.http.trim_start_matches("http://");
    let connect = || {
        let stream = TcpStream::connect(addr).unwrap();
        // A guard against a stuck connection: the test fails rather than hangs.
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    };

    // Headers that never end: closed after the header timeout.
    let mut stream = connect();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let (_, took) = read_to_close(&mut stream);
    assert!(took < Duration::from_secs(5), "{took:?}");

    // A body that stops half way: 408 with a JSON error, nothing answered — a JSON batch, and
    // a text batch long enough to be answered as it arrives.
    for request in [
        &b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"urls\": ["[..],
        b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nhttp://evil3.example/\nhttp://a.example/\n",
    ] {
        let mut stream = connect();
        stream.write_all(request).unwrap();
        let (got, took) = read_to_close(&mut stream);
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
        assert!(
            text.contains("{\"error\":\"the request body did not arrive") && !text.contains("listed"),
            "{text}"
        );
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    // A keep-alive connection left idle: answered, then closed after the idle timeout.
    let mut stream = connect();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (got, took) = read_to_close(&mut stream);
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(5),
        "{took:?}"
    );

    // Garbage instead of HTTP: a 400 and a closed connection.
    let mut stream = connect();
    stream.write_all(b"\x00\x01garbage\r\n\r\n").unwrap();
    let (got, _) = read_to_close(&mut stream);
    assert!(
        String::from_utf8_lossy(&got).starts_with("HTTP/1.1 400"),
        "{got:?}"
    );

    // The server is still well.
    assert_healthy(&server);
}

/// A client that goes away while its answer is still being written costs its own connection,
/// never the server. (`phishbloom` gives SIGPIPE back its default action so that `check … |
/// head` ends quietly; a server under that action dies at its next write to a connection its
/// client has closed — with every other client's connection.) Each round asks for a long
/// answer, a JSON batch (written whole, piece after piece) or a text batch (written as it is
/// answered), reads what has come of it and closes: the server's next write meets a closed
/// socket (a reset), and the one after it EPIPE.
#[test]
fn a_client_gone_mid_answer_costs_only_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let mut server = Server::start(
        dir.path(),
        &[phish.to_str().unwrap(), "--max-batch", "100000"],
    );
    let addr = server.http.trim_start_matches("http://").to_owned();
    // 100,000 URLs: answers of about 19 MB as JSON and 8 MB as text, written long after the
    // first bytes are read (and far more than the sockets' buffers hold as they start out).
    let urls: Vec<String> = (0..100_000)
        .map(|i| format!("http://www.evil{}.example/a/path?q={i}", i % 500))
        .collect();
    let text = urls.join("\n") + "\n";
    let json = serde_json::to_string(&json!({ "urls": urls })).unwrap();
    let request = |kind: &str, body: &str| {
        format!(
            "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let requests = [
        request("application/json", &json),
        request("text/plain", &text),
    ];
    for round in 0..4 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream.write_all(requests[round % 2].as_bytes()).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200", "round {round}");
        // What has come so far read, so that the close ends the connection plainly rather
        // than resetting it at once.
        stream.set_nonblocking(true).unwrap();
        let mut sink = vec![0u8; 1 << 20];
        while stream.read(&mut sink).is_ok_and(|n| n > 0) {}
        drop(stream);
        if let Some(status) = server.wait(Duration::from_millis(300)) {
            panic!(
                "round {round}: serve exited ({status}) when a client left: {}",
                server.log()
            );
        }
    }
    assert_healthy(&server);
}

#[test]
fn sigterm_drains_requests_in_flight_then_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let mut server = Server::start(dir.path(), &[phish.to_str().unwrap()]);
    let addr = server.http.trim_start_matches("http://").to_owned();
    // A request half sent when SIGTERM arrives...
    let body = serde_json::to_vec(&json!({"urls": ["http://evil2.example/"]})).unwrap();
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.signal(libc::SIGTERM);
    // ...no new connection is accepted...
    assert!(eventually(Duration::from_secs(5), || TcpStream::connect(
        &addr
    )
    .is_err()));
    // ...the one in flight is answered...
    stream.write_all(&body[5..]).unwrap();
    let (got, _) = read_to_close(&mut stream);
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"verdict\":\"listed\""), "{text}");
    // ...and the process exits 0.
    let status = server
        .wait(Duration::from_secs(10))
        .expect("serve exits after SIGTERM");
    assert_eq!(status.code(), Some(0), "{}", server.log());
}

/// A server whose standard error has no reader left (a log pipe whose reader is gone) still
/// stops on SIGTERM: the log lines it can no longer write are dropped, not a panic in the task
/// that handles the signals (nor, before `serve` ignored SIGPIPE, the end of the process).
#[test]
fn a_closed_log_pipe_does_not_stop_sigterm() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let phish = build_urls(dir.path(), "phish", &phish_entries());
    let mut child = std::process::Command::new(bin())
        .args(["serve", phish.to_str().unwrap(), "--http", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    let http = line.trim().strip_prefix("http ").unwrap().to_owned();
    // The log's reader goes; the server is asked something, so that it logs on.
    drop(child.stderr.take());
    assert_eq!(
        client()
            .get(format!("{http}/healthz"))
            .send()
            .unwrap()
            .status(),
        StatusCode::OK
    );
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let stopped = eventually(Duration::from_secs(10), || {
        child.try_wait().unwrap().is_some()
    });
    if !stopped {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    assert!(
        stopped,
        "serve did not stop on SIGTERM with its log pipe closed"
    );
    assert_eq!(status.code(), Some(0), "{status}");
}
