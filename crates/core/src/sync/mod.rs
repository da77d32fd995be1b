//! The publish/sync protocol's rules, with no I/O: the index a publisher writes and a client
//! reads, its Ed25519 signature, which downloads bring a client's copy to the published
//! version (the whole file, or the cheapest chain of deltas), and the checks on what arrives.
//!
//! `phishbloom sync`, `phishbloom serve` and the browser extension (this crate compiled to
//! WebAssembly) all decide with these functions, so no client re-implements a rule.
//! docs/SYNC.md specifies the protocol; in short:
//!
//! - `BASE/index.json` is `{"signed": BODY, "signature": SIG}`. BODY ([`IndexBody`]) names the
//!   list's version, entry count, set fingerprint, the whole file and the deltas kept (each
//!   with its byte length and SHA-256), and the least number of seconds between polls.
//! - SIG, when present, is `{"key": KEY-ID, "ed25519": HEX}`: an Ed25519 signature over the
//!   domain tag [`SIGNING_CONTEXT`] followed by BODY's exact bytes as sent. A client that trusts
//!   a key ([`PublicKey`]) refuses an unsigned index and one signed by any other key. Since the
//!   body names every download's SHA-256, a verified index authenticates all the bytes a
//!   client applies (integrity alone is not enough: a delta that *removes* entries is a false
//!   negative by design).
//! - Paths in BODY are relative to `BASE/`.
//! - BODY's `expires` ([`Index::check_current`]) bounds how long a signed index can be replayed;
//!   `rotations` beside SIG ([`rotation`]) hand a list over from one key to the next.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kind::Kind;
use crate::list::Blocklist;
use crate::sections::{Meta, SetFingerprint};

mod keys;
pub mod rotation;

pub use keys::{sha256_hex, PublicKey, SecretKey, Signature, SIGNING_CONTEXT};
use rotation::Rotation;

/// The protocol number this build writes and reads; a reader refuses others.
pub const PROTOCOL: u32 = 1;

/// The least seconds between a client's polls when an index names none (Safe Browsing's
/// clients wait at least this long between updates unless told otherwise).
pub const DEFAULT_MIN_INTERVAL: u64 = 300;

/// The longest index accepted, in bytes: an index of 30 deltas is about 4 KB, so 1 MiB is
/// far beyond any real one and bounds what a hostile server can make a client parse.
pub const MAX_INDEX_BYTES: usize = 1 << 20;

/// One file a client may download: where, how long, and its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Download {
    /// The path, relative to the list's base URL.
    pub path: String,
    /// Its length in bytes.
    pub bytes: u64,
    /// Its SHA-256, 64 lowercase hexadecimal digits.
    pub sha256: String,
}

impl Download {
    /// Describes `data`, published at `path`.
    pub fn of(path: impl Into<String>, data: &[u8]) -> Self {
        Download {
            path: path.into(),
            bytes: data.len() as u64,
            sha256: sha256_hex(data),
        }
    }

    /// Checks that `data` is this download: its length, then its SHA-256.
    pub fn check(&self, data: &[u8]) -> Result<()> {
        if data.len() as u64 != self.bytes {
            return Err(Error::Download {
                path: self.path.clone(),
                problem: format!(
                    "{} bytes arrived, the index promised {}",
                    data.len(),
                    self.bytes
                ),
            });
        }
        let found = sha256_hex(data);
        if found != self.sha256 {
            return Err(Error::Download {
                path: self.path.clone(),
                problem: format!("SHA-256 {found}, the index promised {}", self.sha256),
            });
        }
        Ok(())
    }
}

/// A delta a client may download: from which version to which, and the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeltaLink {
    /// The list version the delta applies to.
    pub from: u64,
    /// The list version it leads to.
    pub to: u64,
    /// When it was published, in seconds since the Unix epoch (0: not known).
    #[serde(default)]
    pub published: u64,
    /// The delta file.
    #[serde(flatten)]
    pub file: Download,
}

