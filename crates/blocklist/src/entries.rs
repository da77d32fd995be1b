//! Reading blocklist entries: plain lists, dataset-style CSVs and UT1 category folders, each line
//! parsed as a domain or URL entry (see `phishbloom_url::Entry`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use phishbloom_url::{Entry, ExpressionKind};

use crate::error::{Error, Result};
use crate::keys::KeyScheme;
use crate::source::{read_list, Format, Input, ListOptions, ListSummary, MALFORMED_EXAMPLES};

/// Where entries come from.
#[derive(Clone, Debug)]
pub enum EntrySource {
    /// A CSV or plain list, read with these options (the key scheme is ignored: lines are parsed
    /// as entries).
    List(Input, ListOptions),
    /// A UT1 category folder holding a `domains` file, a `urls` file, or both.
    Ut1(PathBuf),
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
    /// Entries equal to an earlier one (after canonicalization), across all files.
    pub duplicates: u64,
    /// Lines that are not entries (no host, too deep, ...).
    pub rejected: u64,
    /// The first few rejected lines: (file, line text, reason).
    pub rejected_examples: Vec<(PathBuf, String, String)>,
}

/// Reads every source and returns the distinct entries.
pub fn read_entries(sources: &[EntrySource]) -> Result<(Vec<Entry>, EntrySummary)> {
    let mut entries = Vec::new();
    let mut seen = HashSet::new();
    let mut summary = EntrySummary::default();
    for source in sources {
        let ut1 = matches!(source, EntrySource::Ut1(_));
        for (input, options) in inputs_of(source)? {
            let raw_options = ListOptions {
                scheme: KeyScheme::Exact,
                ..options
            };
            let (lines, list_summary) = match read_list(&input, &raw_options, &mut |_| {}) {
                // UT1 ships some empty lists; the category's other file (or the other
                // categories) still count, and an empty result overall is reported below.
                Err(Error::EmptyInput { .. }) if ut1 => continue,
                other => other?,
            };
            let path = input.display_path();
            for line in lines.iter() {
                match Entry::parse(line) {
                    Ok(entry) => {
                        if seen.insert(entry.to_key_string()) {
                            match entry.kind() {
                                ExpressionKind::Domain => summary.domains += 1,
                                ExpressionKind::Url => summary.urls += 1,
                            }
                            entries.push(entry);
                        } else {
                            summary.duplicates += 1;
                        }
                    }
                    Err(error) => {
                        summary.rejected += 1;
                        if summary.rejected_examples.len() < MALFORMED_EXAMPLES {
                            let text = String::from_utf8_lossy(&line[..line.len().min(120)]);
                            summary.rejected_examples.push((
                                path.clone(),
                                text.into_owned(),
                                error.to_string(),
                            ));
                        }
                    }
                }
            }
            summary.files.push((path, list_summary));
        }
    }
    if entries.is_empty() {
        let path = sources.first().map(source_path).unwrap_or_default();
        return Err(Error::EmptyInput {
            path,
            detail: format!("{} lines rejected as entries", summary.rejected),
        });
    }
    Ok((entries, summary))
}

impl EntrySource {
    /// The files this source reads (none for standard input), for output-path checks.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            EntrySource::List(input, _) => {
                input.file().map(Path::to_path_buf).into_iter().collect()
            }
            EntrySource::Ut1(dir) => ["domains", "urls"].iter().map(|f| dir.join(f)).collect(),
        }
    }
}

fn source_path(source: &EntrySource) -> PathBuf {
    match source {
        EntrySource::List(input, _) => input.display_path(),
        EntrySource::Ut1(dir) => dir.clone(),
    }
}

/// The files a source stands for.
fn inputs_of(source: &EntrySource) -> Result<Vec<(Input, ListOptions)>> {
    match source {
        EntrySource::List(input, options) => Ok(vec![(input.clone(), options.clone())]),
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

    #[test]
    fn ut1_folder_gives_domain_and_url_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("domains"), "evil.com\nEVIL.com\nbad.org\n").unwrap();
        std::fs::write(
            dir.path().join("urls"),
            "sig2fa.wixsite.com/sig2faverify\n...\n",
        )
        .unwrap();
        let (entries, summary) =
            read_entries(&[EntrySource::Ut1(dir.path().to_path_buf())]).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!((summary.domains, summary.urls), (2, 1));
        assert_eq!(summary.duplicates, 1);
        assert_eq!(summary.rejected, 1);
        assert_eq!(summary.files.len(), 2);
    }

    #[test]
    fn a_folder_without_lists_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_entries(&[EntrySource::Ut1(dir.path().to_path_buf())]).unwrap_err();
        assert!(matches!(error, Error::NotAUt1Category { .. }), "{error:?}");
        let error = read_entries(&[EntrySource::Ut1(dir.path().join("nope"))]).unwrap_err();
        assert!(error.to_string().contains("UT1"), "{error}");
    }
}
