//! Reading blocklist entries: plain lists, dataset-style CSVs, UT1 category folders and the
//! formats admins already have (hosts files, AdBlock rules, PhishTank's and URLhaus's CSVs,
//! OpenPhish's feed: see [`crate::formats`]), each line parsed as a domain or URL entry (see
//! `phishbloom_url::Entry`), each entry carrying the categories of the lists it came from, and
//! exceptions (exception lists, AdBlock `@@` rules) kept apart.
//!
//! A list whose lines are mostly not entries is refused rather than half-read: a CSV read as
//! lines (its header gives it away, see [`crate::source`]), a list of e-mail addresses (entries
//! with user info would list whole domains), or anything else where most lines fail.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

use phishbloom_url::{Entry, ExpressionKind};

use crate::{Error, Result};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::resolve::MAX_CATEGORIES;

use crate::source::{
    read_entry_list, Format, Input, ListOptions, ListParts, ListSummary, MALFORMED_EXAMPLES,
};
use phishbloom_core::EntrySet;

/// The name of UT1's exception category: a `--ut1` folder of this name is read as exceptions.
pub const UT1_EXCEPTIONS: &str = "liste_blanche";

/// Whether a source lists entries to block or exceptions to them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// Entries to block.
    #[default]
    Block,
    /// Exceptions: entries that allow what a less specific block entry lists.
    Allow,
}

/// Where entries come from.
#[derive(Clone, Debug)]
pub enum EntrySource {
    /// A CSV or plain list, read with these options (the key scheme is ignored: lines are parsed
    /// as entries); its entries' category is `category`, else the file's stem (`stdin` for
    /// standard input), unless the options name a category column.
    List {
        /// The input.
        input: Input,
        /// How to read it.
        options: ListOptions,
        /// The category of its entries.
        category: Option<String>,
        /// Block or allow.
        role: Role,
    },
    /// A UT1 category folder holding a `domains` file, a `urls` file, or both; its entries'
    /// category is the folder's name, and the folder `liste_blanche` holds exceptions.
    Ut1(PathBuf),
}

impl EntrySource {
    /// A list of entries to block, in the file's own category.
    pub fn list(input: Input, options: ListOptions) -> Self {
        EntrySource::List {
            input,
            options,
            category: None,
            role: Role::Block,
        }
    }

    /// The files this source reads (none for standard input), for output-path checks.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            EntrySource::List { input, .. } => {
                input.file().map(Path::to_path_buf).into_iter().collect()
            }
            EntrySource::Ut1(dir) => ["domains", "urls"].iter().map(|f| dir.join(f)).collect(),
        }
    }

    /// Block or allow.
    pub fn role(&self) -> Role {
        match self {
            EntrySource::List { role, .. } => *role,
            EntrySource::Ut1(dir) if dir.file_name().is_some_and(|n| n == UT1_EXCEPTIONS) => {
                Role::Allow
            }
            EntrySource::Ut1(_) => Role::Block,
        }
    }

    /// The category of this source's entries (unless a CSV column gives one per row).
    pub fn category(&self) -> String {
        let stem = |path: &Path| {
            path.file_stem()
                .or(path.file_name())
                .map_or_else(|| "list".to_string(), |s| s.to_string_lossy().into_owned())
        };
        match self {
            EntrySource::List {
                category: Some(name),
                ..
            } => name.clone(),
            EntrySource::List { input, .. } => match input {
                Input::Path(path) => stem(path),
                Input::Stdin => "stdin".to_string(),
            },
            // A trailing `/` has no name: take the folder's own.
            EntrySource::Ut1(dir) => dir.components().next_back().map_or_else(
                || "ut1".to_string(),
                |c| c.as_os_str().to_string_lossy().into_owned(),
            ),
        }
    }

    fn path(&self) -> PathBuf {
        match self {
            EntrySource::List { input, .. } => input.display_path(),
            EntrySource::Ut1(dir) => dir.clone(),
        }
    }
}

