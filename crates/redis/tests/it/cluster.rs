//! A 3-master Redis Cluster on loopback: the chunks of a pushed list land on all three masters,
//! and checks, adds and info answer as on one server.

use crate::common;

use phishbloom_redis::add::add;
use phishbloom_redis::info::info;
use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisCluster;
use phishbloom_url::Entry;

use common::{build, lists, local_verdicts, remote_verdicts};

#[test]
fn a_list_spreads_over_three_masters_and_answers_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let lists = lists();
    let (list, path) = build(&lists.entries, 0.01, true, dir.path(), "shared");
    let cluster = RedisCluster::start(3);
    let target = Target::parse(&cluster.url()).unwrap();
    assert!(target.is_cluster());
    // Chunks of 1 KiB: a UT1-sized filter makes dozens, spread over the slots.
    let options = PushOptions {
        chunk_bytes: 1024,
        ..PushOptions::default()
    };
    let source = PushSource::of(&list, &path).unwrap();
    let pushed = push(&mut target.connect().unwrap(), "shared", &source, &options).unwrap();
    let chunks = pushed.meta.chunking.chunks();
    assert!(chunks >= 12, "{chunks} chunks");

    // Every master holds some of the chunks, and together exactly all of them.
    let mut total = 0;
    for node in cluster.nodes() {
        let mut conn = node.connection();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("shared:v{}:*", pushed.meta.version))
            .query(&mut conn)
            .unwrap();
        let here = keys
            .iter()
            // Chunks of the bit array are `shared:vV:I`; the sections' keys have one more part.
            .filter(|k| {
                k.split(':').count() == 3 && k.rsplit(':').next().unwrap().parse::<u64>().is_ok()
            })
            .count();
        assert!(here > 0, "no chunk on 127.0.0.1:{}", node.port());
        total += here;
    }
    assert_eq!(total as u64, chunks);

    // Same verdicts as the file on every entry and every held-out URL.
    let mut remote = RedisBlocklist::open(&target, "shared").unwrap();
    let lines: Vec<String> = lists.entries.iter().map(Entry::to_key_string).collect();
    let mut items: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    items.extend(lists.held_out.iter().map(Vec::as_slice));
    let answers = remote_verdicts(&mut remote, &items, 2000);
    assert!(answers[..lines.len()].iter().all(|v| v.listed()));
    assert_eq!(answers, local_verdicts(&list, &items));

    // Add and info through the cluster.
    let query: &[u8] = b"http://sub.cluster-added.example/a";
    assert!(!remote.contains(query).unwrap());
    add(
        &mut target.connect().unwrap(),
        "shared",
        &[b"cluster-added.example"],
        None,
    )
    .unwrap();
    assert!(remote.contains(query).unwrap());
    let report = info(&mut target.connect().unwrap(), "shared").unwrap();
    assert_eq!((report.chunks_verified, report.added), (chunks, 1));
}
