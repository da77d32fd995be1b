//! `phishbloom dns` between real programs on loopback: a real unbound as its upstream (serving
//! the test's names from `local-data`, there being no internet), dig as the client, and a second
//! unbound forwarding to it as an admin puts one in front of a network. A listed name and its
//! subdomains get NXDOMAIN with the Extended DNS Error naming the list, over UDP and TCP; a clean
//! name gets the upstream's answer; a name whose CNAME leads to a listed one is blocked; a packet
//! that is no query gets FORMERR; a list replaced on disk is read again; a list of whole keys, a
//! missing list and an unknown `--block-with` are refused.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::serve_common::bin as phishbloom_path;
use phishbloom_testing::redis_server::free_port;

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The unbound program, if installed.
fn unbound() -> Option<PathBuf> {
    ["/usr/sbin/unbound", "/usr/bin/unbound"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// An unbound on 127.0.0.1:`port` with `lines` added to its `server:` clause (and `tail` after
/// it), run in the foreground from `dir`.
fn start_unbound(program: &Path, dir: &Path, port: u16, lines: &str, tail: &str) -> Running {
    let conf = dir.join(format!("unbound-{port}.conf"));
    std::fs::write(
        &conf,
        format!(
            "server:\n  interface: 127.0.0.1\n  port: {port}\n  do-daemonize: no\n  \
             chroot: \"\"\n  username: \"\"\n  directory: \"{d}\"\n  pidfile: \"\"\n  \
             use-syslog: no\n  logfile: \"\"\n  do-ip6: no\n  \
             access-control: 127.0.0.0/8 allow\n  module-config: \"iterator\"\n{lines}{tail}",
            d = dir.display()
        ),
    )
    .unwrap();
    let child = Command::new(program)
        .arg("-d")
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = Running(child);
    wait_until_it_answers(port, "clean.test");
    running
}

/// Waits (up to 10 s) until a server on `port` answers a query for `name`.
fn wait_until_it_answers(port: u16, name: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if dig(port, name, &[]).contains("status:") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no DNS server answers on port {port}");
}

/// dig's output for `name` (type A) asked of 127.0.0.1:`port`.
fn dig(port: u16, name: &str, extra: &[&str]) -> String {
    let output = Command::new("dig")
        .args(["@127.0.0.1", "-p", &port.to_string(), "+time=2", "+tries=1"])
        .args(extra)
        .arg(name)
        .arg("A")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `phishbloom dns LIST --listen 127.0.0.1:0 --http 127.0.0.1:0 --upstream
/// 127.0.0.1:UPSTREAM`: the process and the ports it printed (DNS, HTTP).
fn start_dns(list: &Path, upstream: u16, extra: &[&str]) -> (Running, u16, u16) {
    let mut child = Command::new(phishbloom_path())
        .arg("dns")
        .arg(list)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--log-blocked",
        ])
        .arg(list.with_extension("blocked.log"))
        .args(["--reload-interval", "0.2", "--upstream"])
        .arg(format!("127.0.0.1:{upstream}"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let after = |marker: &str| -> u16 {
        line.split(marker)
            .nth(1)
            .and_then(|rest| rest.split([' ', '\n']).next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port after {marker:?} in {line:?}"))
    };
    (
        Running(child),
        after("answering on 127.0.0.1:"),
        // `http://` or, over TLS, `https://`.
        after("://127.0.0.1:"),
    )
}

/// A running `phishbloom dns` over a list of `evil.example` and `bad.test/login`, in front of a
/// real unbound serving `clean.test`, `bad.test` and `cloaked.test` (a CNAME to
/// `www.evil.example`).
struct Setup {
    dir: tempfile::TempDir,
    unbound: PathBuf,
    list: PathBuf,
    port: u16,
    http: u16,
    _upstream: Running,
    _dns: Running,
}

/// The setup, or `None` after [`common::skip`] when unbound or dig is missing.
fn setup(test: &str) -> Option<Setup> {
    let Some(program) = unbound() else {
        common::skip(
            test,
            "unbound is not installed (apt-get install -y unbound dnsutils; .ci/run does)",
        );
        return None;
    };
    if !common::installed("dig") {
        common::skip(test, "dig is not installed (dnsutils)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let entries = dir.path().join("phishing.txt");
    std::fs::write(&entries, "evil.example\nbad.test/login\n").unwrap();
    let list = common::build_list(dir.path().join("phish.bloom"), [entries.to_str().unwrap()]);
    let upstream_port = free_port(false);
    let upstream = start_unbound(
        &program,
        dir.path(),
        upstream_port,
        "  local-zone: \"test.\" static\n  \
         local-data: \"clean.test. 60 IN A 192.0.2.10\"\n  \
         local-data: \"bad.test. 60 IN A 192.0.2.11\"\n  \
         local-data: \"cloaked.test. 60 IN CNAME www.evil.example.\"\n",
        "",
    );
    let (dns, port, http) = start_dns(&list, upstream_port, &[]);
    Some(Setup {
        dir,
        unbound: program,
        list,
        port,
        http,
        _upstream: upstream,
        _dns: dns,
    })
}

#[test]
fn dns_blocks_listed_names_forwards_the_rest_and_uncloaks_cnames_between_real_programs() {
    let Some(setup) = setup("dns_blocks_listed_names") else {
        return;
    };
    let port = setup.port;
    // A listed domain and its subdomains: NXDOMAIN, and the EDE naming list and entry; a
    // label a URL host cannot hold (`a/b`, written \047 to dig) leaves its parents checked.
    for name in [
        "evil.example",
        "WWW.Evil.Example.",
        "a.b.evil.example",
        "a\\047b.evil.example",
    ] {
        let out = dig(port, name, &[]);
        assert!(out.contains("status: NXDOMAIN"), "{name}: {out}");
        assert!(out.contains("EDE: 15 (Blocked)"), "{name}: {out}");
        assert!(
            out.contains("phishbloom: phish lists evil.example"),
            "{name}: {out}"
        );
    }
    // Over TCP the same.
    let out = dig(port, "evil.example", &["+tcp"]);
    assert!(
        out.contains("status: NXDOMAIN") && out.contains("EDE: 15"),
        "{out}"
    );
    // A clean name, and a host whose only entry has a path: the upstream's answer.
    for (name, address) in [("clean.test", "192.0.2.10"), ("bad.test", "192.0.2.11")] {
        let out = dig(port, name, &[]);
        assert!(
            out.contains("status: NOERROR") && out.contains(address),
            "{name}: {out}"
        );
    }
    // Asked again, the upstream's answer comes from the cache (counted below as `cached`).
    let out = dig(port, "clean.test", &[]);
    assert!(
        out.contains("192.0.2.10") && !out.contains("COOKIE mismatch"),
        "{out}"
    );
    // A CNAME to a listed name is blocked as the name would be.
    let out = dig(port, "cloaked.test", &[]);
    assert!(
        out.contains("status: NXDOMAIN") && out.contains("EDE: 15"),
        "{out}"
    );

    // A datagram that is no query: FORMERR with its id.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut junk = vec![0x12, 0x34, 0x01, 0x00, 0x00, 0x01];
    junk.extend_from_slice(&[0xff; 30]);
    socket.send_to(&junk, ("127.0.0.1", port)).unwrap();
    let mut buffer = [0u8; 512];
    let n = socket.recv(&mut buffer).unwrap();
    assert!(n >= 12 && buffer[..2] == [0x12, 0x34], "{:?}", &buffer[..n]);
    assert_eq!(
        (buffer[2] & 0x80, buffer[3] & 0x0f),
        (0x80, 1),
        "QR and FORMERR"
    );

    // What it did, as /metrics counts it, and /healthz.
    let get = |path: &str| {
        reqwest::blocking::get(format!("http://127.0.0.1:{}{path}", setup.http))
            .unwrap()
            .text()
            .unwrap()
    };
    assert_eq!(get("/healthz"), "ok\n");
    // Each blocked name, logged with its client, list, entry and categories.
    let log = std::fs::read_to_string(setup.list.with_extension("blocked.log")).unwrap();
    assert_eq!(log.lines().count(), 6, "{log}");
    assert!(
        log.lines()
            .all(|l| l.contains("\t127.0.0.1\t") && l.ends_with("\tphish\tevil.example\tphishing")),
        "{log}"
    );
    assert!(log.contains("\tcloaked.test.\t"), "{log}");
    let metrics = get("/metrics");
    for line in [
        "phishbloom_dns_answers_total{kind=\"blocked\"} 6",
        "phishbloom_dns_answers_total{kind=\"forwarded\"} 2",
        "phishbloom_dns_answers_total{kind=\"formerr\"} 1",
        "phishbloom_dns_answers_total{kind=\"cached\"} 1",
        "phishbloom_dns_blocked_total{list=\"phish\",categories=\"phishing\"} 6",
        "phishbloom_dns_queries_total{kind=\"tcp\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} not in:\n{metrics}");
    }
}

#[test]
fn dns_rereads_a_replaced_list_and_answers_behind_unbound() {
    let Some(setup) = setup("dns_rereads_a_replaced_list") else {
        return;
    };
    let (dir, port) = (setup.dir.path(), setup.port);
    // The list replaced on disk (a rename, as `sync` does): the new one answers within a
    // look or two, and no query meanwhile goes unanswered.
    let fresh = dir.join("fresh.txt");
    std::fs::write(&fresh, "evil.example\nfresh.example\n").unwrap();
    let next = common::build_list(dir.join("next.bloom"), [fresh.to_str().unwrap()]);
    std::fs::rename(&next, &setup.list).unwrap();
    let start = Instant::now();
    loop {
        let out = dig(port, "fresh.example", &[]);
        assert!(
            out.contains("status:"),
            "a query went unanswered during the reload: {out}"
        );
        if out.contains("status: NXDOMAIN") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "not re-read: {out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // An unbound in front of it (forward-zone "."), as an admin deploys it.
    let front_port = free_port(false);
    let _front = start_unbound(
        &setup.unbound,
        dir,
        front_port,
        // unbound answers the special-use "test." itself (RFC 6761) unless told not to.
        "  do-not-query-localhost: no\n  local-zone: \"test.\" nodefault\n",
        &format!("forward-zone:\n  name: \".\"\n  forward-addr: 127.0.0.1@{port}\n"),
    );
    let out = dig(front_port, "www.evil.example", &[]);
    assert!(out.contains("status: NXDOMAIN"), "{out}");
    let out = dig(front_port, "clean.test", &[]);
    assert!(out.contains("192.0.2.10"), "{out}");
}

#[test]
fn dns_refuses_a_missing_list_and_an_unknown_block_answer_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bloom");
    common::assert_error(
        common::phishbloom()
            .arg("dns")
            .arg(&missing)
            .args(["--upstream", "127.0.0.1"]),
        &["missing.bloom"],
    );
    let entries = dir.path().join("e.txt");
    std::fs::write(&entries, "evil.example\n").unwrap();
    let list = common::build_list(dir.path().join("l.bloom"), [entries.to_str().unwrap()]);
    common::assert_error(
        common::phishbloom().arg("dns").arg(&list).args([
            "--upstream",
            "127.0.0.1",
            "--block-with",
            "sinkhole",
        ]),
        &["--block-with sinkhole", "nxdomain"],
    );
    // A list of whole keys would never match a name: refused, not served silently.
    let exact = common::build_list(
        dir.path().join("exact.bloom"),
        [entries.to_str().unwrap(), "--exact"],
    );
    common::assert_error(
        common::phishbloom()
            .arg("dns")
            .arg(&exact)
            .args(["--upstream", "127.0.0.1"]),
        &["exact.bloom", "cannot answer DNS names"],
    );
}

/// The names the differential test asks: listed hosts, their subdomains and spellings (case, a
/// trailing dot), hosts of entries with paths only, exceptions, IDN names, IPv4 "names" and
/// clean ones, drawn at random (seeded) from the families of [`common::write_ut1_tree`].
fn differential_names(count: usize) -> Vec<String> {
    let mut rng = common::SplitMix(53);
    (0..count)
        .map(|_| {
            let i = rng.below(common::UT1_FAMILY * 2);
            match rng.below(10) {
                0 => format!("evil{i}.example"),
                1 => format!("www.Evil{i}.EXAMPLE."),
                2 => format!("docs.evil{i}.example"),
                3 => format!("host{i}.example"),
                4 => format!("bet{i}.example"),
                5 => format!("a.b.both{i}.example"),
                6 => format!("{}.example", common::UT1_IDN[i % 4].1),
                7 => format!("192.168.7.{}", i % 30),
                8 => format!("casino{i}.example"),
                _ => format!("clean{i}.test"),
            }
        })
        .collect()
}

#[test]
#[ignore = "10⁵ names through dig and check: seconds unoptimized; CI runs it in its optimized profile"]
fn dns_blocks_exactly_the_names_check_lists_over_a_hundred_thousand_names() {
    let test = "dns_blocks_exactly_the_names_check_lists";
    let Some(program) = unbound() else {
        common::skip(
            test,
            "unbound is not installed (apt-get install -y unbound dnsutils)",
        );
        return;
    };
    if !common::installed("dig") {
        common::skip(test, "dig is not installed (dnsutils)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let folders = common::write_ut1_tree(dir.path());
    let mut args: Vec<std::ffi::OsString> = vec!["--ut1".into()];
    args.extend(folders.iter().map(Into::into));
    let list = common::build_list(dir.path().join("ut1.bloom"), args);
    // An upstream that answers every name itself (NXDOMAIN, no Extended DNS Error).
    let upstream_port = free_port(false);
    let _upstream = start_unbound(
        &program,
        dir.path(),
        upstream_port,
        "  local-zone: \".\" static\n",
        "",
    );
    let (_dns, port, _) = start_dns(&list, upstream_port, &[]);

    let names = differential_names(100_000);
    let batch = dir.path().join("names.txt");
    std::fs::write(
        &batch,
        names.iter().map(|n| format!("{n} A\n")).collect::<String>(),
    )
    .unwrap();
    let output = Command::new("dig")
        .args([
            "@127.0.0.1",
            "-p",
            &port.to_string(),
            "+time=2",
            "+tries=2",
            "-f",
        ])
        .arg(&batch)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    // One answer a name, in order: each has one status line; a blocked one an EDE line.
    let answers: Vec<bool> = text
        .split("->>HEADER<<-")
        .skip(1)
        .map(|answer| answer.contains("EDE: 15 (Blocked)"))
        .collect();
    assert_eq!(answers.len(), names.len(), "every name answered");

    let urls: Vec<String> = names
        .iter()
        .map(|n| format!("http://{}/", n.trim_end_matches('.')))
        .collect();
    let verdicts = common::verdicts(&list, &urls);
    let mut listed = 0;
    for ((name, verdict), blocked) in names.iter().zip(&verdicts).zip(&answers) {
        assert_eq!(
            verdict == "listed",
            *blocked,
            "{name}: check says {verdict}"
        );
        listed += usize::from(*blocked);
    }
    // The mix exercises both answers.
    assert!(
        listed > 20_000 && listed < 80_000,
        "{listed} of 10⁵ blocked"
    );
}

#[test]
fn a_list_replaced_during_a_dnsperf_run_costs_no_query() {
    let test = "a_list_replaced_during_a_dnsperf_run";
    if !common::installed("dnsperf") {
        common::skip(
            test,
            "dnsperf is not installed (apt-get install -y dnsperf; .ci/run does)",
        );
        return;
    }
    let Some(setup) = setup(test) else {
        return;
    };
    let dir = setup.dir.path();
    let queries = dir.join("queries.txt");
    let lines: String = (0..1000)
        .map(|i| match i % 3 {
            0 => format!("evil.example A\nwww{i}.evil.example A\n"),
            _ => "clean.test A\n".to_string(),
        })
        .collect();
    std::fs::write(&queries, lines).unwrap();
    // 4 s at 2,000 queries a second (well below what it answers: a lost query here is a
    // reload's, not the load's).
    let perf = Command::new("dnsperf")
        .args([
            "-s",
            "127.0.0.1",
            "-p",
            &setup.port.to_string(),
            "-l",
            "4",
            "-Q",
            "2000",
        ])
        .arg("-d")
        .arg(&queries)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Three replacements while it runs, each a rename over the list as `sync` does.
    for round in 0..3 {
        std::thread::sleep(Duration::from_millis(900));
        let entries = dir.join(format!("round{round}.txt"));
        std::fs::write(&entries, format!("evil.example\nround{round}.example\n")).unwrap();
        let next = common::build_list(
            dir.join(format!("round{round}.bloom")),
            [entries.to_str().unwrap()],
        );
        std::fs::rename(&next, &setup.list).unwrap();
    }
    let output = perf.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    let number = |label: &str| -> u64 {
        report
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split(':').nth(1)?.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {label:?} in:\n{report}"))
    };
    assert!(number("Queries sent") >= 7_000, "{report}");
    assert_eq!(number("Queries lost"), 0, "{report}");
    // The last list answers, once the reload tick after its rename has read it (the rename
    // may come just before dnsperf ends).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut out = dig(setup.port, "round2.example", &[]);
    while !out.contains("status: NXDOMAIN") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        out = dig(setup.port, "round2.example", &[]);
    }
    assert!(
        out.contains("status: NXDOMAIN") && out.contains("EDE: 15"),
        "{out}"
    );
}

#[test]
fn healthz_says_degraded_once_a_list_is_older_than_stale_after() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("phish.txt"), "evil.example\n").unwrap();
    let list = common::build_list(
        dir.path().join("phish.bloom"),
        [dir.path().join("phish.txt")],
    );
    // No query is asked: the upstream (the discard port) is never reached.
    let (_dns, _, http) = start_dns(&list, 9, &["--stale-after", "1s"]);
    let get = |path: &str| {
        reqwest::blocking::get(format!("http://127.0.0.1:{http}{path}"))
            .unwrap()
            .text()
            .unwrap()
    };
    assert_eq!(get("/healthz"), "ok\n");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let degraded = get("/healthz");
    assert!(
        degraded.starts_with("degraded: list phish is ")
            && degraded.ends_with(" seconds old (--stale-after)\n"),
        "{degraded}"
    );
}

/// `dns --tls-cert/--tls-key`: the metrics listener speaks TLS (curl trusting the test's own
/// authority gets `/healthz`; plain HTTP gets nothing), and takes a replaced certificate.
#[test]
fn the_metrics_listener_speaks_tls_and_reloads_its_certificate() {
    let test = "the_metrics_listener_speaks_tls_and_reloads_its_certificate";
    if !common::installed("curl") {
        return common::skip(test, "curl is not installed (.ci/run installs it)");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("phish.txt"), "evil.example\n").unwrap();
    let list = common::build_list(
        dir.path().join("phish.bloom"),
        [dir.path().join("phish.txt")],
    );
    let (ca, cert, key) = crate::serve_tls::certificates(dir.path(), "first");
    let (cert_at, key_at) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::copy(&cert, &cert_at).unwrap();
    std::fs::copy(&key, &key_at).unwrap();
    let tls = [
        "--tls-cert",
        cert_at.to_str().unwrap(),
        "--tls-key",
        key_at.to_str().unwrap(),
    ];
    // No query is asked: the upstream (the discard port) is never reached.
    let (_dns, _, http) = start_dns(&list, 9, &tls);
    let healthz = format!("https://127.0.0.1:{http}/healthz");
    let curl = crate::serve_tls::curl;
    assert_eq!(curl(&healthz, &ca).as_deref(), Some("ok\n"));
    let plain = healthz.replacen("https://", "http://", 1);
    assert!(curl(&plain, &ca).is_none(), "plain HTTP was answered");

    let (new_ca, new_cert, new_key) = crate::serve_tls::certificates(dir.path(), "second");
    for (from, to) in [(&new_key, &key_at), (&new_cert, &cert_at)] {
        let staged = to.with_extension("new");
        std::fs::copy(from, &staged).unwrap();
        std::fs::rename(&staged, to).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while curl(&healthz, &new_ca).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the new certificate was not taken"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        curl(&healthz, &ca).is_none(),
        "the old certificate is still served"
    );
}
