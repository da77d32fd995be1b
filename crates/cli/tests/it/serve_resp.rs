//! `phishbloom serve --resp` asked with real Redis clients on loopback — redis-cli, redis-py
//! (RESP2 and RESP3) and redis-rs — for every command, with RedisBloom's replies and error
//! strings; a pipelined `BF.MEXISTS` of 10,000 keys answers what `phishbloom check` answers;
//! protocol errors, the pipeline cap and idle connections on a raw socket.

use crate::serve_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serve_common::*;

/// `redis-cli -h … -p … ARGS` (not a terminal: raw replies), its standard output trimmed.
fn cli(server: &Server, args: &[&str]) -> String {
    let (host, port) = server.resp.split_once(':').unwrap();
    let output = Command::new("redis-cli")
        .args(["-h", host, "-p", port])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli runs (.ci/run installs redis-tools)");
    String::from_utf8(output.stdout)
        .unwrap()
        .trim_end()
        .to_owned()
}

/// The fixture: `phish` (URL entries) and `leaked` (exact keys, room for 10 more), and a token.
fn start(dir: &std::path::Path, extra: &[&str]) -> Server {
    let phish = build_urls_sized(dir, "phish", &phish_entries(), 1100);
    let keys: Vec<String> = (0..100).map(|i| format!("secret{i}")).collect();
    let leaked = build_keys(dir, "leaked", &keys, 110);
    let token = dir.join("token");
    std::fs::write(&token, "tok\n").unwrap();
    let mut args = vec![
        phish.to_str().unwrap().to_owned(),
        leaked.to_str().unwrap().to_owned(),
        "--token-file".into(),
        token.to_str().unwrap().to_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(dir, &args)
}

#[test]
fn redis_cli_every_command_with_redisbloom_replies() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let c = |args: &[&str]| cli(&server, args);

    assert_eq!(c(&["PING"]), "PONG");
    assert_eq!(c(&["PING", "hi"]), "hi");
    assert_eq!(c(&["ECHO", "x y"]), "x y");
    assert!(c(&["HELLO", "3"]).contains("phishbloom"));
    assert_eq!(
        c(&["HELLO", "4"]),
        "NOPROTO sorry, this protocol version is not supported."
    );
    assert_eq!(c(&["COMMAND", "COUNT"]).parse::<usize>().unwrap(), 45);
    assert!(c(&["COMMAND", "INFO", "bf.exists"]).starts_with("bf.exists\n3\nreadonly\n1\n1\n1"));
    assert_eq!(c(&["DBSIZE"]), "2");
    assert_eq!(c(&["EXISTS", "phish", "nope", "leaked"]), "2");
    assert_eq!(c(&["TYPE", "phish"]), "MBbloom--");
    assert_eq!(c(&["TYPE", "nope"]), "none");
    assert_eq!(c(&["SELECT", "1"]), "ERR DB index is out of range");
    assert!(
        c(&["GET", "x"]).starts_with("ERR unknown command 'GET', with args beginning with: 'x'")
    );
    assert_eq!(
        c(&["BF.EXISTS", "phish"]),
        "ERR wrong number of arguments for 'bf.exists' command"
    );

    // Reads: URL semantics on a URL list, exact keys on a key list, 0 for a missing key.
    assert_eq!(c(&["BF.EXISTS", "phish", "http://a.EVIL3.example/x"]), "1");
    assert_eq!(
        c(&["BF.EXISTS", "phish", "http://docs.evil1.example/"]),
        "0"
    );
    assert_eq!(c(&["BF.EXISTS", "phish", "http://[::1"]), "0");
    assert_eq!(c(&["BF.EXISTS", "leaked", "secret5"]), "1");
    assert_eq!(c(&["BF.EXISTS", "leaked", "SECRET5"]), "0");
    assert_eq!(c(&["BF.EXISTS", "nope", "x"]), "0");
    assert_eq!(
        c(&["BF.MEXISTS", "leaked", "secret1", "x", "secret2"]),
        "1\n0\n1"
    );
    assert_eq!(c(&["BF.MEXISTS", "nope", "a", "b"]), "0\n0");
    assert_eq!(c(&["BF.CARD", "leaked"]), "100");
    assert_eq!(c(&["BF.CARD", "nope"]), "0");
    // Size: the bytes of the filter, as `phishbloom info` tells them.
    let info = phishbloom(
        &[
            "info",
            "--json",
            dir.path().join("leaked.bloom").to_str().unwrap(),
        ],
        b"",
    );
    let info: serde_json::Value = serde_json::from_slice(&info).unwrap();
    let size = info["filters"][0]["bytes"].as_u64().unwrap();
    assert_eq!(
        c(&["BF.INFO", "leaked"]),
        format!("Capacity\n110\nSize\n{size}\nNumber of filters\n1\nNumber of items inserted\n100\nExpansion rate")
    );
    assert_eq!(c(&["BF.INFO", "leaked", "ITEMS"]), "100");
    assert_eq!(
        c(&["BF.INFO", "leaked", "BOGUS"]),
        "Invalid information value"
    );
    assert_eq!(c(&["BF.INFO", "nope"]), "ERR not found");

    // Writes need AUTH.
    assert_eq!(
        c(&["BF.ADD", "leaked", "x"]),
        "NOAUTH Authentication required."
    );
    assert_eq!(
        c(&["AUTH", "wrong"]),
        "WRONGPASS invalid username-password pair or user is disabled."
    );
    let a = |args: &[&str]| {
        let mut all = vec!["--no-auth-warning", "-a", "tok"];
        all.extend_from_slice(args);
        cli(&server, &all)
    };
    assert_eq!(a(&["BF.ADD", "leaked", "new0"]), "1");
    assert_eq!(a(&["BF.ADD", "leaked", "new0"]), "0");
    assert_eq!(
        a(&["BF.MADD", "leaked", "new1", "secret1", "new2"]),
        "1\n0\n1"
    );
    assert_eq!(c(&["BF.EXISTS", "leaked", "new2"]), "1");
    // Sized for 110: the 111th entry does not fit a non-scaling filter.
    let more: Vec<String> = (3..20).map(|i| format!("new{i}")).collect();
    let mut madd = vec!["BF.MADD", "leaked"];
    madd.extend(more.iter().map(String::as_str));
    let replies = a(&madd);
    let replies: Vec<&str> = replies.lines().collect();
    assert_eq!(replies.len(), 8, "{replies:?}");
    assert_eq!(replies[..7], ["1"; 7]);
    assert_eq!(replies[7], "ERR non scaling filter is full");
    assert_eq!(
        a(&["BF.ADD", "leaked", "newer"]),
        "ERR non scaling filter is full"
    );
    assert_eq!(a(&["BF.ADD", "leaked", "secret9"]), "0");
    assert_eq!(c(&["BF.CARD", "leaked"]), "110");
    // URL entries go to the URL list.
    assert_eq!(a(&["BF.ADD", "phish", "added.example"]), "1");
    assert_eq!(
        c(&["BF.EXISTS", "phish", "https://www.added.example/page"]),
        "1"
    );

    // BF.RESERVE and BF.INSERT, with RedisBloom's errors.
    assert_eq!(a(&["BF.RESERVE", "r", "0.01", "3", "NONSCALING"]), "OK");
    assert_eq!(a(&["BF.RESERVE", "r", "0.01", "3"]), "ERR item exists");
    assert_eq!(a(&["BF.RESERVE", "q", "x", "3"]), "ERR bad error rate");
    assert_eq!(
        a(&["BF.RESERVE", "q", "1.5", "3"]),
        "ERR error rate must be in the range (0.000000, 1.000000)"
    );
    assert_eq!(
        a(&["BF.RESERVE", "q", "0.1", "0"]),
        "ERR capacity must be in the range [1, 1073741824]"
    );
    assert_eq!(
        a(&[
            "BF.RESERVE",
            "q",
            "0.1",
            "5",
            "NONSCALING",
            "EXPANSION",
            "2"
        ]),
        "Nonscaling filters cannot expand"
    );
    assert_eq!(
        a(&["BF.MADD", "r", "a", "b", "c", "d"]),
        "1\n1\n1\nERR non scaling filter is full"
    );
    assert_eq!(c(&["BF.INFO", "r", "CAPACITY"]), "3");
    assert_eq!(
        a(&[
            "BF.INSERT",
            "s",
            "CAPACITY",
            "2",
            "EXPANSION",
            "2",
            "ITEMS",
            "a",
            "b",
            "c",
            "d",
            "e"
        ]),
        "1\n1\n1\n1\n1"
    );
    assert_eq!(c(&["BF.MEXISTS", "s", "a", "e", "z"]), "1\n1\n0");
    assert_eq!(c(&["BF.INFO", "s", "EXPANSION"]), "2");
    assert_eq!(c(&["BF.CARD", "s"]), "5");
    assert_eq!(
        a(&["BF.INSERT", "t", "NOCREATE", "ITEMS", "a"]),
        "ERR not found"
    );
    assert_eq!(
        a(&["BF.INSERT", "t", "BOGUS", "ITEMS", "a"]),
        "Unknown argument received"
    );
    assert_eq!(a(&["BF.ADD", "auto", "k"]), "1");
    assert_eq!(c(&["BF.INFO", "auto", "CAPACITY"]), "100");
    assert_eq!(c(&["DBSIZE"]), "5");

    // CF.* on Bloom keys, as RedisBloom answers them: reads hold nothing, writes are
    // WRONGTYPE, CF.DEL is "Not found"; on missing keys: 0, or "Not found".
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    assert_eq!(c(&["CF.EXISTS", "leaked", "secret1"]), "0");
    assert_eq!(c(&["CF.MEXISTS", "leaked", "secret1"]), "0");
    assert_eq!(c(&["CF.COUNT", "leaked", "secret1"]), "0");
    assert_eq!(a(&["CF.ADD", "leaked", "x"]), wrongtype);
    assert_eq!(a(&["CF.DEL", "leaked", "x"]), "Not found");
    assert_eq!(c(&["CF.EXISTS", "nope", "x"]), "0");
    assert_eq!(c(&["CF.MEXISTS", "nope", "x", "y"]), "0\n0");
    assert_eq!(c(&["CF.COUNT", "nope", "x"]), "0");
    assert_eq!(a(&["CF.DEL", "nope", "x"]), "Not found");

    // Writes reached the file of a served list.
    let file = dir.path().join("leaked.bloom");
    let out = phishbloom(&["check", file.to_str().unwrap(), "new0", "newer"], b"");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "new0\tlisted\tnew0\tkey\tleaked\nnewer\tclean\n"
    );

    let metrics = reqwest::blocking::get(format!("{}/metrics", server.http))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("phishbloom_resp_commands_total{command=\"BF.EXISTS\"}"),
        "{metrics}"
    );
}

