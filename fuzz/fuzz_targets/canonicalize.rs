//! Fuzz target for URL canonicalization: arbitrary bytes must never panic, and a successful canonicalization must be idempotent and ASCII.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_url::{canonicalize, Entry};

fuzz_target!(|data: &[u8]| {
    let Ok(first) = canonicalize(data) else {
        return;
    };
    assert!(first.as_str().is_ascii(), "non-ASCII output: {first}");
    let second = canonicalize(first.as_str().as_bytes());
    assert_eq!(second.as_ref(), Ok(&first), "not idempotent");
    // Expression enumeration stays within its documented bounds.
    let count = first.expressions().count();
    assert_eq!(count, first.expression_count());
    assert!(count <= phishbloom_url::MAX_HOST_SUFFIXES * (1 + phishbloom_url::MAX_PATH_PREFIXES));
    // Entry parsing of the same bytes never panics either.
    let _ = Entry::parse(data);
});
