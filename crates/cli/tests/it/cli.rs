//! End-to-end tests of the `phishbloom` executable on data the tests generate.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

use crate::common;
use common::{assert_error, build_list, phishbloom};

/// A dataset.csv-shaped file: every 4th row phishing, with a quoted URL holding a comma.
fn dataset(dir: &Path) -> PathBuf {
    let mut text = String::from("url,isMalicious\n");
    for i in 0..4000 {
        let label = if i % 4 == 0 { -1 } else { 1 };
        text.push_str(&format!("site{i}.example.com/login,{label}\n"));
    }
    text.push_str("\"comma.example.com/a,b\",-1\nbroken-row-without-label\n");
    let path = dir.join("dataset.csv");
    std::fs::write(&path, text).unwrap();
    path
}

/// Builds a filter from `input` with extra arguments; returns its path.
fn build(dir: &Path, input: &Path, extra: &[&str]) -> PathBuf {
    let args = [input.as_os_str()]
        .into_iter()
        .chain(extra.iter().map(OsStr::new));
    build_list(dir.join("f.bloom"), args)
}

#[test]
fn build_check_info_round_trip_on_a_csv() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let filter = dir.path().join("f.bloom");
    phishbloom()
        .args(["build"])
        .arg(&data)
        .arg("-o")
        .arg(&filter)
        .assert()
        .success()
        .stdout(predicate::str::contains("n = 1,001 URL entries"))
        .stdout(predicate::str::contains("1 malformed"))
        .stdout(predicate::str::contains("line 4003"));

    // Members in other spellings are listed; exit 0 because one is.
    phishbloom()
        .arg("check")
        .arg(&filter)
        .args([
            "HTTP://SITE0.example.com/login/",
            "comma.example.com/a,b",
            "nowhere.example.org",
        ])
        .assert()
        .code(0)
        .stdout(
            "HTTP://SITE0.example.com/login/\tlisted\tsite0.example.com/login\turl\tdataset\n\
             comma.example.com/a,b\tlisted\tcomma.example.com/a,b\turl\tdataset\n\
             nowhere.example.org\tclean\n",
        );
    // Nothing listed: exit 1.
    phishbloom()
        .arg("check")
        .arg(&filter)
        .arg("nowhere.example.org")
        .assert()
        .code(1);

    phishbloom()
        .arg("info")
        .arg(&filter)
        .assert()
        .success()
        .stdout(predicate::str::contains("every section verified"))
        .stdout(predicate::str::contains(
            "entries           1,001 URL entries",
        ))
        .stdout(predicate::str::contains("kind              blocked"));
    let json = phishbloom()
        .arg("info")
        .arg(&filter)
        .arg("--json")
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(info["meta"]["entries"], 1001);
    assert_eq!(info["meta"]["scheme"], "expressions");
    assert_eq!(info["meta"]["probes_per_item"], 20);
    assert_eq!(info["meta"]["name"], "f");
    assert_eq!(info["meta"]["version"], 1);
    assert_eq!(info["verification"], serde_json::Value::Null);
    assert_eq!(info["filters"][0]["items"], 1001);
}

#[test]
fn check_streams_stdin_in_order_as_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let filter = build(dir.path(), &dataset(dir.path()), &["--kind", "classic"]);
    let mut input = String::new();
    for i in 0..50_000 {
        input.push_str(&format!("site{}.example.com/login\n", i % 8000));
    }
    let output = phishbloom()
        .arg("check")
        .arg(&filter)
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    // The same lines from a regular file (`< file`), which is read in whole chunks straight
    // into their buffers (over 1 MiB of lines here: more than one chunk, a line cut at the
    // boundary): the same output. Without a final newline, the last line too.
    let file = dir.path().join("lines.txt");
    std::fs::write(&file, input.trim_end()).unwrap();
    let from_file = std::process::Command::new(assert_cmd::cargo::cargo_bin("phishbloom"))
        .arg("check")
        .arg(&filter)
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert_eq!(from_file.status.code(), Some(0));
    assert!(
        from_file.stdout == output.stdout,
        "stdin as a file answers as a pipe does"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 50_000);
    for (i, line) in lines.iter().enumerate() {
        let (key, verdict) = line.split_once('\t').unwrap();
        assert_eq!(key, format!("site{}.example.com/login", i % 8000));
        if (i % 8000) % 4 == 0 && i % 8000 < 4000 {
            assert!(verdict.starts_with("listed\t"), "{line}");
        }
    }

    let output = phishbloom()
        .arg("check")
        .arg(&filter)
        .arg("--json")
        .write_stdin("site0.example.com/login\n\u{fffd}odd\n")
        .output()
        .unwrap();
    let values: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(values[0]["listed"], true);
    assert_eq!(values[1]["key"], "\u{fffd}odd");
}

