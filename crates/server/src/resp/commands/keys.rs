//! Where a key is held — a served list, a filter created here, or nothing — for both of
//! RedisBloom's types: the `EXISTS` commands (`BF.EXISTS`, `BF.MEXISTS`, `CF.EXISTS`,
//! `CF.MEXISTS`, `CF.COUNT`), and what every command of a type builds on: RedisBloom's errors
//! for a key of the other type or none, the refusal of a served list, the creation of a filter,
//! adding items to either holder, and the replies of many answers.

use std::sync::Arc;

use super::reply::{self, Proto};
use super::{error_message, Family, Session, NOT_FOUND, SERVED_LIST, WRONGTYPE};
use crate::adhoc::{self, AdHoc, Filter};
use crate::lists::{Slot, State};

/// What an `EXISTS` command asks of each item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Probe {
    /// Whether the one item is held: a boolean (`BF.EXISTS`, `CF.EXISTS`).
    One,
    /// Whether each item is held: an array of booleans (`BF.MEXISTS`, `CF.MEXISTS`).
    Many,
    /// How many copies of the one item a filter created here holds (`CF.COUNT`; a served list
    /// holds an entry once).
    Count,
}

/// A filter created here, read or written as one type (the closure answered `None` for the
/// other): RedisBloom's `ERR not found` when there is no filter, `WRONGTYPE` for the other type.
pub(super) fn typed<T>(held: Option<Option<T>>) -> Result<T, &'static str> {
    match held {
        None => Err(NOT_FOUND),
        Some(None) => Err(WRONGTYPE),
        Some(Some(value)) => Ok(value),
    }
}

/// One item's answer to a write: added (1) or not (0), or why it failed (an error line).
pub(super) type Added = Result<bool, String>;

/// How a write's answers are replied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answers {
    /// Each by itself (`BF.ADD`, `CF.ADD`: one item): a boolean, or its error.
    Each,
    /// In an array, booleans, an item that failed as its error (`BF.MADD`, `BF.INSERT`).
    Array,
    /// In an array, an item that did not fit as false in RESP3 and -1 in RESP2 (`CF.INSERT`).
    Inserted,
    /// In an array, integers under both protocols: 1 added, 0 there already, -1 did not fit
    /// (`CF.INSERTNX`, as RedisBloom answers it).
    Codes,
}

/// Replies with a write's answers, as `answers` says, in RedisBloom's types for `proto`.
pub(super) fn reply_added(out: &mut Vec<u8>, added: Vec<Added>, answers: Answers, proto: Proto) {
    if answers != Answers::Each {
        reply::array(out, added.len());
    }
    for answer in added {
        match (answer, answers) {
            (Ok(added), Answers::Codes) => reply::int(out, i64::from(added)),
            (Ok(added), _) => reply::boolean(out, added, proto),
            (Err(_), Answers::Codes) => reply::int(out, -1),
            (Err(_), Answers::Inserted) if proto == Proto::Resp3 => {
                reply::boolean(out, false, proto)
            }
            (Err(_), Answers::Inserted) => reply::int(out, -1),
            (Err(message), _) => reply::error(out, &message),
        }
    }
}

/// An integer, or null where there is none (a Bloom filter that does not grow has no
/// expansion rate).
pub(super) fn reply_value(out: &mut Vec<u8>, value: Option<i64>, proto: Proto) {
    match value {
        Some(value) => reply::int(out, value),
        None => reply::null(out, proto),
    }
}

/// `BF.INFO`'s and `CF.INFO`'s map: each field's name, then its value.
pub(super) fn reply_fields(out: &mut Vec<u8>, fields: &[(&str, Option<i64>)], proto: Proto) {
    reply::map(out, fields.len(), proto);
    for &(name, value) in fields {
        reply::simple(out, name);
        reply_value(out, value, proto);
    }
}

/// A filter created here, asked for each item as `probe` says: 1 or 0 (or the copies held, for
/// [`Probe::Count`]); no filter answers 0 for each, as RedisBloom does.
fn created_answers(
    adhoc: &AdHoc,
    key: &[u8],
    family: Family,
    items: &[&[u8]],
    probe: Probe,
) -> Result<Vec<i64>, &'static str> {
    let answer = |filter: &Filter, item: &[u8]| match filter {
        Filter::Bloom(b) => i64::from(b.contains(item)),
        Filter::Cuckoo(c) if probe == Probe::Count => c.count(item) as i64,
        Filter::Cuckoo(c) => i64::from(c.contains(item)),
    };
    let held = adhoc.read(key, |filter| {
        (Family::of_filter(filter) == family)
            .then(|| items.iter().map(|item| answer(filter, item)).collect())
    });
    match held {
        None => Ok(vec![0; items.len()]),
        held => typed(held),
    }
}

