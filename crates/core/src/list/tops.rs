//! Domain entries of a single label (`intranet`, `iclexofmarket`): like any domain entry they
//! list every host under them, which a URL reaches through its top label
//! ([`phishbloom_url::is_top_label`]). A false positive there would list a whole top-level
//! domain, so a list keeps these entries' fingerprints in a small exact set (the top-labels
//! section; deltas carry it), a top-label hit stands only when it is in the set
//! ([`crate::resolve::Resolver::tops`]), and a list whose set is empty — nearly every list —
//! never probes top labels at all.

use phishbloom_url::Entry;

use crate::engine::cabf::{entry_components, sequence_fingerprint, Split};
use crate::hits::Fingerprints;
use crate::keys::{expression_hash, fingerprint};

use super::model::{Blocklist, Engine};

/// Whether an entry key (`evil.com`, `evil.com/a`, `intranet`) is a domain entry of a single
/// label: no path, no dot, and not an IPv6 literal (an IPv4 address has dots).
pub(crate) fn is_top_key(key: &[u8]) -> bool {
    !key.is_empty() && !key.iter().any(|&b| matches!(b, b'.' | b'/' | b'[' | b'?'))
}

/// The fingerprints of those of `entries` that are domain entries of a single label, as an
/// engine names its hits: of the entry's key, or — for CaBF, `cabf` its split — of its
/// component sequence.
pub(crate) fn top_fingerprints<'a>(
    entries: impl IntoIterator<Item = &'a Entry>,
    cabf: Option<Split>,
) -> Vec<u64> {
    entries
        .into_iter()
        .filter(|e| e.key().path.is_empty() && is_top_key(e.key().host.as_bytes()))
        .map(|e| match cabf {
            Some(split) => sequence_fingerprint(&entry_components(split, e)),
            None => fingerprint(expression_hash(e.key())),
        })
        .collect()
}