#[test]
fn exact_keys_for_passwords_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("pw.bloom");
    phishbloom()
        .args(["build", "-", "--exact", "--fpp", "0.001", "-o"])
        .arg(&output)
        .write_stdin("123456\nPassword\npassword\n123456\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("1 duplicates"))
        .stdout(predicate::str::contains("exact keys"));
    phishbloom()
        .arg("check")
        .arg(&output)
        .args(["Password", "PASSWORD", " 123456"])
        .assert()
        .code(0)
        .stdout("Password\tlisted\tPassword\tkey\tstdin\nPASSWORD\tclean\n 123456\tclean\n");
}

/// `build --exact` of one list streams it (hashes spilled to files in TMPDIR): a file and the
/// same bytes on stdin give the same blocklist and counts, the temporary files are gone after
/// a build and after a failed one, and bad input is refused naming it.
#[test]
fn streamed_exact_build_from_a_file_and_from_stdin_agree() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // 600,000 lines: on one thread, enough that most partitions spill to a temporary file.
    let mut list = Vec::new();
    for i in 0..600_000u32 {
        match i % 7 {
            0 => list.extend_from_slice(b"\r\n"),
            1 => list.extend_from_slice(format!("k{}\r\n", i / 2).as_bytes()),
            _ => list.extend_from_slice(format!("k{i}\n").as_bytes()),
        }
    }
    list.extend(std::iter::repeat_n(b'x', 70_000));
    list.extend_from_slice(b"\nlast");
    let path = dir.path().join("list.txt");
    std::fs::write(&path, &list).unwrap();
    let run = |sub: &str, input: &str, threads: &str, stdin: Option<&[u8]>| {
        let out = dir.path().join(sub);
        std::fs::create_dir(&out).unwrap();
        let mut command = phishbloom();
        command
            .env("TMPDIR", &tmp)
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .current_dir(dir.path())
            // One category name for both (by default it is the file's name, or `stdin`).
            .args([
                "build",
                input,
                "--exact",
                "--category",
                "keys",
                "--threads",
                threads,
            ])
            .arg("-o")
            .arg(out.join("keys.bloom"));
        if let Some(stdin) = stdin {
            command.write_stdin(stdin.to_vec());
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        let counts = stdout.lines().nth(1).unwrap_or("").to_string();
        (std::fs::read(out.join("keys.bloom")).unwrap(), counts)
    };
    let (from_file, counts) = run("a", "list.txt", "1", None);
    let (from_stdin, stdin_counts) = run("b", "-", "2", Some(&list));
    assert!(from_file == from_stdin, "the blocklists differ");
    assert_eq!(counts, stdin_counts);
    // 600,001 rows + the last line; every other 7th line repeats one of the lines before it.
    assert!(
        counts.contains("600,002 rows") && counts.contains("85,715 blank"),
        "{counts}"
    );
    assert!(counts.contains("1 malformed"), "{counts}");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);

    // A temporary directory that does not exist: refused, naming it and TMPDIR.
    let output = dir.path().join("c.bloom");
    assert_error(
        phishbloom()
            .env("TMPDIR", dir.path().join("missing"))
            .args(["build", "--exact", "--threads", "1", "-o"])
            .arg(&output)
            .arg(&path),
        &["missing", "TMPDIR"],
    );
    assert!(!output.exists());
    // Bad input: refused naming it, the temporary directory left empty.
    let table = dir.path().join("table.txt");
    std::fs::write(&table, "url,label\nevil.com,1\n").unwrap();
    let blank = dir.path().join("blank.txt");
    std::fs::write(&blank, "\n\r\n\n").unwrap();
    for (input, needle) in [(&table, "table.txt"), (&blank, "blank.txt"), (&tmp, "tmp")] {
        assert_error(
            phishbloom()
                .env("TMPDIR", &tmp)
                .args(["build", "--exact", "-o"])
                .arg(&output)
                .arg(input),
            &[needle],
        );
    }
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn sha256_strategy_and_plain_lists_work_too() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.txt");
    std::fs::write(&list, "evil.com\nspam@bad.example\n").unwrap();
    let filter = build(
        dir.path(),
        &list,
        &["--exact", "--hash", "sha256", "--kind", "classic"],
    );
    phishbloom()
        .arg("check")
        .arg(&filter)
        .args(["evil.com", "spam@bad.example", "EVIL.com"])
        .assert()
        .code(0)
        .stdout(
            "evil.com\tlisted\tevil.com\tkey\tlist\n\
             spam@bad.example\tlisted\tspam@bad.example\tkey\tlist\nEVIL.com\tclean\n",
        );
    phishbloom()
        .arg("info")
        .arg(&filter)
        .assert()
        .stdout(predicate::str::contains("sha256 hash"));
    assert_error(
        phishbloom()
            .arg("build")
            .arg(&list)
            .arg("-o")
            .arg(dir.path().join("x.bloom"))
            .args(["--hash", "sha256"]),
        &["--exact"],
    );
}