/// CF.* on a cuckoo filter created by CF.ADD (RedisBloom's defaults) and on a served cuckoo file.
#[test]
fn cf_commands_on_cuckoo_lists() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..50).map(|i| format!("k{i}")).collect();
    let cuckoo = build_keys_of(
        dir.path(),
        "cf",
        &keys,
        60,
        &["--kind", "cuckoo", "--verify"],
    );
    let server = start(dir.path(), &[cuckoo.to_str().unwrap()]);
    let c = |args: &[&str]| cli(&server, args);
    let a = |args: &[&str]| {
        let mut all = vec!["--no-auth-warning", "-a", "tok"];
        all.extend_from_slice(args);
        cli(&server, &all)
    };
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";

    // Created by CF.ADD.
    assert_eq!(a(&["CF.ADD", "c", "x"]), "1");
    assert_eq!(c(&["TYPE", "c"]), "MBbloomCF");
    assert_eq!(a(&["CF.ADD", "c", "x"]), "1");
    assert_eq!(a(&["CF.ADDNX", "c", "x"]), "0");
    assert_eq!(a(&["CF.ADDNX", "c", "y"]), "1");
    assert_eq!(c(&["CF.MEXISTS", "c", "x", "y", "z"]), "1\n1\n0");
    // Added twice: counted twice, deleted twice (RedisBloom's cuckoo filter).
    assert_eq!(c(&["CF.COUNT", "c", "x"]), "2");
    assert_eq!(c(&["CF.COUNT", "c", "z"]), "0");
    assert_eq!(a(&["CF.DEL", "c", "x"]), "1");
    assert_eq!(a(&["CF.DEL", "c", "x"]), "1");
    assert_eq!(a(&["CF.DEL", "c", "x"]), "0");
    assert_eq!(c(&["CF.EXISTS", "c", "x"]), "0");
    assert_eq!(c(&["CF.EXISTS", "c", "y"]), "1");
    // RedisBloom answers a key of the other type as not holding the item.
    assert_eq!(c(&["BF.EXISTS", "c", "y"]), "0");
    assert_eq!(c(&["BF.INFO", "c"]), wrongtype);
    assert_eq!(a(&["BF.ADD", "c", "y"]), wrongtype);
    assert_eq!(a(&["BF.RESERVE", "c", "0.01", "10"]), wrongtype);

    // A served cuckoo file: CF.DEL saves over it.
    assert_eq!(c(&["CF.EXISTS", "cf", "k3"]), "1");
    assert_eq!(a(&["CF.DEL", "cf", "k3"]), "1");
    assert_eq!(c(&["CF.MEXISTS", "cf", "k3", "k4"]), "0\n1");
    assert_eq!(a(&["CF.ADDNX", "cf", "k3"]), "1");
    assert_eq!(a(&["CF.DEL", "cf", "k4"]), "1");
    let out = phishbloom(&["check", cuckoo.to_str().unwrap(), "k3", "k4"], b"");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "k3\tlisted\tk3\tkey\tcf\nk4\tclean\n"
    );
    assert_eq!(
        c(&["CF.DEL", "cf", "k5"]),
        "NOAUTH Authentication required."
    );
}

