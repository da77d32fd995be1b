//! The error type of the report generator: what can stop a report run, with how to fix it.

use std::path::PathBuf;

/// Everything that can make [`crate::run`] fail. Each message names the file or experiment
/// involved and says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The labelled dataset is not where the options say.
    #[error(
        "the dataset {path} does not exist (looked for it from {cwd}); pass --data PATH/TO/dataset.csv \
         (shared/data/dataset.csv beside the repository) or run from the repository root"
    )]
    MissingDataset {
        /// The path that was tried.
        path: PathBuf,
        /// The working directory it was resolved against.
        cwd: PathBuf,
    },

    /// Reading the dataset or running the dataset experiment failed.
    #[error("the dataset experiment on {path} failed: {source}; check that it is the url,isMalicious CSV")]
    Dataset {
        /// The dataset.
        path: PathBuf,
        /// What the lab reported (boxed: it is large, and this path is cold).
        #[source]
        source: Box<phishbloom_lab::Error>,
    },

    /// A measurement of the lab failed.
    #[error("the {section} measurement failed: {source}")]
    Measurement {
        /// The report section it was for.
        section: &'static str,
        /// What the lab reported (its message says how to fix it; boxed: it is large, and
        /// this path is cold).
        #[source]
        source: Box<phishbloom_lab::Error>,
    },

    /// Creating the output directory failed.
    #[error(
        "cannot create the output directory {path}: {source}; pass a writable directory with --out"
    )]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// Writing, syncing or renaming an output file failed.
    #[error("cannot write {path}: {source}; check free disk space and permissions")]
    Write {
        /// The file.
        path: PathBuf,
        /// The writer's error (it names the step that failed).
        source: phishbloom_blocklist::Error,
    },

    /// plotters could not draw a figure.
    #[error("cannot draw the plot {path}: {message}; this is a bug in the report's plot code")]
    Plot {
        /// The SVG file being drawn.
        path: PathBuf,
        /// What plotters reported.
        message: String,
    },

    /// The options cannot describe a run.
    #[error("invalid report option {name} = {value}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// Its value, formatted.
        value: String,
        /// What it must be instead.
        reason: &'static str,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
