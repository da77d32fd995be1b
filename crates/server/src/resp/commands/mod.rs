//! What each Redis-protocol command does, with RedisBloom's reply types and error strings
//! (RedisBloom's `rebloom.c`): a key is a served list's name; `BF.*` on a list of URL entries
//! has URL semantics (`BF.EXISTS phish http://a.evil.com/x` is 1 when `evil.com` is listed and
//! no exception allows the URL), on a list of keys exact-key semantics. Lists whose kind can
//! delete (cuckoo and counting, [`phishbloom_core::Kind::deletes`]) are RedisBloom's cuckoo
//! type (`CF.*`); the others its Bloom type (`BF.*`); the wrong family gets
//! `WRONGTYPE`, a missing key answers 0 to the `EXISTS` commands.
//!
//! Keys that are not served lists are RedisBloom's own filters, created here and held in memory
//! apart from the served lists ([`crate::adhoc`]): `BF.RESERVE`/`BF.INSERT`/`BF.ADD` make a
//! scalable Bloom filter (`EXPANSION` honoured, `NONSCALING` answering `ERR non scaling filter is
//! full` when full), `CF.RESERVE`/`CF.INSERT`/`CF.ADD` a cuckoo filter that stores an item once per
//! add (`CF.COUNT` counts them); `BF.DEBUG`, `CF.INFO`, `SCANDUMP`/`LOADCHUNK` and `DEL` work on
//! them. A served list holds an entry once (`CF.COUNT` answers 0 or 1) and is never deleted.
//! `MULTI` queues commands until `EXEC` runs them in order (one array of replies) or `DISCARD`.
//!
//! Reads are open to everyone; writes need a token file on the server and `AUTH TOKEN` (or
//! `HELLO 3 AUTH default TOKEN`) on the connection.
//!
//! # Files
//! - this one — [`Session`]: the table of commands and the dispatch, and what every family
//!   uses (argument numbers, error lines, the two types).
//! - `connection` — the connection and server commands (`PING`, `HELLO`, `AUTH`, `COMMAND`,
//!   `CLIENT`, `INFO`…) and the keyspace (`DBSIZE`, `EXISTS`, `TYPE`, `DEL`).
//! - `transaction` — `MULTI`, `EXEC`, `DISCARD` and the queue between them.
//! - `keys` — where a key is held, for both types: the `EXISTS` commands, and the lookups,
//!   refusals and writes every command of a type makes.
//! - `bloom` — `BF.*`; `cuckoo` — `CF.*`; `dump` — `BF.DEBUG`, `SCANDUMP`, `LOADCHUNK`.

mod bloom;
mod connection;
mod cuckoo;
mod dump;
mod keys;
mod transaction;

use std::sync::Arc;

use phishbloom_core::engine::Scratch;

use super::reply::{self, Proto};
use crate::adhoc::Filter;
use crate::error::Error;
use crate::lists::State;
use crate::metrics::CommandLabels;
use crate::Shared;
use keys::Probe;
use transaction::Transaction;

/// RedisBloom's `WRONGTYPE` error.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// RedisBloom's error for a key that does not exist where one must.
pub const NOT_FOUND: &str = "ERR not found";
/// The error for a dump, `BF.DEBUG` or `CF.INFO` of a served list.
pub const SERVED_LIST: &str = "ERR a served blocklist (a file): BF.DEBUG, CF.INFO, SCANDUMP and LOADCHUNK work on filters created over this protocol; fetch a served list's file with GET /v1/lists/NAME/file";

/// What the connection does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go on.
    Continue,
    /// Write the replies and close (`QUIT`).
    Close,
}

/// A command's work: `argv[0]` is its name, its arity is checked; it writes exactly one reply.
type Handler = fn(&mut Session, &[&[u8]], &mut Vec<u8>);

/// One command this server knows.
struct Command {
    /// Its name, as `COMMAND` and the metrics label say it.
    name: &'static str,
    /// Arguments with the name (Redis' convention: negative means at least that many).
    arity: i64,
    /// `COMMAND`'s flag; `write` commands need `AUTH` and may save a file.
    flag: &'static str,
    run: Handler,
}

const fn cmd(name: &'static str, arity: i64, flag: &'static str, run: Handler) -> Command {
    Command {
        name,
        arity,
        flag,
        run,
    }
}

