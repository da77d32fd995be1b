//! The blocklist file, end to end: every kind saved and opened answers as it did; no byte
//! sequence, truncation or bit flip makes `open` panic (each gives its named error); a file
//! rewritten or truncated in place while a `Blocklist` from it is in use changes nothing; the
//! check pipeline keeps input order at any chunk size; and a verified Bloom blocklist answers
//! exactly like the exact matcher.

use phishbloom_blocklist::BlocklistFile;
use std::path::Path;

use phishbloom_blocklist::check::{check_stream, StreamOptions};
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{Matcher, Scratch};
use phishbloom_core::format::reseal;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::printer::Output;
use phishbloom_core::resolve::Verdict;
use phishbloom_core::Error;
use phishbloom_core::{Blocklist, BuildOptions, KeyList, Kind};
use phishbloom_filter::HashStrategy;
use phishbloom_url::canonicalize;
use proptest::prelude::*;

use crate::common;
use common::{entries, entry_line, url_line};

fn options(kind: Kind, fpp: f64, verify: bool) -> BuildOptions {
    BuildOptions {
        kind,
        fpp,
        verify,
        name: "test".into(),
        created: 1_790_000_000,
        ..BuildOptions::default()
    }
}

fn verdicts(list: &Blocklist, queries: &[Vec<u8>]) -> Vec<Verdict> {
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    list.check_batch(&items, &mut Scratch::default(), &mut out);
    out
}

