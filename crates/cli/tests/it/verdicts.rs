//! Verdicts and messages through the real `phishbloom` executable: verdicts that name their
//! categories, exceptions, answers as they come (co-process use), the silent traps refused,
//! the three canonicalization fixes, and messages and help written for users.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::Duration;

use predicates::prelude::*;

use crate::common;
use common::{assert_error, phishbloom};

/// UT1's phishing and gambling folders when the data is present, else generated ones; with a
/// URL of each category that must be listed.
fn ut1(dir: &Path) -> (PathBuf, PathBuf, String, String) {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ut1");
    if shared.join("phishing/domains").is_file() && shared.join("gambling/domains").is_file() {
        let first = |category: &str| {
            let text = std::fs::read_to_string(shared.join(category).join("domains")).unwrap();
            format!(
                "http://www.{}/some/page",
                text.lines().next().unwrap().trim()
            )
        };
        let (p, g) = (first("phishing"), first("gambling"));
        return (shared.join("phishing"), shared.join("gambling"), p, g);
    }
    let make = |name: &str, host: &str| {
        let folder = dir.join(name);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("domains"), format!("{host}\nother-{host}\n")).unwrap();
        folder
    };
    (
        make("phishing", "login-verify.example"),
        make("gambling", "casino-royal.example"),
        "http://www.login-verify.example/some/page".into(),
        "http://www.casino-royal.example/some/page".into(),
    )
}

#[test]
fn verdicts_name_the_ut1_category_of_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (phishing, gambling, phish_url, gamble_url) = ut1(dir.path());
    let verified = dir.path().join("x.bloom");
    phishbloom()
        .args(["build", "--ut1"])
        .arg(&phishing)
        .arg(&gambling)
        .arg("-o")
        .arg(&verified)
        .arg("--verify")
        .assert()
        .success()
        .stdout(predicate::str::contains("categories: phishing"));
    let line = |url: &str, category: &str| {
        let output = phishbloom()
            .arg("check")
            .arg(&verified)
            .arg(url)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let fields: Vec<&str> = text.trim_end().split('\t').collect();
        assert_eq!(fields[1], "listed", "{text}");
        assert!(fields[4].split(',').any(|c| c == category), "{text}");
        assert!(!fields[4].starts_with("possible:"), "{text}");
    };
    line(&phish_url, "phishing");
    line(&gamble_url, "gambling");
    let json = phishbloom()
        .args(["check", "--json"])
        .arg(&verified)
        .arg(&gamble_url)
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["verdict"], "listed");
    assert!(value["categories"]
        .as_array()
        .unwrap()
        .contains(&"gambling".into()));
    assert_eq!(value["categories_exact"], true);
    // `info` lists both categories with their entry counts.
    phishbloom()
        .arg("info")
        .arg(&verified)
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(r"categories +phishing \([0-9,]+\), gambling \([0-9,]+\)")
                .unwrap(),
        );
    // Only gambling: the phishing URL is clean (exactly, with the verification section).
    phishbloom()
        .args(["check", "--category", "gambling"])
        .arg(&verified)
        .arg(&phish_url)
        .assert()
        .code(1);
    assert_error(
        phishbloom()
            .args(["check", "--category", "adult"])
            .arg(&verified)
            .arg(&phish_url),
        &["x.bloom", "no category `adult`", "phishing, gambling"],
    );
    // Without verification the file cannot tell: every category is possible.
    let plain = dir.path().join("plain.bloom");
    phishbloom()
        .args(["build", "--ut1"])
        .arg(&phishing)
        .arg(&gambling)
        .arg("-o")
        .arg(&plain)
        .assert()
        .success();
    phishbloom()
        .arg("check")
        .arg(&plain)
        .arg(&gamble_url)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\tpossible:gambling,phishing\n"));
}

