//! What the `serve_*` tests share: fixture lists built with `phishbloom build`, and a
//! `phishbloom serve` process on free loopback ports that is stopped when dropped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_phishbloom"))
}

/// Runs `phishbloom ARGS` and returns its standard output; it must succeed.
pub fn phishbloom(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "phishbloom {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The URL entries of the fixture list `phish` (listed), with one exception.
pub fn phish_entries() -> Vec<String> {
    let mut entries = Vec::new();
    for i in 0..500 {
        entries.push(format!("evil{i}.example"));
        entries.push(format!("phish{i}.example/login"));
    }
    entries
}

/// Builds `NAME.bloom` in `dir` from URL entries (verified, category `phishing`, the exception
/// `docs.evil1.example`).
pub fn build_urls(dir: &Path, name: &str, entries: &[String]) -> PathBuf {
    build_urls_sized(dir, name, entries, entries.len())
}

/// [`build_urls`] with room for `capacity` entries.
pub fn build_urls_sized(dir: &Path, name: &str, entries: &[String], capacity: usize) -> PathBuf {
    let list = dir.join(format!("{name}.txt"));
    std::fs::write(&list, entries.join("\n") + "\n").unwrap();
    let allow = dir.join(format!("{name}-allow.txt"));
    std::fs::write(&allow, "docs.evil1.example\n").unwrap();
    let output = dir.join(format!("{name}.bloom"));
    phishbloom(
        &[
            "build",
            list.to_str().unwrap(),
            "--allow",
            allow.to_str().unwrap(),
            "--category",
            "phishing",
            "--verify",
            "--capacity",
            &capacity.to_string(),
            "--name",
            name,
            "-o",
            output.to_str().unwrap(),
        ],
        b"",
    );
    output
}

/// Builds `NAME.bloom` in `dir`: exact keys, sized for `capacity`.
pub fn build_keys(dir: &Path, name: &str, keys: &[String], capacity: usize) -> PathBuf {
    build_keys_of(dir, name, keys, capacity, &[])
}

/// [`build_keys`] with more options for `build` (`--kind cuckoo --verify`, …).
pub fn build_keys_of(
    dir: &Path,
    name: &str,
    keys: &[String],
    capacity: usize,
    options: &[&str],
) -> PathBuf {
    let list = dir.join(format!("{name}.txt"));
    std::fs::write(&list, keys.join("\n") + "\n").unwrap();
    let output = dir.join(format!("{name}.bloom"));
    phishbloom(
        &[
            "build",
            list.to_str().unwrap(),
            "--exact",
            "--capacity",
            &capacity.to_string(),
            "--name",
            name,
            "-o",
            output.to_str().unwrap(),
        ]
        .into_iter()
        .chain(options.iter().copied())
        .collect::<Vec<_>>(),
        b"",
    );
    output
}

/// Queries for the fixture: listed in several spellings, allowed, clean.
pub fn queries() -> Vec<String> {
    let mut queries = Vec::new();
    for i in (0..500).step_by(7) {
        queries.push(format!("HTTP://WWW.Evil{i}.example:80/a/../b"));
        queries.push(format!("http://phish{i}.example/login/step?id=1"));
        queries.push(format!("http://phish{i}.example/loginX"));
        queries.push(format!("http://clean{i}.example/"));
    }
    queries.push("http://docs.evil1.example/x".into());
    queries
}

/// A running `phishbloom serve`.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub http: String,
    /// `127.0.0.1:PORT`.
    pub resp: String,
    /// Where its log goes.
    pub log: PathBuf,
}

impl Server {
    /// Starts `phishbloom serve ARGS --http 127.0.0.1:0 --resp 127.0.0.1:0` and waits for the
    /// addresses it prints.
    pub fn start(dir: &Path, args: &[&str]) -> Server {
        let log = dir.join(format!("serve-{}.log", std::process::id()));
        let mut child = Command::new(bin())
            .arg("serve")
            .args(args)
            .args(["--http", "127.0.0.1:0", "--resp", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let (mut http, mut resp) = (String::new(), String::new());
        while http.is_empty() || resp.is_empty() {
            let mut line = String::new();
            if lines.read_line(&mut line).unwrap() == 0 {
                let _ = child.wait();
                panic!(
                    "serve did not start: {}",
                    std::fs::read_to_string(&log).unwrap()
                );
            }
            match line.trim().split_once(' ') {
                Some(("http", url)) => http = url.to_owned(),
                Some(("resp", url)) => {
                    resp = url
                        .trim_start_matches("rediss://")
                        .trim_start_matches("redis://")
                        .to_owned()
                }
                _ => {}
            }
        }
        Server {
            child,
            http,
            resp,
            log,
        }
    }

    /// Sends `signal` to the server.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        let result = unsafe { libc::kill(self.child.id() as i32, signal) };
        assert_eq!(result, 0);
    }

    /// Waits up to `timeout` for the server to exit.
    pub fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn redis_url(&self) -> String {
        format!("redis://{}", self.resp)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `probe` every 20 ms until it returns true or `timeout` passes.
pub fn eventually(timeout: Duration, mut probe: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if probe() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A blocking HTTP client that waits 30 s at most for an answer.
pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The error message of a JSON error answer with `status`.
pub fn error_of(response: reqwest::blocking::Response, status: reqwest::StatusCode) -> String {
    assert_eq!(response.status(), status);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body: serde_json::Value = response.json().unwrap();
    body["error"].as_str().unwrap().to_owned()
}