#[test]
fn eval_json_reports_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let output = phishbloom()
        .args(["eval", "--json", "--random", "20000", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for field in [
        "n",
        "m",
        "k",
        "bytes",
        "bits_per_key",
        "false_negatives",
        "benign",
        "random",
    ] {
        assert!(!report[field].is_null(), "{field} missing in {report}");
    }
    assert_eq!(report["n"], 1001);
    assert_eq!(report["false_negatives"], 0);
    assert_eq!(report["benign"]["queries"], 3000);
    assert_eq!(report["random"]["queries"], 20000);
    for field in [
        "false_positives",
        "rate",
        "ci_low",
        "ci_high",
        "theoretical",
    ] {
        assert!(report["random"][field].is_number(), "{field}");
    }
    assert!(report["random"]["ci_low"].as_f64().unwrap() <= 0.01);
}

#[test]
fn plan_prints_the_seed_figures_and_the_memory_table() {
    phishbloom()
        .args(["plan", "-n", "10327", "-p", "0.01"])
        .assert()
        .success()
        .stdout(predicate::str::contains("98,985"))
        .stdout(predicate::str::contains("classic"))
        .stdout(predicate::str::contains("blocked"));
    let output = phishbloom()
        .args(["plan", "-n", "1e4,1e5,1e8", "-p", "1e-4,1e-7", "--json"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 12);
    assert!(rows
        .iter()
        .all(|r| r["hashset_bytes"].as_u64().unwrap() > r["bytes"].as_u64().unwrap()));
}

#[test]
fn input_errors_exit_2_with_one_line_naming_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.bloom");
    let build = |input: &Path, extra: &[&str]| {
        let mut command = phishbloom();
        command
            .arg("build")
            .arg(input)
            .arg("-o")
            .arg(&out)
            .args(extra);
        command
    };
    assert_error(
        &mut build(&dir.path().join("missing.csv"), &[]),
        &["missing.csv", "open"],
    );
    assert_error(&mut build(dir.path(), &[]), &["is a directory"]);

    let no_url = dir.path().join("no_url.csv");
    std::fs::write(&no_url, "link,isMalicious\nx.com,-1\n").unwrap();
    assert_error(
        &mut build(&no_url, &[]),
        &["no_url.csv", "no `url` column", "link"],
    );

    let data = dataset(dir.path());
    assert_error(
        &mut build(&data, &["--label-value", "7"]),
        &["isMalicious = 7", "values seen"],
    );

    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    assert_error(&mut build(&empty, &[]), &["empty.txt", "no keys"]);

    assert!(!out.exists(), "a failed build left an output file");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn parameter_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("never.bloom");
    for fpp in ["0", "1.5"] {
        phishbloom()
            .arg("build")
            .arg(&data)
            .arg("-o")
            .arg(&out)
            .args(["--fpp", fpp])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("strictly between 0 and 1"));
    }
    phishbloom()
        .args(["plan", "-n", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("whole number of keys"));
    assert!(!out.exists());
}

#[test]
fn corrupted_and_truncated_filter_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let filter = build(dir.path(), &dataset(dir.path()), &[]);
    let bytes = std::fs::read(&filter).unwrap();

    let corrupted = dir.path().join("corrupted.bloom");
    let mut flipped = bytes.clone();
    flipped[100] ^= 0x01;
    std::fs::write(&corrupted, flipped).unwrap();
    assert_error(
        phishbloom().arg("check").arg(&corrupted).arg("x.com"),
        &["corrupted.bloom", "checksum mismatch"],
    );
    assert_error(
        phishbloom().arg("info").arg(&corrupted),
        &["corrupted.bloom", "checksum mismatch"],
    );

    let truncated = dir.path().join("truncated.bloom");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_error(
        phishbloom().arg("check").arg(&truncated).arg("x.com"),
        &["truncated.bloom", "truncated"],
    );

    let not_a_filter = dir.path().join("dataset.csv");
    assert_error(
        phishbloom().arg("info").arg(&not_a_filter),
        &["not a phishbloom blocklist file"],
    );
    assert_error(
        phishbloom()
            .arg("info")
            .arg(dir.path().join("absent.bloom")),
        &["absent.bloom"],
    );
}

