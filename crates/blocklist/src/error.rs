//! The errors of lists on a machine with files: list inputs that cannot be read or are not
//! what they claim, output paths that must not be written, locks, disk space — and, wrapped,
//! every error of the check core ([`phishbloom_core::Error`]: damaged files, lists that cannot
//! change, deltas for another version).
//!
//! Every message names the file and says what is wrong and what to do, once, in the library's
//! own terms; none names a command-line flag (the binary adds those). An I/O error names the path
//! once and carries the operating system's message in its text, not as a separate `source`, so a
//! chain printer does not repeat it.

use std::path::PathBuf;

/// Everything that can go wrong reading lists and documents, and writing and opening files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening, reading, writing, syncing or renaming a file failed.
    #[error("{path}: cannot {action}: {error}")]
    Io {
        /// The file (`<stdin>` or `<stdout>` for the standard streams).
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, ...).
        action: &'static str,
        /// The operating system's error.
        error: std::io::Error,
    },

    /// An input is a directory, not a file.
    #[error("{path}: is a directory; pass a list file (or `-` for standard input)")]
    IsADirectory {
        /// The directory.
        path: PathBuf,
    },

    /// An output path names something that is not a regular file.
    #[error(
        "{path}: refusing to write a blocklist over {what}; choose a path that is a regular file \
         or does not exist yet"
    )]
    OutputNotAFile {
        /// The output path.
        path: PathBuf,
        /// What is there (`a directory`, `a character device`, `a FIFO`, ...).
        what: &'static str,
    },

    /// An output path is a symbolic link.
    #[error(
        "{path}: refusing to replace a symbolic link (it points to {target}); write to the file \
         itself, or remove the link first"
    )]
    OutputIsSymlink {
        /// The output path.
        path: PathBuf,
        /// Where the link points.
        target: PathBuf,
    },

    /// An output path is one of the inputs of the same command.
    #[error(
        "{path}: refusing to write the blocklist over one of its own inputs ({input}); choose \
         another output path"
    )]
    OutputIsInput {
        /// The output path.
        path: PathBuf,
        /// The input it is (the same file, possibly by another name or a hard link).
        input: PathBuf,
    },

    /// A CSV input has no column of the required name.
    #[error("{path}: no `{column}` column in the CSV header (columns: {found})")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column looked for.
        column: String,
        /// What the column is for (`key`, `label`).
        role: &'static str,
        /// The header's columns, comma-separated.
        found: String,
    },

    /// The label filter selects no row.
    #[error("{path}: no row has {column} = {value} (values seen: {seen})")]
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
    #[error("{path}: no keys to build from ({detail})")]
    EmptyInput {
        /// The file.
        path: PathBuf,
        /// What was read (rows, blank and malformed lines).
        detail: String,
    },

    /// A plain list starts with what looks like a CSV header.
    #[error(
        "{path}: the first line `{header}` looks like a CSV header, so this is not a list of one \
         entry per line; read it as CSV (with its key column by name)"
    )]
    LooksLikeCsv {
        /// The input.
        path: PathBuf,
        /// The first line.
        header: String,
    },

    /// Most lines of a list are e-mail addresses or other `user@host` keys, not entries.
    #[error(
        "{path}: {rejected} of {lines} lines are addresses (`user@host`), not URL or domain \
         entries; as entries they would list whole domains — keep them as exact keys"
    )]
    LooksLikeAddresses {
        /// The input.
        path: PathBuf,
        /// Lines refused for user info.
        rejected: u64,
        /// Lines read.
        lines: u64,
    },

    /// Most lines of a list are not entries of the chosen kind.
    #[error(
        "{path}: {rejected} of {lines} lines are not URL or domain entries (first: {example}); \
         this is not a list of entries in the chosen format"
    )]
    MostLinesRejected {
        /// The input.
        path: PathBuf,
        /// Lines refused.
        rejected: u64,
        /// Lines read.
        lines: u64,
        /// The first refused line and why.
        example: String,
    },

    /// The CSV reader failed on the header row.
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

    /// A UT1 path is not a UT1 category folder.
    #[error(
        "{path}: not a UT1 category folder (expected a directory with a `domains` or `urls` \
         file, e.g. ../shared/data/ut1/phishing)"
    )]
    NotAUt1Category {
        /// The path given.
        path: PathBuf,
    },

    /// A member of a never-warn list that an entry of the list lists.
    #[error(
        "{path}:{line}: {member:?} is listed by the entry {entry:?}, so it cannot answer clean; \
         take it out of the never-warn list or the entry out of the list"
    )]
    NeverListed {
        /// The never-warn list.
        path: PathBuf,
        /// The member's line (from 1).
        line: usize,
        /// The member as written.
        member: String,
        /// The entry that lists it.
        entry: String,
    },

    /// Another writer holds a file's edit lock for longer than a writer waits.
    #[error(
        "{path}: another writer{} holds its edit lock; waited {waited} s (is that process \
         stopped? continue it with `kill -CONT`, or wait longer)",
        holder.map_or(String::new(), |pid| format!(" (process {pid})"))
    )]
    Locked {
        /// The file.
        path: PathBuf,
        /// The PID the holder wrote into the lock file, if readable.
        holder: Option<u32>,
        /// Seconds waited.
        waited: f64,
    },

    /// A file that cannot fit in the free space where it is to be written.
    #[error(
        "{path}: the file needs at least {needed} bytes and the file system has {available} \
         free; free some space or write it elsewhere (nothing was written)"
    )]
    NoRoom {
        /// The file.
        path: PathBuf,
        /// Bytes needed (at least).
        needed: u64,
        /// Bytes free.
        available: u64,
    },

    /// Input given as a list that is not text.
    #[error(
        "{path}: not a text list ({detail}); a list is text, one entry per line (gzip and zstd \
         are read as they are); if the keys really are bytes, build a list of exact keys"
    )]
    NotText {
        /// The input.
        path: PathBuf,
        /// What was seen.
        detail: String,
    },

    /// More categories than a list can hold.
    #[error("{path}: more than {max} categories; merge some of them, or split the list")]
    TooManyCategories {
        /// The input that brought the one too many.
        path: PathBuf,
        /// The most a list holds.
        max: usize,
    },

    /// A path to read a blocklist from is not a regular file.
    #[error("{path}: not a regular file; pass a blocklist file")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },

    /// A temporary file this process wrote during a build reads back wrong.
    #[error(
        "{path}: a temporary file of this build is damaged ({problem}); is something else \
         writing to the temporary directory?"
    )]
    Spill {
        /// The temporary file.
        path: PathBuf,
        /// What is wrong.
        problem: &'static str,
    },

    /// An error of the check core: a damaged file, a list that cannot take a change, a delta
    /// for another version, ...
    #[error(transparent)]
    Core(#[from] phishbloom_core::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<phishbloom_filter::Error> for Error {
    fn from(error: phishbloom_filter::Error) -> Self {
        Error::Core(error.into())
    }
}

impl From<phishbloom_url::Error> for Error {
    fn from(error: phishbloom_url::Error) -> Self {
        Error::Core(error.into())
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

    /// The core's error, when this is one.
    pub fn core(&self) -> Option<&phishbloom_core::Error> {
        match self {
            Error::Core(error) => Some(error),
            _ => None,
        }
    }

    /// Whether this is a write to a closed pipe (`phishbloom check … | head`): a normal way for
    /// a filter's output to end, not worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { error, .. } if error.kind() == std::io::ErrorKind::BrokenPipe)
    }
}
