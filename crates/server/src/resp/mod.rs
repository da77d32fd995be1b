//! The Redis protocol (RESP2, and RESP3 after `HELLO 3`): RedisBloom's `BF.*` and `CF.*`
//! commands over the served lists, so code written for RedisBloom works unchanged.
//!
//! - [`parse`](mod@parse) — commands out of the read buffer, with caps on every length.
//! - [`reply`] — replies into the write buffer.
//! - [`commands`] — what each command does ([`commands::Session`]).
//!
//! A connection reads what the client sent, answers every complete command in it (at most
//! [`crate::config::Limits::max_pipeline`] before the replies are written out and the socket
//! waited on: a pipelining client never makes the server buffer without bound), writes the
//! replies in one go, and reads again. A protocol error is answered and the connection closed,
//! as Redis does; a connection idle for the idle timeout is closed.

pub mod commands;
pub mod parse;
pub mod reply;

use std::ops::Range;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::Shared;
use commands::{Outcome, Session};
use parse::{parse, ParseLimits};

/// Serves one Redis-protocol connection until the client leaves, a protocol error, the idle
/// timeout, or shutdown (the commands already read are answered first).
pub async fn serve_connection(
    mut stream: phishbloom_tls::Stream,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let limits = ParseLimits {
        max_bulk: shared.limits.max_bulk,
        max_args: shared.limits.max_args,
        max_line: shared.limits.max_line,
    };
    let max_pipeline = shared.limits.max_pipeline.max(1);
    let idle = shared.limits.idle_timeout;
    // One command may hold several bulk strings of the largest size, but not without bound:
    // 64 MiB (or two of the largest bulk strings) of one unfinished command closes the
    // connection.
    let max_command = (64usize << 20).max(limits.max_bulk.saturating_mul(2));
    let mut session = Session::new(shared.clone());
    let mut input: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut output: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut args = Vec::new();
    loop {
        let pass = answer_arrived(
            &mut session,
            &input,
            &limits,
            max_pipeline,
            &mut args,
            &mut output,
        );
        session.flush_counts();
        input.drain(..pass.used);
        if !output.is_empty() {
            match tokio::time::timeout(idle, stream.write_all(&output)).await {
                Ok(Ok(())) => output.clear(),
                _ => return,
            }
        }
        if pass.close {
            let _ = stream.shutdown().await;
            return;
        }
        if pass.answered == max_pipeline {
            // More may be complete already: answer it before reading.
            continue;
        }
        if shutdown.is_cancelled() {
            return;
        }
        if input.len() > max_command {
            reply::error(&mut output, "ERR Protocol error: command too large");
            let _ = tokio::time::timeout(idle, stream.write_all(&output)).await;
            return;
        }
        if input.capacity() - input.len() < 4096 {
            input.reserve(16 << 10);
        }
        let read = tokio::select! {
            read = tokio::time::timeout(idle, stream.read_buf(&mut input)) => read,
            _ = shutdown.cancelled() => return,
        };
        match read {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
            Ok(Ok(_)) => {}
        }
    }
}

/// What one pass over the read buffer did.
struct Pass {
    /// Bytes of the buffer the commands answered took.
    used: usize,
    /// Commands answered.
    answered: usize,
    /// Whether the connection closes once the replies are written (`QUIT`, a protocol error).
    close: bool,
}

/// Answers the complete commands at the start of `input`, at most `max_pipeline`, into
/// `output`; a protocol error is answered, and closes the connection.
fn answer_arrived(
    session: &mut Session,
    input: &[u8],
    limits: &ParseLimits,
    max_pipeline: usize,
    args: &mut Vec<Range<usize>>,
    output: &mut Vec<u8>,
) -> Pass {
    let mut pass = Pass {
        used: 0,
        answered: 0,
        close: false,
    };
    while pass.answered < max_pipeline {
        match parse(&input[pass.used..], limits, args) {
            Ok(Some(n)) => {
                let base = pass.used;
                pass.used += n;
                if args.is_empty() {
                    continue;
                }
                let argv: Vec<&[u8]> = args
                    .iter()
                    .map(|r| &input[base + r.start..base + r.end])
                    .collect();
                pass.answered += 1;
                if session.execute(&argv, output) == Outcome::Close {
                    pass.close = true;
                    break;
                }
            }
            Ok(None) => break,
            Err(error) => {
                reply::error(output, &format!("ERR {}", error.0));
                pass.close = true;
                break;
            }
        }
    }
    pass
}