/// What an index says about the published list: the part a signature covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexBody {
    /// The protocol number ([`PROTOCOL`]).
    pub protocol: u32,
    /// The list's name.
    pub name: String,
    /// The list version published.
    pub version: u64,
    /// The structure its file holds (`blocked`, `cuckoo`, …).
    pub kind: String,
    /// Its distinct entries.
    pub entries: u64,
    /// Its set fingerprint (32 hexadecimal digits, as `phishbloom info` prints it).
    pub set_fingerprint: String,
    /// When the list was written, in seconds since the Unix epoch.
    pub created: u64,
    /// When this index was published, in seconds since the Unix epoch.
    pub published: u64,
    /// The least seconds a client waits between polls.
    pub min_interval: u64,
    /// When this index stops being current, in seconds since the Unix epoch: a client refuses
    /// it from then on ([`Index::check_current`]), so that whoever sits between publisher and
    /// client cannot serve an old signed index forever. 0 (an index that names no expiry, as
    /// publishers before expiry wrote them): never.
    #[serde(default)]
    pub expires: u64,
    /// The whole file.
    pub file: Download,
    /// The deltas kept, each leading towards `version` (the last of a chain to it).
    pub deltas: Vec<DeltaLink>,
}

/// An index as read: its body and whether (and by which key) it was signed.
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    /// What the index says.
    pub body: IndexBody,
    /// Its signature, if it has one (checked when a key was trusted).
    pub signature: Option<Signature>,
    /// The key whose signature was checked: the trusted key, or the key its hand-overs
    /// ([`rotation`]) led to from it — the one to trust from now on. `None`: no key
    /// was trusted.
    pub verified_by: Option<PublicKey>,
}

/// The wire form: the body's bytes are kept as they came, since the signature covers them.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    signed: &'a serde_json::value::RawValue,
    #[serde(default)]
    signature: Option<Signature>,
    #[serde(default)]
    rotations: Vec<Rotation>,
}

/// What a client does to reach the published version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Its copy is the published version: nothing to fetch.
    Current,
    /// Fetch the whole file.
    Whole(Download),
    /// Fetch and apply these deltas, in order.
    Chain(Vec<DeltaLink>),
}

impl Plan {
    /// The bytes the plan downloads.
    pub fn bytes(&self) -> u64 {
        match self {
            Plan::Current => 0,
            Plan::Whole(file) => file.bytes,
            Plan::Chain(links) => links.iter().map(|l| l.file.bytes).sum(),
        }
    }
}

/// The list, version and set a client's copy holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalState {
    /// Its list's name (a copy only ever follows the list it holds).
    pub name: String,
    /// Its list version.
    pub version: u64,
    /// Its set fingerprint.
    pub fingerprint: SetFingerprint,
}

impl LocalState {
    /// The state of a list held.
    pub fn of(list: &Blocklist) -> Self {
        LocalState {
            name: list.meta().name.clone(),
            version: list.meta().version,
            fingerprint: list.meta().fingerprint,
        }
    }
}

impl IndexBody {
    /// The body describing `list`, published as `file` (its bytes) with `deltas`.
    pub fn describe(list: &Blocklist, file: Download, deltas: Vec<DeltaLink>) -> Self {
        IndexBody::describe_meta(list.kind(), list.meta(), file, deltas)
    }

    /// The body describing a list of `kind` and `meta`, published as `file` with `deltas`.
    pub fn describe_meta(kind: Kind, meta: &Meta, file: Download, deltas: Vec<DeltaLink>) -> Self {
        IndexBody {
            protocol: PROTOCOL,
            name: meta.name.clone(),
            version: meta.version,
            kind: kind.to_string(),
            entries: meta.entries,
            set_fingerprint: meta.fingerprint.to_string(),
            created: meta.created,
            published: 0,
            min_interval: DEFAULT_MIN_INTERVAL,
            expires: 0,
            file,
            deltas,
        }
    }

    /// The index file: this body, signed with `key` when given. The body is written compactly,
    /// once, and those bytes are the ones signed.
    pub fn to_json(&self, key: Option<&SecretKey>) -> Vec<u8> {
        self.to_json_with(key, &[])
    }