/// What reading the entries found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct EntrySummary {
    /// Per file read: its path and its list summary.
    pub files: Vec<(PathBuf, ListSummary)>,
    /// Distinct domain entries.
    pub domains: u64,
    /// Distinct URL entries.
    pub urls: u64,
    /// Distinct exceptions.
    pub exceptions: u64,
    /// Entries equal to an earlier one (after canonicalization), across all files (an entry in
    /// two categories counts once here, and belongs to both).
    pub duplicates: u64,
    /// Lines that are not entries (no host, too deep, user info, ...).
    pub rejected: u64,
    /// The first few rejected lines: (file, line text, reason).
    pub rejected_examples: Vec<(PathBuf, String, String)>,
    /// Domain entries to block that are public suffixes (Public Suffix List: `com`, `co.uk`,
    /// `github.io`): each lists a whole registry's sites.
    pub public_suffixes: u64,
    /// The first few of them: (file, entry).
    pub public_suffix_examples: Vec<(PathBuf, String)>,
}

/// Whether `host` is a public suffix the Public Suffix List names (ICANN's or a private
/// registry's, such as `github.io`): a domain entry of it lists every site registered under it.
/// A single label that no rule names (`localhost`, an intranet name) is not one.
pub fn is_public_suffix(host: &str) -> bool {
    psl::suffix(host.as_bytes())
        .is_some_and(|suffix| suffix.is_known() && suffix.as_bytes() == host.as_bytes())
}

/// Reads every source and returns the distinct entries with their categories, and the
/// exceptions.
pub fn read_entries(sources: &[EntrySource]) -> Result<(EntrySet, EntrySummary)> {
    let mut entries = Entries::default();
    for source in sources {
        let ut1 = matches!(source, EntrySource::Ut1(_));
        for (input, options) in inputs_of(source)? {
            let raw_options = ListOptions {
                scheme: KeyScheme::Exact,
                ..options
            };
            let read = read_entry_list(&input, &raw_options, &source.category());
            let parts = match read {
                // UT1 ships some empty lists; the category's other file (or the other
                // categories) still count, and an empty result overall is reported below.
                Err(Error::EmptyInput { .. }) if ut1 => continue,
                other => other?,
            };
            entries.add_list(parts, input.display_path(), source.role())?;
        }
    }
    let Entries { set, summary, .. } = entries;
    if set.entries.is_empty() {
        let path = sources.first().map(EntrySource::path).unwrap_or_default();
        return Err(Error::EmptyInput {
            path,
            detail: format!(
                "{} lines rejected as entries{}",
                summary.rejected,
                if set.exceptions.is_empty() {
                    ""
                } else {
                    ", and exceptions alone block nothing"
                }
            ),
        });
    }
    Ok((set, summary))
}

/// The entries read so far, each once, with what is needed to find them again.
#[derive(Default)]
struct Entries {
    set: EntrySet,
    /// Each entry's place in `set.entries`, by the xxh3-128 of its key (two keys that share
    /// it — a 2⁻¹²⁸ chance a pair — would be read as one).
    index: FxHashMap<u128, usize>,
    /// The exceptions' keys.
    exception_keys: HashMap<String, ()>,
    /// Each category's id.
    category_ids: HashMap<String, u16>,
    summary: EntrySummary,
}

impl Entries {
    /// Adds the lines of one list read from `path` as `role`, then its own exceptions
    /// (AdBlock `@@` rules), whatever its role; refuses a file that is mostly not entries.
    fn add_list(&mut self, parts: ListParts, path: PathBuf, role: Role) -> Result<()> {
        let mut file = FileTally::default();
        for (category, lines) in &parts.groups {
            let id = self.category_id(category, role, &path)?;
            for line in lines.iter() {
                file.lines += 1;
                match Entry::parse(line) {
                    Ok(entry) if role == Role::Allow => self.add_exception(entry),
                    Ok(entry) => {
                        self.note_public_suffix(&entry, &path);
                        self.add_entry(entry, id)
                    }
                    Err(error) => file.reject(line, &error, &path, &mut self.summary),
                }
            }
        }
        for line in parts.exceptions.iter() {
            file.lines += 1;
            match Entry::parse(line) {
                Ok(entry) => self.add_exception(entry),
                Err(error) => file.reject(line, &error, &path, &mut self.summary),
            }
        }
        file.check(&path)?;
        self.summary.files.push((path, parts.summary));
        Ok(())
    }

    /// Counts a domain entry that is a public suffix, keeping the first few.
    fn note_public_suffix(&mut self, entry: &Entry, path: &Path) {
        if let Entry::Domain { host } = entry {
            if is_public_suffix(host) {
                let summary = &mut self.summary;
                summary.public_suffixes += 1;
                if summary.public_suffix_examples.len() < MALFORMED_EXAMPLES {
                    summary
                        .public_suffix_examples
                        .push((path.to_path_buf(), host.clone()));
                }
            }
        }
    }

