//! One module per subcommand: each turns parsed arguments into library calls and prints results.

pub mod build;
pub mod canon;
pub mod check;
pub mod demo;
pub mod eval;
pub mod experiment;
pub mod info;
pub mod plan;
pub mod redis;
pub mod report;
pub mod scan;

/// Threads to use when the user did not say: every core the OS reports (1 if unknown).
pub fn default_threads(requested: Option<usize>) -> usize {
    requested
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}
