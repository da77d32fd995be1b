//! `publish`, `sync` and `keygen` driven through the real executable: a publish directory on a
//! static web server (a small one here, serving files as any would, with ETags and 304s),
//! the whole file then deltas, a corrupt delta, a rollback, signatures, HTTPS, `serve` as the
//! publisher, and `sync --every` following 20 changes while `check` reads the file.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

/// A static file server on a free loopback port: GET of files under a directory, an `ETag`
/// from the file's length and modification time, `If-None-Match` → 304. Counts the body bytes
/// it sends.
pub(crate) struct StaticServer {
    pub(crate) url: String,
    sent: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl StaticServer {
    pub(crate) fn start(root: &Path) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (root, counter, flag) = (root.to_path_buf(), sent.clone(), stop.clone());
        std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (root, counter) = (root.clone(), counter.clone());
                        std::thread::spawn(move || serve_one(stream, &root, &counter));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        StaticServer { url, sent, stop }
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Answers the requests of one connection (HTTP/1.1 keep-alive).
fn serve_one(stream: TcpStream, root: &Path, sent: &AtomicU64) {
    stream.set_nonblocking(false).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        let mut if_none_match = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("if-none-match") {
                    if_none_match = Some(value.trim().to_string());
                }
            }
        }
        let path = request.split(' ').nth(1).unwrap_or("/").to_string();
        let file = root.join(path.trim_start_matches('/'));
        let answer = match std::fs::read(&file) {
            Ok(body) => {
                let meta = std::fs::metadata(&file).unwrap();
                let modified = meta
                    .modified()
                    .unwrap()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos();
                let etag = format!("\"{:x}-{modified:x}\"", body.len());
                if if_none_match.as_deref() == Some(etag.as_str()) {
                    format!(
                        "HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nContent-Length: 0\r\n\r\n"
                    )
                    .into_bytes()
                } else {
                    sent.fetch_add(body.len() as u64, Ordering::Relaxed);
                    let mut head = format!(
                        "HTTP/1.1 200 OK\r\nETag: {etag}\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    head.extend_from_slice(&body);
                    head
                }
            }
            Err(_) => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
        };
        if out.write_all(&answer).is_err() {
            return;
        }
    }
}

/// A URL list of `n` hosts `PREFIX-I.example`.
pub(crate) fn hosts(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}.example")).collect()
}

/// A `--verify` blocklist of `entries` with room for `capacity`.
pub(crate) fn list(dir: &Path, name: &str, entries: &[String], capacity: usize) -> PathBuf {
    let input = dir.join(format!("{name}.txt"));
    std::fs::write(&input, entries.join("\n")).unwrap();
    build_list(
        dir.join(format!("{name}.bloom")),
        [
            input.to_str().unwrap(),
            "--verify",
            "--capacity",
            &capacity.to_string(),
            "--name",
            name,
        ],
    )
}

/// `add FILE --from` the items.
pub(crate) fn add(file: &Path, items: &[String]) {
    let input = file.with_extension("add.txt");
    std::fs::write(&input, items.join("\n")).unwrap();
    phishbloom()
        .arg("add")
        .arg(file)
        .arg("--from")
        .arg(&input)
        .assert()
        .success();
}

/// `publish FILE DIR ARGS`, asserted to succeed; its stdout.
pub(crate) fn publish(file: &Path, dir: &Path, args: &[&str]) -> String {
    let output = phishbloom()
        .arg("publish")
        .arg(file)
        .arg(dir)
        .args(["--min-interval", "0"])
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(output).unwrap()
}