#[test]
fn exceptions_allow_what_a_less_specific_entry_lists() {
    let dir = tempfile::tempdir().unwrap();
    let block = dir.path().join("hosting.txt");
    std::fs::write(&block, "evil-hosting.com\ndocs.evil-hosting.com/phish\n").unwrap();
    let allow = dir.path().join("customers.txt");
    std::fs::write(&allow, "docs.evil-hosting.com\n").unwrap();
    let file = dir.path().join("h.bloom");
    phishbloom()
        .arg("build")
        .arg(&block)
        .arg("--allow")
        .arg(&allow)
        .arg("-o")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("exceptions: 1"));
    phishbloom()
        .arg("check")
        .arg(&file)
        .args([
            "http://docs.evil-hosting.com/guide",
            "http://www.evil-hosting.com/x",
            "http://docs.evil-hosting.com/phish/login",
            "http://example.com/",
        ])
        .assert()
        .code(0)
        .stdout(
            "http://docs.evil-hosting.com/guide\tallowed\tdocs.evil-hosting.com\tdomain\thosting\n\
             http://www.evil-hosting.com/x\tlisted\tevil-hosting.com\tdomain\thosting\n\
             http://docs.evil-hosting.com/phish/login\tlisted\tdocs.evil-hosting.com/phish\turl\thosting\n\
             http://example.com/\tclean\n",
        );
    // Only allowed: exit 1, as nothing is listed.
    phishbloom()
        .arg("check")
        .arg(&file)
        .arg("docs.evil-hosting.com")
        .assert()
        .code(1);
    phishbloom()
        .arg("info")
        .arg(&file)
        .assert()
        .stdout(predicate::str::contains("exceptions        1 entries"));
    // UT1's liste_blanche folder is read as exceptions.
    let whitelist = dir.path().join("liste_blanche");
    std::fs::create_dir(&whitelist).unwrap();
    std::fs::write(whitelist.join("domains"), "docs.evil-hosting.com\n").unwrap();
    let listed = dir.path().join("malware");
    std::fs::create_dir(&listed).unwrap();
    std::fs::write(listed.join("domains"), "evil-hosting.com\n").unwrap();
    let ut1 = dir.path().join("u.bloom");
    phishbloom()
        .args(["build", "--ut1"])
        .arg(&listed)
        .arg(&whitelist)
        .arg("-o")
        .arg(&ut1)
        .assert()
        .success();
    phishbloom()
        .arg("check")
        .arg(&ut1)
        .arg("docs.evil-hosting.com/x")
        .assert()
        .code(1)
        .stdout("docs.evil-hosting.com/x\tallowed\tdocs.evil-hosting.com\tdomain\tmalware\n");
}

