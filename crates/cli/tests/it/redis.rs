//! End-to-end tests of `phishbloom redis …` and `phishbloom check --redis` against a real
//! redis-server on loopback: byte-identical output to `check FILE` (categories, exceptions and
//! `allowed` verdicts included), `redis add`, `redis info`, and exit 2 with a clear message when
//! Redis is down.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use phishbloom_testing::redis_server::RedisServer;

use crate::common;
use common::{assert_error, build_list, phishbloom};

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
        // Room for the keys `redis add` puts in (a list sized for exactly its entries is full).
        .args(["--capacity", "4100"])
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
            // The list's one category: an added key is in it.
            "http://a.brand-new.example/path/x\tlisted\tbrand-new.example/path\turl\tlist\n"
                .to_string(),
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
        &["classic", "--kind blocked"],
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

/// A UT1-style list of two categories (some entries in both) with exceptions, built with
/// verification: `phishing` and `gambling` folders and an allow list. Returns the file.
fn build_ut1(dir: &Path) -> PathBuf {
    let mut phishing_domains = String::new();
    let mut phishing_urls = String::new();
    let mut gambling_domains = String::new();
    for i in 0..300 {
        phishing_domains.push_str(&format!("evil{i}.example\nboth{i}.example\n"));
        phishing_urls.push_str(&format!(
            "host{i}.example/login\ndocs.evil{i}.example/malware\n"
        ));
        gambling_domains.push_str(&format!("bet{i}.example\nboth{i}.example\n"));
    }
    for (folder, file, text) in [
        ("phishing", "domains", &phishing_domains),
        ("phishing", "urls", &phishing_urls),
        ("gambling", "domains", &gambling_domains),
    ] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join(file), text).unwrap();
    }
    // Exceptions: a subdomain of a blocked domain, a path under one, and an entry that is also
    // blocked (the tie goes to the exception); `docs.evil*/malware` stays blocked under them.
    let mut allow = String::new();
    for i in 0..300 {
        allow.push_str(&format!(
            "docs.evil{i}.example\nhost{i}.example/login/help\nbet{i}.example\n"
        ));
    }
    allow.push_str("docs.added.example\n");
    std::fs::write(dir.join("allow.txt"), allow).unwrap();
    build_list(
        dir.join("ut1.bloom"),
        [
            "--ut1".into(),
            dir.join("phishing"),
            dir.join("gambling"),
            "--allow".into(),
            dir.join("allow.txt"),
            "--verify".into(),
            // Room for the key `redis add` puts in.
            "--capacity".into(),
            "100000".into(),
        ],
    )
}

#[test]
fn categories_and_exceptions_through_redis_are_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = build_ut1(dir.path());
    let server = RedisServer::start();
    let url = server.url();
    phishbloom()
        .args(["redis", "push"])
        .arg(&file)
        .args([&url, "--name", "ut1"])
        .assert()
        .success();
    let redis = ["check", "--redis", &url, "--name", "ut1"];

    let mut queries = Vec::new();
    for i in (0..300).step_by(7) {
        queries.extend([
            format!("http://www.evil{i}.example/x"),
            format!("https://docs.evil{i}.example/guide"),
            format!("docs.evil{i}.example/malware/x.exe"),
            format!("host{i}.example/login?next=1"),
            format!("host{i}.example/login/help/faq"),
            format!("bet{i}.example/slots"),
            format!("www.both{i}.example"),
            format!("clean{i}.example"),
        ]);
    }
    let stdin = queries.join("\n") + "\n";
    for flags in [
        &[][..],
        &["--json"],
        &["--category", "gambling"],
        &["--category", "phishing", "--json"],
    ] {
        let local = run(phishbloom().arg("check").arg(&file).args(flags), &stdin);
        let remote = run(phishbloom().args(redis).args(flags), &stdin);
        assert_eq!(remote, local, "{flags:?}");
        assert_eq!(local.1, Some(0), "{flags:?}");
    }
    // What the file answers, spelled out once: exact categories (one or both), the exception
    // that allows, and the more specific block entry under an exception.
    let local = run(phishbloom().arg("check").arg(&file), &stdin).0;
    for line in [
        "http://www.evil7.example/x\tlisted\tevil7.example\tdomain\tphishing\n",
        "https://docs.evil7.example/guide\tallowed\tdocs.evil7.example\tdomain\tphishing\n",
        "docs.evil7.example/malware/x.exe\tlisted\tdocs.evil7.example/malware\turl\tphishing\n",
        "host7.example/login/help/faq\tallowed\thost7.example/login/help\turl\tphishing\n",
        "bet7.example/slots\tallowed\tbet7.example\tdomain\tgambling\n",
        "www.both7.example\tlisted\tboth7.example\tdomain\tgambling,phishing\n",
        "clean7.example\tclean\n",
    ] {
        assert!(local.contains(line), "{line:?} not in the file's answers");
    }

    // Exit codes: only allowed items are not listed (1), as for the file; as arguments too.
    let allowed = [
        "https://docs.evil14.example/",
        "bet14.example",
        "host14.example/login/help",
    ];
    let local = run(phishbloom().arg("check").arg(&file).args(allowed), "");
    let remote = run(phishbloom().args(redis).args(allowed), "");
    assert_eq!(remote, local);
    assert_eq!(local.1, Some(1));
    assert_eq!(local.0.matches("\tallowed\t").count(), 3, "{}", local.0);

    // An unknown category is an error naming the list's, as for the file.
    assert_error(
        phishbloom()
            .args(redis)
            .args(["--category", "games", "x.example"]),
        &["no category `games`", "phishing, gambling"],
    );

    // A key added to a list of several categories names its category, as `add` does for a
    // file; without one it is refused with the list's categories.
    assert_error(
        phishbloom().args(["redis", "add", &url, "--name", "ut1", "added.example"]),
        &["several categories (phishing, gambling)", "--category"],
    );
    phishbloom()
        .args([
            "redis",
            "add",
            &url,
            "--name",
            "ut1",
            "--category",
            "phishing",
        ])
        .arg("added.example")
        .assert()
        .success();
    // Listed in its category exactly, and allowed under an exception like any entry.
    let added = run(
        phishbloom().args(redis),
        "http://www.added.example/\nhttp://docs.added.example/a\n",
    );
    assert_eq!(
        added,
        (
            "http://www.added.example/\tlisted\tadded.example\tdomain\tphishing\n\
             http://docs.added.example/a\tallowed\tdocs.added.example\tdomain\tphishing\n"
                .to_string(),
            Some(0)
        )
    );

    // redis info lists the categories and exceptions as info does for the file.
    let text = |command: &mut Command| run(command, "").0;
    let local = text(phishbloom().arg("info").arg(&file));
    let remote = text(phishbloom().args(["redis", "info", &url, "--name", "ut1"]));
    for prefix in ["categories ", "exceptions "] {
        let line = |text: &str| {
            text.lines()
                .find(|l| l.starts_with(prefix))
                .map(str::to_string)
        };
        assert_eq!(line(&remote), line(&local), "{remote}");
        assert!(line(&local).is_some(), "{local}");
    }
    assert!(
        remote.contains("with their entries' categories"),
        "{remote}"
    );
}
