//! One redis-server on loopback: a UT1-built list pushed and checked through Redis with the local
//! file's verdicts and false-positive rate; categories, exceptions and the category filter
//! answered as the file answers them, for URL entries and whole keys; `add` making new keys
//! listed, with the bits pulled back; and every failure a clear error, never a clean verdict.

use crate::common;

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::engine::exact::ExactMatcher;
use phishbloom_core::engine::{expression_hash, probes::UrlProbes};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::BuildOptions;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, KeyList};
use phishbloom_filter::{Blocked, KeyHash};
use phishbloom_redis::add::add;
use phishbloom_redis::info::{info, pull};
use phishbloom_redis::layout::Keys;
use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{Error, RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisServer;
use phishbloom_url::Entry;

use common::{build, lists, local_verdicts, push_file, remote_verdicts, truly_listed};

#[test]
fn a_ut1_list_in_redis_answers_like_the_file_and_has_its_false_positive_rate() {
    let dir = tempfile::tempdir().unwrap();
    let lists = lists();
    // A high target (5 % per URL) so that the held-out URLs show hundreds of false positives.
    let (list, path) = build(&lists.entries, 0.05, false, dir.path(), "ut1-phishing");
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(
        &target,
        "ut1-phishing",
        &list,
        &path,
        &PushOptions::default(),
    );
    let mut remote = RedisBlocklist::open(&target, "ut1-phishing").unwrap();
    assert_eq!(remote.meta().list, *list.meta());

    // Every entry is listed through Redis, by the entry it is.
    let entry_lines: Vec<String> = lists.entries.iter().map(Entry::to_key_string).collect();
    let items: Vec<&[u8]> = entry_lines.iter().map(|l| l.as_bytes()).collect();
    let verdicts = remote_verdicts(&mut remote, &items, 1000);
    assert_eq!(verdicts.len(), items.len());
    let missed = verdicts.iter().filter(|v| !v.listed()).count();
    assert_eq!(
        missed,
        0,
        "{missed} of {} entries not listed ({})",
        items.len(),
        lists.source
    );
    assert_eq!(verdicts, local_verdicts(&list, &items));

    // Held-out URLs: the same verdicts, hit for hit, as the local file.
    let held_out: Vec<&[u8]> = lists.held_out.iter().map(Vec::as_slice).collect();
    let remote_answers = remote_verdicts(&mut remote, &held_out, 1000);
    assert_eq!(remote_answers, local_verdicts(&list, &held_out));

    // And the false-positive rate the filter's bits predict: URL i with E_i probes is a false
    // positive with p_i = 1 − (1 − f)^E_i; the count is a sum of Bernoulli(p_i), so it lies
    // within 4.5 standard deviations of Σ p_i (a 1-in-150,000 miss for a correct filter).
    let exact = ExactMatcher::new(&lists.entries);
    let f = list.filter().unwrap().expected_fpp();
    let (mut expected, mut variance, mut observed, mut queries) = (0.0, 0.0, 0u64, 0u64);
    let mut probes = UrlProbes::default();
    for (item, verdict) in held_out.iter().zip(&remote_answers) {
        let Ok(url) = phishbloom_url::canonicalize(item) else {
            continue;
        };
        if truly_listed(&exact, item) {
            continue;
        }
        probes.compute(&url);
        // The top label's probe (Redis is asked for every expression) stands only for the
        // list's own single-label domains, an exact set: it adds no false positive.
        let independent = (0..probes.hashes().len())
            .filter(|&i| {
                probes
                    .expression(&url, i)
                    .is_some_and(|e| !phishbloom_url::is_top_label(url.host(), e.host))
            })
            .count();
        let p = 1.0 - (1.0 - f).powi(independent as i32);
        expected += p;
        variance += p * (1.0 - p);
        queries += 1;
        observed += u64::from(verdict.listed());
    }
    let tolerance = 4.5 * variance.sqrt() + 1.0;
    assert!(queries > 5000, "{queries} held-out URLs");
    assert!(
        (observed as f64 - expected).abs() <= tolerance,
        "{observed} false positives in {queries} held-out URLs, expected {expected:.1} ± {tolerance:.1} ({})",
        lists.source
    );
}

#[test]
fn add_makes_a_new_key_listed_and_the_bits_come_back_to_the_local_filter() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (0..3000)
        .map(|i| Entry::parse(format!("host{i}.example/path{i}").as_bytes()).unwrap())
        .collect();
    // With verification: the added key is confirmed by the set of added keys.
    let (list, path) = build(&entries, 0.01, true, dir.path(), "live");
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(
        &target,
        "live",
        &list,
        &path,
        &PushOptions {
            chunk_bytes: 1024,
            grace_secs: 60,
            force: false,
        },
    );
    let mut remote = RedisBlocklist::open(&target, "live").unwrap();
    let query: &[u8] = b"HTTP://WWW.Brand-New-Phish.example:80/login/step2?id=1";
    assert!(!remote.check(query).unwrap().listed());

    let added = add(
        &mut target.connect().unwrap(),
        "live",
        &[b"brand-new-phish.example/login"],
        None,
    )
    .unwrap();
    assert_eq!((added.keys, added.version), (1, remote.version()));
    assert!(added.new_bits > 0);
    let verdict = remote.check(query).unwrap();
    assert!(verdict.listed());
    let hit = verdict.hit.unwrap();
    assert_eq!(
        (hit.expression.as_str(), hit.kind),
        ("brand-new-phish.example/login", "url")
    );
    assert!(!remote
        .check(b"brand-new-phish.example/other")
        .unwrap()
        .listed());

    // The bits in Redis are the file's plus exactly the new key's, at the places the local
    // layout puts them.
    let hash = expression_hash(
        Entry::parse(b"brand-new-phish.example/login")
            .unwrap()
            .key(),
    );
    let (meta, pulled) = pull(&mut target.connect().unwrap(), "live").unwrap();
    assert_eq!(meta.version, remote.version());
    let local = list.filter().unwrap();
    assert!(pulled.contains_hash(hash));
    assert!(!local.contains_hash(hash));
    let mut expected = local.bit_bytes().to_vec();
    let block = Blocked::block_index(local.num_bits(), hash);
    Blocked::block_bits(local.num_hashes(), hash, |bit| {
        expected[block * 64 + bit as usize / 8] |= 1 << (bit % 8);
    });
    assert_eq!(pulled.bit_bytes(), &expected[..]);

    // Checksums were kept up to date: info verifies every chunk.
    let report = info(&mut target.connect().unwrap(), "live").unwrap();
    assert_eq!(report.added, 1);
    assert_eq!(report.chunks_verified, meta.chunking.chunks());
    assert!(report.chunks_verified > 1);
    assert_eq!(report.verification_verified, 3000);

    // Adding the same key again sets no bit.
    let again = add(
        &mut target.connect().unwrap(),
        "live",
        &[b"brand-new-phish.example/login"],
        None,
    )
    .unwrap();
    assert_eq!((again.new_bits, again.already_set), (0, 1));
}

