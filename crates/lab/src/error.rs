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

    /// A measurement's own file or process failed (a temporary keyword file, a child process).
    #[error("cannot {action} {what}: {error}")]
    Io {
        /// The file or process.
        what: String,
        /// What was being done.
        action: &'static str,
        /// The operating system's error.
        error: std::io::Error,
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

/// The result type of the lab.
pub type Result<T, E = Error> = std::result::Result<T, E>;