impl Command {
    /// Whether `n` arguments (the name included) fit its arity.
    fn takes(&self, n: usize) -> bool {
        let n = n as i64;
        if self.arity >= 0 {
            n == self.arity
        } else {
            n >= -self.arity
        }
    }

    fn writes(&self) -> bool {
        self.flag == "write"
    }
}

/// Every known command, in the order `COMMAND` lists them; a command's place is its counter's.
const TABLE: &[Command] = &[
    cmd("PING", -1, "fast", Session::ping),
    cmd("ECHO", 2, "fast", |_, argv, out| reply::bulk(out, argv[1])),
    cmd("HELLO", -1, "fast", Session::hello),
    cmd("AUTH", -2, "fast", Session::auth),
    cmd("COMMAND", -1, "loading", Session::command),
    cmd("CLIENT", -2, "loading", Session::client),
    cmd("SELECT", 2, "fast", Session::select),
    cmd("QUIT", -1, "fast", Session::quit),
    cmd("RESET", 1, "fast", Session::reset),
    cmd("CONFIG", -2, "admin", Session::config),
    cmd("INFO", -1, "loading", Session::info),
    cmd("DBSIZE", 1, "readonly", Session::dbsize),
    cmd("EXISTS", -2, "readonly", Session::exists_keys),
    cmd("TYPE", 2, "readonly", Session::type_of),
    cmd("BF.EXISTS", 3, "readonly", |s, argv, out| {
        s.exists(Family::Bloom, argv, Probe::One, out)
    }),
    cmd("BF.MEXISTS", -3, "readonly", |s, argv, out| {
        s.exists(Family::Bloom, argv, Probe::Many, out)
    }),
    cmd("BF.ADD", 3, "write", Session::bf_add),
    cmd("BF.MADD", -3, "write", Session::bf_madd),
    cmd("BF.INSERT", -4, "write", Session::bf_insert),
    cmd("BF.RESERVE", -4, "write", Session::bf_reserve),
    cmd("BF.INFO", -2, "readonly", Session::bf_info),
    cmd("BF.CARD", 2, "readonly", Session::bf_card),
    cmd("CF.ADD", 3, "write", |s, argv, out| {
        s.cf_add(argv, false, out)
    }),
    cmd("CF.ADDNX", 3, "write", |s, argv, out| {
        s.cf_add(argv, true, out)
    }),
    cmd("CF.DEL", 3, "write", Session::cf_del),
    cmd("CF.EXISTS", 3, "readonly", |s, argv, out| {
        s.exists(Family::Cuckoo, argv, Probe::One, out)
    }),
    cmd("CF.MEXISTS", -3, "readonly", |s, argv, out| {
        s.exists(Family::Cuckoo, argv, Probe::Many, out)
    }),
    cmd("CF.COUNT", 3, "readonly", |s, argv, out| {
        s.exists(Family::Cuckoo, argv, Probe::Count, out)
    }),
    cmd("CF.RESERVE", -3, "write", Session::cf_reserve),
    cmd("CF.INSERT", -4, "write", |s, argv, out| {
        s.cf_insert(argv, false, out)
    }),
    cmd("CF.INSERTNX", -4, "write", |s, argv, out| {
        s.cf_insert(argv, true, out)
    }),
    cmd("CF.INFO", 2, "readonly", Session::cf_info),
    cmd("BF.DEBUG", 2, "readonly", Session::bf_debug),
    cmd("BF.SCANDUMP", 3, "readonly", |s, argv, out| {
        s.scandump(Family::Bloom, argv, out)
    }),
    cmd("BF.LOADCHUNK", 4, "write", |s, argv, out| {
        s.loadchunk(Family::Bloom, argv, out)
    }),
    cmd("CF.SCANDUMP", 3, "readonly", |s, argv, out| {
        s.scandump(Family::Cuckoo, argv, out)
    }),
    cmd("CF.LOADCHUNK", 4, "write", |s, argv, out| {
        s.loadchunk(Family::Cuckoo, argv, out)
    }),
    cmd("CF.COMPACT", 2, "write", Session::cf_compact),
    cmd("DEL", -2, "write", Session::del),
    cmd("FLUSHDB", -1, "write", Session::flush),
    cmd("FLUSHALL", -1, "write", Session::flush),
    cmd("UNLINK", -2, "write", Session::del),
    cmd("MULTI", 1, "fast", Session::multi),
    cmd("EXEC", 1, "loading", Session::exec),
    cmd("DISCARD", 1, "fast", Session::discard),
];