    /// [`IndexBody::to_json`], carrying the key hand-overs `rotations` (in order) that lead
    /// clients trusting an earlier key to `key`.
    pub fn to_json_with(&self, key: Option<&SecretKey>, rotations: &[Rotation]) -> Vec<u8> {
        // Serializing a struct of strings and integers cannot fail.
        let body = serde_json::to_string(self).expect("an index body serializes");
        let mut out = String::with_capacity(body.len() + 200);
        out.push_str("{\"signed\":");
        out.push_str(&body);
        if let Some(key) = key {
            let signature = key.sign(body.as_bytes());
            // As above: two strings.
            let text = serde_json::to_string(&signature).expect("a signature serializes");
            out.push_str(",\"signature\":");
            out.push_str(&text);
        }
        if !rotations.is_empty() {
            // As above: strings.
            let text = serde_json::to_string(rotations).expect("rotations serialize");
            out.push_str(",\"rotations\":");
            out.push_str(&text);
        }
        out.push_str("}\n");
        out.into_bytes()
    }
}

impl Index {
    /// Reads an index file. With `trust`, refuses an index that is unsigned, signed by another
    /// key, or whose signature does not verify; without, a signature is not checked (a client
    /// that trusts no key relies on the transport).
    pub fn from_json(origin: &str, bytes: &[u8], trust: Option<&PublicKey>) -> Result<Index> {
        let bad = |problem: String| Error::BadIndex {
            origin: origin.to_string(),
            problem,
        };
        if bytes.len() > MAX_INDEX_BYTES {
            return Err(bad(format!(
                "{} bytes, more than an index can be ({MAX_INDEX_BYTES})",
                bytes.len()
            )));
        }
        let envelope: Envelope<'_> =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("not an index: {e}")))?;
        let signed = envelope.signed.get().as_bytes();
        let verified_by = match trust {
            Some(trusted) => {
                let key = rotation::follow(origin, trusted, &envelope.rotations)?;
                key.verify(origin, signed, envelope.signature.as_ref())?;
                Some(key)
            }
            None => None,
        };
        let body: IndexBody =
            serde_json::from_slice(signed).map_err(|e| bad(format!("not an index: {e}")))?;
        if body.protocol != PROTOCOL {
            return Err(bad(format!(
                "protocol {}, this build reads protocol {PROTOCOL}; upgrade phishbloom",
                body.protocol
            )));
        }
        parse_fingerprint(&body.set_fingerprint).ok_or_else(|| {
            bad(format!(
                "set_fingerprint {:?} is not 32 hexadecimal digits",
                body.set_fingerprint
            ))
        })?;
        for link in &body.deltas {
            if link.from >= link.to || link.to > body.version {
                return Err(bad(format!(
                    "a delta from version {} to {} cannot lead to version {}",
                    link.from, link.to, body.version
                )));
            }
        }
        Ok(Index {
            body,
            signature: envelope.signature,
            verified_by,
        })
    }

    /// Refuses an index past its expiry at `now` (seconds since the Unix epoch), naming when
    /// it expired ([`Error::Expired`]); an index without one is always current.
    pub fn check_current(&self, origin: &str, now: u64) -> Result<()> {
        check_expiry(origin, &self.body.name, self.body.expires, now)
    }

    /// What a client holding `local` (nothing, on a first run) fetches to reach the published
    /// version: nothing when it has it, else the chain of deltas that downloads the fewest
    /// bytes, or the whole file when no chain leads there or the cheapest costs more than
    /// the file. A published version older than the local one is refused unless
    /// `allow_rollback` (then the whole file); so is an index of another list than the copy's
    /// (whoever can serve at the copy's URL could otherwise replace it by any other list
    /// signed by the same key: delete the copy to follow another list).
    pub fn plan(&self, local: Option<LocalState>, allow_rollback: bool) -> Result<Plan> {
        let body = &self.body;
        let whole = Plan::Whole(body.file.clone());
        let Some(local) = local else {
            return Ok(whole);
        };
        if local.name != body.name {
            return Err(Error::OtherList {
                local: local.name,
                published: body.name.clone(),
            });
        }
        let published = parse_fingerprint(&body.set_fingerprint);
        if local.version > body.version {
            if allow_rollback {
                return Ok(whole);
            }
            return Err(Error::Rollback {
                name: body.name.clone(),
                local: local.version,
                published: body.version,
            });
        }
        if local.version == body.version {
            return Ok(if published == Some(local.fingerprint) {
                Plan::Current
            } else {
                whole
            });
        }
        Ok(
            match cheapest_chain(&body.deltas, local.version, body.version) {
                Some((cost, chain)) if cost < body.file.bytes => Plan::Chain(chain),
                _ => whole,
            },
        )
    }