/// `sync URL FILE ARGS`: exit code and stdout + stderr.
pub(crate) fn sync(url: &str, file: &Path, args: &[&str]) -> (i32, String) {
    let output = phishbloom()
        .arg("sync")
        .arg(url)
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

/// The verdict column of `check FILE` for URLs of `hosts`.
pub(crate) fn listed(file: &Path, hosts: &[String]) -> usize {
    let urls: Vec<String> = hosts.iter().map(|h| format!("http://{h}/x")).collect();
    verdicts(file, &urls)
        .iter()
        .filter(|v| *v == "listed")
        .count()
}

#[test]
fn publish_then_sync_the_whole_file_then_a_small_delta() {
    let dir = tempfile::tempdir().unwrap();
    let first = hosts("first", 20_000);
    let source = list(dir.path(), "phish", &first, 40_000);
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");

    let (code, out) = sync(&server.url, &copy, &["--once"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing → v1 by the whole file"), "{out}");
    assert_eq!(listed(&copy, &first[..50]), 50);
    let whole = server.sent();

    let added = hosts("added", 1_000);
    add(&source, &added);
    let text = publish(&source, &site, &[]);
    assert!(text.contains("delta from v1"), "{text}");
    let before = server.sent();
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("v1 → v2 by 1 delta"), "{out}");
    let transferred = server.sent() - before;
    // The bound a sync must keep: after 1,000 additions a --verify list syncs in ≤ 12 KB, index included.
    assert!(
        transferred <= 12_000,
        "{transferred} bytes for 1,000 additions (the whole file was {whole})"
    );
    assert_eq!(listed(&copy, &added), added.len());
    assert_eq!(info_json(&copy)["meta"]["version"], 2);

    // Nothing new: only the index is read.
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("v2 is current"), "{out}");
}

#[test]
fn a_corrupt_delta_or_copy_falls_back_to_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 500), 5_000);
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &[]).0, 0);

    let added = hosts("b", 100);
    add(&source, &added);
    publish(&source, &site, &[]);
    let delta = std::fs::read_dir(site.join("deltas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("1-2-"))
        .expect("the delta from version 1 to 2");
    let mut bytes = std::fs::read(&delta).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&delta, &bytes).unwrap();
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("by the whole file (the deltas failed"),
        "{out}"
    );
    assert!(out.contains("SHA-256"), "{out}");
    assert_eq!(listed(&copy, &added), added.len());

    // A damaged local copy is replaced whole.
    add(&source, &hosts("c", 10));
    publish(&source, &site, &[]);
    std::fs::write(&copy, b"not a blocklist").unwrap();
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing → v3 by the whole file"), "{out}");
}

#[test]
fn a_rollback_is_refused_and_the_copy_kept() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 100), 1_000);
    let old = dir.path().join("old.bloom");
    std::fs::copy(&source, &old).unwrap();
    add(&source, &hosts("b", 10));
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &[]).0, 0);
    let held = std::fs::read(&copy).unwrap();

    // The publisher refuses to go back unless told; told, clients still refuse.
    assert_error(
        phishbloom().arg("publish").arg(&old).arg(&site),
        &["older than the published version 2", "--allow-rollback"],
    );
    publish(&old, &site, &["--allow-rollback"]);
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("older than the local version 2"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held, "the copy was changed");
    let (code, out) = sync(&server.url, &copy, &["--allow-rollback"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(info_json(&copy)["meta"]["version"], 1);
}

#[test]
fn under_trust_only_the_trusted_keys_index_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("publisher");
    let other = dir.path().join("intruder");
    for name in [&key, &other] {
        phishbloom().arg("keygen").arg(name).assert().success();
    }
    // keygen never overwrites a key.
    assert_error(phishbloom().arg("keygen").arg(&key), &["never overwritten"]);
    let trust = format!("{}.pub", key.display());

    let source = list(dir.path(), "phish", &hosts("a", 200), 2_000);
    let site = dir.path().join("site");
    publish(&source, &site, &["--sign", key.to_str().unwrap()]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    let (code, out) = sync(&server.url, &copy, &["--trust", &trust]);
    assert_eq!(code, 0, "{out}");
    let held = std::fs::read(&copy).unwrap();

    // An intruder removes entries and signs with its own key: refused.
    let removed = dir.path().join("removed.bloom");
    std::fs::copy(&source, &removed).unwrap();
    add(&removed, &hosts("z", 1));
    publish(&removed, &site, &["--sign", other.to_str().unwrap()]);
    let (code, out) = sync(&server.url, &copy, &["--trust", &trust]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not by the trusted key"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held);

    // Unsigned: refused.
    publish(&removed, &site, &[]);
    let (code, out) = sync(&server.url, &copy, &["--trust", &trust]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not signed"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held);

    // Signed by the right key, then one promise in it changed (the delta's digest, as an
    // attacker swapping in another delta must): refused.
    publish(&removed, &site, &["--sign", key.to_str().unwrap()]);
    let index = site.join("index.json");
    let text = std::fs::read_to_string(&index).unwrap();
    let start = text.find("\"sha256\":\"").unwrap() + 10;
    let mut tampered = text.clone();
    let digit = if &text[start..=start] == "0" {
        "1"
    } else {
        "0"
    };
    tampered.replace_range(start..=start, digit);
    std::fs::write(&index, tampered).unwrap();
    let (code, out) = sync(&server.url, &copy, &["--trust", &trust]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("does not verify"), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held);

    // The genuine index: accepted.
    std::fs::write(&index, text).unwrap();
    let (code, out) = sync(&server.url, &copy, &["--trust", &trust]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("v1 → v2"), "{out}");
}

#[test]
fn sync_follows_a_served_list() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 300), 3_000);
    let (serve, base) = serve_list(dir.path(), &source, &[]);
    let guard = Killer(vec![serve]);
    let copy = dir.path().join("copy.bloom");
    let (code, out) = sync(&base, &copy, &[]);
    assert_eq!(code, 0, "{out}\n{base}");
    assert!(out.contains("by the whole file"), "{out}");

    let client = reqwest::blocking::Client::new();
    let response = client
        .post(format!("{base}/entries"))
        .bearer_auth("sync-test-token")
        .json(&serde_json::json!({"entries": ["served-add.example"]}))
        .send()
        .unwrap();
    assert!(response.status().is_success());
    let (code, out) = sync(&base, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("v1 → v2 by 1 delta"), "{out}");
    assert_eq!(listed(&copy, &["served-add.example".to_string()]), 1);
    let (code, out) = sync(&base, &copy, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("v2 is current"), "{out}");
    // The index answers conditional requests: unchanged, a 304 without a body.
    let index = client.get(format!("{base}/index.json")).send().unwrap();
    let etag = index.headers()["etag"].clone();
    let again = client
        .get(format!("{base}/index.json"))
        .header("If-None-Match", etag)
        .send()
        .unwrap();
    assert_eq!(again.status().as_u16(), 304);
    drop(guard);
}

