//! The command-line words for a library error: the libraries say what is wrong and what to do in
//! their own terms ("a verification section", "more room"); this names the flag or command that
//! does it, and only that, so the line says each thing once: `error: MESSAGE (HINT)`.

use phishbloom_blocklist::Error as ListError;
use phishbloom_core::Error as CoreError;

/// The flags that fix `error`, if it is one a flag fixes.
pub fn for_error(error: &anyhow::Error) -> Option<&'static str> {
    error.chain().find_map(|cause| {
        if let Some(error) = cause.downcast_ref::<ListError>() {
            return for_list_error(error);
        }
        if let Some(error) = cause.downcast_ref::<CoreError>() {
            return for_core_error(error);
        }
        if let Some(error) = cause.downcast_ref::<phishbloom_sync::Error>() {
            return for_sync_error(error);
        }
        cause
            .downcast_ref::<phishbloom_redis::Error>()
            .and_then(for_redis_error)
    })
}

/// The flags for the errors of lists in Redis.
fn for_redis_error(error: &phishbloom_redis::Error) -> Option<&'static str> {
    use phishbloom_redis::Error as E;
    Some(match error {
        E::Blocklist(error) => return for_list_error(error),
        E::WrongKind { .. } => "`phishbloom build --kind blocked`, without `--grow`",
        E::CategoryNeeded { .. } => "`--category NAME`",
        E::WouldLoseAdds { .. } => "`--force`",
        _ => return None,
    })
}

/// The flags for the errors of publishing and syncing.
fn for_sync_error(error: &phishbloom_sync::Error) -> Option<&'static str> {
    use phishbloom_sync::Error as E;
    Some(match error {
        E::List(error) => return for_list_error(error),
        E::Rollback { .. } => "`--allow-rollback`",
        E::Status {
            status: 401 | 403, ..
        } => "`--header 'Authorization: Bearer TOKEN'`",
        _ => return None,
    })
}

/// The flags for the errors of lists on a machine with files.
fn for_list_error(error: &ListError) -> Option<&'static str> {
    Some(match error {
        ListError::Core(error) => return for_core_error(error),
        ListError::NoRoom { .. } => "`--force` writes anyway, and fails cleanly if the disk fills",
        ListError::LooksLikeCsv { .. } => {
            "`--format csv`, which reads standard input too; `--format lines` if it is a list"
        }
        ListError::LooksLikeAddresses { .. } => "`--exact`, with `--fold-case` to ignore case",
        ListError::MostLinesRejected { .. } => "`--exact` if its lines are whole keys",
        ListError::MissingColumn { role: "key", .. } => {
            "`--column NAME`; `--format lines` for a plain list"
        }
        ListError::MissingColumn { role: "label", .. } => "`--label-column NAME`",
        ListError::MissingColumn {
            role: "category", ..
        } => "`--category-column NAME`",
        ListError::NoMatchingRows { .. } => "`--label-value VALUE`, or `--all-rows`",
        ListError::NotText { .. } => "`--exact`",
        ListError::Locked { .. } => "`--lock-timeout SECONDS`",
        _ => return None,
    })
}

/// The flags for the check core's errors.
fn for_core_error(error: &CoreError) -> Option<&'static str> {
    Some(match error {
        CoreError::CannotChange { .. } => {
            "`phishbloom build --kind cuckoo --verify`, `--kind counting --verify`, or `--verify`"
        }
        CoreError::Full { .. } => "`phishbloom build --capacity N`, or `--grow`",
        CoreError::Incompatible { .. } => "`--kind`, `--fpp`, `--capacity` and `--grow` of `build`",
        CoreError::CategoryNeeded { .. } => "`--category NAME`",
        CoreError::RemoveNeedsVerification { .. } | CoreError::NoVerification { .. } => {
            "`phishbloom build --verify`"
        }
        CoreError::DeltaUnsuitable { .. } => {
            "`phishbloom build --verify`; `phishbloom diff` without `--compact`"
        }
        CoreError::CapacityTooLarge { .. } => "`--force`",
        CoreError::WrongScheme { .. } => "`phishbloom build --keywords LIST`",
        CoreError::NearTooManyCategories { .. } => "`--category`",
        CoreError::Untrusted { .. } => "`phishbloom publish --sign KEY`; `--trust KEY.pub`",
        CoreError::BadKey { .. } => "`phishbloom keygen NAME`",
        CoreError::Rollback { .. } => "`--allow-rollback`",
        CoreError::Filter(phishbloom_filter::Error::NearDistance { .. }) => {
            "`phishbloom build --near --max-distance N`"
        }
        _ => return None,
    })
}