#[test]
fn demo_without_data_says_where_to_get_it() {
    assert_error(
        phishbloom().args(["demo", "--data", "/nonexistent/dataset.csv"]),
        &["XD-ANG/Phishing_Detection_GNN", "--data"],
    );
}

#[test]
fn demo_runs_on_generated_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    phishbloom()
        .args(["demo", "--random", "20000", "--data"])
        .arg(&data)
        .assert()
        .success()
        .stdout(predicate::str::contains("classic  n = 1,001"))
        .stdout(predicate::str::contains("0 false negatives"));
}

/// A UT1-style category folder with domain and URL entries.
fn ut1_category(dir: &Path) -> PathBuf {
    let category = dir.join("phishing");
    std::fs::create_dir(&category).unwrap();
    std::fs::write(
        category.join("domains"),
        "example-listed-domain.com\nbad.example.org\n",
    )
    .unwrap();
    std::fs::write(category.join("urls"), "sig2fa.wixsite.com/sig2faverify\n").unwrap();
    category
}

/// Checks the canonicalization examples (case, port, dot segments, fragment; a domain that only
/// ends like a listed one; a URL entry matching its paths) against a filter built from
/// [`ut1_category`].
fn check_canonical_examples(check: &mut Command) {
    check
        .write_stdin(
            "HTTP://WWW.Example-Listed-Domain.com:80/x/../y#f\nnotexample-listed-domain.com\n\
             sig2fa.wixsite.com/sig2faverify/a?b=1\nsig2fa.wixsite.com/other\n",
        )
        .assert()
        .code(0)
        .stdout(
            "HTTP://WWW.Example-Listed-Domain.com:80/x/../y#f\tlisted\texample-listed-domain.com\tdomain\tphishing\n\
             notexample-listed-domain.com\tclean\n\
             sig2fa.wixsite.com/sig2faverify/a?b=1\tlisted\tsig2fa.wixsite.com/sig2faverify\turl\tphishing\n\
             sig2fa.wixsite.com/other\tclean\n",
        );
}

