//! The listeners: one UDP socket and one TCP listener on the same address. Each query is
//! answered in its own task — at most [`MAX_IN_FLIGHT`] at once, and at most
//! [`MAX_CONNECTIONS`] TCP connections open, so a flood costs bounded memory; each client gets
//! at most a share of both ([`crate::share`]) — by `Handler::answer`: REFUSED to a client
//! [`Clients`] does not admit, FORMERR for a packet that is no query, the blocked answer for a
//! listed name, else the upstream's answer unchanged unless a CNAME in it leads to a listed
//! name.

use std::fs::{File, OpenOptions};
use std::io::{LineWriter, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use phishbloom_core::engine::Scratch;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::Semaphore;

use hickory_proto::op::Message;

use crate::answer::{after_upstream, first, servfail, First, Said};
use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::forward::{read_message, Transport, Upstreams, MAX_MESSAGE};
use crate::lists::Lists;
use crate::metrics::{self, Metrics};
use crate::policy::Blocked;
use crate::share::{Shares, CONNECTIONS_PER_CLIENT, QUERIES_PER_CLIENT};

/// Queries answered at once; more wait (UDP) or are not read yet (TCP).
pub const MAX_IN_FLIGHT: usize = 1024;

/// TCP connections open at once (each may hold a message of up to 64 KiB while it is read);
/// more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 256;

/// How long the TCP listener rests after `accept` fails (out of file descriptors, say) before
/// it tries again, rather than spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Which clients are answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clients {
    /// Loopback and private networks (10/8, 172.16/12, 192.168/16, 100.64/10, link-local,
    /// fc00::/7): a forwarder open to the internet is a tool for reflection attacks.
    Local,
    /// Every address.
    Any,
}

impl Clients {
    /// Whether a query from `ip` is answered.
    pub fn admits(self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        match (self, ip) {
            (Clients::Any, _) => true,
            (Clients::Local, IpAddr::V4(v4)) => {
                let shared = v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64;
                v4.is_loopback() || v4.is_private() || v4.is_link_local() || shared
            }
            (Clients::Local, IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => Clients::Local.admits(IpAddr::V4(v4)),
                None => {
                    let first = v6.segments()[0];
                    v6.is_loopback() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
                }
            },
        }
    }
}

/// How long a TCP connection may stay idle between queries (RFC 7766 §6.2.3 suggests seconds).
const TCP_IDLE: Duration = Duration::from_secs(10);

/// The bound sockets and what answers through them.
pub struct Server {
    udp: Arc<UdpSocket>,
    tcp: TcpListener,
    handler: Arc<Handler>,
}

/// What answers a query.
struct Handler {
    /// Each client's share of the queries answered at once, and of the connections.
    queries: Shares,
    connections_each: Shares,
    lists: Arc<Lists>,
    metrics: Arc<Metrics>,
    cache: Cache,
    /// Where blocked names are logged, one line each (`--log-blocked`).
    log: Option<Mutex<LineWriter<File>>>,
    clients: Clients,
    connections: Arc<Semaphore>,
    upstreams: Upstreams,
    in_flight: Arc<Semaphore>,
}

impl Server {
    /// Binds UDP on `listen` and TCP on the same address and port (the port UDP got, when
    /// `listen`'s is 0).
    pub async fn bind(
        listen: SocketAddr,
        lists: Arc<Lists>,
        (upstreams, clients): (Upstreams, Clients),
        (metrics, log): (Arc<Metrics>, Option<File>),
    ) -> Result<Self> {
        let (udp, tcp) = bind_both(listen).await?;
        Ok(Server {
            udp: Arc::new(udp),
            tcp,
            handler: Arc::new(Handler {
                queries: Shares::new(QUERIES_PER_CLIENT),
                connections_each: Shares::new(CONNECTIONS_PER_CLIENT),
                lists,
                metrics,
                cache: Cache::default(),
                log: log.map(|file| Mutex::new(LineWriter::new(file))),
                clients,
                connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
                upstreams,
                in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            }),
        })
    }

