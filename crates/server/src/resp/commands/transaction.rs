//! `MULTI`, `EXEC` and `DISCARD`: after `MULTI` a connection's commands are queued (each
//! answered `QUEUED`) until `EXEC` runs them in order and answers one array of their replies, or
//! `DISCARD` drops them. A command refused while queuing (unknown, or the wrong number of
//! arguments) makes `EXEC` discard the whole queue, as Redis does.

use super::reply;
use super::{lookup, Session};

/// A transaction being queued: the commands (owned: the read buffer moves on), their bytes,
/// and whether one was refused while queuing.
#[derive(Default)]
pub(super) struct Transaction {
    commands: Vec<Vec<Vec<u8>>>,
    bytes: usize,
    failed: bool,
}

/// The most bytes of arguments one transaction may queue (a client that never sends `EXEC`
/// cannot make the server hold more).
const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Whether the command named `name` runs at once within a transaction instead of being queued.
pub(super) fn runs_at_once(name: &[u8]) -> bool {
    ["EXEC", "DISCARD", "MULTI", "QUIT", "RESET"]
        .iter()
        .any(|n| n.as_bytes().eq_ignore_ascii_case(name))
}

impl Session {
    /// After `MULTI`, queues a command (answering `QUEUED`) or refuses it, and with it the
    /// transaction; `false`, with nothing written, when no transaction is open.
    pub(super) fn queue(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) -> bool {
        let Some(transaction) = &mut self.transaction else {
            return false;
        };
        let known = lookup(argv[0]).is_some_and(|(_, command)| command.takes(argv.len()));
        let bytes: usize = argv.iter().map(|a| a.len()).sum();
        if !known {
            // Refused now, and the transaction with it (Redis' rule): the reply says why.
            transaction.failed = true;
            self.run(argv, out);
        } else if transaction.bytes + bytes > MAX_QUEUED_BYTES {
            transaction.failed = true;
            reply::error(
                out,
                &format!("ERR a transaction queues at most {MAX_QUEUED_BYTES} bytes of arguments"),
            );
        } else {
            transaction.bytes += bytes;
            transaction
                .commands
                .push(argv.iter().map(|a| a.to_vec()).collect());
            reply::simple(out, "QUEUED");
        }
        true
    }

    pub(super) fn multi(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        if self.transaction.is_some() {
            reply::error(out, "ERR MULTI calls can not be nested");
        } else {
            self.transaction = Some(Transaction::default());
            reply::simple(out, "OK");
        }
    }

    /// `EXEC`: the queued commands in order, their replies in one array.
    pub(super) fn exec(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
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

    pub(super) fn discard(&mut self, _argv: &[&[u8]], out: &mut Vec<u8>) {
        match self.transaction.take() {
            Some(_) => reply::simple(out, "OK"),
            None => reply::error(out, "ERR DISCARD without MULTI"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, session};

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
}
