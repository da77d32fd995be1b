//! The error type of this crate: every way building, combining, saving or loading a filter can fail.
//!
//! Each variant carries the values that explain it, and its message says how to fix the problem,
//! so a command-line front end can print it as one line.

use std::path::PathBuf;

/// Everything that can go wrong in `phishbloom-filter`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A sizing or construction parameter is outside the range the filter supports.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name, as the caller knows it (`fpp`, `expected_items`, `num_bits`, ...).
        name: &'static str,
        /// The rejected value, formatted.
        value: String,
        /// What the value must be instead.
        reason: String,
    },

    /// Two filters cannot be combined because a parameter differs.
    #[error(
        "cannot combine filters: {parameter} differs ({left} vs {right}); \
         build both shards with the same expected items, fpp, layout and hash strategy"
    )]
    Incompatible {
        /// The parameter that differs (`num_bits`, `num_hashes`, `hash strategy`).
        parameter: &'static str,
        /// Its value in `self`.
        left: String,
        /// Its value in the other filter.
        right: String,
    },

    /// Reading, writing, syncing or renaming a file failed.
    #[error("{path}: {action} failed: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, `rename`, ...).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with the phishbloom filter magic bytes.
    #[error(
        "{path}: not a phishbloom filter file (magic bytes {found:02x?}, expected {expected:02x?}); \
         pass a file written by `phishbloom build` or `save()`"
    )]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// The magic bytes a filter file starts with.
        expected: [u8; 8],
        /// The bytes this file starts with.
        found: Vec<u8>,
    },

    /// The file was written by a format version this build does not read.
    #[error(
        "{path}: filter file format version {got} is not supported (this build reads version \
         {expected}); rebuild the filter with this version of phishbloom"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version this build reads and writes.
        expected: u32,
        /// The version recorded in the file.
        got: u32,
    },

    /// The file is shorter than its header says it must be.
    #[error(
        "{path}: file is truncated: {got} bytes, but its header needs {expected}; \
         the copy is incomplete, copy or rebuild it again"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The length the header implies, in bytes.
        expected: u64,
        /// The file's actual length, in bytes.
        got: u64,
    },

    /// A size in the file does not match the number of bits its header declares.
    #[error(
        "{path}: size mismatch: {what} is {got} but m = {num_bits} bits needs {expected}; \
         the file is damaged or was not written by phishbloom, rebuild it"
    )]
    SizeMismatch {
        /// The file.
        path: PathBuf,
        /// Which size disagrees (`bit array bytes`, `file length`).
        what: &'static str,
        /// The number of bits the header declares.
        num_bits: u64,
        /// The size that `num_bits` implies.
        expected: u64,
        /// The size found.
        got: u64,
    },

    /// The checksum stored in the file does not match its contents.
    #[error(
        "{path}: checksum mismatch (stored {expected:#018x}, computed {got:#018x}): \
         the file is corrupted, rebuild it or copy it again"
    )]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// The checksum stored in the file's trailer.
        expected: u64,
        /// The checksum of the bytes actually read.
        got: u64,
    },

    /// A header field holds a value no writer produces (unknown layout or hash code, zero hashes).
    #[error("{path}: invalid header field {field} = {value}; the file is damaged, rebuild it")]
    InvalidHeader {
        /// The file.
        path: PathBuf,
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: u64,
    },

    /// The file holds a filter of another layout than the type asked to load it.
    #[error(
        "{path}: the file holds a {found} filter, not a {expected} one; \
         load it with AnyFilter::load or the matching type"
    )]
    WrongLayout {
        /// The file.
        path: PathBuf,
        /// The layout the caller asked for.
        expected: &'static str,
        /// The layout recorded in the file.
        found: &'static str,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::InvalidParameter`].
    pub(crate) fn invalid(
        name: &'static str,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            name,
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// Builds an [`Error::Io`] for `path`.
    pub(crate) fn io(path: &std::path::Path, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}
