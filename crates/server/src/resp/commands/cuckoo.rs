//! RedisBloom's cuckoo commands on a served list of a kind that can delete, or on a cuckoo
//! filter created here: `CF.ADD`, `CF.ADDNX`, `CF.INSERT`, `CF.INSERTNX`, `CF.RESERVE`,
//! `CF.DEL`, `CF.INFO`. (`CF.EXISTS`, `CF.MEXISTS` and `CF.COUNT` are in `keys`, the dumps in
//! `dump`.)

use super::bloom::MAX_CAPACITY;
use super::keys::{reply_added, reply_fields, typed, Added, Answers};
use super::reply;
use super::{arity_error, error_message, insert_options, parse_i64, Family, InsertError, Session};
use crate::adhoc::{
    CuckooAdd, Filter, ScalingCuckoo, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_CAPACITY,
    CF_DEFAULT_EXPANSION, CF_DEFAULT_MAX_ITERATIONS,
};
use crate::error::Error;
use crate::lists::State;

/// RedisBloom's `cf-max-expansions`: a filter of this many layers takes no more adds.
const CF_MAX_EXPANSIONS: usize = 32;

/// `CF.RESERVE`'s options, each with its least and most value (RedisBloom's ranges), in the
/// order of the values [`parse_reserve`] answers.
const RESERVE_OPTIONS: [(&str, i64, i64); 3] = [
    ("BUCKETSIZE", 1, 255),
    ("MAXITERATIONS", 1, 65535),
    ("EXPANSION", 0, 32768),
];

/// Adds each item to a served list (`nx`: answering 0 for one already there), each answering
/// for itself.
fn add_served(state: &mut State, items: &[&[u8]], nx: bool) -> Vec<Added> {
    items
        .iter()
        .map(|item| match state.list.add(&[item], None) {
            // A served list holds an entry once: CF.ADD of a present item answers 1 and stores
            // nothing; CF.ADDNX answers 0.
            Ok(change) => Ok(!nx || change.changed > 0),
            // RedisBloom's words for a cuckoo filter without room.
            Err(phishbloom_core::Error::Full { kind, .. }) => {
                Err(crate::error::full_reason(kind).to_owned())
            }
            Err(error) => Err(error_message(&Error::from_list(error))),
        })
        .collect()
}

/// Adds each item to a cuckoo filter created here (`nx`: only where it may not be yet).
fn add_created(cuckoo: &mut ScalingCuckoo, items: &[&[u8]], nx: bool) -> Vec<Added> {
    items
        .iter()
        .map(|item| match cuckoo.add(item, nx) {
            Ok(added) => Ok(added == CuckooAdd::Added),
            Err(error) => Err(error.to_string()),
        })
        .collect()
}

impl Session {
    /// `CF.ADD`/`CF.ADDNX key item`: one item, an error for a full filter; a missing key is
    /// created with RedisBloom's defaults.
    pub(super) fn cf_add(&mut self, argv: &[&[u8]], nx: bool, out: &mut Vec<u8>) {
        let create = Some(CF_DEFAULT_CAPACITY);
        self.add_cuckoo(argv[1], &argv[2..], nx, Answers::Each, create, out);
    }

    /// `CF.INSERT`/`CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…`: an array
    /// ([`Answers::Inserted`], [`Answers::Codes`]). `CAPACITY` sizes a filter this creates; an
    /// existing filter keeps its size, as in RedisBloom.
    pub(super) fn cf_insert(&mut self, argv: &[&[u8]], nx: bool, out: &mut Vec<u8>) {
        if let Some((create, items)) = insert_options(parse_insert(argv), out, argv[0]) {
            let answers = if nx {
                Answers::Codes
            } else {
                Answers::Inserted
            };
            self.add_cuckoo(argv[1], &argv[items..], nx, answers, create, out);
        }
    }

    /// Adds `items` to the cuckoo list or filter `key`; a missing key is created for
    /// `create` items (`None`: not created).
    fn add_cuckoo(
        &mut self,
        key: &[u8],
        items: &[&[u8]],
        nx: bool,
        answers: Answers,
        create: Option<u64>,
        out: &mut Vec<u8>,
    ) {
        let layers = self
            .shared
            .lists
            .adhoc()
            .read(key, |f| f.cuckoo().map(ScalingCuckoo::filters))
            .flatten();
        if layers.is_some_and(|n| n >= CF_MAX_EXPANSIONS) {
            return reply::error(out, "Maximum expansions reached");
        }
        let make = create
            .map(|capacity| move || ScalingCuckoo::with_capacity(capacity).map(Filter::Cuckoo));
        let added = self.add(
            key,
            Family::Cuckoo,
            |state| add_served(state, items, nx),
            |filter| Some(add_created(filter.cuckoo_mut()?, items, nx)),
            make,
        );
        match added {
            Ok(added) => reply_added(out, added, answers, self.proto),
            Err(message) => reply::error(out, &message),
        }
    }

