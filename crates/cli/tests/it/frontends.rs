//! The same verdicts through every front end. One UT1-style list (two categories,
//! entries in both, `liste_blanche` exceptions, built with `--verify`) and 1,500 generated items
//! — listed entries in odd spellings, exceptions, clean URLs, IDN hosts, IPv4 in dotted, decimal,
//! hex and octal form, 100 KB URLs, bytes that are not UTF-8 and items that are no URL — answered
//! by `check --json` (the reference, whose answers are asserted item by item), the HTTP batch
//! `POST /v1/check`, RESP `BF.MEXISTS`, `squid-helper` and `check --redis --json`; every front end
//! must agree with the reference, and an item that is no URL is answered per item (`invalid`),
//! never by failing the batch. Also: `check FILE` and `check --redis` as co-processes (one line
//! in, its answer out within a second).

use crate::common;
use crate::serve_common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use common::{build_ut1_list, redis_server_or_skip, SplitMix, UT1_FAMILY, UT1_IDN};
use serde_json::{json, Value};
use serve_common::Server;

/// Exactly this many items go through every front end.
const ITEMS: usize = 1_500;

/// What the reference must answer for an item.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// Listed, by an entry of exactly these categories.
    Listed(&'static [&'static str]),
    /// Allowed by an exception.
    Allowed,
    /// Clean.
    Clean,
    /// Not a URL: `{"key", "verdict": "invalid", "listed": false, "error"}`.
    Invalid,
    /// Whatever the reference says (every front end must still agree with it).
    Any,
}

const PHISHING: &[&str] = &["phishing"];
const GAMBLING: &[&str] = &["gambling"];
const BOTH: &[&str] = &["gambling", "phishing"];

struct Item {
    bytes: Vec<u8>,
    expect: Expect,
}

fn item(text: impl Into<Vec<u8>>, expect: Expect) -> Item {
    Item {
        bytes: text.into(),
        expect,
    }
}

