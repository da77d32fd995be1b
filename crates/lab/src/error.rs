//! The error type of the lab: an experiment fails when reading its data or building a
//! structure fails; the underlying error says which file and why.

/// Everything that can go wrong running an experiment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading a list or building or opening a blocklist failed.
    #[error(transparent)]
    Blocklist(#[from] phishbloom_blocklist::Error),

    /// Sizing or building a filter failed.
    #[error(transparent)]
    Filter(#[from] phishbloom_filter::Error),

    /// A structure of a measurement could not be built from its keys.
    #[error("{experiment}: {reason}; this is a bug in the measurement or in its keys")]
    Unbuildable {
        /// The structure and experiment.
        experiment: &'static str,
        /// What went wrong.
        reason: String,
    },

    /// A measurement's own scratch file or child process failed.
    #[error(
        "{what}: cannot {action}: {source}; check the free space and permissions of the \
         temporary directory (TMPDIR)"
    )]
    Io {
        /// The file, directory or process.
        what: String,
        /// What was being done.
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A measurement asked for a filter its parameters cannot describe.
    #[error(
        "{experiment}: cannot build the filter (m = {num_bits}, k = {num_hashes}; 0 = sized from \
         n and p): {source}; this is a bug in the measurement sizes — lower them in \
         crates/lab/src/measure/sizes.rs"
    )]
    Sizing {
        /// The experiment that asked for it.
        experiment: &'static str,
        /// m (0 when the filter was sized from n and p).
        num_bits: u64,
        /// k (0 when the filter was sized from n and p).
        num_hashes: u32,
        /// The filter crate's error.
        #[source]
        source: phishbloom_filter::Error,
    },

    /// A corpus of the near-duplicate measurements is not installed.
    #[error(
        "the corpus {path} is missing: install it with `apt-get install -y {package}` (.ci/run \
         does; the near-duplicate measurements read real text from Debian packages)"
    )]
    MissingCorpus {
        /// The directory looked for.
        path: std::path::PathBuf,
        /// The Debian package that installs it.
        package: &'static str,
    },

    /// A child process of a per-process measurement failed or answered nonsense.
    #[error("measurement in a child process failed ({message}): {job}")]
    Child {
        /// The job it ran.
        job: String,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// An [`Error::Io`] for `action` on `path`.
    pub fn io(
        path: impl Into<std::path::PathBuf>,
        action: &'static str,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let what = path.into().display().to_string();
        move |source| Error::Io {
            what,
            action,
            source,
        }
    }
}

/// The result type of the lab.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The core's errors arrive as the blocklist crate's (which wraps them), so that each has one
/// place in this error: [`Error::Blocklist`].
impl From<phishbloom_core::Error> for Error {
    fn from(error: phishbloom_core::Error) -> Self {
        Error::Blocklist(error.into())
    }
}