    /// The id of `category`, given when first met (exceptions have no category: 0).
    fn category_id(&mut self, category: &str, role: Role, path: &Path) -> Result<u16> {
        Ok(match self.category_ids.get(category) {
            Some(&id) => id,
            None if role == Role::Allow => 0,
            None => {
                if self.set.categories.len() >= MAX_CATEGORIES {
                    return Err(Error::TooManyCategories {
                        path: path.to_path_buf(),
                        max: MAX_CATEGORIES,
                    });
                }
                let id = self.set.categories.len() as u16;
                self.set.categories.push(category.to_string());
                self.category_ids.insert(category.to_string(), id);
                id
            }
        })
    }

    /// Records an entry of category `id`: a new one, or a category more for one read before.
    fn add_entry(&mut self, entry: Entry, id: u16) {
        let key = entry.key();
        let host = xxhash_rust::xxh3::xxh3_128(key.host.as_bytes());
        let key = xxhash_rust::xxh3::xxh3_128_with_seed(key.path.as_bytes(), host as u64) ^ host;
        let summary = &mut self.summary;
        match self.index.get(&key) {
            Some(&at) => {
                summary.duplicates += 1;
                let member = &mut self.set.membership[at];
                if !member.contains(&id) {
                    member.push(id);
                    member.sort_unstable();
                }
            }
            None => {
                match entry.kind() {
                    ExpressionKind::Domain => summary.domains += 1,
                    ExpressionKind::Url => summary.urls += 1,
                }
                self.index.insert(key, self.set.entries.len());
                self.set.entries.push(entry);
                self.set
                    .membership
                    .push(phishbloom_core::Membership::from_slice(&[id]));
            }
        }
    }

    /// Records an exception once (a repeated one is a duplicate).
    fn add_exception(&mut self, entry: Entry) {
        let key = entry.to_key_string();
        if self.exception_keys.insert(key, ()).is_none() {
            self.summary.exceptions += 1;
            self.set.exceptions.push(entry);
        } else {
            self.summary.duplicates += 1;
        }
    }
}

/// One file's lines and refusals, to refuse a file that is mostly not entries.
#[derive(Default)]
struct FileTally {
    lines: u64,
    rejected: u64,
    userinfo: u64,
    example: Option<String>,
}

impl FileTally {
    fn reject(
        &mut self,
        line: &[u8],
        error: &phishbloom_url::Error,
        path: &Path,
        summary: &mut EntrySummary,
    ) {
        self.rejected += 1;
        if matches!(error, phishbloom_url::Error::EntryUserinfo { .. }) {
            self.userinfo += 1;
        }
        summary.rejected += 1;
        let text = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
        if self.example.is_none() {
            self.example = Some(format!("{text:?}: {error}"));
        }
        if summary.rejected_examples.len() < MALFORMED_EXAMPLES {
            summary
                .rejected_examples
                .push((path.to_path_buf(), text, error.to_string()));
        }
    }

    /// Refuses a file when more than half of its lines are not entries.
    fn check(self, path: &Path) -> Result<()> {
        if self.rejected * 2 <= self.lines {
            return Ok(());
        }
        if self.userinfo * 2 > self.lines {
            return Err(Error::LooksLikeAddresses {
                path: path.to_path_buf(),
                rejected: self.userinfo,
                lines: self.lines,
            });
        }
        Err(Error::MostLinesRejected {
            path: path.to_path_buf(),
            rejected: self.rejected,
            lines: self.lines,
            example: self.example.unwrap_or_default(),
        })
    }
}

/// The files a source stands for.
fn inputs_of(source: &EntrySource) -> Result<Vec<(Input, ListOptions)>> {
    match source {
        EntrySource::List { input, options, .. } => Ok(vec![(input.clone(), options.clone())]),
        EntrySource::Ut1(dir) => ut1_files(dir),
    }
}

