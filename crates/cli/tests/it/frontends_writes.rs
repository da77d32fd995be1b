//! Adds through `phishbloom serve` agree between its front ends. On a list built the
//! README's way (`build --ut1` of two categories with `--verify`, no `--capacity`), an
//! authenticated RESP `BF.ADD` and an HTTP `POST /v1/lists/NAME/entries` with a category both
//! succeed (and the entries are then listed) or both refuse with the same message; an HTTP add
//! without `"category"` to a multi-category list is a 400 naming the field; and a list that
//! cannot grow and is full (a small cuckoo list, filled) refuses over RESP (`CF.ADD`) and HTTP
//! the same way.

use crate::common;
use crate::serve_common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use common::build_ut1_list;
use serde_json::{json, Value};
use serve_common::{build_keys_of, Server};

/// The bearer token of the servers here.
const TOKEN: &str = "tok";

/// `phishbloom serve LIST` with writes allowed (a token file).
fn start_writable(dir: &Path, list: &Path) -> Server {
    let token = dir.join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    Server::start(
        dir,
        &[
            list.to_str().unwrap(),
            "--token-file",
            token.to_str().unwrap(),
        ],
    )
}

/// A raw RESP connection: each command's one-line reply, exactly as sent (`:1`, `-ERR …`).
struct Resp(BufReader<TcpStream>);

impl Resp {
    /// Connects and authenticates with the token.
    fn authenticated(server: &Server) -> Resp {
        let stream = TcpStream::connect(&server.resp).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut resp = Resp(BufReader::new(stream));
        assert_eq!(resp.command(&["AUTH", TOKEN]), "+OK");
        resp
    }

    /// Sends one command and returns its reply line (without CRLF); the replies used here are
    /// one line each (integers, simple strings, errors).
    fn command(&mut self, argv: &[&str]) -> String {
        let mut request = format!("*{}\r\n", argv.len());
        for arg in argv {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        self.0.get_mut().write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        self.0.read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    }
}

/// An add's outcome as both front ends can state it: success, or the refusal's message (a RESP
/// error without its `ERR` code; an HTTP error's `error` field).
#[derive(Debug, PartialEq)]
enum Outcome {
    Added,
    Refused(String),
}

/// The outcome of a RESP write reply.
fn resp_outcome(reply: &str) -> Outcome {
    match reply.strip_prefix('-') {
        Some(error) => Outcome::Refused(error.strip_prefix("ERR ").unwrap_or(error).to_owned()),
        None => {
            assert_eq!(reply, ":1", "a new entry is added (1)");
            Outcome::Added
        }
    }
}

/// `POST /v1/lists/NAME/entries` with the token: status and JSON body.
fn http_add(server: &Server, list: &str, body: Value) -> (u16, Value) {
    let response = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
        .post(format!("{}/v1/lists/{list}/entries", server.http))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// The outcome of an HTTP add: 200 with one entry changed, or a 4xx and its message.
fn http_outcome((status, body): &(u16, Value)) -> Outcome {
    if *status == 200 {
        assert_eq!(body["changed"], 1, "{body}");
        return Outcome::Added;
    }
    Outcome::Refused(body["error"].as_str().unwrap_or_default().to_owned())
}

/// What `GET /v1/check?url=URL` answers.
fn http_check(server: &Server, url: &str) -> Value {
    reqwest::blocking::Client::new()
        .get(format!("{}/v1/check", server.http))
        .query(&[("url", url)])
        .send()
        .unwrap()
        .json()
        .unwrap()
}

#[test]
fn resp_and_http_adds_agree_on_a_list_built_the_readme_way() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_ut1_list(dir.path(), "ut1", &[]);
    let server = start_writable(dir.path(), &list);
    let mut resp = Resp::authenticated(&server);

    let over_resp = resp.command(&["BF.ADD", "ut1", "newentry.example"]);
    let over_http = http_add(
        &server,
        "ut1",
        json!({ "entries": ["another-new.example"], "category": "phishing" }),
    );
    let (resp_says, http_says) = (resp_outcome(&over_resp), http_outcome(&over_http));
    assert_eq!(
        resp_says, http_says,
        "BF.ADD answered {over_resp:?}; POST /v1/lists/ut1/entries answered {} {}: both must \
         succeed, or both refuse with the same message",
        over_http.0, over_http.1
    );
    if let Outcome::Refused(message) = &http_says {
        assert!((400..500).contains(&over_http.0), "{over_http:?}");
        assert!(!message.is_empty());
        return;
    }
    // Both added: each front end sees both entries.
    for url in [
        "http://www.newentry.example/x",
        "http://another-new.example/",
    ] {
        assert_eq!(resp.command(&["BF.EXISTS", "ut1", url]), ":1", "{url}");
        assert_eq!(http_check(&server, url)["verdict"], "listed", "{url}");
    }
    let answer = http_check(&server, "http://another-new.example/");
    assert_eq!(answer["categories"], json!(["phishing"]), "{answer}");
}

#[test]
fn http_add_without_a_category_to_a_multi_category_list_is_a_400_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    // Room to add (a list sized for exactly its entries is full, and says so first).
    let list = build_ut1_list(dir.path(), "ut1", &["--capacity", "5000"]);
    let server = start_writable(dir.path(), &list);
    let (status, body) = http_add(
        &server,
        "ut1",
        json!({ "entries": ["uncategorized.example"] }),
    );
    let error = body["error"].as_str().unwrap_or_default();
    assert_eq!(
        status, 400,
        "an add without \"category\" to a list of two categories is the client's mistake: {body}"
    );
    assert!(
        error.contains("category") && !error.contains("--category"),
        "the error names the request's field `category` (not the CLI's --category): {error}"
    );
    // Nothing was added.
    assert_eq!(
        http_check(&server, "http://uncategorized.example/")["verdict"],
        "clean"
    );
}

#[test]
fn a_full_list_that_cannot_grow_refuses_the_same_over_resp_and_http() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..64).map(|i| format!("key{i}")).collect();
    let list = build_keys_of(
        dir.path(),
        "full",
        &keys,
        64,
        &["--kind", "cuckoo", "--verify"],
    );
    let server = start_writable(dir.path(), &list);
    // Fill it over HTTP, one new key at a time, until it refuses (bounded).
    let mut refusal = None;
    for i in 0..256 {
        let answer = http_add(&server, "full", json!({ "entries": [format!("fill{i}")] }));
        if answer.0 != 200 {
            refusal = Some(answer);
            break;
        }
    }
    let Some(filled) = refusal else {
        panic!("a cuckoo list of capacity 64 took 256 more keys over HTTP without refusing");
    };
    assert_eq!(filled.0, 409, "a full list is a conflict: {}", filled.1);

    // Now a new key each way: both refuse, with the same message, and neither is listed.
    let mut resp = Resp::authenticated(&server);
    let over_resp = resp.command(&["CF.ADD", "full", "one-more"]);
    let over_http = http_add(&server, "full", json!({ "entries": ["another-one"] }));
    assert!(
        over_resp.starts_with('-'),
        "CF.ADD on a full list: {over_resp}"
    );
    assert_eq!(over_http.0, 409, "HTTP add on a full list: {}", over_http.1);
    assert_eq!(
        resp_outcome(&over_resp),
        http_outcome(&over_http),
        "a full list refuses over RESP ({over_resp:?}) and HTTP ({}) with the same message",
        over_http.1
    );
    for key in ["one-more", "another-one"] {
        assert_eq!(resp.command(&["CF.EXISTS", "full", key]), ":0", "{key}");
    }
}