    /// The address both listeners are bound to.
    pub fn local_addr(&self) -> SocketAddr {
        // Bound in `bind`: the address is known.
        self.tcp
            .local_addr()
            .unwrap_or_else(|_| ([127, 0, 0, 1], 0).into())
    }

    /// Answers queries until the task is dropped.
    pub async fn run(self) {
        let tcp_handler = self.handler.clone();
        let tcp = tokio::spawn(accept_tcp(self.tcp, tcp_handler));
        serve_udp(self.udp, self.handler).await;
        tcp.abort();
    }
}

/// Tries at binding a free port (`listen`'s port 0) for both UDP and TCP: the port UDP gets may
/// be taken for TCP, by another program, when it comes to bind it.
const FREE_PORT_TRIES: usize = 16;

/// A UDP socket on `listen` and a TCP listener on the same address and port; with port 0, a
/// port free for both (another is tried when TCP finds the one UDP got taken).
async fn bind_both(listen: SocketAddr) -> Result<(UdpSocket, TcpListener)> {
    let udp_error = |source| Error::Listen {
        addr: listen,
        transport: "udp",
        source,
    };
    let mut tries = 0;
    loop {
        let udp = UdpSocket::bind(listen).await.map_err(udp_error)?;
        let bound = udp.local_addr().map_err(udp_error)?;
        match TcpListener::bind(bound).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) if listen.port() == 0 && tries + 1 < FREE_PORT_TRIES => {
                tries += 1;
                drop(e);
            }
            Err(source) => {
                return Err(Error::Listen {
                    addr: bound,
                    transport: "tcp",
                    source,
                })
            }
        }
    }
}

/// When a running server stops and re-reads its lists, and where it shows its metrics.
pub struct Control {
    /// Where `GET /metrics` and `GET /healthz` are answered, if anywhere.
    pub http: Option<SocketAddr>,
    /// A file blocked names are appended to, one line each, if any.
    pub log_blocked: Option<PathBuf>,
    /// Set to stop (SIGTERM, SIGINT).
    pub stop: Arc<AtomicBool>,
    /// Set to re-read every list now (SIGHUP); cleared when done.
    pub reread: Arc<AtomicBool>,
    /// How often the files are looked at for a change.
    pub reload_every: Duration,
    /// A list older than this makes `/healthz` say `degraded` (`None`: never).
    pub stale_after: Option<Duration>,
    /// TLS on the metrics listener (`None`: in the clear); its files are read again when they
    /// change, with the lists.
    pub tls: Option<Arc<phishbloom_tls::Tls>>,
}

/// How often `serve_until` looks at its flags.
const TICK: Duration = Duration::from_millis(100);