/// The 1,500 items, in a fixed shuffled order (seeded).
fn items() -> Vec<Item> {
    let mut rng = SplitMix(0x5EED_F00D_0019);
    let mut items = Vec::with_capacity(ITEMS);

    // The special ones, a few of each.
    for (unicode, puny) in UT1_IDN {
        items.push(item(
            format!("http://{unicode}.example/x"),
            Expect::Listed(PHISHING),
        ));
        items.push(item(
            format!("http://www.{puny}.example/x"),
            Expect::Listed(PHISHING),
        ));
        items.push(item(
            format!("{}.example", unicode.to_uppercase()),
            Expect::Any,
        ));
        items.push(item(
            format!("http://{unicode}.example.org/"),
            Expect::Clean,
        ));
    }
    for j in [1u32, 7, 20] {
        let ip = (192u32 << 24) | (168 << 16) | (7 << 8) | j;
        items.push(item(
            format!("http://192.168.7.{j}/"),
            Expect::Listed(PHISHING),
        ));
        items.push(item(format!("http://{ip}/a"), Expect::Listed(PHISHING)));
        items.push(item(format!("http://0x{ip:X}/b"), Expect::Listed(PHISHING)));
        items.push(item(
            format!("http://0300.0250.07.0{j:o}/c"),
            Expect::Listed(PHISHING),
        ));
        items.push(item(format!("http://192.168.8.{j}/"), Expect::Clean));
    }
    // 100 KB URLs (and a 70 KB host label): the reference decides.
    for i in [3, 77] {
        items.push(item(
            format!("http://evil{i}.example/{}", "a".repeat(100_000)),
            Expect::Any,
        ));
        items.push(item(
            format!("http://clean{i}.example/?q={}", "b".repeat(100_000)),
            Expect::Any,
        ));
    }
    items.push(item(
        format!("http://{}.com/", "x".repeat(70_000)),
        Expect::Any,
    ));
    // Not URLs.
    for text in [
        "http://warn.com[.]br/x",
        "http://evil5.example[.]br/",
        "http://[x",
        "http://[::1",
        "http://",
        "https://",
    ] {
        items.push(item(text, Expect::Invalid));
    }
    // A blank line stays clean.
    items.push(item("", Expect::Clean));
    items.push(item("", Expect::Clean));
    // Bytes that are not UTF-8 (not for the HTTP batch: JSON strings are UTF-8).
    items.push(item(
        b"http://evil9.example/\xff\xfe".to_vec(),
        Expect::Listed(PHISHING),
    ));
    items.push(item(b"http://\xff.example/".to_vec(), Expect::Any));
    // A space inside (not for squid: its request lines are split on whitespace).
    items.push(item("http://evil11.example/a b", Expect::Listed(PHISHING)));

    // The rest: entries in odd spellings, exceptions and clean URLs, at random.
    while items.len() < ITEMS {
        let i = rng.below(UT1_FAMILY);
        let gambling_too = i < 30;
        let host_cats = if gambling_too { BOTH } else { PHISHING };
        let next = match rng.below(24) {
            0 => item(
                format!("HTTP://WWW.EVIL{i}.EXAMPLE/"),
                Expect::Listed(PHISHING),
            ),
            1 => item(
                format!("http://evil{i}.example:80/x"),
                Expect::Listed(PHISHING),
            ),
            2 => item(
                format!("http://user:pw@evil{i}.example/"),
                Expect::Listed(PHISHING),
            ),
            3 => item(
                format!("http://host{i}.example/a/../login/x"),
                Expect::Listed(host_cats),
            ),
            4 => item(
                format!("http://host{i}.example/%6Cogin"),
                Expect::Listed(host_cats),
            ),
            5 => item(
                format!("http://host{i}.example/login%2Fx"),
                Expect::Listed(host_cats),
            ),
            6 => item(
                format!("http://evil{i}.example/%41"),
                Expect::Listed(PHISHING),
            ),
            7 => item(
                format!("http://evil{i}.example./page"),
                Expect::Listed(PHISHING),
            ),
            8 => item(
                format!("http://evil{i}.example/#frag"),
                Expect::Listed(PHISHING),
            ),
            9 => item(
                format!("http://host{i}.example/login#x"),
                Expect::Listed(host_cats),
            ),
            10 => item(
                format!("www.bet{i}.example/slots?x=1"),
                if i.is_multiple_of(5) {
                    Expect::Allowed
                } else {
                    Expect::Listed(GAMBLING)
                },
            ),
            11 => {
                let j = i % 60;
                item(
                    format!("http://www.both{j}.example/?q=1"),
                    Expect::Listed(BOTH),
                )
            }
            12 => item(
                format!("casino{i}.example/poker/table?id=3"),
                Expect::Listed(GAMBLING),
            ),
            13 => item(
                format!("https://docs.evil{i}.example/malware/x.exe"),
                Expect::Listed(PHISHING),
            ),
            14 => item(
                format!("https://docs.evil{i}.example/guide"),
                Expect::Allowed,
            ),
            15 => item(
                format!("http://host{i}.example/login/help/faq"),
                Expect::Allowed,
            ),
            16 => item(format!("bet{}.example/", i / 5 * 5), Expect::Allowed),
            17 => item(format!("http://clean{i}.example/login"), Expect::Clean),
            18 => item(format!("http://host{i}.example/loginX"), Expect::Clean),
            19 => item(format!("http://evil{i}.example.org/"), Expect::Clean),
            20 => item(format!("http://casino{i}.example/"), Expect::Clean),
            21 => item(
                format!("https://WWW.Evil{i}.Example:443/a/./b/../c?u=1#f"),
                Expect::Listed(PHISHING),
            ),
            22 => item(
                format!("http://user@host{i}.example.:80/login/"),
                Expect::Listed(host_cats),
            ),
            _ => item(format!("http://www.bet{i}.example.com/"), Expect::Clean),
        };
        items.push(next);
    }
    rng.shuffle(&mut items);
    assert_eq!(items.len(), ITEMS);
    items
}

/// The items as standard input: one a line.
fn stdin_of(items: &[Item]) -> Vec<u8> {
    let mut stdin = Vec::new();
    for item in items {
        stdin.extend_from_slice(&item.bytes);
        stdin.push(b'\n');
    }
    stdin
}

/// An item for messages: lossy, cut short.
fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 80 {
        format!(
            "{}… ({} bytes)",
            text.chars().take(80).collect::<String>(),
            bytes.len()
        )
    } else {
        format!("{text:?}")
    }
}

/// The list built once per test, in its own directory.
struct Fixture {
    dir: tempfile::TempDir,
    list: PathBuf,
    items: Vec<Item>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let list = build_ut1_list(dir.path(), "ut1", &[]);
    Fixture {
        list,
        dir,
        items: items(),
    }
}

