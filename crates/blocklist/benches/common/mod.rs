//! The list and query stream shared by the matchers bench and the `url_stages` profiling
//! example: UT1 `phishing` and `malware` entries, and the dataset's URLs plus URLs below list
//! entries plus random URLs (read from `../shared/data` when present, else generated).

// Each includer uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;

use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_blocklist::source::{read_list, Input, LabelFilter, ListOptions};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, Kind};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::Entry;

/// Query URLs in the stream: the dataset's and the list's URLs, topped up with random ones.
pub const STREAM_LINES: usize = 100_000;

/// `shared/data` seen from this crate (cargo runs benches in the crate directory).
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")
}

/// The list: UT1 phishing + malware entries, or 40,000 generated ones.
pub fn list() -> Vec<Entry> {
    let ut1 = data_dir().join("ut1");
    if ut1.join("phishing/urls").is_file() {
        let sources = ["phishing", "malware"].map(|c| EntrySource::Ut1(ut1.join(c)));
        return read_entries(&sources).expect("UT1 lists").0.entries;
    }
    let mut rng = SplitMix64::new(1);
    (0..40_000)
        .map(|i| {
            Entry::parse(format!("h{}.example{}.com/p{i}", rng.below(1000), i % 97).as_bytes())
                .expect("entry")
        })
        .collect()
}

/// The query stream as raw lines: dataset URLs and URLs below list entries, shuffled.
pub fn stream(list: &[Entry]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let dataset = data_dir().join("dataset.csv");
    if dataset.is_file() {
        let options = ListOptions {
            label: LabelFilter::All,
            scheme: KeyScheme::Exact,
            ..ListOptions::default()
        };
        let (urls, _) = read_list(&Input::Path(dataset), &options, &mut |_| {}).expect("dataset");
        lines.extend(urls.iter().map(<[u8]>::to_vec));
    }
    lines.extend(
        list.iter()
            .map(|e| format!("http://www.{}/index.html?id=3", e.to_key_string()).into_bytes()),
    );
    let mut rng = SplitMix64::new(7);
    while lines.len() < STREAM_LINES {
        lines.push(format!("http://{}.example.net/a/b/c.html", rng.next_u64()).into_bytes());
    }
    for i in (1..lines.len()).rev() {
        lines.swap(i, rng.below(i as u64 + 1) as usize);
    }
    lines
}

/// A blocklist of `kind` over `list` with the default options otherwise.
pub fn build(list: &[Entry], kind: Kind, verify: bool) -> Blocklist {
    let options = BuildOptions {
        kind,
        verify,
        ..BuildOptions::default()
    };
    let set = EntrySet::uncategorized(list.to_vec(), "bench");
    Blocklist::from_entries(&set, &options).expect("blocklist")
}