#[test]
fn whole_keys_exact_and_added_through_redis() {
    let dir = tempfile::tempdir().unwrap();
    let mut keys = KeyList::default();
    for i in 0..2000 {
        keys.push(format!("Passw0rd-{i} ").as_bytes());
    }
    let options = BuildOptions {
        fpp: 0.001,
        name: "passwords".into(),
        // Room for the key `add` puts in.
        capacity: Some(2016),
        // A list in Redis has no host gate (keys added through Redis could not be vouched
        // for): the file is compared with its filter alone, as Redis probes it.
        host_gate: false,
        ..BuildOptions::default()
    };
    let path = dir.path().join("passwords.bloom");
    Blocklist::from_keys(
        &[("test".to_string(), keys.clone())],
        KeyScheme::Exact,
        &options,
    )
    .unwrap()
    .save(&path, &[])
    .unwrap();
    let list = Blocklist::open(&path).unwrap();
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(&target, "passwords", &list, &path, &PushOptions::default());
    let mut remote = RedisBlocklist::open(&target, "passwords").unwrap();
    let mut queries: Vec<Vec<u8>> = keys.iter().map(<[u8]>::to_vec).collect();
    queries.extend((0..5000).map(|i| format!("passw0rd-{i} ").into_bytes()));
    queries.push(Vec::new());
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    assert_eq!(
        remote_verdicts(&mut remote, &items, 700),
        local_verdicts(&list, &items)
    );
    assert!(!remote.contains(b"hunter2").unwrap());
    add(
        &mut target.connect().unwrap(),
        "passwords",
        &[b"hunter2"],
        None,
    )
    .unwrap();
    assert!(remote.contains(b"hunter2").unwrap());
    // The one capacity rule of every add path: a list sized for exactly its keys (2,000 pushed
    // with room for 2,016: 15 more fit after hunter2) refuses a new key once full, and writes
    // nothing; a key already there is still answered as unchanged.
    let more: Vec<Vec<u8>> = (0..15).map(|i| format!("more-{i}").into_bytes()).collect();
    let more: Vec<&[u8]> = more.iter().map(Vec::as_slice).collect();
    add(&mut target.connect().unwrap(), "passwords", &more, None).unwrap();
    let error = add(
        &mut target.connect().unwrap(),
        "passwords",
        &[b"one-too-many"],
        None,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            phishbloom_redis::Error::Blocklist(phishbloom_blocklist::Error::Core(
                phishbloom_core::Error::Full { .. }
            ))
        ),
        "{error}"
    );
    assert!(!remote.contains(b"one-too-many").unwrap());
    let again = add(
        &mut target.connect().unwrap(),
        "passwords",
        &[b"hunter2"],
        None,
    )
    .unwrap();
    assert_eq!(again.already_set, 1);
    // Another key is listed exactly when the pulled bits hold it (a false positive at
    // p = 0.001 is possible, and then the local filter has it too).
    let (_, pulled) = pull(&mut target.connect().unwrap(), "passwords").unwrap();
    assert_eq!(
        remote.contains(b"Hunter2").unwrap(),
        pulled.contains_hash(KeyHash::of(b"Hunter2"))
    );
}

