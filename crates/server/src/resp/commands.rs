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

use std::sync::Arc;

use phishbloom_core::engine::Scratch;
use phishbloom_core::structure::EXPANSION as SERVED_EXPANSION;

use super::reply::{self, Proto};
use crate::adhoc::{
    CuckooAdd, Filter, ScalingBloom, ScalingCuckoo, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_CAPACITY,
    CF_DEFAULT_EXPANSION, CF_DEFAULT_MAX_ITERATIONS,
};
use crate::error::Error;
use crate::lists::{add_item, Slot, State};
use crate::metrics::CommandLabels;
use crate::Shared;

/// RedisBloom's `WRONGTYPE` error.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// RedisBloom's error for a key that does not exist where one must.
pub const NOT_FOUND: &str = "ERR not found";
/// The error for a dump, `BF.DEBUG` or `CF.INFO` of a served list.
pub const SERVED_LIST: &str = "ERR a served blocklist (a file): BF.DEBUG, CF.INFO, SCANDUMP and LOADCHUNK work on filters created over this protocol; fetch a served list's file with GET /v1/lists/NAME/file";
/// RedisBloom's default error rate for filters created by `BF.ADD`.
const BF_DEFAULT_ERROR_RATE: f64 = 0.01;
/// RedisBloom's default capacity for filters created by `BF.ADD`.
const BF_DEFAULT_CAPACITY: u64 = 100;
/// RedisBloom's default growth factor.
const BF_DEFAULT_EXPANSION: u32 = 2;

/// What the connection does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go on.
    Continue,
    /// Write the replies and close (`QUIT`).
    Close,
}

/// The commands this server knows, for counting (the metrics label) and `COMMAND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmd {
    Ping,
    Echo,
    Hello,
    Auth,
    Command,
    Client,
    Select,
    Quit,
    Reset,
    Config,
    Info,
    Dbsize,
    Exists,
    Type,
    BfExists,
    BfMexists,
    BfAdd,
    BfMadd,
    BfInsert,
    BfReserve,
    BfInfo,
    BfCard,
    CfAdd,
    CfAddnx,
    CfDel,
    CfExists,
    CfMexists,
    CfCount,
    CfReserve,
    CfInsert,
    CfInsertnx,
    CfInfo,
    BfDebug,
    BfScandump,
    BfLoadchunk,
    CfScandump,
    CfLoadchunk,
    Del,
    Multi,
    Exec,
    Discard,
    Unknown,
}

/// Every known command: name, the `Cmd`, arity (Redis' convention: negative means at least),
/// flags, and whether it writes.
const TABLE: &[(&str, Cmd, i64, &str)] = &[
    ("PING", Cmd::Ping, -1, "fast"),
    ("ECHO", Cmd::Echo, 2, "fast"),
    ("HELLO", Cmd::Hello, -1, "fast"),
    ("AUTH", Cmd::Auth, -2, "fast"),
    ("COMMAND", Cmd::Command, -1, "loading"),
    ("CLIENT", Cmd::Client, -2, "loading"),
    ("SELECT", Cmd::Select, 2, "fast"),
    ("QUIT", Cmd::Quit, -1, "fast"),
    ("RESET", Cmd::Reset, 1, "fast"),
    ("CONFIG", Cmd::Config, -2, "admin"),
    ("INFO", Cmd::Info, -1, "loading"),
    ("DBSIZE", Cmd::Dbsize, 1, "readonly"),
    ("EXISTS", Cmd::Exists, -2, "readonly"),
    ("TYPE", Cmd::Type, 2, "readonly"),
    ("BF.EXISTS", Cmd::BfExists, 3, "readonly"),
    ("BF.MEXISTS", Cmd::BfMexists, -3, "readonly"),
    ("BF.ADD", Cmd::BfAdd, 3, "write"),
    ("BF.MADD", Cmd::BfMadd, -3, "write"),
    ("BF.INSERT", Cmd::BfInsert, -4, "write"),
    ("BF.RESERVE", Cmd::BfReserve, -4, "write"),
    ("BF.INFO", Cmd::BfInfo, -2, "readonly"),
    ("BF.CARD", Cmd::BfCard, 2, "readonly"),
    ("CF.ADD", Cmd::CfAdd, 3, "write"),
    ("CF.ADDNX", Cmd::CfAddnx, 3, "write"),
    ("CF.DEL", Cmd::CfDel, 3, "write"),
    ("CF.EXISTS", Cmd::CfExists, 3, "readonly"),
    ("CF.MEXISTS", Cmd::CfMexists, -3, "readonly"),
    ("CF.COUNT", Cmd::CfCount, 3, "readonly"),
    ("CF.RESERVE", Cmd::CfReserve, -3, "write"),
    ("CF.INSERT", Cmd::CfInsert, -4, "write"),
    ("CF.INSERTNX", Cmd::CfInsertnx, -4, "write"),
    ("CF.INFO", Cmd::CfInfo, 2, "readonly"),
    ("BF.DEBUG", Cmd::BfDebug, 2, "readonly"),
    ("BF.SCANDUMP", Cmd::BfScandump, 3, "readonly"),
    ("BF.LOADCHUNK", Cmd::BfLoadchunk, 4, "write"),
    ("CF.SCANDUMP", Cmd::CfScandump, 3, "readonly"),
    ("CF.LOADCHUNK", Cmd::CfLoadchunk, 4, "write"),
    ("DEL", Cmd::Del, -2, "write"),
    ("UNLINK", Cmd::Del, -2, "write"),
    ("MULTI", Cmd::Multi, 1, "fast"),
    ("EXEC", Cmd::Exec, 1, "loading"),
    ("DISCARD", Cmd::Discard, 1, "fast"),
];

fn lookup(name: &[u8]) -> (Cmd, usize) {
    TABLE
        .iter()
        .enumerate()
        .find(|(_, (n, ..))| n.as_bytes().eq_ignore_ascii_case(name))
        .map_or((Cmd::Unknown, TABLE.len()), |(i, (_, cmd, ..))| (*cmd, i))
}

/// RedisBloom's two types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Bloom,
    Cuckoo,
}

fn family_of(state: &State) -> Family {
    if state.list.kind().deletes() {
        Family::Cuckoo
    } else {
        Family::Bloom
    }
}

/// One connection's state: protocol version, authentication, reusable buffers and the
/// commands counted since the last flush.
pub struct Session {
    shared: Arc<Shared>,
    proto: Proto,
    authenticated: bool,
    scratch: Scratch,
    counts: Vec<u64>,
    checked: u64,
    listed: u64,
    id: u64,
    /// The commands queued since `MULTI`, until `EXEC` or `DISCARD`.
    transaction: Option<Transaction>,
}

/// A transaction being queued: the commands (owned: the read buffer moves on), their bytes,
/// and whether one was refused while queuing (`EXEC` then discards them all, as Redis does).
#[derive(Default)]
struct Transaction {
    commands: Vec<Vec<Vec<u8>>>,
    bytes: usize,
    failed: bool,
}

