//! Keyword lists and scanning, through the library: where keywords must be
//! found (across lines, in encoded MIME parts, in HTML, in other cases and compatibility forms,
//! in Chinese without spaces, across punctuation), where they must not (inside longer words),
//! inputs that must not panic, the index's behaviour under files changed underneath, the
//! per-document rate, and the property that no inserted keyword is ever missed. The phrase gate
//! changes no answer: scans with and without it agree, and a list written without it (as before
//! it existed) still scans alike.

use phishbloom_blocklist::BlocklistFile;
use std::path::{Path, PathBuf};

use phishbloom_blocklist::keywords::{build_keywords, KeywordOptions};
use phishbloom_blocklist::Input;
use phishbloom_core::format::tag;
use phishbloom_core::scan::{DocumentVerdict, ScanOptions, Scanner};
use phishbloom_core::Error;
use phishbloom_core::{Blocklist, BuildOptions, Engine, Kind};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::mail::{decode_message, decode_text};
use proptest::prelude::*;

/// Builds a keyword list from `keywords` (one per line) in `dir`.
fn build(dir: &Path, keywords: &[&str], fpp: f64, verify: bool, probes: Option<u32>) -> Blocklist {
    let list = dir.join("keywords.txt");
    std::fs::write(&list, keywords.join("\n")).unwrap();
    let options = BuildOptions {
        kind: Kind::Blocked,
        fpp,
        verify,
        name: "kw".into(),
        ..BuildOptions::default()
    };
    let (blocklist, _) = build_keywords(
        &Input::Path(list),
        &options,
        &KeywordOptions {
            probes_per_doc: probes,
            spill_dir: dir.to_path_buf(),
        },
        &mut |_| {},
    )
    .unwrap();
    blocklist
}

/// [`SPAM`] built with verification at p = 1 %, saved as `kw.bloom` in `dir` and opened.
fn saved_spam(dir: &Path) -> (PathBuf, Blocklist) {
    let path = dir.join("kw.bloom");
    build(dir, &SPAM, 0.01, true, None)
        .save(&path, &[])
        .unwrap();
    let opened = Blocklist::open(&path).unwrap();
    (path, opened)
}

fn scan(list: &Blocklist, text: &str) -> DocumentVerdict {
    Scanner::new(list, ScanOptions::default())
        .unwrap()
        .scan(text)
        .unwrap()
}

fn found(list: &Blocklist, text: &str) -> Vec<String> {
    scan(list, text)
        .matches
        .into_iter()
        .map(|m| m.keyword)
        .collect()
}

const SPAM: [&str; 6] = [
    "free money",
    "claim your prize",
    "免费赚钱",
    "viagra",
    "ＦＲＥＥ ＣＡＳＨ",
    "wire transfer now",
];

#[test]
fn keywords_are_found_where_a_reader_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &SPAM, 0.01, true, None);
    // Across a line break, in another case, split by punctuation.
    assert_eq!(found(&list, "Get FREE\r\nmoney now"), ["free money"]);
    assert_eq!(
        found(&list, "claim -- your... prize!"),
        ["claim your prize"]
    );
    // Compatibility forms: fullwidth letters in the text and in the list.
    assert_eq!(found(&list, "ｆｒｅｅ ｍｏｎｅｙ"), ["free money"]);
    assert_eq!(found(&list, "free cash"), ["free cash"]);
    // Chinese without spaces.
    assert_eq!(found(&list, "现在免费赚钱啦"), ["免 费 赚 钱"]);
    // Not across a word boundary.
    assert!(found(&list, "freedom money, viagras, free moneys").is_empty());
    // Offsets point into the decoded text.
    let text = "Hi, WIRE transfer\tNOW please";
    let verdict = scan(&list, text);
    let hit = &verdict.matches[0];
    assert_eq!(&text[hit.start..hit.end], "WIRE transfer\tNOW");
    assert_eq!(hit.text, "WIRE transfer\tNOW");
    assert!(verdict.spam);
    assert_eq!(verdict.hits, 1);
}

#[test]
fn keywords_are_found_in_encoded_mime_parts_and_html() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &SPAM, 0.01, true, None);
    let message = concat!(
        "From: x@example.com\r\nTo: y@example.com\r\nSubject: =?UTF-8?Q?Claim_your_prize?=\r\n",
        "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n",
        "--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n",
        // "现在免费赚钱啦" in base64.
        "546w5Zyo5YWN6LS56LWa6ZKx5ZWm\r\n",
        "--b\r\nContent-Type: text/plain; charset=iso-8859-1\r\n",
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
        "Fr=E9d says: free=\r\n money for all\r\n",
        "--b\r\nContent-Type: text/html\r\n\r\n<p>Buy <b>Via</b>gra? No: <i>viagra</i></p>\r\n",
        "--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n",
        "ZnJlZSBtb25leQ==\r\n--b--\r\n"
    );
    let doc = decode_message("m.eml", message.as_bytes()).unwrap();
    let mut keywords = found(&list, &doc.text);
    keywords.sort();
    // Inline markup does not split a word (`<b>Via</b>gra` reads "Viagra"); the binary
    // attachment (which decodes to "free money") is not text and is not scanned.
    assert_eq!(
        keywords,
        [
            "claim your prize",
            "free money",
            "viagra",
            "viagra",
            "免 费 赚 钱"
        ]
    );
}

