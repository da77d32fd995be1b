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
}

/// The result type of the lab.
pub type Result<T, E = Error> = std::result::Result<T, E>;
