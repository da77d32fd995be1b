//! A push of a new version while another thread checks continuously: every batch answers
//! wholly from one version, and none fails.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use phishbloom_core::resolve::Verdict;
use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisServer;
use phishbloom_url::Entry;

use common::{build, local_verdicts};

#[test]
fn checks_during_pushes_never_mix_versions_and_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    // Two lists with disjoint entries and verification, so that each version's verdicts on the
    // queries are exact and differ on every query.
    let entries = |prefix: &str| -> Vec<Entry> {
        (0..3000)
            .map(|i| Entry::parse(format!("{prefix}{i}.example/p").as_bytes()).unwrap())
            .collect()
    };
    let (list_a, path_a) = build(&entries("a"), 0.01, true, dir.path(), "fleet");
    let (list_b, path_b) = build(&entries("b"), 0.01, true, dir.path(), "fleet");
    let queries: Vec<Vec<u8>> = (0..300)
        .flat_map(|i| {
            [
                format!("http://a{i}.example/p/x"),
                format!("b{i}.example/p"),
            ]
        })
        .map(String::into_bytes)
        .collect();
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let answers_a = local_verdicts(&list_a, &items);
    let answers_b = local_verdicts(&list_b, &items);
    assert!(answers_a
        .iter()
        .zip(&answers_b)
        .all(|(a, b)| a.listed() != b.listed()));

    let server = RedisServer::start();
    let target = Target::parse(&server.url()).unwrap();
    // A short grace: readers must follow the pointer, not linger on old keys.
    let options = PushOptions {
        chunk_bytes: 4096,
        grace_secs: 1,
        // Pushes here replace versions other threads add to on purpose.
        force: true,
    };
    let push_one = |list, path: &std::path::Path| {
        let source = PushSource::of(list, path).unwrap();
        push(&mut target.connect().unwrap(), "fleet", &source, &options).unwrap();
    };
    push_one(&list_a, &path_a);

    let stop = Arc::new(AtomicBool::new(false));
    let checker = {
        let (stop, target) = (stop.clone(), target.clone());
        let queries = queries.clone();
        let (answers_a, answers_b) = (answers_a.clone(), answers_b.clone());
        std::thread::spawn(move || {
            let mut remote = RedisBlocklist::open(&target, "fleet").unwrap();
            let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
            let (mut seen_a, mut seen_b, mut versions) = (0u64, 0u64, Vec::new());
            let mut out: Vec<Verdict> = Vec::new();
            while !stop.load(Ordering::Relaxed) || seen_a + seen_b < 20 {
                out.clear();
                remote
                    .check_batch(&items, &mut out)
                    .unwrap_or_else(|e| panic!("a check failed during the pushes: {e}"));
                if out == answers_a {
                    seen_a += 1;
                } else if out == answers_b {
                    seen_b += 1;
                } else {
                    panic!("a batch mixed versions (version {})", remote.version());
                }
                if versions.last() != Some(&remote.version()) {
                    versions.push(remote.version());
                }
            }
            (seen_a, seen_b, versions)
        })
    };
    for round in 0..12 {
        if round % 2 == 0 {
            push_one(&list_b, &path_b);
        } else {
            push_one(&list_a, &path_a);
        }
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    let (seen_a, seen_b, versions) = checker.join().unwrap();
    assert!(seen_a > 0 && seen_b > 0, "A {seen_a}, B {seen_b} batches");
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert!(
        versions.len() >= 3,
        "the checker followed only {versions:?}"
    );
}
