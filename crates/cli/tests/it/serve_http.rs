//! `phishbloom serve`'s answers over HTTP, asked with a real client (reqwest) on loopback:
//! JSON and text batches equal to what `phishbloom check` prints, removals from a list that
//! deletes, and writes off without a token file. Every route and error is in
//! `serve_http_routes`; connections and shutdown in `serve_http_connections`.

use crate::serve_common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};
use serve_common::*;

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
