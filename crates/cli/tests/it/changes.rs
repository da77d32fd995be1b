//! Lists that change, through the real executable: `add`, `remove`, `merge`, `diff` and `apply`,
//! and every refusal — each exit 2 with one line naming the file and the reason, the file left
//! byte for byte as it was.

use std::path::{Path, PathBuf};

use crate::common;
use common::{assert_error, phishbloom, verdicts};

/// Writes a list of `lines` to `dir/name`.
fn list(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn hosts(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("phish{i}.example.com")).collect()
}

/// Builds `list` into `dir/out` with `flags`.
fn build(dir: &Path, list: &Path, out: &str, flags: &[&str]) -> PathBuf {
    let output = dir.join(out);
    phishbloom()
        .arg("build")
        .arg(list)
        .args(flags)
        .arg("-o")
        .arg(&output)
        .assert()
        .success();
    output
}

/// `info --json` of a file.
fn info(file: &Path) -> serde_json::Value {
    let output = phishbloom()
        .arg("info")
        .arg(file)
        .arg("--json")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn add_and_remove_change_the_file_in_place_and_move_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let base = list(dir.path(), "phishing.txt", &hosts(0..100));
    let file = build(
        dir.path(),
        &base,
        "list.bloom",
        &["--kind", "cuckoo", "--verify", "--capacity", "1000"],
    );
    let fresh = vec!["http://fresh.example.org/login".to_string()];
    assert_eq!(verdicts(&file, &fresh), ["clean"]);
    phishbloom()
        .arg("add")
        .arg(&file)
        .arg("fresh.example.org")
        .assert()
        .success()
        .stdout(predicates::str::contains("added 1 entry;"));
    assert_eq!(verdicts(&file, &fresh), ["listed"]);
    let more = list(dir.path(), "more.txt", &hosts(500..520));
    phishbloom()
        .arg("add")
        .arg(&file)
        .arg("--from")
        .arg(&more)
        .args(["--category", "malware"])
        .assert()
        .success();
    let meta = info(&file);
    assert_eq!(meta["meta"]["version"], 3);
    assert_eq!(meta["meta"]["entries"], 121);
    assert_eq!(verdicts(&file, &hosts(515..516)), ["listed"]);
    // Remove: the entry answers clean, the others stay listed.
    phishbloom()
        .arg("remove")
        .arg(&file)
        .arg("fresh.example.org")
        .arg("phish7.example.com")
        .assert()
        .success()
        .stdout(predicates::str::contains("removed 2 entries"));
    assert_eq!(verdicts(&file, &fresh), ["clean"]);
    let all = hosts(0..100);
    let answers = verdicts(&file, &all);
    for (host, answer) in all.iter().zip(&answers) {
        let want = if host == "phish7.example.com" {
            "clean"
        } else {
            "listed"
        };
        assert_eq!(answer, want, "{host}");
    }
    let meta = info(&file);
    assert_eq!(meta["meta"]["version"], 4);
    assert_eq!(meta["meta"]["entries"], 119);
    // The set fingerprint is the one of a list built from scratch with the same entries.
    let mut lines = hosts(0..100);
    lines.retain(|h| h != "phish7.example.com");
    lines.extend(hosts(500..520));
    let rebuilt = build(
        dir.path(),
        &list(dir.path(), "same.txt", &lines),
        "same.bloom",
        &[],
    );
    assert_eq!(
        meta["meta"]["fingerprint"],
        info(&rebuilt)["meta"]["fingerprint"]
    );
}

#[test]
fn every_refusal_names_the_file_and_leaves_it_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let base = list(dir.path(), "phishing.txt", &hosts(0..50));
    let blocked = build(dir.path(), &base, "blocked.bloom", &[]);
    let cuckoo = build(
        dir.path(),
        &base,
        "cuckoo.bloom",
        &["--kind", "cuckoo", "--verify"],
    );
    let unverified = build(dir.path(), &base, "plain.bloom", &["--kind", "cuckoo"]);
    let cabf = build(dir.path(), &base, "cabf.bloom", &["--kind", "cabf"]);
    let tiny = build(
        dir.path(),
        &list(dir.path(), "one.txt", &hosts(0..1)),
        "tiny.bloom",
        &["--kind", "cuckoo", "--capacity", "4"],
    );
    let before = |file: &Path| std::fs::read(file).unwrap();
    let cases: Vec<(&str, Vec<String>, &PathBuf, Vec<&str>)> = vec![
        (
            "remove",
            vec!["phish1.example.com".into()],
            &blocked,
            vec!["blocked.bloom", "cannot remove from a blocked", "--verify"],
        ),
        (
            "remove",
            vec!["phish1.example.com".into()],
            &unverified,
            vec!["plain.bloom", "verification section"],
        ),
        (
            "remove",
            vec!["never.example.com".into()],
            &cuckoo,
            vec!["cuckoo.bloom", "not in the list", "never.example.com"],
        ),
        (
            "remove",
            vec![
                "phish1.example.com".into(),
                "--category".into(),
                "adult".into(),
            ],
            &cuckoo,
            vec!["cuckoo.bloom", "no category `adult`", "phishing"],
        ),
        (
            "add",
            vec!["x.example".into()],
            &cabf,
            vec!["cannot add to a cabf"],
        ),
        (
            "add",
            vec!["/just/a/path".into()],
            &blocked,
            vec!["not a blocklist entry", "/just/a/path"],
        ),
        (
            "add",
            hosts(100..400),
            &tiny,
            vec!["full", "--capacity", "--grow"],
        ),
    ];
    for (command, args, file, needles) in cases {
        let bytes = before(file);
        assert_error(phishbloom().arg(command).arg(file).args(&args), &needles);
        assert_eq!(
            before(file),
            bytes,
            "{command} {args:?} changed {}",
            file.display()
        );
    }
    // A file that is not there: named, and no lock file left beside it.
    let missing = dir.path().join("missing.bloom");
    assert_error(
        phishbloom().arg("add").arg(&missing).arg("x.example"),
        &["missing.bloom"],
    );
    assert!(!dir.path().join("missing.bloom.lock").exists());
}

