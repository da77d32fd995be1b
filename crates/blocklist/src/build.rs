//! What a build reads, composed once for every front end that builds (the CLI's `build`, the
//! Python `Blocklist.build`): the entry sources of a list of URL entries, the key groups of a
//! list of whole keys, and a never-warn file made to answer clean.

use std::path::{Path, PathBuf};

use phishbloom_core::{Blocklist, EntrySet, KeyList, NeverReport};

use crate::entries::{EntrySource, Role};
use crate::error::{Error, Result};
use crate::source::{read_list_groups, Format, ListOptions};
use crate::{Input, ListSummary};

/// The sources of a list of URL entries: each of `lists` read with `options` in `category`
/// (else its file's stem), each UT1 category folder of `ut1`, and each of `allow` as
/// exceptions (always recognized by content).
pub fn entry_sources(
    lists: &[Input],
    options: &ListOptions,
    category: Option<&str>,
    ut1: &[PathBuf],
    allow: &[Input],
) -> Vec<EntrySource> {
    let mut sources: Vec<EntrySource> = lists
        .iter()
        .map(|input| EntrySource::List {
            input: input.clone(),
            options: options.clone(),
            category: category.map(str::to_string),
            role: Role::Block,
        })
        .collect();
    sources.extend(ut1.iter().cloned().map(EntrySource::Ut1));
    sources.extend(allow.iter().map(|input| EntrySource::List {
        input: input.clone(),
        options: ListOptions {
            format: Format::Auto,
            ..ListOptions::default()
        },
        category: Some("exceptions".into()),
        role: Role::Allow,
    }));
    sources
}

/// The category of a list's entries or keys: `category` when given, else the file's stem
/// (`stdin` for standard input).
pub fn category_of(category: Option<&str>, input: &Input) -> String {
    category.map(str::to_string).unwrap_or_else(|| match input {
        Input::Path(path) => path
            .file_stem()
            .map_or_else(|| "list".into(), |s| s.to_string_lossy().into_owned()),
        Input::Stdin => "stdin".into(),
    })
}

/// Every list's distinct whole keys read into memory, one group per category (lists of the
/// same category joined). `progress` hears each list's bytes read; `summary` each list's
/// summary once it is read.
pub fn read_key_groups(
    inputs: &[Input],
    options: &ListOptions,
    category: Option<&str>,
    progress: &mut dyn FnMut(&Input, u64),
    summary: &mut dyn FnMut(&Input, &ListSummary),
) -> Result<Vec<(String, KeyList)>> {
    let mut groups: Vec<(String, KeyList)> = Vec::new();
    for input in inputs {
        let (read, read_summary) =
            read_list_groups(input, options, &category_of(category, input), &mut |read| {
                progress(input, read)
            })?;
        summary(input, &read_summary);
        for (name, keys) in read {
            match groups.iter_mut().find(|(n, _)| *n == name) {
                Some((_, existing)) => existing.extend(&keys),
                None => groups.push((name, keys)),
            }
        }
    }
    Ok(groups)
}

/// Makes every URL or domain of the never-warn file at `path` (blank lines and `#` comments
/// skipped) answer clean from `blocklist` (built from `set`), or refuses with the member's
/// line when an entry lists it.
pub fn apply_never(blocklist: &mut Blocklist, set: &EntrySet, path: &Path) -> Result<NeverReport> {
    let text = std::fs::read(path).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        action: "read the never-warn list",
        error,
    })?;
    let (lines, members): (Vec<usize>, Vec<&[u8]>) = text
        .split(|&b| b == b'\n')
        .map(phishbloom_text::line::content)
        .enumerate()
        .filter(|(_, line)| !line.trim_ascii().is_empty() && !line.starts_with(b"#"))
        .map(|(at, line)| (at + 1, line.trim_ascii()))
        .unzip();
    match blocklist.never_warn(set, &members) {
        Err(phishbloom_core::Error::NeverListed { member, entry }) => Err(Error::NeverListed {
            path: path.to_path_buf(),
            line: lines[member],
            member: String::from_utf8_lossy(members[member]).into_owned(),
            entry,
        }),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_in_its_category_or_named_by_its_file() {
        let input = Input::Path(PathBuf::from("/lists/phishing.txt"));
        assert_eq!(category_of(None, &input), "phishing");
        assert_eq!(category_of(Some("malware"), &input), "malware");
        assert_eq!(category_of(None, &Input::Stdin), "stdin");
    }

    #[test]
    fn allow_lists_become_exceptions_after_the_block_lists() {
        let lists = [Input::Path("a.txt".into())];
        let allow = [Input::Path("ok.txt".into())];
        let sources = entry_sources(&lists, &ListOptions::default(), None, &[], &allow);
        assert!(matches!(
            &sources[1],
            EntrySource::List { role: Role::Allow, category: Some(c), .. } if c == "exceptions"
        ));
        assert!(matches!(
            &sources[0],
            EntrySource::List {
                role: Role::Block,
                category: None,
                ..
            }
        ));
    }
}