#[test]
fn ut1_build_answers_the_canonical_examples() {
    let dir = tempfile::tempdir().unwrap();
    let category = ut1_category(dir.path());
    let filter = dir.path().join("p.bloom");
    phishbloom()
        .args(["build", "--ut1"])
        .arg(&category)
        .arg("-o")
        .arg(&filter)
        .assert()
        .success()
        .stdout(predicate::str::contains("2 domain, 1 URL"));
    check_canonical_examples(phishbloom().arg("check").arg(&filter));
    assert_error(
        phishbloom()
            .args(["build", "--ut1"])
            .arg(dir.path().join("nope"))
            .arg("-o")
            .arg(&filter),
        &["not a UT1 category folder"],
    );
}

#[test]
fn cabf_engine_has_the_same_semantics() {
    let dir = tempfile::tempdir().unwrap();
    let category = ut1_category(dir.path());
    let filter = dir.path().join("p.cabf");
    phishbloom()
        .args(["build", "--kind", "cabf", "--verify", "--ut1"])
        .arg(&category)
        .arg("-o")
        .arg(&filter)
        .assert()
        .success()
        .stdout(predicate::str::contains("CaBF engine"));
    check_canonical_examples(phishbloom().args(["check", "--verify"]).arg(&filter));
    let mut bytes = std::fs::read(&filter).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 1;
    std::fs::write(&filter, bytes).unwrap();
    assert_error(
        phishbloom().arg("check").arg(&filter).arg("x.com"),
        &["p.cabf", "corrupted"],
    );
    phishbloom()
        .arg("info")
        .arg(&filter)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("corrupted"));
}

#[test]
fn verify_confirms_hits_and_needs_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let category = ut1_category(dir.path());
    let filter = dir.path().join("v.bloom");
    phishbloom()
        .args(["build", "--verify", "--ut1"])
        .arg(&category)
        .arg("-o")
        .arg(&filter)
        .assert()
        .success();
    phishbloom()
        .args(["check", "--verify"])
        .arg(&filter)
        .args(["a.bad.example.org/x", "good.example.org"])
        .assert()
        .code(0)
        .stdout(
            "a.bad.example.org/x\tlisted\tbad.example.org\tdomain\tphishing\ngood.example.org\tclean\n",
        );
    phishbloom()
        .arg("info")
        .arg(&filter)
        .assert()
        .stdout(predicate::str::contains("3 fingerprints"));
    // No table beside the file: the verification is a section of it.
    assert!(!dir.path().join("v.bloom.verify").exists());
    let plain = dir.path().join("plain.bloom");
    phishbloom()
        .args(["build", "--ut1"])
        .arg(&category)
        .arg("-o")
        .arg(&plain)
        .assert()
        .success();
    assert_error(
        phishbloom()
            .args(["check", "--verify"])
            .arg(&plain)
            .arg("x.com"),
        &["plain.bloom", "no verification section", "--verify"],
    );
}

#[test]
fn canon_prints_canonical_forms_and_expressions() {
    use std::os::unix::ffi::OsStrExt;
    let weird = std::ffi::OsStr::from_bytes(b"http://a.com/\xff\tb");
    phishbloom()
        .arg("canon")
        .arg("HTTP://Evil.COM:80/login/../a/./b#x")
        .arg("http://3279880203/blah")
        .arg(weird)
        .assert()
        .success()
        .stdout("http://evil.com/a/b\nhttp://195.127.0.11/blah\nhttp://a.com/%FFb\n");
    phishbloom()
        .args(["canon", "--expressions"])
        .write_stdin("www.evil.com/a?q\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("http://www.evil.com/a?q\n"))
        .stdout(predicate::str::contains("  evil.com\tdomain\n"))
        .stdout(predicate::str::contains("  evil.com/a?q\turl\n"));
    phishbloom()
        .arg("canon")
        .arg("http://")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("http://"));
}

#[test]
fn a_closed_output_pipe_ends_quietly_without_a_panic() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command as Process, Stdio};
    // Far more output than a pipe buffers (64 KiB), so the writer meets the closed pipe.
    let input: String = (0..200_000)
        .map(|i| format!("http://host{i}.example/a/b\n"))
        .collect();
    let path = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(path.path(), input).unwrap();
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("phishbloom"))
        .arg("canon")
        .stdin(std::fs::File::open(path.path()).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here: the rest of the output goes to a closed pipe.
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(first, "http://host0.example/a/b\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
