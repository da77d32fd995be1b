//! Fuzz target: a mutated blocklist file with every checksum recomputed (`format::reseal`), so
//! that mutations reach the decoding of every kind and every section (metadata, filter
//! parameters, verification, CaBF) instead of stopping at a checksum. Each either gives an error
//! or a blocklist that answers. Seeds: valid files of every kind (`fuzz/run` makes them).

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_core::engine::Scratch;
use phishbloom_core::format::reseal;
use phishbloom_core::Blocklist;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    reseal(&mut bytes);
    if let Ok(list) = Blocklist::from_bytes("fuzz-input", &bytes) {
        let mut scratch = Scratch::default();
        let _ = list.check(b"http://a.evil.com/login/x?y", &mut scratch);
        let _ = list.check(b"123456", &mut scratch);
        let _ = list.describe();
        let again = Blocklist::from_bytes("re-encoded", &list.to_bytes());
        assert!(
            again.is_ok(),
            "a blocklist that opens must re-encode to a file that opens"
        );
    }
});