    /// Checks that `list`, reached by following a plan, is what the index promised: its
    /// version and set fingerprint.
    pub fn confirm(&self, list: &Blocklist) -> Result<()> {
        let meta = list.meta();
        let fingerprint = meta.fingerprint.to_string();
        if meta.version != self.body.version || fingerprint != self.body.set_fingerprint {
            return Err(Error::NotPromised {
                name: self.body.name.clone(),
                promised: format!(
                    "version {} with set fingerprint {}",
                    self.body.version, self.body.set_fingerprint
                ),
                found: format!(
                    "version {} with set fingerprint {fingerprint}",
                    meta.version
                ),
            });
        }
        Ok(())
    }
}

/// The chain of deltas from version `from` to `to` that downloads the fewest bytes, and that
/// number (deltas only lead to later versions, so one pass over them in order of their
/// starting version relaxes every path: a shortest path in a DAG).
fn cheapest_chain(links: &[DeltaLink], from: u64, to: u64) -> Option<(u64, Vec<DeltaLink>)> {
    let mut order: Vec<&DeltaLink> = links.iter().filter(|l| l.from >= from).collect();
    order.sort_by_key(|l| (l.from, l.to));
    // For each version reached: its cost and the link that reached it.
    let mut best: std::collections::BTreeMap<u64, (u64, Option<&DeltaLink>)> =
        std::collections::BTreeMap::new();
    best.insert(from, (0, None));
    for link in order {
        let Some(&(cost, _)) = best.get(&link.from) else {
            continue;
        };
        let cost = cost.saturating_add(link.file.bytes);
        if best.get(&link.to).is_none_or(|&(old, _)| cost < old) {
            best.insert(link.to, (cost, Some(link)));
        }
    }
    let &(cost, _) = best.get(&to)?;
    let mut chain = Vec::new();
    let mut at = to;
    while let Some(&(_, Some(link))) = best.get(&at) {
        chain.push(link.clone());
        at = link.from;
    }
    chain.reverse();
    Some((cost, chain))
}

/// Refuses an index of list `name` that expires at `expires` (0: never) when it is `now`.
pub fn check_expiry(origin: &str, name: &str, expires: u64, now: u64) -> Result<()> {
    if expires == 0 || now < expires {
        return Ok(());
    }
    Err(Error::Expired {
        origin: origin.to_string(),
        name: name.to_string(),
        expired: expires,
        days: (now - expires) / 86_400,
    })
}

/// Seconds a client waits before its next poll: after a success, what its user asked
/// (`every`) but never less than the publisher's least interval (`min_interval`); after the
/// `failures`-th failure in a row, Safe Browsing Update API v4's back-off
/// (developers.google.com/safe-browsing/v4/request-frequency, "Back-off mode"):
/// `min(2^(N−1) × 15 min × (1 + rand), 24 h)`, `rand` uniform in [0, 1). `phishbloom sync
/// --every` and the browser extension both wait by it.
pub fn next_poll(every: f64, min_interval: f64, failures: u32, rand: f64) -> f64 {
    /// The first back-off: 15 minutes.
    const BASE: f64 = 15.0 * 60.0;
    /// The longest back-off: 24 hours.
    const MAX: f64 = 24.0 * 3600.0;
    if failures == 0 {
        // NaN or absurd values from a hostile index or a typo wait a day at most.
        let wait = every.max(min_interval).clamp(0.0, MAX);
        return if wait.is_nan() { MAX } else { wait };
    }
    // 2^(N−1) is capped at 2^64, far past the 24 h cap anyway.
    let factor = 2f64.powi(failures.saturating_sub(1).min(64) as i32);
    (factor * BASE * (1.0 + rand.clamp(0.0, 1.0))).min(MAX)
}

