//! The error type of the lookup crate: bad inputs, list-format problems, and filter errors.

use std::path::PathBuf;

/// Everything that can go wrong reading lists, building matchers and running experiments.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening or reading an input, or writing an output, failed.
    #[error("{path}: {action} failed: {source}")]
    Io {
        /// The file (or `-` for standard input/output).
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The input is a directory, not a file.
    #[error("{path}: is a directory; pass a list file (or `-` for standard input)")]
    IsADirectory {
        /// The directory.
        path: PathBuf,
    },

    /// A CSV input has no column of the required name.
    #[error(
        "{path}: no `{column}` column in the CSV header (columns: {found}); \
         name the column with --{flag} or pass a plain list with --format lines"
    )]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column looked for.
        column: String,
        /// The command-line flag that names it.
        flag: &'static str,
        /// The header's columns, comma-separated.
        found: String,
    },

    /// The label filter selects no row.
    #[error(
        "{path}: no row has {column} = {value} (values seen: {seen}); \
         choose one of them with --label-value, or --all-rows to take every row"
    )]
    NoMatchingRows {
        /// The file.
        path: PathBuf,
        /// The label column.
        column: String,
        /// The value asked for.
        value: String,
        /// Distinct values present (at most a few).
        seen: String,
    },

    /// The input holds no usable key.
    #[error(
        "{path}: no keys to build from ({detail}); check the file and the column/label options"
    )]
    EmptyInput {
        /// The file.
        path: PathBuf,
        /// What was read (rows, blank and malformed lines).
        detail: String,
    },

    /// The CSV reader failed in a way that is not one bad row (for example the header itself).
    #[error(
        "{path}: cannot read the CSV header: {message}; is this a CSV file with a header row?"
    )]
    CsvHeader {
        /// The file.
        path: PathBuf,
        /// The CSV reader's message.
        message: String,
    },

    /// A line of a streamed input is longer than the limit.
    #[error(
        "{path}: line {line} is longer than {limit} bytes; split the input or remove that line"
    )]
    LineTooLong {
        /// The input.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The limit in bytes.
        limit: usize,
    },

    /// The filter file was built with a key scheme this build does not know.
    #[error(
        "{path}: the filter records key scheme {code}, unknown to this version; \
         rebuild it with `phishbloom build`"
    )]
    UnknownKeyScheme {
        /// The filter file.
        path: PathBuf,
        /// The recorded code.
        code: u8,
    },

    /// A `--ut1` path is not a UT1 category folder.
    #[error(
        "{path}: not a UT1 category folder (expected a directory with a `domains` or `urls` \
         file, e.g. ../shared/data/ut1/phishing)"
    )]
    NotAUt1Category {
        /// The path given.
        path: PathBuf,
    },

    /// A verification table is missing, damaged, or does not belong to its filter.
    #[error("{path}: {problem}; rebuild with `phishbloom build --verify`")]
    VerifyTable {
        /// The table file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },

    /// An error from the filter crate (sizing, loading, saving).
    #[error(transparent)]
    Filter(#[from] phishbloom_filter::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Io`].
    pub(crate) fn io(
        path: impl Into<PathBuf>,
        action: &'static str,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            path: path.into(),
            action,
            source,
        }
    }
}
