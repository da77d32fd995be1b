//! What can go wrong publishing or syncing a list, each message saying what to do.

use std::path::PathBuf;

/// An error of publish or sync.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An error of the blocklist layer (reading, checking, applying, saving a list) or of the
    /// protocol's rules (index, signature, rollback, downloads).
    #[error(transparent)]
    List(#[from] phishbloom_blocklist::Error),

    /// A file that cannot be read or written.
    #[error("{path}: cannot {action}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// Why it failed.
        error: std::io::Error,
    },

    /// A request that failed before an answer (connection, TLS, timeout).
    #[error("{url}: {problem}; check the URL and the network (the local list was left as it was)")]
    Http {
        /// The URL asked.
        url: String,
        /// What failed.
        problem: String,
    },

    /// An answer that is not a success.
    #[error("{url}: the server answered {status}{hint}")]
    Status {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// What it means here.
        hint: &'static str,
    },

    /// An answer longer than the index allows.
    #[error("{url}: more than the {limit} bytes expected; refusing the rest")]
    TooLong {
        /// The URL asked.
        url: String,
        /// The most bytes accepted.
        limit: u64,
    },

    /// The local file changed while a sync was under way.
    #[error(
        "{path}: the file changed while the update was downloaded (another writer); nothing was \
         replaced — the next sync starts from the new file"
    )]
    Changed {
        /// The local file.
        path: PathBuf,
    },

    /// A base that is neither an http(s) URL nor a directory.
    #[error(
        "{base}: not a list URL; give http(s)://HOST/PATH of a `phishbloom publish` directory, \
         serve's http://HOST:PORT/v1/lists/NAME, or a local directory"
    )]
    BadBase {
        /// What was given.
        base: String,
    },

    /// A header given as other than `Name: value`.
    #[error("--header {header:?}: give `Name: value`")]
    BadHeader {
        /// What was given.
        header: String,
    },

    /// A publish directory whose index is not ours.
    #[error("{path}: {problem}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },

    /// Publishing a version older than the one published.
    #[error(
        "{file}: version {version} is older than the published version {published}; refusing to \
         publish a rollback (clients would refuse it too) unless a rollback is allowed"
    )]
    Rollback {
        /// The list file.
        file: PathBuf,
        /// Its version.
        version: u64,
        /// The version published.
        published: u64,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The core's errors arrive as the blocklist crate's (which wraps them), so that each has one
/// place in this error: [`Error::List`].
impl From<phishbloom_core::Error> for Error {
    fn from(error: phishbloom_core::Error) -> Self {
        Error::List(error.into())
    }
}

impl Error {
    /// Builds an [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, action: &'static str, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            action,
            error,
        }
    }
}
