//! What the executable's tests share: running `phishbloom`, and asserting a failed run.

#![allow(dead_code)] // Each test file uses the part it needs.

use assert_cmd::Command;

/// The `phishbloom` executable under test.
pub fn phishbloom() -> Command {
    Command::cargo_bin("phishbloom").unwrap()
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
