//! Near-duplicate lists through the real executable: `build --near` from texts, pages and
//! messages, `scan` answers (TSV, JSON, exit codes, with a keyword list beside), `info`,
//! `remove` by name, `merge`, refusals (check, a distance beyond the list's, damaged files),
//! and `serve`'s `POST /v1/near` behind the same limits as the other routes.

use crate::common;
use crate::serve_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{assert_error, info_json, phishbloom, SplitMix};
use serde_json::Value;

/// A text of `words` words drawn from a vocabulary of its own (`seed`), so that two seeds give
/// unrelated texts; frequent words are frequent (index ∝ u³, a Zipf-like skew, as in prose),
/// which is what keeps a real text's SimHash stable under a few edits.
fn text(seed: u64, words: usize) -> String {
    let mut rng = SplitMix(seed);
    let vocabulary: Vec<String> = (0..300).map(|i| format!("w{seed}x{i}")).collect();
    let mut out = String::new();
    for i in 0..words {
        if i > 0 {
            out.push(if i % 12 == 0 { '\n' } else { ' ' });
        }
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        out.push_str(&vocabulary[(u * u * u * vocabulary.len() as f64) as usize]);
    }
    out
}

/// `text` with the word at every `every`-th position replaced.
fn edited(text: &str, every: usize) -> String {
    text.split(' ')
        .enumerate()
        .map(|(i, w)| {
            if i % every == every - 1 {
                "changed".to_string()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the known documents: five texts, an HTML page and a message with a Message-ID.
fn known_dir(dir: &Path) -> PathBuf {
    let known = dir.join("known");
    std::fs::create_dir_all(&known).unwrap();
    for seed in 1..=5 {
        std::fs::write(known.join(format!("doc{seed}.txt")), text(seed, 400)).unwrap();
    }
    std::fs::write(
        known.join("kit.html"),
        format!(
            "<!DOCTYPE html><html><head><title>Sign in</title><script>var a = 1;</script>\
             </head><body><p>{}</p></body></html>",
            text(6, 400)
        ),
    )
    .unwrap();
    std::fs::write(
        known.join("run.eml"),
        format!(
            "Message-ID: <run-7@spam.example>\nFrom: a@spam.example\nSubject: Your prize\n\n{}\n",
            text(7, 400)
        ),
    )
    .unwrap();
    std::fs::write(
        known.join("short.txt"),
        "Your parcel is waiting: pay the fee",
    )
    .unwrap();
    known
}

fn build_known(dir: &Path) -> PathBuf {
    build_known_with(dir, &[])
}

/// The known documents built into `known.bloom` with `extra` flags (a method).
fn build_known_with(dir: &Path, extra: &[&str]) -> PathBuf {
    let known = known_dir(dir);
    let out = dir.join("known.bloom");
    let output = phishbloom()
        .args(["build", "--near", "--category", "campaigns"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(&known)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    out
}

/// A URL list `urls.bloom` of one entry, built in `dir`.
fn url_list(dir: &Path) -> PathBuf {
    let urls = dir.join("urls.txt");
    std::fs::write(&urls, "evil.example\n").unwrap();
    let list = dir.join("urls.bloom");
    let output = phishbloom()
        .arg("build")
        .arg(&urls)
        .arg("-o")
        .arg(&list)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    list
}

fn scan_json(list: &Path, files: &[&Path], extra: &[&str]) -> (Vec<Value>, i32) {
    let output = phishbloom()
        .arg("scan")
        .arg(list)
        .args(extra)
        .arg("--json")
        .args(files)
        .output()
        .unwrap();
    let lines = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, output.status.code().unwrap())
}

#[test]
fn copies_are_found_with_their_match_and_unrelated_texts_are_clean() {
    copies_are_found_by(&[], "minhash");
    copies_are_found_by(&["--near-method", "simhash"], "simhash");
}

/// Copies are found (and an unrelated text is not) by a list built with `method_args`.
fn copies_are_found_by(method_args: &[&str], method: &str) {
    let dir = tempfile::tempdir().unwrap();
    let list = build_known_with(dir.path(), method_args);
    let info = info_json(&list);
    assert_eq!(info["kind"], "near");
    assert_eq!(info["meta"]["entries"], 8);
    assert_eq!(info["near"]["exact"], 1);
    assert_eq!(info["near"]["method"], method);
    let max_distance = info["near"]["max_distance"].as_u64().unwrap();
    if method == "simhash" {
        assert_eq!(info["near"]["tables"], 4);
        assert_eq!(max_distance, 3);
    } else {
        assert_eq!(info["near"]["bins"], 64);
        assert_eq!(
            max_distance,
            64 - info["near"]["threshold"].as_u64().unwrap()
        );
    }

    let copy = dir.path().join("copy.txt");
    std::fs::write(&copy, edited(&text(3, 400), 100)).unwrap();
    let page_copy = dir.path().join("page.html");
    std::fs::write(
        &page_copy,
        format!(
            "<html><head><title>Sign in</title><style>p {{ color: red }}</style></head>\
             <body><div>{}</div></body></html>",
            text(6, 400)
        ),
    )
    .unwrap();
    let mail_copy = dir.path().join("again.eml");
    std::fs::write(
        &mail_copy,
        format!(
            "Message-ID: <other@spam.example>\nSubject: Your prize\n\n{}\n",
            edited(&text(7, 400), 150)
        ),
    )
    .unwrap();
    let short_copy = dir.path().join("short-copy.txt");
    std::fs::write(&short_copy, "YOUR parcel is waiting -- pay the fee!").unwrap();
    let unrelated = dir.path().join("other.txt");
    std::fs::write(&unrelated, text(99, 400)).unwrap();

    let files = [
        copy.as_path(),
        &page_copy,
        &mail_copy,
        &short_copy,
        &unrelated,
    ];
    let (answers, code) = scan_json(&list, &files, &[]);
    assert_eq!(code, 0);
    let known = dir.path().join("known");
    let expect = [
        Some(known.join("doc3.txt").display().to_string()),
        Some(known.join("kit.html").display().to_string()),
        Some("run-7@spam.example".to_string()),
        Some(known.join("short.txt").display().to_string()),
        None,
    ];
    for (answer, expected) in answers.iter().zip(&expect) {
        match expected {
            Some(name) => {
                assert_eq!(answer["verdict"], "near", "{answer}");
                assert_eq!(answer["match"], name.as_str(), "{answer}");
                assert!(answer["distance"].as_u64().unwrap() <= max_distance);
                assert_eq!(answer["categories"][0], "campaigns");
                // A sketch's answer carries the resemblance it estimated (not for an exact
                // hash, nor for SimHash).
                let sketched = method == "minhash" && answer["exact"] == false;
                assert_eq!(answer["resemblance"].is_f64(), sketched, "{answer}");
            }
            None => {
                assert_eq!(answer["verdict"], "clean", "{answer}");
                assert!(answer["match"].is_null() && answer["distance"].is_null());
            }
        }
    }
    assert_eq!(answers[3]["exact"], true);

    // TSV, and exit 1 when nothing is near.
    let output = phishbloom()
        .arg("scan")
        .arg(&list)
        .arg(&unrelated)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("{}\tclean\n", unrelated.display())
    );
}

#[test]
fn a_keyword_list_and_a_near_list_answer_together() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_known(dir.path());
    let keywords = dir.path().join("kw.txt");
    std::fs::write(&keywords, "your prize\n").unwrap();
    let kw = dir.path().join("kw.bloom");
    assert!(phishbloom()
        .args(["build", "--keywords"])
        .arg(&keywords)
        .arg("-o")
        .arg(&kw)
        .output()
        .unwrap()
        .status
        .success());
    let mail = dir.path().join("known/run.eml");
    let (answers, code) = scan_json(&kw, &[&mail], &["--near", list.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(answers[0]["verdict"], "spam");
    assert_eq!(answers[0]["near"]["verdict"], "near");
    assert_eq!(answers[0]["near"]["match"], "run-7@spam.example");
    assert_eq!(answers[0]["near"]["distance"], 0);
}

#[test]
fn refusals_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_known(dir.path());
    let doc = dir.path().join("known/doc1.txt");
    assert_error(
        phishbloom()
            .arg("check")
            .arg(&list)
            .arg("http://example.com"),
        &["near-duplicate list", "phishbloom scan"],
    );
    let beyond = info_json(&list)["near"]["max_distance"].as_u64().unwrap() + 1;
    assert_error(
        phishbloom()
            .arg("scan")
            .arg(&list)
            .args(["--max-distance", &beyond.to_string()])
            .arg(&doc),
        &[&format!("--max-distance {beyond}"), "built for"],
    );
    assert_error(
        phishbloom()
            .args(["build", "--near", "--max-distance", "3", "-o"])
            .arg(dir.path().join("x.bloom"))
            .arg(&doc),
        &[
            "--max-distance applies to SimHash lists",
            "--near-method simhash",
        ],
    );
    assert_error(
        phishbloom()
            .args([
                "build",
                "--near",
                "--near-method",
                "simhash",
                "--max-distance",
                "3",
                "--blocks",
                "3",
                "-o",
            ])
            .arg(dir.path().join("x.bloom"))
            .arg(&doc),
        &["blocks"],
    );
    assert_error(
        phishbloom()
            .args(["build", "--near", "--format", "hosts", "-o"])
            .arg(dir.path().join("x.bloom"))
            .arg(&doc),
        &["--format hosts", "--format lines"],
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_error(
        phishbloom()
            .args(["build", "--near", "-o"])
            .arg(dir.path().join("x.bloom"))
            .arg(&empty),
        &["no document"],
    );
    // A damaged byte anywhere in the file is refused when it is opened.
    let bytes = std::fs::read(&list).unwrap();
    let info = info_json(&list);
    for section in info["sections"].as_array().unwrap() {
        let offset = section["offset"].as_u64().unwrap() as usize;
        let len = section["bytes"].as_u64().unwrap() as usize;
        let mut damaged = bytes.clone();
        damaged[offset + len / 2] ^= 0x10;
        let path = dir.path().join("damaged.bloom");
        std::fs::write(&path, &damaged).unwrap();
        assert_error(phishbloom().arg("info").arg(&path), &["damaged.bloom"]);
        assert_error(
            phishbloom().arg("scan").arg(&path).arg(&doc),
            &["damaged.bloom"],
        );
    }
}

#[test]
fn documents_are_removed_by_name_and_lists_merged() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_known(dir.path());
    let doc = dir.path().join("known/doc2.txt");
    let name = doc.display().to_string();
    let before = info_json(&list);
    assert!(phishbloom()
        .arg("remove")
        .arg(&list)
        .arg(&name)
        .output()
        .unwrap()
        .status
        .success());
    let after = info_json(&list);
    assert_eq!(after["meta"]["entries"], 7);
    assert_eq!(
        after["meta"]["version"].as_u64(),
        before["meta"]["version"].as_u64().map(|v| v + 1)
    );
    let (answers, code) = scan_json(&list, &[&doc], &[]);
    assert_eq!((answers[0]["verdict"].as_str(), code), (Some("clean"), 1));
    assert_error(
        phishbloom()
            .arg("remove")
            .arg(&list)
            .arg("no-such-document"),
        &["no document named `no-such-document`"],
    );

    // Adding it back as a document file: the same set as before.
    let added = dir.path().join("added.bloom");
    std::fs::copy(&list, &added).unwrap();
    let output = phishbloom()
        .arg("add")
        .arg(&added)
        .arg(&doc)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("added 1 document;"));
    let added_info = info_json(&added);
    assert_eq!(added_info["meta"]["entries"], 8);
    // The categories differ (no --category when added), so compare names only through scan.
    let (answers, _) = scan_json(&added, &[&doc], &[]);
    assert_eq!(answers[0]["match"], name.as_str());

    // Merging the removed document back from a list of its own.
    let single = dir.path().join("single.bloom");
    assert!(phishbloom()
        .args(["build", "--near", "--category", "campaigns", "-o"])
        .arg(&single)
        .arg(&doc)
        .output()
        .unwrap()
        .status
        .success());
    let merged = dir.path().join("merged.bloom");
    assert!(phishbloom()
        .arg("merge")
        .arg(&list)
        .arg(&single)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap()
        .status
        .success());
    let merged_info = info_json(&merged);
    assert_eq!(merged_info["meta"]["entries"], 8);
    // The same documents as the first build: the same set fingerprint.
    assert_eq!(
        merged_info["meta"]["fingerprint"],
        before["meta"]["fingerprint"]
    );
    let (answers, _) = scan_json(&merged, &[&doc], &[]);
    assert_eq!(answers[0]["match"], name.as_str());
}

#[test]
fn near_deltas_carry_a_change_through_diff_apply_publish_and_sync() {
    let dir = tempfile::tempdir().unwrap();
    let list = build_known(dir.path());
    let doc = dir.path().join("known/doc2.txt");
    let name = doc.display().to_string();
    let old_copy = dir.path().join("old-copy.bloom");
    std::fs::copy(&list, &old_copy).unwrap();
    let published = dir.path().join("pub");
    let copy = dir.path().join("copy.bloom");
    let sync = |copy: &Path| {
        let output = phishbloom()
            .arg("sync")
            .arg(&published)
            .arg(copy)
            .arg("--once")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let publish = |list: &Path| {
        let output = phishbloom()
            .arg("publish")
            .arg(list)
            .arg(&published)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    };
    publish(&list);
    sync(&copy);
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&list).unwrap());
    assert!(phishbloom()
        .arg("remove")
        .arg(&list)
        .arg(&name)
        .output()
        .unwrap()
        .status
        .success());
    let after = info_json(&list);

    // `diff` makes a near delta (the document removed, by name) that `apply` turns the old
    // version into the new one with.
    let delta = dir.path().join("remove.delta");
    let output = phishbloom()
        .arg("diff")
        .arg(&old_copy)
        .arg(&list)
        .arg("-o")
        .arg(&delta)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("+0 −1 documents"));
    assert!(std::fs::metadata(&delta).unwrap().len() < 200);
    let output = phishbloom()
        .arg("apply")
        .arg(&old_copy)
        .arg(&delta)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        info_json(&old_copy)["meta"]["fingerprint"],
        after["meta"]["fingerprint"]
    );
    // Applied twice, it is refused by its base, and the file is left as it was.
    assert_error(
        phishbloom().arg("apply").arg(&old_copy).arg(&delta),
        &["the delta applies to version"],
    );
    // A near delta is no delta of entries.
    let url_list = url_list(dir.path());
    assert_error(
        phishbloom().arg("apply").arg(&url_list).arg(&delta),
        &["not a near-duplicate list"],
    );

    // Published, the change travels as that delta, and the copy answers as the list does.
    publish(&list);
    let text = sync(&copy);
    assert!(text.contains("by 1 delta"), "{text}");
    assert_eq!(
        info_json(&copy)["meta"]["fingerprint"],
        after["meta"]["fingerprint"]
    );
    let (answers, code) = scan_json(&copy, &[&doc], &[]);
    assert_eq!((answers[0]["verdict"].as_str(), code), (Some("clean"), 1));
}

