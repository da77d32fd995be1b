//! `rediss://`: a list pushed and checked over TLS, against a redis-server with a certificate
//! from a throw-away CA (made with the openssl command) that the client trusts through
//! `SSL_CERT_FILE`. Its own test binary, because it sets that variable for the process.

use crate::common;

use std::path::Path;
use std::process::Command;

use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};
use phishbloom_testing::redis_server::{free_port, require, RedisServer};
use phishbloom_url::Entry;

use common::{build, local_verdicts, remote_verdicts};

/// Runs openssl with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new(require("openssl"))
        .args(args)
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "openssl {args:?} failed");
}

#[test]
fn a_list_pushed_and_checked_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=phishbloom test CA",
            "-days",
            "2",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(d.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
    let file = |name: &str| d.join(name).to_string_lossy().into_owned();
    let tls_port = free_port(false).to_string();
    let (cert, key, ca) = (file("server.crt"), file("server.key"), file("ca.crt"));
    let server = RedisServer::start_with(&[
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &ca,
        "--tls-auth-clients",
        "no",
    ]);
    // rustls-native-certs reads the trusted roots from SSL_CERT_FILE when it is set; this test
    // binary runs this one test, so no other thread reads the environment meanwhile.
    std::env::set_var("SSL_CERT_FILE", &ca);

    let entries: Vec<Entry> = (0..2000)
        .map(|i| Entry::parse(format!("tls{i}.example/x").as_bytes()).unwrap())
        .collect();
    let (list, path) = build(&entries, 0.01, true, d, "secure");
    let target = Target::parse(&format!("rediss://127.0.0.1:{tls_port}")).unwrap();
    let source = PushSource::of(&list, &path).unwrap();
    push(
        &mut target.connect().unwrap(),
        "secure",
        &source,
        &PushOptions::default(),
    )
    .unwrap();
    let mut remote = RedisBlocklist::open(&target, "secure").unwrap();
    let queries: Vec<String> = (0..500)
        .flat_map(|i| {
            [
                format!("http://www.tls{i}.example/x/y"),
                format!("tls{i}.example/z"),
            ]
        })
        .collect();
    let items: Vec<&[u8]> = queries.iter().map(String::as_bytes).collect();
    let verdicts = remote_verdicts(&mut remote, &items, 100);
    assert_eq!(verdicts, local_verdicts(&list, &items));
    assert_eq!(verdicts.iter().filter(|v| v.listed()).count(), 500);
    // The plain port holds the same list; TLS to it fails with a clear error.
    let plain = Target::parse(&format!("rediss://127.0.0.1:{}", server.port())).unwrap();
    let error = RedisBlocklist::open(&plain, "secure").err().unwrap();
    assert!(
        error.to_string().contains("cannot connect to Redis"),
        "{error}"
    );
}
