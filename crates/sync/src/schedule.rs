//! `sync --every`: when to poll — a random first poll, the publisher's minimum interval, and
//! Safe Browsing's back-off after failures.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use phishbloom_core::sync::next_poll;

use crate::client::{Client, Outcome};
use crate::error::Error;

/// What happened at one poll, for the caller to log.
pub enum Event<'a> {
    /// The poll succeeded (the copy was current or was updated).
    Synced(&'a Outcome),
    /// The poll failed; the next is in `retry_in`.
    Failed {
        /// Why.
        error: &'a Error,
        /// Failures in a row, this one included.
        failures: u32,
        /// The back-off before the next poll.
        retry_in: Duration,
    },
}

/// Polls until `stop` is set: the first poll at a random time in `[0, jitter)` (Safe
/// Browsing clients spread their first request so that a fleet started together does not
/// poll together), then every `every` (at least the publisher's minimum interval), backing off
/// after failures ([`backoff`]). Each poll is reported to `report`.
pub fn run_every(
    client: &mut Client,
    every: Duration,
    jitter: Duration,
    stop: &AtomicBool,
    mut report: impl FnMut(Event<'_>),
) {
    let mut failures = 0u32;
    let mut wait = jitter.mul_f64(random_unit());
    loop {
        if sleep_unless_stopped(wait, stop) {
            return;
        }
        match client.sync_once() {
            Ok(outcome) => {
                failures = 0;
                report(Event::Synced(&outcome));
                wait = interval(every, client.min_interval());
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                wait = backoff(failures, random_unit());
                report(Event::Failed {
                    error: &error,
                    failures,
                    retry_in: wait,
                });
            }
        }
    }
}

/// Sleeps for `wait`, waking every tenth of a second to see `stop`; whether it was set.
fn sleep_unless_stopped(wait: Duration, stop: &AtomicBool) -> bool {
    /// How often a sleeping poller looks at the stop flag: a SIGTERM is obeyed within it.
    const TICK: Duration = Duration::from_millis(100);
    let end = Instant::now() + wait;
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let now = Instant::now();
        if now >= end {
            return false;
        }
        std::thread::sleep(TICK.min(end - now));
    }
}

/// The wait after `failures` consecutive failed updates (none: no back-off): the core's
/// [`next_poll`], Safe Browsing v4's back-off.
pub fn backoff(failures: u32, rand: f64) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(next_poll(0.0, 0.0, failures, rand))
}

/// The wait between successful polls: what the user asked, but never less than the
/// publisher's minimum interval (the core's [`next_poll`]).
pub fn interval(every: Duration, min_interval: Option<u64>) -> Duration {
    let min = min_interval.unwrap_or(0) as f64;
    Duration::from_secs_f64(next_poll(every.as_secs_f64(), min, 0, 0.0))
}

/// A uniform random number in [0, 1) from the operating system's source (jitter needs no
/// more; a failing source gives 0.5, which only makes the jitter less random).
pub fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.5;
    }
    // The top 53 bits: every f64 in [0, 1) that a uniform 53-bit integer maps to.
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_fifteen_minutes_up_to_a_day() {
        assert_eq!(backoff(0, 0.3), Duration::ZERO);
        assert_eq!(backoff(1, 0.0), Duration::from_secs(900));
        assert_eq!(backoff(2, 0.0), Duration::from_secs(1800));
        assert_eq!(backoff(3, 0.5), Duration::from_secs(5400));
        assert_eq!(backoff(7, 0.0), Duration::from_secs(16 * 3600));
        assert_eq!(backoff(8, 0.0), Duration::from_secs(24 * 3600));
        assert_eq!(backoff(1000, 0.9), Duration::from_secs(24 * 3600));
    }

    #[test]
    fn the_publisher_sets_the_least_interval() {
        let every = Duration::from_secs(60);
        assert_eq!(interval(every, Some(300)), Duration::from_secs(300));
        assert_eq!(interval(every, Some(10)), every);
        assert_eq!(interval(every, None), every);
    }

    #[test]
    fn random_units_are_in_range() {
        for _ in 0..1000 {
            let r = random_unit();
            assert!((0.0..1.0).contains(&r));
        }
    }
}