/// One small blocklist of every kind and key scheme.
fn every_kind() -> Vec<Blocklist> {
    let lines: Vec<String> = ["evil.com", "bad.org/login", "a.b.com/x?y=1", "1.2.3.4/p"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let list = entries(&lines);
    let mut keys = KeyList::default();
    for key in ["123456", "Password", "spam@bad.example"] {
        keys.push(key.as_bytes());
    }
    let mut all = Vec::new();
    for kind in Kind::FILTERS {
        for verify in [false, true] {
            all.push(Blocklist::from_entries(&list, &options(kind, 0.01, verify)).unwrap());
        }
    }
    // Growing lists with several layers (a first layer for one entry: the rest add room).
    let many: Vec<String> = (0..12).map(|i| format!("evil{i}.com")).collect();
    for kind in [Kind::Blocked, Kind::Cuckoo, Kind::Counting] {
        let growing = BuildOptions {
            grow: true,
            capacity: Some(1),
            ..options(kind, 0.01, true)
        };
        let list = Blocklist::from_entries(&entries(&many), &growing).unwrap();
        assert!(list.layers().unwrap().layers().len() > 1);
        all.push(list);
    }
    for kind in [Kind::Blocked, Kind::Classic, Kind::Cuckoo, Kind::Counting] {
        for strategy in [HashStrategy::Xxh3, HashStrategy::Sha256] {
            if strategy == HashStrategy::Sha256 && kind.deletes() {
                continue;
            }
            let options = BuildOptions {
                strategy,
                verify: strategy == HashStrategy::Xxh3,
                ..options(kind, 0.001, false)
            };
            let groups = [("passwords".to_string(), keys.clone())];
            all.push(Blocklist::from_keys(&groups, KeyScheme::Exact, &options).unwrap());
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn saved_and_opened_answers_identically_for_every_kind(
        lines in prop::collection::vec(entry_line(), 1..40),
        queries in prop::collection::vec(url_line(), 0..40),
        kind in prop::sample::select(Kind::FILTERS.to_vec()),
        verify in any::<bool>(),
    ) {
        let list = entries(&lines);
        let built = Blocklist::from_entries(&list, &options(kind, 0.05, verify)).unwrap();
        let bytes = built.to_bytes();
        let opened = Blocklist::from_bytes("mem", &bytes).unwrap();
        prop_assert_eq!(opened.kind(), kind);
        prop_assert_eq!(opened.meta(), built.meta());
        // A compact list confirms with its own table, never a verification section.
        prop_assert_eq!(opened.verification().is_some(), verify && kind != Kind::Compact);
        let mut all: Vec<Vec<u8>> = queries.into_iter().map(String::into_bytes).collect();
        all.extend(lines.iter().map(|l| l.clone().into_bytes()));
        prop_assert_eq!(verdicts(&opened, &all), verdicts(&built, &all));
        // Every entry is listed (no false negatives), in both.
        for line in &lines {
            prop_assert!(opened.check(line.as_bytes(), &mut Scratch::default()).listed(), "{}", line);
        }
        // The same blocklist always encodes to the same bytes.
        prop_assert_eq!(opened.to_bytes(), bytes);
    }

    #[test]
    fn a_verified_bloom_blocklist_answers_exactly_like_the_exact_matcher(
        lines in prop::collection::vec(entry_line(), 1..60),
        queries in prop::collection::vec(url_line(), 1..80),
        kind in prop::sample::select(Kind::FILTERS.to_vec()),
    ) {
        let list = entries(&lines);
        // A compact list is the table itself: exact only up to its rate, which a loose list
        // would make high (its own test asks it at its default rate).
        prop_assume!(kind != Kind::Compact);
        // A very loose filter (50 % per URL): most hits must be settled by verification.
        let verified = Blocklist::from_entries(&list, &options(kind, 0.5, true)).unwrap();
        let exact = ExactMatcher::new(&list.entries);
        let mut scratch = Scratch::default();
        for query in queries.iter().chain(&lines) {
            let url = canonicalize(query.as_bytes()).unwrap();
            let want = exact.find(&url, &mut scratch).is_some();
            prop_assert_eq!(verified.find_url(&url, &mut scratch).is_some(), want, "{}", query);
        }
    }

    #[test]
    fn open_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        prop_assert!(Blocklist::from_bytes("junk", &bytes).is_err());
        let mut resealed = bytes.clone();
        if resealed.len() >= 8 {
            resealed[..8].copy_from_slice(&phishbloom_core::format::MAGIC);
        }
        reseal(&mut resealed);
        let _ = Blocklist::from_bytes("junk", &resealed);
    }

    #[test]
    fn resealed_edits_of_valid_files_are_refused_or_answer(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let kinds = every_kind();
        let mut bytes = kinds[which.index(kinds.len())].to_bytes();
        for (at, value) in edits {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        reseal(&mut bytes);
        // Field checks catch what the checksums no longer do; whatever passes must answer.
        if let Ok(list) = Blocklist::from_bytes("edited", &bytes) {
            let _ = list.check(b"http://evil.com/x", &mut Scratch::default());
            let _ = list.describe();
        }
    }

    #[test]
    fn stream_output_keeps_input_order_at_any_chunk_size(
        lines in prop::collection::vec(url_line(), 0..60),
        chunk_bytes in 1usize..300,
        threads in 1usize..4,
        crlf in any::<bool>(),
        input_is_file in any::<bool>(),
    ) {
        let list = every_kind().swap_remove(1);
        let newline = if crlf { "\r\n" } else { "\n" };
        let input: String = lines.iter().map(|l| format!("{l}{newline}")).collect();
        let mut expected = Vec::new();
        let items: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        phishbloom_blocklist::check::answer_lines(&list, items.into_iter(), Output::Tsv, &mut expected);
        let mut out = Vec::new();
        let options = StreamOptions { output: Output::Tsv, threads, chunk_bytes, input_is_file };
        let input = std::io::Cursor::new(input.into_bytes());
        let stats = check_stream(&list, input, Path::new("in"), &mut out, &options).unwrap();
        prop_assert_eq!(stats.lines, lines.len() as u64);
        prop_assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(expected).unwrap());
    }
}

#[test]
fn every_truncation_and_bit_flip_of_every_kind_is_its_named_error() {
    for list in every_kind() {
        let bytes = list.to_bytes();
        Blocklist::from_bytes("ok", &bytes).unwrap();
        for len in 0..bytes.len() {
            let error = Blocklist::from_bytes("cut", &bytes[..len]).err();
            assert!(
                matches!(error, Some(Error::Truncated { .. })),
                "{} cut to {len}: {error:?}",
                list.kind()
            );
        }
        // Every bit of the small files; the bit array of the larger ones is sampled.
        let step = (bytes.len() / 4096).max(1);
        for at in (0..bytes.len()).step_by(step) {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                let error = Blocklist::from_bytes("flipped", &flipped).err();
                assert!(
                    matches!(
                        error,
                        Some(
                            Error::ChecksumMismatch { .. }
                                | Error::BadPadding { .. }
                                | Error::NotABlocklist { .. }
                                | Error::OldFormat { .. }
                                | Error::Version { .. }
                        )
                    ),
                    "{}: bit {bit} of byte {at}: {error:?}",
                    list.kind()
                );
            }
        }
    }
}

#[test]
fn a_file_rewritten_or_truncated_in_place_does_not_disturb_an_open_blocklist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.bloom");
    let lines: Vec<String> = (0..2000)
        .map(|i| format!("host{i}.example.com/p"))
        .collect();
    let list = entries(&lines);
    let day1 = Blocklist::from_entries(&list, &options(Kind::Blocked, 0.01, true)).unwrap();
    day1.save(&path, &[]).unwrap();
    let open = Blocklist::open(&path).unwrap();
    let queries: Vec<Vec<u8>> = lines
        .iter()
        .map(|l| format!("http://www.{l}/deeper").into_bytes())
        .chain((0..2000).map(|i| format!("http://other{i}.example.net/").into_bytes()))
        .collect();
    let before = verdicts(&open, &queries);
    assert!(before[..2000].iter().all(|v| v.listed()));

    // In place, the way `cp` or a careless writer does it: truncate, then rewrite other bytes.
    let other: Vec<String> = (0..2000).map(|i| format!("else{i}.example.org")).collect();
    let day2 = Blocklist::from_entries(&entries(&other), &options(Kind::Blocked, 0.01, true))
        .unwrap()
        .to_bytes();
    for edit in 0..3 {
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        match edit {
            0 => file.set_len(100).unwrap(),
            1 => file.set_len(0).unwrap(),
            _ => std::os::unix::fs::FileExt::write_all_at(&file, &day2, 0).unwrap(),
        }
        drop(file);
        // No fault, same answers: the blocklist is a copy in memory.
        assert_eq!(verdicts(&open, &queries), before, "after edit {edit}");
        // A reader opening now gets the new file or a clear error, never a mixture.
        match Blocklist::open(&path) {
            Ok(reopened) => assert_eq!(reopened.to_bytes(), day2, "after edit {edit}"),
            Err(error) => assert!(
                matches!(
                    error.core(),
                    Some(Error::Truncated { .. } | Error::TrailingBytes { .. })
                ),
                "{error:?}"
            ),
        }
    }
}

