//! A compact list in Redis: pushed as its table (no bit array), read whole by each reader,
//! which answers every item as the file does; a new version followed; `add` and `pull`
//! refused with the reason.

use crate::common;

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::{Blocklist, BuildOptions, EntrySet, Kind};
use phishbloom_redis::add::add;
use phishbloom_redis::info::{info, pull};
use phishbloom_redis::push::PushOptions;
use phishbloom_redis::{Error, RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisServer;
use phishbloom_url::Entry;

use common::{lists, local_verdicts, push_file, remote_verdicts};

/// The compact list of `entries`, saved in `dir` as NAME.bloom and opened from there.
fn compact(
    entries: &[Entry],
    dir: &std::path::Path,
    name: &str,
) -> (Blocklist, std::path::PathBuf) {
    let options = BuildOptions {
        kind: Kind::Compact,
        fpp: Kind::Compact.default_fpp(),
        name: name.to_string(),
        ..BuildOptions::default()
    };
    let path = dir.join(format!("{name}.bloom"));
    Blocklist::from_entries(
        &EntrySet::uncategorized(entries.to_vec(), "phishing"),
        &options,
    )
    .unwrap()
    .save(&path, &[])
    .unwrap();
    (Blocklist::open(&path).unwrap(), path)
}

#[test]
fn a_compact_list_in_redis_answers_like_the_file_and_follows_a_new_version() {
    let dir = tempfile::tempdir().unwrap();
    let lists = lists();
    let (list, path) = compact(&lists.entries, dir.path(), "compact");
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(&target, "compact", &list, &path, &PushOptions::default());
    let mut remote = RedisBlocklist::open(&target, "compact").unwrap();
    assert!(remote.meta().is_compact());
    assert_eq!(remote.meta().num_bits, 0);

    let entry_lines: Vec<String> = lists.entries.iter().map(Entry::to_key_string).collect();
    let mut items: Vec<&[u8]> = entry_lines.iter().map(|l| l.as_bytes()).collect();
    items.extend(lists.held_out.iter().map(Vec::as_slice));
    let verdicts = remote_verdicts(&mut remote, &items, 1000);
    assert!(verdicts[..entry_lines.len()].iter().all(|v| v.listed()));
    assert_eq!(verdicts, local_verdicts(&list, &items));

    // `info` reads the table back whole; `add` and `pull` have nothing to work on.
    let mut store = target.connect().unwrap();
    let described = info(&mut store, "compact").unwrap();
    assert_eq!(
        described.compact_prefixes,
        list.resolver().compact().map(|t| t.len())
    );
    assert!(described.filter.is_none());
    let error = add(&mut store, "compact", &[b"new.example"], None).unwrap_err();
    assert!(matches!(error, Error::Compact { .. }), "{error}");
    assert!(error.to_string().contains("cannot take keys"), "{error}");
    let error = pull(&mut store, "compact").err().unwrap();
    assert!(
        error.to_string().contains("cannot give its bits"),
        "{error}"
    );

    // A new version with one more entry: the reader switches at its next batch.
    let mut grown = lists.entries.clone();
    grown.push(Entry::parse(b"brand-new-phish.example").unwrap());
    let (next, next_path) = compact(&grown, dir.path(), "compact-2");
    push_file(
        &target,
        "compact",
        &next,
        &next_path,
        &PushOptions::default(),
    );
    let verdict = remote
        .check(b"http://brand-new-phish.example/login")
        .unwrap();
    assert!(verdict.listed(), "{verdict:?}");
    assert_eq!(remote.version(), 2);
}
