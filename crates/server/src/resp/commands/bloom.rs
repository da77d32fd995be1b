//! RedisBloom's Bloom commands on a served list of a kind that cannot delete, or on a scalable
//! Bloom filter created here: `BF.ADD`, `BF.MADD`, `BF.INSERT`, `BF.RESERVE`, `BF.INFO`,
//! `BF.CARD`. (`BF.EXISTS` and `BF.MEXISTS` are in `keys`, `BF.DEBUG` and the dumps in `dump`.)

use phishbloom_core::structure::EXPANSION as SERVED_EXPANSION;

use super::keys::{reply_added, reply_fields, reply_value, typed, Added, Answers};
use super::reply;
use super::{
    arity_error, error_message, insert_options, parse_f64, parse_i64, Family, InsertError, Session,
};
use crate::adhoc::{Filter, ScalingBloom};
use crate::lists::add_item;

/// RedisBloom's default error rate for filters created by `BF.ADD`.
const BF_DEFAULT_ERROR_RATE: f64 = 0.01;
/// RedisBloom's default capacity for filters created by `BF.ADD`.
const BF_DEFAULT_CAPACITY: u64 = 100;
/// RedisBloom's default growth factor.
const BF_DEFAULT_EXPANSION: u32 = 2;

/// How a missing Bloom key is created by `BF.ADD`, `BF.MADD` and `BF.INSERT`.
#[derive(Clone, Copy, Debug)]
struct Create {
    autocreate: bool,
    error_rate: f64,
    capacity: u64,
    /// `None`: non-scaling.
    expansion: Option<u32>,
}

impl Default for Create {
    fn default() -> Self {
        Create {
            autocreate: true,
            error_rate: BF_DEFAULT_ERROR_RATE,
            capacity: BF_DEFAULT_CAPACITY,
            expansion: Some(BF_DEFAULT_EXPANSION),
        }
    }
}