/// A set fingerprint from its 32-digit hexadecimal form.
pub fn parse_fingerprint(text: &str) -> Option<SetFingerprint> {
    if text.len() != 32 {
        return None;
    }
    u128::from_str_radix(text, 16).ok().map(SetFingerprint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_is_current_until_its_expiry_and_one_without_expiry_always() {
        assert!(check_expiry("i", "l", 0, u64::MAX).is_ok());
        assert!(check_expiry("i", "l", 100, 99).is_ok());
        let error = check_expiry("site/index.json", "phish", 100, 100 + 3 * 86_400)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("expired at 1970-01-01 00:01:40 UTC (3 days ago)"),
            "{error}"
        );
    }

    fn link(from: u64, to: u64, bytes: u64) -> DeltaLink {
        DeltaLink {
            from,
            to,
            published: 0,
            file: Download {
                path: format!("deltas/{from}-{to}.delta"),
                bytes,
                sha256: "0".repeat(64),
            },
        }
    }

    fn body(deltas: Vec<DeltaLink>) -> IndexBody {
        IndexBody {
            protocol: PROTOCOL,
            name: "phishing".into(),
            version: 5,
            kind: "blocked".into(),
            entries: 10,
            set_fingerprint: format!("{:032x}", 77u128),
            created: 1,
            published: 2,
            min_interval: 60,
            expires: 0,
            file: Download {
                path: "files/v5.bloom".into(),
                bytes: 1000,
                sha256: "1".repeat(64),
            },
            deltas,
        }
    }

    fn local(version: u64, fingerprint: u128) -> Option<LocalState> {
        Some(LocalState {
            name: "phishing".into(),
            version,
            fingerprint: SetFingerprint(fingerprint),
        })
    }

    #[test]
    fn plans_the_cheapest_chain_or_the_whole_file() {
        let deltas = vec![
            link(2, 3, 100),
            link(3, 4, 100),
            link(4, 5, 100),
            link(2, 5, 250),
        ];
        let index = Index {
            body: body(deltas),
            signature: None,
            verified_by: None,
        };
        assert_eq!(index.plan(None, false).unwrap().bytes(), 1000);
        let plan = index.plan(local(2, 1), false).unwrap();
        assert_eq!(plan, Plan::Chain(vec![link(2, 5, 250)]));
        let plan = index.plan(local(3, 1), false).unwrap();
        assert_eq!(plan.bytes(), 200);
        assert!(matches!(
            index.plan(local(1, 1), false).unwrap(),
            Plan::Whole(_)
        ));
        assert_eq!(index.plan(local(5, 77), false).unwrap(), Plan::Current);
        // Same version, another set: the copy diverged (a local edit); start again.
        assert!(matches!(
            index.plan(local(5, 78), false).unwrap(),
            Plan::Whole(_)
        ));
        assert!(matches!(
            index.plan(local(6, 1), false),
            Err(Error::Rollback {
                local: 6,
                published: 5,
                ..
            })
        ));
        assert!(matches!(
            index.plan(local(6, 1), true).unwrap(),
            Plan::Whole(_)
        ));
    }

    #[test]
    fn an_index_of_another_list_is_refused() {
        let index = Index {
            body: body(vec![]),
            signature: None,
            verified_by: None,
        };
        let mut other = local(4, 1).unwrap();
        other.name = "payroll-allowlist".into();
        assert!(matches!(
            index.plan(Some(other), true),
            Err(Error::OtherList { .. })
        ));
    }

    #[test]
    fn a_chain_dearer_than_the_file_fetches_the_file() {
        let index = Index {
            body: body(vec![link(3, 4, 600), link(4, 5, 600)]),
            signature: None,
            verified_by: None,
        };
        assert!(matches!(
            index.plan(local(3, 1), false).unwrap(),
            Plan::Whole(_)
        ));
        assert!(matches!(
            index.plan(local(4, 1), false).unwrap(),
            Plan::Chain(_)
        ));
    }

    #[test]
    fn signed_indexes_verify_and_changed_ones_do_not() {
        let key = SecretKey::from_seed([7; 32]);
        let other = SecretKey::from_seed([8; 32]);
        let json = body(vec![link(4, 5, 10)]).to_json(Some(&key));
        let trusted = key.public();
        let index = Index::from_json("t", &json, Some(&trusted)).unwrap();
        assert_eq!(index.body.version, 5);
        assert!(matches!(
            Index::from_json("t", &json, Some(&other.public())),
            Err(Error::Untrusted { .. })
        ));
        let unsigned = body(vec![]).to_json(None);
        assert!(Index::from_json("t", &unsigned, None).is_ok());
        assert!(matches!(
            Index::from_json("t", &unsigned, Some(&trusted)),
            Err(Error::Untrusted { .. })
        ));
        // One byte of the body changed (version 5 → 6): the signature no longer verifies.
        let text = String::from_utf8(json)
            .unwrap()
            .replace("\"version\":5", "\"version\":6");
        let err = Index::from_json("t", text.as_bytes(), Some(&trusted)).unwrap_err();
        assert!(err.to_string().contains("does not verify"), "{err}");
        // Re-signed by another key but naming the trusted key's id.
        let forged = body(vec![]).to_json(Some(&other)).to_vec();
        let forged = String::from_utf8(forged)
            .unwrap()
            .replace(&other.public().id(), &trusted.id());
        assert!(Index::from_json("t", forged.as_bytes(), Some(&trusted)).is_err());
    }

    #[test]
    fn keys_round_trip_through_their_text_form() {
        let key = SecretKey::from_seed([9; 32]);
        let again = SecretKey::parse("k", &key.to_text("test")).unwrap();
        assert_eq!(again.public(), key.public());
        let public = PublicKey::parse("k.pub", &key.public().to_text("test")).unwrap();
        assert_eq!(public, key.public());
        assert!(PublicKey::parse("k", &key.to_text("x")).is_err());
        assert!(PublicKey::parse("k", "phishbloom-ed25519-public abc").is_err());
        assert!(PublicKey::parse("k", "").is_err());
    }

    #[test]
    fn polls_wait_the_interval_or_back_off_from_fifteen_minutes_to_a_day() {
        assert_eq!(next_poll(5.0, 300.0, 0, 0.3), 300.0);
        assert_eq!(next_poll(600.0, 300.0, 0, 0.3), 600.0);
        assert_eq!(next_poll(5.0, 1.0, 1, 0.0), 900.0);
        assert_eq!(next_poll(5.0, 1.0, 2, 0.0), 1800.0);
        assert_eq!(next_poll(5.0, 1.0, 3, 0.5), 5400.0);
        assert_eq!(next_poll(5.0, 1.0, 7, 0.0), 16.0 * 3600.0);
        assert_eq!(next_poll(5.0, 1.0, 1000, 0.9), 86400.0);
        // A hostile index's interval waits a day at most.
        assert_eq!(next_poll(5.0, u64::MAX as f64, 0, 0.0), 86400.0);
        assert_eq!(next_poll(f64::NAN, 5.0, 0, 0.0), 5.0);
    }

    #[test]
    fn downloads_are_checked_by_length_and_digest() {
        let file = Download::of("f", b"hello");
        assert!(file.check(b"hello").is_ok());
        assert!(file.check(b"hellp").is_err());
        assert!(file.check(b"hell").is_err());
    }

    #[test]
    fn hostile_indexes_are_refused() {
        for text in [
            &b"{"[..],
            b"{\"signed\":{}}",
            b"null",
            b"{\"signed\":{\"protocol\":99}}",
        ] {
            assert!(Index::from_json("t", text, None).is_err());
        }
        let mut bad = body(vec![link(6, 7, 1)]);
        assert!(Index::from_json("t", &bad.to_json(None), None).is_err());
        bad.deltas.clear();
        bad.set_fingerprint = "xyz".into();
        assert!(Index::from_json("t", &bad.to_json(None), None).is_err());
    }
}
