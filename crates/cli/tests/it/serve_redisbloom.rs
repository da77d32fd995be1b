//! `phishbloom serve --resp` as a RedisBloom user's code sees it: filters created over the
//! protocol (RedisBloom's own scalable Bloom and cuckoo filters) asked with redis-rs —
//! `MULTI`/`EXEC`, `EXPANSION`, `CF.COUNT` of an item added twice, a `BF.SCANDUMP` /
//! `BF.LOADCHUNK` round trip, `DEL` — and kept apart from the served blocklists (never in the
//! HTTP check, `ad_hoc` in `/v1/lists`). Then redis-py's own Bloom and cuckoo tests
//! (`../shared/conformance/redis-py/`, read in place when present; see its README), run with
//! pytest against the real executable: skipped loudly when the folder is absent, and in CI (the
//! `CI` variable set) failing when pytest or redis-py is missing.

use crate::serve_common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use serve_common::*;

/// A server with one served list of exact keys, `leaked`, and the token `tok`; a redis-rs
/// connection that authenticated with it.
fn start(dir: &std::path::Path) -> (Server, redis::Connection) {
    let keys: Vec<String> = (0..10).map(|i| format!("secret{i}")).collect();
    let leaked = build_keys(dir, "leaked", &keys, 20);
    let token = dir.join("token");
    std::fs::write(&token, "tok\n").unwrap();
    let server = Server::start(
        dir,
        &[
            leaked.to_str().unwrap(),
            "--token-file",
            token.to_str().unwrap(),
        ],
    );
    let url = format!("redis://:tok@{}", server.resp);
    let connection = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    (server, connection)
}

