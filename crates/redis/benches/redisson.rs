//! phishbloom's Redis scheme against Redisson's, on one local redis-server in the same run.
//!
//! - phishbloom: the blocked layout in chunk keys; a check is one `GETRANGE` of a 64-byte block
//!   (plus one `GET` of the version pointer per batch), probed on the client
//!   ([`RedisBlocklist::check_batch`], the real client path).
//! - Redisson (`RBloomFilter`): the classic layout in one string key; a check is one `EVALSHA`
//!   of a Lua script that runs k `GETBIT`s (all k, as Redisson reads all k bits) — implemented
//!   here, with the same xxh3 double hashing for the positions.
//!
//! For pipeline depths 1 and 64 it prints checks per second (client wall clock) and the server
//! CPU per check: `INFO commandstats` µs of the scheme's commands (`usec_per_call` summed over
//! calls, divided by checks), and the server's whole CPU (`INFO cpu`, user + sys) per check.
//!
//! `--large N` instead builds an N-key blocked filter at p = 10⁻³ (5×10⁸ keys: about 860 MB,
//! beyond a Redis string's 512 MB and so beyond any Redisson key), pushes it, and checks
//! members and non-members through Redis.
//!
//! ```text
//! cargo bench -p phishbloom-redis --bench redisson                  # 10^6 keys, p = 1e-3
//! cargo bench -p phishbloom-redis --bench redisson -- --large 5e8   # needs ~3 GB and minutes
//! ```
//! Options: `--keys N`, `--fpp P`, `--seconds S` (per measurement), `--large N`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::Verdict;
use phishbloom_core::resolve::{Category, Exceptions, Resolver};
use phishbloom_core::sections::{Meta, SetFingerprint};
use phishbloom_core::BuildOptions;
use phishbloom_core::{Blocklist, KeyList};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{double_hashing, math, AnyFilter, BlockedBloomFilter, KeyHash};
use phishbloom_redis::push::{push, PushOptions, PushSource};
use phishbloom_redis::{RedisBlocklist, Target};
use phishbloom_testing::redis_server::RedisServer;

/// Redisson's check: k GETBITs on one key, all of them, 1 if every bit is set.
const REDISSON_SCRIPT: &str = r"
local all = 1
for i = 1, #ARGV do
  if redis.call('GETBIT', KEYS[1], ARGV[i]) == 0 then all = 0 end
end
return all
";

/// Distinct queries cycled through (half members, half not): enough that the client's caches do
/// not flatter either scheme.
const QUERIES: usize = 200_000;

struct Options {
    keys: u64,
    fpp: f64,
    seconds: f64,
    large: Option<u64>,
}

fn parse_options() -> Options {
    let mut options = Options {
        keys: 1_000_000,
        fpp: 1e-3,
        seconds: 3.0,
        large: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = || -> f64 {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{} needs a number", args[i]))
        };
        match args[i].as_str() {
            "--keys" => options.keys = value() as u64,
            "--fpp" => options.fpp = value(),
            "--seconds" => options.seconds = value(),
            "--large" => options.large = Some(value() as u64),
            // `cargo bench` passes `--bench`; anything else is a mistake worth stopping for.
            "--bench" => {
                i += 1;
                continue;
            }
            other => panic!("unknown option {other}; see the file's documentation"),
        }
        i += 2;
    }
    options
}

fn main() {
    let options = parse_options();
    let server = RedisServer::start();
    let version: String = redis::cmd("INFO")
        .arg("server")
        .query::<String>(&mut server.connection())
        .map(|info| field(&info, "redis_version").unwrap_or_default())
        .unwrap_or_default();
    println!("redis-server {version} on {}", server.url());
    match options.large {
        Some(n) => large(&server, n, options.fpp),
        None => compare(&server, &options),
    }
}

/// `name:value` from an INFO text.
fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// Server CPU seconds so far (user + sys).
fn server_cpu(conn: &mut redis::Connection) -> f64 {
    let info: String = redis::cmd("INFO").arg("cpu").query(conn).unwrap();
    ["used_cpu_user", "used_cpu_sys"]
        .iter()
        .map(|f| {
            field(&info, f)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        })
        .sum()
}

/// `INFO commandstats` as command → (calls, usec).
fn command_stats(conn: &mut redis::Connection) -> HashMap<String, (u64, u64)> {
    let info: String = redis::cmd("INFO").arg("commandstats").query(conn).unwrap();
    info.lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let get = |key: &str| {
                rest.split(',')
                    .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                    .and_then(|v| v.parse::<u64>().ok())
            };
            Some((name.to_string(), (get("calls")?, get("usec")?)))
        })
        .collect()
}

