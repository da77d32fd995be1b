//! Which build options go together: the rules a build is checked against before any input is
//! read, so that an option is never silently ignored. [`BuildPlan::check`] names the first
//! option that does not apply by its field ([`PlanField`]); a front end maps fields to its own
//! words (the command line to its flags).

use phishbloom_filter::HashStrategy;

use phishbloom_core::keys::KeyScheme;
use phishbloom_core::Kind;

/// The options of a build that depend on each other, as asked for (an option not given is
/// `None` or `false`, so that a default is never mistaken for a request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildPlan {
    /// What the list holds: URL entries ([`KeyScheme::Expressions`]), whole keys
    /// ([`KeyScheme::Exact`], [`KeyScheme::Folded`]) or keywords ([`KeyScheme::Keywords`]).
    pub scheme: KeyScheme,
    /// Whole keys compared without case was asked for.
    pub fold_case: bool,
    /// The structure.
    pub kind: Kind,
    /// The hash strategy.
    pub strategy: HashStrategy,
    /// Grow when full.
    pub grow: bool,
    /// The entry count to size for, if given.
    pub capacity: Option<u64>,
    /// The lookups per checked URL to size for, if given.
    pub expression_bound: Option<u32>,
}

/// The most lookup expressions a URL has: every host suffix kept but the top label (16) times
/// every path prefix kept plus the bare host (65), and the top label's domain expression;
/// `phishbloom_url::expression`'s caps.
pub const MAX_EXPRESSIONS: u32 =
    ((phishbloom_url::MAX_HOST_SUFFIXES - 1) * (phishbloom_url::MAX_PATH_PREFIXES + 1) + 1) as u32;

/// An option of a [`BuildPlan`], by its field name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanField {
    /// [`BuildPlan::kind`].
    Kind,
    /// [`BuildPlan::strategy`].
    Strategy,
    /// [`BuildPlan::fold_case`].
    FoldCase,
    /// [`BuildPlan::grow`].
    Grow,
    /// [`BuildPlan::capacity`].
    Capacity,
    /// [`BuildPlan::expression_bound`].
    ExpressionBound,
}

impl PlanField {
    /// The field's name in [`BuildPlan`] (and in [`phishbloom_core::BuildOptions`]).
    pub fn name(self) -> &'static str {
        match self {
            PlanField::Kind => "kind",
            PlanField::Strategy => "strategy",
            PlanField::FoldCase => "fold_case",
            PlanField::Grow => "grow",
            PlanField::Capacity => "capacity",
            PlanField::ExpressionBound => "expression_bound",
        }
    }
}

/// Why an option does not apply; its text follows the option's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanRule {
    /// A bound on lookups per URL, for a list of whole keys.
    #[error("applies to URL entries, not to whole keys (each key is one lookup)")]
    ExpressionsAreForUrls,
    /// A bound on lookups per URL of 0 or above the most a URL can have.
    #[error(
        "must be from 1 to {MAX_EXPRESSIONS} (a URL has at most {MAX_EXPRESSIONS} lookup \
         expressions: 16 host suffixes × 65 path prefixes)"
    )]
    ExpressionBoundRange,
    /// CaBF, for a list of whole keys.
    #[error("holds URL entries, not whole keys")]
    CabfIsForUrls,
    /// Case folding, for URL entries or keywords.
    #[error("applies to whole keys; URLs are already compared by their canonical form")]
    FoldCaseIsForKeys,
    /// Growth or a capacity, for CaBF.
    #[error(
        "does not apply to a CaBF list: CaBF is built once from its list and takes no more \
         entries (use a blocked, cuckoo or counting list for a list that changes)"
    )]
    CabfIsBuiltOnce,
    /// SHA-256, for a structure other than one blocked or classic Bloom filter.
    #[error(
        "is for one blocked or classic Bloom filter; split, cuckoo, counting and growing \
         lists hash with xxh3"
    )]
    Sha256IsForOneBloomFilter,
    /// SHA-256, for URL entries.
    #[error(
        "is only available for whole keys; URL entries are hashed with xxh3, one hash per host \
         suffix and per path prefix"
    )]
    Sha256IsForKeys,
}

/// An option of a [`BuildPlan`] that does not apply, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} {rule}", self.named())]
pub struct PlanError {
    /// The option.
    pub field: PlanField,
    /// The value refused, when the option is refused for one value only (`kind` `cabf`,
    /// `strategy` `sha256`).
    pub value: Option<&'static str>,
    /// Why.
    pub rule: PlanRule,
}

impl PlanError {
    /// `field` or `field = value`.
    fn named(&self) -> String {
        match self.value {
            Some(value) => format!("{} = {value}", self.field.name()),
            None => self.field.name().to_string(),
        }
    }
}