/// The command named `name` (in any case) and its place in [`TABLE`].
fn lookup(name: &[u8]) -> Option<(usize, &'static Command)> {
    TABLE
        .iter()
        .enumerate()
        .find(|(_, command)| command.name.as_bytes().eq_ignore_ascii_case(name))
}

/// RedisBloom's two types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Bloom,
    Cuckoo,
}

impl Family {
    /// The type of a served list: cuckoo for the kinds that can delete.
    fn of(state: &State) -> Family {
        if state.list.kind().deletes() {
            Family::Cuckoo
        } else {
            Family::Bloom
        }
    }

    /// The type of a filter created here.
    fn of_filter(filter: &Filter) -> Family {
        match filter {
            Filter::Bloom(_) => Family::Bloom,
            Filter::Cuckoo(_) => Family::Cuckoo,
        }
    }
}

/// One connection's state: protocol version, authentication, reusable buffers and the
/// commands counted since the last flush.
pub struct Session {
    shared: Arc<Shared>,
    proto: Proto,
    authenticated: bool,
    scratch: Scratch,
    /// Commands run since the last flush, by place in [`TABLE`] (the last: unknown ones).
    counts: Vec<u64>,
    checked: u64,
    listed: u64,
    id: u64,
    /// The commands queued since `MULTI`, until `EXEC` or `DISCARD`.
    transaction: Option<Transaction>,
    /// `QUIT` was just answered: the command's outcome is [`Outcome::Close`].
    quit: bool,
}

/// Connection ids for `HELLO` and `CLIENT ID`.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Session {
    /// A new connection's session: RESP2, not authenticated.
    pub fn new(shared: Arc<Shared>) -> Self {
        Session {
            shared,
            proto: Proto::Resp2,
            authenticated: false,
            scratch: Scratch::default(),
            counts: vec![0; TABLE.len() + 1],
            checked: 0,
            listed: 0,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            transaction: None,
            quit: false,
        }
    }

    /// Adds the counts since the last flush to the metrics.
    pub fn flush_counts(&mut self) {
        let metrics = self.shared.lists.metrics();
        for (i, count) in self.counts.iter_mut().enumerate() {
            if *count > 0 {
                let command = TABLE.get(i).map_or("unknown", |c| c.name);
                metrics
                    .commands
                    .get_or_create(&CommandLabels {
                        command: command.to_owned(),
                    })
                    .inc_by(*count);
                *count = 0;
            }
        }
        if self.checked > 0 {
            metrics.count_checks(self.checked, self.listed);
            self.checked = 0;
            self.listed = 0;
        }
    }

    /// Answers one command (`argv[0]` is its name), appending the reply to `out`; after `MULTI`,
    /// queues it instead (answering `QUEUED`) until `EXEC` runs the queue in order and answers
    /// an array of the replies, or `DISCARD` drops it.
    pub fn execute(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) -> Outcome {
        if !transaction::runs_at_once(argv[0]) && self.queue(argv, out) {
            return Outcome::Continue;
        }
        self.run(argv, out)
    }

    /// Answers one command now.
    fn run(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) -> Outcome {
        let found = lookup(argv[0]);
        self.counts[found.map_or(TABLE.len(), |(i, _)| i)] += 1;
        match found {
            None => unknown_command(argv, out),
            Some((_, command)) if !command.takes(argv.len()) => arity_error(out, argv[0]),
            Some((_, command)) if !command.writes() => (command.run)(self, argv, out),
            Some((_, command)) => match self.may_write() {
                Err(message) => reply::error(out, message),
                Ok(()) => blocking(|| (command.run)(self, argv, out)),
            },
        }
        if std::mem::take(&mut self.quit) {
            Outcome::Close
        } else {
            Outcome::Continue
        }
    }
}

fn arity_error(out: &mut Vec<u8>, name: &[u8]) {
    reply::error(
        out,
        &format!(
            "ERR wrong number of arguments for '{}' command",
            String::from_utf8_lossy(name).to_lowercase()
        ),
    );
}

/// Redis' error for a command it does not know, naming its first arguments.
fn unknown_command(argv: &[&[u8]], out: &mut Vec<u8>) {
    let mut message = format!(
        "ERR unknown command '{}', with args beginning with:",
        String::from_utf8_lossy(argv[0])
    );
    for arg in argv[1..].iter().take(8) {
        message.push_str(&format!(" '{}'", String::from_utf8_lossy(arg)));
    }
    reply::error(out, &message);
}

