//! `phishbloom dns`: a filtering DNS forwarder. Every query name is checked against the lists
//! with `check`'s rules (the name and its parent domains against domain entries, exceptions,
//! categories; case, trailing dot and IDN as URLs have them); a listed name is answered as
//! blocked — NXDOMAIN by default — with an RFC 8914 Extended DNS Error naming the list, and
//! every other query is forwarded to the upstreams, whose answer goes back unchanged unless a
//! CNAME in it leads to a listed name (a cloaked name is blocked as if it were listed itself).
//!
//! The wire format is hickory-proto's; the sockets are tokio's. Modules, one job each:
//! [`policy`] (what is blocked), [`lists`] (the policy in hand, re-read when the files change),
//! [`answer`] (the messages this server writes), [`forward`] (asking the upstreams), [`server`]
//! (the UDP and TCP listeners).

#![warn(missing_docs)]

pub mod answer;
pub mod cache;
mod error;
pub mod forward;
pub mod lists;
pub mod metrics;
pub mod policy;
pub mod server;
pub mod share;

pub use error::{Error, Result};