/// `serve LIST --http 127.0.0.1:0` with the token `sync-test-token` and `extra` arguments, and
/// the base URL of its list `phish`.
pub(crate) fn serve_list(dir: &Path, source: &Path, extra: &[&str]) -> (Child, String) {
    let token = dir.join("token");
    std::fs::write(&token, "sync-test-token\n").unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_phishbloom"))
        .arg("serve")
        .arg(source)
        .args(["--http", "127.0.0.1:0", "--token-file"])
        .arg(&token)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = format!("{}/v1/lists/phish", line.trim().trim_start_matches("http "));
    (serve, base)
}

/// Kills its children when dropped (a failed assertion must not leave them running).
pub(crate) struct Killer(pub(crate) Vec<Child>);

impl Drop for Killer {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn every_follows_twenty_changes_while_check_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 2_000), 10_000);
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    let log = dir.path().join("sync.log");
    let child = Command::new(env!("CARGO_BIN_EXE_phishbloom"))
        .arg("sync")
        .arg(&server.url)
        .arg(&copy)
        .args(["--every", "100ms", "--jitter", "0s"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut children = Killer(vec![child]);
    let wait_for = |host: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if copy.exists() && listed(&copy, &[host.to_string()]) == 1 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    assert!(
        wait_for("a-0.example"),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );

    // A reader checking the copy all along: every run must answer (exit 0 or 1), never fail.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, copy) = (stop.clone(), copy.clone());
        std::thread::spawn(move || {
            let (mut runs, mut failures) = (0, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                let output = Command::new(env!("CARGO_BIN_EXE_phishbloom"))
                    .arg("check")
                    .arg(&copy)
                    .arg("http://a-1.example/")
                    .output()
                    .unwrap();
                runs += 1;
                if output.status.code() != Some(0) {
                    failures.push(String::from_utf8_lossy(&output.stderr).into_owned());
                }
            }
            (runs, failures)
        })
    };
    for change in 0..20 {
        let host = format!("change-{change}.example");
        add(&source, std::slice::from_ref(&host));
        publish(&source, &site, &[]);
        assert!(
            wait_for(&host),
            "change {change} not followed: {}",
            std::fs::read_to_string(&log).unwrap()
        );
    }
    stop.store(true, Ordering::Relaxed);
    let (runs, failures) = reader.join().unwrap();
    assert!(runs > 20, "only {runs} checks ran");
    assert!(
        failures.is_empty(),
        "{} of {runs} checks failed: {failures:?}",
        failures.len()
    );
    assert_eq!(info_json(&copy)["meta"]["version"], 21);

    // SIGTERM: a clean exit.
    let pid = children.0[0].id() as i32;
    // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = children.0[0].try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "sync did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("v20 → v21"), "{log}");
    assert!(log.contains("stopped"), "{log}");
    let _ = std::fs::File::open(&copy)
        .unwrap()
        .read(&mut [0; 8])
        .unwrap();
}

