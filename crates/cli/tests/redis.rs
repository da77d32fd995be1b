//! End-to-end tests of `phishbloom redis …` and `phishbloom check --redis` against a real
//! redis-server on loopback: byte-identical output to `check FILE`, `redis add`, `redis info`,
//! and exit 2 with a clear message when Redis is down.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use phishbloom_redis::testing::RedisServer;

fn phishbloom() -> Command {
    Command::cargo_bin("phishbloom").unwrap()
}

/// A list of URL entries built with verification; returns the file.
fn build(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!("evil{i}.example\nphish{i}.example/login\n"));
    }
    let list = dir.join("list.txt");
    std::fs::write(&list, text).unwrap();
    let output = dir.join("list.bloom");
    phishbloom()
        .arg("build")
        .arg(&list)
        .arg("-o")
        .arg(&output)
        .arg("--verify")
        .assert()
        .success();
    output
}

/// Queries: listed in several spellings, clean ones, a blank line, a line that is no URL, CRLF.
fn queries() -> Vec<String> {
    let mut queries = Vec::new();
    for i in (0..2000).step_by(97) {
        queries.push(format!("HTTP://WWW.Evil{i}.example:80/a/../b#x"));
        queries.push(format!("phish{i}.example/login/step?id=1"));
        queries.push(format!("phish{i}.example/loginX"));
        queries.push(format!("clean{i}.example"));
    }
    queries.extend([
        "".to_string(),
        "http://[::1".to_string(),
        "evil3.example\r".to_string(),
    ]);
    queries
}

/// stdout (as text) and exit code of a run, which must print nothing on stderr.
fn run(command: &mut Command, stdin: &str) -> (String, Option<i32>) {
    let output = command.write_stdin(stdin).output().unwrap();
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).unwrap(),
        output.status.code(),
    )
}

#[test]
fn check_through_redis_prints_what_check_on_the_file_prints() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path());
    let server = RedisServer::start();
    let url = server.url();
    let pushed = phishbloom()
        .args(["redis", "push"])
        .arg(&file)
        .arg(&url)
        .args(["--name", "fleet", "--chunk-bytes", "4096"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&pushed.get_output().stdout).into_owned();
    assert!(
        text.contains("version 1") && text.contains("chunks"),
        "{text}"
    );

    let queries = queries();
    let stdin = queries.join("\n") + "\n";
    for json in [false, true] {
        let flag: &[&str] = if json { &["--json"] } else { &[] };
        let local = run(phishbloom().arg("check").arg(&file).args(flag), &stdin);
        let remote = run(
            phishbloom()
                .args(["check", "--redis", &url, "--name", "fleet"])
                .args(flag),
            &stdin,
        );
        assert_eq!(remote, local, "stdin, json = {json}");
        assert_eq!(local.1, Some(0));
        assert_eq!(local.0.lines().count(), queries.len());
        // Keys as arguments.
        let args = &queries[..8];
        let local = run(
            phishbloom().arg("check").arg(&file).args(flag).args(args),
            "",
        );
        let remote = run(
            phishbloom()
                .args(["check", "--redis", &url, "--name", "fleet"])
                .args(flag)
                .args(args),
            "",
        );
        assert_eq!(remote, local, "arguments, json = {json}");
    }
    // Nothing listed: exit 1, like grep (and like check FILE).
    let clean = run(
        phishbloom().args([
            "check",
            "--redis",
            &url,
            "--name",
            "fleet",
            "nowhere.example",
        ]),
        "",
    );
    assert_eq!(clean, ("nowhere.example\tclean\n".to_string(), Some(1)));

    // add makes a new entry listed; info verifies every chunk.
    phishbloom()
        .args([
            "redis",
            "add",
            &url,
            "--name",
            "fleet",
            "brand-new.example/path",
        ])
        .assert()
        .success();
    let listed = run(
        phishbloom().args(["check", "--redis", &url, "--name", "fleet", "--verify"]),
        "http://a.brand-new.example/path/x\n",
    );
    assert_eq!(
        listed,
        (
            "http://a.brand-new.example/path/x\tlisted\tbrand-new.example/path\turl\n".to_string(),
            Some(0)
        )
    );
    let info = phishbloom()
        .args(["redis", "info", &url, "--name", "fleet"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&info.get_output().stdout).into_owned();
    assert!(text.contains("every checksum verified"), "{text}");
    assert!(text.contains("1 key since the push"), "{text}");
}

/// Asserts a failed run: exit 2, one line on stderr mentioning each of `needles`.
fn assert_error(command: &mut Command, needles: &[&str]) {
    let output = command.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
}

#[test]
fn redis_down_a_missing_list_and_a_classic_file_are_errors_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path());
    let mut server = RedisServer::start();
    let url = server.url();
    assert_error(
        phishbloom().args(["check", "--redis", &url, "--name", "absent", "x.example"]),
        &["no list named `absent`", &url],
    );
    let classic = dir.path().join("classic.bloom");
    phishbloom()
        .args(["build", "--kind", "classic"])
        .arg(dir.path().join("list.txt"))
        .arg("-o")
        .arg(&classic)
        .assert()
        .success();
    assert_error(
        phishbloom()
            .args(["redis", "push"])
            .arg(&classic)
            .args([&url, "--name", "c"]),
        &["classic", "blocked layout"],
    );
    phishbloom()
        .args(["redis", "push"])
        .arg(&file)
        .args([&url, "--name", "fleet"])
        .assert()
        .success();
    server.stop();
    assert_error(
        phishbloom().args(["check", "--redis", &url, "--name", "fleet", "evil1.example"]),
        &["cannot connect to Redis", &url],
    );
    assert_error(
        phishbloom().args(["redis", "info", &url, "--name", "fleet"]),
        &["cannot connect to Redis"],
    );
    assert_error(
        phishbloom().args([
            "redis",
            "add",
            "redis://:secret@127.0.0.1:1",
            "--name",
            "fleet",
            "k",
        ]),
        &["redis://:***@127.0.0.1:1"],
    );
}