/// A UT1 category folder's `domains` and `urls` files (plain lists).
fn ut1_files(dir: &Path) -> Result<Vec<(Input, ListOptions)>> {
    if !dir.is_dir() {
        return Err(Error::NotAUt1Category {
            path: dir.to_path_buf(),
        });
    }
    let files: Vec<_> = ["domains", "urls"]
        .iter()
        .map(|name| dir.join(name))
        .filter(|file| file.is_file())
        .map(|file| {
            let options = ListOptions {
                format: Format::Lines,
                ..ListOptions::default()
            };
            (Input::Path(file), options)
        })
        .collect();
    if files.is_empty() {
        return Err(Error::NotAUt1Category {
            path: dir.to_path_buf(),
        });
    }
    Ok(files)
}

/// Every category folder under a UT1 root (such as `../shared/data/ut1`) that holds a `urls`
/// or `domains` file, sorted by name.
pub fn ut1_categories(root: &Path) -> Result<Vec<PathBuf>> {
    let listing = std::fs::read_dir(root).map_err(|e| Error::io(root, "read the directory", e))?;
    let mut folders: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("urls").is_file() || p.join("domains").is_file())
        .collect();
    folders.sort();
    if folders.is_empty() {
        return Err(Error::NotAUt1Category {
            path: root.to_path_buf(),
        });
    }
    Ok(folders)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(root: &Path, name: &str, domains: &str, urls: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("domains"), domains).unwrap();
        std::fs::write(dir.join("urls"), urls).unwrap();
        dir
    }

    #[test]
    fn ut1_folders_give_entries_in_their_categories_and_exceptions() {
        let root = tempfile::tempdir().unwrap();
        let phishing = folder(
            root.path(),
            "phishing",
            "evil.com\nEVIL.com\nbad.org\n",
            "sig2fa.wixsite.com/x\n...\n",
        );
        let malware = folder(root.path(), "malware", "bad.org\nworm.net\n", "");
        let allow = folder(root.path(), UT1_EXCEPTIONS, "docs.evil.com\n", "");
        let sources = [phishing, malware, allow].map(EntrySource::Ut1);
        let (set, summary) = read_entries(&sources).unwrap();
        assert_eq!(set.categories, ["phishing", "malware"]);
        assert_eq!(set.entries.len(), 4);
        let of = |key: &str| {
            let at = set
                .entries
                .iter()
                .position(|e| e.to_key_string() == key)
                .unwrap();
            set.membership[at].to_vec()
        };
        assert_eq!(of("evil.com"), [0]);
        assert_eq!(of("bad.org"), [0, 1]);
        assert_eq!(of("worm.net"), [1]);
        assert_eq!(set.exceptions.len(), 1);
        assert_eq!(
            (summary.domains, summary.urls, summary.exceptions),
            (3, 1, 1)
        );
        assert_eq!(summary.duplicates, 2);
        assert_eq!(summary.rejected, 1);
        assert_eq!((set.count_in(0), set.count_in(1)), (3, 2));
    }

    #[test]
    fn a_folder_without_lists_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_entries(&[EntrySource::Ut1(dir.path().to_path_buf())]).unwrap_err();
        assert!(matches!(error, Error::NotAUt1Category { .. }), "{error:?}");
        let error = read_entries(&[EntrySource::Ut1(dir.path().join("nope"))]).unwrap_err();
        assert!(error.to_string().contains("UT1"), "{error}");
    }

    #[test]
    fn lists_that_are_mostly_not_entries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let read = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            read_entries(&[EntrySource::list(Input::Path(path), ListOptions::default())])
        };
        let error = read("mails.txt", "a@evil.com\nb@bad.org\nok.com\n").unwrap_err();
        assert!(
            matches!(
                error,
                Error::LooksLikeAddresses {
                    rejected: 2,
                    lines: 3,
                    ..
                }
            ),
            "{error:?}"
        );
        let error = read("junk.txt", "javascript:x\n/path\nok.com\n").unwrap_err();
        assert!(
            matches!(error, Error::MostLinesRejected { rejected: 2, .. }),
            "{error:?}"
        );
        let error = read("head.txt", "url,isMalicious\nmetamascks.com,-1\n").unwrap_err();
        assert!(matches!(error, Error::LooksLikeCsv { .. }), "{error:?}");
        // A few bad lines among many are counted, not fatal.
        let (set, summary) = read("fine.txt", "a@evil.com\nok.com\nfine.org\n").unwrap();
        assert_eq!((set.entries.len(), summary.rejected), (2, 1));
        // A list's category is its file's stem.
        assert_eq!(set.categories, ["fine"]);
    }
}
