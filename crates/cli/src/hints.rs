//! The command-line words for a library error: the libraries say what is wrong and what to do in
//! their own terms ("a verification section", "more room"); this names the flags that do it.

use phishbloom_blocklist::Error as ListError;

/// The flags that fix `error`, if it is one a flag fixes.
pub fn for_error(error: &anyhow::Error) -> Option<&'static str> {
    error.chain().find_map(|cause| {
        if let Some(error) = cause.downcast_ref::<ListError>() {
            return for_list_error(error);
        }
        match cause.downcast_ref::<phishbloom_redis::Error>() {
            Some(phishbloom_redis::Error::Blocklist(error)) => for_list_error(error),
            Some(phishbloom_redis::Error::WrongKind { .. }) => {
                Some("`phishbloom build --kind blocked` (the default), without `--grow`")
            }
            Some(phishbloom_redis::Error::CategoryNeeded { .. }) => {
                Some("name the category with `--category NAME`")
            }
            _ => None,
        }
    })
}

fn for_list_error(error: &ListError) -> Option<&'static str> {
    Some(match error {
        ListError::CannotChange { .. } => {
            "build a list that changes with `--kind cuckoo --verify` (or `--kind counting \
             --verify`), or a blocked one with `--verify`"
        }
        ListError::Full { .. } => {
            "build it with a larger `--capacity`, or with `--grow` (a list kept in a file)"
        }
        ListError::Incompatible { .. } => {
            "build both with the same `--kind`, `--fpp`, `--capacity` and `--grow`"
        }
        ListError::CategoryNeeded { .. } => "name the category with `--category NAME`",
        ListError::RemoveNeedsVerification { .. } | ListError::NoVerification { .. } => {
            "rebuild the list with `phishbloom build --verify`"
        }
        ListError::DeltaUnsuitable { .. } => {
            "lists that change are built with `--verify`; `phishbloom diff` without `--compact` \
             makes an exact delta"
        }
        ListError::CapacityTooLarge { .. } => "build it with `--force` if you mean it",
        ListError::NoRoom { .. } => "`--force` writes anyway (it fails cleanly if the disk fills)",
        ListError::WrongScheme { .. } => {
            "a keyword list is built with `phishbloom build --keywords LIST`"
        }
        _ => return None,
    })
}
