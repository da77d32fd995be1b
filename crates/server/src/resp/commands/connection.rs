//! The connection and server commands — `PING`, `HELLO`, `AUTH`, `COMMAND`, `CLIENT`,
//! `SELECT`, `QUIT`, `RESET`, `CONFIG`, `INFO` (`ECHO` is one line of the table) — and the
//! keyspace: `DBSIZE`, `EXISTS`, `TYPE`, `DEL`/`UNLINK`. Enough of Redis for clients
//! (redis-cli, redis-py, redis-benchmark) to connect, authenticate and find their way.

use super::reply::{self, Proto};
use super::{arity_error, parse_i64, unknown_subcommand, Command, Family, Session, TABLE};
use crate::adhoc::Filter;

/// The error of a wrong password, Redis' words.
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

impl Session {
    pub(super) fn ping(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        match argv.len() {
            1 => reply::simple(out, "PONG"),
            2 => reply::bulk(out, argv[1]),
            _ => arity_error(out, argv[0]),
        }
    }

    /// Whether this connection may write: a token is configured and it authenticated.
    pub(super) fn may_write(&self) -> Result<(), &'static str> {
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

    pub(super) fn auth(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 3 {
            return arity_error(out, argv[0]);
        }
        if self.shared.token.is_none() {
            return reply::error(out, "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
        }
        if self.check_password(argv[argv.len() - 1]) {
            reply::simple(out, "OK");
        } else {
            reply::error(out, WRONGPASS);
        }
    }

    /// `HELLO [protover [AUTH user password] [SETNAME name]]`: switches the protocol and
    /// answers what the server is.
    pub(super) fn hello(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
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
                    return reply::error(out, WRONGPASS);
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
        self.hello_reply(out);
    }

    /// `HELLO`'s map: the server, its version, the protocol, the connection, and RedisBloom's
    /// module (clients look for `bf` to know the commands are there).
    fn hello_reply(&self, out: &mut Vec<u8>) {
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

    /// One command's `COMMAND INFO` entry: name, arity, flags, key positions, and empty
    /// ACL categories, tips, key specs and subcommands.
    fn command_info(out: &mut Vec<u8>, command: &Command) {
        let name = command.name;
        let keyed = name.contains('.') || matches!(name, "EXISTS" | "TYPE" | "DEL" | "UNLINK");
        reply::array(out, 10);
        reply::bulk(out, name.to_lowercase().as_bytes());
        reply::int(out, command.arity);
        reply::array(out, 1);
        reply::simple(out, command.flag);
        let (first, last) = match (keyed, name) {
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

    pub(super) fn command(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let Some(sub) = argv.get(1) else {
            reply::array(out, TABLE.len());
            for command in TABLE {
                Self::command_info(out, command);
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
                match super::lookup(name) {
                    None => reply::null(out, self.proto),
                    Some((_, command)) => Self::command_info(out, command),
                }
            }
        } else {
            unknown_subcommand(out, "COMMAND", sub);
        }
    }

    pub(super) fn client(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let sub = argv[1];
        if sub.eq_ignore_ascii_case(b"SETNAME") || sub.eq_ignore_ascii_case(b"SETINFO") {
            reply::simple(out, "OK");
        } else if sub.eq_ignore_ascii_case(b"GETNAME") {
            reply::null(out, self.proto);
        } else if sub.eq_ignore_ascii_case(b"ID") {
            reply::int(out, self.id as i64);
        } else {
            unknown_subcommand(out, "CLIENT", sub);
        }
    }

    /// `SELECT`: there is one database, 0.
    pub(super) fn select(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        match parse_i64(argv[1]) {
            Some(0) => reply::simple(out, "OK"),
            Some(_) => reply::error(out, "ERR DB index is out of range"),
            None => reply::error(out, "ERR value is not an integer or out of range"),
        }
    }

    pub(super) fn quit(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        reply::simple(out, "OK");
        self.quit = true;
    }

    pub(super) fn reset(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        self.proto = Proto::Resp2;
        self.authenticated = false;
        self.transaction = None;
        reply::simple(out, "RESET");
    }

    pub(super) fn config(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        // Clients and redis-benchmark ask for settings; there are none to tell.
        reply::map(out, 0, self.proto);
    }

    pub(super) fn info(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        let info = format!(
            "# Server\r\nredis_version:7.2.0\r\nphishbloom_version:{}\r\nredis_mode:standalone\r\n# Keyspace\r\nlists:{}\r\nfilters:{}\r\n",
            env!("CARGO_PKG_VERSION"),
            self.shared.lists.registry().slots().len(),
            self.shared.lists.adhoc().len()
        );
        reply::bulk(out, info.as_bytes());
    }

    /// `DBSIZE`: the served lists and the filters created here.
    pub(super) fn dbsize(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        let keys = self.shared.lists.registry().slots().len() + self.shared.lists.adhoc().len();
        reply::int(out, keys as i64);
    }

    /// `EXISTS key…`: how many of the keys are held.
    pub(super) fn exists_keys(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let registry = self.shared.lists.registry();
        let adhoc = self.shared.lists.adhoc();
        let n = argv[1..]
            .iter()
            .filter(|k| registry.get(k).is_some() || adhoc.read(k, |_| ()).is_some())
            .count();
        reply::int(out, n as i64);
    }

    /// `TYPE key`: RedisBloom's type names, `none` for a key not held.
    pub(super) fn type_of(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let name = match self.shared.lists.get(argv[1]) {
            None => self
                .shared
                .lists
                .adhoc()
                .read(argv[1], Filter::type_name)
                .unwrap_or("none"),
            Some(slot) => match Family::of(&slot.load().read()) {
                Family::Bloom => "MBbloom--",
                Family::Cuckoo => "MBbloomCF",
            },
        };
        reply::simple(out, name);
    }

    /// `DEL`/`UNLINK`: removes filters created here; a served list (a file) is refused, and
    /// nothing is removed then.
    pub(super) fn del(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let keys = &argv[1..];
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

    /// `FLUSHDB`/`FLUSHALL [ASYNC|SYNC]`: removes every filter created over this protocol, as
    /// client test fixtures expect; the served lists are files and stay.
    pub(super) fn flush(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        match argv {
            [_] => {}
            [_, mode]
                if mode.eq_ignore_ascii_case(b"ASYNC") || mode.eq_ignore_ascii_case(b"SYNC") => {}
            _ => return reply::error(out, "ERR syntax error"),
        }
        self.shared.lists.adhoc().clear();
        reply::simple(out, "OK");
    }
}