/// The most bytes of arguments one transaction may queue (a client that never sends `EXEC`
/// cannot make the server hold more).
const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Connection ids for `HELLO` and `CLIENT ID`.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn arity_error(out: &mut Vec<u8>, name: &[u8]) {
    reply::error(
        out,
        &format!(
            "ERR wrong number of arguments for '{}' command",
            String::from_utf8_lossy(name).to_lowercase()
        ),
    );
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
        }
    }

    /// Adds the counts since the last flush to the metrics.
    pub fn flush_counts(&mut self) {
        let metrics = self.shared.lists.metrics();
        for (i, count) in self.counts.iter_mut().enumerate() {
            if *count > 0 {
                let command = TABLE.get(i).map_or("unknown", |(name, ..)| name);
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
        if let Some(transaction) = &mut self.transaction {
            let (cmd, index) = lookup(argv[0]);
            match cmd {
                Cmd::Exec | Cmd::Discard | Cmd::Multi | Cmd::Quit | Cmd::Reset => {}
                _ => {
                    let n = argv.len() as i64;
                    let bad_arity = TABLE.get(index).is_some_and(|(_, _, arity, _)| {
                        (*arity >= 0 && n != *arity) || (*arity < 0 && n < -arity)
                    });
                    let bytes: usize = argv.iter().map(|a| a.len()).sum();
                    if cmd == Cmd::Unknown || bad_arity {
                        // Refused now, and the transaction with it (Redis' rule).
                        transaction.failed = true;
                        return self.run(argv, out);
                    }
                    if transaction.bytes + bytes > MAX_QUEUED_BYTES {
                        transaction.failed = true;
                        reply::error(
                            out,
                            &format!("ERR a transaction queues at most {MAX_QUEUED_BYTES} bytes of arguments"),
                        );
                        return Outcome::Continue;
                    }
                    transaction.bytes += bytes;
                    transaction
                        .commands
                        .push(argv.iter().map(|a| a.to_vec()).collect());
                    reply::simple(out, "QUEUED");
                    return Outcome::Continue;
                }
            }
        }
        self.run(argv, out)
    }

    /// `EXEC`: the queued commands in order, their replies in one array.
    fn exec(&mut self, out: &mut Vec<u8>) {
        let Some(transaction) = self.transaction.take() else {
            return reply::error(out, "ERR EXEC without MULTI");
        };
        if transaction.failed {
            return reply::error(
                out,
                "EXECABORT Transaction discarded because of previous errors.",
            );
        }
        reply::array(out, transaction.commands.len());
        for command in &transaction.commands {
            let argv: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
            // Every queued command writes exactly one reply (QUIT and RESET are not queued).
            self.run(&argv, out);
        }
    }

    /// Answers one command now.
    fn run(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) -> Outcome {
        let (cmd, index) = lookup(argv[0]);
        self.counts[index] += 1;
        if let Some((_, _, arity, _)) = TABLE.get(index) {
            let n = argv.len() as i64;
            if (*arity >= 0 && n != *arity) || (*arity < 0 && n < -arity) {
                arity_error(out, argv[0]);
                return Outcome::Continue;
            }
        }
        match cmd {
            Cmd::Ping => match argv.len() {
                1 => reply::simple(out, "PONG"),
                2 => reply::bulk(out, argv[1]),
                _ => arity_error(out, argv[0]),
            },
            Cmd::Echo => reply::bulk(out, argv[1]),
            Cmd::Hello => self.hello(argv, out),
            Cmd::Auth => self.auth(argv, out),
            Cmd::Command => self.command(argv, out),
            Cmd::Client => self.client(argv, out),
            Cmd::Select => match parse_i64(argv[1]) {
                Some(0) => reply::simple(out, "OK"),
                Some(_) => reply::error(out, "ERR DB index is out of range"),
                None => reply::error(out, "ERR value is not an integer or out of range"),
            },
            Cmd::Quit => {
                reply::simple(out, "OK");
                return Outcome::Close;
            }
            Cmd::Reset => {
                self.proto = Proto::Resp2;
                self.authenticated = false;
                self.transaction = None;
                reply::simple(out, "RESET");
            }
            Cmd::Config => {
                // Clients and redis-benchmark ask for settings; there are none to tell.
                reply::map(out, 0, self.proto);
            }
            Cmd::Info => {
                let info = format!(
                    "# Server\r\nredis_version:7.2.0\r\nphishbloom_version:{}\r\nredis_mode:standalone\r\n# Keyspace\r\nlists:{}\r\nfilters:{}\r\n",
                    env!("CARGO_PKG_VERSION"),
                    self.shared.lists.registry().slots().len(),
                    self.shared.lists.adhoc().len()
                );
                reply::bulk(out, info.as_bytes());
            }
            Cmd::Dbsize => reply::int(
                out,
                (self.shared.lists.registry().slots().len() + self.shared.lists.adhoc().len())
                    as i64,
            ),
            Cmd::Exists => {
                let registry = self.shared.lists.registry();
                let adhoc = self.shared.lists.adhoc();
                let n = argv[1..]
                    .iter()
                    .filter(|k| registry.get(k).is_some() || adhoc.read(k, |_| ()).is_some())
                    .count();
                reply::int(out, n as i64);
            }
            Cmd::Type => match self.shared.lists.get(argv[1]) {
                None => match self.shared.lists.adhoc().read(argv[1], Filter::type_name) {
                    Some(name) => reply::simple(out, name),
                    None => reply::simple(out, "none"),
                },
                Some(slot) => match family_of(&slot.load().read()) {
                    Family::Bloom => reply::simple(out, "MBbloom--"),
                    Family::Cuckoo => reply::simple(out, "MBbloomCF"),
                },
            },
            Cmd::BfExists | Cmd::CfExists | Cmd::CfCount => {
                let family = if cmd == Cmd::BfExists {
                    Family::Bloom
                } else {
                    Family::Cuckoo
                };
                self.exists(family, argv[1], &argv[2..], false, cmd == Cmd::CfCount, out);
            }
            Cmd::BfMexists | Cmd::CfMexists => {
                let family = if cmd == Cmd::BfMexists {
                    Family::Bloom
                } else {
                    Family::Cuckoo
                };
                self.exists(family, argv[1], &argv[2..], true, false, out);
            }
            Cmd::BfInfo => self.bf_info(argv, out),
            Cmd::CfInfo => self.cf_info(argv[1], out),
            Cmd::BfCard => match self.shared.lists.get(argv[1]) {
                None => match self.shared.lists.adhoc().read(argv[1], |f| match f {
                    Filter::Bloom(b) => Some(b.items()),
                    Filter::Cuckoo(_) => None,
                }) {
                    None => reply::int(out, 0),
                    Some(None) => reply::error(out, WRONGTYPE),
                    Some(Some(items)) => reply::int(out, items as i64),
                },
                Some(slot) => {
                    let served = slot.load();
                    let state = served.read();
                    if family_of(&state) == Family::Cuckoo {
                        reply::error(out, WRONGTYPE);
                    } else {
                        reply::int(out, state.list.meta().entries as i64);
                    }
                }
            },
            Cmd::BfDebug => self.bf_debug(argv[1], out),
            Cmd::BfScandump | Cmd::CfScandump => {
                let family = if cmd == Cmd::BfScandump {
                    Family::Bloom
                } else {
                    Family::Cuckoo
                };
                self.scandump(family, argv[1], argv[2], out);
            }
            Cmd::Multi => {
                if self.transaction.is_some() {
                    reply::error(out, "ERR MULTI calls can not be nested");
                } else {
                    self.transaction = Some(Transaction::default());
                    reply::simple(out, "OK");
                }
            }
            Cmd::Exec => self.exec(out),
            Cmd::Discard => match self.transaction.take() {
                Some(_) => reply::simple(out, "OK"),
                None => reply::error(out, "ERR DISCARD without MULTI"),
            },
            Cmd::BfAdd
            | Cmd::BfMadd
            | Cmd::BfInsert
            | Cmd::BfReserve
            | Cmd::BfLoadchunk
            | Cmd::CfAdd
            | Cmd::CfAddnx
            | Cmd::CfDel
            | Cmd::CfReserve
            | Cmd::CfInsert
            | Cmd::CfInsertnx
            | Cmd::CfLoadchunk
            | Cmd::Del => {
                if let Err(message) = self.may_write() {
                    reply::error(out, message);
                } else {
                    blocking(|| self.write(cmd, argv, out));
                }
            }
            Cmd::Unknown => {
                let mut message = format!(
                    "ERR unknown command '{}', with args beginning with:",
                    String::from_utf8_lossy(argv[0])
                );
                for arg in argv[1..].iter().take(8) {
                    message.push_str(&format!(" '{}'", String::from_utf8_lossy(arg)));
                }
                reply::error(out, &message);
            }
        }
        Outcome::Continue
    }

    fn may_write(&self) -> Result<(), &'static str> {
        match &self.shared.token {
            None => Err(
                "ERR writes are off: start phishbloom serve with --token-file FILE to allow them",
            ),
            Some(_) if !self.authenticated => Err("NOAUTH Authentication required."),
            Some(_) => Ok(()),
        }
    }

    fn check_password(&mut self, password: &[u8]) -> bool {
        match &self.shared.token {
            Some(token) if token.matches(password) => {
                self.authenticated = true;
                true
            }
            _ => false,
        }
    }

    fn auth(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 3 {
            return arity_error(out, argv[0]);
        }
        if self.shared.token.is_none() {
            return reply::error(out, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
        }
        if self.check_password(argv[argv.len() - 1]) {
            reply::simple(out, "OK");
        } else {
            reply::error(
                out,
                "WRONGPASS invalid username-password pair or user is disabled.",
            );
        }
    }

    fn hello(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let mut proto = self.proto;
        let mut at = 1;
        if let Some(version) = argv.get(1) {
            proto = match parse_i64(version) {
                Some(2) => Proto::Resp2,
                Some(3) => Proto::Resp3,
                Some(_) => {
                    return reply::error(
                        out,
                        "NOPROTO sorry, this protocol version is not supported.",
                    )
                }
                None => {
                    return reply::error(
                        out,
                        "ERR Protocol version is not an integer or out of range",
                    )
                }
            };
            at = 2;
        }
        while at < argv.len() {
            let option = argv[at];
            if option.eq_ignore_ascii_case(b"AUTH") && at + 2 < argv.len() {
                // No token configured: every password is accepted (the default user has none),
                // and writes stay off.
                if self.shared.token.is_some() && !self.check_password(argv[at + 2]) {
                    return reply::error(
                        out,
                        "WRONGPASS invalid username-password pair or user is disabled.",
                    );
                }
                at += 3;
            } else if option.eq_ignore_ascii_case(b"SETNAME") && at + 1 < argv.len() {
                at += 2;
            } else {
                return reply::error(
                    out,
                    &format!(
                        "ERR Syntax error in HELLO option '{}'",
                        String::from_utf8_lossy(option)
                    ),
                );
            }
        }
        self.proto = proto;
        let p = self.proto;
        reply::map(out, 7, p);
        reply::bulk(out, b"server");
        reply::bulk(out, b"phishbloom");
        reply::bulk(out, b"version");
        reply::bulk(out, env!("CARGO_PKG_VERSION").as_bytes());
        reply::bulk(out, b"proto");
        reply::int(out, if p == Proto::Resp3 { 3 } else { 2 });
        reply::bulk(out, b"id");
        reply::int(out, self.id as i64);
        reply::bulk(out, b"mode");
        reply::bulk(out, b"standalone");
        reply::bulk(out, b"role");
        reply::bulk(out, b"master");
        reply::bulk(out, b"modules");
        reply::array(out, 1);
        reply::map(out, 2, p);
        reply::bulk(out, b"name");
        reply::bulk(out, b"bf");
        reply::bulk(out, b"ver");
        reply::int(out, 20_000);
    }

    fn command_info(out: &mut Vec<u8>, entry: &(&str, Cmd, i64, &str)) {
        let (name, _, arity, flag) = entry;
        let keyed = name.contains('.') || matches!(*name, "EXISTS" | "TYPE" | "DEL" | "UNLINK");
        reply::array(out, 10);
        reply::bulk(out, name.to_lowercase().as_bytes());
        reply::int(out, *arity);
        reply::array(out, 1);
        reply::simple(out, flag);
        let (first, last) = match (keyed, *name) {
            (false, _) => (0, 0),
            (true, "EXISTS" | "DEL" | "UNLINK") => (1, -1),
            (true, _) => (1, 1),
        };
        reply::int(out, first);
        reply::int(out, last);
        reply::int(out, i64::from(keyed));
        for _ in 0..4 {
            reply::array(out, 0);
        }
    }

    fn command(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let Some(sub) = argv.get(1) else {
            reply::array(out, TABLE.len());
            for entry in TABLE {
                Self::command_info(out, entry);
            }
            return;
        };
        if sub.eq_ignore_ascii_case(b"COUNT") {
            reply::int(out, TABLE.len() as i64);
        } else if sub.eq_ignore_ascii_case(b"DOCS") {
            // No documentation to give: an empty map tells clients (redis-cli's hints) so.
            reply::map(out, 0, self.proto);
        } else if sub.eq_ignore_ascii_case(b"INFO") {
            reply::array(out, argv.len() - 2);
            for name in &argv[2..] {
                match lookup(name) {
                    (Cmd::Unknown, _) => reply::null(out, self.proto),
                    (_, i) => Self::command_info(out, &TABLE[i]),
                }
            }
        } else {
            reply::error(
                out,
                &format!(
                    "ERR unknown subcommand '{}'. Try COMMAND HELP.",
                    String::from_utf8_lossy(sub)
                ),
            );
        }
    }

    fn client(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let sub = argv[1];
        if sub.eq_ignore_ascii_case(b"SETNAME") || sub.eq_ignore_ascii_case(b"SETINFO") {
            reply::simple(out, "OK");
        } else if sub.eq_ignore_ascii_case(b"GETNAME") {
            reply::null(out, self.proto);
        } else if sub.eq_ignore_ascii_case(b"ID") {
            reply::int(out, self.id as i64);
        } else {
            reply::error(
                out,
                &format!(
                    "ERR unknown subcommand '{}'. Try CLIENT HELP.",
                    String::from_utf8_lossy(sub)
                ),
            );
        }
    }

    /// `BF.EXISTS`, `BF.MEXISTS`, `CF.EXISTS`, `CF.MEXISTS`, `CF.COUNT` (`count`: a filter
    /// created here answers how many copies it holds; a served list holds an entry once).
    fn exists(
        &mut self,
        family: Family,
        key: &[u8],
        items: &[&[u8]],
        multi: bool,
        count: bool,
        out: &mut Vec<u8>,
    ) {
        let Some(slot) = self.shared.lists.get(key) else {
            let answers = self.shared.lists.adhoc().read(key, |filter| {
                let answer = |item: &&[u8]| -> i64 {
                    match filter {
                        Filter::Bloom(b) => i64::from(b.contains(item)),
                        Filter::Cuckoo(c) if count => c.count(item) as i64,
                        Filter::Cuckoo(c) => i64::from(c.contains(item)),
                    }
                };
                (family_of_filter(filter) == family).then(|| items.iter().map(answer).collect())
            });
            let answers: Vec<i64> = match answers {
                Some(None) => return reply::error(out, WRONGTYPE),
                Some(Some(answers)) => answers,
                None => vec![0; items.len()],
            };
            if multi {
                reply::array(out, items.len());
            }
            for answer in answers {
                reply::int(out, answer);
            }
            return;
        };
        let served = slot.load();
        let state = served.read();
        if family_of(&state) != family {
            return reply::error(out, WRONGTYPE);
        }
        if multi {
            reply::array(out, items.len());
        }
        let mut verdicts = Vec::with_capacity(items.len());
        state
            .list
            .check_batch(items, &mut self.scratch, &mut verdicts);
        for verdict in &verdicts {
            let listed = verdict.listed();
            self.listed += u64::from(listed);
            reply::int(out, i64::from(listed));
        }
        self.checked += items.len() as u64;
    }

    fn bf_info(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 3 {
            return arity_error(out, argv[0]);
        }
        let fields: [(&str, Option<i64>); 5] = match self.shared.lists.get(argv[1]) {
            Some(slot) => {
                let served = slot.load();
                let state = served.read();
                if family_of(&state) != Family::Bloom {
                    return reply::error(out, WRONGTYPE);
                }
                let (size, filters) = state.filters();
                [
                    ("Capacity", Some(state.capacity() as i64)),
                    ("Size", Some(size as i64)),
                    ("Number of filters", Some(filters as i64)),
                    (
                        "Number of items inserted",
                        Some(state.list.meta().entries as i64),
                    ),
                    (
                        "Expansion rate",
                        state.grows().then_some(SERVED_EXPANSION as i64),
                    ),
                ]
            }
            None => {
                let fields = self.shared.lists.adhoc().read(argv[1], |f| match f {
                    Filter::Bloom(b) => Some([
                        ("Capacity", Some(b.capacity() as i64)),
                        ("Size", Some(b.bytes() as i64)),
                        ("Number of filters", Some(b.filters() as i64)),
                        ("Number of items inserted", Some(b.items() as i64)),
                        ("Expansion rate", b.expansion().map(i64::from)),
                    ]),
                    Filter::Cuckoo(_) => None,
                });
                match fields {
                    None => return reply::error(out, NOT_FOUND),
                    Some(None) => return reply::error(out, WRONGTYPE),
                    Some(Some(fields)) => fields,
                }
            }
        };
        let value = |out: &mut Vec<u8>, v: Option<i64>, proto| match v {
            Some(v) => reply::int(out, v),
            None => reply::null(out, proto),
        };
        if let Some(field) = argv.get(2) {
            let pick = |name: &[u8]| -> Option<usize> {
                ["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"]
                    .iter()
                    .position(|f| f.as_bytes().eq_ignore_ascii_case(name))
            };
            let Some(i) = pick(field) else {
                return reply::error(out, "Invalid information value");
            };
            reply::array(out, 1);
            return value(out, fields[i].1, self.proto);
        }
        reply::map(out, fields.len(), self.proto);
        for (name, v) in fields {
            reply::simple(out, name);
            value(out, v, self.proto);
        }
    }

    /// Whether `key` names a served list, which the commands for filters created here refuse:
    /// then the error is written (the served list's own, for a list of `family`; a type error
    /// for the other).
    fn refuse_served(&self, key: &[u8], family: Family, out: &mut Vec<u8>) -> bool {
        let Some(slot) = self.shared.lists.get(key) else {
            return false;
        };
        let same = family_of(&slot.load().read()) == family;
        reply::error(out, if same { SERVED_LIST } else { WRONGTYPE });
        true
    }

    /// `CF.INFO`, for cuckoo filters created here (RedisBloom's eight fields).
    fn cf_info(&mut self, key: &[u8], out: &mut Vec<u8>) {
        if self.refuse_served(key, Family::Cuckoo, out) {
            return;
        }
        let fields = self.shared.lists.adhoc().read(key, |f| match f {
            Filter::Cuckoo(c) => Some([
                ("Size", c.bytes() as i64),
                ("Number of buckets", c.buckets() as i64),
                ("Number of filters", c.filters() as i64),
                ("Number of items inserted", c.items() as i64),
                ("Number of items deleted", c.deleted() as i64),
                ("Bucket size", i64::from(c.bucket_size())),
                ("Expansion rate", i64::from(c.expansion())),
                ("Max iterations", i64::from(c.max_iterations())),
            ]),
            Filter::Bloom(_) => None,
        });
        match fields {
            None => reply::error(out, NOT_FOUND),
            Some(None) => reply::error(out, WRONGTYPE),
            Some(Some(fields)) => {
                reply::map(out, fields.len(), self.proto);
                for (name, v) in fields {
                    reply::simple(out, name);
                    reply::int(out, v);
                }
            }
        }
    }

    /// `BF.DEBUG`: the item count and each layer's parameters, for Bloom filters created here.
    fn bf_debug(&mut self, key: &[u8], out: &mut Vec<u8>) {
        if self.refuse_served(key, Family::Bloom, out) {
            return;
        }
        let lines = self.shared.lists.adhoc().read(key, |f| match f {
            Filter::Bloom(b) => Some(b.debug()),
            Filter::Cuckoo(_) => None,
        });
        match lines {
            None => reply::error(out, NOT_FOUND),
            Some(None) => reply::error(out, WRONGTYPE),
            Some(Some(lines)) => {
                reply::array(out, lines.len());
                for line in lines {
                    reply::bulk(out, line.as_bytes());
                }
            }
        }
    }

    /// `BF.SCANDUMP` / `CF.SCANDUMP key iter`: `[next iter, chunk]` ([`Filter::dump_chunk`]).
    fn scandump(&mut self, family: Family, key: &[u8], iter: &[u8], out: &mut Vec<u8>) {
        let Some(iter) = parse_i64(iter).filter(|&i| i >= 0) else {
            return reply::error(out, "ERR Second argument must be numeric");
        };
        if self.refuse_served(key, family, out) {
            return;
        }
        let chunk = self.shared.lists.adhoc().read(key, |f| {
            (family_of_filter(f) == family).then(|| f.dump_chunk(iter as u64))
        });
        match chunk {
            None => reply::error(out, NOT_FOUND),
            Some(None) => reply::error(out, WRONGTYPE),
            Some(Some((next, bytes))) => {
                reply::array(out, 2);
                reply::int(out, next as i64);
                reply::bulk(out, &bytes);
            }
        }
    }

    /// The write commands (the session is allowed to write).
    fn write(&mut self, cmd: Cmd, argv: &[&[u8]], out: &mut Vec<u8>) {
        let key = argv[1];
        match cmd {
            Cmd::BfReserve => self.bf_reserve(argv, out),
            Cmd::BfAdd => self.bf_insert(key, &argv[2..], false, Create::default(), out),
            Cmd::BfMadd => self.bf_insert(key, &argv[2..], true, Create::default(), out),
            Cmd::BfInsert => match parse_insert(argv) {
                Ok((create, items)) => self.bf_insert(key, &argv[items..], true, create, out),
                Err(InsertError::Arity) => arity_error(out, argv[0]),
                Err(InsertError::Message(message)) => reply::error(out, message),
            },
            Cmd::CfAdd | Cmd::CfAddnx => {
                let nx = cmd == Cmd::CfAddnx;
                self.cf_insert(key, &argv[2..], nx, false, CF_DEFAULT_CAPACITY, true, out)
            }
            Cmd::CfInsert | Cmd::CfInsertnx => match parse_cf_insert(argv) {
                Ok((capacity, create, items)) => self.cf_insert(
                    key,
                    &argv[items..],
                    cmd == Cmd::CfInsertnx,
                    true,
                    capacity,
                    create,
                    out,
                ),
                Err(InsertError::Arity) => arity_error(out, argv[0]),
                Err(InsertError::Message(message)) => reply::error(out, message),
            },
            Cmd::CfReserve => self.cf_reserve(argv, out),
            Cmd::CfDel => self.cf_del(key, argv[2], out),
            Cmd::BfLoadchunk => self.loadchunk(Family::Bloom, argv, out),
            Cmd::CfLoadchunk => self.loadchunk(Family::Cuckoo, argv, out),
            Cmd::Del => self.del(&argv[1..], out),
            _ => reply::error(out, "ERR not a write command"),
        }
    }

    /// The reply to a command that would create `key` when a served list or another filter
    /// holds it: RedisBloom's `ERR item exists` for the same type, `WRONGTYPE` for the other.
    fn taken(&self, key: &[u8], family: Family) -> Option<&'static str> {
        let held = match self.shared.lists.get(key) {
            Some(slot) => Some(family_of(&slot.load().read())),
            None => self.shared.lists.adhoc().read(key, family_of_filter),
        };
        held.map(|held| {
            if held == family {
                "ERR item exists"
            } else {
                WRONGTYPE
            }
        })
    }

    fn bf_reserve(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 7 {
            return arity_error(out, argv[0]);
        }
        let error_rate = match parse_f64(argv[2]) {
            None => return reply::error(out, "ERR bad error rate"),
            Some(e) if e <= 0.0 || e >= 1.0 => {
                return reply::error(out, "ERR (0 < error rate range < 1) ")
            }
            Some(e) => e,
        };
        let capacity = match parse_i64(argv[3]) {
            None => return reply::error(out, "ERR bad capacity"),
            Some(c) if c <= 0 => {
                return reply::error(out, "ERR (capacity should be larger than 0)")
            }
            Some(c) => c as u64,
        };
        let rest = &argv[4..];
        let nonscaling = rest.iter().any(|a| a.eq_ignore_ascii_case(b"NONSCALING"));
        let mut expansion = BF_DEFAULT_EXPANSION;
        if let Some(at) = rest
            .iter()
            .position(|a| a.eq_ignore_ascii_case(b"EXPANSION"))
        {
            let Some(value) = rest.get(at + 1) else {
                return reply::error(out, "ERR no expansion");
            };
            if nonscaling {
                return reply::error(out, "Nonscaling filters cannot expand");
            }
            match parse_i64(value).and_then(|e| u32::try_from(e).ok()) {
                Some(e) if e >= 1 => expansion = e,
                _ => return reply::error(out, "ERR bad expansion"),
            }
        }
        if let Some(message) = self.taken(argv[1], Family::Bloom) {
            return reply::error(out, message);
        }
        let filter =
            match ScalingBloom::new(error_rate, capacity, (!nonscaling).then_some(expansion)) {
                Ok(filter) => Filter::Bloom(filter),
                Err(error) => return reply::error(out, &error.to_string()),
            };
        if self.shared.lists.adhoc().create(argv[1], filter) {
            reply::simple(out, "OK");
        } else {
            // Created by another connection meanwhile.
            reply::error(
                out,
                self.taken(argv[1], Family::Bloom)
                    .unwrap_or("ERR item exists"),
            );
        }
    }

    /// The served list `key` for a write of `family`: `None` if no list is served as `key`.
    fn served_for_write(
        &self,
        key: &[u8],
        family: Family,
    ) -> Option<Result<Arc<Slot>, &'static str>> {
        let slot = self.shared.lists.get(key)?;
        if family_of(&slot.load().read()) != family {
            return Some(Err(WRONGTYPE));
        }
        Some(Ok(slot))
    }

    fn bf_insert(
        &mut self,
        key: &[u8],
        items: &[&[u8]],
        multi: bool,
        create: Create,
        out: &mut Vec<u8>,
    ) {
        let results: Vec<Result<bool, String>> = match self.served_for_write(key, Family::Bloom) {
            Some(Err(message)) => return reply::error(out, message),
            Some(Ok(slot)) => {
                let results = self.shared.lists.change(&slot, |state| {
                    let mut results = Vec::with_capacity(items.len());
                    for item in items {
                        let result = add_item(state, item);
                        let stop = result.is_err();
                        results.push(result.map_err(|e| error_message(&e)));
                        if stop {
                            break;
                        }
                    }
                    Ok(results)
                });
                match results {
                    Ok(results) => results,
                    Err(error) => return reply::error(out, &error_message(&error)),
                }
            }
            None => {
                let add = |filter: &mut Filter| match filter {
                    Filter::Bloom(bloom) => {
                        let mut results = Vec::with_capacity(items.len());
                        for item in items {
                            let result = bloom.add(item);
                            let stop = result.is_err();
                            results.push(result.map_err(|e| e.to_string()));
                            if stop {
                                break;
                            }
                        }
                        Some(results)
                    }
                    Filter::Cuckoo(_) => None,
                };
                let adhoc = self.shared.lists.adhoc();
                let results = if create.autocreate {
                    let make = || {
                        ScalingBloom::new(create.error_rate, create.capacity, create.expansion)
                            .map(Filter::Bloom)
                    };
                    match adhoc.write_or_create(key, make, add) {
                        Ok(results) => Some(results),
                        Err(error) => return reply::error(out, &error.to_string()),
                    }
                } else {
                    adhoc.write(key, add)
                };
                match results {
                    None => return reply::error(out, NOT_FOUND),
                    Some(None) => return reply::error(out, WRONGTYPE),
                    Some(Some(results)) => results,
                }
            }
        };
        if multi {
            reply::array(out, results.len());
        }
        for result in results {
            match result {
                Ok(added) => reply::int(out, i64::from(added)),
                Err(message) => reply::error(out, &message),
            }
        }
    }

    /// `CF.ADD`/`CF.ADDNX` (one item, `multi` false: an error for a full filter) and
    /// `CF.INSERT`/`CF.INSERTNX` (an array, -1 for an item that did not fit); a missing key is
    /// created for `capacity` items unless `create` is false.
    #[allow(clippy::too_many_arguments)]
    fn cf_insert(
        &mut self,
        key: &[u8],
        items: &[&[u8]],
        nx: bool,
        multi: bool,
        capacity: u64,
        create: bool,
        out: &mut Vec<u8>,
    ) {
        // 1 added, 0 present (NX), or why it did not fit.
        let results: Vec<Result<bool, String>> = match self.served_for_write(key, Family::Cuckoo) {
            Some(Err(message)) => return reply::error(out, message),
            Some(Ok(slot)) => {
                // One change (one save of the file) for every item; each answers for itself.
                let results = self.shared.lists.change(&slot, |state| {
                    Ok(items
                        .iter()
                        .map(|item| match state.list.add(&[item], None) {
                            // A served list holds an entry once: CF.ADD of a present item
                            // answers 1 and stores nothing; CF.ADDNX answers 0.
                            Ok(change) => Ok(!nx || change.changed > 0),
                            // RedisBloom's words for a cuckoo filter without room.
                            Err(phishbloom_core::Error::Full { kind, .. }) => {
                                Err(crate::error::full_reason(kind).to_owned())
                            }
                            Err(error) => Err(error_message(&Error::from_list(error))),
                        })
                        .collect::<Vec<_>>())
                });
                match results {
                    Ok(results) => results,
                    Err(error) => return reply::error(out, &error_message(&error)),
                }
            }
            None => {
                let add = |filter: &mut Filter| match filter {
                    Filter::Cuckoo(cuckoo) => Some(
                        items
                            .iter()
                            .map(|item| match cuckoo.add(item, nx) {
                                Ok(added) => Ok(added == CuckooAdd::Added),
                                Err(error) => Err(error.to_string()),
                            })
                            .collect::<Vec<_>>(),
                    ),
                    Filter::Bloom(_) => None,
                };
                let adhoc = self.shared.lists.adhoc();
                let results = if create {
                    let make = || ScalingCuckoo::with_capacity(capacity).map(Filter::Cuckoo);
                    match adhoc.write_or_create(key, make, add) {
                        Ok(results) => Some(results),
                        Err(error) => return reply::error(out, &error.to_string()),
                    }
                } else {
                    adhoc.write(key, add)
                };
                match results {
                    None => return reply::error(out, NOT_FOUND),
                    Some(None) => return reply::error(out, WRONGTYPE),
                    Some(Some(results)) => results,
                }
            }
        };
        if multi {
            reply::array(out, results.len());
            for result in results {
                reply::int(out, result.map_or(-1, i64::from));
            }
        } else {
            for result in results {
                match result {
                    Ok(added) => reply::int(out, i64::from(added)),
                    Err(message) => reply::error(out, &message),
                }
            }
        }
    }

    /// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`, checked as
    /// RedisBloom checks it.
    fn cf_reserve(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len().is_multiple_of(2) {
            return arity_error(out, argv[0]);
        }
        let Some(capacity) = parse_i64(argv[2]).filter(|&c| c > 0) else {
            return reply::error(out, "Bad capacity");
        };
        let (mut bucket_size, mut max_iterations, mut expansion) = (
            CF_DEFAULT_BUCKET_SIZE,
            CF_DEFAULT_MAX_ITERATIONS,
            CF_DEFAULT_EXPANSION,
        );
        for pair in argv[3..].chunks(2) {
            let (option, value) = (pair[0], parse_i64(pair[1]));
            if option.eq_ignore_ascii_case(b"BUCKETSIZE") {
                match value.filter(|v| (1..=255).contains(v)) {
                    Some(v) => bucket_size = v as u16,
                    None => {
                        return reply::error(
                            out,
                            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
                        )
                    }
                }
            } else if option.eq_ignore_ascii_case(b"MAXITERATIONS") {
                match value.filter(|v| (1..=65535).contains(v)) {
                    Some(v) => max_iterations = v as u16,
                    None => return reply::error(
                        out,
                        "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
                    ),
                }
            } else if option.eq_ignore_ascii_case(b"EXPANSION") {
                match value.filter(|v| (0..=32768).contains(v)) {
                    Some(v) => expansion = v as u16,
                    None => {
                        return reply::error(
                            out,
                            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
                        )
                    }
                }
            } else {
                return reply::error(out, "Unknown argument received");
            }
        }
        if (capacity as u64) < u64::from(bucket_size) * 2 {
            return reply::error(out, "Capacity must be at least (BucketSize * 2)");
        }
        if let Some(message) = self.taken(argv[1], Family::Cuckoo) {
            return reply::error(out, message);
        }
        let filter =
            match ScalingCuckoo::new(capacity as u64, bucket_size, max_iterations, expansion) {
                Ok(filter) => Filter::Cuckoo(filter),
                Err(error) => return reply::error(out, &error.to_string()),
            };
        if self.shared.lists.adhoc().create(argv[1], filter) {
            reply::simple(out, "OK");
        } else {
            reply::error(
                out,
                self.taken(argv[1], Family::Cuckoo)
                    .unwrap_or("ERR item exists"),
            );
        }
    }

    fn cf_del(&mut self, key: &[u8], item: &[u8], out: &mut Vec<u8>) {
        let slot = match self.served_for_write(key, Family::Cuckoo) {
            Some(Ok(slot)) => slot,
            Some(Err(message)) => return reply::error(out, message),
            None => {
                let deleted = self.shared.lists.adhoc().write(key, |f| match f {
                    Filter::Cuckoo(c) => Some(c.delete(item)),
                    Filter::Bloom(_) => None,
                });
                return match deleted {
                    None => reply::error(out, NOT_FOUND),
                    Some(None) => reply::error(out, WRONGTYPE),
                    Some(Some(deleted)) => reply::int(out, i64::from(deleted)),
                };
            }
        };
        match self
            .shared
            .lists
            .change(&slot, |state| Ok(state.list.remove(&[item], None)?))
        {
            Ok(change) => reply::int(out, i64::from(change.changed > 0)),
            // Not in the list: RedisBloom answers 0.
            Err(error)
                if matches!(error.core(), Some(phishbloom_core::Error::NotListed { .. })) =>
            {
                reply::int(out, 0)
            }
            Err(error) => reply::error(out, &error_message(&error)),
        }
    }

    /// `BF.LOADCHUNK` / `CF.LOADCHUNK key iter data`: iterator 1 carries the header (the filter
    /// is created from it), the others data ([`Filter::load_chunk`]).
    fn loadchunk(&mut self, family: Family, argv: &[&[u8]], out: &mut Vec<u8>) {
        let (key, data) = (argv[1], argv[3]);
        let Some(iter) = parse_i64(argv[2]).filter(|&i| i >= 1) else {
            return reply::error(out, "ERR Second argument must be numeric");
        };
        if self.refuse_served(key, family, out) {
            return;
        }
        let adhoc = self.shared.lists.adhoc();
        if iter == 1 {
            let filter = match Filter::from_header(data) {
                Ok(filter) if family_of_filter(&filter) == family => filter,
                Ok(_) => return reply::error(out, "ERR invalid chunk: a header of the other type"),
                Err(error) => return reply::error(out, &error.to_string()),
            };
            if !adhoc.create(key, filter) {
                return reply::error(out, "ERR item exists");
            }
            return reply::simple(out, "OK");
        }
        let loaded = adhoc.write(key, |f| {
            (family_of_filter(f) == family).then(|| f.load_chunk(iter as u64, data))
        });
        match loaded {
            None => reply::error(out, NOT_FOUND),
            Some(None) => reply::error(out, WRONGTYPE),
            Some(Some(Err(error))) => reply::error(out, &error.to_string()),
            Some(Some(Ok(()))) => reply::simple(out, "OK"),
        }
    }

    /// `DEL`/`UNLINK`: removes filters created here; a served list (a file) is refused, and
    /// nothing is removed then.
    fn del(&mut self, keys: &[&[u8]], out: &mut Vec<u8>) {
        if let Some(served) = keys.iter().find(|k| self.shared.lists.get(k).is_some()) {
            return reply::error(
                out,
                &format!(
                    "ERR '{}' is a served blocklist (a file): DEL removes only filters created over this protocol",
                    String::from_utf8_lossy(served)
                ),
            );
        }
        let adhoc = self.shared.lists.adhoc();
        let removed = keys.iter().filter(|k| adhoc.remove(k)).count();
        reply::int(out, removed as i64);
    }
}