fn cmd(con: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<redis::Value> {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command.query(con)
}

fn int(con: &mut redis::Connection, args: &[&str]) -> i64 {
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command
        .query(con)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn transactions_expansion_counts_dumps_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, mut con) = start(dir.path());

    // MULTI … EXEC: queued, then run in order, one array of replies.
    let (reserved, added, exists): (String, Vec<i64>, i64) = redis::pipe()
        .atomic()
        .cmd("BF.RESERVE")
        .arg("grow")
        .arg(0.01)
        .arg(10)
        .arg("EXPANSION")
        .arg(4)
        .cmd("BF.MADD")
        .arg("grow")
        .arg((0..15).map(|i| format!("k{i}")).collect::<Vec<_>>())
        .cmd("BF.EXISTS")
        .arg("grow")
        .arg("k3")
        .query(&mut con)
        .unwrap();
    assert_eq!(reserved, "OK");
    assert_eq!(added, vec![1; 15]);
    assert_eq!(exists, 1);
    // EXPANSION 4: a second filter four times the first.
    let info: Vec<i64> = redis::cmd("BF.INFO")
        .arg("grow")
        .arg("EXPANSION")
        .query(&mut con)
        .unwrap();
    assert_eq!(info, vec![4]);
    let capacity: Vec<i64> = redis::cmd("BF.INFO")
        .arg("grow")
        .arg("CAPACITY")
        .query(&mut con)
        .unwrap();
    assert_eq!(capacity, vec![10 + 40]);
    assert_eq!(int(&mut con, &["BF.CARD", "grow"]), 15);

    // A cuckoo filter counts each add.
    assert_eq!(
        cmd(&mut con, &["CF.RESERVE", "c", "1000", "BUCKETSIZE", "4"]).unwrap(),
        redis::Value::Okay
    );
    assert_eq!(int(&mut con, &["CF.ADD", "c", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.ADD", "c", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.COUNT", "c", "x"]), 2);
    assert_eq!(int(&mut con, &["CF.DEL", "c", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.DEL", "c", "x"]), 1);
    assert_eq!(int(&mut con, &["CF.DEL", "c", "x"]), 0);
    assert_eq!(int(&mut con, &["CF.COUNT", "c", "x"]), 0);

    // SCANDUMP until (0, ""), DEL, LOADCHUNK every chunk: the same filter back.
    let keys: Vec<String> = (0..300_000).map(|i| format!("key{i}")).collect();
    assert_eq!(
        cmd(&mut con, &["BF.RESERVE", "big", "0.001", "200000"]).unwrap(),
        redis::Value::Okay
    );
    for chunk in keys.chunks(10_000) {
        let _: Vec<i64> = redis::cmd("BF.MADD")
            .arg("big")
            .arg(chunk)
            .query(&mut con)
            .unwrap();
    }
    let debug: Vec<String> = redis::cmd("BF.DEBUG").arg("big").query(&mut con).unwrap();
    assert_eq!(debug.len(), 3, "{debug:?}");
    let mut chunks: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut iter = 0;
    loop {
        let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
            .arg("big")
            .arg(iter)
            .query(&mut con)
            .unwrap();
        if next == 0 {
            assert!(data.is_empty());
            break;
        }
        chunks.push((next, data));
        iter = next;
    }
    // A header and more than one chunk of data (about 1.3 MB of bits in two filters).
    assert!(chunks.len() > 2, "{} chunks", chunks.len());
    assert_eq!(int(&mut con, &["DEL", "big", "absent"]), 1);
    assert_eq!(int(&mut con, &["EXISTS", "big"]), 0);
    assert_eq!(int(&mut con, &["BF.EXISTS", "big", "key1"]), 0);
    for (iter, data) in &chunks {
        let _: () = redis::cmd("BF.LOADCHUNK")
            .arg("big")
            .arg(*iter)
            .arg(data.as_slice())
            .query(&mut con)
            .unwrap();
    }
    let reloaded: Vec<String> = redis::cmd("BF.DEBUG").arg("big").query(&mut con).unwrap();
    assert_eq!(reloaded, debug);
    let all: Vec<i64> = redis::cmd("BF.MEXISTS")
        .arg("big")
        .arg(&keys[..])
        .query(&mut con)
        .unwrap();
    assert!(all.iter().all(|&v| v == 1));

    // A served list is a file: DEL refuses it, and it keeps answering.
    let error = cmd(&mut con, &["DEL", "grow", "leaked"]).unwrap_err();
    assert!(error.to_string().contains("served blocklist"), "{error}");
    assert_eq!(int(&mut con, &["EXISTS", "grow", "leaked"]), 2);
    assert_eq!(int(&mut con, &["BF.EXISTS", "leaked", "secret3"]), 1);

    // Kept apart: the HTTP check never asks a filter made here; /v1/lists shows it as ad hoc.
    assert_eq!(int(&mut con, &["BF.ADD", "adhoc", "secret-adhoc"]), 1);
    let http = reqwest::blocking::Client::new();
    let checked: Value = http
        .get(format!("{}/v1/check", server.http))
        .query(&[("url", "secret-adhoc")])
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(checked["verdict"], "clean", "{checked}");
    let listed: Value = http
        .get(format!("{}/v1/check", server.http))
        .query(&[("url", "secret3")])
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(listed["verdict"], "listed", "{listed}");
    let lists: Value = http
        .get(format!("{}/v1/lists", server.http))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let by_name = |name: &str| {
        lists["lists"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {lists}"))
    };
    assert_eq!(by_name("leaked")["ad_hoc"], false);
    assert_eq!(by_name("adhoc")["ad_hoc"], true);
    assert_eq!(by_name("adhoc")["type"], "bloom");
    assert_eq!(by_name("c")["type"], "cuckoo");
    assert_eq!(by_name("grow")["entries"], 15);
}

/// The suite's folder, seen from this crate.
fn suite() -> Option<PathBuf> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/redis-py");
    dir.is_dir().then_some(dir)
}

/// Runs redis-py's Bloom and cuckoo tests in `dir` against `serve --resp`, requiring every one
/// to pass and none to be skipped.
fn run_redis_py_suite(test: &str, dir: &std::path::Path) {
    let available = Command::new("python3")
        .args(["-c", "import pytest, redis"])
        .status()
        .is_ok_and(|s| s.success());
    if !available {
        crate::common::skip(
            test,
            "pytest or redis-py is missing: python3 -m pip install pytest redis (.ci/run installs \
             them)",
        );
        return;
    }
    // No cache or bytecode written into the suite's folder.
    let output = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(dir)
        .env("PB", bin())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "redis-py's tests failed:\n{report}"
    );
    assert!(
        report.contains(" passed") && !report.contains("skipped"),
        "{report}"
    );
}

#[test]
fn redis_py_bloom_and_cuckoo_tests_pass() {
    let Some(dir) = suite() else {
        crate::common::skip(
            "redis_py_bloom_and_cuckoo_tests_pass",
            "../shared/conformance/redis-py is not present",
        );
        return;
    };
    run_redis_py_suite("redis_py_bloom_and_cuckoo_tests_pass", &dir);
}

/// The same tests under RESP3 (`HELLO 3`): the suite's client asked for protocol 3 and its
/// answers compared with the RESP3 answers its tests give beside the RESP2 ones — a copy made
/// at run time in a temporary folder, the suite itself unchanged.
#[test]
fn redis_py_bloom_and_cuckoo_tests_pass_under_resp3() {
    let test = "redis_py_bloom_and_cuckoo_tests_pass_under_resp3";
    let Some(dir) = suite() else {
        crate::common::skip(test, "../shared/conformance/redis-py is not present");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "py") {
            let text = std::fs::read_to_string(&path).unwrap();
            let resp3 = text.replace("protocol=2", "protocol=3").replace(
                "assert response == resp2_expected",
                "assert response == resp3_expected",
            );
            assert!(resp3.contains("protocol=3") && resp3.contains("== resp3_expected"));
            std::fs::write(tmp.path().join(path.file_name().unwrap()), resp3).unwrap();
        }
    }
    run_redis_py_suite(test, tmp.path());
}