#[test]
fn serve_answers_post_v1_near_within_its_limits() {
    use reqwest::StatusCode;
    let dir = tempfile::tempdir().unwrap();
    let list = build_known(dir.path());
    let url_list = url_list(dir.path());
    let server = serve_common::Server::start(
        dir.path(),
        &[
            list.to_str().unwrap(),
            url_list.to_str().unwrap(),
            "--max-body",
            "100000",
        ],
    );
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let post = |query: &str, content_type: &str, body: String| {
        client
            .post(format!("{}/v1/near{query}", server.http))
            .header("content-type", content_type)
            .body(body)
            .send()
            .unwrap()
    };
    let answer: Value = post("", "text/plain", edited(&text(4, 400), 100))
        .json()
        .unwrap();
    assert_eq!(answer["verdict"], "near", "{answer}");
    assert_eq!(answer["list"], "known");
    assert!(answer["match"].as_str().unwrap().ends_with("doc4.txt"));
    let html = format!(
        "<html><head><title>Sign in</title></head><body><p>{}</p></body></html>",
        text(6, 400)
    );
    let answer: Value = post("?list=known", "text/html", html).json().unwrap();
    assert!(answer["match"].as_str().unwrap().ends_with("kit.html"));
    let clean: Value = post("", "text/plain", text(55, 400)).json().unwrap();
    assert_eq!(clean["verdict"], "clean");
    assert!(clean["matches"].as_array().unwrap().is_empty());

    // Refusals, each with its status: a distance beyond the list's, not a number, a list that
    // is not a near-duplicate list, no such list, an unknown parameter.
    for (query, expected) in [
        ("?max_distance=65", StatusCode::BAD_REQUEST),
        ("?max_distance=x", StatusCode::BAD_REQUEST),
        ("?list=urls", StatusCode::BAD_REQUEST),
        ("?list=nope", StatusCode::NOT_FOUND),
        ("?colour=red", StatusCode::BAD_REQUEST),
    ] {
        let response = post(query, "text/plain", text(1, 400));
        assert_eq!(response.status(), expected, "{query}");
    }
    let status = |response: reqwest::blocking::Response| response.status();
    // The body cap of the other routes.
    assert_eq!(
        status(post("", "text/plain", "word ".repeat(30_000))),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // Non-UTF-8 bytes are read as text, as scan reads them.
    let response = client
        .post(format!("{}/v1/near", server.http))
        .body(vec![0xff_u8, 0xfe, b'a', b' ', b'b'])
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let lists: Value = client
        .get(format!("{}/v1/lists", server.http))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(lists.to_string().contains("\"near\""));
}
