//! Fuzz target: any byte sequence opened as a blocklist file gives an error or a blocklist that
//! answers queries and describes itself — never a panic, never an allocation beyond the input's
//! length. Run with `fuzz/run SECONDS` (all targets) or `cargo +nightly fuzz run open_blocklist`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_core::engine::Scratch;
use phishbloom_core::format::FORMAT_VERSION;
use phishbloom_core::Blocklist;

fuzz_target!(|data: &[u8]| {
    if let Ok(list) = Blocklist::from_bytes("fuzz-input", data) {
        let mut scratch = Scratch::default();
        let _ = list.check(b"http://www.evil.com/login?x=1", &mut scratch);
        let _ = list.check(b"evil.com", &mut scratch);
        let _ = list.describe();
        // Every field has one encoding and sections one order, so a file of the current version
        // and known sections that opens re-encodes to itself byte for byte (an older version is
        // read and written as the current one).
        let current = data.get(8..12) == Some(&FORMAT_VERSION.to_le_bytes()[..]);
        let optional = list.directory().is_some_and(|d| {
            d.sections
                .iter()
                .any(|s| s.tag >= phishbloom_core::format::OPTIONAL_TAGS)
        });
        if current && !optional {
            assert_eq!(
                list.to_bytes(),
                data,
                "a file that opens must re-encode to itself"
            );
        }
    }
});