    /// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`, checked as
    /// RedisBloom checks it.
    pub(super) fn cf_reserve(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        if argv.len().is_multiple_of(2) {
            return arity_error(out, argv[0]);
        }
        let Some(capacity) = parse_i64(argv[2]) else {
            return reply::error(out, "Bad capacity");
        };
        let [bucket_size, max_iterations, expansion] = match parse_reserve(&argv[3..]) {
            Ok(values) => values,
            Err(message) => return reply::error(out, &message),
        };
        if !(i64::from(bucket_size) * 2..=MAX_CAPACITY).contains(&capacity) {
            return reply::error(
                out,
                "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
            );
        }
        let make = || {
            ScalingCuckoo::new(capacity as u64, bucket_size, max_iterations, expansion)
                .map(Filter::Cuckoo)
        };
        self.reserve(argv[1], Family::Cuckoo, make, out);
    }

    /// `CF.DEL key item`: removes one copy; 0 when the item is not there.
    pub(super) fn cf_del(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let (key, item) = (argv[1], argv[2]);
        let slot = match self.served_for_write(key, Family::Cuckoo) {
            Some(Ok(slot)) => slot,
            // RedisBloom's answer for a key of another type, as for a missing one.
            Some(Err(super::WRONGTYPE)) => return reply::error(out, "Not found"),
            Some(Err(message)) => return reply::error(out, message),
            None => {
                let adhoc = self.shared.lists.adhoc();
                let deleted = adhoc.write(key, |f| f.cuckoo_mut().map(|c| c.delete(item)));
                return match deleted.flatten() {
                    Some(deleted) => reply::boolean(out, deleted, self.proto),
                    // RedisBloom's answer for a missing key and one of another type alike.
                    None => reply::error(out, "Not found"),
                };
            }
        };
        match self
            .shared
            .lists
            .change(&slot, |state| Ok(state.list.remove(&[item], None)?))
        {
            Ok(change) => reply::boolean(out, change.changed > 0, self.proto),
            // Not in the list: RedisBloom answers false.
            Err(error)
                if matches!(error.core(), Some(phishbloom_core::Error::NotListed { .. })) =>
            {
                reply::boolean(out, false, self.proto)
            }
            Err(error) => reply::error(out, &error_message(&error)),
        }
    }

    /// `CF.COMPACT key`: a filter created here moves fingerprints into earlier layers
    /// ([`ScalingCuckoo::compact`]); a served cuckoo list has nothing to move (it is one table).
    pub(super) fn cf_compact(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let key = argv[1];
        let served_cuckoo = self.shared.lists.get(key).map(|slot| {
            let served = slot.load();
            let state = served.read();
            Family::of(&state) == Family::Cuckoo
        });
        let compacted = match served_cuckoo {
            Some(cuckoo) => cuckoo,
            None => self
                .shared
                .lists
                .adhoc()
                .write(key, |f| f.cuckoo_mut().map(ScalingCuckoo::compact))
                .flatten()
                .is_some(),
        };
        match compacted {
            true => reply::simple(out, "OK"),
            false => reply::error(out, "Cuckoo filter was not found"),
        }
    }

    /// `CF.INFO`, for cuckoo filters created here (RedisBloom's eight fields).
    pub(super) fn cf_info(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let key = argv[1];
        if self.refuse_served(key, Family::Cuckoo, out) {
            return;
        }
        let fields = self.shared.lists.adhoc().read(key, |f| {
            let c = f.cuckoo()?;
            Some([
                ("Size", Some(c.bytes() as i64)),
                ("Number of buckets", Some(c.buckets() as i64)),
                ("Number of filters", Some(c.filters() as i64)),
                ("Number of items inserted", Some(c.items() as i64)),
                ("Number of items deleted", Some(c.deleted() as i64)),
                ("Bucket size", Some(i64::from(c.bucket_size()))),
                ("Expansion rate", Some(i64::from(c.expansion()))),
                ("Max iterations", Some(i64::from(c.max_iterations()))),
            ])
        });
        match typed(fields) {
            Ok(fields) => reply_fields(out, &fields, self.proto),
            Err(message) => reply::error(out, message),
        }
    }
}

