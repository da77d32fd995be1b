//! phishbloom blocklists in Redis or Redis Cluster, shared by a whole fleet: push a
//! blocked-layout blocklist file, check items with one 64-byte `GETRANGE` per probe (pipelined,
//! one round trip per batch, probed locally with the verdicts of the local file), add keys to
//! the live list, and verify what Redis holds. A compact list is pushed as its table, which
//! each reader reads whole per version and answers from (a batch then only reads the pointer).
//!
//! The blocked layout keeps a key's k bits in one 64-byte block, so a check fetches one block
//! per probe instead of running k `GETBIT`s, and the filter is split into chunks of at most
//! 1 MiB under keys that spread over a cluster's slots — no 512 MB string limit.
//!
//! # Modules
//! - [`store`] — Redis URLs (`redis://`, `rediss://`, `redis+cluster://…`, passwords) and the
//!   [`Store`] connection that runs a batch of commands in one round trip.
//! - [`layout`] — key names, chunks, the block/bit ↔ Redis offset mapping, chunk checksums.
//! - [`meta`] — a version's metadata hash.
//! - [`push`] — writing a new version and switching readers to it atomically.
//! - [`blocklist`] — [`RedisBlocklist`]: `contains` / `check_batch`, verdicts decided by the
//!   blocklist crate's resolver from the categories, verification table and exceptions that
//!   `stored` reads back once per version.
//! - [`add`] — inserting keys into the live version with `BITFIELD`.
//! - [`info`] — reading a version back, verifying every chunk; [`info::pull`] the bits.
//! - [`Error`] — everything that can fail, naming the server, list and chunk, and the fix.
//!
//! # Example
//! ```no_run
//! use phishbloom_blocklist::BlocklistFile;
//! use phishbloom_core::Blocklist;
//! use phishbloom_redis::push::{push, PushOptions, PushSource};
//! use phishbloom_redis::{RedisBlocklist, Target};
//!
//! # fn main() -> Result<(), phishbloom_redis::Error> {
//! let target = Target::parse("redis://127.0.0.1:6379")?;
//! let file = std::path::Path::new("phishing.bloom");
//! let list = Blocklist::open(file)?;
//! push(&mut target.connect()?, "phishing", &PushSource::of(&list, file)?, &PushOptions::default())?;
//!
//! let mut remote = RedisBlocklist::open(&target, "phishing")?;
//! let verdict = remote.check(b"HTTP://WWW.Metamascks.com:80/a/../login#x")?;
//! assert_eq!(verdict, list.check(b"HTTP://WWW.Metamascks.com:80/a/../login#x", &mut Default::default()));
//! phishbloom_redis::add::add(&mut target.connect()?, "phishing", &[b"new-evil.example"], None)?;
//! assert!(remote.contains(b"http://www.new-evil.example/x")?);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod add;
pub mod blocklist;
mod error;
pub mod info;
pub mod layout;
pub mod meta;
pub mod push;
pub mod store;
mod stored;

pub use blocklist::RedisBlocklist;
pub use error::{Error, Result};
pub use store::{Store, Target};

/// The longest list name, in bytes (as in a blocklist file's metadata).
pub const MAX_NAME_BYTES: usize = phishbloom_core::sections::MAX_NAME_BYTES;

/// Checks that `name` can prefix a list's keys: 1 to [`MAX_NAME_BYTES`] bytes, no whitespace or
/// control characters, and no `{` or `}` (a hash tag would pin every chunk to one cluster slot).
pub fn validate_name(name: &str) -> Result<()> {
    let bad = |problem| Error::BadName {
        name: name.to_string(),
        problem,
    };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(bad("it is too long"));
    }
    if name.contains(['{', '}']) {
        return Err(bad(
            "braces would make a hash tag that puts every chunk in one cluster slot",
        ));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("it holds whitespace or control characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_pin_or_garble_keys_are_refused() {
        assert!(validate_name("phishing").is_ok());
        assert!(validate_name("ut1:phishing.v2").is_ok());
        for bad in ["", "a{b}", "a b", "tab\t", &"x".repeat(256)] {
            assert!(
                matches!(validate_name(bad), Err(Error::BadName { .. })),
                "{bad:?}"
            );
        }
    }
}