impl BuildPlan {
    /// Refuses the first option that does not apply to the others.
    pub fn check(&self) -> Result<(), PlanError> {
        let refuse = |field, value, rule| Err(PlanError { field, value, rule });
        let whole_keys = matches!(self.scheme, KeyScheme::Exact | KeyScheme::Folded);
        if self
            .expression_bound
            .is_some_and(|e| !(1..=MAX_EXPRESSIONS).contains(&e))
        {
            return refuse(
                PlanField::ExpressionBound,
                None,
                PlanRule::ExpressionBoundRange,
            );
        }
        if whole_keys {
            if self.expression_bound.is_some() {
                return refuse(
                    PlanField::ExpressionBound,
                    None,
                    PlanRule::ExpressionsAreForUrls,
                );
            }
            if self.kind == Kind::Cabf {
                return refuse(PlanField::Kind, Some("cabf"), PlanRule::CabfIsForUrls);
            }
        } else if self.fold_case {
            return refuse(PlanField::FoldCase, None, PlanRule::FoldCaseIsForKeys);
        }
        if self.kind == Kind::Cabf {
            if self.grow {
                return refuse(PlanField::Grow, None, PlanRule::CabfIsBuiltOnce);
            }
            if self.capacity.is_some() {
                return refuse(PlanField::Capacity, None, PlanRule::CabfIsBuiltOnce);
            }
        }
        if self.strategy == HashStrategy::Sha256 {
            if self.grow || !matches!(self.kind, Kind::Blocked | Kind::Classic) {
                return refuse(
                    PlanField::Strategy,
                    Some("sha256"),
                    PlanRule::Sha256IsForOneBloomFilter,
                );
            }
            if self.scheme == KeyScheme::Expressions {
                return refuse(
                    PlanField::Strategy,
                    Some("sha256"),
                    PlanRule::Sha256IsForKeys,
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(scheme: KeyScheme) -> BuildPlan {
        BuildPlan {
            scheme,
            fold_case: false,
            kind: Kind::Blocked,
            strategy: HashStrategy::Xxh3,
            grow: false,
            capacity: None,
            expression_bound: None,
        }
    }

    fn refused(plan: BuildPlan) -> (PlanField, PlanRule) {
        let error = plan.check().unwrap_err();
        (error.field, error.rule)
    }

    #[test]
    fn defaults_pass_for_every_scheme() {
        for scheme in [
            KeyScheme::Expressions,
            KeyScheme::Exact,
            KeyScheme::Folded,
            KeyScheme::Keywords,
        ] {
            assert_eq!(plan(scheme).check(), Ok(()));
        }
        let sha256_keys = BuildPlan {
            strategy: HashStrategy::Sha256,
            kind: Kind::Classic,
            ..plan(KeyScheme::Exact)
        };
        assert_eq!(sha256_keys.check(), Ok(()));
        let growing_cuckoo = BuildPlan {
            kind: Kind::Cuckoo,
            grow: true,
            capacity: Some(10),
            ..plan(KeyScheme::Expressions)
        };
        assert_eq!(growing_cuckoo.check(), Ok(()));
    }

    #[test]
    fn options_for_urls_are_refused_for_whole_keys_and_the_reverse() {
        let bound = BuildPlan {
            expression_bound: Some(150),
            ..plan(KeyScheme::Exact)
        };
        assert_eq!(
            refused(bound),
            (PlanField::ExpressionBound, PlanRule::ExpressionsAreForUrls)
        );
        let cabf = BuildPlan {
            kind: Kind::Cabf,
            ..plan(KeyScheme::Folded)
        };
        assert_eq!(refused(cabf), (PlanField::Kind, PlanRule::CabfIsForUrls));
        let fold = BuildPlan {
            fold_case: true,
            ..plan(KeyScheme::Expressions)
        };
        assert_eq!(
            refused(fold),
            (PlanField::FoldCase, PlanRule::FoldCaseIsForKeys)
        );
        let sha256_urls = BuildPlan {
            strategy: HashStrategy::Sha256,
            ..plan(KeyScheme::Expressions)
        };
        assert_eq!(
            refused(sha256_urls),
            (PlanField::Strategy, PlanRule::Sha256IsForKeys)
        );
    }

    #[test]
    fn cabf_and_sha256_take_only_what_they_can_hold() {
        for (grow, capacity, field) in [
            (true, None, PlanField::Grow),
            (false, Some(5), PlanField::Capacity),
        ] {
            let cabf = BuildPlan {
                kind: Kind::Cabf,
                grow,
                capacity,
                ..plan(KeyScheme::Expressions)
            };
            assert_eq!(refused(cabf), (field, PlanRule::CabfIsBuiltOnce));
        }
        for (kind, grow) in [
            (Kind::Split, false),
            (Kind::Cuckoo, false),
            (Kind::Blocked, true),
        ] {
            let sha256 = BuildPlan {
                kind,
                grow,
                strategy: HashStrategy::Sha256,
                ..plan(KeyScheme::Exact)
            };
            let error = sha256.check().unwrap_err();
            assert_eq!(error.rule, PlanRule::Sha256IsForOneBloomFilter);
            assert!(
                error
                    .to_string()
                    .starts_with("strategy = sha256 is for one"),
                "{error}"
            );
        }
    }
}
