//! `phishbloom squid-helper`: squid's external ACL helper (`external_acl_type … %URI`), answering
//! `OK message=CATEGORY` for listed URLs and `ERR` for the rest; files replaced on disk are
//! reloaded between requests.

use std::process::ExitCode;
use std::sync::Arc;

use phishbloom_server::Lists;

use crate::args::SquidHelperArgs;

/// Answers squid on standard input and output until squid closes the pipe.
pub fn run(args: &SquidHelperArgs) -> anyhow::Result<ExitCode> {
    crate::commands::init_logging();
    let specs = super::serve::list_specs(&args.lists)?;
    let interval = super::serve::seconds(args.reload_interval, "reload-interval")?;
    let lists = Arc::new(Lists::open(&specs, Arc::default())?);
    let watched = Arc::downgrade(&lists);
    // The watcher ends with the helper: it holds the lists only while polling.
    std::thread::spawn(move || loop {
        std::thread::sleep(interval);
        match watched.upgrade() {
            Some(lists) => {
                lists.reload(false);
            }
            None => return,
        }
    });
    phishbloom_server::squid::run(&lists, std::io::stdin().lock(), std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}
