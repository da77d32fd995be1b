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

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::Shared;
use commands::{Outcome, Session};
use parse::{parse, ParseLimits};

/// Serves one Redis-protocol connection until the client leaves, a protocol error, the idle
/// timeout, or shutdown (the commands already read are answered first).
pub async fn serve_connection(
    mut stream: TcpStream,
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
        // Answer what has arrived, up to the pipeline cap.
        let mut used = 0;
        let mut answered = 0;
        let mut close = false;
        while answered < max_pipeline {
            match parse(&input[used..], &limits, &mut args) {
                Ok(Some(n)) => {
                    let base = used;
                    used += n;
                    if args.is_empty() {
                        continue;
                    }
                    let argv: Vec<&[u8]> = args
                        .iter()
                        .map(|r| &input[base + r.start..base + r.end])
                        .collect();
                    answered += 1;
                    if session.execute(&argv, &mut output) == Outcome::Close {
                        close = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    reply::error(&mut output, &format!("ERR {}", error.0));
                    close = true;
                    break;
                }
            }
        }
        session.flush_counts();
        input.drain(..used);
        if !output.is_empty() {
            match tokio::time::timeout(idle, stream.write_all(&output)).await {
                Ok(Ok(())) => output.clear(),
                _ => return,
            }
        }
        if close {
            let _ = stream.shutdown().await;
            return;
        }
        if answered == max_pipeline {
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
