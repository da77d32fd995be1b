//! Inputs through the real executable: every list is read or refused, never read wrongly — a
//! byte-order mark before an exact key, a URL with user info, gzip and zstd lists by their
//! magic bytes, binary input refused unless `--exact`.

use crate::common;

use std::io::Write;

use common::*;

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_key() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pw.txt");
    std::fs::write(&input, b"\xef\xbb\xbfpassword123\nletmein\n").unwrap();
    for extra in [&[][..], &["--fold-case"][..]] {
        let list = dir.path().join("pw.bloom");
        let mut args = vec!["--exact", "--verify", input.to_str().unwrap()];
        args.extend(extra);
        build_list(list.clone(), args);
        assert_eq!(
            verdicts(&list, &["password123".into(), "letmein".into()]),
            ["listed", "listed"],
            "{extra:?}"
        );
    }
    // add --from too.
    let list = dir.path().join("pw.bloom");
    build_list(
        list.clone(),
        [
            "--exact",
            "--verify",
            "--capacity",
            "100",
            input.to_str().unwrap(),
        ],
    );
    let more = dir.path().join("more.txt");
    std::fs::write(&more, b"\xef\xbb\xbfhunter2\n").unwrap();
    phishbloom()
        .arg("add")
        .arg(&list)
        .arg("--from")
        .arg(&more)
        .assert()
        .success();
    assert_eq!(verdicts(&list, &["hunter2".into()]), ["listed"]);
}

#[test]
fn a_url_with_a_scheme_and_user_info_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("urls.txt");
    std::fs::write(
        &input,
        "http://user:pass@evil.example/login\nother.example\n",
    )
    .unwrap();
    let list = build_list(dir.path().join("u.bloom"), [input.to_str().unwrap()]);
    assert_eq!(
        verdicts(
            &list,
            &[
                "http://evil.example/login".into(),
                "http://someone@evil.example/login".into()
            ]
        ),
        ["listed", "listed"]
    );
    // An address without a scheme is still refused as an entry (it is a key).
    std::fs::write(&input, "spammer@evil.example\n").unwrap();
    assert_error(
        phishbloom()
            .arg("build")
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join("a.bloom")),
        &["--exact"],
    );
}

#[test]
fn gzip_and_zstd_lists_are_read_by_their_magic() {
    let dir = tempfile::tempdir().unwrap();
    let text = "evil.example\nbad.example/login\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    // Any name: the bytes say what they are.
    for (name, bytes) in [("list.txt.gz", &gz), ("list.dat", &zst), ("plain", &gz)] {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let list = build_list(dir.path().join("l.bloom"), [input.to_str().unwrap()]);
        assert_eq!(
            verdicts(
                &list,
                &[
                    "http://evil.example/".into(),
                    "http://bad.example/login".into()
                ]
            ),
            ["listed", "listed"],
            "{name}"
        );
    }
    // Standard input too.
    let list = dir.path().join("stdin.bloom");
    phishbloom()
        .args(["build", "-", "-o"])
        .arg(&list)
        .write_stdin(gz.clone())
        .assert()
        .success();
    assert_eq!(
        verdicts(&list, &["http://evil.example/".into()]),
        ["listed"]
    );
}

#[test]
fn binary_input_is_refused_unless_exact() {
    let dir = tempfile::tempdir().unwrap();
    let binary = std::fs::read(env!("CARGO_BIN_EXE_phishbloom")).unwrap();
    let input = dir.path().join("program");
    std::fs::write(&input, &binary[..1 << 20]).unwrap();
    for args in [&[][..], &["--keywords"][..]] {
        assert_error(
            phishbloom()
                .arg("build")
                .args(args)
                .arg(&input)
                .arg("-o")
                .arg(dir.path().join("b.bloom")),
            &["not a text list", "--exact"],
        );
    }
    assert!(!dir.path().join("b.bloom").exists());
    build_list(
        dir.path().join("e.bloom"),
        ["--exact", input.to_str().unwrap()],
    );
}

