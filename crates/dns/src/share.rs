//! Each client's share of the server: at most so many of its queries answered at once (UDP)
//! and so many of its connections open (TCP), so that one client — or one forged source —
//! cannot take every slot the server has and starve the rest. A query or connection beyond its
//! client's share is dropped (UDP) or closed (TCP), as a resolver under rate limiting does.
//! Loopback clients have no share: a resolver on the same host (unbound forwarding to it, as
//! the guide sets it up) asks for a whole network.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// A client's queries answered at once (of [`crate::server::MAX_IN_FLIGHT`] in all).
pub const QUERIES_PER_CLIENT: usize = 128;

/// A client's TCP connections open at once (of [`crate::server::MAX_CONNECTIONS`] in all).
pub const CONNECTIONS_PER_CLIENT: usize = 16;

/// How many slots each client holds now, up to a share.
pub struct Shares {
    share: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One slot of a client, given back when dropped (`held` is `None` for a loopback client's,
/// which is not counted).
pub struct Slot {
    client: IpAddr,
    held: Option<Arc<Mutex<HashMap<IpAddr, usize>>>>,
}

impl Shares {
    /// Shares of `share` slots a client.
    pub fn new(share: usize) -> Self {
        Shares {
            share,
            held: Arc::default(),
        }
    }

    /// A slot for `client`, or `None` when it holds its share already.
    pub fn take(&self, client: IpAddr) -> Option<Slot> {
        if client.is_loopback() {
            return Some(Slot { client, held: None });
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let count = held.entry(client).or_insert(0);
        if *count >= self.share {
            return None;
        }
        *count += 1;
        Some(Slot {
            client,
            held: Some(self.held.clone()),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(held) = &self.held else {
            return;
        };
        let mut held = held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = held.get_mut(&self.client) {
            *count -= 1;
            // A client with no slot leaves the map: it holds memory only while it is served.
            if *count == 0 {
                held.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_share_and_no_more_and_gets_slots_back() {
        let shares = Shares::new(2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = shares.take(a).unwrap();
        let _second = shares.take(a).unwrap();
        assert!(shares.take(a).is_none());
        assert!(shares.take(b).is_some());
        drop(first);
        assert!(shares.take(a).is_some());
        // Loopback is not counted.
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let many: Vec<Slot> = (0..10).filter_map(|_| shares.take(local)).collect();
        assert_eq!(many.len(), 10);
    }
}
