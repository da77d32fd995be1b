//! A fixed workload for counting the instructions of one split-block query under callgrind,
//! beside `sbbf-rs-safe` and hashing alone (instruction counts repeat exactly on a noisy machine,
//! where times do not).
//!
//! ```text
//! cargo build --release -p phishbloom-filter --example probe_cost
//! for w in split sbbf hash; do for n in 100000 200000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/probe_cost $w $n 2>&1 | grep refs; done; done
//! ```
//! The difference between the two query counts, divided by 100,000, is the cost of one query
//! (setup cancels out); subtract `hash`'s to get the probe's.

use std::hint::black_box;

use phishbloom_filter::SplitBlockBloomFilter;
use xxhash_rust::xxh3::xxh3_64;

/// Members of the filter: a dataset-sized set, so the filter is in L1 as in the peers bench.
const MEMBERS: usize = 10_000;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: probe_cost split|sbbf|hash QUERIES";
    let which = args.next().expect(usage);
    let queries: usize = args.next().and_then(|n| n.parse().ok()).expect(usage);
    let members: Vec<String> = (0..MEMBERS)
        .map(|i| format!("phish{i}.example.com/login"))
        .collect();
    let queries: Vec<String> = (0..queries)
        .map(|i| format!("q{i}.example.org/x/{i}"))
        .collect();
    let hits: usize = match which.as_str() {
        "split" => {
            let mut filter =
                SplitBlockBloomFilter::new(MEMBERS as u64, 0.01).expect("valid parameters");
            for m in &members {
                filter.insert(m);
            }
            queries
                .iter()
                .filter(|q| black_box(&filter).contains(black_box(q)))
                .count()
        }
        "sbbf" => {
            // 11 bits/key: the smallest whole number whose rate is ≤ 1 % (as in the peers bench).
            let mut filter = sbbf_rs_safe::Filter::new(11, MEMBERS);
            for m in &members {
                filter.insert_hash(xxh3_64(m.as_bytes()));
            }
            queries
                .iter()
                .filter(|q| black_box(&filter).contains_hash(xxh3_64(black_box(q).as_bytes())))
                .count()
        }
        "hash" => queries
            .iter()
            .filter(|q| xxh3_64(black_box(q).as_bytes()) & 1 == 1)
            .count(),
        _ => panic!("{usage}"),
    };
    println!("{hits}");
}
