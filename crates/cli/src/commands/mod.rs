//! One module per subcommand: each turns parsed arguments into library calls and prints results.

pub mod build;
pub mod canon;
pub mod check;
pub mod demo;
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

/// Sends the server's log lines (tracing) to standard error, at `info` unless `RUST_LOG` says
/// otherwise; a second call changes nothing.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
