//! The error type of this crate: every way sizing, building or combining a filter can fail.
//!
//! Each variant carries the values that explain it, and its message says how to fix the problem,
//! so a command-line front end can print it as one line.

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

    /// The filter asked for is larger than [`crate::math::MAX_NUM_BITS`].
    #[error(
        "{items} keys at a false-positive rate of {fpp:e} need {bits} bits, more than the limit of \
         2^40 bits (128 GiB); split the list into shards or raise the rate"
    )]
    TooLarge {
        /// The item count asked for.
        items: u64,
        /// The rate asked for.
        fpp: f64,
        /// The bits it would take (a lower bound when the search stopped at the limit).
        bits: f64,
    },

    /// Permuted tables asked for a shape they cannot have (near-duplicate lists).
    #[error("near-duplicate tables for distance {distance} with {blocks} blocks: {problem}")]
    NearShape {
        /// The largest distance asked for.
        distance: u32,
        /// The blocks the 64 bits are split into.
        blocks: u32,
        /// What is wrong and what would work.
        problem: String,
    },

    /// Stored permuted tables are not consistent (a corrupt near-duplicate section).
    #[error("near-duplicate tables are inconsistent: {problem}; rebuild the list")]
    NearTables {
        /// What is inconsistent.
        problem: String,
    },

    /// A lookup asked for a larger distance than the tables were built for.
    #[error(
        "a maximum distance of {asked} is more than the {built} this near-duplicate list was \
         built for; ask for at most {built}, or rebuild the list for a distance of {asked}"
    )]
    NearDistance {
        /// The distance asked for.
        asked: u32,
        /// The distance the tables answer.
        built: u32,
    },

    /// Memory for a structure could not be had.
    #[error(
        "cannot allocate {bytes} bytes for the filter: not enough memory (or a memory limit); \
         build with a smaller capacity or a higher rate, or on a machine with more memory"
    )]
    OutOfMemory {
        /// The bytes asked for.
        bytes: u64,
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

    /// Coded data (a Golomb-coded set) does not decode.
    #[error("the {what} is damaged ({detail}); fetch or rebuild it")]
    Corrupt {
        /// What was being decoded.
        what: &'static str,
        /// What is wrong.
        detail: String,
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
}
