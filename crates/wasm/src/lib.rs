//! phishbloom's check core for a browser: the lists a browser extension holds, and every
//! answer it gives, over [`phishbloom_core`], behind plain C-ABI exports (module [`exports`])
//! that JavaScript calls on `wasm32-unknown-unknown` without wasm-bindgen.
//!
//! JavaScript only moves bytes (list files, deltas, indexes, URLs) in and answers out; every
//! rule — reading a list, preparing a URL, the verdict, the printed line, what a sync
//! downloads, applying its deltas and whether it may be trusted — is phishbloom's Rust, the same code
//! `phishbloom check` and `phishbloom sync` run. This module is the Rust API the exports wrap
//! (host-testable): [`Lists`] holds loaded lists by handle; [`answer`] prints verdict lines
//! exactly as `phishbloom check` does; [`Lists::warning`] answers a navigation across all lists.

#![warn(missing_docs)]

pub mod exports;
#[cfg(target_arch = "wasm32")]
pub mod host;
pub mod sync;

use std::collections::HashSet;

use phishbloom_core::engine::Scratch;
use phishbloom_core::printer::{write_verdict, Output};
use phishbloom_core::resolve::Status;
use phishbloom_core::Blocklist;

/// A list loaded in memory, with the scratch its checks reuse.
pub struct Loaded {
    /// The blocklist.
    pub list: Blocklist,
    /// Reused buffers of its checks.
    pub scratch: Scratch,
}

impl Loaded {
    /// A list read from a whole file image (every section checked); `name` labels errors.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Loaded, String> {
        let list = Blocklist::from_bytes(name, bytes).map_err(|e| e.to_string())?;
        Loaded::new(list)
    }

    /// Holds `list` for checks; refuses one that does not answer `check` (a keyword list),
    /// as `phishbloom check` does.
    pub fn new(list: Blocklist) -> Result<Loaded, String> {
        list.require_checkable().map_err(|e| e.to_string())?;
        Ok(Loaded {
            list,
            scratch: Scratch::default(),
        })
    }

    /// The facts a client shows and stores about the list, as one JSON object: `name`,
    /// `version`, `entries`, `created` (seconds since the Unix epoch, 0 if unknown),
    /// `fingerprint` (the set fingerprint, hex), `kind`, `categories` (names).
    pub fn info(&self) -> serde_json::Value {
        let meta = self.list.meta();
        serde_json::json!({
            "name": meta.name,
            "version": meta.version,
            "entries": meta.entries,
            "created": meta.created,
            "fingerprint": meta.fingerprint.to_string(),
            "kind": self.list.kind().to_string(),
            "categories": self.list.categories().iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        })
    }
}

/// The lines of a stream as `phishbloom check` reads standard input: split at `\n`, one
/// final `\n` ends the last line rather than starting an empty one, nothing for empty input
/// (the `\r` of a CRLF line is dropped by [`answer`], as the stream checker does).
pub fn stream_lines(text: &[u8]) -> Vec<&[u8]> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.split(|&b| b == b'\n').collect()
}

/// Answers `items` against `loaded` and appends one verdict line each to `out`, exactly as
/// `phishbloom check` prints them (a trailing `\r` of an item is dropped, as there). Returns
/// how many were listed.
pub fn answer(loaded: &mut Loaded, items: &[&[u8]], output: Output, out: &mut Vec<u8>) -> usize {
    let stats = loaded
        .list
        .write_checks(items.iter().copied(), output, &mut loaded.scratch, out);
    // At most one per item given: no more than a slice's length.
    stats.listed as usize
}

/// The lists a client holds, by handle (a small positive number; 0 is never a handle), and
/// the entries its user chose to pass for this session.
///
/// A handle's slot is reused once its list is dropped; each list held gets a generation
/// number never given before ([`Lists::generation`]), so a caller that remembered a handle can
/// tell whether it still names the same list.
#[derive(Default)]
pub struct Lists {
    /// Each slot's list and its generation.
    slots: Vec<Option<(u64, Loaded)>>,
    /// The generation the last list held got.
    generation: u64,
    /// `(list name, entry)` pairs the user continued past ("continue anyway").
    passed: HashSet<(String, String)>,
}