/// `CF.RESERVE`'s options after the capacity, in pairs: bucket size, most evictions and
/// expansion, RedisBloom's defaults where not given.
fn parse_reserve(options: &[&[u8]]) -> Result<[u16; 3], String> {
    let mut values = [
        CF_DEFAULT_BUCKET_SIZE,
        CF_DEFAULT_MAX_ITERATIONS,
        CF_DEFAULT_EXPANSION,
    ];
    for pair in options.chunks(2) {
        let Some(i) = RESERVE_OPTIONS
            .iter()
            .position(|(name, ..)| pair[0].eq_ignore_ascii_case(name.as_bytes()))
        else {
            return Err("Unknown argument received".into());
        };
        let (name, least, most) = RESERVE_OPTIONS[i];
        let Some(value) = pair.get(1).and_then(|v| parse_i64(v)) else {
            return Err(format!("Couldn't parse {name}"));
        };
        if !(least..=most).contains(&value) {
            return Err(format!(
                "{name}: value must be in the range [{least}, {most}]"
            ));
        }
        // Every range ends at or below u16::MAX.
        values[i] = value as u16;
    }
    Ok(values)
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…` (and `CF.INSERTNX`): the capacity of a
/// filter it creates (`None` with `NOCREATE`), and where the items start.
fn parse_insert(argv: &[&[u8]]) -> Result<(Option<u64>, usize), InsertError> {
    let (mut capacity, mut create) = (CF_DEFAULT_CAPACITY, true);
    let mut at = 2;
    while at < argv.len() {
        let option = argv[at];
        if option.eq_ignore_ascii_case(b"ITEMS") {
            return if at + 1 < argv.len() {
                Ok((create.then_some(capacity), at + 1))
            } else {
                Err(InsertError::Arity)
            };
        } else if option.eq_ignore_ascii_case(b"CAPACITY") {
            let value = argv.get(at + 1).ok_or(InsertError::Arity)?;
            let asked = parse_i64(value).ok_or(InsertError::Message("Bad capacity"))?;
            if !(i64::from(CF_DEFAULT_BUCKET_SIZE) * 2..=MAX_CAPACITY).contains(&asked) {
                return Err(InsertError::Message(
                    "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
                ));
            }
            capacity = asked as u64;
            at += 2;
        } else if option.eq_ignore_ascii_case(b"NOCREATE") {
            create = false;
            at += 1;
        } else {
            return Err(InsertError::Message("Unknown argument received"));
        }
    }
    Err(InsertError::Arity)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, session};

    #[test]
    fn resp3_answers_booleans_where_redisbloom_does() {
        let mut s = session();
        assert!(run(&mut s, &["HELLO", "3"]).starts_with('%'));
        assert_eq!(run(&mut s, &["BF.ADD", "b", "x"]), "#t\r\n");
        assert_eq!(run(&mut s, &["BF.ADD", "b", "x"]), "#f\r\n");
        assert_eq!(
            run(&mut s, &["BF.MADD", "b", "x", "y"]),
            "*2\r\n#f\r\n#t\r\n"
        );
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "y"]), "#t\r\n");
        assert_eq!(
            run(&mut s, &["BF.MEXISTS", "b", "y", "z"]),
            "*2\r\n#t\r\n#f\r\n"
        );
        assert_eq!(run(&mut s, &["BF.CARD", "b"]), ":2\r\n");
        assert_eq!(run(&mut s, &["CF.ADD", "c", "x"]), "#t\r\n");
        assert_eq!(run(&mut s, &["CF.ADDNX", "c", "x"]), "#f\r\n");
        assert_eq!(run(&mut s, &["CF.EXISTS", "c", "x"]), "#t\r\n");
        assert_eq!(run(&mut s, &["CF.COUNT", "c", "x"]), ":1\r\n");
        assert_eq!(
            run(&mut s, &["CF.INSERT", "c", "ITEMS", "y"]),
            "*1\r\n#t\r\n"
        );
        // CF.INSERTNX answers integers under RESP3 too, as RedisBloom does.
        assert_eq!(
            run(&mut s, &["CF.INSERTNX", "c", "ITEMS", "y", "z"]),
            "*2\r\n:0\r\n:1\r\n"
        );
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), "#t\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), "#f\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "missing", "x"]), "-Not found\r\n");
        // A key of the other type holds nothing, with no error.
        assert_eq!(run(&mut s, &["BF.EXISTS", "c", "x"]), "#f\r\n");
        assert_eq!(run(&mut s, &["CF.COUNT", "b", "x"]), ":0\r\n");
    }

    #[test]
    fn cuckoo_limits_compaction_dumps_and_flush_are_redisbloom_s() {
        let mut s = session();
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "c", "3", "BUCKETSIZE", "2"]),
            "-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "c", "100", "BUCKETSIZE", "x"]),
            "-Couldn't parse BUCKETSIZE\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "c", "100", "MAXITERATIONS", "0"]),
            "-MAXITERATIONS: value must be in the range [1, 65535]\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.INSERT", "c", "CAPACITY", "2", "ITEMS", "x"]),
            "-Capacity must be in the range [cf-bucket-size * 2, 1073741824]\r\n"
        );
        assert_eq!(run(&mut s, &["CF.RESERVE", "e", "100"]), "+OK\r\n");
        assert_eq!(
            run(&mut s, &["CF.SCANDUMP", "e", "0"]),
            "*2\r\n:0\r\n$-1\r\n"
        );
        // A filter that doubles from 4 slots reaches RedisBloom's 32 layers, then refuses.
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "g", "4", "EXPANSION", "1"]),
            "+OK\r\n"
        );
        let mut refused = None;
        for i in 0..10_000 {
            let answer = run(&mut s, &["CF.ADD", "g", &format!("k{i}")]);
            if answer != ":1\r\n" {
                refused = Some(answer);
                break;
            }
        }
        assert_eq!(refused.as_deref(), Some("-Maximum expansions reached\r\n"));
        assert_eq!(run(&mut s, &["CF.COMPACT", "g"]), "+OK\r\n");
        assert_eq!(
            run(&mut s, &["CF.COMPACT", "none"]),
            "-Cuckoo filter was not found\r\n"
        );
        assert_eq!(run(&mut s, &["BF.ADD", "b", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["FLUSHALL"]), "+OK\r\n");
        assert_eq!(run(&mut s, &["DBSIZE"]), ":0\r\n");
        assert_eq!(run(&mut s, &["FLUSHDB", "ASYNC"]), "+OK\r\n");
        assert_eq!(run(&mut s, &["FLUSHDB", "NOW"]), "-ERR syntax error\r\n");
    }

    #[test]
    fn cuckoo_counts_each_add_and_reserve_checks_options() {
        let mut s = session();
        assert_eq!(
            run(
                &mut s,
                &[
                    "CF.RESERVE",
                    "c",
                    "1000",
                    "BUCKETSIZE",
                    "4",
                    "MAXITERATIONS",
                    "10",
                    "EXPANSION",
                    "2"
                ]
            ),
            "+OK\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "c", "1000"]),
            "-ERR item exists\r\n"
        );
        assert!(
            run(&mut s, &["CF.RESERVE", "d", "1000", "BUCKETSIZE", "0"]).starts_with("-BUCKETSIZE")
        );
        assert!(
            run(&mut s, &["CF.RESERVE", "d", "3", "BUCKETSIZE", "2"]).starts_with("-Capacity must")
        );
        assert_eq!(
            run(&mut s, &["CF.RESERVE", "d", "1000", "BOGUS", "1"]),
            "-Unknown argument received\r\n"
        );
        assert_eq!(run(&mut s, &["CF.ADD", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.ADD", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.COUNT", "c", "x"]), ":2\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":1\r\n");
        assert_eq!(run(&mut s, &["CF.DEL", "c", "x"]), ":0\r\n");
        assert_eq!(
            run(&mut s, &["CF.INSERTNX", "c", "ITEMS", "y", "y"]),
            "*2\r\n:1\r\n:0\r\n"
        );
        assert_eq!(
            run(&mut s, &["CF.INSERT", "n", "NOCREATE", "ITEMS", "y"]),
            "-ERR not found\r\n"
        );
        let info = run(&mut s, &["CF.INFO", "c"]);
        assert!(info.contains("+Bucket size\r\n:4\r\n"), "{info}");
        assert!(info.contains("+Max iterations\r\n:10\r\n"), "{info}");
        assert!(info.contains("+Expansion rate\r\n:2\r\n"), "{info}");
        assert!(
            info.contains("+Number of items deleted\r\n:2\r\n"),
            "{info}"
        );
        assert_eq!(run(&mut s, &["TYPE", "c"]), "+MBbloomCF\r\n");
    }
}