#[test]
fn a_replaced_version_is_retried_on_the_new_one_and_expires() {
    let dir = tempfile::tempdir().unwrap();
    let first: Vec<Entry> = (0..500)
        .map(|i| Entry::parse(format!("a{i}.example").as_bytes()).unwrap())
        .collect();
    let second: Vec<Entry> = (0..500)
        .map(|i| Entry::parse(format!("b{i}.example").as_bytes()).unwrap())
        .collect();
    let (list_a, path_a) = build(&first, 0.001, true, dir.path(), "switch");
    let (list_b, path_b) = build(&second, 0.001, true, dir.path(), "switch");
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(&target, "switch", &list_a, &path_a, &PushOptions::default());
    let mut remote = RedisBlocklist::open(&target, "switch").unwrap();
    let v1 = remote.version();
    assert!(remote.contains(b"a1.example").unwrap());
    // Grace 0: the old version's keys are deleted at once, under the reader's feet.
    push_file(
        &target,
        "switch",
        &list_b,
        &path_b,
        &PushOptions {
            grace_secs: 0,
            ..PushOptions::default()
        },
    );
    assert!(!remote.contains(b"a1.example").unwrap());
    assert!(remote.contains(b"b1.example").unwrap());
    assert!(remote.version() > v1);
    let mut conn = server.connection();
    let old: Vec<String> = redis::cmd("KEYS")
        .arg(format!("switch:v{v1}:*"))
        .query(&mut conn)
        .unwrap();
    assert!(old.is_empty(), "{old:?}");
    // With a grace period, the replaced version's keys carry an expiry and the live one's none.
    let v2 = remote.version();
    push_file(
        &target,
        "switch",
        &list_a,
        &path_a,
        &PushOptions {
            grace_secs: 100,
            ..PushOptions::default()
        },
    );
    let keys = Keys::new("switch");
    let ttl = |key: String, conn: &mut redis::Connection| -> i64 {
        redis::cmd("TTL").arg(key).query(conn).unwrap()
    };
    assert!((1..=100).contains(&ttl(keys.chunk(v2, 0), &mut conn)));
    assert!((1..=100).contains(&ttl(keys.meta(v2), &mut conn)));
    let v3 = v2 + 1;
    assert_eq!(ttl(keys.chunk(v3, 0), &mut conn), -1);
    assert_eq!(ttl(keys.meta(v3), &mut conn), -1);
    assert!(remote.contains(b"a1.example").unwrap());
    assert_eq!(remote.version(), v3);
}