#[test]
fn check_answers_each_line_before_waiting_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "evil.com\n").unwrap();
    let file = dir.path().join("l.bloom");
    phishbloom()
        .arg("build")
        .arg(&list)
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("phishbloom"))
        .arg("check")
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // One line at a time, stdin left open: each answer must come back on its own.
    for (url, verdict) in [
        ("http://a.evil.com/x", "listed"),
        ("http://good.org/", "clean"),
    ] {
        writeln!(stdin, "{url}").unwrap();
        stdin.flush().unwrap();
        let answer = rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or_else(|_| panic!("no answer for {url} within a second"));
        assert!(answer.starts_with(&format!("{url}\t{verdict}")), "{answer}");
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn silent_traps_are_refused_with_a_way_forward() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bloom");
    let build = |stdin: &str, extra: &[&str]| {
        let mut command = phishbloom();
        command
            .args(["build", "-", "-o"])
            .arg(&out)
            .args(extra)
            .write_stdin(stdin.to_string());
        command
    };
    // `head dataset.csv | phishbloom build - -o x`
    let head = "url,isMalicious\nmetamascks.com,-1\ngoogle.com,1\n";
    assert_error(
        &mut build(head, &[]),
        &["<stdin>", "url,isMalicious", "--format csv"],
    );
    build(head, &["--format", "csv"])
        .assert()
        .success()
        .stdout(predicate::str::contains("n = 1 URL entries"));
    phishbloom()
        .arg("check")
        .arg(&out)
        .arg("http://metamascks.com/login")
        .assert()
        .code(0);
    // E-mail addresses as URL entries would list whole domains.
    assert_error(
        &mut build("spammer@evil.com\nother@bad.org\n", &[]),
        &["addresses", "--exact"],
    );
    // --exact with --verify, and case folding.
    build(
        "Spammer@Evil.COM\n",
        &["--exact", "--verify", "--fold-case"],
    )
    .assert()
    .success();
    phishbloom()
        .arg("check")
        .arg(&out)
        .args(["spammer@evil.com", "SPAMMER@EVIL.COM", "other@evil.com"])
        .assert()
        .code(0)
        .stdout(
            "spammer@evil.com\tlisted\tspammer@evil.com\tkey\tstdin\n\
             SPAMMER@EVIL.COM\tlisted\tspammer@evil.com\tkey\tstdin\n\
             other@evil.com\tclean\n",
        );
    // Flags that do not apply are errors, never ignored.
    assert_error(
        &mut build("a\n", &["--exact", "--expressions", "150"]),
        &["--expressions"],
    );
    assert_error(
        &mut build("a.com\n", &["--fold-case"]),
        &["--fold-case", "--exact"],
    );
    assert_error(
        &mut build("a.com\n", &["--column", "link"]),
        &["--column", "CSV"],
    );
}

#[test]
fn escaped_schemes_non_web_uris_and_bare_paths() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "evil.com\n").unwrap();
    let file = dir.path().join("l.bloom");
    phishbloom()
        .arg("build")
        .arg(&list)
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    phishbloom()
        .arg("check")
        .arg(&file)
        .arg("http%3A%2F%2Fevil.com/login")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\tlisted\tevil.com\tdomain"));
    phishbloom()
        .arg("canon")
        .arg("http%3A%2F%2Fwackyurl.com:80/")
        .assert()
        .success()
        .stdout("http://wackyurl.com/\n");
    for input in [
        "javascript:alert()",
        "mailto:x@google.com",
        "gopher:google.com",
        "/blah",
    ] {
        phishbloom().args(["canon", "--", input]).assert().code(2);
    }
}

#[test]
fn messages_and_help_are_written_for_users() {
    // A value clap refuses: exit 2 and the reason (clap adds its usage hint).
    phishbloom()
        .args(["plan", "-n", "1e30"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1e30 keys is too large"));
    let output = phishbloom()
        .args(["plan", "-n", "10", "--fpp=1e-300"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("expected_items"), "{stderr}");
    assert!(stderr.contains("raise the rate"), "{stderr}");

    let help = phishbloom().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let (commands, measurement) = help.split_once("Measurement commands").unwrap();
    for command in ["demo", "eval"] {
        assert!(
            !commands.contains(&format!("  {command} ")),
            "{command} among user commands"
        );
        assert!(measurement.contains(command), "{command} missing");
    }
    // The report and the experiments are the lab binary's, not the product's.
    for command in ["report", "experiment"] {
        phishbloom().arg(command).assert().code(2);
    }
    assert!(measurement.contains("-p phishbloom-lab-cli -- report"));
    for subcommand in ["build", "check", "info", "plan", "canon", "redis"] {
        let text = phishbloom().args([subcommand, "--help"]).output().unwrap();
        let text = String::from_utf8(text.stdout).unwrap().to_lowercase();
        assert!(
            !text.contains("seed"),
            "`{subcommand} --help` speaks of seeds"
        );
    }
    let check = phishbloom().args(["check", "--help"]).output().unwrap();
    let check = String::from_utf8(check.stdout).unwrap();
    for needle in [
        "ITEM<TAB>listed<TAB>ENTRY<TAB>KIND<TAB>CATEGORIES",
        "categories_exact",
        "entry_kind",
        "exception",
    ] {
        assert!(check.contains(needle), "{needle}");
    }
}
