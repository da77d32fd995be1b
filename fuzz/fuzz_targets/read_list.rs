//! Fuzz target for the list readers: any bytes read as a CSV (with a header, key column by name,
//! rows selected by label) or as plain lines, then every key parsed as a blocklist entry — an
//! error or a summary, never a panic. The first byte chooses CSV or lines.

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_blocklist::source::{read_list_from, ListOptions};
use phishbloom_core::keys::KeyScheme;
use phishbloom_url::Entry;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let options = ListOptions {
        scheme: if selector & 2 == 0 {
            KeyScheme::Exact
        } else {
            KeyScheme::Url
        },
        ..ListOptions::default()
    };
    let reader = Box::new(std::io::Cursor::new(rest.to_vec()));
    let csv = selector & 1 == 1;
    if let Ok((keys, summary)) = read_list_from(reader, "fuzz".as_ref(), csv, &options, &mut |_| {})
    {
        assert!(summary.selected >= keys.len() as u64);
        for key in keys.iter() {
            let _ = Entry::parse(key);
        }
    }
});