#[test]
fn concurrent_adds_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let base = list(dir.path(), "phishing.txt", &hosts(0..10));
    let file = build(
        dir.path(),
        &base,
        "list.bloom",
        &["--kind", "cuckoo", "--verify", "--capacity", "100"],
    );
    let children: Vec<_> = (0..6)
        .map(|i| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("phishbloom"))
                .arg("add")
                .arg(&file)
                .arg(format!("concurrent{i}.example.org"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let added: Vec<String> = (0..6)
        .map(|i| format!("concurrent{i}.example.org"))
        .collect();
    assert!(verdicts(&file, &added).iter().all(|v| v == "listed"));
    let meta = info(&file);
    assert_eq!(
        (
            meta["meta"]["version"].as_u64(),
            meta["meta"]["entries"].as_u64()
        ),
        (Some(7), Some(16))
    );
}

#[test]
fn merge_of_two_shards_answers_for_both_and_refuses_different_sizing() {
    let dir = tempfile::tempdir().unwrap();
    let first = list(dir.path(), "phishing.txt", &hosts(0..100));
    let second = list(dir.path(), "malware.txt", &hosts(50..150));
    let flags = ["--kind", "cuckoo", "--verify", "--capacity", "1000"];
    let a = build(dir.path(), &first, "a.bloom", &flags);
    let b = build(dir.path(), &second, "b.bloom", &flags);
    let merged = dir.path().join("merged.bloom");
    phishbloom()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&merged)
        .assert()
        .success();
    assert!(verdicts(&merged, &hosts(0..150))
        .iter()
        .all(|v| v == "listed"));
    let meta = info(&merged);
    assert_eq!(meta["meta"]["entries"], 150);
    // Both lists at once, built from scratch: the same set fingerprint.
    let both = build(
        dir.path(),
        &list(dir.path(), "both.txt", &hosts(0..150)),
        "both.bloom",
        &flags,
    );
    assert_eq!(
        meta["meta"]["fingerprint"],
        info(&both)["meta"]["fingerprint"]
    );
    // An entry in both lists names both categories.
    let output = phishbloom()
        .arg("check")
        .arg(&merged)
        .arg("phish60.example.com")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&output.stdout).ends_with("\tmalware,phishing\n"),
        "{output:?}"
    );
    // Refusals: different sizing, different kind, the second list as the output.
    let small = build(
        dir.path(),
        &second,
        "small.bloom",
        &["--kind", "cuckoo", "--verify"],
    );
    let blocked = build(
        dir.path(),
        &second,
        "blocked.bloom",
        &["--verify", "--capacity", "1000"],
    );
    let out = dir.path().join("out.bloom");
    assert_error(
        phishbloom()
            .arg("merge")
            .arg(&a)
            .arg(&small)
            .arg("-o")
            .arg(&out),
        &["small.bloom", "sizing"],
    );
    assert_error(
        phishbloom()
            .arg("merge")
            .arg(&a)
            .arg(&blocked)
            .arg("-o")
            .arg(&out),
        &["blocked.bloom", "kind"],
    );
    let bytes = std::fs::read(&b).unwrap();
    assert_error(
        phishbloom().arg("merge").arg(&a).arg(&b).arg("-o").arg(&b),
        &["b.bloom"],
    );
    assert_eq!(std::fs::read(&b).unwrap(), bytes);
    assert!(!out.exists());
}

