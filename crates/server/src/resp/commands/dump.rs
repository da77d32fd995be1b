//! The commands that look into and copy the filters created here: `BF.DEBUG` (each layer's
//! parameters), and `BF.SCANDUMP`/`CF.SCANDUMP` and `BF.LOADCHUNK`/`CF.LOADCHUNK`
//! (RedisBloom's iterator over a filter's dump: [`Filter::dump_chunk`],
//! [`Filter::load_chunk`]). A served list is refused: its file is fetched over HTTP.

use super::keys::typed;
use super::reply;
use super::{parse_i64, Family, Session};
use crate::adhoc::{Filter, ScalingBloom};

/// The error of an iterator that is not a number (or not one this command takes).
const BAD_ITERATOR: &str = "ERR Second argument must be numeric";

impl Session {
    /// `BF.DEBUG key`: the item count and each layer's parameters.
    pub(super) fn bf_debug(&mut self, argv: &[&[u8]], out: &mut Vec<u8>) {
        let key = argv[1];
        if self.refuse_served(key, Family::Bloom, out) {
            return;
        }
        let adhoc = self.shared.lists.adhoc();
        let lines = adhoc.read(key, |f| f.bloom().map(ScalingBloom::debug));
        match typed(lines) {
            Err(message) => reply::error(out, message),
            Ok(lines) => {
                reply::array(out, lines.len());
                for line in lines {
                    reply::bulk(out, line.as_bytes());
                }
            }
        }
    }

    /// `BF.SCANDUMP` / `CF.SCANDUMP key iter`: `[next iter, chunk]` ([`Filter::dump_chunk`]).
    pub(super) fn scandump(&mut self, family: Family, argv: &[&[u8]], out: &mut Vec<u8>) {
        let key = argv[1];
        let Some(iter) = parse_i64(argv[2]).filter(|&i| i >= 0) else {
            return reply::error(out, BAD_ITERATOR);
        };
        if self.refuse_served(key, family, out) {
            return;
        }
        let chunk = self.shared.lists.adhoc().read(key, |f| {
            // RedisBloom dumps nothing of a cuckoo filter without items.
            let empty = f.cuckoo().is_some_and(|c| c.items() == 0);
            (Family::of_filter(f) == family).then(|| (f.dump_chunk(iter as u64), empty))
        });
        match typed(chunk) {
            Err(message) => reply::error(out, message),
            // The end (or an empty cuckoo filter): RedisBloom answers a cuckoo filter's with
            // nil, a Bloom filter's with an empty string.
            Ok(((0, _), _)) | Ok((_, true)) if family == Family::Cuckoo => {
                reply::array(out, 2);
                reply::int(out, 0);
                reply::null(out, self.proto);
            }
            Ok(((next, bytes), _)) => {
                reply::array(out, 2);
                reply::int(out, next as i64);
                reply::bulk(out, &bytes);
            }
        }
    }

    /// `BF.LOADCHUNK` / `CF.LOADCHUNK key iter data`: iterator 1 carries the header (the filter
    /// is created from it), the others data ([`Filter::load_chunk`]).
    pub(super) fn loadchunk(&mut self, family: Family, argv: &[&[u8]], out: &mut Vec<u8>) {
        let (key, data) = (argv[1], argv[3]);
        let Some(iter) = parse_i64(argv[2]).filter(|&i| i >= 1) else {
            return reply::error(out, BAD_ITERATOR);
        };
        if self.refuse_served(key, family, out) {
            return;
        }
        let adhoc = self.shared.lists.adhoc();
        if iter == 1 {
            let filter = match Filter::from_header(data) {
                Ok(filter) if Family::of_filter(&filter) == family => filter,
                Ok(_) => return reply::error(out, "ERR invalid chunk: a header of the other type"),
                Err(error) => return reply::error(out, &error.to_string()),
            };
            if !adhoc.create(key, filter) {
                return reply::error(out, "ERR item exists");
            }
            return reply::simple(out, "OK");
        }
        let loaded = adhoc.write(key, |f| {
            (Family::of_filter(f) == family).then(|| f.load_chunk(iter as u64, data))
        });
        match typed(loaded) {
            Err(message) => reply::error(out, message),
            Ok(Err(error)) => reply::error(out, &error.to_string()),
            Ok(Ok(())) => reply::simple(out, "OK"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, session};

    #[test]
    fn scandump_and_loadchunk_round_trip() {
        let mut s = session();
        assert_eq!(
            run(
                &mut s,
                &["BF.RESERVE", "b", "0.001", "100", "EXPANSION", "3"]
            ),
            "+OK\r\n"
        );
        for i in 0..300 {
            run(&mut s, &["BF.ADD", "b", &format!("k{i}")]);
        }
        let debug = run(&mut s, &["BF.DEBUG", "b"]);
        let mut chunks = Vec::new();
        let mut iter = 0;
        loop {
            let (next, data) = s
                .shared
                .lists
                .adhoc()
                .read(b"b", |f| f.dump_chunk(iter))
                .unwrap();
            // The reply carries the same iterator and bytes.
            let reply = run(&mut s, &["BF.SCANDUMP", "b", &iter.to_string()]);
            assert!(reply.starts_with(&format!("*2\r\n:{next}\r\n${}\r\n", data.len())));
            if next == 0 {
                break;
            }
            chunks.push((next, data));
            iter = next;
        }
        assert_eq!(run(&mut s, &["DEL", "b", "nothing"]), ":1\r\n");
        assert_eq!(run(&mut s, &["BF.EXISTS", "b", "k1"]), ":0\r\n");
        for (iter, data) in &chunks {
            let iter = iter.to_string();
            let argv: Vec<&[u8]> = vec![b"BF.LOADCHUNK", b"b", iter.as_bytes(), data];
            let mut out = Vec::new();
            s.execute(&argv, &mut out);
            assert_eq!(out, b"+OK\r\n");
        }
        assert_eq!(run(&mut s, &["BF.DEBUG", "b"]), debug);
        assert!((0..300).all(|i| run(&mut s, &["BF.EXISTS", "b", &format!("k{i}")]) == ":1\r\n"));
        assert!(run(&mut s, &["BF.INFO", "b"]).contains("+Expansion rate\r\n:3\r\n"));
        // 100, then 300: two filters.
        assert_eq!(run(&mut s, &["BF.INFO", "b", "FILTERS"]), "*1\r\n:2\r\n");
        assert_eq!(run(&mut s, &["BF.INFO", "b", "CAPACITY"]), "*1\r\n:400\r\n");
        assert_eq!(run(&mut s, &["BF.CARD", "b"]), ":300\r\n");
    }
}