/// Binds `listen` (UDP and TCP) and `control.http`, tells `bound` the addresses, and answers
/// queries until `control.stop` is set, re-reading the lists when their files change or
/// `control.reread` is set (each outcome told to `report`) — a process's whole life as a DNS
/// server.
pub fn serve_until(
    listen: SocketAddr,
    lists: Arc<Lists>,
    (upstreams, clients): (Upstreams, Clients),
    control: Control,
    bound: impl FnOnce(SocketAddr, Option<SocketAddr>),
    report: impl Fn(Result<bool>) + Send + Sync + 'static,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let report = Arc::new(report);
    let metrics = Arc::new(Metrics::default());
    let log = match &control.log_blocked {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| Error::Log {
                    path: path.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    runtime.block_on(async {
        let server = Server::bind(
            listen,
            lists.clone(),
            (upstreams, clients),
            (metrics.clone(), log),
        )
        .await?;
        let http = match control.http {
            Some(addr) => Some(metrics::bind(addr).await?),
            None => None,
        };
        bound(
            server.local_addr(),
            http.as_ref().and_then(|l| l.local_addr().ok()),
        );
        let health: Arc<dyn Fn() -> String + Send + Sync> = {
            let (lists, stale_after) = (lists.clone(), control.stale_after.map(|d| d.as_secs()));
            Arc::new(move || {
                let policy = lists.policy();
                metrics::health_text(&policy.written(), phishbloom_blocklist::now(), stale_after)
            })
        };
        let showing = http.map(|listener| {
            let tls = control.tls.clone();
            tokio::spawn(metrics::serve(listener, metrics.clone(), health, tls))
        });
        let serving = tokio::spawn(server.run());
        let mut since_look = Duration::ZERO;
        while !control.stop.load(Ordering::Relaxed) {
            tokio::time::sleep(TICK).await;
            since_look += TICK;
            let force = control.reread.swap(false, Ordering::Relaxed);
            if force || since_look >= control.reload_every {
                since_look = Duration::ZERO;
                if let Some(tls) = &control.tls {
                    tls.reload_if_changed();
                }
                let (lists, report, metrics) = (lists.clone(), report.clone(), metrics.clone());
                // Reading a list is file work: off the threads that answer.
                let _ = tokio::task::spawn_blocking(move || {
                    let outcome = lists.reload(force);
                    match &outcome {
                        Ok(true) => Metrics::count(&metrics.reloads, "done"),
                        Ok(false) => {}
                        Err(_) => Metrics::count(&metrics.reloads, "failed"),
                    }
                    report(outcome)
                })
                .await;
            }
        }
        serving.abort();
        if let Some(showing) = showing {
            showing.abort();
        }
        Ok(())
    })
}

/// Reads datagrams and answers each in its own task.
async fn serve_udp(socket: Arc<UdpSocket>, handler: Arc<Handler>) {
    let mut buffer = vec![0u8; MAX_MESSAGE];
    loop {
        let Ok((n, peer)) = socket.recv_from(&mut buffer).await else {
            continue;
        };
        // Beyond its share, a client's datagram is dropped (it asks again, or waits).
        let Some(slot) = handler.queries.take(peer.ip()) else {
            continue;
        };
        let Ok(permit) = handler.in_flight.clone().acquire_owned().await else {
            return;
        };
        let packet = buffer[..n].to_vec();
        let (socket, handler) = (socket.clone(), handler.clone());
        tokio::spawn(async move {
            if let Some(answer) = handler.answer(&packet, peer, Transport::Udp).await {
                let _ = socket.send_to(&answer, peer).await;
            }
            drop((permit, slot));
        });
    }
}

/// Accepts TCP connections, each served in its own task, at most [`MAX_CONNECTIONS`] at once.
async fn accept_tcp(listener: TcpListener, handler: Arc<Handler>) {
    loop {
        let Ok(permit) = handler.connections.clone().acquire_owned().await else {
            return;
        };
        let Ok((stream, peer)) = listener.accept().await else {
            tokio::time::sleep(ACCEPT_BACKOFF).await;
            continue;
        };
        // Beyond its share, a client's connection is closed at once (dropped here).
        let Some(slot) = handler.connections_each.take(peer.ip()) else {
            continue;
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            serve_tcp(stream, peer, handler).await;
            drop((permit, slot));
        });
    }
}

/// Answers the queries of one TCP connection in order, until it closes or idles.
async fn serve_tcp(mut stream: TcpStream, peer: SocketAddr, handler: Arc<Handler>) {
    loop {
        let Ok(Ok(query)) = tokio::time::timeout(TCP_IDLE, read_message(&mut stream)).await else {
            return;
        };
        let Ok(permit) = handler.in_flight.clone().acquire_owned().await else {
            return;
        };
        let answer = handler.answer(&query, peer, Transport::Tcp).await;
        drop(permit);
        let Some(answer) = answer else {
            return;
        };
        // An answer is at most a DNS message long (65,535 bytes): its length fits.
        let len = u16::try_from(answer.len())
            .unwrap_or(u16::MAX)
            .to_be_bytes();
        if stream.write_all(&len).await.is_err() || stream.write_all(&answer).await.is_err() {
            return;
        }
    }
}

impl Handler {
    /// The answer to `packet`, a query from `peer` that came over `transport` (see the
    /// module documentation); `None` when it gets none (too short for a header, or a
    /// response).
    async fn answer(
        &self,
        packet: &[u8],
        peer: SocketAddr,
        transport: Transport,
    ) -> Option<Vec<u8>> {
        let metrics = &self.metrics;
        let via = match transport {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
        };
        Metrics::count(&metrics.queries, via);
        let mut scratch = Scratch::default();
        let policy = self.lists.policy();
        let admitted = self.clients.admits(peer.ip());
        let query = match first(packet, admitted, &policy, &mut scratch) {
            First::Answer(answer, said) => {
                let outcome = match said {
                    Said::FormErr => "formerr",
                    Said::Refused => "refused",
                    Said::Blocked(why) => self.count_blocked(&why, packet, peer),
                };
                Metrics::count(&metrics.answers, outcome);
                return Some(answer);
            }
            First::Nothing => return None,
            First::Forward(query) => query,
        };
        // A kept answer, its CNAMEs checked against the lists in hand.
        if let Some((kept, response)) = self.cache.get(&query, transport == Transport::Udp) {
            let (answer, why) = after_upstream(&query, kept, &response, &policy, &mut scratch);
            let outcome = why.map_or("cached", |why| self.count_blocked(&why, packet, peer));
            Metrics::count(&metrics.answers, outcome);
            return Some(answer);
        }
        let question = &query.queries()[0];
        let asked = std::time::Instant::now();
        let Some((upstream, response)) = self.upstreams.ask(packet, question, transport).await
        else {
            Metrics::count(&metrics.answers, "servfail");
            return Some(servfail(&query));
        };
        metrics
            .upstream_seconds
            .observe(asked.elapsed().as_secs_f64());
        self.cache.put(&query, &response);
        let (answer, why) = after_upstream(&query, upstream, &response, &policy, &mut scratch);
        let outcome = match why {
            Some(why) => self.count_blocked(&why, packet, peer),
            None => "forwarded",
        };
        Metrics::count(&metrics.answers, outcome);
        Some(answer)
    }

    /// Counts a blocked name by its list and categories, and logs it (the query `packet`, from
    /// `peer`) when asked to; the answers' outcome label.
    fn count_blocked(&self, why: &Blocked, packet: &[u8], peer: SocketAddr) -> &'static str {
        self.metrics
            .blocked
            .get_or_create(&metrics::Block {
                list: why.list.clone(),
                categories: why.categories.join(","),
            })
            .inc();
        if let Some(log) = &self.log {
            let name = Message::from_vec(packet)
                .ok()
                .and_then(|q| Some(q.queries().first()?.name().to_ascii()))
                .unwrap_or_default();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            // A log that cannot be written costs the log line, never the answer.
            let _ = writeln!(
                log,
                "{now}\t{}\t{name}\t{}\t{}\t{}",
                peer.ip(),
                why.list,
                why.entry,
                why.categories.join(",")
            );
        }
        "blocked"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_clients_are_loopback_and_private_networks_only() {
        let local = |ip: &str| Clients::Local.admits(ip.parse().unwrap());
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.9",
            "192.168.1.1",
            "100.64.0.1",
            "::1",
        ] {
            assert!(local(ip), "{ip}");
        }
        for ip in ["fd00::1", "fe80::1", "::ffff:192.168.0.2"] {
            assert!(local(ip), "{ip}");
        }
        for ip in ["8.8.8.8", "100.128.0.1", "2001:db8::1", "::ffff:8.8.8.8"] {
            assert!(!local(ip), "{ip}");
            assert!(Clients::Any.admits(ip.parse().unwrap()));
        }
    }
}
