//! `publish` and `sync` against The Update Framework's threat model, through the real executable:
//! an index replayed past its signed expiry, a server that sends forever or one byte a second,
//! a signing key handed over to a new one (and the old key then refused), and `serve --sign`
//! followed under `--trust`.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use crate::common::*;
use crate::sync::{add, hosts, list, publish, serve_list, sync, Killer, StaticServer};

#[test]
fn an_expired_index_is_refused_with_its_date_and_the_copy_kept() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 100), 1_000);
    let site = dir.path().join("site");
    let said = publish(&source, &site, &["--expires", "2s"]);
    assert!(said.contains("; current until 20"), "{said}");
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &[]).0, 0);
    let held = std::fs::read(&copy).unwrap();
    add(&source, &hosts("b", 10));
    std::thread::sleep(std::time::Duration::from_secs(3));
    // The index served is the old one, replayed past its expiry: refused, the copy kept.
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("expired at 20") && out.contains("UTC"),
        "{out}"
    );
    assert!(out.contains("the copy was kept"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held, "the copy was changed");
    // Published again (the default: current for 7 days), it is followed.
    let said = publish(&source, &site, &[]);
    assert!(said.contains("; current until"), "{said}");
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(info_json(&copy)["meta"]["version"], 2);
    // `--expires 0`: an index that never expires, as before expiry existed.
    let said = publish(&source, &site, &["--expires", "0"]);
    assert!(!said.contains("current until"), "{said}");
}

/// A server on a free loopback port that answers every request with a 200 whose body is
/// `body(stream)`'s writing (it stops at the first failed write: the client went away).
fn hostile_server(body: fn(&mut TcpStream) -> std::io::Result<()>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = [0u8; 4096];
                let _ = std::io::Read::read(&mut stream, &mut request);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_ok() {
                    let _ = body(&mut stream);
                }
            });
        }
    });
    url
}

#[test]
fn endless_and_trickling_servers_are_cut_off_and_the_copy_kept() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.bloom");
    let source = list(dir.path(), "phish", &hosts("a", 10), 100);
    std::fs::copy(&source, &copy).unwrap();
    let held = std::fs::read(&copy).unwrap();

    // An index that never ends: refused at an index's most bytes.
    let endless = hostile_server(|stream| loop {
        stream.write_all(&[b' '; 64 << 10])?;
    });
    let (code, out) = sync(&endless, &copy, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("more than the 1048576 bytes expected"),
        "{out}"
    );

    // One byte a second: cut off once the grace has passed, well before any timeout.
    let trickle = hostile_server(|stream| loop {
        stream.write_all(b" ")?;
        stream.flush()?;
        std::thread::sleep(std::time::Duration::from_secs(1));
    });
    let started = std::time::Instant::now();
    let (code, out) = sync(&trickle, &copy, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("stalling the download"), "{out}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(std::fs::read(&copy).unwrap(), held, "the copy was changed");
}

#[test]
fn a_rotation_is_followed_and_then_the_old_key_alone_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 100), 1_000);
    let (old, new, other) = (
        dir.path().join("old"),
        dir.path().join("new"),
        dir.path().join("other"),
    );
    for key in [&old, &new, &other] {
        phishbloom().arg("keygen").arg(key).assert().success();
    }
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    let old_pub = format!("{}.pub", old.display());
    let site = dir.path().join("site");
    publish(&source, &site, &["--sign", &arg(&old)]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &["--trust", &old_pub]).0, 0);

    // The new key takes over, vouched for by the old one: the client, still given the old
    // key, follows and keeps the new one beside its copy.
    add(&source, &hosts("b", 10));
    publish(
        &source,
        &site,
        &["--sign", &arg(&new), "--rotate-from", &arg(&old)],
    );
    let (code, out) = sync(&server.url, &copy, &["--trust", &old_pub]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("v1 → v2"), "{out}");
    let adopted = std::fs::read_to_string(dir.path().join("copy.bloom.trust")).unwrap();
    let new_text = std::fs::read_to_string(format!("{}.pub", new.display())).unwrap();
    let new_line = new_text.lines().last().unwrap();
    assert!(adopted.contains(new_line), "{adopted}");
    // Later indexes keep carrying the hand-over (rotations.json), without --rotate-from.
    add(&source, &hosts("c", 10));
    publish(&source, &site, &["--sign", &arg(&new)]);
    let (code, out) = sync(&server.url, &copy, &["--trust", &old_pub]);
    assert_eq!(code, 0, "{out}");

    // Whoever holds only the old key (a mirror of their own, signed with it) can no longer
    // feed the client.
    add(&source, &hosts("d", 10));
    let mirror = dir.path().join("mirror");
    publish(&source, &mirror, &["--sign", &arg(&old)]);
    let mirror = StaticServer::start(&mirror);
    let held = std::fs::read(&copy).unwrap();
    let (code, out) = sync(&mirror.url, &copy, &["--trust", &old_pub]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not by the trusted key"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held, "the copy was changed");
    // Nor can a hand-over the old key did not sign lead anywhere else: the publisher refuses
    // rotations that do not end at the signing key.
    assert_error(
        phishbloom()
            .arg("publish")
            .arg(&source)
            .arg(&site)
            .args(["--sign", &arg(&other)]),
        &["do not end at the signing key"],
    );
}

#[test]
fn a_signed_served_list_is_followed_under_trust_and_an_unsigned_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 300), 3_000);
    let (key, other) = (dir.path().join("server"), dir.path().join("other"));
    for name in [&key, &other] {
        phishbloom().arg("keygen").arg(name).assert().success();
    }
    let trust = |k: &Path| format!("{}.pub", k.display());
    let (signed, base) = serve_list(dir.path(), &source, &["--sign", key.to_str().unwrap()]);
    let guard = Killer(vec![signed]);
    let response = reqwest::blocking::get(format!("{base}/index.json")).unwrap();
    let etag = response.headers()["etag"].clone();
    let index: serde_json::Value = response.json().unwrap();
    let expires = index["signed"]["expires"].as_u64().unwrap();
    // A client holding the signed index is answered 304 under the same tag, without a body.
    let again = reqwest::blocking::Client::new()
        .get(format!("{base}/index.json"))
        .header("If-None-Match", etag.clone())
        .send()
        .unwrap();
    assert_eq!(again.status().as_u16(), 304);
    assert_eq!(again.headers()["etag"], etag);
    assert!(again.bytes().unwrap().is_empty());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        (now + 7 * 86_400..=now + 8 * 86_400).contains(&expires),
        "{index}"
    );
    let copy = dir.path().join("copy.bloom");
    let (code, out) = sync(&base, &copy, &["--trust", &trust(&key)]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = sync(&base, &copy, &["--trust", &trust(&other)]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not by the trusted key"), "{out}");
    drop(guard);

    let (unsigned, base) = serve_list(dir.path(), &source, &[]);
    let guard = Killer(vec![unsigned]);
    let (code, out) = sync(&base, &copy, &["--trust", &trust(&key)]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("unsigned") || out.contains("not signed"),
        "{out}"
    );
    drop(guard);
}
