//! Keyword lists through the real `phishbloom` executable: `build --keywords`, `scan` of e-mail,
//! mbox and text with its exit codes and JSON answers, `info`'s two rates, and the errors a
//! user meets.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::common;
use common::{build_list, info_json, phishbloom};

const KEYWORDS: &str = "free money\n免费赚钱\nclaim your prize\nviagra\n";

const MESSAGE: &str = concat!(
    "From: offers@example.com\r\nTo: you@example.com\r\n",
    "Subject: =?UTF-8?B?546w5Zyo5YWN6LS56LWa6ZKx5ZWm?=\r\nMIME-Version: 1.0\r\n",
    "Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n",
    "--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
    "Get FREE\r\nmoney today!\r\n",
    "--b\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n",
    // <p>Claim <b>your</b> prize</p>
    "PHA+Q2xhaW0gPGI+eW91cjwvYj4gcHJpemU8L3A+\r\n--b--\r\n"
);

/// Builds `kw.bloom` in `dir` from [`KEYWORDS`], with `extra` build arguments.
fn build(dir: &Path, extra: &[&str]) -> PathBuf {
    let list = dir.join("keywords.txt");
    std::fs::write(&list, KEYWORDS).unwrap();
    let args = [OsStr::new("--keywords"), list.as_os_str()];
    build_list(
        dir.join("kw.bloom"),
        args.into_iter().chain(extra.iter().map(OsStr::new)),
    )
}

#[test]
fn the_spam_job_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &["--verify"]);
    let eml = dir.path().join("offer.eml");
    std::fs::write(&eml, MESSAGE).unwrap();
    let output = phishbloom()
        .args(["scan", "--json"])
        .arg(&list)
        .arg(&eml)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["verdict"], "spam");
    assert_eq!(answer["subject"], "现在免费赚钱啦");
    assert_eq!(answer["hits"], 3);
    let keywords: Vec<&str> = answer["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["keyword"].as_str().unwrap())
        .collect();
    assert_eq!(keywords, ["免 费 赚 钱", "free money", "claim your prize"]);
    assert_eq!(answer["matches"][1]["text"], "FREE\r\nmoney");

    // Plain answers, and clean documents exit 1.
    phishbloom()
        .arg("scan")
        .arg(&list)
        .arg(&eml)
        .assert()
        .code(0)
        .stdout(predicates::str::starts_with(format!(
            "{}\tspam\t3\t",
            eml.display()
        )));
    phishbloom()
        .arg("scan")
        .arg(&list)
        .write_stdin("freedom is not money")
        .assert()
        .code(1)
        .stdout("<stdin>\tclean\t0\n");
    phishbloom()
        .args(["scan", "--min-hits", "4"])
        .arg(&list)
        .arg(&eml)
        .assert()
        .code(1);
}

#[test]
fn mbox_files_and_lines_answer_per_document() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &[]);
    let mbox = dir.path().join("inbox");
    let mut text = String::from("From a@example.com Sat Jan  3 01:05:34 2026\n");
    text.push_str("From: a@example.com\nSubject: hello\n\nnothing here\n\n");
    text.push_str("From b@example.com Sat Jan  3 01:05:35 2026\n");
    text.push_str("From: b@example.com\nSubject: VIAGRA\n\ncheap\n");
    std::fs::write(&mbox, text).unwrap();
    let output = phishbloom()
        .arg("scan")
        .arg(&list)
        .arg(&mbox)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let verdicts: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(verdicts, ["clean", "spam"], "{stdout}");
    assert!(stdout.contains("inbox#2\tspam\t1\tviagra@"), "{stdout}");

    let output = phishbloom()
        .args(["scan", "--format", "lines"])
        .arg(&list)
        .write_stdin("ok\nclaim your prize\n\u{ff}\u{fe} free money")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let verdicts: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(verdicts, ["clean", "spam", "spam"], "{stdout}");
}

#[test]
fn odd_inputs_answer_or_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &[]);
    // Invalid UTF-8 and binary bytes: an answer.
    let binary = dir.path().join("blob.bin");
    let mut bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    bytes.extend_from_slice(b" free money ");
    std::fs::write(&binary, &bytes).unwrap();
    phishbloom()
        .arg("scan")
        .arg(&list)
        .arg(&binary)
        .assert()
        .code(0);
    // A missing file among others: the others are answered, the exit code is 2.
    let output = phishbloom()
        .arg("scan")
        .arg(&list)
        .arg(dir.path().join("missing.eml"))
        .arg(&binary)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stdout).contains("\tspam\t"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("missing.eml") && stderr.contains("cannot open"),
        "{stderr}"
    );
    // A list that is not a keyword list, and --verify without an index.
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, "evil.com\n").unwrap();
    let url_list = dir.path().join("urls.bloom");
    phishbloom()
        .args(["build"])
        .arg(&urls)
        .arg("-o")
        .arg(&url_list)
        .assert()
        .success();
    let output = phishbloom()
        .arg("scan")
        .arg(&url_list)
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("build --keywords"));
    let output = phishbloom()
        .args(["scan", "--verify"])
        .arg(&list)
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--verify"));
    // A keyword list of nothing but blank lines.
    let blank = dir.path().join("blank.txt");
    std::fs::write(&blank, "\n  \n!!!\n").unwrap();
    let output = phishbloom()
        .args(["build", "--keywords"])
        .arg(&blank)
        .arg("-o")
        .arg(dir.path().join("b.bloom"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no keys to build from"));
}

#[test]
fn info_shows_the_rate_per_document_and_per_probe() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(
        dir.path(),
        &["--verify", "--fpp", "0.001", "--probes-per-doc", "2000"],
    );
    let output = phishbloom().arg("info").arg(&list).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("0.100 % per document of up to 2,000 probes; 5.00e-5 % per probe"),
        "{stdout}"
    );
    assert!(
        stdout.contains("phrase lengths    1 (1), 2 (1), 3 (1), 4 (1) tokens"),
        "{stdout}"
    );
    assert!(
        stdout.contains("keyword index     4 keywords in 1 blocks"),
        "{stdout}"
    );
    let info = info_json(&list);
    assert_eq!(info["meta"]["scheme"], "keywords");
    assert_eq!(info["keywords"]["probes_per_doc"], 2000);
    // `check` refuses a keyword list (it finds phrases inside text: `scan` does that).
    phishbloom()
        .arg("check")
        .arg(&list)
        .args(["FREE  money", "money"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("use `phishbloom scan"));
}
