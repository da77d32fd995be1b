//! `phishbloom squid-helper` in a real squid on loopback: squid asks the helper about every URL
//! (`external_acl_type … concurrency=8 %URI`, `http_access deny`), and a fetch through squid
//! from a local origin gets 403 for a listed URL and 200 for a clean one. Without squid
//! installed the test says so loudly and does nothing — except under CI, which installs it
//! (`.ci/run`) and where it fails instead.

use crate::serve_common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serve_common::*;

fn squid_binary() -> Option<PathBuf> {
    ["/usr/sbin/squid", "/usr/bin/squid", "/usr/local/sbin/squid"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// A local origin server answering every request `200 hello`, until dropped.
struct Origin {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Origin {
    fn start() -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        stream
                            .set_read_timeout(Some(Duration::from_secs(5)))
                            .unwrap();
                        let mut request = Vec::new();
                        let mut buf = [0u8; 4096];
                        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                            match stream.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => request.extend_from_slice(&buf[..n]),
                            }
                        }
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                        );
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Origin { port, stop }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

struct Squid(Child);

impl Drop for Squid {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGTERM);
        }
        if !eventually(Duration::from_secs(10), || {
            self.0.try_wait().ok().flatten().is_some()
        }) {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

#[test]
fn squid_blocks_listed_urls_through_the_helper() {
    let Some(squid) = squid_binary() else {
        crate::common::skip(
            "squid_blocks_listed_urls_through_the_helper",
            "squid is not installed (apt-get install -y squid; .ci/run does)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // squid started as root runs its helpers as its own user: let it read everything here.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let origin = Origin::start();
    let entries = vec![format!("127.0.0.1/evil/"), "evil.example".to_string()];
    let list = build_urls(dir.path(), "malware", &entries);
    std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o644)).unwrap();

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = dir.path().join("squid.conf");
    let d = dir.path().display();
    std::fs::write(
        &conf,
        format!(
            "http_port 127.0.0.1:{port}\n\
             pid_filename {d}/squid.pid\n\
             cache_log {d}/cache.log\n\
             access_log none\n\
             cache deny all\n\
             coredump_dir {d}\n\
             shutdown_lifetime 0 seconds\n\
             external_acl_type phishbloom ttl=0 negative_ttl=0 children-max=2 children-startup=1 concurrency=8 %URI {} squid-helper {}\n\
             acl listed external phishbloom\n\
             http_access deny listed\n\
             http_access allow all\n",
            bin().display(),
            list.display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("squid.out")).unwrap();
    let child = Command::new(&squid)
        .args(["-N", "-d", "1", "-f"])
        .arg(&conf)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let _squid = Squid(child);
    let up = eventually(Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(
        up,
        "squid did not start: {}",
        std::fs::read_to_string(dir.path().join("squid.out")).unwrap_or_default()
    );

    let client = reqwest::blocking::Client::builder()
        .proxy(reqwest::Proxy::http(format!("http://127.0.0.1:{port}")).unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let fetch = |path: &str| {
        let response = client
            .get(format!("http://127.0.0.1:{}{path}", origin.port))
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().unwrap_or_default())
    };
    let diagnostics = || std::fs::read_to_string(dir.path().join("squid.out")).unwrap_or_default();
    let (status, body) = fetch("/fine/page");
    assert_eq!((status, body.as_str()), (200, "hello"), "{}", diagnostics());
    let (status, _) = fetch("/evil/page?x=1");
    assert_eq!(status, 403, "{}", diagnostics());
    let (status, _) = fetch("/EVIL/page");
    assert_eq!(status, 200, "paths are case-sensitive: {}", diagnostics());
    let (status, _) = fetch("/evil/");
    assert_eq!(status, 403, "{}", diagnostics());
}

#[test]
fn helper_answers_each_channel_on_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_urls(dir.path(), "phish", &phish_entries());
    let out = phishbloom(
        &["squid-helper", list.to_str().unwrap()],
        b"3 http://evil4.example/x -\n9 http://fine.example/\nhttp://phish2.example/login/a\n4 http://docs.evil1.example/\n",
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "3 OK message=phishing\n9 ERR\nOK message=phishing\n4 ERR\n"
    );
}
