//! The browser extension (`clients/browser`, built by `bash clients/browser/build.sh` into
//! `clients/browser/dist/`) against the real thing:
//!
//! - parity: `node clients/browser/cli.mjs` (the extension's WebAssembly core) prints exactly
//!   what `phishbloom check` prints for 2,000 URLs of every kind;
//! - a headless Chromium with the extension loaded, following a list on `phishbloom serve`:
//!   listed pages end on the warning page (also behind a server redirect, and a prerendered
//!   page once shown), clean and allowed ones load, a web page can neither frame the warning
//!   page nor continue from it while "continue anyway" in its own tab loads the page, and an
//!   entry added on the server after start is warned within the update interval;
//! - the same Chromium following a signed published list: a key rotation followed and the old
//!   key alone then refused, an expired index refused with the copy kept and the badge at "!".
//!
//! Both need the built extension, and `node` or `chromium`: in CI (the `CI` variable set) a
//! missing one fails the test; elsewhere the test is skipped with a loud message. What both
//! need is here; each has its module.

mod chromium;
mod parity;
mod trust;

use crate::common;
use crate::serve_common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::SplitMix;
use serde_json::Value;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built extension, `clients/browser/dist`.
fn dist() -> PathBuf {
    root().join("clients/browser/dist")
}

/// The newest modification time of the files under `dir`.
fn newest(dir: &Path) -> SystemTime {
    let mut latest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(latest)
        };
        latest = latest.max(time);
    }
    latest
}

/// The built extension and each of `programs`, or `None` after a loud SKIP outside CI (in CI:
/// a failure). The extension must be newer than the sources it is built from.
fn prerequisites(test: &str, programs: &[&str]) -> Option<PathBuf> {
    let mut missing: Vec<String> = programs
        .iter()
        .filter(|p| !common::installed(p))
        .map(|p| format!("{p} is not installed (apt-get install -y chromium nodejs)"))
        .collect();
    let wasm = dist().join("phishbloom.wasm");
    match wasm.metadata().and_then(|m| m.modified()) {
        Err(_) => missing.push(format!(
            "{} is missing: run `bash clients/browser/build.sh`",
            wasm.display()
        )),
        Ok(built) => {
            let sources = ["crates/wasm/src", "crates/core/src", "crates/url/src"]
                .iter()
                .map(|d| newest(&root().join(d)))
                .chain([newest(&root().join("clients/browser/src"))])
                .max()
                .unwrap_or(SystemTime::UNIX_EPOCH);
            if sources > built {
                missing.push(format!(
                    "{} is older than its sources: run `bash clients/browser/build.sh`",
                    wasm.display()
                ));
            }
        }
    }
    if missing.is_empty() {
        return Some(dist());
    }
    crate::common::skip(test, &missing.join("; "));
    None
}

/// Runs `program args` with `stdin`; its standard output and exit code.
fn run(program: &Path, args: &[&str], stdin: &[u8]) -> (Vec<u8>, i32) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let code = output.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{} {args:?} exited {code}: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.stdout, code)
}