#[test]
fn failures_are_clear_errors_never_clean_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (0..4000)
        .map(|i| Entry::parse(format!("bad{i}.example").as_bytes()).unwrap())
        .collect();
    let (list, path) = build(&entries, 0.01, false, dir.path(), "fragile");
    let mut server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    let missing = RedisBlocklist::open(&target, "nothing-here").err().unwrap();
    assert!(matches!(missing, Error::NoList { .. }), "{missing}");
    assert!(missing.to_string().contains("nothing-here:current"));

    push_file(
        &target,
        "fragile",
        &list,
        &path,
        &PushOptions {
            chunk_bytes: 512,
            grace_secs: 60,
            force: false,
        },
    );
    let mut remote = RedisBlocklist::open(&target, "fragile").unwrap();
    let version = remote.version();
    let keys = Keys::new("fragile");
    let chunk_of = |item: &str| {
        let hash = expression_hash(Entry::parse(item.as_bytes()).unwrap().key());
        let block = Blocked::block_index(remote.meta().num_bits, hash) as u64;
        remote.meta().chunking.locate(block).0
    };
    let (victim, shortened, corrupted) = (chunk_of("bad7.example"), chunk_of("bad8.example"), 0);
    let mut conn = server.connection();
    let get = |conn: &mut redis::Connection, chunk: u64| -> Vec<u8> {
        redis::cmd("GET")
            .arg(keys.chunk(version, chunk))
            .query(conn)
            .unwrap()
    };
    let set = |conn: &mut redis::Connection, chunk: u64, bytes: &[u8]| {
        let _: () = redis::cmd("SET")
            .arg(keys.chunk(version, chunk))
            .arg(bytes)
            .query(conn)
            .unwrap();
    };
    // A missing chunk: an error naming it, not a clean verdict for a listed key.
    let saved = get(&mut conn, victim);
    let _: () = redis::cmd("DEL")
        .arg(keys.chunk(version, victim))
        .query(&mut conn)
        .unwrap();
    let error = remote.check(b"bad7.example").unwrap_err();
    assert!(
        matches!(&error, Error::BadChunk { chunk, .. } if *chunk == victim),
        "{error}"
    );
    assert!(error.to_string().contains("missing"), "{error}");
    set(&mut conn, victim, &saved);
    assert!(remote.check(b"bad7.example").unwrap().listed());
    // A short chunk.
    let saved = get(&mut conn, shortened);
    set(&mut conn, shortened, b"x");
    let error = remote.check(b"bad8.example").unwrap_err();
    assert!(error.to_string().contains("shorter"), "{error}");
    set(&mut conn, shortened, &saved);
    // A corrupted chunk fails info's verification, naming the chunk.
    let mut damaged = get(&mut conn, corrupted);
    damaged[5] ^= 0x24;
    set(&mut conn, corrupted, &damaged);
    let error = info(&mut target.connect().unwrap(), "fragile").unwrap_err();
    assert!(
        matches!(&error, Error::ChecksumMismatch { chunk, .. } if *chunk == corrupted),
        "{error}"
    );
    // Metadata gone.
    let _: () = redis::cmd("DEL")
        .arg(keys.meta(version))
        .query(&mut conn)
        .unwrap();
    let error = RedisBlocklist::open(&target, "fragile").err().unwrap();
    assert!(matches!(error, Error::MissingMeta { .. }), "{error}");

    // Redis down: the open reader and a new one both fail, naming the server.
    server.stop();
    let error = remote.check(b"bad1.example").unwrap_err();
    assert!(error.to_string().contains(&server.url()), "{error}");
    let error = RedisBlocklist::open(&target, "fragile").err().unwrap();
    assert!(matches!(error, Error::Connect { .. }), "{error}");
    assert!(
        error.to_string().contains("is redis-server running"),
        "{error}"
    );
}

