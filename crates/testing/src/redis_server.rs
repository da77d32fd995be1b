//! Throw-away Redis servers on loopback for tests and benchmarks: [`RedisServer`] starts its own
//! `redis-server` on a free port (no persistence) and kills it when dropped; [`RedisCluster`]
//! starts several with cluster mode on and joins them with `redis-cli --cluster create`.
//!
//! When `redis-server` or `redis-cli` is not installed these panic with a message saying to
//! install them: a test that needs Redis must fail, not pass silently, where Redis is missing.

use std::net::{SocketAddrV4, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a new server may take to answer PING, and a new cluster to report `cluster_state:ok`.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Attempts at finding a free port before giving up (another process can take a port between
/// our probe and the server's bind).
const PORT_ATTEMPTS: usize = 20;

/// The message for a missing tool.
fn missing(tool: &str) -> String {
    format!(
        "`{tool}` is not installed (or not on PATH): the Redis tests start their own servers on \
         loopback; install Redis with `apt-get install -y redis-server redis-tools` (bash .ci/run \
         does this)"
    )
}

/// The path of `tool` on `PATH`; panics with how to install it when absent.
pub fn require(tool: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(tool))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{}", missing(tool)))
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read, released); with
/// `bus`, port + 10000 (the cluster bus) was free too.
pub fn free_port(bus: bool) -> u16 {
    loop {
        // Binding port 0 on loopback cannot fail on a working network stack.
        let listener = TcpListener::bind(SocketAddrV4::new([127, 0, 0, 1].into(), 0))
            .expect("bind a loopback port");
        // A socket bound a line above has a local address.
        let port = listener
            .local_addr()
            .expect("a bound socket has an address")
            .port();
        if !bus {
            return port;
        }
        if port <= u16::MAX - 10_000
            && TcpListener::bind(SocketAddrV4::new([127, 0, 0, 1].into(), port + 10_000)).is_ok()
        {
            return port;
        }
    }
}

/// One `redis-server` child process on 127.0.0.1, killed (and its directory removed) on drop.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// A plain server: no snapshots, no append-only file.
    pub fn start() -> RedisServer {
        Self::start_with(&[])
    }

    /// A server with extra `redis-server` arguments (such as `--cluster-enabled yes`).
    pub fn start_with(extra: &[&str]) -> RedisServer {
        let binary = require("redis-server");
        let cluster = extra.contains(&"--cluster-enabled");
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last_log = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port(cluster);
            let dir = std::env::temp_dir().join(format!(
                "phishbloom-redis-{}-{}-{port}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            // The temporary directory is writable on any machine that runs tests; if not, the
            // test cannot run and says why.
            std::fs::create_dir_all(&dir).expect("create a directory for the server");
            let log = dir.join("redis.log");
            let child = Command::new(&binary)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--dir")
                .arg(&dir)
                .arg("--logfile")
                .arg(&log)
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
            let mut server = RedisServer {
                child: Some(child),
                port,
                dir,
            };
            if server.wait_ready() {
                return server;
            }
            last_log = std::fs::read_to_string(&log).unwrap_or_default();
            // Dropping the server kills it and removes its directory; a port taken between our
            // probe and its bind is retried on another port.
            drop(server);
            if !last_log.contains("Address already in use") {
                break;
            }
        }
        panic!("redis-server did not start; its log:\n{last_log}");
    }

    /// Waits until the server answers PING; false if it exited or did not answer in time.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Some(child) = &mut self.child {
                if !matches!(child.try_wait(), Ok(None)) {
                    return false;
                }
            }
            let ping = redis::Client::open(self.url())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(200)))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if ping.is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The server's working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A plain redis-rs connection to this server (for tests to look at keys directly).
    pub fn connection(&self) -> redis::Connection {
        // The server answered PING when it started; a failure here is the test's to report.
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection())
            .expect("connect to the test server")
    }

    /// Kills the server now (a "Redis is down" scenario); idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // The child may have exited already; either way it is reaped by `wait`.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        // Best effort: a leftover temporary directory is harmless.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Redis Cluster of `masters` masters (no replicas) on loopback.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts the masters, assigns all 16384 slots with `redis-cli --cluster create` and waits
    /// until every node reports `cluster_state:ok`.
    pub fn start(masters: usize) -> RedisCluster {
        let cli = require("redis-cli");
        let nodes: Vec<RedisServer> = (0..masters)
            .map(|_| {
                RedisServer::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "5000",
                ])
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        let output = Command::new(&cli)
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", cli.display()));
        assert!(
            output.status.success(),
            "redis-cli --cluster create failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let deadline = Instant::now() + START_TIMEOUT;
        for node in &nodes {
            let mut conn = node.connection();
            loop {
                // Each node answered PING when it started; a node that stops answering fails the
                // test that needs it, with redis-rs's message.
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut conn)
                    .expect("CLUSTER INFO");
                if info.contains("cluster_state:ok") {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the cluster did not become ready:\n{info}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        RedisCluster { nodes }
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// The masters.
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }
}
