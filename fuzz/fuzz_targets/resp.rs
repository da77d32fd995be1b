//! Fuzz target: bytes a Redis-protocol client sends, read by the server's RESP parser
//! (`resp::parse`, multibulk and inline commands, pipelined) and answered by a connection's
//! `Session` over the served lists of `common/served.rs` (`phish`, `leaked`; `AUTH t` allows
//! writes; filters created over the protocol are dropped after each input).
//!
//! The first byte cuts the rest into the pieces it arrives in (partial frames), read the way
//! `resp::serve_connection` reads its socket. Checks: no panic; the commands and the protocol
//! error are the same whether the stream arrives whole or in pieces; the parser never reserves
//! room for more arguments than it has read plus a small bound, whatever a count line says.

#![no_main]

#[path = "common/served.rs"]
mod served;

use std::ops::Range;

use libfuzzer_sys::fuzz_target;
use phishbloom_server::resp::commands::{Outcome, Session};
use phishbloom_server::resp::parse::{parse, ParseLimits, ProtocolError};

/// What a stream parses to: its commands in order, then the protocol error that ended it (if
/// any) and the bytes of an unfinished command left over.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    commands: Vec<Vec<Vec<u8>>>,
    error: Option<ProtocolError>,
    left: usize,
}

/// Slots of arguments the parser may hold beyond those it has read: what a count line alone
/// may make it reserve.
const RESERVE_BOUND: usize = 1024;

/// Feeds `pieces` one after the other, answering every complete command after each.
fn read(pieces: &[&[u8]], limits: &ParseLimits) -> Parsed {
    let mut input: Vec<u8> = Vec::new();
    let mut args: Vec<Range<usize>> = Vec::new();
    let mut commands = Vec::new();
    for piece in pieces {
        input.extend_from_slice(piece);
        let mut used = 0;
        loop {
            let result = parse(&input[used..], limits, &mut args);
            assert!(
                args.capacity() <= RESERVE_BOUND.max(2 * args.len()),
                "{} argument slots reserved for {} arguments read",
                args.capacity(),
                args.len()
            );
            match result {
                Ok(Some(n)) => {
                    assert!(n > 0 && n <= input.len() - used, "used {n} bytes");
                    for r in &args {
                        assert!(r.start <= r.end && r.end <= n, "{r:?} out of the {n} bytes");
                    }
                    if !args.is_empty() {
                        commands.push(
                            args.iter()
                                .map(|r| input[used + r.start..used + r.end].to_vec())
                                .collect(),
                        );
                    }
                    used += n;
                }
                Ok(None) => break,
                Err(error) => {
                    return Parsed {
                        commands,
                        error: Some(error),
                        left: 0,
                    }
                }
            }
        }
        input.drain(..used);
    }
    Parsed {
        commands,
        error: None,
        left: input.len(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    let served = served::served();
    let limits = &served.shared.limits;
    // Small caps, so that inputs reach them; the server's own for the commands.
    let small = ParseLimits {
        max_bulk: 64,
        max_args: 16,
        max_line: 128,
    };
    let server = ParseLimits {
        max_bulk: limits.max_bulk,
        max_args: limits.max_args,
        max_line: limits.max_line,
    };
    // Pieces of 1 to 16 bytes, their lengths cycling from the first byte.
    let mut pieces = Vec::new();
    let mut rest = stream;
    let mut step = usize::from(cut);
    while !rest.is_empty() {
        let n = (step % 16 + 1).min(rest.len());
        pieces.push(&rest[..n]);
        rest = &rest[n..];
        step = step.wrapping_mul(5).wrapping_add(3);
    }
    for limits in [&small, &server] {
        assert_eq!(read(&[stream], limits), read(&pieces, limits));
    }
    // The commands, answered as the connection answers them.
    let parsed = read(&[stream], &server);
    let mut session = Session::new(served.shared.clone());
    let mut out = Vec::new();
    for argv in &parsed.commands {
        let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        if session.execute(&argv, &mut out) == Outcome::Close {
            break;
        }
    }
    session.flush_counts();
    served.restore(parsed.commands.iter().flatten().map(Vec::as_slice));
});
