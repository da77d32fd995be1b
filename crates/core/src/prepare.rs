//! The one item preparation: how every front end — `check`, `check --redis`, `add`/`remove`,
//! `redis add`, HTTP, RESP, the squid helper, the browser — turns an item into what a list is
//! asked ([`Preparer::query`]) or changed with ([`entry`]), and which category an added entry
//! joins ([`join_category`]). Nothing else normalizes, canonicalizes or hashes an item, so the
//! front ends cannot drift apart.

use phishbloom_filter::KeyHash;
use phishbloom_url::{CanonicalUrl, Canonicalizer, Entry};

use crate::error::{Error, Result};
use crate::keys::{expression_hash, fingerprint, KeyScheme};
use crate::resolve::Category;

/// What an item is to a list that is asked about it.
#[derive(Debug)]
pub enum Query<'a> {
    /// A URL, for a list of URL entries: its canonical form (probe it with
    /// [`crate::engine::probes::UrlProbes`]).
    Url(&'a CanonicalUrl),
    /// A whole key, normalized by the list's scheme, for a list of keys (an empty key is never
    /// listed: no entry is empty).
    Key(&'a [u8]),
    /// A line to look up as one phrase, for a keyword list.
    Phrase(&'a [u8]),
    /// A blank item asked of a list of URL entries: nothing to check, never listed.
    Blank,
    /// An item a list of URL entries cannot read: the reason (answered per item, never by
    /// failing the batch it came in).
    Invalid(phishbloom_url::Error),
}

/// The reusable buffers of [`Preparer::query`], one per thread: the canonicalizer writes into
/// one buffer, and keys are normalized into another, so preparing allocates nothing per item.
#[derive(Default)]
pub struct Preparer {
    canonicalizer: Canonicalizer,
    key: Vec<u8>,
}

impl Preparer {
    /// Prepares `item` (a line, without its `\n`; a trailing `\r` is dropped) for a list whose
    /// keys follow `scheme`.
    pub fn query<'s>(&'s mut self, scheme: KeyScheme, item: &'s [u8]) -> Query<'s> {
        let item = phishbloom_text::line::content(item);
        match scheme {
            KeyScheme::Expressions if item.trim_ascii().is_empty() => Query::Blank,
            KeyScheme::Expressions => match self.canonicalizer.canonicalize(item) {
                Ok(url) => Query::Url(url),
                Err(error) => Query::Invalid(error),
            },
            KeyScheme::Keywords => Query::Phrase(item),
            KeyScheme::Exact | KeyScheme::Folded | KeyScheme::Url | KeyScheme::Near => {
                self.key.clear();
                scheme.append_key(item, &mut self.key);
                Query::Key(&self.key)
            }
        }
    }

    /// [`Preparer::query`] of a URL item for a list of URL entries whose host was read off it
    /// first ([`phishbloom_url::read_written_host`], on the item without its `\r`): the same
    /// answer, without reading its scheme and host again.
    pub fn query_written(&mut self, written: &phishbloom_url::WrittenHost<'_>) -> Query<'_> {
        match self.canonicalizer.canonicalize_written(written) {
            Ok(url) => Query::Url(url),
            Err(error) => Query::Invalid(error),
        }
    }

    /// Appends the normalized key of `item` for a list of keys (`scheme` not
    /// [`KeyScheme::Expressions`]) to `out` and returns its length: for callers that pack a
    /// batch of keys into one buffer for one prefetched query.
    pub fn append_key(scheme: KeyScheme, item: &[u8], out: &mut Vec<u8>) -> usize {
        scheme.append_key(item, out)
    }
}

/// An item to add to or remove from a list, prepared: the entry key (for messages), the hash
/// its structure holds and its verification fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryItem {
    /// The entry's key: `evil.com`, `evil.com/login`, or a normalized whole key.
    pub key: Vec<u8>,
    /// The hash the list's structure holds for it (URL entries: [`expression_hash`]).
    pub hash: KeyHash,
    /// Its verification fingerprint ([`fingerprint`] of the hash).
    pub fingerprint: u64,
}

/// Prepares `item` as an entry of a list whose keys follow `scheme`: a URL or domain entry
/// (`evil.com`, `http://evil.com/login`) for a list of URL entries, a key normalized by the
/// scheme otherwise. `None` for a blank item; [`Error::InvalidItem`] for an item that is not an
/// entry.
pub fn entry(scheme: KeyScheme, item: &[u8]) -> Result<Option<EntryItem>> {
    let item = phishbloom_text::line::content(item);
    if item.trim_ascii().is_empty() {
        return Ok(None);
    }
    match scheme {
        KeyScheme::Expressions => {
            let entry = Entry::parse(item).map_err(|error| Error::InvalidItem {
                item: String::from_utf8_lossy(item).into_owned(),
                error,
            })?;
            let hash = expression_hash(entry.key());
            Ok(Some(EntryItem {
                key: entry.to_key_string().into_bytes(),
                hash,
                fingerprint: fingerprint(hash),
            }))
        }
        scheme => {
            let mut key = Vec::new();
            if scheme.append_key(item, &mut key) == 0 {
                return Ok(None);
            }
            let hash = scheme.key_hash(&key);
            Ok(Some(EntryItem {
                fingerprint: fingerprint(hash),
                key,
                hash,
            }))
        }
    }
}

/// Prepares many items as entries ([`entry`]): blanks skipped, one per distinct entry, the first
/// item that is not an entry an error naming it.
pub fn entries(scheme: KeyScheme, items: &[&[u8]]) -> Result<Vec<EntryItem>> {
    let mut seen = std::collections::HashSet::new();
    let mut prepared = Vec::with_capacity(items.len());
    for item in items {
        if let Some(entry) = entry(scheme, item)? {
            if seen.insert(entry.fingerprint) {
                prepared.push(entry);
            }
        }
    }
    Ok(prepared)
}

/// The category added entries join: the one `given`, else the list's only category (or its
/// `name` when it has none); a list of several categories needs one named
/// ([`Error::CategoryNeeded`], listing them).
pub fn join_category(given: Option<&str>, categories: &[Category], name: &str) -> Result<String> {
    match (given, categories) {
        (Some(name), _) => Ok(name.to_string()),
        (None, [only]) => Ok(only.name.clone()),
        (None, []) => Ok(name.to_string()),
        (None, several) => Err(Error::CategoryNeeded {
            path: Default::default(),
            available: several
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_follow_the_scheme() {
        let mut preparer = Preparer::default();
        match preparer.query(KeyScheme::Expressions, b"HTTP://Evil.COM:80/a/../x\r") {
            Query::Url(url) => assert_eq!(url.to_string(), "http://evil.com/x"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            preparer.query(KeyScheme::Expressions, b"  "),
            Query::Blank
        ));
        assert!(matches!(
            preparer.query(KeyScheme::Expressions, b"http://warn.com[.]br/x"),
            Query::Invalid(_)
        ));
        match preparer.query(KeyScheme::Folded, b"Spammer@Evil.COM") {
            Query::Key(key) => assert_eq!(key, b"spammer@evil.com"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn entries_are_keys_hashes_and_fingerprints() {
        let a = entry(KeyScheme::Expressions, b"HTTP://Evil.com/login").unwrap();
        let b = entry(KeyScheme::Expressions, b"evil.com/login").unwrap();
        assert_eq!(a, b);
        let b = b.unwrap();
        assert_eq!(b.key, b"evil.com/login");
        assert_eq!(b.fingerprint, fingerprint(b.hash));
        assert!(entry(KeyScheme::Expressions, b" \r").unwrap().is_none());
        assert!(matches!(
            entry(KeyScheme::Expressions, b"http://[x"),
            Err(Error::InvalidItem { .. })
        ));
        let items: [&[u8]; 3] = [b"x", b"x", b""];
        assert_eq!(entries(KeyScheme::Exact, &items).unwrap().len(), 1);
    }

    #[test]
    fn several_categories_need_one_named() {
        let category = |name: &str| Category {
            name: name.into(),
            entries: 1,
        };
        assert_eq!(join_category(None, &[], "list").unwrap(), "list");
        assert_eq!(join_category(None, &[category("a")], "l").unwrap(), "a");
        assert_eq!(
            join_category(Some("b"), &[category("a"), category("c")], "l").unwrap(),
            "b"
        );
        let error = join_category(None, &[category("a"), category("c")], "l").unwrap_err();
        assert!(
            matches!(error, Error::CategoryNeeded { ref available, .. } if available == "a, c")
        );
    }
}