/// Redis' error for a subcommand `sub` of `command` it does not know.
fn unknown_subcommand(out: &mut Vec<u8>, command: &str, sub: &[u8]) {
    reply::error(
        out,
        &format!(
            "ERR unknown subcommand '{}'. Try {command} HELP.",
            String::from_utf8_lossy(sub)
        ),
    );
}

/// Why the options of `BF.INSERT` or `CF.INSERT` were refused.
#[derive(Debug)]
enum InsertError {
    /// An option without its value, or no item after `ITEMS`: the arity error.
    Arity,
    /// RedisBloom's error line.
    Message(&'static str),
}

/// The options `BF.INSERT` or `CF.INSERT` (named `name`) read, or `None` once the refusal is
/// replied.
fn insert_options<T>(parsed: Result<T, InsertError>, out: &mut Vec<u8>, name: &[u8]) -> Option<T> {
    match parsed {
        Ok(options) => Some(options),
        Err(InsertError::Arity) => {
            arity_error(out, name);
            None
        }
        Err(InsertError::Message(message)) => {
            reply::error(out, message);
            None
        }
    }
}

fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

fn parse_i64(bytes: &[u8]) -> Option<i64> {
    text(bytes)?.parse().ok()
}

fn parse_f64(bytes: &[u8]) -> Option<f64> {
    text(bytes)?.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Runs blocking work (a write that saves a file) without stalling the runtime's other tasks
/// where the runtime allows it.
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// A library error as a RESP error line (`ERR …` unless it carries its own code).
fn error_message(error: &Error) -> String {
    if let Some(phishbloom_core::Error::CategoryNeeded { available, .. }) = error.core() {
        // The Redis protocol has no category argument: say where one can be given.
        return format!(
            "ERR the list has several categories ({available}): add entries to it over HTTP \
             (POST /v1/lists/NAME/entries) with a \"category\""
        );
    }
    let text = error.to_string();
    let coded = text
        .split_once(' ')
        .is_some_and(|(code, _)| !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase()));
    if coded {
        text
    } else {
        format!("ERR {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session on a server with no served list and the token `t`, authenticated.
    pub(super) fn session() -> Session {
        let shared = Arc::new(Shared::new(
            crate::Lists::open(&[], Arc::default()).unwrap(),
            crate::Limits::default(),
            crate::Token::new(b"t"),
        ));
        let mut session = Session::new(shared);
        assert_eq!(run(&mut session, &["AUTH", "t"]), "+OK\r\n");
        session
    }

    /// One command's reply, as text.
    pub(super) fn run(session: &mut Session, argv: &[&str]) -> String {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        let mut out = Vec::new();
        session.execute(&argv, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn commands_are_found_without_case() {
        let name = |n: &[u8]| lookup(n).map(|(_, command)| command.name);
        assert_eq!(name(b"bf.mexists"), Some("BF.MEXISTS"));
        assert_eq!(name(b"Ping"), Some("PING"));
        assert_eq!(name(b"GET"), None);
    }

    #[test]
    fn write_commands_need_auth_and_the_others_do_not() {
        let shared = Arc::new(Shared::new(
            crate::Lists::open(&[], Arc::default()).unwrap(),
            crate::Limits::default(),
            crate::Token::new(b"t"),
        ));
        let mut s = Session::new(shared);
        assert_eq!(
            run(&mut s, &["BF.ADD", "b", "x"]),
            "-NOAUTH Authentication required.\r\n"
        );
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "x"]), ":0\r\n");
        assert_eq!(
            run(&mut s, &["BF.ADD", "b"]),
            "-ERR wrong number of arguments for 'bf.add' command\r\n"
        );
        assert_eq!(
            run(&mut s, &["NOPE", "a"]),
            "-ERR unknown command 'NOPE', with args beginning with: 'a'\r\n"
        );
        let mut out = Vec::new();
        assert_eq!(s.execute(&[b"QUIT"], &mut out), Outcome::Close);
        assert_eq!(out, b"+OK\r\n");
    }

    #[test]
    fn errors_keep_their_code() {
        let full = error_message(&Error::Full {
            kind: phishbloom_core::Kind::Blocked,
            items: 3,
        });
        assert_eq!(full, "ERR non scaling filter is full");
        assert_eq!(
            error_message(&Error::Unsupported("ERR x y".into())),
            "ERR x y"
        );
    }
}