#[test]
fn odd_inputs_give_an_answer_or_a_clear_error_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &SPAM, 0.01, true, None);
    // Malformed MIME: no boundary, unterminated parts, bad encodings.
    for bytes in [
        &b"Content-Type: multipart/mixed\r\n\r\n--\r\n--"[..],
        b"Subject: =?utf-8?B?!!!?=\r\nContent-Transfer-Encoding: base64\r\n\r\n***free money",
        b"From: \xff\xfe\r\n\r\n\xff free money \xc3",
        b"",
    ] {
        match decode_message("m", bytes) {
            Ok(doc) => {
                scan(&list, &doc.text);
            }
            Err(error) => assert!(error.to_string().starts_with("m: "), "{error}"),
        }
    }
    // Invalid UTF-8 as text: decoded with U+FFFD, keywords around it still found.
    let doc = decode_text("t", b"\xff\xfefree\xc3 money \x80viagra").unwrap();
    assert_eq!(found(&list, &doc.text), ["free money", "viagra"]);
    // A 50 MB message with a binary attachment and a keyword at its very end.
    let mut big = b"From: x@example.com\r\nSubject: big\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n".to_vec();
    let line = b"lorem ipsum dolor sit amet consectetur adipiscing elit sed do\r\n";
    while big.len() < 50 << 20 {
        big.extend_from_slice(line);
    }
    big.extend_from_slice(b"and now, free money\r\n--b\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==\r\n--b--\r\n");
    let doc = decode_message("big.eml", &big).unwrap();
    let verdict = scan(&list, &doc.text);
    assert_eq!(verdict.hits, 1);
    assert_eq!(verdict.matches[0].keyword, "free money");
}

#[test]
fn min_hits_decides_spam_and_repeats_count() {
    let dir = tempfile::tempdir().unwrap();
    let list = build(dir.path(), &SPAM, 0.01, true, None);
    let text = "viagra viagra free money";
    let mut scanner = Scanner::new(
        &list,
        ScanOptions {
            min_hits: 4,
            confirm: true,
        },
    )
    .unwrap();
    let verdict = scanner.scan(text).unwrap();
    assert_eq!(verdict.hits, 3);
    assert!(!verdict.spam);
    assert!(scan(&list, text).spam);
}