impl Blocklist {
    /// Keeps the fingerprints of `entries` that are domain entries of a single label in the
    /// top-labels set. Fingerprints are as the list's engine names its hits.
    pub(crate) fn note_tops<'a>(&mut self, entries: impl IntoIterator<Item = &'a Entry>) {
        let cabf = match &self.engine {
            Engine::Urls(_) => None,
            Engine::Cabf(engine) => Some(engine.split()),
            _ => return,
        };
        let added = top_fingerprints(entries, cabf);
        self.add_tops(&added);
    }

    /// Adds fingerprints of single-label domain entries to the top-labels set.
    pub(crate) fn add_tops(&mut self, added: &[u64]) {
        if !added.is_empty() {
            self.set_tops(self.resolver.tops().with(added));
        }
    }

    /// Takes removed entries' fingerprints out of the top-labels set.
    pub(crate) fn forget_tops(&mut self, removed: &[u64]) {
        if !self.resolver.tops().is_empty() && !removed.is_empty() {
            self.set_tops(self.resolver.tops().without(removed));
        }
    }

    /// Replaces the top-labels set, and tells the engine whether to probe top labels.
    pub(crate) fn set_tops(&mut self, tops: Fingerprints) {
        match &mut self.engine {
            Engine::Urls(urls) => urls.set_tops(!tops.is_empty()),
            Engine::Cabf(cabf) => cabf.set_tops(!tops.is_empty()),
            _ => {}
        }
        self.resolver.set_tops(tops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Scratch;
    use crate::{BuildOptions, EntrySet, Kind};

    fn list(kind: Kind, verify: bool, fpp: f64, bound: u32, host_gate: bool) -> Blocklist {
        let lines: [&[u8]; 4] = [b"iclexofmarket", b"evil.com", b"intranet/a", b"1.2.3.4"];
        // Enough entries to fill a filter of the smallest size at the rate asked.
        let fillers = (0..300).map(|i| format!("filler{i}.example"));
        let entries: Vec<Entry> = lines
            .iter()
            .map(|l| Entry::parse(l).unwrap())
            .chain(fillers.map(|l| Entry::parse(l.as_bytes()).unwrap()))
            .collect();
        let capacity = Some(entries.len() as u64 + 1);
        let set = EntrySet::uncategorized(entries, "phishing");
        let options = BuildOptions {
            kind,
            verify,
            fpp,
            expression_bound: bound,
            // Room for one entry more.
            capacity,
            host_gate,
            ..BuildOptions::default()
        };
        Blocklist::from_entries(&set, &options).unwrap()
    }

    /// The entry a URL is listed by (`None`: not listed).
    fn hit(list: &Blocklist, url: &str) -> Option<String> {
        let verdict = list.check(url.as_bytes(), &mut Scratch::default());
        verdict
            .listed()
            .then(|| verdict.hit.map(|hit| hit.expression).unwrap_or_default())
    }

    #[test]
    fn a_single_label_domain_lists_every_host_under_it_in_every_kind() {
        for (kind, verify) in [
            (Kind::Blocked, false),
            (Kind::Blocked, true),
            (Kind::Split, false),
            (Kind::Classic, false),
            (Kind::Cuckoo, true),
            (Kind::Counting, false),
            (Kind::Cabf, false),
            (Kind::Cabf, true),
            (Kind::Compact, false),
        ] {
            let built = list(kind, verify, 1e-6, 20, true);
            let read = Blocklist::from_bytes("tops.bloom", &built.to_bytes()).unwrap();
            for list in [&built, &read] {
                let what = format!("{kind} verify={verify}");
                for url in [
                    "iclexofmarket",
                    "http://www.iclexofmarket/login",
                    "a.b.c.iclexofmarket/x?y",
                ] {
                    assert_eq!(
                        hit(list, url).as_deref(),
                        Some("iclexofmarket"),
                        "{what} {url}"
                    );
                }
                assert_eq!(
                    hit(list, "www.evil.com").as_deref(),
                    Some("evil.com"),
                    "{what}"
                );
                assert_eq!(
                    hit(list, "intranet/a/b").as_deref(),
                    Some("intranet/a"),
                    "{what}"
                );
                // A URL entry's host is matched from two labels; an IP address has no labels.
                for url in ["x.intranet/a", "iclexofmarket.com", "com"] {
                    assert_eq!(hit(list, url), None, "{what} {url}");
                }
            }
        }
    }

    /// A list without a table answers a top-label hit only from its own single-label domains:
    /// at a rate where its filter answers for most probes (and no host gate rules them out), no
    /// URL is listed by its top label.
    #[test]
    fn a_filter_false_positive_never_lists_a_top_level_domain() {
        for kind in [Kind::Blocked, Kind::Classic, Kind::Cabf] {
            let mut list = list(kind, false, 0.5, 1, false);
            if kind != Kind::Cabf {
                list.add(&[b"corp"], None).unwrap();
            }
            let read = Blocklist::from_bytes("tops.bloom", &list.to_bytes()).unwrap();
            // `iclexofmarket` and the added `corp` (CaBF takes no additions).
            let tops = if kind == Kind::Cabf { 1 } else { 2 };
            assert_eq!(read.resolver.tops().len(), tops, "{kind}");
            let mut listed = 0;
            for i in 0..2_000 {
                let url = format!("http://host{i}.tld{i}/");
                if let Some(entry) = hit(&read, &url) {
                    assert!(entry.contains('.'), "{kind}: {url} listed by {entry}");
                    listed += 1;
                }
            }
            // The filter does answer for other probes at this rate: the test can fail.
            assert!(listed > 100, "{kind}: {listed} of 2,000 listed");
        }
    }

    #[test]
    fn top_keys_are_single_label_domains() {
        assert!(is_top_key(b"intranet"));
        assert!(is_top_key(b"iclexofmarket"));
        assert!(!is_top_key(b"evil.com"));
        assert!(!is_top_key(b"intranet/a"));
        assert!(!is_top_key(b"[::1]"));
        assert!(!is_top_key(b"1.2.3.4"));
        assert!(!is_top_key(b""));
    }

    /// A delta carries the target's single-label domains (format 4): an added one lists its
    /// subdomains at the receiver, a removed one no longer does; a delta that leaves them
    /// alone stays in format 3.
    #[test]
    fn deltas_carry_the_single_label_domains() {
        use crate::delta::{Delta, DiffOptions, ListView, TOPS_VERSION, VERSION};
        let build = |lines: &[&str]| {
            let entries = lines.iter().map(|l| Entry::parse(l.as_bytes()).unwrap());
            let set = EntrySet::uncategorized(entries.collect(), "phishing");
            let options = BuildOptions {
                verify: true,
                ..BuildOptions::default()
            };
            Blocklist::from_entries(&set, &options).unwrap()
        };
        let view = |list: &Blocklist| ListView::of_blocklist(list, "l".as_ref()).unwrap();
        let (v1, v2, v3) = (
            build(&["evil.com"]),
            build(&["evil.com", "corp"]),
            build(&["evil.com", "bad.org"]),
        );
        let mut copy = Blocklist::from_bytes("copy", &v1.to_bytes()).unwrap();
        for (from, to, listed) in [(&v1, &v2, true), (&v2, &v3, false)] {
            let delta = Delta::between(&view(from), &view(to), &DiffOptions::default()).unwrap();
            let bytes = delta.to_bytes();
            assert_eq!(&bytes[8..12], &TOPS_VERSION.to_le_bytes());
            let read = Delta::from_bytes("d".as_ref(), &bytes).unwrap();
            assert_eq!(read, delta);
            copy.apply(&read).unwrap();
            let copy_read = Blocklist::from_bytes("copy", &copy.to_bytes()).unwrap();
            assert_eq!(hit(&copy_read, "a.b.corp").is_some(), listed);
            assert_eq!(hit(&copy, "a.b.corp").is_some(), listed);
        }
        let same = Delta::between(&view(&v3), &view(&v1), &DiffOptions::default()).unwrap();
        assert_eq!(same.tops, None);
        assert_eq!(&same.to_bytes()[8..12], &VERSION.to_le_bytes());
        // A list's entries read as text (`diff OLD.bloom NEW.txt`) have the file's set.
        let entries = ["evil.com", "corp"].map(|l| Entry::parse(l.as_bytes()).unwrap());
        let text = ListView::of_entries(&EntrySet::uncategorized(entries.to_vec(), "p"), 20);
        assert_eq!(text.tops, view(&v2).tops);
        assert_eq!(text.tops.len(), 1);
    }
}