impl Lists {
    /// Holds `loaded` and returns its handle.
    pub fn insert(&mut self, loaded: Loaded) -> u32 {
        let held = Some((self.next_generation(), loaded));
        let index = match self.slots.iter().position(Option::is_none) {
            Some(free) => {
                self.slots[free] = held;
                free
            }
            None => {
                self.slots.push(held);
                self.slots.len() - 1
            }
        };
        handle_of(index)
    }

    /// A generation number not given before.
    fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }

    /// The slot of `handle`, if it holds a list.
    fn slot_mut(&mut self, handle: u32) -> Option<&mut (u64, Loaded)> {
        let index = usize::try_from(handle).ok()?.checked_sub(1)?;
        self.slots.get_mut(index)?.as_mut()
    }

    /// The list of `handle`, if it is held.
    pub fn get_mut(&mut self, handle: u32) -> Option<&mut Loaded> {
        self.slot_mut(handle).map(|(_, loaded)| loaded)
    }

    /// The generation of the list `handle` holds now (`None` if it holds none): it changes
    /// whenever the handle's list is replaced, or dropped and its slot reused.
    pub fn generation(&self, handle: u32) -> Option<u64> {
        let index = usize::try_from(handle).ok()?.checked_sub(1)?;
        self.slots
            .get(index)?
            .as_ref()
            .map(|(generation, _)| *generation)
    }

    /// Replaces the list of `handle` (which must be held; it gets a new generation); false
    /// if it is not held.
    pub fn replace(&mut self, handle: u32, loaded: Loaded) -> bool {
        let generation = self.next_generation();
        match self.slot_mut(handle) {
            Some(slot) => {
                *slot = (generation, loaded);
                true
            }
            None => false,
        }
    }

    /// Drops the list of `handle`; false if it was not held.
    pub fn remove(&mut self, handle: u32) -> bool {
        let Some(index) = usize::try_from(handle).ok().and_then(|h| h.checked_sub(1)) else {
            return false;
        };
        self.slots.get_mut(index).and_then(Option::take).is_some()
    }

    /// Sets the entries the user continued past this session: lines `LIST<TAB>ENTRY` (as
    /// [`Lists::warning`] names them); a URL whose deciding entry is among them is not warned.
    pub fn set_passed(&mut self, text: &[u8]) {
        self.passed = String::from_utf8_lossy(text)
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .map(|(list, entry)| (list.to_owned(), entry.to_owned()))
            .collect();
    }

    /// The warning for a navigation to `url`, or `None` if no held list lists it (or the
    /// user passed every entry that does): the first list, in handle order, that lists it,
    /// as one JSON object — `url`, `verdict` (the object `phishbloom check --json` prints),
    /// `list` (its [`Loaded::info`]).
    pub fn warning(&mut self, url: &[u8]) -> Option<serde_json::Value> {
        let passed = &self.passed;
        for (_, loaded) in self.slots.iter_mut().flatten() {
            let verdict = loaded.list.check(url, &mut loaded.scratch);
            if verdict.status != Status::Listed {
                continue;
            }
            let name = &loaded.list.meta().name;
            if let Some(hit) = &verdict.hit {
                if passed.contains(&(name.clone(), hit.expression.clone())) {
                    continue;
                }
            }
            let mut line = Vec::new();
            write_verdict(url, &verdict, Output::Json, &mut line);
            // The printer writes one JSON object (then a newline): it always parses.
            let verdict: serde_json::Value = serde_json::from_slice(&line).unwrap_or_default();
            return Some(serde_json::json!({
                "url": String::from_utf8_lossy(url),
                "verdict": verdict,
                "list": loaded.info(),
            }));
        }
        None
    }
}

