//! Blocklist files as a user meets them through the real `phishbloom` executable: stale
//! verification tables, outputs that must not be overwritten, `info` and `check` on every kind,
//! sizing at absurd rates, first-format files, and I/O errors that name the path once.

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::common;
use common::{assert_error, info_json, phishbloom, verdicts};

/// A list of `n` phishing URLs, `day` deciding which 50 are replaced.
fn day_list(dir: &Path, day: u32) -> (PathBuf, Vec<String>) {
    let urls: Vec<String> = (0..1000)
        .map(|i| {
            if i < 50 && day == 2 {
                format!("new-phish{i}.example.net/login")
            } else {
                format!("phish{i}.example.com/verify/account")
            }
        })
        .collect();
    let path = dir.join(format!("day{day}.txt"));
    std::fs::write(&path, urls.join("\n")).unwrap();
    (path, urls)
}

#[test]
fn files_from_two_builds_never_turn_a_listed_url_clean() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.bloom");
    let (day1, urls1) = day_list(dir.path(), 1);
    let (day2, urls2) = day_list(dir.path(), 2);
    let build = |list: &Path| {
        phishbloom()
            .arg("build")
            .arg(list)
            .args(["--verify", "-o"])
            .arg(&live)
            .assert()
            .success();
    };
    build(&day1);
    let kept_day1 = dir.path().join("day1.bloom");
    std::fs::copy(&live, &kept_day1).unwrap();
    build(&day2);
    // One file per build: nothing beside it that a copy could pair with the wrong filter.
    let beside: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("bloom"))
        .collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
    // Each served file lists every URL of its own list.
    for (file, urls) in [(&kept_day1, &urls1), (&live, &urls2)] {
        assert!(verdicts(file, urls).iter().all(|v| v == "listed"));
    }
    // The rebuild moved the list forward.
    phishbloom()
        .arg("info")
        .arg(&live)
        .assert()
        .success()
        .stdout(predicate::str::contains("version 2"));
    // A mixture of the two builds, as an rsync of a changing file can produce: day 2's file with
    // day 1's bytes from the verification section on. Never a "clean" verdict: an error.
    let one = std::fs::read(&kept_day1).unwrap();
    let mut two = std::fs::read(&live).unwrap();
    assert_eq!(one.len(), two.len());
    let half = two.len() / 2;
    two[half..].copy_from_slice(&one[half..]);
    let mixed = dir.path().join("mixed.bloom");
    std::fs::write(&mixed, &two).unwrap();
    assert_error(
        phishbloom().arg("check").arg(&mixed).arg(&urls2[0]),
        &["mixed.bloom", "corrupted"],
    );
    // A verification table of the first format lying beside the file is ignored.
    std::fs::write(dir.path().join("live.bloom.verify"), &one[..100]).unwrap();
    assert!(verdicts(&live, &urls2).iter().all(|v| v == "listed"));
}

#[test]
fn outputs_that_are_not_regular_files_or_are_inputs_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let (list, _) = day_list(dir.path(), 1);
    let original = std::fs::read(&list).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let link = dir.path().join("link.bloom");
    std::os::unix::fs::symlink(&list, &link).unwrap();
    let hard = dir.path().join("hard.txt");
    std::fs::hard_link(&list, &hard).unwrap();
    let cases: [(&Path, &[&str]); 5] = [
        (&fifo, &["fifo", "a FIFO", "regular file"]),
        (dir.path(), &["a directory"]),
        (&link, &["link.bloom", "symbolic link"]),
        (&list, &["day1.txt", "its own inputs"]),
        (&hard, &["hard.txt", "its own inputs"]),
    ];
    for (output, needles) in cases {
        assert_error(
            phishbloom().arg("build").arg(&list).arg("-o").arg(output),
            needles,
        );
    }
    assert_eq!(std::fs::read(&list).unwrap(), original);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // The same refusal for `--exact` and for UT1 inputs.
    assert_error(
        phishbloom()
            .arg("build")
            .arg(&list)
            .args(["--exact", "-o"])
            .arg(&list),
        &["its own inputs"],
    );
    let category = dir.path().join("phishing");
    std::fs::create_dir(&category).unwrap();
    std::fs::write(category.join("domains"), "evil.com\n").unwrap();
    assert_error(
        phishbloom()
            .args(["build", "--ut1"])
            .arg(&category)
            .arg("-o")
            .arg(category.join("domains")),
        &["its own inputs"],
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn info_and_check_work_on_every_kind_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "evil.com\nbad.org/login\n").unwrap();
    let kinds: [(&str, &[&str], &str, &str); 7] = [
        ("exact", &["--exact"], "evil.com", "blocked"),
        (
            "split",
            &["--kind", "split"],
            "http://www.evil.com/x",
            "split",
        ),
        ("urls", &[], "http://www.evil.com/x", "blocked"),
        ("cabf", &["--kind", "cabf"], "http://www.evil.com/x", "cabf"),
        (
            "classic",
            &["--kind", "classic"],
            "bad.org/login/a",
            "classic",
        ),
        (
            "sha",
            &["--exact", "--hash", "sha256", "--kind", "classic"],
            "bad.org/login",
            "classic",
        ),
        (
            "verified",
            &["--kind", "cabf", "--verify"],
            "evil.com",
            "cabf",
        ),
    ];
    for (name, flags, listed, kind) in kinds {
        let file = dir.path().join(format!("{name}.bloom"));
        phishbloom()
            .arg("build")
            .arg(&list)
            .arg("-o")
            .arg(&file)
            .args(flags)
            .assert()
            .success();
        phishbloom()
            .arg("check")
            .arg(&file)
            .args([listed, "clean.example"])
            .assert()
            .code(0)
            .stdout(predicate::str::contains(format!("{listed}\tlisted")))
            .stdout(predicate::str::contains("clean.example\tclean"));
        let output = phishbloom().arg("info").arg(&file).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}: {output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        for needle in [
            format!("kind              {kind}"),
            "format            version 3".to_string(),
            format!("list              \"{name}\", version 1"),
            "set fingerprint   ".to_string(),
            "metadata section".to_string(),
            "filter section 0".to_string(),
        ] {
            assert!(text.contains(&needle), "{name}: {needle:?} not in\n{text}");
        }
        let info = info_json(&file);
        assert_eq!(info["kind"], kind);
        assert_eq!(info["meta"]["fingerprint"].as_str().unwrap().len(), 32);
        assert_eq!(info["checksum"].as_str().unwrap().len(), 16);
        assert!(info["sections"].as_array().unwrap().len() >= 2);
    }
}

