//! Asking the upstreams: the query's bytes sent as they came but for a fresh random id, the
//! first upstream that answers in time — with that id and the query's question — gives the
//! answer (failover in order), its id set back to the client's; over UDP for a UDP query (a
//! truncated answer goes back truncated, and the client asks again over TCP, as it would ask the
//! upstream) and over TCP for a TCP query. The random id and the question check make a forged
//! answer guess both the id and the source port.

use std::net::SocketAddr;
use std::time::Duration;

use std::hash::{BuildHasher, Hasher};

use hickory_proto::op::{Message, Query};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::time::timeout;

/// The largest DNS message (a TCP message's length is 16 bits; a UDP datagram's at most that).
pub const MAX_MESSAGE: usize = 65_535;

/// The upstream servers and how long each gets to answer.
#[derive(Clone, Debug)]
pub struct Upstreams {
    addrs: Vec<SocketAddr>,
    wait: Duration,
}

/// How a query came, and so how it is forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A datagram.
    Udp,
    /// A TCP stream.
    Tcp,
}

impl Upstreams {
    /// `addrs`, asked in order, each given `wait` to answer.
    pub fn new(addrs: Vec<SocketAddr>, wait: Duration) -> Self {
        Upstreams { addrs, wait }
    }

    /// The first answer an upstream gives to `query` (whose question is `question`) over
    /// `transport`, as bytes with the client's id and parsed, or `None` when none answers in
    /// time with an answer to that question.
    pub async fn ask(
        &self,
        query: &[u8],
        question: &Query,
        transport: Transport,
    ) -> Option<(Vec<u8>, Message)> {
        let mut sent = query.to_vec();
        sent.get_mut(..2)?
            .copy_from_slice(&random_id().to_be_bytes());
        for &addr in &self.addrs {
            let answer = match transport {
                Transport::Udp => timeout(self.wait, ask_udp(addr, &sent)).await,
                Transport::Tcp => timeout(self.wait, ask_tcp(addr, &sent)).await,
            };
            let Ok(Ok(mut answer)) = answer else {
                continue;
            };
            let parsed = Message::from_vec(&answer).ok();
            if let Some(mut parsed) = parsed.filter(|m| {
                answer.get(..2) == sent.get(..2) && m.queries() == std::slice::from_ref(question)
            }) {
                answer[..2].copy_from_slice(&query[..2]);
                parsed.set_id(u16::from_be_bytes([query[0], query[1]]));
                return Some((answer, parsed));
            }
        }
        None
    }
}

/// `query` to `addr` in a datagram from a fresh port; the first datagram back from `addr`
/// that answers its id.
async fn ask_udp(addr: SocketAddr, query: &[u8]) -> std::io::Result<Vec<u8>> {
    let local: SocketAddr = match addr {
        SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
        SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(local).await?;
    socket.connect(addr).await?;
    socket.send(query).await?;
    let mut buffer = vec![0u8; MAX_MESSAGE];
    loop {
        let n = socket.recv(&mut buffer).await?;
        // The same id, and QR set: anything else is not the answer (a stray or forged datagram).
        if n >= 12 && buffer[..2] == query[..2] && buffer[2] & 0x80 != 0 {
            buffer.truncate(n);
            return Ok(buffer);
        }
    }
}

/// `query` to `addr` over TCP (two bytes of length, then the message); the answer.
async fn ask_tcp(addr: SocketAddr, query: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await?;
    let len = u16::try_from(query.len()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    stream.write_all(&len.to_be_bytes()).await?;
    stream.write_all(query).await?;
    read_message(&mut stream).await
}

/// A fresh id for a query sent upstream: SipHash, keyed at random once per process and counting
/// up per call (std's `RandomState`), so that an off-path forger cannot predict it.
fn random_id() -> u16 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish() as u16
}

/// One length-prefixed DNS message from a TCP stream.
pub async fn read_message(stream: &mut (impl AsyncReadExt + Unpin)) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).await?;
    let mut message = vec![0u8; usize::from(u16::from_be_bytes(len))];
    stream.read_exact(&mut message).await?;
    Ok(message)
}
