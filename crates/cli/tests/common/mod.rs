//! What the executable's tests share: running `phishbloom`, building a list with it, reading
//! its `info --json`, and asserting a failed run.

#![allow(dead_code)] // Each test file uses the part it needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `phishbloom` executable under test.
pub fn phishbloom() -> Command {
    Command::cargo_bin("phishbloom").unwrap()
}

/// Runs `phishbloom build -o <output> <args>`, asserts that it succeeded, and returns `output`.
pub fn build_list<I, S>(output: PathBuf, args: I) -> PathBuf
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    phishbloom()
        .arg("build")
        .arg("-o")
        .arg(&output)
        .args(args)
        .assert()
        .success();
    output
}

/// What `phishbloom info --json <list>` prints, parsed.
pub fn info_json(list: &Path) -> serde_json::Value {
    let output = phishbloom().args(["info", "--json"]).arg(list).output();
    // The executable was built for these tests, and `info --json` prints JSON on success.
    let output = output.expect("phishbloom runs");
    serde_json::from_slice(&output.stdout).expect("info --json prints JSON")
}

/// Asserts a failed run — exit 2, one line on stderr mentioning each of `needles` — and
/// returns that line.
pub fn assert_error(command: &mut Command, needles: &[&str]) -> String {
    let output = command.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    stderr
}
