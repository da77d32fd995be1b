//! `phishbloom serve`'s connections over HTTP: half-sent requests and idle connections closed,
//! a client gone mid-answer costing only its own connection, the graceful drain on SIGTERM,
//! and SIGTERM obeyed with no reader left for the log.

use crate::serve_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use serve_common::*;

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
