//! Fuzz target: a mutated keyword blocklist with every checksum recomputed (`format::reseal`,
//! as `open_resealed` does), so that mutations reach the keyword sections (phrase lengths, the
//! filter, the keyword index and its blocks); a list that opens scans two short documents,
//! with and without confirmation by the index. Seeds: keyword lists of each layout, with and
//! without an index (`fuzz/run` makes them from the keywords below).
//!
//! Checks: no panic; a list that opens either fails `verify_all` or scans without error; a
//! keyword list refuses `check` (`require_checkable`); confirmed hits are never more than the
//! unconfirmed scan's; the re-encoded list opens.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_core::format::reseal;
use phishbloom_core::scan::{ScanOptions, Scanner};
use phishbloom_core::Blocklist;
use phishbloom_core::keys::KeyScheme;

/// Documents holding the seeds' keywords (`free money`, `act now`, `wire transfer`, `lottery
/// winner`, `viagra`), and one holding none of them.
const DOCUMENTS: [&str; 2] = [
    "Claim your FREE  money now! Act now: wire-transfer the Lottery Winner's fee. Ünïcödé 中文 viagra",
    "Minutes of the meeting: the budget was approved.",
];

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    reseal(&mut bytes);
    let Ok(list) = Blocklist::from_bytes("fuzz-input", &bytes) else {
        return;
    };
    let _ = list.describe();
    if list.meta().scheme != KeyScheme::Keywords {
        return;
    }
    assert!(list.require_checkable().is_err());
    let verified = list.verify_all().is_ok();
    for document in DOCUMENTS {
        let unconfirmed = Scanner::new(
            &list,
            ScanOptions {
                min_hits: 1,
                confirm: false,
            },
        )
        .expect("a keyword list scans")
        .scan(document)
        .expect("no index read without confirmation");
        let mut scanner = Scanner::new(&list, ScanOptions::default()).unwrap();
        match scanner.scan(document) {
            Ok(confirmed) => assert!(confirmed.hits <= unconfirmed.hits),
            Err(error) => assert!(!verified, "a verified list failed a scan: {error}"),
        }
    }
    let again = Blocklist::from_bytes("re-encoded", &list.to_bytes());
    assert!(
        again.is_ok(),
        "a keyword list that opens must re-encode to a file that opens"
    );
});