/// `phishbloom check FILE --json` for every item on standard input, parsed: the reference.
fn reference(list: &Path, items: &[Item]) -> Vec<Value> {
    let out = serve_common::phishbloom(
        &["check", list.to_str().unwrap(), "--json"],
        &stdin_of(items),
    );
    let answers: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        answers.len(),
        items.len(),
        "check --json: one answer per item"
    );
    answers
}

/// Collects the mismatches `compare` finds between a front end's answers and the reference,
/// and fails once with the count and the first few.
fn assert_agree(front_end: &str, mismatches: Vec<String>) {
    assert!(
        mismatches.is_empty(),
        "{front_end}: {} of the {ITEMS} items answered differently from `check --json`; first ones:\n{}",
        mismatches.len(),
        mismatches.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// The fields the front ends must agree on.
const FIELDS: [&str; 9] = [
    "key",
    "verdict",
    "listed",
    "entry",
    "entry_kind",
    "categories",
    "categories_exact",
    "exception",
    "error",
];

fn field_mismatches(index: usize, item: &[u8], got: &Value, want: &Value) -> Vec<String> {
    FIELDS
        .iter()
        .filter(|f| got.get(**f) != want.get(**f))
        .map(|f| {
            format!(
                "  item {index} {}: {f} is {} here, {} in check --json",
                show(item),
                got.get(*f).map_or("absent".into(), |v| v.to_string()),
                want.get(*f).map_or("absent".into(), |v| v.to_string())
            )
        })
        .collect()
}

#[test]
fn check_json_answers_each_item_as_the_interface_says() {
    let f = fixture();
    let answers = reference(&f.list, &f.items);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, (item, answer)) in f.items.iter().zip(&answers).enumerate() {
        let problem =
            |what: String| format!("  item {index} {}: {what}: {answer}", show(&item.bytes));
        if answer["key"] != json!(String::from_utf8_lossy(&item.bytes)) {
            wrong.push(problem("key is not the item".into()));
        }
        let verdict = answer["verdict"].as_str().unwrap_or_default();
        seen.insert(verdict.to_owned());
        match &item.expect {
            Expect::Listed(categories) => {
                let got: Vec<&str> = answer["categories"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let got: BTreeSet<&str> = got.into_iter().collect();
                let want: BTreeSet<&str> = categories.iter().copied().collect();
                if verdict != "listed" || answer["listed"] != true {
                    wrong.push(problem("expected listed".into()));
                } else if got != want || answer["categories_exact"] != true {
                    wrong.push(problem(format!("expected exactly the categories {want:?}")));
                }
            }
            Expect::Allowed if verdict != "allowed" || answer["listed"] != false => {
                wrong.push(problem("expected allowed".into()))
            }
            Expect::Clean if verdict != "clean" || answer["listed"] != false => {
                wrong.push(problem("expected clean".into()))
            }
            Expect::Invalid => {
                let fields: BTreeSet<&str> = answer
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let reason = answer["error"].as_str().unwrap_or_default();
                if verdict != "invalid"
                    || answer["listed"] != false
                    || reason.is_empty()
                    || fields != BTreeSet::from(["key", "verdict", "listed", "error"])
                {
                    wrong.push(problem(
                        r#"expected {"key":…,"verdict":"invalid","listed":false,"error":"<reason>"}"#
                            .into(),
                    ));
                }
            }
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "check --json: {} of the {ITEMS} answers are not what the interface says; first ones:\n{}",
        wrong.len(),
        wrong
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    for verdict in ["listed", "allowed", "clean", "invalid"] {
        assert!(seen.contains(verdict), "no {verdict} answer among {seen:?}");
    }
}

#[test]
fn check_tsv_answers_an_item_that_is_no_url_on_its_line() {
    let f = fixture();
    // TSV: ITEM<TAB>invalid<TAB><reason> for an item that is no URL; a blank line stays clean.
    let invalid: Vec<&Item> = f
        .items
        .iter()
        .filter(|i| i.expect == Expect::Invalid)
        .collect();
    let stdin: Vec<u8> = invalid
        .iter()
        .flat_map(|i| i.bytes.iter().copied().chain([b'\n']))
        .chain(*b"\n")
        .collect();
    let out = serve_common::phishbloom(&["check", f.list.to_str().unwrap()], &stdin);
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), invalid.len() + 1, "{out}");
    for (line, item) in lines.iter().zip(&invalid) {
        let fields: Vec<&str> = line.split('\t').collect();
        let text = String::from_utf8_lossy(&item.bytes);
        assert!(
            fields.len() == 3
                && fields[0] == text
                && fields[1] == "invalid"
                && !fields[2].is_empty(),
            "check (TSV) for {text:?}: expected `ITEM<TAB>invalid<TAB><reason>`, got {line:?}"
        );
    }
    assert_eq!(lines[invalid.len()], "\tclean", "a blank line stays clean");
}

#[test]
fn http_batch_answers_what_check_answers() {
    let f = fixture();
    let want = reference(&f.list, &f.items);
    let server = Server::start(f.dir.path(), &[f.list.to_str().unwrap()]);
    // JSON strings are UTF-8: items that are not cannot be sent in a batch.
    let sent: Vec<usize> = (0..f.items.len())
        .filter(|&i| std::str::from_utf8(&f.items[i].bytes).is_ok())
        .collect();
    let urls: Vec<&str> = sent
        .iter()
        .map(|&i| std::str::from_utf8(&f.items[i].bytes).unwrap())
        .collect();
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let response = client
        .post(format!("{}/v1/check?list=ut1", server.http))
        .json(&json!({ "urls": urls }))
        .send()
        .unwrap();
    let status = response.status();
    let body: Value = response.json().unwrap();
    assert_eq!(
        status.as_u16(),
        200,
        "POST /v1/check: items that are no URL must be answered per item, not fail the batch: {body}"
    );
    let results = body["results"].as_array().expect("a results array");
    assert_eq!(results.len(), sent.len(), "one answer per URL sent");
    let mut mismatches = Vec::new();
    for (&index, got) in sent.iter().zip(results) {
        if got["list"] != "ut1" {
            mismatches.push(format!("  item {index}: list is {} here", got["list"]));
        }
        mismatches.extend(field_mismatches(
            index,
            &f.items[index].bytes,
            got,
            &want[index],
        ));
    }
    assert_agree("HTTP POST /v1/check", mismatches);
}

#[test]
fn resp_mexists_answers_what_check_answers() {
    let f = fixture();
    let want = reference(&f.list, &f.items);
    let server = Server::start(f.dir.path(), &[f.list.to_str().unwrap()]);
    let client = redis::Client::open(server.redis_url().as_str()).unwrap();
    let mut con = client.get_connection().unwrap();
    // Bulk strings carry any bytes: every item goes, in one command.
    let items: Vec<&[u8]> = f.items.iter().map(|i| i.bytes.as_slice()).collect();
    let got: Vec<i64> = redis::cmd("BF.MEXISTS")
        .arg("ut1")
        .arg(&items)
        .query(&mut con)
        .unwrap();
    assert_eq!(got.len(), items.len(), "one reply per item");
    let mismatches = got
        .iter()
        .zip(&want)
        .enumerate()
        .filter(|(_, (got, want))| (**got == 1) != (want["verdict"] == "listed"))
        .map(|(index, (got, want))| {
            format!(
                "  item {index} {}: BF.MEXISTS says {got}, check --json says {}",
                show(items[index]),
                want["verdict"]
            )
        })
        .collect();
    assert_agree("RESP BF.MEXISTS", mismatches);
}

/// How squid-helper escapes a `message=` value (squid's `key=value` syntax).
fn squid_escape(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b <= b' ' || b == b'"' || b == b'%' || b == b'\\' || b >= 0x7f {
                format!("%{b:02X}")
            } else {
                char::from(b).to_string()
            }
        })
        .collect()
}

