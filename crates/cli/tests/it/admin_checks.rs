//! Refusals and verifications an admin meets, through the real executable: `check` on a keyword
//! list, `info` verifying a keyword index whole, rates a kind cannot reach, an absurd capacity
//! and a failed allocation, a failed writer's temporary files, a held edit lock, and what
//! `remove --help` says.

use crate::common;

use common::*;

/// A keyword list of `n` phrases, with its index (`--verify`).
fn keyword_list(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let input = dir.join("kw.txt");
    let phrases: Vec<String> = (0..n).map(|i| format!("spam phrase {i}")).collect();
    std::fs::write(&input, phrases.join("\n")).unwrap();
    build_list(
        dir.join("kw.bloom"),
        ["--keywords", input.to_str().unwrap(), "--verify"],
    )
}

#[test]
fn check_refuses_a_keyword_list_and_names_scan() {
    let dir = tempfile::tempdir().unwrap();
    let list = keyword_list(dir.path(), 10);
    assert_error(
        phishbloom().arg("check").arg(&list).arg("spam phrase 1"),
        &["a keyword list", "phishbloom scan"],
    );
    assert_error(
        phishbloom()
            .arg("check")
            .arg(&list)
            .write_stdin("spam phrase 1\n"),
        &["a keyword list"],
    );
}

#[test]
fn info_verifies_every_block_of_a_keyword_index() {
    let dir = tempfile::tempdir().unwrap();
    let list = keyword_list(dir.path(), 3000);
    let info = info_json(&list);
    let section = info["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "keyword index section")
        .expect("a keyword index section")
        .clone();
    let (offset, len) = (
        section["offset"].as_u64().unwrap() as usize,
        section["bytes"].as_u64().unwrap() as usize,
    );
    let original = std::fs::read(&list).unwrap();
    phishbloom().arg("info").arg(&list).assert().success();
    let damaged = dir.path().join("damaged.bloom");
    // 60 flips spread over the section: each must be caught (the directory by its checksum on
    // opening, a block by its own checksum, which `info` now reads).
    for i in 0..60 {
        let at = offset + (i * 7919 + 13) % len;
        let mut bytes = original.clone();
        bytes[at] ^= 1 << (i % 8);
        std::fs::write(&damaged, &bytes).unwrap();
        let output = phishbloom().arg("info").arg(&damaged).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "a flip at byte {at} (section offset {}) was not caught: {}",
            at - offset,
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn a_rate_the_kind_cannot_reach_is_refused_in_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("l.txt");
    std::fs::write(&input, "evil.example\nbad.example/login\n").unwrap();
    for kind in ["classic", "counting", "cuckoo"] {
        let line = assert_error(
            phishbloom()
                .arg("build")
                .arg(&input)
                .args(["--kind", kind, "--fpp", "1e-300", "-o"])
                .arg(dir.path().join("f.bloom")),
            &["fpp", "e-"],
        );
        assert!(line.len() < 250, "{} characters: {line}", line.len());
    }
    assert!(!dir.path().join("f.bloom").exists());
    // The lowest rates a kind reaches still build, and meet their target.
    build_list(
        dir.path().join("ok.bloom"),
        [
            input.to_str().unwrap(),
            "--kind",
            "classic",
            "--fpp",
            "1e-17",
        ],
    );
}

/// A `--verify` URL list with room to add, in `dir`.
fn room_list(dir: &std::path::Path) -> std::path::PathBuf {
    let input = dir.join("l.txt");
    std::fs::write(&input, "evil.example\n").unwrap();
    build_list(
        dir.join("l.bloom"),
        [input.to_str().unwrap(), "--verify", "--capacity", "100"],
    )
}

#[test]
fn the_next_writer_removes_a_dead_writers_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let list = room_list(dir.path());
    // What a writer killed mid-write leaves (PIDs never exceed 2^22: 99,999,999 is gone).
    let leftover = dir.path().join(".l.bloom.tmp.99999999.0");
    std::fs::write(&leftover, vec![0u8; 1 << 20]).unwrap();
    phishbloom()
        .arg("add")
        .arg(&list)
        .arg("new.example")
        .assert()
        .success();
    assert!(
        !leftover.exists(),
        "the dead writer's temporary file is still there"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn a_held_edit_lock_is_waited_for_at_most_the_lock_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let list = room_list(dir.path());
    // This test process holds the lock, as a writer stopped with SIGSTOP would.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.path().join("l.bloom.lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::write(dir.path().join("l.bloom.lock"), b"4242").unwrap();
    let start = std::time::Instant::now();
    assert_error(
        phishbloom()
            .arg("add")
            .arg(&list)
            .arg("new.example")
            .args(["--lock-timeout", "1s"]),
        &["process 4242", "edit lock", "--lock-timeout"],
    );
    let waited = start.elapsed();
    assert!(
        waited >= std::time::Duration::from_secs(1) && waited < std::time::Duration::from_secs(20),
        "{waited:?}"
    );
    drop(lock);
    phishbloom()
        .arg("add")
        .arg(&list)
        .arg("new.example")
        .args(["--lock-timeout", "1s"])
        .assert()
        .success();
}

#[test]
fn remove_help_says_what_remove_works_on() {
    let help = phishbloom()
        .args(["remove", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(help).unwrap();
    assert!(help.contains("--verify"), "{help}");
    assert!(help.contains("blocked"), "{help}");
    // And it does: a blocked list with its verification section forgets a removed entry.
    let dir = tempfile::tempdir().unwrap();
    let list = room_list(dir.path());
    phishbloom()
        .arg("remove")
        .arg(&list)
        .arg("evil.example")
        .assert()
        .success();
    assert_eq!(verdicts(&list, &["http://evil.example/".into()]), ["clean"]);
}

#[test]
fn an_absurd_capacity_is_refused_and_a_failed_allocation_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("keys.txt");
    let keys: Vec<String> = (0..1000).map(|i| format!("key{i}")).collect();
    std::fs::write(&input, keys.join("\n")).unwrap();
    let output = dir.path().join("big.bloom");
    assert_error(
        phishbloom()
            .args(["build", "--exact"])
            .arg(&input)
            .args(["--capacity", "3e9", "-o"])
            .arg(&output),
        &["more than 1000 times", "--force"],
    );
    assert!(!output.exists());
    // Forced under a 3 GB address-space limit: the 3.7 GB filter cannot be had — an error
    // naming the size, exit 2, no panic, no abort, nothing written.
    let script = format!(
        "ulimit -v 3000000 && exec '{}' build --exact '{}' --capacity 3e9 --force -o '{}'",
        env!("CARGO_BIN_EXE_phishbloom"),
        input.display(),
        output.display()
    );
    let run = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot allocate"), "{stderr}");
    assert!(!output.exists());
    // A capacity up to 1,000 times the entries builds.
    build_list(
        dir.path().join("ok.bloom"),
        ["--exact", input.to_str().unwrap(), "--capacity", "1000000"],
    );
}
