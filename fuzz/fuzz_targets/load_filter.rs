//! Fuzz target: parsing any byte sequence as a filter file returns an error or a working filter,
//! never a panic. Run with `cargo +nightly fuzz run load_filter` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_filter::AnyFilter;

fuzz_target!(|data: &[u8]| {
    if let Ok(filter) = AnyFilter::from_bytes("fuzz-input", data) {
        // A file that passes every check must answer queries without panicking.
        let _ = filter.contains(b"http://example.com/");
        let _ = filter.expected_fpp();
        let _ = filter.estimated_items();
    }
});
