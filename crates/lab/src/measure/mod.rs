//! The measurements behind the report (`phishbloom-report`), one module per report section:
//! each builds the structures, inserts, queries and times, and returns typed rows that the
//! report only renders. What to measure is decided here too: [`Sizes`] for full and `--quick`
//! runs, the seeds and the thread count, gathered in [`Settings`].
//!
//! - [`sizing`] — n, m, k and bytes for the dataset's n and seeds 000's and 002's (computed).
//! - [`dataset`] — the dataset's keys, and seeds 000/001's experiment on them for both layouts.
//! - [`sweeps`] — the rate against k, and against bits per key, on synthetic keys.
//! - [`hashing`] — SHA-256 per index against xxh3 double hashing: rates and timed builds.
//! - [`memory`] — seed 004's table: Bloom filters, a `HashSet<String>`, 32-bit fingerprints.
//! - [`scale`] — seed 002 at 10⁸ keys: parallel and single-threaded builds, rate, memory.
//! - [`changes`] — lists that change: bits per key and speed of the kinds that
//!   delete beside peers, delta sizes on UT1, and the time to apply a delta.
//! - [`contenders`] — the structures and peers of [`changes`] behind one trait, shared with the
//!   lab's criterion bench `kinds`.
//! - [`keywords`] — scanning e-mail for 10⁵…10⁸ keywords beside aho-corasick, each
//!   configuration in its own process.
//! - [`near`] — near-duplicate documents by SimHash on real prose — shingle width,
//!   weighting and the short-text threshold chosen by measurement, MinHash-LSH and brute force
//!   beside it, and Manku's tables at 10⁷ fingerprints.
//! - [`peers`] — compact lists against their peers: phishbloom's verified and compact lists,
//!   Safe Browsing v4's Rice-coded prefixes and binary fuse filters on UT1 and synthetic domain
//!   lists — bits per entry, per-URL rate, ns per URL, update bytes per addition.
//! - [`machine`] — the process's resident memory and the machine's load.

pub mod changes;
pub mod contenders;
pub mod dataset;
pub mod hashing;
pub mod keywords;
pub mod machine;
pub mod memory;
pub mod near;
pub mod peers;
pub mod scale;
pub mod sizes;
pub mod sizing;
pub mod sweeps;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use sizes::Sizes;

/// Everything a measurement needs to know: the data, how big to make each experiment, how many
/// threads to use, and where to report progress.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The labelled dataset (`url,isMalicious`).
    pub data: PathBuf,
    /// Whether these are the `--quick` sizes.
    pub quick: bool,
    /// The sizes in force.
    pub sizes: Sizes,
    /// Threads for inserting and querying (at least 1).
    pub threads: usize,
    /// Progress lines, with the time since the run started.
    pub progress: Progress,
}

impl Settings {
    /// The settings of a full (`quick == false`) or quick run on `data`; `threads == 0` means
    /// every core the OS reports. Progress lines go to standard error when `verbose`.
    pub fn new(data: PathBuf, quick: bool, threads: usize, verbose: bool) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        Settings {
            data,
            quick,
            sizes: if quick { Sizes::quick() } else { Sizes::full() },
            threads,
            progress: Progress::new("report", verbose),
        }
    }
}

/// A run's clock and its progress lines on standard error (`label [  12.3 s] message`).
#[derive(Clone, Debug)]
pub struct Progress {
    label: &'static str,
    verbose: bool,
    started: Instant,
}

impl Progress {
    /// Starts the clock; lines are printed only when `verbose`.
    pub fn new(label: &'static str, verbose: bool) -> Self {
        Progress {
            label,
            verbose,
            started: Instant::now(),
        }
    }

    /// Prints `message` with the time since the start, when verbose.
    pub fn say(&self, message: &str) {
        if self.verbose {
            eprintln!(
                "{} [{:6.1} s] {message}",
                self.label,
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// Wall time since the clock started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// Runs `work` and returns its result with the wall time it took.
pub fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = work();
    (value, started.elapsed())
}

/// Maps a filter-sizing failure of `experiment`: the measurements' sizes are fixed and valid,
/// so it is a bug in [`Sizes`] or in the experiment.
fn sizing_error(
    experiment: &'static str,
    num_bits: u64,
    num_hashes: u32,
) -> impl FnOnce(phishbloom_filter::Error) -> crate::Error {
    move |source| crate::Error::Sizing {
        experiment,
        num_bits,
        num_hashes,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_pick_the_sizes_and_resolve_threads() {
        let quick = Settings::new("d.csv".into(), true, 0, false);
        assert_eq!(quick.sizes, Sizes::quick());
        assert!(quick.threads >= 1);
        let full = Settings::new("d.csv".into(), false, 3, false);
        assert_eq!(full.sizes, Sizes::full());
        assert_eq!(full.threads, 3);
    }

    #[test]
    fn timed_returns_the_value_and_a_duration() {
        let (value, took) = timed(|| {
            std::thread::sleep(Duration::from_millis(5));
            42
        });
        assert_eq!(value, 42);
        assert!(took >= Duration::from_millis(5), "{took:?}");
    }
}
