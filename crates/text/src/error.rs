//! The error type of the text crate: input that cannot be turned into text to scan. Every
//! message names the input and says what to do about it.

use std::path::PathBuf;

/// Everything that can go wrong decoding a document or tokenizing a keyword.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input looked like an e-mail message, but the MIME parser could not read it.
    #[error(
        "{name}: not a readable e-mail message (the MIME parser found no header or body); \
         scan it as plain text instead"
    )]
    MalformedMessage {
        /// The document's name (a file, or `file#3` for the third message of an mbox).
        name: String,
    },

    /// A document is larger than the limit.
    #[error(
        "{name}: {bytes} bytes is more than the {limit}-byte limit for one document; split it \
         (an mbox is scanned message by message) or raise the limit"
    )]
    TooLarge {
        /// The document's name.
        name: String,
        /// Its size in bytes.
        bytes: u64,
        /// The limit in bytes.
        limit: u64,
    },

    /// A keyword has more tokens than a phrase may have.
    #[error(
        "keyword of {tokens} tokens is longer than the {limit}-token limit for a phrase; \
         shorten it (each character of Chinese, Japanese or Thai text is one token)"
    )]
    PhraseTooLong {
        /// Tokens in the keyword.
        tokens: usize,
        /// The limit.
        limit: usize,
    },

    /// MinHash parameters (of a near-duplicate list or an index) that cannot work.
    #[error("near-duplicate sketches: {problem}; rebuild the list with the default parameters")]
    MinHashParams {
        /// What is wrong.
        problem: String,
    },

    /// A near-duplicate index's structure refused its contents.
    #[error("near-duplicate index: {0}")]
    Index(#[from] phishbloom_filter::Error),

    /// Reading an input failed.
    #[error("{path}: cannot read: {error}")]
    Io {
        /// The input.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