#[test]
fn a_delta_brings_yesterdays_file_to_todays_list_and_only_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let day1 = list(dir.path(), "phishing.txt", &hosts(0..200));
    let day2_dir = dir.path().join("new");
    std::fs::create_dir(&day2_dir).unwrap();
    // Day 2: 20 sites gone, 30 new.
    let day2 = list(&day2_dir, "phishing.txt", &hosts(20..230));
    for kind in ["cuckoo", "counting", "blocked"] {
        let flags = ["--kind", kind, "--verify", "--capacity", "1000"];
        let file = build(dir.path(), &day1, &format!("{kind}.bloom"), &flags);
        let delta = dir.path().join(format!("{kind}.delta"));
        phishbloom()
            .arg("diff")
            .arg(&day1)
            .arg(&day2)
            .arg("-o")
            .arg(&delta)
            .assert()
            .success()
            .stdout(predicates::str::contains("+30 −20 entries"));
        phishbloom()
            .arg("apply")
            .arg(&file)
            .arg(&delta)
            .assert()
            .success();
        let today = build(&day2_dir, &day2, &format!("{kind}.bloom"), &flags);
        let patched = info(&file);
        assert_eq!(
            patched["meta"]["fingerprint"],
            info(&today)["meta"]["fingerprint"],
            "{kind}"
        );
        assert_eq!(patched["meta"]["version"], 2);
        let all = hosts(0..230);
        assert_eq!(verdicts(&file, &all), verdicts(&today, &all), "{kind}");
        // Applied twice: the file is no longer the delta's base.
        let bytes = std::fs::read(&file).unwrap();
        assert_error(
            phishbloom().arg("apply").arg(&file).arg(&delta),
            &[&format!("{kind}.bloom"), "the delta applies to", "fetch"],
        );
        assert_eq!(std::fs::read(&file).unwrap(), bytes);
    }
}

#[test]
fn deltas_between_blocklist_files_and_compact_deltas_for_bloom_files() {
    let dir = tempfile::tempdir().unwrap();
    let day1 = list(dir.path(), "phishing.txt", &hosts(0..300));
    let day2 = list(dir.path(), "phishing2.txt", &hosts(0..330));
    // Files with verification: the delta names the versions.
    let old = build(
        dir.path(),
        &day1,
        "old.bloom",
        &["--kind", "cuckoo", "--verify", "--capacity", "1000"],
    );
    let new = build(
        dir.path(),
        &day2,
        "new.bloom",
        &[
            "--kind",
            "cuckoo",
            "--verify",
            "--capacity",
            "1000",
            "--category",
            "phishing",
        ],
    );
    let delta = dir.path().join("files.delta");
    phishbloom()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .arg("-o")
        .arg(&delta)
        .assert()
        .success()
        .stdout(predicates::str::contains("from version 1"));
    phishbloom()
        .arg("apply")
        .arg(&old)
        .arg(&delta)
        .assert()
        .success();
    assert_eq!(
        info(&old)["meta"]["fingerprint"],
        info(&new)["meta"]["fingerprint"]
    );
    // A compact delta for a blocked file without verification: prefixes, additions listed.
    let bloom = build(dir.path(), &day1, "bloom.bloom", &[]);
    let compact = dir.path().join("compact.delta");
    phishbloom()
        .arg("diff")
        .arg(&day1)
        .arg(&day2)
        .args(["--compact", "--category", "phishing", "-o"])
        .arg(&compact)
        .assert()
        .success()
        .stdout(predicates::str::contains("compact"));
    phishbloom()
        .arg("apply")
        .arg(&bloom)
        .arg(&compact)
        .assert()
        .success();
    assert!(verdicts(&bloom, &hosts(0..330))
        .iter()
        .all(|v| v == "listed"));
    let text = phishbloom().arg("info").arg(&bloom).output().unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("patch"),
        "{text:?}"
    );
    // Refusals: a compact delta for a file with verification; a damaged or truncated delta;
    // a blocklist without verification as a diff input.
    let verified = build(dir.path(), &day1, "verified.bloom", &["--verify"]);
    let bytes = std::fs::read(&verified).unwrap();
    assert_error(
        phishbloom().arg("apply").arg(&verified).arg(&compact),
        &["verified.bloom", "compact"],
    );
    let mut damaged = std::fs::read(&delta).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    let damaged_path = dir.path().join("damaged.delta");
    std::fs::write(&damaged_path, &damaged).unwrap();
    assert_error(
        phishbloom().arg("apply").arg(&verified).arg(&damaged_path),
        &["damaged.delta", "checksum"],
    );
    std::fs::write(&damaged_path, &damaged[..40]).unwrap();
    assert_error(
        phishbloom().arg("apply").arg(&verified).arg(&damaged_path),
        &["damaged.delta", "truncated"],
    );
    assert_error(
        phishbloom().arg("apply").arg(&verified).arg(&day1),
        &["phishing.txt", "not a usable phishbloom delta"],
    );
    assert_eq!(std::fs::read(&verified).unwrap(), bytes);
    let out = dir.path().join("x.delta");
    assert_error(
        phishbloom()
            .arg("diff")
            .arg(&bloom)
            .arg(&new)
            .arg("-o")
            .arg(&out),
        &["bloom.bloom", "no verification section"],
    );
    assert!(!out.exists());
}
