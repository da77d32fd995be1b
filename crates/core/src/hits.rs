//! What a filter's hits are made of, shared by the engines and the resolver below them: the
//! [`Candidate`] entries a structure answers for, the [`Fingerprints`] that confirm them, and
//! the [`Hit`] a verdict names.

use phishbloom_url::{Expression, ExpressionKind};

/// The entry through which a URL matched.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    /// The matched key: a host suffix (domain entry) or host suffix + path prefix (URL entry).
    pub expression: String,
    /// `domain` or `url`.
    pub kind: &'static str,
}

impl Hit {
    /// The hit for an expression.
    pub fn of(expression: Expression<'_>) -> Hit {
        Hit {
            expression: expression.to_key_string(),
            kind: match expression.kind() {
                ExpressionKind::Domain => "domain",
                ExpressionKind::Url => "url",
            },
        }
    }
}

/// A candidate entry for a URL: an expression the filter answered for, and its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The entry's 64-bit fingerprint, for confirmation.
    pub fingerprint: u64,
    /// The host of the expression.
    pub host: String,
    /// Its path (`""` for a domain entry).
    pub path: String,
}

impl Candidate {
    /// The candidate for an expression.
    pub fn new(fingerprint: u64, expression: Expression<'_>) -> Self {
        Candidate {
            fingerprint,
            host: expression.host.to_string(),
            path: expression.path.to_string(),
        }
    }

    /// The candidate's expression.
    pub fn expression(&self) -> Expression<'_> {
        Expression {
            host: &self.host,
            path: &self.path,
        }
    }
}

/// The sorted, distinct 64-bit fingerprints of a list's entries: exact confirmation of filter
/// hits (a blocklist file's verification section).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprints(Vec<u64>);

impl Fingerprints {
    /// The table of `fingerprints` (sorted and deduplicated here).
    pub fn new(mut fingerprints: Vec<u64>) -> Self {
        fingerprints.sort_unstable();
        fingerprints.dedup();
        Fingerprints(fingerprints)
    }

    /// A table already sorted strictly ascending (as a file stores it); `None` otherwise.
    pub fn from_sorted(fingerprints: Vec<u64>) -> Option<Self> {
        fingerprints
            .windows(2)
            .all(|w| w[0] < w[1])
            .then_some(Fingerprints(fingerprints))
    }

    /// Whether `fingerprint` is in the table.
    pub fn contains(&self, fingerprint: u64) -> bool {
        self.0.binary_search(&fingerprint).is_ok()
    }

    /// The fingerprints, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }

    /// Number of fingerprints.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_tables_are_sorted_sets() {
        let table = Fingerprints::new(vec![5, 1, 5, 3]);
        assert_eq!(table.as_slice(), [1, 3, 5]);
        assert!(table.contains(3) && !table.contains(4));
        assert!(Fingerprints::from_sorted(vec![1, 1]).is_none());
        assert!(Fingerprints::from_sorted(vec![2, 1]).is_none());
        assert_eq!(Fingerprints::from_sorted(vec![1, 2]).unwrap().len(), 2);
    }
}
