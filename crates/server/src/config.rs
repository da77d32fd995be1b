//! [`Limits`] (every cap and timeout the server enforces, with their defaults) and [`Token`]
//! (the bearer token that allows writes, compared in constant time).

use std::path::Path;
use std::time::Duration;

use subtle::ConstantTimeEq;

use crate::error::{Error, Result};

/// Caps and timeouts.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest request body read whole (JSON batches, entries), in bytes; larger → 413.
    /// NDJSON streams are not capped in total, only per line ([`Limits::max_line`]).
    pub max_body: usize,
    /// Most URLs in one JSON batch; more → 413 (stream them as NDJSON instead).
    pub max_batch: usize,
    /// Longest NDJSON line or inline Redis command, in bytes.
    pub max_line: usize,
    /// Time for a client to send a request's headers.
    pub header_timeout: Duration,
    /// Time a connection may move no byte before it is closed (keep-alive, a half-sent body,
    /// an idle Redis client).
    pub idle_timeout: Duration,
    /// Time to receive a whole request body read at once; slower → 408.
    pub body_timeout: Duration,
    /// Most Redis-protocol commands answered per connection before their replies are written
    /// out: a client that pipelines more waits for the socket (the server reads no further).
    pub max_pipeline: usize,
    /// Longest Redis bulk string (one key or URL); longer → protocol error, connection closed.
    pub max_bulk: usize,
    /// Most arguments in one Redis command.
    pub max_args: usize,
    /// Time given to requests in flight after SIGTERM before the process exits anyway.
    pub drain_timeout: Duration,
    /// How often served files are checked for replacement.
    pub reload_interval: Duration,
    /// The least time sync clients wait between polls, written into each list's index.json.
    pub sync_interval: Duration,
    /// A list older than this (since it was written) makes `/healthz` say `degraded`: a copy
    /// that `sync` no longer updates (stopped, or refusing an expired index). `None`: never.
    pub stale_after: Option<Duration>,
}

/// The defaults: a 16 MiB body holds a full batch of 10,000 long URLs with room to spare;
/// 10,000 URLs answer in about 10 ms, short enough not to starve other requests; a 64 KiB line
/// is longer than any URL browsers send (~2 KB usual, 64 KB at most in practice); 10 s for
/// headers and 60 s idle are the usual web-server values (nginx: 60 s, 75 s); 30 s for a body
/// covers 16 MiB on a slow link; 1,024 pipelined commands is well past the depths clients use
/// (16–64) and bounds the replies one connection buffers to those of 1,024 commands; 1 MiB per
/// bulk string is far above any key or URL; 1 s of reload polling costs one `stat` and a 4 KiB
/// read per list.
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 16 << 20,
            max_batch: 10_000,
            max_line: 64 << 10,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(30),
            max_pipeline: 1024,
            max_bulk: 1 << 20,
            max_args: 1 << 20,
            drain_timeout: Duration::from_secs(30),
            reload_interval: Duration::from_secs(1),
            // A served list answers an unchanged index with 304 from memory: clients may poll
            // often (a publish directory on a CDN asks for minutes instead).
            sync_interval: Duration::from_secs(10),
            stale_after: None,
        }
    }
}

/// The bearer token (HTTP `Authorization: Bearer`, Redis `AUTH`) that allows writes.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A token from its bytes; empty → `None`.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        (!bytes.is_empty()).then(|| Token(bytes.to_vec()))
    }

    /// The token in `path`: its first line, surrounding whitespace removed.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read(path).map_err(|e| Error::Token {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })?;
        let line = text.split(|&b| b == b'\n').next().unwrap_or_default();
        Token::new(line.trim_ascii()).ok_or_else(|| Error::Token {
            path: path.to_path_buf(),
            problem: "it is empty".into(),
        })
    }

    /// Whether `given` is the token, compared in time that does not depend on where they
    /// differ (only on the lengths).
    pub fn matches(&self, given: &[u8]) -> bool {
        bool::from(self.0.as_slice().ct_eq(given))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_the_first_line_and_match_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, " s3cret \nignored\n").unwrap();
        let token = Token::read(&path).unwrap();
        assert!(token.matches(b"s3cret"));
        assert!(!token.matches(b"s3cre"));
        assert!(!token.matches(b"s3cret "));
        assert!(!token.matches(b""));
        std::fs::write(&path, "\n").unwrap();
        assert!(Token::read(&path).is_err());
        assert!(Token::read(&dir.path().join("missing")).is_err());
    }
}