struct Measured {
    checks: u64,
    seconds: f64,
    stats_usec: u64,
    cpu: f64,
    listed: u64,
}

/// Runs `batch` over the queries `depth` at a time for `seconds`, with server statistics reset
/// before; `commands` are the commandstats names the scheme's checks cost.
fn measure(
    admin: &mut redis::Connection,
    depth: usize,
    seconds: f64,
    commands: &[&str],
    mut batch: impl FnMut(usize, usize) -> u64,
) -> Measured {
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(admin).unwrap();
    let cpu_before = server_cpu(admin);
    let start = Instant::now();
    let (mut checks, mut listed, mut at) = (0u64, 0u64, 0usize);
    while start.elapsed().as_secs_f64() < seconds {
        if at + depth > QUERIES {
            at = 0;
        }
        listed += batch(at, depth);
        at += depth;
        checks += depth as u64;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = server_cpu(admin) - cpu_before;
    let stats = command_stats(admin);
    let stats_usec = commands
        .iter()
        .map(|c| stats.get(*c).map_or(0, |s| s.1))
        .sum();
    Measured {
        checks,
        seconds: elapsed,
        stats_usec,
        cpu,
        listed,
    }
}

fn compare(server: &RedisServer, options: &Options) {
    let n = options.keys;
    let mut keys = KeyList::default();
    for i in 0..n {
        keys.push(format!("key-{i}").as_bytes());
    }
    let list = push_phishbloom(server, &keys, options.fpp);
    let mut admin = server.connection();
    let redisson = Redisson::load(&mut admin, &keys, n, options.fpp);
    let blocked = list.filter().unwrap();
    println!(
        "n = {n}, p = {}: phishbloom blocked m = {} bits, k = {} ({} chunk keys); Redisson classic m = {} bits, k = {} (one key)",
        options.fpp,
        blocked.num_bits(),
        blocked.num_hashes(),
        blocked.bit_bytes().len().div_ceil(1 << 20),
        redisson.m,
        redisson.k,
    );
    let mut rng = SplitMix64::new(2026);
    let queries: Vec<Vec<u8>> = (0..QUERIES)
        .map(|i| {
            if i % 2 == 0 {
                format!("key-{}", rng.below(n)).into_bytes()
            } else {
                format!("other-{}", rng.next_u64()).into_bytes()
            }
        })
        .collect();
    let items: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let results = measure_depths(server, &mut admin, &redisson, &items, options.seconds);
    print_ratios(&results);
}

/// Builds the blocked list of `keys` at `fpp` and pushes it to `server` as `bench`.
fn push_phishbloom(server: &RedisServer, keys: &KeyList, fpp: f64) -> Blocklist {
    let build = BuildOptions {
        fpp,
        threads: 2,
        name: "bench".into(),
        ..BuildOptions::default()
    };
    let list = Blocklist::from_keys(
        &[("bench".to_string(), keys.clone())],
        KeyScheme::Exact,
        &build,
    )
    .unwrap();
    let target = Target::parse(&server.url()).unwrap();
    let source = PushSource {
        meta: list.meta(),
        filter: list.filter(),
        resolver: list.resolver(),
        file_checksum: None,
        path: PathBuf::from("<memory>"),
    };
    push(
        &mut target.connect().unwrap(),
        "bench",
        &source,
        &PushOptions::default(),
    )
    .unwrap();
    list
}

/// Redisson's filter: the classic layout at the same n and p, in one string key, and the
/// SHA of its check script.
struct Redisson {
    m: u64,
    k: u32,
    sha: String,
}

impl Redisson {
    /// Sets the `redisson` key to the classic filter of `keys` and loads the check script.
    fn load(admin: &mut redis::Connection, keys: &KeyList, n: u64, fpp: f64) -> Self {
        let m = math::optimal_num_bits(n, fpp).unwrap();
        let k = math::optimal_num_hashes(n, m);
        let mut bits = vec![0u8; m.div_ceil(8) as usize];
        for key in keys.iter() {
            double_hashing(KeyHash::of(key), m, k, |p| {
                bits[(p / 8) as usize] |= 0x80 >> (p % 8);
            });
        }
        let _: () = redis::cmd("SET")
            .arg("redisson")
            .arg(&bits)
            .query(admin)
            .unwrap();
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(REDISSON_SCRIPT)
            .query(admin)
            .unwrap();
        Redisson { m, k, sha }
    }
}

/// Both schemes at pipeline depths 1 and 64, printed as they are measured.
fn measure_depths(
    server: &RedisServer,
    admin: &mut redis::Connection,
    redisson: &Redisson,
    items: &[&[u8]],
    seconds: f64,
) -> HashMap<(&'static str, usize), Measured> {
    let target = Target::parse(&server.url()).unwrap();
    let mut remote = RedisBlocklist::open(&target, "bench").unwrap();
    let mut client = server.connection();
    println!(
        "\n{:<11} {:>5} {:>12} {:>22} {:>18} {:>8}",
        "scheme", "depth", "checks/s", "commandstats µs/check", "server CPU µs/check", "listed"
    );
    let mut results = HashMap::new();
    for depth in [1usize, 64] {
        let mut out: Vec<Verdict> = Vec::with_capacity(depth);
        let phish = measure(admin, depth, seconds, &["getrange", "get"], |at, d| {
            out.clear();
            remote.check_batch(&items[at..at + d], &mut out).unwrap();
            out.iter().filter(|v| v.listed()).count() as u64
        });
        let (m, k) = (redisson.m, redisson.k);
        let classic = measure(admin, depth, seconds, &["evalsha"], |at, d| {
            let mut pipe = redis::pipe();
            for item in &items[at..at + d] {
                let call = pipe
                    .cmd("EVALSHA")
                    .arg(&redisson.sha)
                    .arg(1)
                    .arg("redisson");
                double_hashing(KeyHash::of(item), m, k, |p| {
                    call.arg(p);
                });
            }
            let answers: Vec<u8> = pipe.query(&mut client).unwrap();
            answers.iter().map(|&a| u64::from(a)).sum()
        });
        for (name, result) in [("phishbloom", phish), ("redisson", classic)] {
            println!(
                "{name:<11} {depth:>5} {:>12.0} {:>22.3} {:>18.3} {:>7.2}%",
                result.checks as f64 / result.seconds,
                result.stats_usec as f64 / result.checks as f64,
                result.cpu * 1e6 / result.checks as f64,
                100.0 * result.listed as f64 / result.checks as f64
            );
            results.insert((name, depth), result);
        }
    }
    results
}

/// phishbloom's figures as ratios to Redisson's at each depth, beside the targets.
fn print_ratios(results: &HashMap<(&'static str, usize), Measured>) {
    let rate = |name, depth| {
        let r: &Measured = &results[&(name, depth)];
        r.checks as f64 / r.seconds
    };
    let per_check = |name, depth| {
        let r: &Measured = &results[&(name, depth)];
        (
            r.stats_usec as f64 / r.checks as f64,
            r.cpu / r.checks as f64,
        )
    };
    for depth in [1, 64] {
        let (p_stats, p_cpu) = per_check("phishbloom", depth);
        let (r_stats, r_cpu) = per_check("redisson", depth);
        println!(
            "depth {depth:>2}: phishbloom/Redisson checks/s {:.2}x; commandstats µs/check {:.2}x; server CPU/check {:.2}x",
            rate("phishbloom", depth) / rate("redisson", depth),
            p_stats / r_stats,
            p_cpu / r_cpu
        );
    }
    println!("targets at depth 64: checks/s ≥ 2x, server CPU per check ≤ 0.5x");
}

fn large(server: &RedisServer, n: u64, fpp: f64) {
    let (filter, meta) = build_large(n, fpp);
    let mut admin = server.connection();
    // A Redisson filter of this size is one string of m bits: Redis refuses bit offsets past
    // 2^32 - 1 (512 MB).
    let setbit: redis::RedisResult<i64> = redis::cmd("SETBIT")
        .arg("redisson-large")
        .arg(filter.num_bits() - 1)
        .arg(1)
        .query(&mut admin);
    println!(
        "Redisson-style single key: SETBIT at bit {} -> {:?}",
        filter.num_bits() - 1,
        setbit.map_err(|e| e.to_string())
    );
    let target = Target::parse(&server.url()).unwrap();
    // One category, no table, no exceptions: as a file built from one list without --verify.
    let resolver = Resolver::new(
        vec![Category {
            name: meta.name.clone(),
            entries: n,
        }],
        None,
        Exceptions::default(),
    );
    let source = PushSource {
        meta: &meta,
        filter: Some(&filter),
        resolver: &resolver,
        file_checksum: None,
        path: PathBuf::from("<memory>"),
    };
    let start = Instant::now();
    let pushed = push(
        &mut target.connect().unwrap(),
        "large",
        &source,
        &PushOptions::default(),
    )
    .unwrap();
    let info: String = redis::cmd("INFO").arg("memory").query(&mut admin).unwrap();
    println!(
        "pushed {} chunks in {:.1} s; Redis used_memory_human = {}",
        pushed.meta.chunking.chunks(),
        start.elapsed().as_secs_f64(),
        field(&info, "used_memory_human").unwrap_or_default()
    );
    check_large(&mut RedisBlocklist::open(&target, "large").unwrap(), n, fpp);
}

/// The blocked filter of `n` keys at `fpp`, built on two threads, with its metadata.
fn build_large(n: u64, fpp: f64) -> (AnyFilter, Meta) {
    let start = Instant::now();
    let mut filter = BlockedBloomFilter::new(n, fpp).unwrap();
    let fingerprint = Mutex::new(SetFingerprint::default());
    let threads = 2;
    let share = n.div_ceil(threads as u64);
    filter.insert_sharded(threads, |shard, part| {
        let mut local = SetFingerprint::default();
        let mut key = String::new();
        for i in shard as u64 * share..((shard as u64 + 1) * share).min(n) {
            use std::fmt::Write;
            key.clear();
            // Writing into a String cannot fail.
            let _ = write!(key, "key-{i}");
            let hash = KeyHash::of(key.as_bytes());
            part.insert_hash(hash);
            local.add(phishbloom_core::engine::fingerprint(hash));
        }
        // A poisoned lock means another shard panicked; the bench stops there anyway.
        let mut total = fingerprint.lock().unwrap();
        total.0 = total.0.wrapping_add(local.0);
    });
    let filter = AnyFilter::Blocked(filter);
    let bytes = filter.bit_bytes().len() as u64;
    println!(
        "built n = {n} at p = {fpp}: m = {} bits, k = {}, {:.1} MB in {:.1} s",
        filter.num_bits(),
        filter.num_hashes(),
        bytes as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );
    let meta = Meta {
        name: "large".into(),
        version: 1,
        created: phishbloom_blocklist::now(),
        scheme: KeyScheme::Exact,
        probes_per_item: 1,
        entries: n,
        // The lock is free: every shard has finished.
        fingerprint: *fingerprint.lock().unwrap(),
        target_fpp: Some(fpp),
        exact_count: true,
    };
    (filter, meta)
}

/// Checks members and non-members of the pushed large list through Redis, at depth 64, and
/// asserts that every member is listed and the false-positive rate is near `fpp`.
fn check_large(remote: &mut RedisBlocklist, n: u64, fpp: f64) {
    let mut rng = SplitMix64::new(5);
    let members: Vec<Vec<u8>> = (0..100_000)
        .map(|_| format!("key-{}", rng.below(n)).into_bytes())
        .collect();
    let others: Vec<Vec<u8>> = (0..1_000_000)
        .map(|i| format!("absent-{i}").into_bytes())
        .collect();
    let mut out = Vec::new();
    let start = Instant::now();
    for batch in members.chunks(64) {
        let items: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        remote.check_batch(&items, &mut out).unwrap();
    }
    let listed = out.iter().filter(|v| v.listed()).count();
    out.clear();
    for batch in others.chunks(64) {
        let items: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        remote.check_batch(&items, &mut out).unwrap();
    }
    let seconds = start.elapsed().as_secs_f64();
    let false_positives = out.iter().filter(|v| v.listed()).count();
    let fp_rate = false_positives as f64 / others.len() as f64;
    // Binomial: 4.5 standard deviations around the target.
    let sigma = (fpp * (1.0 - fpp) / others.len() as f64).sqrt();
    println!(
        "members listed {listed}/{}; non-members listed {false_positives}/{} = {:.4} % (target {:.4} %, ±{:.4} % at 4.5σ); {:.0} checks/s at depth 64",
        members.len(),
        others.len(),
        fp_rate * 100.0,
        fpp * 100.0,
        4.5 * sigma * 100.0,
        (members.len() + others.len()) as f64 / seconds
    );
    assert_eq!(listed, members.len(), "a member was not listed");
    assert!(
        (fp_rate - fpp).abs() <= 4.5 * sigma + 1e-6,
        "false-positive rate off"
    );
}
