//! The error type of the Redis store: a server that cannot be reached, a list that is not
//! there, chunks that are missing or damaged, a version switched under a batch, and files that
//! cannot be pushed. Every message names the Redis URL (password hidden), the list and the key
//! or chunk concerned, and says what to do about it; none names a command-line flag.

use std::path::PathBuf;

/// Everything that can go wrong pushing, checking, adding to and describing a list in Redis.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The Redis URL is not one this crate understands.
    #[error(
        "`{url}` is not a Redis URL ({problem}); use redis://[:PASSWORD@]HOST:PORT, rediss://… \
         for TLS, or redis+cluster://HOST:PORT,HOST:PORT,… for a Redis Cluster"
    )]
    BadUrl {
        /// The URL as given (password hidden).
        url: String,
        /// What is wrong with it.
        problem: String,
    },

    /// Connecting to the server (or to the cluster's seed nodes) failed.
    #[error(
        "cannot connect to Redis at {url}: {error}; is redis-server running there, and are the \
         address, port, password and TLS setting right?"
    )]
    Connect {
        /// The server (password hidden).
        url: String,
        /// redis-rs's message.
        error: String,
    },

    /// A command failed: the connection dropped, the server answered with an error, or it did
    /// not answer in time.
    #[error("Redis at {url}: {action} failed: {error}; check that the server is up and has memory to spare")]
    Command {
        /// The server (password hidden).
        url: String,
        /// What was being done (`read the version pointer`, `write chunk 3`, ...).
        action: String,
        /// redis-rs's message.
        error: String,
    },

    /// The server answered with a value of an unexpected type.
    #[error(
        "Redis at {url}: unexpected answer to {action}: {answer}; is this a Redis server, and is \
         `{key}` a key phishbloom wrote?"
    )]
    UnexpectedReply {
        /// The server (password hidden).
        url: String,
        /// The key the command was about.
        key: String,
        /// What was asked.
        action: String,
        /// What came back.
        answer: String,
    },

    /// A list name that cannot be used: empty, too long, or holding a hash tag.
    #[error(
        "`{name}` cannot name a list in Redis: {problem}; choose a name of 1 to 255 bytes \
         without `{{`, `}}` or whitespace"
    )]
    BadName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },

    /// The list has no version pointer: it was never pushed, or it was deleted.
    #[error(
        "Redis at {url} has no list named `{name}` (the key `{key}` does not exist); push a \
         blocked-layout blocklist file under this name first"
    )]
    NoList {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The pointer key looked for.
        key: String,
    },

    /// The pointer names a version whose metadata is gone (expired, evicted or deleted).
    #[error(
        "Redis at {url}: list `{name}` points to version {version}, but its metadata `{key}` is \
         missing (evicted, expired or deleted); push the list again, and give Redis enough \
         memory (or a noeviction policy) to keep it"
    )]
    MissingMeta {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// The metadata key.
        key: String,
    },

    /// A metadata field is absent or holds a value phishbloom never writes.
    #[error(
        "Redis at {url}: metadata `{key}` field `{field}` is {problem}; the list was not written \
         by this phishbloom or is damaged, push it again"
    )]
    BadMeta {
        /// The server (password hidden).
        url: String,
        /// The metadata key.
        key: String,
        /// The field.
        field: String,
        /// What is wrong with it.
        problem: String,
    },

    /// A chunk of the live version is missing or shorter than the metadata says.
    #[error(
        "Redis at {url}: chunk {chunk} of list `{name}` version {version} (`{key}`) is \
         {problem}; the list is damaged or was evicted, push it again (and give Redis enough \
         memory, or a noeviction policy, to keep it)"
    )]
    BadChunk {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// The chunk index.
        chunk: u64,
        /// The chunk key.
        key: String,
        /// `missing`, or what is wrong with its length.
        problem: String,
    },

    /// A chunk's bytes do not match the checksum its metadata records.
    #[error(
        "Redis at {url}: checksum mismatch in chunk {chunk} of list `{name}` version {version} \
         (`{key}`: stored {stored:#x}, computed {computed:#x}); the bits were changed by \
         something other than phishbloom, push the list again"
    )]
    ChecksumMismatch {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// The chunk index (of the filter, or of the verification table for `verify:` keys).
        chunk: u64,
        /// The chunk key.
        key: String,
        /// The checksum in the metadata.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },

    /// A stored section (categories, category sets, exceptions, verification table) whose chunks
    /// are intact but whose contents no push writes.
    #[error(
        "Redis at {url}: the {section} of list `{name}` version {version} (`{key}`) cannot be \
         read: {problem}; the list is damaged or was written by something other than phishbloom, push \
         it again"
    )]
    BadSection {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// Which section (`categories`, `category sets`, `exceptions`, `verification table`).
        section: &'static str,
        /// Its keys (`NAME:vV:SECTION:*`).
        key: String,
        /// What is wrong.
        problem: String,
    },

    /// A category asked for (`keep_categories`) that the list does not have.
    #[error(
        "Redis at {url}: list `{name}` version {version} has no category `{category}` (it has: \
         {available}); ask for one of those"
    )]
    UnknownCategory {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// The name asked for.
        category: String,
        /// The list's categories, comma-separated.
        available: String,
    },

    /// Keys added to a list of several categories, without saying which.
    #[error(
        "Redis at {url}: list `{name}` has several categories ({available}); name the category \
         the keys join"
    )]
    CategoryNeeded {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The list's categories, comma-separated.
        available: String,
    },

    /// The version pointer moved during a batch, and again during its one retry.
    #[error(
        "Redis at {url}: list `{name}` switched version during a check ({from} → {to}) and again \
         while it was retried; pushes are arriving faster than a batch completes, retry later"
    )]
    VersionSwitched {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version the batch started with.
        from: u64,
        /// The version found after the retry.
        to: u64,
    },

    /// A push lost a race: a newer version was made live while this one was being written.
    #[error(
        "Redis at {url}: version {version} of list `{name}` was not made live because version \
         {newer} was pushed meanwhile; push again if this file is meant to replace it"
    )]
    Superseded {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version this push wrote.
        version: u64,
        /// The live version that is newer.
        newer: u64,
    },

    /// A file of a kind Redis cannot hold: only a blocked list that does not grow is probed
    /// there (a key's bits in one 64-byte block, one `GETRANGE` per probe).
    #[error(
        "{path}: {what} cannot be pushed to Redis: Redis lists are probed as one blocked Bloom \
         filter, a key's bits in one 64-byte block (one GETRANGE per probe), or read whole as \
         a compact table; rebuild it as a blocked list that does not grow, or as a compact list"
    )]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// What it is (`a classic blocklist`, `a growing blocked blocklist`).
        what: String,
    },

    /// A file that Redis cannot hold in phishbloom's scheme.
    #[error("{path}: {problem}")]
    CannotPush {
        /// The file.
        path: PathBuf,
        /// Why, and what to do instead.
        problem: String,
    },

    /// A push that would drop keys added to the live version.
    #[error(
        "{path}: pushing it as {name:?} would drop {lost} key(s) added to the live version {live} \
         with `redis add` {}; they would answer clean. Add them to the file and rebuild it first, \
         or force the push",
        if *checked { "that the file does not hold" } else { "(the file has no verification section, so none can be found in it)" }
    )]
    WouldLoseAdds {
        /// The file pushed.
        path: PathBuf,
        /// The list's name.
        name: String,
        /// The live version.
        live: u64,
        /// Keys that would be lost.
        lost: u64,
        /// Whether the file's verification table was searched for them.
        checked: bool,
    },

    /// A key given to `add` is not an entry of a URL-entry list.
    #[error(
        "`{key}` is not a list entry ({error}); give a host (`evil.com`) or a host and path \
         (`evil.com/login`)"
    )]
    NotAnEntry {
        /// The key as given (lossy UTF-8).
        key: String,
        /// Why.
        error: phishbloom_url::Error,
    },

    /// Keys added to, or bits pulled from, a compact version, which has neither.
    #[error(
        "Redis at {url}: list `{name}` version {version} is a compact table, built once for \
         its entries: it cannot {action}; push the list again (built with the keys), or push a \
         blocked list to add to"
    )]
    Compact {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
        /// What was asked (`take keys`, `give its bits`).
        action: &'static str,
    },

    /// Verification was required but the list in Redis has none.
    #[error(
        "Redis at {url}: list `{name}` version {version} has no verification table (it was \
         pushed from a file built without verification); push a file built with verification"
    )]
    NoVerification {
        /// The server (password hidden).
        url: String,
        /// The list name.
        name: String,
        /// The version.
        version: u64,
    },

    /// An error of the blocklist crate (opening the file to push).
    #[error(transparent)]
    Blocklist(#[from] phishbloom_blocklist::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The core's errors arrive as the blocklist crate's (which wraps them), so that each has one
/// place in this error: [`Error::Blocklist`].
impl From<phishbloom_core::Error> for Error {
    fn from(error: phishbloom_core::Error) -> Self {
        Error::Blocklist(error.into())
    }
}

/// What is wrong with a chunk of `len` bytes that should hold `expected`: missing (an absent
/// key reads as empty), or its length.
pub(crate) fn length_problem(len: u64, expected: u64) -> String {
    if len == 0 {
        "missing".into()
    } else {
        format!("{len} bytes, not {expected}")
    }
}