#[test]
fn saved_lists_scan_alike_and_survive_replacement_by_rename() {
    let dir = tempfile::tempdir().unwrap();
    let (path, opened) = saved_spam(dir.path());
    let from_bytes = Blocklist::from_bytes("kw", &std::fs::read(&path).unwrap()).unwrap();
    let text = "free money? 免费赚钱! wire transfer now";
    assert_eq!(found(&opened, text), found(&from_bytes, text));
    assert_eq!(found(&opened, text).len(), 3);
    // A new list renamed over the file: the open list keeps answering from the old inode.
    build(dir.path(), &["something else"], 0.01, true, None)
        .save(&path, &[])
        .unwrap();
    assert_eq!(found(&opened, text).len(), 3);
    // Saving an opened list again writes the same bytes (the index is read back from disk).
    let again = dir.path().join("again.bloom");
    let reopened = Blocklist::open(&path).unwrap();
    reopened.save(&again, &[]).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn a_list_rewritten_in_place_gives_a_checksum_error_on_a_hit_never_a_wrong_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (path, opened) = saved_spam(dir.path());
    // Rewrite every byte of the index section in place (same inode), as a careless copy would.
    let mut bytes = std::fs::read(&path).unwrap();
    let index = opened
        .directory()
        .unwrap()
        .sections
        .iter()
        .find(|s| s.tag == phishbloom_core::format::tag::KEYWORD_INDEX)
        .copied()
        .unwrap();
    let block_bytes =
        (index.offset as usize + index.len as usize - 40)..(index.offset + index.len) as usize;
    for b in &mut bytes[block_bytes] {
        *b ^= 0x20;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
        .unwrap();
    let mut scanner = Scanner::new(&opened, ScanOptions::default()).unwrap();
    // A clean text makes no read: still answered.
    assert_eq!(scanner.scan("nothing to see here").unwrap().hits, 0);
    // A hit reads the changed block: an error naming the file, not an answer.
    let error = scanner
        .scan("free money and 免费赚钱 and viagra")
        .unwrap_err();
    assert!(matches!(error, Error::ChecksumMismatch { .. }), "{error}");
    assert!(error.to_string().contains("kw.bloom"), "{error}");
}

#[test]
fn scan_refuses_lists_that_are_not_keyword_lists() {
    let entries = vec![phishbloom_url::Entry::parse(b"evil.com").unwrap()];
    let set = phishbloom_core::EntrySet::uncategorized(entries, "phishing");
    let list = Blocklist::from_entries(&set, &BuildOptions::default()).unwrap();
    let error = Scanner::new(&list, ScanOptions::default()).err().unwrap();
    assert!(
        matches!(error, phishbloom_core::Error::WrongScheme { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("not keywords"), "{error}");
}

/// A pseudo-word of 4–9 letters from `rng`, with a `q` prefix so that it never equals a
/// keyword word made by [`keyword_word`] (which starts with `z`).
fn clean_word(rng: &mut SplitMix64) -> String {
    let len = 3 + rng.below(6) as usize;
    std::iter::once('q')
        .chain((0..len).map(|_| char::from(b'a' + rng.below(26) as u8)))
        .collect()
}

fn keyword_word(rng: &mut SplitMix64) -> String {
    let len = 3 + rng.below(6) as usize;
    std::iter::once('z')
        .chain((0..len).map(|_| char::from(b'a' + rng.below(26) as u8)))
        .collect()
}

#[test]
fn the_rate_is_per_document_and_verification_removes_false_flags() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64::new(14);
    let keywords: Vec<String> = (0..20_000)
        .map(|i| {
            let words = 1 + i % 3;
            (0..words)
                .map(|_| keyword_word(&mut rng))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = keywords.iter().map(String::as_str).collect();
    // 100 tokens × 3 lengths: P = 300 probes (fewer near each document's end).
    let (per_doc, probes) = (0.05, 300);
    let plain = build(dir.path(), &refs, per_doc, false, Some(probes));
    let verified = build(dir.path(), &refs, per_doc, true, Some(probes));
    let filter = plain.filter().unwrap();
    let per_probe = filter.theoretical_fpp(filter.items() as f64);
    let documents = 4_000;
    let (mut flagged, mut flagged_verified, mut made) = (0u64, 0u64, 0u64);
    let mut expected = 0.0;
    // Without the phrase gate, every recorded length is probed at every position.
    let mut plain_scanner = Scanner::new(&plain, ScanOptions::default())
        .unwrap()
        .without_gate();
    let mut verified_scanner = Scanner::new(&verified, ScanOptions::default()).unwrap();
    for _ in 0..documents {
        let text: Vec<String> = (0..100).map(|_| clean_word(&mut rng)).collect();
        let text = text.join(" ");
        let verdict = plain_scanner.scan(&text).unwrap();
        made += verdict.probes;
        expected += 1.0 - (1.0 - per_probe).powf(verdict.probes as f64);
        flagged += u64::from(verdict.spam);
        flagged_verified += u64::from(verified_scanner.scan(&text).unwrap().spam);
    }
    // 100 + 99 + 98 probes per document.
    assert_eq!(made, documents * 297);
    // The per-document target holds: about 5 % of documents flagged, within 5 σ (binomial).
    let sigma = (expected * (1.0 - expected / documents as f64)).sqrt();
    assert!(
        (flagged as f64 - expected).abs() <= 5.0 * sigma + 1.0,
        "{flagged} flagged, {expected:.1} expected (σ {sigma:.1})"
    );
    assert!(expected / (documents as f64) <= per_doc, "{expected}");
    assert_eq!(flagged_verified, 0);
}

/// `list` as a file written before the phrase gate existed: the same sections but that one,
/// read back from bytes.
fn without_gate_section(list: &Blocklist) -> Blocklist {
    let Engine::Keywords(engine) = list.engine() else {
        panic!("not a keyword list");
    };
    let stripped = Blocklist::from_parts(
        list.kind(),
        list.meta().clone(),
        Engine::Keywords(engine.clone().with_gate(None)),
    );
    let bytes = stripped.to_bytes();
    let directory =
        phishbloom_core::format::read_directory(Path::new("old.bloom"), &bytes.as_slice()).unwrap();
    assert!(directory.find(tag::PHRASE_GATE, 0).is_none());
    Blocklist::from_bytes("old.bloom", &bytes).unwrap()
}

/// A random phrase of 1–3 words, each Latin (one token) or two to four Han characters (a token
/// each), from small vocabularies so that documents repeat keywords' words and prefixes.
fn mixed_phrase(rng: &mut SplitMix64) -> String {
    let words = 1 + rng.below(3) as usize;
    (0..words)
        .map(|_| {
            if rng.below(10) < 7 {
                let len = 2 + rng.below(3) as usize;
                (0..len)
                    .map(|_| char::from_u32(0x4E00 + rng.below(40) as u32).unwrap_or('一'))
                    .collect::<String>()
            } else {
                ["free", "money", "win", "now", "cash", "prize"][rng.below(6) as usize].to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_phrase_gate_changes_no_answer_and_old_files_still_scan() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..4u64 {
        let mut rng = SplitMix64::new(23 + seed);
        let keywords: Vec<String> = (0..300).map(|_| mixed_phrase(&mut rng)).collect();
        let refs: Vec<&str> = keywords.iter().map(String::as_str).collect();
        let verify = seed % 2 == 0;
        let path = dir.path().join(format!("kw{seed}.bloom"));
        build(dir.path(), &refs, 0.01, verify, None)
            .save(&path, &[])
            .unwrap();
        let gated = Blocklist::open(&path).unwrap();
        let Engine::Keywords(engine) = gated.engine() else {
            panic!("not a keyword list");
        };
        assert!(engine.gate().is_some(), "the saved list keeps its gate");
        let old = without_gate_section(&gated);
        let mut with = Scanner::new(&gated, ScanOptions::default()).unwrap();
        let mut without = Scanner::new(&gated, ScanOptions::default())
            .unwrap()
            .without_gate();
        let mut old_scanner = Scanner::new(&old, ScanOptions::default()).unwrap();
        let (mut probes_with, mut probes_without) = (0, 0);
        for _ in 0..50 {
            // Keywords and other phrases of the same vocabulary, in any spacing.
            let text: Vec<String> = (0..40)
                .map(|i| match rng.below(4) {
                    0 => keywords[rng.below(keywords.len() as u64) as usize].clone(),
                    _ => mixed_phrase(&mut rng) + if i % 5 == 0 { "。" } else { "" },
                })
                .collect();
            let text = text.join(if rng.below(2) == 0 { " " } else { "" });
            let (a, b, c) = (
                with.scan(&text).unwrap(),
                without.scan(&text).unwrap(),
                old_scanner.scan(&text).unwrap(),
            );
            assert!(a.hits > 0, "{text}");
            probes_with += a.probes;
            probes_without += b.probes;
            assert_eq!(c, b, "the old file scans as the list without its gate");
            let same = |v: &DocumentVerdict| (v.spam, v.hits, v.matches.clone(), v.tokens);
            assert_eq!(same(&a), same(&b), "{text}");
            // Gating skips probes only: it can drop a false positive, never add one.
            assert!(a.unconfirmed <= b.unconfirmed);
        }
        assert!(
            probes_with < probes_without,
            "{probes_with} probes with the gate, {probes_without} without"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// No false negatives: every keyword inserted anywhere into random text is found, whatever
    /// the words, case, separators and scripts around it.
    #[test]
    fn every_keyword_inserted_into_random_text_is_found(
        keywords in prop::collection::vec(
            prop::collection::vec(
                prop_oneof![
                    "[a-zA-Z]{1,8}",
                    "[\u{4e00}-\u{4e80}]{1,3}",
                    "[0-9]{1,4}",
                    "[а-яА-Я]{1,6}",
                ],
                1..4,
            ),
            1..20,
        ),
        filler in prop::collection::vec("[a-z\u{4e00}-\u{4e10} ,.!\n]{0,12}", 1..20),
        seps in prop::collection::vec(prop_oneof![Just(" "), Just("\n"), Just(" , "), Just("\t-\t")], 4),
        verify in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = keywords.iter().map(|words| words.join(" ")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let list = build(dir.path(), &refs, 0.01, verify, None);
        let mut scanner = Scanner::new(&list, ScanOptions::default()).unwrap();
        let mut ungated = Scanner::new(&list, ScanOptions::default()).unwrap().without_gate();
        for (i, words) in keywords.iter().enumerate() {
            // The keyword's words joined by any separators, uppercased half the time, between
            // separators and random filler.
            let mut inserted = words.join(seps[i % seps.len()]);
            if i % 2 == 1 {
                inserted = inserted.to_uppercase();
            }
            let text = format!(
                "{}{}{}{}{}",
                filler[i % filler.len()],
                seps[(i + 1) % seps.len()],
                inserted,
                seps[(i + 2) % seps.len()],
                filler[(i + 1) % filler.len()],
            );
            let expected = phishbloom_text::tokens::tokenize(&lines[i]).join(" ");
            let verdict = scanner.scan(&text).unwrap();
            prop_assert_eq!(&verdict.matches, &ungated.scan(&text).unwrap().matches);
            prop_assert!(
                verdict.matches.iter().any(|m| m.keyword == expected),
                "{:?} not found in {:?}: {:?}", expected, text, verdict.matches
            );
        }
    }
}
