//! One module per subcommand: each turns parsed arguments into library calls and prints results.

pub mod build;
pub mod canon;
pub mod check;
pub mod completions;
pub mod demo;
pub mod dns;
pub mod edit;
pub mod eval;
pub mod info;
pub mod plan;
pub mod publish;
pub mod redis;
pub mod scan;
pub mod serve;
pub mod squid_helper;

/// Threads to use when the user did not say: every core the OS reports (1 if unknown).
pub fn default_threads(requested: Option<usize>) -> usize {
    requested
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Whether standard input is a regular file (`< file`), which the stream checker may read in
/// whole chunks ([`phishbloom_blocklist::check::StreamOptions::input_is_file`]); `false` for a
/// pipe, a terminal, or whatever cannot be told.
pub fn stdin_is_file() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        // A duplicate of the descriptor, for its metadata; closed as the `File` drops.
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata())
            .is_ok_and(|meta| meta.is_file())
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Sends the server's log lines (tracing) to standard error, at `info` unless `RUST_LOG` says
/// otherwise, coloured only on a terminal and never with `NO_COLOR` set (no-color.org); a
/// second call changes nothing. A line that cannot be written (standard error a pipe whose
/// reader is gone) is dropped: the fallback that would report it panics there, in whichever
/// task logged — the one that handles SIGTERM, say.
pub fn init_logging() {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .log_internal_errors(false)
        .try_init();
}

/// A count and its noun, singular for one: `1 entry`, `2 entries`, `1,000 keys` (thousands
/// separated as [`phishbloom_core::fmt::count`] does).
pub fn plural(count: u64, one: &str, many: &str) -> String {
    let noun = if count == 1 { one } else { many };
    format!("{} {noun}", phishbloom_core::fmt::count(count))
}