#[test]
fn squid_helper_answers_what_check_answers() {
    let f = fixture();
    let want = reference(&f.list, &f.items);
    // squid splits a request line on whitespace and sends no blank URL: items holding
    // whitespace, and blank ones, cannot be asked. Every other item goes, any bytes, each with
    // its index as the channel ID.
    let sent: Vec<usize> = (0..f.items.len())
        .filter(|&i| {
            let bytes = &f.items[i].bytes;
            !bytes.is_empty() && !bytes.iter().any(u8::is_ascii_whitespace)
        })
        .collect();
    let mut stdin = Vec::new();
    for &i in &sent {
        stdin.extend_from_slice(format!("{i} ").as_bytes());
        stdin.extend_from_slice(&f.items[i].bytes);
        stdin.extend_from_slice(b" -\n");
    }
    let out = serve_common::phishbloom(&["squid-helper", f.list.to_str().unwrap()], &stdin);
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), sent.len(), "one answer line per request");
    let mut mismatches = Vec::new();
    for (&index, line) in sent.iter().zip(&lines) {
        let answer = &want[index];
        let expected = if answer["verdict"] == "listed" {
            let categories: Vec<&str> = answer["categories"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            format!("{index} OK message={}", squid_escape(&categories.join(",")))
        } else {
            format!("{index} ERR")
        };
        if *line != expected {
            mismatches.push(format!(
                "  item {index} {}: squid-helper says {line:?}, check --json says {}",
                show(&f.items[index].bytes),
                answer
            ));
        }
    }
    assert_agree("squid-helper", mismatches);
}

