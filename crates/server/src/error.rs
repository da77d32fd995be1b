//! [`Error`]: everything the server library can fail with, each message saying how to fix it.

use std::path::PathBuf;

/// What can go wrong while serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A blocklist could not be opened or read.
    #[error("{0}")]
    Blocklist(#[from] phishbloom_blocklist::Error),

    /// No list has this name.
    #[error("no list named {name:?} is served (GET /v1/lists names them; lists are named by file stem, or NAME=FILE on the command line)")]
    UnknownList {
        /// The name asked for.
        name: String,
    },

    /// Two files would be served under one name.
    #[error("two files are served as {name:?}: name one of them with NAME=FILE")]
    DuplicateName {
        /// The name.
        name: String,
    },

    /// A `NAME=FILE` argument or a file stem that cannot name a list.
    #[error("{spec:?} does not name a list: give FILE (named by its stem) or NAME=FILE with a non-empty name")]
    BadListSpec {
        /// The argument.
        spec: String,
    },

    /// The token file could not be read or is empty.
    #[error("token file {path}: {problem} (put one line with the bearer token in it)")]
    Token {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },

    /// A socket could not be bound.
    #[error("cannot listen on {addr}: {cause} (is another process using the port?)")]
    Bind {
        /// The address.
        addr: String,
        /// The cause (in the message, not repeated as a source).
        cause: std::io::Error,
    },

    /// A reloaded file holds an older version of the list than the one served.
    #[error(
        "{name}: the new file holds version {found}, older than the version {served} served (a \
         rollback: clients holding version {served} would refuse it); the old list keeps \
         serving — rebuild the list over the served file, or start serve with --allow-rollback"
    )]
    Rollback {
        /// The list.
        name: String,
        /// The version of the new file.
        found: u64,
        /// The version served.
        served: u64,
    },

    /// No delta from the version asked is kept.
    #[error("no delta of {name:?} from version {from}: deltas start from the versions kept ({kept:?}; none for a list without a verification section); fetch the whole file from /v1/lists/{name}/file (send If-None-Match to skip an unchanged one)")]
    NoDelta {
        /// The list.
        name: String,
        /// The version asked for.
        from: u64,
        /// The versions deltas can start from.
        kept: Vec<u64>,
    },

    /// Writes are refused because no token file was given.
    #[error("writes are off: start phishbloom serve with --token-file FILE to allow them")]
    WritesOff,

    /// The list is full and does not grow: RedisBloom's words, over RESP and HTTP alike (HTTP
    /// adds what the list holds as `detail`).
    #[error("{}", full_reason(*kind))]
    Full {
        /// The list's kind.
        kind: phishbloom_core::Kind,
        /// Entries it holds.
        items: u64,
    },

    /// A list of this name exists already.
    #[error("item exists")]
    Exists,

    /// The kind cannot do what was asked (a cuckoo filter is needed, for example).
    #[error("{0}")]
    Unsupported(String),

    /// A request the server cannot answer as asked (the message says what to send instead).
    #[error("{0}")]
    BadRequest(String),

    /// A TLS certificate or key that cannot be used.
    #[error(transparent)]
    Tls(#[from] phishbloom_tls::Error),

    /// Input and output of the squid helper or the server's sockets.
    #[error("{context}: {cause}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause (in the message, not repeated as a source).
        cause: std::io::Error,
    },
}

/// The one message for a list that is full and does not grow, over every protocol: RedisBloom's
/// words, `non scaling filter is full` for a Bloom filter, `Filter is full` for a cuckoo filter
/// (clients of RedisBloom match them).
pub fn full_reason(kind: phishbloom_core::Kind) -> &'static str {
    match kind {
        phishbloom_core::Kind::Cuckoo => "Filter is full",
        _ => "non scaling filter is full",
    }
}

/// What a full list holds and how to go on, for protocols with room to say it (HTTP's `detail`).
pub fn full_detail(kind: phishbloom_core::Kind, items: u64) -> String {
    format!(
        "the {kind} list holds {items} entries, has no room for the new ones and does not grow; \
         nothing was added (rebuild it with more room, or as a list that grows)"
    )
}

/// The server's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The core's errors arrive as the blocklist crate's (which wraps them), so that each has one
/// place in this error: [`Error::Blocklist`].
impl From<phishbloom_core::Error> for Error {
    fn from(error: phishbloom_core::Error) -> Self {
        Error::Blocklist(error.into())
    }
}

impl Error {
    /// The server's error for a library error, with a full list in the server's words.
    pub fn from_list(error: impl Into<phishbloom_blocklist::Error>) -> Self {
        let error = error.into();
        match error.core() {
            Some(&phishbloom_core::Error::Full { kind, items, .. }) => Error::Full { kind, items },
            _ => Error::Blocklist(error),
        }
    }

    /// The check core's error, when this is one.
    pub fn core(&self) -> Option<&phishbloom_core::Error> {
        match self {
            Error::Blocklist(error) => error.core(),
            _ => None,
        }
    }

    /// An I/O error while `context`.
    pub fn io(context: impl Into<String>, cause: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            cause,
        }
    }
}
