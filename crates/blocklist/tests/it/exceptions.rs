//! Exceptions and categories against a brute-force model: for random block lists, exception
//! lists and URLs, a verified blocklist answers exactly as "the most specific matching entry
//! wins, the exception on a tie" says — so an exception never turns a URL that a more specific
//! block entry lists into `allowed`, and never makes a URL that no block entry matches `listed`.

use phishbloom_core::engine::expression_hash;
use phishbloom_core::engine::{fingerprint, Scratch};
use phishbloom_core::resolve::Status;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_url::{canonicalize, CanonicalUrl, Entry};
use proptest::prelude::*;

use crate::common;
use common::{entry_line, entry_list, url_line};

/// The most specific of `entries` that matches `url`: (host length, path length).
fn most_specific(entries: &[Entry], url: &CanonicalUrl) -> Option<(usize, usize)> {
    url.expressions()
        .filter(|e| entries.iter().any(|entry| entry.key() == *e))
        .map(|e| (e.host.len(), e.path.len()))
        .max()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn verdicts_follow_the_most_specific_entry(
        block in prop::collection::vec(entry_line(), 1..12),
        allow in prop::collection::vec(entry_line(), 0..6),
        urls in prop::collection::vec(url_line(), 1..30),
        kind in prop::sample::select(vec![Kind::Blocked, Kind::Classic, Kind::Cabf]),
    ) {
        let mut set = EntrySet::uncategorized(entry_list(&block), "block");
        set.exceptions = entry_list(&allow);
        let options = BuildOptions { kind, fpp: 0.3, verify: true, ..BuildOptions::default() };
        let list = Blocklist::from_entries(&set, &options).unwrap();
        let list = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        let mut scratch = Scratch::default();
        for raw in urls.iter().chain(&block) {
            let url = canonicalize(raw.as_bytes()).unwrap();
            let blocked = most_specific(&set.entries, &url);
            let allowed = most_specific(&set.exceptions, &url);
            let want = match (blocked, allowed) {
                (None, _) => Status::Clean,
                (Some(b), Some(a)) if a >= b => Status::Allowed,
                (Some(_), _) => Status::Listed,
            };
            let got = list.check_url(&url, &mut scratch);
            prop_assert_eq!(got.status, want, "{}", raw);
            if let Some(hit) = &got.hit {
                // The reported entry is the most specific block entry.
                let spec = hit.expression.split_once('/').map_or(
                    (hit.expression.len(), 0),
                    |(host, path)| (host.len(), path.len() + 1),
                );
                prop_assert_eq!(Some(spec), blocked, "{}", raw);
            }
        }
    }
}

#[test]
fn categories_name_the_entrys_own_lists() {
    let mut set = EntrySet {
        categories: vec!["phishing".into(), "gambling".into()],
        ..EntrySet::default()
    };
    for (line, ids) in [
        ("evil.com", vec![0]),
        ("casino.com", vec![1]),
        ("both.com", vec![0, 1]),
    ] {
        set.entries.push(Entry::parse(line.as_bytes()).unwrap());
        set.membership.push(ids.into());
    }
    let mut scratch = Scratch::default();
    for verify in [true, false] {
        let options = BuildOptions {
            verify,
            ..BuildOptions::default()
        };
        let mut list = Blocklist::from_entries(&set, &options).unwrap();
        let names = |list: &Blocklist, url: &str, scratch: &mut Scratch| {
            let verdict = list.check(url.as_bytes(), scratch);
            (verdict.status, verdict.categories, verdict.categories_exact)
        };
        if verify {
            assert_eq!(
                names(&list, "http://a.casino.com/x", &mut scratch),
                (Status::Listed, vec!["gambling".to_string()], true)
            );
            assert_eq!(
                names(&list, "both.com", &mut scratch).1,
                ["gambling", "phishing"]
            );
        } else {
            assert_eq!(
                names(&list, "http://a.casino.com/x", &mut scratch),
                (
                    Status::Listed,
                    vec!["gambling".to_string(), "phishing".to_string()],
                    false
                )
            );
        }
        // Only phishing: the gambling entry is not an answer any more (with the table, exactly).
        list.keep_categories(&["phishing".to_string()], "list".as_ref())
            .unwrap();
        let expected = if verify {
            Status::Clean
        } else {
            Status::Listed
        };
        assert_eq!(names(&list, "casino.com", &mut scratch).0, expected);
        assert_eq!(names(&list, "evil.com", &mut scratch).0, Status::Listed);
        let error = list
            .keep_categories(&["adult".to_string()], "list".as_ref())
            .unwrap_err();
        assert!(error.to_string().contains("phishing, gambling"), "{error}");
    }
}

#[test]
fn added_entries_are_listed_with_their_category_and_survive_a_save() {
    let entries = vec![Entry::parse(b"evil.com").unwrap()];
    let set = EntrySet::uncategorized(entries, "phishing");
    for verify in [true, false] {
        let options = BuildOptions {
            verify,
            name: "phishing".into(),
            // Room to add: a list sized for exactly its entries is full.
            capacity: Some(16),
            ..BuildOptions::default()
        };
        let mut list = Blocklist::from_entries(&set, &options).unwrap();
        let before = list.meta().clone();
        let change = list
            .add(
                &[b"casino.example", b"evil.com", b"casino.example"],
                Some("gambling"),
            )
            .unwrap();
        assert_eq!(change.changed, 1);
        assert_eq!(list.meta().version, before.version + 1);
        assert_eq!(list.meta().entries, 2);
        let list = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        let mut scratch = Scratch::default();
        let verdict = list.check(b"http://www.casino.example/", &mut scratch);
        assert!(verdict.listed());
        if verify {
            assert_eq!(verdict.categories, ["gambling"]);
            assert!(list.meta().exact_count);
            // evil.com is now in both categories.
            assert_eq!(
                list.check(b"evil.com", &mut scratch).categories,
                ["gambling", "phishing"]
            );
            // The set fingerprint is exactly the one of the new set.
            let mut expected = before.fingerprint;
            let casino = Entry::parse(b"casino.example").unwrap();
            expected.add(fingerprint(expression_hash(casino.key())));
            assert_eq!(list.meta().fingerprint, expected);
        } else {
            // evil.com was "maybe present" to the filter alone: the count is approximate now.
            assert!(!list.meta().exact_count);
        }
        // A blocked filter cannot forget: without a verification section it cannot remove; with
        // one, the section stops confirming the entry, which then answers clean.
        let mut again = Blocklist::from_bytes("mem", &list.to_bytes()).unwrap();
        let removed = again.remove(&[b"evil.com"], None);
        if verify {
            assert_eq!(removed.unwrap().changed, 1);
            assert!(!again.check(b"http://evil.com/", &mut scratch).listed());
            let mut expected = list.meta().fingerprint;
            let evil = Entry::parse(b"evil.com").unwrap();
            expected.remove(fingerprint(expression_hash(evil.key())));
            assert_eq!(again.meta().fingerprint, expected);
        } else {
            assert!(matches!(
                removed,
                Err(phishbloom_core::Error::CannotChange { .. })
            ));
        }
    }
}
