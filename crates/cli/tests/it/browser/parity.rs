//! Parity: `node clients/browser/cli.mjs` (the extension's WebAssembly core) prints exactly
//! what `phishbloom check` prints for 2,000 URLs of every kind, and answers a compact list of
//! UT1 as `check` answers the verified one for 10⁶.

use super::*;

/// `node clients/browser/cli.mjs ARGS`.
fn node_cli(args: &[&str], stdin: &[u8]) -> (Vec<u8>, i32) {
    let cli = root().join("clients/browser/cli.mjs");
    let mut all = vec![cli.to_str().unwrap()];
    all.extend_from_slice(args);
    run(Path::new("node"), &all, stdin)
}

/// `phishbloom check ARGS`.
fn check(args: &[&str], stdin: &[u8]) -> (Vec<u8>, i32) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    run(&serve_common::bin(), &all, stdin)
}

/// 2,000 URLs for [`common::write_ut1_tree`]'s list: listed in many spellings, allowed,
/// clean, IDN, IPv4 in every notation, overlong, unparseable (some not UTF-8), shuffled.
fn parity_urls() -> Vec<Vec<u8>> {
    let mut rng = SplitMix(21);
    let mut urls: Vec<Vec<u8>> = Vec::new();
    let mut push = |url: String| urls.push(url.into_bytes());
    for i in (0..common::UT1_FAMILY).step_by(2) {
        let listed = [
            format!("HTTP://WWW.Evil{i}.EXAMPLE:80/a/../b"),
            format!("https://deep.sub.evil{i}.example./x?q=1#frag"),
            format!("evil{i}.example:8080/%7Epath/%2e%2e/y"),
            format!("http://host{i}.example/login/x?y=1"),
            format!("http://host{i}.example/%6Cogin/step"),
            format!("http://host{i}.example/a/../login"),
            format!("http://docs.evil{i}.example/malware/a"),
            format!("casino{i}.example/poker/"),
            format!("HTTPS://both{i}.example"),
        ];
        let other = [
            format!("http://host{i}.example/login/help/z"),
            format!("http://docs.evil{i}.example/"),
            format!("http://bet{i}.example/"),
            format!("http://clean{i}.example/"),
            format!("http://host{i}.example/loginx"),
            format!("http://evil{i}.example.com/"),
        ];
        for url in listed.into_iter().chain(other) {
            push(url);
        }
    }
    for (unicode, _) in common::UT1_IDN {
        push(format!("http://{unicode}.example/"));
        push(format!("https://www.{}.EXAMPLE/x", unicode.to_uppercase()));
        push(format!("http://{unicode}-not.example/"));
    }
    for j in 1..=24u32 {
        let ip = (192u32 << 24) | (168 << 16) | (7 << 8) | j;
        push(format!("http://192.168.7.{j}/"));
        push(format!("http://{ip}/x"));
        push(format!("http://0x{ip:X}/"));
        push(format!("http://0300.0250.07.{j:o}/"));
        push(format!("http://0300.0250.07.0{j:o}/"));
        push(format!("http://192.168.0x7.{j}/"));
        push(format!("http://192.{}/", (168 << 16) | (7 << 8) | j));
        push(format!("http://192.168.{}/", (7 << 8) | j));
    }
    push(format!("http://evil1.example/{}", "a".repeat(100_000)));
    push(format!("http://{}.evil2.example/", "x".repeat(100_000)));
    push(format!("http://clean.example/?{}", "q".repeat(100_000)));
    for bad in [
        "http://[x",
        "http://exa mple.com/",
        "http://%zz/",
        "::",
        "",
        "http://a..b/",
        "ht!tp://x",
        "http://evil1.example\u{7}/",
        "http://:80/",
        "http://evil1.example:99999/",
        "javascript:alert(1)",
        "http://user:pass@evil3.example/",
    ] {
        push(bad.to_owned());
    }
    urls.push(b"http://evil4.example/\xff\xfe".to_vec());
    urls.push(b"http://\xffevil5.example/".to_vec());
    while urls.len() < 2_000 {
        let i = rng.below(common::UT1_FAMILY);
        let url = match rng.below(4) {
            0 => format!(
                "http://x{}.evil{i}.example/p{}",
                rng.below(100),
                rng.below(100)
            ),
            1 => format!("http://host{i}.example/login/{}", rng.below(1000)),
            2 => format!("http://unlisted{}.example/", rng.below(100_000)),
            _ => format!("HTTP://CASINO{i}.EXAMPLE/Poker/{}", rng.below(10)),
        };
        urls.push(url.into_bytes());
    }
    rng.shuffle(&mut urls);
    urls
}

