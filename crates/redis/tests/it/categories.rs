//! Categories and exceptions through Redis, on one redis-server on loopback: verdicts, the
//! category filter and added keys decided as the file decides them, for URL entries and whole
//! keys of several categories; damaged category and exception sections are errors naming
//! their keys.

use crate::common;

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::Status;
use phishbloom_core::BuildOptions;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, KeyList};
use phishbloom_redis::add::add;
use phishbloom_redis::info::info;
use phishbloom_redis::layout::{Keys, Section};
use phishbloom_redis::push::PushOptions;
use phishbloom_redis::{Error, RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisServer;
use phishbloom_url::Entry;

use common::{build, local_verdicts, push_file, remote_verdicts};

/// Calls of `command` the server has answered so far (`INFO commandstats`).
fn calls(conn: &mut redis::Connection, command: &str) -> u64 {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(conn).unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    stats
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn categories_exceptions_and_added_keys_decide_as_the_file_does() {
    let dir = tempfile::tempdir().unwrap();
    // Three categories; some entries in two; exceptions over some of them.
    let parse = |line: String| Entry::parse(line.as_bytes()).unwrap();
    let mut set = EntrySet {
        categories: vec!["phishing".into(), "malware".into(), "gambling".into()],
        ..EntrySet::default()
    };
    for i in 0..1500 {
        for (line, ids) in [
            (format!("evil{i}.example"), vec![0]),
            (format!("drop{i}.example/payload"), vec![1]),
            (format!("casino{i}.example"), vec![2]),
            (format!("mixed{i}.example"), vec![0, 1]),
        ] {
            set.entries.push(parse(line));
            set.membership.push(ids.into());
        }
        set.exceptions.push(parse(format!("docs.evil{i}.example")));
        set.exceptions.push(parse(format!("mixed{i}.example/safe")));
    }
    let mut queries: Vec<Vec<u8>> = Vec::new();
    for i in (0..1500).step_by(3) {
        for query in [
            format!("http://www.evil{i}.example/a"),
            format!("https://docs.evil{i}.example/b"),
            format!("drop{i}.example/payload/x.bin"),
            format!("casino{i}.example"),
            format!("http://mixed{i}.example/safe/page"),
            format!("http://mixed{i}.example/unsafe"),
            format!("http://nothing{i}.test/q?x={i}"),
        ] {
            queries.push(query.into_bytes());
        }
    }
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    let mut admin = server.connection();
    for verify in [true, false] {
        let name = if verify { "verified" } else { "unverified" };
        let options = BuildOptions {
            // A high rate, so that false positives (unconfirmed candidates) occur.
            fpp: 0.05,
            verify,
            name: name.into(),
            // Room for the keys `add` puts in.
            capacity: Some(set.entries.len() as u64 + 16),
            // A list in Redis has no host gate (keys added through Redis could not be vouched
            // for): the file is compared with its filter alone, as Redis probes it.
            host_gate: false,
            ..BuildOptions::default()
        };
        let path = dir.path().join(format!("{name}.bloom"));
        Blocklist::from_entries(&set, &options)
            .unwrap()
            .save(&path, &[])
            .unwrap();
        let mut list = Blocklist::open(&path).unwrap();
        push_file(&target, name, &list, &path, &PushOptions::default());
        let mut remote = RedisBlocklist::open(&target, name).unwrap();
        assert_eq!(remote.categories(), list.categories());
        assert_eq!(remote.resolver().exceptions(), list.resolver().exceptions());
        assert_eq!(remote.verification(), list.verification());

        let local = local_verdicts(&list, &items);
        let statuses = |status: Status| local.iter().filter(|v| v.status == status).count();
        // 1,000 exceptions match; without a table, a false positive more specific than one
        // lists the URL instead (as the file does).
        assert!(
            statuses(Status::Allowed) >= 900,
            "{name}: {}",
            statuses(Status::Allowed)
        );
        assert!(statuses(Status::Listed) >= 1500, "{name}");
        let before = calls(&mut admin, "sismember");
        assert_eq!(remote_verdicts(&mut remote, &items, 500), local, "{name}");
        // Nothing was added: the added set is asked only about candidates the table lacks.
        let asked = calls(&mut admin, "sismember") - before;
        if !verify {
            assert_eq!(asked, 0, "{name}: no table, nothing to ask");
        }
        // The entries themselves are all in the table: no second round trip.
        let lines: Vec<String> = set.entries.iter().map(Entry::to_key_string).collect();
        let entries: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        let before = calls(&mut admin, "sismember");
        let answers = remote_verdicts(&mut remote, &entries, 1000);
        assert_eq!(answers, local_verdicts(&list, &entries), "{name}");
        if verify {
            assert!(answers.iter().all(|v| v.categories_exact));
            let extra = calls(&mut admin, "sismember") - before;
            // Only an entry's false-positive probes more specific than it are asked about.
            assert!(extra * 20 < entries.len() as u64, "{name}: {extra} asked");
        }

        // The category filter, kept across a new version.
        list.keep_categories(&["malware".into()], &path).unwrap();
        remote.keep_categories(&["malware".into()]).unwrap();
        let filtered = local_verdicts(&list, &items);
        assert_eq!(remote_verdicts(&mut remote, &items, 500), filtered);
        // With a table only the category's entries count; without one, every entry may be in it.
        let kept = filtered.iter().filter(|v| v.listed()).count();
        if verify {
            // drop*/payload and mixed*/unsafe: 500 queries each.
            assert_eq!(kept, 1000, "{name}");
        } else {
            assert_eq!(kept, statuses(Status::Listed), "{name}");
        }
        let version = remote.version();
        push_file(&target, name, &list, &path, &PushOptions::default());
        assert_eq!(remote_verdicts(&mut remote, &items, 500), filtered);
        assert!(remote.version() > version);
        let error = remote.keep_categories(&["games".into()]).unwrap_err();
        assert!(
            error.to_string().contains("no category `games`")
                && error.to_string().contains("phishing, malware, gambling"),
            "{error}"
        );
    }

    // An added key more specific than a table entry decides over it, with the list's possible
    // categories; one an exception covers is allowed.
    let mut remote = RedisBlocklist::open(&target, "verified").unwrap();
    let deep: &[u8] = b"http://deep.evil4.example/path/x";
    let before = remote.check(deep).unwrap();
    assert_eq!(before.hit.unwrap().expression, "evil4.example");
    assert_eq!(before.categories, ["phishing"]);
    add(
        &mut target.connect().unwrap(),
        "verified",
        &[b"deep.evil4.example/path", b"evil4.example/docs"],
        Some("malware"),
    )
    .unwrap();
    let after = remote.check(deep).unwrap();
    assert_eq!(after.status, Status::Listed);
    assert_eq!(after.hit.unwrap().expression, "deep.evil4.example/path");
    // Added in a named category: the verdict names it exactly, as the local file would.
    assert_eq!(after.categories, ["malware"]);
    assert!(after.categories_exact);
    // A list of several categories needs the category named, as `add` does locally.
    let error = add(
        &mut target.connect().unwrap(),
        "verified",
        &[b"unnamed.evil4.example"],
        None,
    )
    .unwrap_err();
    assert!(
        matches!(error, phishbloom_redis::Error::CategoryNeeded { .. }),
        "{error}"
    );
    let error = add(
        &mut target.connect().unwrap(),
        "verified",
        &[b"unnamed.evil4.example"],
        Some("no-such-category"),
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("no category `no-such-category`"),
        "{error}"
    );
    // docs.evil4.example is an exception, and more specific than evil4.example/docs.
    let allowed = remote.check(b"http://docs.evil4.example/docs").unwrap();
    assert_eq!(allowed.status, Status::Allowed);
    assert_eq!(allowed.exception.unwrap().expression, "docs.evil4.example");
}

#[test]
fn whole_keys_of_several_categories_through_redis() {
    let dir = tempfile::tempdir().unwrap();
    let group = |prefix: &str, range: std::ops::Range<u32>| {
        let mut keys = KeyList::default();
        for i in range {
            keys.push(format!("{prefix}{i}").as_bytes());
        }
        keys
    };
    // Keys 1000..1500 are in both groups.
    let groups = [
        ("leaked".to_string(), group("pw-", 0..1500)),
        ("common".to_string(), group("pw-", 1000..3000)),
    ];
    let mut queries: Vec<Vec<u8>> = (0..4000).map(|i| format!("pw-{i}").into_bytes()).collect();
    queries.extend((0..3000).map(|i| format!("other-{i}").into_bytes()));
    // Listed only when case is folded.
    queries.extend((0..500).map(|i| format!("PW-{i}").into_bytes()));
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    for (verify, scheme) in [(true, KeyScheme::Exact), (false, KeyScheme::Folded)] {
        let name = format!("keys-{verify}");
        let options = BuildOptions {
            fpp: 0.02,
            verify,
            name: name.clone(),
            // A list in Redis has no host gate (keys added through Redis could not be vouched
            // for): the file is compared with its filter alone, as Redis probes it.
            host_gate: false,
            ..BuildOptions::default()
        };
        let path = dir.path().join(format!("{name}.bloom"));
        Blocklist::from_keys(&groups, scheme, &options)
            .unwrap()
            .save(&path, &[])
            .unwrap();
        let list = Blocklist::open(&path).unwrap();
        push_file(&target, &name, &list, &path, &PushOptions::default());
        let mut remote = RedisBlocklist::open(&target, &name).unwrap();
        let local = local_verdicts(&list, &items);
        assert_eq!(remote_verdicts(&mut remote, &items, 700), local, "{name}");
        let both = &local[1200];
        assert_eq!(both.categories, ["common", "leaked"], "{name}");
        assert_eq!(both.categories_exact, verify, "{name}");
        let folded = local[7000..].iter().filter(|v| v.listed()).count();
        assert_eq!(folded, if scheme == KeyScheme::Folded { 500 } else { 0 });
    }
}

#[test]
fn damaged_categories_and_exceptions_are_errors_naming_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let parse = |line: &str| Entry::parse(line.as_bytes()).unwrap();
    let mut set = EntrySet::uncategorized(vec![parse("evil.example"), parse("bad.example")], "x");
    set.exceptions = vec![parse("docs.evil.example"), parse("help.evil.example")];
    let path = dir.path().join("damaged.bloom");
    Blocklist::from_entries(&set, &BuildOptions::default())
        .unwrap()
        .save(&path, &[])
        .unwrap();
    let list = Blocklist::open(&path).unwrap();
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(&target, "damaged", &list, &path, &PushOptions::default());
    let mut remote = RedisBlocklist::open(&target, "damaged").unwrap();
    assert_eq!(
        remote.check(b"http://docs.evil.example/").unwrap().status,
        Status::Allowed
    );
    let version = remote.version();
    let keys = Keys::new("damaged");
    let key = keys.section(version, Section::Exceptions, 0);
    let mut conn = server.connection();
    let bytes: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut conn).unwrap();
    assert_eq!(bytes, b"docs.evil.example\nhelp.evil.example");

    // A changed byte: the chunk's checksum names it.
    let mut damaged = bytes.clone();
    damaged[0] = b'D';
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(&damaged)
        .query(&mut conn)
        .unwrap();
    let error = RedisBlocklist::open(&target, "damaged").err().unwrap();
    assert!(
        matches!(&error, Error::ChecksumMismatch { key: k, .. } if *k == key),
        "{error}"
    );
    assert!(info(&mut target.connect().unwrap(), "damaged").is_err());

    // Bytes that match their (rewritten) checksum but are no exceptions section: named too.
    let swapped: &[u8] = b"help.evil.example\ndocs.evil.example";
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(swapped)
        .query(&mut conn)
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(keys.meta(version))
        .arg("exceptions-sum:0")
        .arg(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(swapped)))
        .query(&mut conn)
        .unwrap();
    let error = RedisBlocklist::open(&target, "damaged").err().unwrap();
    assert!(matches!(error, Error::BadSection { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("damaged:v1:exceptions:*")
            && message.contains("not strictly ascending")
            && message.contains("push it again"),
        "{message}"
    );
    // The reader already open keeps the version it read.
    assert_eq!(
        remote.check(b"http://docs.evil.example/").unwrap().status,
        Status::Allowed
    );

    // A missing categories key.
    let _: () = redis::cmd("DEL")
        .arg(keys.section(version, Section::Categories, 0))
        .query(&mut conn)
        .unwrap();
    let error = RedisBlocklist::open(&target, "damaged").err().unwrap();
    assert!(
        matches!(&error, Error::BadChunk { problem, key, .. } if problem == "missing" && key.contains(":categories:")),
        "{error}"
    );
}

/// A domain entry of a single label lists every host under it through Redis as in the file,
/// with and without a verification table; a list without one probes no top label.
#[test]
fn a_single_label_domain_lists_its_subdomains_through_redis() {
    let dir = tempfile::tempdir().unwrap();
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    let entries: Vec<Entry> = ["intranet", "evil.com"]
        .iter()
        .map(|l| Entry::parse(l.as_bytes()).unwrap())
        .collect();
    for verify in [false, true] {
        let name = format!("tops-{verify}");
        let (list, path) = build(&entries, 0.01, verify, dir.path(), &name);
        push_file(&target, &name, &list, &path, &PushOptions::default());
        let mut remote = RedisBlocklist::open(&target, &name).unwrap();
        let items: [&[u8]; 4] = [
            b"http://a.b.intranet/x",
            b"intranet",
            b"www.evil.com",
            b"ok.org",
        ];
        let remote_answers = remote_verdicts(&mut remote, &items, 10);
        assert_eq!(
            remote_answers,
            local_verdicts(&list, &items),
            "verify={verify}"
        );
        let listed: Vec<bool> = remote_answers.iter().map(|v| v.listed()).collect();
        assert_eq!(listed, [true, true, true, false], "verify={verify}");
    }
}