/// `BF.INFO`'s fields, in RedisBloom's order.
type BloomFields = [(&'static str, Option<i64>); 5];

/// The names `BF.INFO key FIELD` takes, in the order of [`BloomFields`].
const FIELD_NAMES: [&str; 5] = ["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"];

/// Each item's answer from `add`, up to the first that fails (RedisBloom answers no further
/// items then).
fn add_each<E>(
    items: &[&[u8]],
    mut add: impl FnMut(&[u8]) -> Result<bool, E>,
    message: impl Fn(E) -> String,
) -> Vec<Added> {
    let mut added = Vec::with_capacity(items.len());
    for item in items {
        let answer = add(item).map_err(&message);
        let stop = answer.is_err();
        added.push(answer);
        if stop {
            break;
        }
    }
    added
}

impl Session {
    pub(super) fn bf_add(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        self.add_bloom(argv[1], &argv[2..], Answers::Each, Create::default(), out);
    }

    pub(super) fn bf_madd(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        self.add_bloom(argv[1], &argv[2..], Answers::Array, Create::default(), out);
    }

    pub(super) fn bf_insert(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if let Some((create, items)) = insert_options(parse_insert(argv), out, argv[0]) {
            self.add_bloom(argv[1], &argv[items..], Answers::Array, create, out);
        }
    }

    /// Adds `items` to the Bloom list or filter `key`, a filter made as `create` says when
    /// there is none.
    fn add_bloom(
        &mut self,
        key: &[u8],
        items: &[&[u8]],
        answers: Answers,
        create: Create,
        out: &mut Vec<u8>,
    ) {
        let make = create.autocreate.then_some(|| {
            ScalingBloom::new(create.error_rate, create.capacity, create.expansion)
                .map(Filter::Bloom)
        });
        let added = self.add(
            key,
            Family::Bloom,
            |state| add_each(items, |item| add_item(state, item), |e| error_message(&e)),
            |filter| {
                let bloom = filter.bloom_mut()?;
                Some(add_each(items, |item| bloom.add(item), |e| e.to_string()))
            },
            make,
        );
        match added {
            Ok(added) => reply_added(out, added, answers, self.proto),
            Err(message) => reply::error(out, &message),
        }
    }

    /// `BF.RESERVE key error_rate capacity [EXPANSION e] [NONSCALING]`.
    pub(super) fn bf_reserve(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 7 {
            return arity_error(out, argv[0]);
        }
        match parse_reserve(argv) {
            Ok((error_rate, capacity, expansion)) => self.reserve(
                argv[1],
                Family::Bloom,
                || ScalingBloom::new(error_rate, capacity, expansion).map(Filter::Bloom),
                out,
            ),
            Err(message) => reply::error(out, message),
        }
    }

    /// `BF.INFO key [FIELD]`: every field as a map, or the one asked as a one-element array.
    pub(super) fn bf_info(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len() > 3 {
            return arity_error(out, argv[0]);
        }
        let fields = match self.bloom_fields(argv[1]) {
            Ok(fields) => fields,
            Err(message) => return reply::error(out, message),
        };
        let Some(field) = argv.get(2) else {
            return reply_fields(out, &fields, self.proto);
        };
        match FIELD_NAMES
            .iter()
            .position(|name| name.as_bytes().eq_ignore_ascii_case(field))
        {
            None => reply::error(out, "Invalid information value"),
            Some(i) => {
                reply::array(out, 1);
                reply_value(out, fields[i].1, self.proto);
            }
        }
    }

    /// `BF.INFO`'s fields of the served list or the filter `key`.
    fn bloom_fields(&self, key: &[u8]) -> Result<BloomFields, &'static str> {
        let Some(slot) = self.shared.lists.get(key) else {
            let fields = self.shared.lists.adhoc().read(key, |f| {
                let b = f.bloom()?;
                Some([
                    ("Capacity", Some(b.capacity() as i64)),
                    ("Size", Some(b.bytes() as i64)),
                    ("Number of filters", Some(b.filters() as i64)),
                    ("Number of items inserted", Some(b.items() as i64)),
                    ("Expansion rate", b.expansion().map(i64::from)),
                ])
            });
            return typed(fields);
        };
        let served = slot.load();
        let state = served.read();
        if Family::of(&state) != Family::Bloom {
            return Err(super::WRONGTYPE);
        }
        let (size, filters) = state.filters();
        Ok([
            ("Capacity", Some(state.capacity() as i64)),
            ("Size", Some(size as i64)),
            ("Number of filters", Some(filters as i64)),
            (
                "Number of items inserted",
                Some(state.list.meta().entries as i64),
            ),
            (
                "Expansion rate",
                state.grows().then_some(SERVED_EXPANSION as i64),
            ),
        ])
    }

    /// `BF.CARD key`: the items added (0 for a key not held).
    pub(super) fn bf_card(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let card = match self.shared.lists.get(argv[1]) {
            Some(slot) => {
                let served = slot.load();
                let state = served.read();
                (Family::of(&state) == Family::Bloom)
                    .then(|| state.list.meta().entries)
                    .ok_or(super::WRONGTYPE)
            }
            None => match self
                .shared
                .lists
                .adhoc()
                .read(argv[1], |f| f.bloom().map(ScalingBloom::items))
            {
                None => Ok(0),
                held => typed(held),
            },
        };
        match card {
            Ok(items) => reply::int(out, items as i64),
            Err(message) => reply::error(out, message),
        }
    }
}

/// RedisBloom's largest capacity (`BF.RESERVE`, `BF.INSERT`, `CF.RESERVE`, `CF.INSERT`): 2³⁰.
pub(super) const MAX_CAPACITY: i64 = 1 << 30;
/// RedisBloom's largest expansion: 2¹⁵.
pub(super) const MAX_EXPANSION: i64 = 32768;

/// `BF.RESERVE`'s error rate, capacity and expansion (`None`: `NONSCALING` or `EXPANSION 0`),
/// checked in RedisBloom's order and refused in its words.
fn parse_reserve(argv: &[&[u8]]) -> Result<(f64, u64, Option<u32>), &'static str> {
    let error_rate = match parse_f64(argv[2]) {
        None => return Err("ERR bad error rate"),
        Some(e) if e <= 0.0 || e >= 1.0 => {
            return Err("ERR error rate must be in the range (0.000000, 1.000000)")
        }
        Some(e) => e,
    };
    let capacity = match parse_i64(argv[3]) {
        None => return Err("ERR bad capacity"),
        Some(c) if !(1..=MAX_CAPACITY).contains(&c) => {
            return Err("ERR capacity must be in the range [1, 1073741824]")
        }
        Some(c) => c as u64,
    };
    let rest = &argv[4..];
    let nonscaling = rest.iter().any(|a| a.eq_ignore_ascii_case(b"NONSCALING"));
    let mut expansion = i64::from(BF_DEFAULT_EXPANSION);
    if let Some(at) = rest
        .iter()
        .position(|a| a.eq_ignore_ascii_case(b"EXPANSION"))
    {
        let Some(value) = rest.get(at + 1) else {
            return Err("ERR no expansion");
        };
        expansion = parse_i64(value).ok_or("ERR bad expansion")?;
        if nonscaling && expansion != 0 {
            return Err("Nonscaling filters cannot expand");
        }
        if !(0..=MAX_EXPANSION).contains(&expansion) {
            return Err("ERR expansion must be in the range [0, 32768]");
        }
    }
    // In range, so it fits; 0 is RedisBloom's way of saying NONSCALING.
    let expansion = u32::try_from(expansion)
        .ok()
        .filter(|&e| e > 0 && !nonscaling);
    Ok((error_rate, capacity, expansion))
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item…`,
/// read as RedisBloom reads it (by each option's first letters). Returns the creation options and
/// where the items start.
fn parse_insert(argv: &[&[u8]]) -> Result<(Create, usize), InsertError> {
    let mut create = Create::default();
    let mut nonscaling = false;
    let mut expansion = i64::from(BF_DEFAULT_EXPANSION);
    let mut capacity = BF_DEFAULT_CAPACITY as i64;
    let mut at = 2;
    let mut items = None;
    while at < argv.len() && items.is_none() {
        let option = argv[at].to_ascii_lowercase();
        match option.first() {
            Some(b'i') => {
                at += 1;
                items = Some(at);
            }
            Some(b'e') => {
                at += 1;
                let value = argv.get(at).ok_or(InsertError::Arity)?;
                if option.get(1) == Some(&b'r') {
                    create.error_rate =
                        parse_f64(value).ok_or(InsertError::Message("Bad error rate"))?;
                } else {
                    expansion = parse_i64(value).ok_or(InsertError::Message("Bad expansion"))?;
                }
                at += 1;
            }
            Some(b'c') => {
                at += 1;
                let value = argv.get(at).ok_or(InsertError::Arity)?;
                capacity = parse_i64(value).ok_or(InsertError::Message("Bad capacity"))?;
                at += 1;
            }
            Some(b'n') => {
                if option.get(2) == Some(&b'c') {
                    create.autocreate = false;
                } else {
                    nonscaling = true;
                }
                at += 1;
            }
            _ => return Err(InsertError::Message("Unknown argument received")),
        }
    }
    let items = items
        .filter(|&i| i < argv.len())
        .ok_or(InsertError::Arity)?;
    if !(create.error_rate > 0.0 && create.error_rate < 1.0) {
        return Err(InsertError::Message("Bad error rate"));
    }
    if !(1..=MAX_CAPACITY).contains(&capacity) {
        return Err(InsertError::Message("Bad capacity"));
    }
    if !(0..=MAX_EXPANSION).contains(&expansion) {
        return Err(InsertError::Message("Bad expansion"));
    }
    create.capacity = capacity as u64;
    // In range, so it fits; 0 does not grow, as NONSCALING.
    create.expansion = u32::try_from(expansion)
        .ok()
        .filter(|&e| e > 0 && !nonscaling);
    Ok((create, items))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, session};
    use super::*;

    #[test]
    fn reserve_checks_its_arguments_and_madd_stops_at_a_full_filter() {
        let mut s = session();
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "x", "100"]),
            "-ERR bad error rate\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "1", "100"]),
            "-ERR error rate must be in the range (0.000000, 1.000000)\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "0.1", "0"]),
            "-ERR capacity must be in the range [1, 1073741824]\r\n"
        );
        assert_eq!(
            run(
                &mut s,
                &["BF.RESERVE", "b", "0.1", "9", "EXPANSION", "40000"]
            ),
            "-ERR expansion must be in the range [0, 32768]\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.INSERT", "b", "ERROR", "2", "ITEMS", "x"]),
            "-Bad error rate\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.INSERT", "b", "CAPACITY", "0", "ITEMS", "x"]),
            "-Bad capacity\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "0.1", "9", "EXPANSION"]),
            "-ERR no expansion\r\n"
        );
        assert_eq!(
            run(
                &mut s,
                &[
                    "BF.RESERVE",
                    "b",
                    "0.1",
                    "9",
                    "NONSCALING",
                    "EXPANSION",
                    "2"
                ]
            ),
            "-Nonscaling filters cannot expand\r\n"
        );
        assert_eq!(run(&mut s, &["BF.CARD", "b"]), ":0\r\n");
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "0.1", "1", "NONSCALING"]),
            "+OK\r\n"
        );
        assert_eq!(
            run(&mut s, &["BF.RESERVE", "b", "0.1", "1"]),
            "-ERR item exists\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "b", "100"]),
            format!("-{}\r\n", super::super::WRONGTYPE)
        );
        assert_eq!(
            run(&mut s, &["BF.MADD", "b", "x", "y", "z"]),
            "*2\r\n:1\r\n-ERR non scaling filter is full\r\n"
        );
        assert_eq!(run(&mut s, &["BF.INFO", "b", "EXPANSION"]), "*1\r\n$-1\r\n");
        assert_eq!(run(&mut s, &["BF.CARD", "b"]), ":1\r\n");
        assert_eq!(
            run(&mut s, &["BF.INFO", "b", "BOGUS"]),
            "-Invalid information value\r\n"
        );
    }

    #[test]
    fn insert_options_read_like_redisbloom() {
        let argv: Vec<&[u8]> = vec![
            b"BF.INSERT",
            b"k",
            b"CAPACITY",
            b"10",
            b"error",
            b"0.1",
            b"NONSCALING",
            b"ITEMS",
            b"a",
            b"b",
        ];
        let (create, items) = parse_insert(&argv).ok().unwrap();
        assert_eq!(items, 8);
        assert_eq!(create.capacity, 10);
        assert_eq!(create.error_rate, 0.1);
        assert_eq!(create.expansion, None);
        assert!(create.autocreate);
        let argv: Vec<&[u8]> = vec![
            b"BF.INSERT",
            b"k",
            b"NOCREATE",
            b"EXPANSION",
            b"4",
            b"ITEMS",
            b"a",
        ];
        let (create, _) = parse_insert(&argv).ok().unwrap();
        assert!(!create.autocreate);
        assert_eq!(create.expansion, Some(4));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"ITEMS"];
        assert!(matches!(parse_insert(&argv), Err(InsertError::Arity)));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"BOGUS", b"ITEMS", b"a"];
        assert!(matches!(
            parse_insert(&argv),
            Err(InsertError::Message("Unknown argument received"))
        ));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"ERROR", b"2", b"ITEMS", b"a"];
        assert!(matches!(
            parse_insert(&argv),
            Err(InsertError::Message("Bad error rate"))
        ));
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"EXPANSION", b"0", b"ITEMS", b"a"];
        assert_eq!(parse_insert(&argv).ok().unwrap().0.expansion, None);
    }
}
