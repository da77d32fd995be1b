//! What the executable's tests share: running `phishbloom`, building a list with it, reading
//! its `info --json`, the verdicts of `check`, and asserting a failed run.

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

/// The verdict column of `check FILE` for `items` on standard input: one per item (exit 0 when
/// one is listed, 1 when none is; anything else fails the test).
pub fn verdicts(file: &Path, items: &[String]) -> Vec<String> {
    let output = phishbloom()
        .arg("check")
        .arg(file)
        .write_stdin(items.join("\n"))
        .output()
        .unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    let verdicts: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap_or("").to_string())
        .collect();
    assert_eq!(verdicts.len(), items.len(), "one answer per item");
    verdicts
}