/// An HTTPS server for `root` (Python's, with `cert` and `key`), on a free port; its port.
fn https_server(root: &Path, cert: &Path, key: &Path) -> Option<(Child, u16)> {
    let script = "import functools, http.server, ssl, sys\n\
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
        ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n\
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[3])\n\
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)\n\
        server.socket = ctx.wrap_socket(server.socket, server_side=True)\n\
        print(server.server_address[1], flush=True)\n\
        server.serve_forever()\n";
    let mut child = match Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(cert)
        .arg(key)
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            crate::common::skip(
                "the HTTPS sync test",
                &format!("python3 does not run: {error}"),
            );
            return None;
        }
    };
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the server prints its port");
    Some((child, port))
}

#[test]
fn sync_over_https_refuses_an_unknown_ca_and_trusts_a_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 100), 1_000);
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    // A certificate authority of our own, and a certificate for localhost it signed.
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let (ca_pem, cert_pem, key_pem) = (
        dir.path().join("ca.pem"),
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
    );
    std::fs::write(&ca_pem, ca.pem()).unwrap();
    std::fs::write(&cert_pem, cert.pem()).unwrap();
    std::fs::write(&key_pem, key.serialize_pem()).unwrap();
    let Some((server, port)) = https_server(&site, &cert_pem, &key_pem) else {
        return;
    };
    let _guard = Killer(vec![server]);
    let url = format!("https://localhost:{port}");
    let copy = dir.path().join("copy.bloom");
    // Not signed by a CA the client trusts: refused, nothing written.
    let (code, out) = sync(&url, &copy, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("certificate") || out.contains("cert"), "{out}");
    assert!(!copy.exists());
    // Trusting our CA: the list arrives over TLS.
    let (code, out) = sync(&url, &copy, &["--ca-cert", ca_pem.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("by the whole file"), "{out}");
    assert_eq!(listed(&copy, &hosts("a", 5)), 5);
}

#[test]
fn a_copy_never_follows_another_list() {
    let dir = tempfile::tempdir().unwrap();
    let first = list(dir.path(), "phish", &hosts("a", 50), 500);
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let other = list(&other_dir, "allow", &hosts("b", 50), 500);
    let (site, other_site) = (dir.path().join("site"), dir.path().join("other-site"));
    publish(&first, &site, &[]);
    publish(&other, &other_site, &[]);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(site.to_str().unwrap(), &copy, &[]).0, 0);
    let held = std::fs::read(&copy).unwrap();
    // Another list at the copy's URL (a man in the middle serving another signed list): refused.
    let (code, out) = sync(other_site.to_str().unwrap(), &copy, &["--allow-rollback"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("publishes list \"allow\""), "{out}");
    assert_eq!(std::fs::read(&copy).unwrap(), held);
}