#[test]
fn a_public_suffix_entry_warns_and_strict_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("list.txt");
    // `localhost` is a single label no rule names: an entry like any other.
    std::fs::write(
        &input,
        "evil.example\nco.uk\ngithub.io\nlocalhost\nx.github.io\n",
    )
    .unwrap();
    let output = phishbloom()
        .arg("build")
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("l.bloom"))
        .assert()
        .success()
        .get_output()
        .clone();
    let warned = String::from_utf8_lossy(&output.stderr);
    assert!(
        warned.contains("warning: 2 entries are public suffixes")
            && warned.contains("\"co.uk\"")
            && warned.contains("\"github.io\"")
            && !warned.contains("localhost"),
        "{warned}"
    );
    assert_error(
        phishbloom()
            .arg("build")
            .arg(&input)
            .arg("--strict")
            .arg("-o")
            .arg(dir.path().join("s.bloom")),
        &["2 entries are public suffixes", "--strict"],
    );
    assert!(!dir.path().join("s.bloom").exists());
}

/// MetaMask's list and hosts files hold domains of a single label; like every domain entry
/// they list every host under them, through `check` of any kind.
#[test]
fn a_single_label_domain_entry_lists_its_subdomains() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("hosts");
    std::fs::write(
        &input,
        "0.0.0.0 iclexofmarket\n0.0.0.0 com12786312634\n0.0.0.0 evil.example\n",
    )
    .unwrap();
    for flags in [&[][..], &["--verify"], &["--kind", "compact"]] {
        let list = dir.path().join("l.bloom");
        let mut build = phishbloom();
        build
            .arg("build")
            .arg(&input)
            .args(flags)
            .arg("-o")
            .arg(&list);
        build.assert().success();
        let output = phishbloom()
            .arg("check")
            .arg(&list)
            .args([
                "https://www.iclexofmarket/login",
                "a.b.com12786312634",
                "iclexofmarket",
                "iclexofmarket.com",
                "example",
            ])
            .output()
            .unwrap();
        let verdicts: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| line.split('\t').take(3).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            verdicts,
            [
                "https://www.iclexofmarket/login listed iclexofmarket",
                "a.b.com12786312634 listed com12786312634",
                "iclexofmarket listed iclexofmarket",
                "iclexofmarket.com clean",
                "example clean",
            ],
            "{flags:?}"
        );
    }
}

/// A single-label domain added to a published list reaches a synced copy through a delta,
/// and lists its subdomains there; removed, it no longer does.
#[test]
fn a_single_label_domain_travels_through_publish_and_sync() {
    use crate::sync::{add, list, publish, sync, StaticServer};
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &["evil.example".to_string()], 100);
    let site = dir.path().join("site");
    publish(&source, &site, &[]);
    let server = StaticServer::start(&site);
    let copy = dir.path().join("copy.bloom");
    assert_eq!(sync(&server.url, &copy, &[]).0, 0);
    let listed = |url: &str| {
        let output = phishbloom()
            .arg("check")
            .arg(&copy)
            .arg(url)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).contains("\tlisted\t")
    };
    assert!(!listed("a.b.corp"));
    add(&source, &["corp".to_string()]);
    publish(&source, &site, &[]);
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("by 1 delta"), "{out}");
    assert!(listed("a.b.corp"));
    phishbloom()
        .arg("remove")
        .arg(&source)
        .arg("corp")
        .assert()
        .success();
    publish(&source, &site, &[]);
    let (code, out) = sync(&server.url, &copy, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("by 1 delta"), "{out}");
    assert!(!listed("a.b.corp"));
}

/// `add` of a public suffix warns, as `build` does: it would list a whole registry.
#[test]
fn adding_a_public_suffix_warns() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("list.txt");
    std::fs::write(&input, "evil.example\n").unwrap();
    let list = build_list(
        dir.path().join("l.bloom"),
        [input.to_str().unwrap(), "--capacity", "10"],
    );
    let output = phishbloom()
        .arg("add")
        .arg(&list)
        .args(["com", "corp", "co.uk"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("\"com\", \"co.uk\" are each a public suffix") && !said.contains("corp"),
        "{said}"
    );
}
