//! Fuzz target: any byte sequence read as a delta file — as it is, and with its checksum
//! recomputed so that edits reach every field — gives an error, or a delta that re-encodes to a
//! delta equal to itself and that a small list of each receiving kind either refuses or applies:
//! never a panic, never an allocation beyond the input's length. The seeds (`fuzz/run`) are
//! deltas from these lists, so that edits get past the base check.
//! Run with `fuzz/run SECONDS` (all targets) or `cargo +nightly fuzz run open_delta`.

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use phishbloom_core::delta::{reseal, Delta};
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_url::Entry;

/// A small list of each receiving kind, built once: (kind, verify).
fn receivers() -> &'static Vec<Vec<u8>> {
    static LISTS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let entries = ["evil.com", "bad.org/login", "a.b.example.net/p"]
            .iter()
            .map(|line| Entry::parse(line.as_bytes()).expect("a valid entry"))
            .collect();
        let set = EntrySet::uncategorized(entries, "fuzz");
        [
            (Kind::Cuckoo, true),
            (Kind::Counting, true),
            (Kind::Blocked, true),
            (Kind::Blocked, false),
            (Kind::Compact, false),
        ]
        .into_iter()
        .map(|(kind, verify)| {
            let options = BuildOptions {
                kind,
                verify,
                capacity: Some(64),
                created: 1,
                ..BuildOptions::default()
            };
            Blocklist::from_entries(&set, &options)
                .expect("a small list builds")
                .to_bytes()
        })
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut resealed = data.to_vec();
    reseal(&mut resealed);
    check(data);
    check(&resealed);
});

fn check(data: &[u8]) {
    let Ok(delta) = Delta::from_bytes(Path::new("fuzz-input"), data) else {
        return;
    };
    let again = Delta::from_bytes(Path::new("re-encoded"), &delta.to_bytes())
        .expect("a delta that reads re-encodes to one that reads");
    assert_eq!(again, delta);
    for bytes in receivers() {
        let mut list = Blocklist::from_bytes("receiver", bytes).expect("the receiver opens");
        if list.apply(&delta).is_ok() {
            // What applies can be saved and read again.
            Blocklist::from_bytes("applied", &list.to_bytes()).expect("an applied list reopens");
        }
    }
}