impl Session {
    /// `BF.EXISTS`, `BF.MEXISTS`, `CF.EXISTS`, `CF.MEXISTS`, `CF.COUNT` on `argv[1]`.
    pub(super) fn exists(
        &mut self,
        family: Family,
        argv: &[&[u8]],
        probe: Probe,
        out: &mut Vec<u8>,
    ) {
        let (key, items) = (argv[1], &argv[2..]);
        let answers = match self.shared.lists.get(key) {
            Some(slot) => self.check_served(&slot, family, items),
            None => created_answers(self.shared.lists.adhoc(), key, family, items, probe),
        };
        let answers = match answers {
            Ok(answers) => answers,
            // RedisBloom answers a key of the other type as not holding the items.
            Err(WRONGTYPE) => vec![0; items.len()],
            Err(message) => return reply::error(out, message),
        };
        if probe == Probe::Many {
            reply::array(out, answers.len());
        }
        for answer in answers {
            match probe {
                Probe::Count => reply::int(out, answer),
                _ => reply::boolean(out, answer > 0, self.proto),
            }
        }
    }

    /// Each item checked against the served list of `slot` (1 listed, 0 not), counted for the
    /// metrics.
    fn check_served(
        &mut self,
        slot: &Slot,
        family: Family,
        items: &[&[u8]],
    ) -> Result<Vec<i64>, &'static str> {
        let served = slot.load();
        let state = served.read();
        if Family::of(&state) != family {
            return Err(WRONGTYPE);
        }
        let mut verdicts = Vec::with_capacity(items.len());
        state
            .list
            .check_batch(items, &mut self.scratch, &mut verdicts);
        let mut answers = Vec::with_capacity(items.len());
        for verdict in &verdicts {
            let listed = verdict.listed();
            self.listed += u64::from(listed);
            answers.push(i64::from(listed));
        }
        self.checked += items.len() as u64;
        Ok(answers)
    }

    /// Whether `key` names a served list, which the commands for filters created here refuse:
    /// then the error is written (the served list's own, for a list of `family`; a type error
    /// for the other).
    pub(super) fn refuse_served(&self, key: &[u8], family: Family, out: &mut Vec<u8>) -> bool {
        let Some(slot) = self.shared.lists.get(key) else {
            return false;
        };
        let same = Family::of(&slot.load().read()) == family;
        reply::error(out, if same { SERVED_LIST } else { WRONGTYPE });
        true
    }

    /// The reply to a command that would create `key` when a served list or another filter
    /// holds it: RedisBloom's `ERR item exists` for the same type, `WRONGTYPE` for the other.
    fn taken(&self, key: &[u8], family: Family) -> Option<&'static str> {
        let held = match self.shared.lists.get(key) {
            Some(slot) => Some(Family::of(&slot.load().read())),
            None => self.shared.lists.adhoc().read(key, Family::of_filter),
        };
        held.map(|held| {
            if held == family {
                "ERR item exists"
            } else {
                WRONGTYPE
            }
        })
    }

    /// Creates `key` as the filter `make` builds (`BF.RESERVE`, `CF.RESERVE`), unless a served
    /// list or another filter holds it.
    pub(super) fn reserve(
        &self,
        key: &[u8],
        family: Family,
        make: impl FnOnce() -> adhoc::Result<Filter>,
        out: &mut Vec<u8>,
    ) {
        if let Some(message) = self.taken(key, family) {
            return reply::error(out, message);
        }
        let filter = match make() {
            Ok(filter) => filter,
            Err(error) => return reply::error(out, &error.to_string()),
        };
        if self.shared.lists.adhoc().create(key, filter) {
            reply::simple(out, "OK");
        } else {
            // Created by another connection meanwhile.
            reply::error(out, self.taken(key, family).unwrap_or("ERR item exists"));
        }
    }

    /// The served list `key` for a write of `family`: `None` if no list is served as `key`.
    pub(super) fn served_for_write(
        &self,
        key: &[u8],
        family: Family,
    ) -> Option<Result<Arc<Slot>, &'static str>> {
        let slot = self.shared.lists.get(key)?;
        if Family::of(&slot.load().read()) != family {
            return Some(Err(WRONGTYPE));
        }
        Some(Ok(slot))
    }

    /// Adds items to `key`, of `family`: to the served list by `served` (one change, one save
    /// of its file, whatever the items), or to the filter created here by `created` (`None`:
    /// it is of the other type), made by `make` first where there is none and `make` is given.
    /// The answers, one per item, or the error line of the whole command.
    pub(super) fn add<M>(
        &self,
        key: &[u8],
        family: Family,
        served: impl FnOnce(&mut State) -> Vec<Added>,
        created: impl FnOnce(&mut Filter) -> Option<Vec<Added>>,
        make: Option<M>,
    ) -> Result<Vec<Added>, String>
    where
        M: FnOnce() -> adhoc::Result<Filter>,
    {
        match self.served_for_write(key, family) {
            Some(Err(message)) => Err(message.to_owned()),
            Some(Ok(slot)) => self
                .shared
                .lists
                .change(&slot, |state| Ok(served(state)))
                .map_err(|error| error_message(&error)),
            None => {
                let adhoc = self.shared.lists.adhoc();
                let held = match make {
                    Some(make) => Some(
                        adhoc
                            .write_or_create(key, make, created)
                            .map_err(|error| error.to_string())?,
                    ),
                    None => adhoc.write(key, created),
                };
                typed(held).map_err(str::to_owned)
            }
        }
    }
}