#[test]
fn only_blocked_xxh3_files_can_be_pushed() {
    let dir = tempfile::tempdir().unwrap();
    let entries = vec![Entry::parse(b"evil.com").unwrap()];
    let options = BuildOptions {
        kind: phishbloom_core::Kind::Classic,
        // A list in Redis has no host gate (keys added through Redis could not be vouched
        // for): the file is compared with its filter alone, as Redis probes it.
        host_gate: false,
        ..BuildOptions::default()
    };
    let path = dir.path().join("classic.bloom");
    Blocklist::from_entries(&EntrySet::uncategorized(entries.clone(), "test"), &options)
        .unwrap()
        .save(&path, &[])
        .unwrap();
    let classic = Blocklist::open(&path).unwrap();
    let error = PushSource::of(&classic, &path).err().unwrap();
    assert!(matches!(error, Error::WrongKind { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("a classic blocklist cannot be pushed"),
        "{error}"
    );
}

/// A push over a live version that received `redis add` keys the file does
/// not hold is refused (naming how many), unless forced; a file that holds them pushes.
#[test]
fn a_push_that_would_drop_added_keys_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (0..200)
        .map(|i| Entry::parse(format!("host{i}.example").as_bytes()).unwrap())
        .collect();
    let (list, path) = build(&entries, 0.01, true, dir.path(), "live");
    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    push_file(&target, "live", &list, &path, &PushOptions::default());
    // Pushing the same file again loses nothing.
    push_file(&target, "live", &list, &path, &PushOptions::default());
    for key in [&b"added-1.example"[..], b"added-2.example"] {
        add(&mut target.connect().unwrap(), "live", &[key], None).unwrap();
    }
    let source = PushSource::of(&list, &path).unwrap();
    let refused = push(
        &mut target.connect().unwrap(),
        "live",
        &source,
        &PushOptions::default(),
    );
    match refused {
        Err(error @ phishbloom_redis::Error::WouldLoseAdds { lost: 2, .. }) => {
            assert!(error.to_string().contains("force the push"), "{error}");
        }
        other => panic!(
            "expected a refusal losing 2 keys, got {:?}",
            other.map(|p| p.meta.version)
        ),
    }
    let mut remote = RedisBlocklist::open(&target, "live").unwrap();
    assert!(remote.check(b"http://added-1.example/").unwrap().listed());

    // A file that holds the added keys pushes.
    let mut with_adds = entries.clone();
    with_adds.push(Entry::parse(b"added-1.example").unwrap());
    with_adds.push(Entry::parse(b"added-2.example").unwrap());
    let (bigger, bigger_path) = build(&with_adds, 0.01, true, dir.path(), "bigger");
    push_file(
        &target,
        "live",
        &bigger,
        &bigger_path,
        &PushOptions::default(),
    );
    add(
        &mut target.connect().unwrap(),
        "live",
        &[&b"added-3.example"[..]],
        None,
    )
    .unwrap();
    // Forced, the old file goes out and the added keys are gone.
    push_file(
        &target,
        "live",
        &list,
        &path,
        &PushOptions {
            force: true,
            ..PushOptions::default()
        },
    );
    let mut remote = RedisBlocklist::open(&target, "live").unwrap();
    assert!(!remote.check(b"http://added-3.example/").unwrap().listed());
}