/// The handle of slot `index`.
fn handle_of(index: usize) -> u32 {
    // A client holds a handful of lists: far fewer than u32::MAX.
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use phishbloom_core::{BuildOptions, EntrySet};
    use phishbloom_url::Entry;

    /// A verified list of URL entries: a domain and a path entry, category `phishing`.
    pub(crate) fn image(name: &str, entries: &[&str]) -> Vec<u8> {
        let entries = entries
            .iter()
            .map(|e| Entry::parse(e.as_bytes()).unwrap())
            .collect();
        let set = EntrySet::uncategorized(entries, "phishing");
        let options = BuildOptions {
            verify: true,
            name: name.to_owned(),
            created: 1_700_000_000,
            capacity: Some(100),
            ..BuildOptions::default()
        };
        Blocklist::from_entries(&set, &options).unwrap().to_bytes()
    }

    #[test]
    fn answers_are_the_lines_check_prints() {
        let bytes = image("t", &["evil.com", "bad.org/login"]);
        let mut loaded = Loaded::from_bytes("t.bloom", &bytes).unwrap();
        let mut out = Vec::new();
        let items: [&[u8]; 4] = [
            b"HTTP://WWW.Evil.COM:80/a/../x",
            b"http://bad.org/login/x\r",
            b"http://good.org/",
            b"http://[x",
        ];
        assert_eq!(answer(&mut loaded, &items, Output::Tsv, &mut out), 2);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "HTTP://WWW.Evil.COM:80/a/../x\tlisted\tevil.com\tdomain\tphishing"
        );
        assert_eq!(
            lines[1],
            "http://bad.org/login/x\tlisted\tbad.org/login\turl\tphishing"
        );
        assert_eq!(lines[2], "http://good.org/\tclean");
        assert!(lines[3].starts_with("http://[x\tinvalid\t"), "{}", lines[3]);
    }

    #[test]
    fn stream_lines_follow_the_stream_checker() {
        assert!(stream_lines(b"").is_empty());
        assert_eq!(stream_lines(b"a\n"), [b"a".as_slice()]);
        assert_eq!(
            stream_lines(b"a\n\nb"),
            [b"a".as_slice(), b"".as_slice(), b"b".as_slice()]
        );
        assert_eq!(stream_lines(b"\n"), [b"".as_slice()]);
    }

    #[test]
    fn a_warning_names_the_entry_and_list_and_passing_it_lifts_it() {
        let mut lists = Lists::default();
        let clean = lists.insert(Loaded::from_bytes("a", &image("a", &["other.net"])).unwrap());
        let handle = lists.insert(Loaded::from_bytes("b", &image("b", &["evil.com"])).unwrap());
        assert_eq!((clean, handle), (1, 2));
        let warning = lists.warning(b"https://login.evil.com/x").unwrap();
        assert_eq!(warning["verdict"]["entry"], "evil.com");
        assert_eq!(warning["verdict"]["categories"][0], "phishing");
        assert_eq!(warning["list"]["name"], "b");
        assert_eq!(warning["list"]["created"], 1_700_000_000);
        assert!(lists.warning(b"https://good.com/").is_none());
        lists.set_passed(b"a\tevil.com\n");
        assert!(
            lists.warning(b"https://evil.com/").is_some(),
            "another list's pass"
        );
        lists.set_passed(b"b\tevil.com\n");
        assert!(lists.warning(b"https://evil.com/").is_none());
        assert!(lists.remove(handle));
        assert!(!lists.remove(handle));
        assert!(lists.get_mut(handle).is_none());
        assert!(lists.get_mut(0).is_none());
        let again = lists.insert(Loaded::from_bytes("b", &image("b", &["x.com"])).unwrap());
        assert_eq!(again, handle, "a free slot is reused");
    }

    #[test]
    fn a_corrupt_image_is_refused_with_its_reason() {
        let mut bytes = image("t", &["evil.com"]);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let error = Loaded::from_bytes("t.bloom", &bytes).err().unwrap();
        assert!(error.contains("t.bloom"), "{error}");
    }

    #[test]
    fn info_names_version_entries_and_fingerprint() {
        let loaded = Loaded::from_bytes("t", &image("t", &["evil.com", "b.org/x"])).unwrap();
        let info = loaded.info();
        assert_eq!(info["name"], "t");
        assert_eq!(info["version"], 1);
        assert_eq!(info["entries"], 2);
        assert_eq!(info["fingerprint"].as_str().unwrap().len(), 32);
    }
}