/// 10,000 URLs: the URLs the fixture lists and ones it does not, in the fixture's spellings.
fn ten_thousand() -> Vec<String> {
    let base = queries();
    (0..10_000)
        .map(|i| match i % 3 {
            0 => base[i % base.len()].clone(),
            1 => format!("http://evil{}.example/p{i}", i % 700),
            _ => format!("http://www.phish{}.example/login/{i}", i % 600),
        })
        .collect()
}

/// What `phishbloom check FILE` says of each URL: 1 listed, 0 not.
fn check_says(file: &std::path::Path, urls: &[String]) -> Vec<i64> {
    let out = phishbloom(
        &["check", file.to_str().unwrap()],
        (urls.join("\n") + "\n").as_bytes(),
    );
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| i64::from(l.split('\t').nth(1) == Some("listed")))
        .collect()
}

#[test]
fn redis_py_pipelines_ten_thousand_keys_like_check() {
    let available = Command::new("python3")
        .args(["-c", "import redis"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        available,
        "redis-py is missing: pip install redis (.ci/run installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let urls = ten_thousand();
    let expected = check_says(&dir.path().join("phish.bloom"), &urls);
    assert!(expected.contains(&1) && expected.contains(&0));
    let (host, port) = server.resp.split_once(':').unwrap();
    // RedisBloom client code, unchanged: redis-py's bf() commands and a pipeline.
    let script = r#"
import json, sys
import redis
host, port, proto = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
urls = sys.stdin.read().split("\n")[:-1]
r = redis.Redis(host=host, port=port, protocol=proto)
assert r.ping()
pipe = r.pipeline(transaction=False)
pipe.execute_command("BF.MEXISTS", "phish", *urls)
for url in urls[:100]:
    pipe.bf().exists("phish", url)
pipe.bf().card("leaked")
replies = pipe.execute()
out = {"mexists": [int(x) for x in replies[0]], "exists": [int(x) for x in replies[1:101]], "card": replies[101]}
out["bf_mexists"] = [int(x) for x in r.bf().mexists("leaked", "secret1", "nope")]
info = r.bf().info("leaked")
def field(name, attr):
    if isinstance(info, dict):
        for k, v in info.items():
            if (k.decode() if isinstance(k, bytes) else k) == name:
                return v
    return getattr(info, attr)
out["info"] = [field("Capacity", "capacity"), field("Number of items inserted", "insertedNum"), field("Number of filters", "filterNum")]
try:
    r.bf().add("leaked", "x")
    out["unauthenticated"] = "accepted"
except redis.exceptions.RedisError as e:
    out["unauthenticated"] = str(e)
authed = redis.Redis(host=host, port=port, protocol=proto, password="tok")
out["add"] = int(authed.bf().add("leaked", "fresh%d" % proto))
out["again"] = int(authed.bf().add("leaked", "fresh%d" % proto))
out["reserve"] = str(authed.bf().reserve("py%d" % proto, 0.01, 1000))
out["madd"] = [int(x) for x in authed.bf().madd("py%d" % proto, "a", "b", "a")]
try:
    authed.bf().reserve("py%d" % proto, 0.01, 10)
except redis.exceptions.ResponseError as e:
    out["exists_error"] = str(e)
try:
    authed.bf().info("missing")
except redis.exceptions.ResponseError as e:
    out["missing_error"] = str(e)
print(json.dumps(out))
"#;
    for proto in ["2", "3"] {
        let mut child = Command::new("python3")
            .args(["-c", script, host, port, proto])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = urls.join("\n") + "\n";
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(
            output.status.success(),
            "RESP{proto}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let mexists: Vec<i64> = serde_json::from_value(got["mexists"].clone()).unwrap();
        assert_eq!(mexists, expected, "RESP{proto}");
        let exists: Vec<i64> = serde_json::from_value(got["exists"].clone()).unwrap();
        assert_eq!(exists, expected[..100], "RESP{proto}");
        assert_eq!(got["bf_mexists"], serde_json::json!([1, 0]));
        assert_eq!(got["info"], serde_json::json!([110, got["card"], 1]));
        assert_eq!(got["unauthenticated"], "Authentication required.");
        assert_eq!(got["reserve"], "True");
        assert_eq!(got["madd"], serde_json::json!([1, 1, 0]));
        assert_eq!(got["exists_error"], "item exists");
        assert_eq!(got["missing_error"], "not found");
        assert_eq!(
            (got["add"].clone(), got["again"].clone()),
            (serde_json::json!(1), serde_json::json!(0))
        );
    }
}

#[test]
fn redis_rs_speaks_resp2_and_resp3() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let urls = ten_thousand();
    let expected = check_says(&dir.path().join("phish.bloom"), &urls);
    for url in [
        server.redis_url(),
        format!("{}/?protocol=resp3", server.redis_url()),
    ] {
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut con = client.get_connection().unwrap();
        // Booleans under RESP3, 1 and 0 under RESP2: redis-rs reads either as bool.
        let (mexists, card): (Vec<bool>, i64) = redis::pipe()
            .cmd("BF.MEXISTS")
            .arg("phish")
            .arg(&urls)
            .cmd("BF.CARD")
            .arg("leaked")
            .query(&mut con)
            .unwrap();
        let expected_bools: Vec<bool> = expected.iter().map(|&e| e == 1).collect();
        assert_eq!(mexists, expected_bools, "{url}");
        assert_eq!(card, 100);
        let one: bool = redis::cmd("BF.EXISTS")
            .arg("phish")
            .arg(&urls[1])
            .query(&mut con)
            .unwrap();
        assert_eq!(one, expected[1] == 1);
        let error = redis::cmd("BF.INFO")
            .arg("missing")
            .query::<redis::Value>(&mut con)
            .unwrap_err();
        assert!(error.to_string().contains("not found"), "{error}");
    }
}

/// Reads replies from a raw socket until `want` bytes came or the server closed.
fn read_at_least(stream: &mut TcpStream, want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while got.len() < want {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got
}

#[test]
fn protocol_errors_pipelines_and_idle_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &[
            "--max-bulk",
            "1000",
            "--max-pipeline",
            "16",
            "--idle-timeout",
            "1",
        ],
    );
    let connect = || {
        let stream = TcpStream::connect(&server.resp).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    };

    // 5,000 pipelined commands sent before reading any reply, with a cap of 16 in flight: every
    // one answered, in order.
    let mut stream = connect();
    let mut batch = Vec::new();
    for i in 0..5000 {
        let key = format!("secret{}", i % 200);
        batch.extend_from_slice(
            format!(
                "*3\r\n$9\r\nBF.EXISTS\r\n$6\r\nleaked\r\n${}\r\n{key}\r\n",
                key.len()
            )
            .as_bytes(),
        );
    }
    let writer = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || stream.write_all(&batch))
    };
    let got = read_at_least(&mut stream, 5000 * 4);
    writer.join().unwrap().unwrap();
    let expected: Vec<u8> = (0..5000)
        .flat_map(|i| {
            if i % 200 < 100 {
                *b":1\r\n"
            } else {
                *b":0\r\n"
            }
        })
        .collect();
    assert_eq!(got, expected);

    // Inline commands work; an oversized bulk string is a protocol error and closes.
    stream
        .write_all(b"PING\r\n*2\r\n$4\r\nECHO\r\n$5000\r\n")
        .unwrap();
    let got = read_at_least(&mut stream, usize::MAX);
    assert_eq!(
        got,
        b"+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
    );

    // Malformed input: an error and a closed connection, not a stuck one.
    for bad in [
        &b"*2\r\n$4\r\nECHO\r\n+x\r\n"[..],
        b"*abc\r\n",
        b"*1\r\n$4\r\nPINGxx",
    ] {
        let mut stream = connect();
        stream.write_all(bad).unwrap();
        let got = read_at_least(&mut stream, usize::MAX);
        assert!(
            got.starts_with(b"-ERR Protocol error"),
            "{:?}",
            String::from_utf8_lossy(&got)
        );
    }

    // A half-sent command: closed after the idle timeout.
    let mut stream = connect();
    stream.write_all(b"*3\r\n$9\r\nBF.EXISTS\r\n").unwrap();
    let start = std::time::Instant::now();
    let got = read_at_least(&mut stream, usize::MAX);
    assert!(got.is_empty());
    assert!(start.elapsed() < Duration::from_secs(5));

    // QUIT answers and closes.
    let mut stream = connect();
    stream.write_all(b"QUIT\r\nPING\r\n").unwrap();
    assert_eq!(read_at_least(&mut stream, usize::MAX), b"+OK\r\n");

    assert_eq!(cli(&server, &["PING"]), "PONG");
}