#[test]
fn the_wasm_core_prints_what_check_prints_for_2000_urls() {
    let Some(_) = prerequisites("the_wasm_core_prints_what_check_prints", &["node"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let verified = common::build_ut1_list(dir.path(), "ut1", &[]);
    // Without a verification section (categories are `possible:`), a cuckoo filter.
    let folders = common::write_ut1_tree(&dir.path().join("tree"));
    let mut args: Vec<std::ffi::OsString> = vec!["--ut1".into()];
    args.extend(folders.into_iter().map(Into::into));
    args.extend(["--kind".into(), "cuckoo".into()]);
    let unverified = common::build_list(dir.path().join("ut1b.bloom"), args);
    let urls = parity_urls();
    assert_eq!(urls.len(), 2_000);
    let stdin = urls.join(&b'\n');
    for list in [&verified, &unverified] {
        let list = list.to_str().unwrap();
        let (expected, code) = check(&[list], &stdin);
        let (found, node_code) = node_cli(&[list], &stdin);
        assert_eq!(code, node_code);
        assert_same(&expected, &found);
        let text = String::from_utf8_lossy(&expected);
        assert_eq!(text.lines().count(), 2_000);
        for (verdict, least) in [
            ("\tlisted\t", 800),
            ("\tclean", 100),
            ("\tallowed\t", 100),
            ("\tinvalid\t", 3),
        ] {
            let n = text.lines().filter(|l| l.contains(verdict)).count();
            assert!(n >= least, "only {n} lines with {verdict:?}");
        }
        // --json, and CRLF lines, through standard input.
        let crlf: Vec<u8> = urls[..300].join(b"\r\n".as_slice());
        let (expected, _) = check(&["--json", list], &crlf);
        let (found, _) = node_cli(&["--json", list], &crlf);
        assert_same(&expected, &found);
    }
    // URLs as arguments (those a command line can carry: UTF-8, no NUL, each under 128 KiB).
    let args: Vec<&str> = urls
        .iter()
        .filter_map(|u| std::str::from_utf8(u).ok())
        .filter(|u| !u.contains('\0') && u.len() < 100_000)
        .take(400)
        .collect();
    let mut check_args = vec![verified.to_str().unwrap()];
    check_args.extend(&args);
    let (expected, code) = check(&check_args, b"");
    let (found, node_code) = node_cli(&check_args, b"");
    assert_eq!(code, node_code);
    assert_same(&expected, &found);
    // A keyword list answers `scan`, not `check`: both refuse it (exit 2, naming scan).
    let words = dir.path().join("words.txt");
    std::fs::write(&words, "free money\nwire transfer\n").unwrap();
    let keywords = dir.path().join("words.bloom");
    common::phishbloom()
        .arg("build")
        .arg("--keywords")
        .arg(&words)
        .arg("-o")
        .arg(&keywords)
        .assert()
        .success();
    for program in ["phishbloom", "node"] {
        let mut command = if program == "node" {
            let mut node = Command::new("node");
            node.arg(root().join("clients/browser/cli.mjs"));
            node
        } else {
            Command::new(serve_common::bin())
        };
        if program == "phishbloom" {
            command.arg("check");
        }
        let output = command.arg(&keywords).arg("free money").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{program}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("scan"), "{program}: {stderr}");
    }
    // Nothing listed: both exit 1.
    let clean = [verified.to_str().unwrap(), "http://clean.example/"];
    assert_eq!(check(&clean, b"").1, 1);
    assert_eq!(node_cli(&clean, b"").1, 1);
}

/// Asserts two outputs are the same bytes, showing the first line that differs.
fn assert_same(expected: &[u8], found: &[u8]) {
    if expected == found {
        return;
    }
    let (e, f) = (
        String::from_utf8_lossy(expected),
        String::from_utf8_lossy(found),
    );
    for (n, (a, b)) in e.lines().zip(f.lines()).enumerate() {
        assert_eq!(a, b, "line {} differs", n + 1);
    }
    panic!(
        "outputs differ in length: {} and {} bytes",
        expected.len(),
        found.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Headless Chromium

#[test]
fn the_wasm_core_answers_a_compact_list_as_check_answers_the_verified_one() {
    let Some(_) = prerequisites("the_wasm_core_answers_a_compact_list", &["node"]) else {
        return;
    };
    let Some(ut1) = crate::compact::ut1_data() else {
        common::skip(
            "the_wasm_core_answers_a_compact_list",
            "../shared/data/ut1 (phishing, malware) is missing",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (verified, compact, entries) = crate::compact::build_both(dir.path(), &ut1, true);
    let urls = crate::compact::mixed_urls(&entries);
    let (expected, code) = check(&[verified.to_str().unwrap()], &urls);
    let (found, node_code) = node_cli(&[compact.to_str().unwrap()], &urls);
    assert_eq!((code, node_code), (0, 0));
    let allowed = crate::compact::allowed_differences(crate::compact::LINES, 1e-9);
    crate::compact::assert_same_answers(&expected, &found, allowed);
}

#[test]
#[ignore = "builds a list of 10⁶ domains: seconds unoptimized; CI runs it in its optimized profile"]
fn the_wasm_core_holds_a_compact_list_of_a_million_domains_in_its_file_size_and_a_fifth() {
    let Some(_) = prerequisites("the_wasm_core_holds_a_compact_list", &["node"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let domains: String = (0..1_000_000)
        .map(|i| format!("d{i:x}.host{}.example\n", i % 977))
        .collect();
    let input = dir.path().join("domains.txt");
    std::fs::write(&input, domains).unwrap();
    let list = dir.path().join("compact.bloom");
    let built = run(
        &serve_common::bin(),
        &[
            "build",
            input.to_str().unwrap(),
            "--kind",
            "compact",
            "-o",
            list.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(built.1, 0, "{}", String::from_utf8_lossy(&built.0));
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, "http://d1.host1.example/\nhttp://clean.test/\n").unwrap();
    let bench = root().join("clients/browser/bench.mjs");
    let (out, code) = run(
        Path::new("node"),
        &[
            bench.to_str().unwrap(),
            list.to_str().unwrap(),
            urls.to_str().unwrap(),
            "1",
        ],
        b"",
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let grown = report["memory_after_load_bytes"].as_f64().unwrap()
        - report["memory_before_bytes"].as_f64().unwrap();
    let file = report["list_bytes"].as_f64().unwrap();
    // The table is read in place into its own words: nothing else of the file's size stays.
    assert!(
        grown <= 1.2 * file,
        "the module grew by {grown} bytes for a {file}-byte list"
    );
    assert_eq!(report["listed"], 1, "{report}");
}