#[test]
fn sizing_at_rates_near_one_answers_at_once() {
    for p in ["0.999999", "0.5", "0.9999999999"] {
        phishbloom()
            .args(["plan", "-n", "1e8", "-p", p])
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .success()
            .stdout(predicate::str::contains("blocked"));
    }
    phishbloom()
        .args(["plan", "-n", "1099511627776", "-p", "0.5"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("128 GiB"));
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("l.txt");
    std::fs::write(&list, "a.com\nb.com\n").unwrap();
    phishbloom()
        .arg("build")
        .arg(&list)
        .args(["--fpp", "0.999999", "-o"])
        .arg(dir.path().join("loose.bloom"))
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success();
}

#[test]
fn first_format_files_are_refused_with_a_way_forward() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.bloom");
    let mut header = b"\x89PHBLOM\n".to_vec();
    header.extend_from_slice(&1u32.to_le_bytes());
    header.resize(200, 0);
    std::fs::write(&old, &header).unwrap();
    for args in [&["info"][..], &["check", "--", "x.com"]] {
        let mut command = phishbloom();
        command.arg(args[0]).arg(&old).args(&args[1..]);
        assert_error(
            &mut command,
            &["old.bloom", "first file format", "phishbloom build"],
        );
    }
    let table = dir.path().join("old.bloom.verify");
    let mut verify = b"\x89PHBVFY\n".to_vec();
    verify.resize(48, 0);
    std::fs::write(&table, verify).unwrap();
    assert_error(
        phishbloom().arg("info").arg(&table),
        &["verification table", "phishbloom build"],
    );
}

#[test]
fn an_io_error_names_the_path_once() {
    let stderr = assert_error(
        phishbloom().args(["check", "/nonexistent/list.bloom", "x"]),
        &["/nonexistent/list.bloom"],
    );
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    assert_eq!(
        stderr.matches("/nonexistent/list.bloom").count(),
        1,
        "{stderr}"
    );
    let stderr = assert_error(
        phishbloom().args(["build", "/nonexistent/list.txt", "-o", "/tmp/never.bloom"]),
        &["/nonexistent/list.txt"],
    );
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

#[test]
fn the_host_gate_is_written_unless_left_out_and_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "evil.com\nbad.org/login\n").unwrap();
    let sections = |file: &Path| -> Vec<String> {
        info_json(file)["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (gated, open) = (
        dir.path().join("gated.bloom"),
        dir.path().join("open.bloom"),
    );
    for (file, extra) in [(&gated, None), (&open, Some("--no-host-gate"))] {
        phishbloom()
            .arg("build")
            .arg(&list)
            .args(extra)
            .args(["--verify", "-o"])
            .arg(file)
            .assert()
            .success();
    }
    assert!(sections(&gated).iter().any(|s| s == "host gate section"));
    assert!(!sections(&open).iter().any(|s| s == "host gate section"));
    let urls: Vec<String> = [
        "http://www.evil.com/x",
        "bad.org/login/step?id=1",
        "bad.org/other",
        "fine.net",
    ]
    .map(String::from)
    .to_vec();
    let want = ["listed", "listed", "clean", "clean"];
    assert_eq!(verdicts(&gated, &urls), want);
    assert_eq!(verdicts(&open, &urls), want);
    // Keys have no hosts: the flag is refused, naming what it applies to.
    assert_error(
        phishbloom()
            .arg("build")
            .arg(&list)
            .args(["--exact", "--no-host-gate", "-o"])
            .arg(dir.path().join("keys.bloom")),
        &["--no-host-gate", "URL entries"],
    );
}