/// The type of a filter created here.
fn family_of_filter(filter: &Filter) -> Family {
    match filter {
        Filter::Bloom(_) => Family::Bloom,
        Filter::Cuckoo(_) => Family::Cuckoo,
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

/// How a missing Bloom key is created by `BF.ADD`, `BF.MADD` and `BF.INSERT`.
#[derive(Clone, Copy, Debug)]
struct Create {
    autocreate: bool,
    error_rate: f64,
    capacity: u64,
    /// `None`: non-scaling.
    expansion: Option<u32>,
}

impl Default for Create {
    fn default() -> Self {
        Create {
            autocreate: true,
            error_rate: BF_DEFAULT_ERROR_RATE,
            capacity: BF_DEFAULT_CAPACITY,
            expansion: Some(BF_DEFAULT_EXPANSION),
        }
    }
}

enum InsertError {
    Arity,
    Message(&'static str),
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item…`,
/// read as RedisBloom reads it (by each option's first letters). Returns the creation options and
/// where the items start.
fn parse_insert(argv: &[&[u8]]) -> Result<(Create, usize), InsertError> {
    let mut create = Create::default();
    let mut nonscaling = false;
    let mut expansion = i64::from(BF_DEFAULT_EXPANSION);
    let mut capacity = BF_DEFAULT_CAPACITY as i64;
    let mut at = 2;
    let mut items = None;
    while at < argv.len() && items.is_none() {
        let option = argv[at].to_ascii_lowercase();
        match option.first() {
            Some(b'i') => {
                at += 1;
                items = Some(at);
            }
            Some(b'e') => {
                at += 1;
                let value = argv.get(at).ok_or(InsertError::Arity)?;
                if option.get(1) == Some(&b'r') {
                    create.error_rate =
                        parse_f64(value).ok_or(InsertError::Message("Bad error rate"))?;
                } else {
                    expansion = parse_i64(value).ok_or(InsertError::Message("Bad expansion"))?;
                }
                at += 1;
            }
            Some(b'c') => {
                at += 1;
                let value = argv.get(at).ok_or(InsertError::Arity)?;
                capacity = parse_i64(value).ok_or(InsertError::Message("Bad capacity"))?;
                at += 1;
            }
            Some(b'n') => {
                if option.get(2) == Some(&b'c') {
                    create.autocreate = false;
                } else {
                    nonscaling = true;
                }
                at += 1;
            }
            _ => return Err(InsertError::Message("Unknown argument received")),
        }
    }
    let items = items
        .filter(|&i| i < argv.len())
        .ok_or(InsertError::Arity)?;
    let expansion = u32::try_from(expansion).ok().filter(|&e| e >= 1);
    if create.error_rate <= 0.0 || create.error_rate >= 1.0 || capacity < 1 || expansion.is_none() {
        return Err(InsertError::Message("Bad argument received"));
    }
    create.capacity = capacity as u64;
    create.expansion = expansion.filter(|_| !nonscaling);
    Ok((create, items))
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…` (and `CF.INSERTNX`): the capacity of a
/// filter it creates, whether it may create one, and where the items start.
fn parse_cf_insert(argv: &[&[u8]]) -> Result<(u64, bool, usize), InsertError> {
    let (mut capacity, mut create) = (CF_DEFAULT_CAPACITY, true);
    let mut at = 2;
    while at < argv.len() {
        let option = argv[at];
        if option.eq_ignore_ascii_case(b"ITEMS") {
            return if at + 1 < argv.len() {
                Ok((capacity, create, at + 1))
            } else {
                Err(InsertError::Arity)
            };
        } else if option.eq_ignore_ascii_case(b"CAPACITY") {
            let value = argv.get(at + 1).ok_or(InsertError::Arity)?;
            capacity = parse_i64(value)
                .filter(|&c| c > 0)
                .ok_or(InsertError::Message("Bad capacity"))? as u64;
            at += 2;
        } else if option.eq_ignore_ascii_case(b"NOCREATE") {
            create = false;
            at += 1;
        } else {
            return Err(InsertError::Message("Unknown argument received"));
        }
    }
    Err(InsertError::Arity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_options_read_like_redisbloom() {
        let argv: Vec<&[u8]> = vec![
            b"BF.INSERT",
            b"k",
            b"CAPACITY",
            b"10",
            b"error",
            b"0.1",
            b"NONSCALING",
            b"ITEMS",
            b"a",
            b"b",
        ];
        let (create, items) = parse_insert(&argv).ok().unwrap();
        assert_eq!(items, 8);
        assert_eq!(create.capacity, 10);
        assert_eq!(create.error_rate, 0.1);
        assert_eq!(create.expansion, None);
        assert!(create.autocreate);
        let argv: Vec<&[u8]> = vec![
            b"BF.INSERT",
            b"k",
            b"NOCREATE",
            b"EXPANSION",
            b"4",
            b"ITEMS",
            b"a",
        ];
        let (create, _) = parse_insert(&argv).ok().unwrap();
        assert!(!create.autocreate);
        assert_eq!(create.expansion, Some(4));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"ITEMS"];
        assert!(matches!(parse_insert(&argv), Err(InsertError::Arity)));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"BOGUS", b"ITEMS", b"a"];
        assert!(matches!(
            parse_insert(&argv),
            Err(InsertError::Message("Unknown argument received"))
        ));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"ERROR", b"2", b"ITEMS", b"a"];
        assert!(matches!(
            parse_insert(&argv),
            Err(InsertError::Message("Bad argument received"))
        ));
    }

    /// A session on a server with no served list and the token `t`, authenticated.
    fn session() -> Session {
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
    fn run(session: &mut Session, argv: &[&str]) -> String {
        let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        let mut out = Vec::new();
        session.execute(&argv, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn multi_queues_and_exec_answers_an_array() {
        let mut s = session();
        assert_eq!(run(&mut s, &["EXEC"]), "-ERR EXEC without MULTI\r\n");
        assert_eq!(run(&mut s, &["MULTI"]), "+OK\r\n");
        assert_eq!(
            run(&mut s, &["MULTI"]),
            "-ERR MULTI calls can not be nested\r\n"
        );
        assert_eq!(run(&mut s, &["BF.ADD", "b", "x"]), "+QUEUED\r\n");
        assert_eq!(run(&mut s, &["BF.MEXISTS", "b", "x", "y"]), "+QUEUED\r\n");
        // Nothing ran yet.
        assert_eq!(s.shared.lists.adhoc().len(), 0);
        assert_eq!(run(&mut s, &["EXEC"]), "*2\r\n:1\r\n*2\r\n:1\r\n:0\r\n");
        // An unknown command or a wrong arity discards the whole transaction.
        run(&mut s, &["MULTI"]);
        assert_eq!(run(&mut s, &["BF.ADD", "b", "z"]), "+QUEUED\r\n");
        assert!(run(&mut s, &["BF.ADD", "b"]).starts_with("-ERR wrong number"));
        assert_eq!(
            run(&mut s, &["EXEC"]),
            "-EXECABORT Transaction discarded because of previous errors.\r\n"
        );
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "z"]), ":0\r\n");
        run(&mut s, &["MULTI"]);
        run(&mut s, &["BF.ADD", "b", "z"]);
        assert_eq!(run(&mut s, &["DISCARD"]), "+OK\r\n");
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "z"]), ":0\r\n");
        assert_eq!(run(&mut s, &["DISCARD"]), "-ERR DISCARD without MULTI\r\n");
    }

    #[test]
    fn cuckoo_counts_each_add_and_reserve_checks_options() {
        let mut s = session();
        assert_eq!(
            run(
                &mut s,
                &[
                    "CF.RESERVE",
                    "c",
                    "1000",
                    "BUCKETSIZE",
                    "4",
                    "MAXITERATIONS",
                    "10",
                    "EXPANSION",
                    "2"
                ]
            ),
            "+OK\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "c", "1000"]),
            "-ERR item exists\r\n"
        );
        assert!(
            run(&mut s, &["CF.RESERVE", "d", "1000", "BUCKETSIZE", "0"]).starts_with("-BUCKETSIZE")
        );
        assert!(
            run(&mut s, &["CF.RESERVE", "d", "3", "BUCKETSIZE", "2"]).starts_with("-Capacity must")
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "d", "1000", "BOGUS", "1"]),
            "-Unknown argument received\r\n"
        );
        assert_eq!(run(&mut s, &["CF.ADD", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.ADD", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.COUNT", "c", "x"]), ":2\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":0\r\n");
        assert_eq!(
            run(&mut s, &["CF.INSERTNX", "c", "ITEMS", "y", "y"]),
            "*2\r\n:1\r\n:0\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.INSERT", "n", "NOCREATE", "ITEMS", "y"]),
            "-ERR not found\r\n"
        );
        let info = run(&mut s, &["CF.INFO", "c"]);
        assert!(info.contains("+Bucket size\r\n:4\r\n"), "{info}");
        assert!(info.contains("+Max iterations\r\n:10\r\n"), "{info}");
        assert!(info.contains("+Expansion rate\r\n:2\r\n"), "{info}");
        assert!(
            info.contains("+Number of items deleted\r\n:2\r\n"),
            "{info}"
        );
        assert_eq!(run(&mut s, &["TYPE", "c"]), "+MBbloomCF\r\n");
    }

    #[test]
    fn scandump_and_loadchunk_round_trip() {
        let mut s = session();
        assert_eq!(
            run(
                &mut s,
                &["BF.RESERVE", "b", "0.001", "100", "EXPANSION", "3"]
            ),
            "+OK\r\n"
        );
        for i in 0..300 {
            run(&mut s, &["BF.ADD", "b", &format!("k{i}")]);
        }
        let debug = run(&mut s, &["BF.DEBUG", "b"]);
        let mut chunks = Vec::new();
        let mut iter = 0;
        loop {
            let (next, data) = s
                .shared
                .lists
                .adhoc()
                .read(b"b", |f| f.dump_chunk(iter))
                .unwrap();
            // The reply carries the same iterator and bytes.
            let reply = run(&mut s, &["BF.SCANDUMP", "b", &iter.to_string()]);
            assert!(reply.starts_with(&format!("*2\r\n:{next}\r\n${}\r\n", data.len())));
            if next == 0 {
                break;
            }
            chunks.push((next, data));
            iter = next;
        }
        assert_eq!(run(&mut s, &["DEL", "b", "nothing"]), ":1\r\n");
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "k1"]), ":0\r\n");
        for (iter, data) in &chunks {
            let iter = iter.to_string();
            let argv: Vec<&[u8]> = vec![b"BF.LOADCHUNK", b"b", iter.as_bytes(), data];
            let mut out = Vec::new();
            s.execute(&argv, &mut out);
            assert_eq!(out, b"+OK\r\n");
        }
        assert_eq!(run(&mut s, &["BF.DEBUG", "b"]), debug);
        assert!((0..300).all(|i| run(&mut s, &["BF.EXISTS", "b", &format!("k{i}")]) == ":1\r\n"));
        assert!(run(&mut s, &["BF.INFO", "b"]).contains("+Expansion rate\r\n:3\r\n"));
        // 100, then 300: two filters.
        assert_eq!(run(&mut s, &["BF.INFO", "b", "FILTERS"]), "*1\r\n:2\r\n");
        assert_eq!(run(&mut s, &["BF.INFO", "b", "CAPACITY"]), "*1\r\n:400\r\n");
        assert_eq!(run(&mut s, &["BF.CARD", "b"]), ":300\r\n");
    }

    #[test]
    fn commands_are_found_without_case() {
        assert_eq!(lookup(b"bf.mexists").0, Cmd::BfMexists);
        assert_eq!(lookup(b"Ping").0, Cmd::Ping);
        assert_eq!(lookup(b"GET").0, Cmd::Unknown);
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