#[test]
fn a_reader_racing_a_writer_in_place_never_gets_a_listed_key_as_clean() {
    // A writer rewrites the file in place over and over, alternating two versions of the list;
    // readers open it concurrently. Every successful open must be one of the two versions, and
    // then answer every key of that version `listed`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.bloom");
    let versions: Vec<(Vec<String>, Vec<u8>)> = (0..2)
        .map(|v| {
            let lines: Vec<String> = (0..3000)
                .map(|i| format!("v{v}-host{i}.example.com"))
                .collect();
            let bytes =
                Blocklist::from_entries(&entries(&lines), &options(Kind::Blocked, 0.01, true))
                    .unwrap()
                    .to_bytes();
            (lines, bytes)
        })
        .collect();
    std::fs::write(&path, &versions[0].1).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                std::os::unix::fs::FileExt::write_all_at(&file, &versions[i % 2].1, 0).unwrap();
                i += 1;
            }
        });
        let (mut opened, mut refused) = (0, 0);
        for _ in 0..300 {
            match Blocklist::open(&path) {
                Ok(list) => {
                    let bytes = list.to_bytes();
                    let (lines, _) = versions
                        .iter()
                        .find(|(_, b)| *b == bytes)
                        .expect("an opened file is one of the versions written");
                    for line in lines.iter().step_by(97) {
                        assert!(list
                            .check(line.as_bytes(), &mut Scratch::default())
                            .listed());
                    }
                    opened += 1;
                }
                Err(error) => {
                    assert!(
                        matches!(error.core(), Some(Error::ChecksumMismatch { .. })),
                        "{error:?}"
                    );
                    refused += 1;
                }
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(opened + refused, 300);
    });
}

#[test]
fn a_version_2_file_is_read_with_its_set_fingerprint_recomputed_or_marked_approximate() {
    for verify in [true, false] {
        let lines: Vec<String> = ["evil.com", "bad.org/login"].map(String::from).to_vec();
        let list = Blocklist::from_entries(&entries(&lines), &options(Kind::Blocked, 0.01, verify))
            .unwrap();
        let mut bytes = list.to_bytes();
        // Format version 2: the header's version field, then every checksum again.
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let mut old_fingerprint = list.meta().fingerprint;
        old_fingerprint.0 ^= 0xdead_beef;
        let meta_at = bytes
            .windows(16)
            .position(|w| w == list.meta().fingerprint.0.to_le_bytes());
        bytes[meta_at.unwrap()..][..16].copy_from_slice(&old_fingerprint.0.to_le_bytes());
        reseal(&mut bytes);
        let opened = Blocklist::from_bytes("v2", &bytes).unwrap();
        assert_eq!(opened.describe().format_version, 2);
        if verify {
            assert_eq!(opened.meta().fingerprint, list.meta().fingerprint);
            assert!(opened.meta().exact_count);
        } else {
            assert!(!opened.meta().exact_count);
        }
        // Written again: version 3.
        assert_eq!(
            Blocklist::from_bytes("v3", &opened.to_bytes())
                .unwrap()
                .describe()
                .format_version,
            3
        );
    }
}
