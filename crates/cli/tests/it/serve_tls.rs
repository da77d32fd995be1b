//! `serve --tls-cert/--tls-key`: the HTTP and Redis-protocol listeners over TLS, asked by curl,
//! `redis-cli --tls` and redis-py with `ssl=True`, each trusting a certificate authority of the
//! test's own; plain connections refused; and the certificate replaced under the running server,
//! new connections then getting the new one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{build_list, installed, skip};
use crate::serve_common::Server;

/// A certificate authority and a certificate it signed for `localhost` and 127.0.0.1, written
/// as `NAME-ca.pem`, `NAME-cert.pem` and `NAME-key.pem` in `dir`: the three paths.
pub(crate) fn certificates(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    // Names of their own: OpenSSL (curl, redis-cli) takes a certificate whose issuer is its own
    // subject (rcgen's default for both) as self-signed.
    ca_params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("phishbloom test CA {name}"),
    );
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress(loopback));
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let paths = (
        dir.join(format!("{name}-ca.pem")),
        dir.join(format!("{name}-cert.pem")),
        dir.join(format!("{name}-key.pem")),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

/// `curl -s` of `url` trusting `ca`: its body, or `None` when the request failed.
pub(crate) fn curl(url: &str, ca: &Path) -> Option<String> {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "5", "--cacert"])
        .arg(ca)
        .arg(url)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn serve_speaks_tls_to_curl_redis_cli_and_redis_py_and_reloads_its_certificate() {
    let test = "serve_speaks_tls_to_curl_redis_cli_and_redis_py_and_reloads_its_certificate";
    if !(installed("curl") && installed("redis-cli")) {
        return skip(
            test,
            "curl or redis-cli is not installed (.ci/run installs them)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("phish.txt"), "evil.example\n").unwrap();
    let list = build_list(
        dir.path().join("phish.bloom"),
        [dir.path().join("phish.txt")],
    );
    let (ca, cert, key) = certificates(dir.path(), "first");
    let (cert_at, key_at) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::copy(&cert, &cert_at).unwrap();
    std::fs::copy(&key, &key_at).unwrap();
    let server = Server::start(
        dir.path(),
        &[
            list.to_str().unwrap(),
            "--tls-cert",
            cert_at.to_str().unwrap(),
            "--tls-key",
            key_at.to_str().unwrap(),
            "--reload-interval",
            "0.2",
        ],
    );
    assert!(server.http.starts_with("https://"), "{}", server.http);
    let port = server.resp.rsplit(':').next().unwrap().to_string();
    let check = format!("{}/v1/check?url=http://www.evil.example/", server.http);

    // HTTPS: listed; plain HTTP to the same port gets no answer.
    let body = curl(&check, &ca).expect("curl over TLS");
    assert!(body.contains("\"listed\":true"), "{body}");
    let plain = check.replacen("https://", "http://", 1);
    assert!(curl(&plain, &ca).is_none(), "plain HTTP was answered");

    // redis-cli --tls.
    let out = Command::new("redis-cli")
        .args(["--tls", "--cacert"])
        .arg(&ca)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "BF.EXISTS",
            "phish",
            "http://evil.example/a",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1", "{out:?}");

    // redis-py, ssl=True, over RESP3.
    let script = "import redis, sys\n\
        r = redis.Redis(host='127.0.0.1', port=int(sys.argv[1]), ssl=True, ssl_ca_certs=sys.argv[2], protocol=3)\n\
        print(r.execute_command('BF.MEXISTS', 'phish', 'http://evil.example/', 'http://ok.example/'))\n";
    match Command::new("python3")
        .args(["-c", script, &port])
        .arg(&ca)
        .output()
    {
        Ok(out) if out.status.success() => {
            // RESP3's booleans, as RedisBloom answers BF.MEXISTS.
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[True, False]")
        }
        Ok(out) => panic!(
            "redis-py over TLS: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(error) => skip(test, &format!("python3 does not run: {error}")),
    }

    // A new certificate (of another authority) replaces the old under the running server.
    let (new_ca, new_cert, new_key) = certificates(dir.path(), "second");
    for (from, to) in [(&new_key, &key_at), (&new_cert, &cert_at)] {
        let staged = to.with_extension("new");
        std::fs::copy(from, &staged).unwrap();
        std::fs::rename(&staged, to).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while curl(&check, &new_ca).is_none() {
        assert!(
            Instant::now() < deadline,
            "the new certificate was not taken: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        curl(&check, &ca).is_none(),
        "the old certificate is still served"
    );
}
