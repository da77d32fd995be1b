//! What a check answers: a [`Status`], the owned [`Verdict`], and the borrowing [`Decision`]
//! with the [`Spot`]s it is found from.

use phishbloom_url::{CanonicalUrl, Expression};

use crate::hits::Hit;

use super::{Categories, Resolver};

/// What a verdict says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// No entry lists the item.
    #[default]
    Clean,
    /// An entry lists it (for a filter without verification: possibly, wrong with the list's
    /// false-positive rate).
    Listed,
    /// An entry lists it, but an equally or more specific exception allows it.
    Allowed,
    /// The item cannot be read as what the list holds (a URL that does not parse, asked of a
    /// list of URL entries): never listed, answered with the reason in [`Verdict::error`].
    Invalid,
}

impl Status {
    /// `clean`, `listed`, `allowed` or `invalid`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Clean => "clean",
            Status::Listed => "listed",
            Status::Allowed => "allowed",
            Status::Invalid => "invalid",
        }
    }

    /// Appends a tab and [`Status::name`] to `out` (a verdict's TSV column): each name a
    /// constant, so the copy is a few stores rather than a call (the TSV printer's hot path).
    #[inline(always)]
    pub fn write_tsv_column(self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self {
            Status::Clean => b"\tclean",
            Status::Listed => b"\tlisted",
            Status::Allowed => b"\tallowed",
            Status::Invalid => b"\tinvalid",
        });
    }
}

/// The answer for one checked item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Clean, listed, allowed or invalid.
    pub status: Status,
    /// The entry that lists the item (also when an exception overrides it).
    pub hit: Option<Hit>,
    /// The exception that allows it.
    pub exception: Option<Hit>,
    /// The categories of the entry: exact, or every category the entry may belong to.
    pub categories: Vec<String>,
    /// Whether `categories` are exactly the entry's (verified, or a one-category list).
    pub categories_exact: bool,
    /// Why an [`Status::Invalid`] item could not be checked.
    pub error: Option<String>,
}

impl Verdict {
    /// The answer for an item that cannot be checked, with the reason.
    pub fn invalid(reason: impl ToString) -> Self {
        Verdict {
            status: Status::Invalid,
            error: Some(reason.to_string()),
            ..Verdict::default()
        }
    }

    /// Whether the item is listed (and not allowed).
    pub fn listed(&self) -> bool {
        self.status == Status::Listed
    }
}

/// A candidate entry of one URL named by where its expression lies in the URL: the host suffix
/// that starts at byte `host_start` of the host, and the first `path_len` bytes of the path and
/// query (`0`: a domain expression). Copyable, so that a batch of them needs no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    /// The entry's 64-bit fingerprint, for confirmation.
    pub fingerprint: u64,
    /// Start of the host suffix in [`CanonicalUrl::host`].
    pub host_start: u32,
    /// Length of the path prefix in [`CanonicalUrl::path_and_query`].
    pub path_len: u32,
}

impl Spot {
    /// The expression this spot names in `url` (the URL it was found in).
    #[inline]
    pub fn expression(self, url: &CanonicalUrl) -> Expression<'_> {
        url.expression_at(self.host_start as usize, self.path_len as usize)
    }

    /// [`specificity`] of its expression, for a host of `host_len` bytes.
    pub(super) fn specificity(&self, host_len: usize) -> (usize, usize) {
        (
            host_len.saturating_sub(self.host_start as usize),
            self.path_len as usize,
        )
    }
}

/// A verdict for a URL that borrows from the URL and the list
/// ([`Resolver::decide_in_order`]): what a printer needs, with nothing allocated. Clean when
/// `hit` is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision<'u, 'r> {
    /// Clean, listed or allowed.
    pub status: Status,
    /// The block entry that lists the URL (also when an exception overrides it).
    pub hit: Option<Expression<'u>>,
    /// The exception that allows it.
    pub exception: Option<Expression<'u>>,
    /// The block entry's categories.
    pub categories: Option<Categories<'r>>,
}

impl Decision<'_, '_> {
    /// The owned [`Verdict`] (`resolver` is the one that decided).
    pub fn verdict(&self, resolver: &Resolver) -> Verdict {
        self.entry_verdict(resolver).unwrap_or_default()
    }

    /// The owned [`Verdict`] when an entry decided it (listed or allowed); `None` when clean,
    /// and then nothing is built.
    pub fn entry_verdict(&self, resolver: &Resolver) -> Option<Verdict> {
        match (self.hit, &self.categories) {
            (Some(hit), Some(categories)) => {
                Some(resolver.verdict_of(hit, self.exception, categories))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TSV column's constant names are [`Status::name`]'s.
    #[test]
    fn the_tsv_column_is_a_tab_and_the_name() {
        for status in [
            Status::Clean,
            Status::Listed,
            Status::Allowed,
            Status::Invalid,
        ] {
            let mut out = Vec::new();
            status.write_tsv_column(&mut out);
            assert_eq!(out, format!("\t{}", status.name()).as_bytes());
        }
    }
}