#[test]
fn check_redis_answers_what_check_file_answers() {
    let Some(redis) = redis_server_or_skip("check_redis_answers_what_check_file_answers") else {
        return;
    };
    let f = fixture();
    let want = reference(&f.list, &f.items);
    let url = redis.url();
    serve_common::phishbloom(
        &[
            "redis",
            "push",
            f.list.to_str().unwrap(),
            &url,
            "--name",
            "ut1",
        ],
        b"",
    );
    let out = serve_common::phishbloom(
        &["check", "--redis", &url, "--name", "ut1", "--json"],
        &stdin_of(&f.items),
    );
    let got: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        got.len(),
        f.items.len(),
        "check --redis --json: one answer per item"
    );
    let mismatches = got
        .iter()
        .zip(&want)
        .enumerate()
        .flat_map(|(index, (got, want))| field_mismatches(index, &f.items[index].bytes, got, want))
        .collect();
    assert_agree("check --redis --json", mismatches);
}

/// A child process answering lines, killed when dropped; its standard output is read line by
/// line on a thread so that a read can time out.
struct CoProcess {
    child: Child,
    lines: Receiver<String>,
}

impl CoProcess {
    fn spawn(args: &[&str]) -> CoProcess {
        let mut child = Command::new(serve_common::bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        CoProcess { child, lines }
    }

    /// Writes one line and flushes.
    fn ask(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// The next answer line, if one comes within `timeout`.
    fn answer(&self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Closes standard input and waits up to `timeout` for the exit code.
    fn finish(&mut self, timeout: Duration) -> Option<i32> {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for CoProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One line in, its answer out within a second, twice; then end of input ends the process with
/// exit 0 (something was listed).
fn assert_co_process(what: &str, args: &[&str]) {
    let mut process = CoProcess::spawn(args);
    let second = Duration::from_secs(1);
    process.ask("http://www.evil4.example/login");
    let first = process.answer(second);
    assert!(
        matches!(&first, Ok(line) if line.starts_with("http://www.evil4.example/login\tlisted\tevil4.example\tdomain\tphishing")),
        "{what}: the answer to one line must come before more input, within 1 s; got {first:?}"
    );
    process.ask("http://clean4.example/");
    let next = process.answer(second);
    assert_eq!(
        next,
        Ok("http://clean4.example/\tclean".to_string()),
        "{what}: the second line's answer within 1 s"
    );
    assert_eq!(
        process.finish(Duration::from_secs(10)),
        Some(0),
        "{what}: exits 0 once standard input ends"
    );
    assert!(
        process.answer(Duration::ZERO).is_err(),
        "{what}: nothing more printed"
    );
}

#[test]
fn check_file_is_a_co_process() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_ut1_list(dir.path(), "ut1", &[]);
    assert_co_process("check FILE", &["check", list.to_str().unwrap()]);
}

#[test]
fn check_redis_is_a_co_process() {
    let Some(redis) = redis_server_or_skip("check_redis_is_a_co_process") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let list = build_ut1_list(dir.path(), "ut1", &[]);
    let url = redis.url();
    serve_common::phishbloom(
        &[
            "redis",
            "push",
            list.to_str().unwrap(),
            &url,
            "--name",
            "ut1",
        ],
        b"",
    );
    assert_co_process(
        "check --redis",
        &["check", "--redis", &url, "--name", "ut1"],
    );
}