#[test]
fn a_signed_publish_carries_over_only_the_chain_its_key_vouches_for() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("publisher");
    phishbloom().arg("keygen").arg(&key).assert().success();
    let source = list(dir.path(), "phish", &hosts("a", 100), 1_000);
    let site = dir.path().join("site");
    let index = || -> serde_json::Value {
        let text = std::fs::read_to_string(site.join("index.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["signed"].clone()
    };
    let froms = |index: &serde_json::Value| -> Vec<u64> {
        index["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["from"].as_u64().unwrap())
            .collect()
    };
    // Unsigned v1, v2: a chain of one delta the key never vouched for.
    publish(&source, &site, &[]);
    add(&source, &hosts("b", 5));
    publish(&source, &site, &[]);
    assert_eq!(froms(&index()), [1]);
    // Signed v3: the unsigned chain is dropped, the new delta starts a signed one.
    add(&source, &hosts("c", 5));
    publish(&source, &site, &["--sign", key.to_str().unwrap()]);
    assert_eq!(froms(&index()), [2]);
    // Signed v4 carries the signed chain over ...
    add(&source, &hosts("d", 5));
    publish(&source, &site, &["--sign", key.to_str().unwrap()]);
    assert_eq!(froms(&index()), [2, 3]);
    // ... unless a kept delta on disk is not the one signed for.
    let kept = site.join(index()["deltas"][0]["path"].as_str().unwrap());
    let mut bytes = std::fs::read(&kept).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&kept, bytes).unwrap();
    add(&source, &hosts("e", 5));
    publish(&source, &site, &["--sign", key.to_str().unwrap()]);
    assert_eq!(froms(&index()), [4]);
}

/// `log₂ C(free, a)`: the bits that name `a` new values among `free` unused ones.
fn log2_choose(free: f64, a: usize) -> f64 {
    (0..a)
        .map(|i| ((free - i as f64) / (i + 1) as f64).log2())
        .sum()
}

/// The binary entropy of a share, in bits.
fn entropy(share: f64) -> f64 {
    -(share * share.log2() + (1.0 - share) * (1.0 - share).log2())
}

#[test]
fn a_ut1_list_ships_compact_and_a_thousand_additions_as_a_table_delta_near_the_bound() {
    let Some(ut1) = crate::compact::ut1_data() else {
        common::skip(
            "a_ut1_list_ships_compact_and_a_thousand_additions",
            "../shared/data/ut1 (phishing, malware) is missing",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (verified, _, entries) = crate::compact::build_both(dir.path(), &ut1, true);
    // The publisher's own list: verified, with room to grow.
    let source = dir.path().join("ut1.bloom");
    let folders = ["phishing", "malware"].map(|c| ut1.join(c));
    let mut args: Vec<std::ffi::OsString> = vec!["--ut1".into()];
    args.extend(folders.iter().map(Into::into));
    args.push(dir.path().join("liste_blanche").into());
    for a in ["--verify", "--capacity", "40000", "--name", "ut1"] {
        args.push(a.into());
    }
    build_list(source.clone(), args);
    let site = dir.path().join("site");
    let text = publish(&source, &site, &[]);
    assert!(text.contains("(compact, "), "{text}");
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &[]).0, 0);
    let whole = server.sent();
    let info = info_json(&copy);
    assert_eq!(info["kind"], "compact", "{info}");
    assert!(
        whole * 2 < std::fs::metadata(&verified).unwrap().len(),
        "the compact file ({whole} B) is under half the verified one"
    );

    // 1,000 new entries, 600 phishing and 400 malware, published as one delta.
    let (phishing, malware) = (hosts("new-phish", 600), hosts("new-malware", 400));
    for (category, items) in [("phishing", &phishing), ("malware", &malware)] {
        let input = dir.path().join(format!("{category}.add.txt"));
        std::fs::write(&input, items.join("\n")).unwrap();
        phishbloom()
            .args(["add", source.to_str().unwrap(), "--from"])
            .arg(&input)
            .args(["--category", category])
            .assert()
            .success();
    }
    let text = publish(&source, &site, &[]);
    assert!(text.contains("delta from v1"), "{text}");
    let before = server.sent();
    let (code, out) = sync(&server.url, &copy, &[]);
    assert!(code == 0 && out.contains("by 1 delta"), "{out}");
    let transferred = (server.sent() - before) as f64;

    // The bound for the change given the copy: naming 1,000 new prefixes among the universe's
    // free values, and each one's category (60 % / 40 %).
    let after = info_json(&copy);
    let universe = after["compact"]["universe"].as_f64().unwrap();
    let held = info["compact"]["prefixes"].as_f64().unwrap();
    let per_addition = (log2_choose(universe - held, 1_000) / 1_000.0 + entropy(0.6)) / 8.0;
    let rate_only = (after["compact"]["rate_bits"].as_f64().unwrap() + entropy(0.6)) / 8.0;
    let bytes = transferred / 1_000.0;
    eprintln!(
        "1,000 additions: {transferred} B with the index, {bytes:.2} B each; bound given the \
         copy {per_addition:.2} B ({:.3}×); log₂(E/ε) + categories {rate_only:.2} B ({:.3}×)",
        bytes / per_addition,
        bytes / rate_only
    );
    assert!(bytes <= 1.15 * per_addition, "{bytes:.2} B an addition");

    // The copy answers as the publisher's list: every entry, old and new, with its categories.
    let mut urls: Vec<String> = phishing
        .iter()
        .chain(&malware)
        .map(|h| format!("http://{h}/a"))
        .collect();
    urls.extend(entries.iter().step_by(7).map(|e| format!("http://{e}")));
    urls.extend((0..20_000).map(|i| format!("http://stranger-{i}.test/")));
    let answers = |list: &Path| {
        let output = phishbloom()
            .arg("check")
            .arg(list)
            .write_stdin(urls.join("\n"))
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let (expected, found) = (answers(&source), answers(&copy));
    assert!(expected.contains("\tlisted\t"), "{expected}");
    crate::compact::assert_same_answers(
        expected.as_bytes(),
        found.as_bytes(),
        crate::compact::allowed_differences(urls.len(), 1e-9),
    );
}
