//! `phishbloom serve`: blocklists answered over HTTP/JSON, the Redis protocol (RedisBloom's
//! `BF.*` and `CF.*` commands) and squid's external ACL helper protocol, with files reloaded
//! without a failed request.
//!
//! # Modules
//! - [`lists`] — [`Lists`]: the served lists by name, swapped atomically on reload (SIGHUP, a
//!   file replaced by rename), written through with add/remove and saved over their files.
//! - [`adhoc`] — the filters created over the Redis protocol (RedisBloom's scalable Bloom and
//!   cuckoo filters), held in memory apart from the served lists.
//! - [`check`] — [`check::Checker`]: items against one or several lists, and the JSON answer
//!   line (the CLI's `check --json` line plus the deciding list).
//! - [`http`] — the HTTP/JSON routes (axum); [`server`] — listeners, timeouts, idle and
//!   header-read limits, signals and the graceful drain.
//! - [`resp`] — the Redis protocol: parser, replies, commands.
//! - [`squid`] — squid's external ACL helper protocol.
//! - [`config`] — [`Limits`] and the bearer [`Token`]; [`metrics`] — Prometheus series;
//!   [`Error`] — what can fail, and how to fix it.
//! - [`buffers`] — [`buffers::Buffers`]: sent answer buffers handed back for reuse.
//! - TLS on both listeners is `phishbloom_tls`'s, its certificate reloaded with the lists.
//!
//! # Example
//! ```
//! use std::sync::Arc;
//! use phishbloom_blocklist::BlocklistFile;
//! use phishbloom_core::keys::KeyScheme;
//! use phishbloom_core::{Blocklist, BuildOptions, KeyList};
//! use phishbloom_server::{Limits, ListSpec, Lists, Server, Shared};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A list of exact keys, saved as `leaked.bloom`: served as `leaked`.
//! let dir = std::env::temp_dir().join(format!("phishbloom-server-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let mut keys = KeyList::default();
//! keys.push(b"hunter2");
//! let options = BuildOptions { name: "leaked".into(), ..BuildOptions::default() };
//! let path = dir.join("leaked.bloom");
//! Blocklist::from_keys(&[("leaked".into(), keys)], KeyScheme::Exact, &options)?.save(&path, &[])?;
//!
//! // The temporary directory's path is UTF-8 on the systems this runs on.
//! let lists = Lists::open(&[ListSpec::parse(path.to_str().unwrap())?], Arc::default())?;
//! let shared = Arc::new(Shared::new(lists, Limits::default(), None));
//! let runtime = tokio::runtime::Runtime::new()?;
//! let reply = runtime.block_on(async {
//!     // Port 0: any free port on loopback.
//!     let server = Server::bind(shared, None, Some("127.0.0.1:0")).await?;
//!     let addr = server.resp_addr().expect("the Redis-protocol listener is bound");
//!     let stop = tokio_util::sync::CancellationToken::new();
//!     let running = tokio::spawn(server.run(stop.clone()));
//!     let mut client = tokio::net::TcpStream::connect(addr).await?;
//!     client.write_all(b"BF.MEXISTS leaked hunter2 letmein\r\n").await?;
//!     let mut reply = vec![0; 64];
//!     let n = client.read(&mut reply).await?;
//!     reply.truncate(n);
//!     stop.cancel();
//!     running.await?;
//!     Ok::<_, Box<dyn std::error::Error>>(reply)
//! })?;
//! assert_eq!(reply, b"*2\r\n:1\r\n:0\r\n");
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod adhoc;
pub mod buffers;
pub mod check;
pub mod config;
mod error;
pub mod http;
pub mod lists;
pub mod metrics;
pub mod near;
pub mod resp;
pub mod server;
pub mod squid;

use std::sync::Arc;

pub use config::{Limits, Token};
pub use error::{Error, Result};
pub use lists::{ListSpec, Lists};
pub use server::Server;

/// What every connection shares: the lists, the limits and the write token.
pub struct Shared {
    /// The served lists (and the metrics).
    pub lists: Lists,
    /// Caps and timeouts.
    pub limits: Limits,
    /// The bearer token that allows writes; `None`: writes are off.
    pub token: Option<Token>,
    /// Answer buffers handed back for reuse once sent (the pieces of text batches' answers).
    pub buffers: Arc<buffers::Buffers>,
    /// The key that signs each list's sync index (`serve --sign`), so that clients trusting it
    /// (`sync --trust`, the extension's `"trust"`) follow the served list; `None`: unsigned.
    pub signer: Option<phishbloom_core::sync::SecretKey>,
    /// TLS on both listeners (`serve --tls-cert/--tls-key`); `None`: in the clear.
    pub tls: Option<phishbloom_tls::Tls>,
}

impl Shared {
    /// What connections share: `lists` served within `limits`, writes allowed with `token`.
    pub fn new(lists: Lists, limits: Limits, token: Option<Token>) -> Self {
        Shared {
            lists,
            limits,
            token,
            buffers: Arc::default(),
            signer: None,
            tls: None,
        }
    }

    /// The same, its listeners speaking TLS with `tls`.
    pub fn with_tls(mut self, tls: Option<phishbloom_tls::Tls>) -> Self {
        self.tls = tls;
        self
    }

    /// The same, its sync indexes signed with `signer`.
    pub fn with_signer(mut self, signer: Option<phishbloom_core::sync::SecretKey>) -> Self {
        self.signer = signer;
        self
    }
}
