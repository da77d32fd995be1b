//! The errors of the DNS front end: what cannot be listened on or read, named with the fix.

use std::net::SocketAddr;

/// What can go wrong setting the server up (a query's failure is an answer, never an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A listening socket that cannot be bound.
    #[error("cannot listen on {addr} ({transport}): is another server using the port, or does it need privileges (ports below 1024)?")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// `udp` or `tcp`.
        transport: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// `--block-with` that is no answer this server gives.
    #[error("--block-with {given}: use nxdomain, nodata, refused, null or an IP address")]
    BlockWith {
        /// What was given.
        given: String,
    },
    /// The log of blocked names cannot be opened.
    #[error("cannot open the log of blocked names {path}")]
    Log {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime the listeners run on cannot start.
    #[error("cannot start the DNS server's runtime: {0}")]
    Runtime(std::io::Error),
    /// A list of whole keys, keywords or documents: DNS names are checked as URL entries.
    #[error("{path}: a list of {scheme} cannot answer DNS names, which are checked as `check` checks http://NAME/ (the name, then its parent domains); build it from domains or URLs, without --exact")]
    Scheme {
        /// The file.
        path: std::path::PathBuf,
        /// Its key scheme's name.
        scheme: &'static str,
    },
    /// A list that cannot be opened.
    #[error(transparent)]
    List(#[from] phishbloom_blocklist::Error),
    /// A list that cannot keep the categories asked for.
    #[error(transparent)]
    Categories(#[from] phishbloom_core::Error),
    /// No upstream to forward to.
    #[error("no upstream: give --upstream ADDR[:PORT][,ADDR…]")]
    NoUpstream,
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
