//! Near-duplicate lists from files: every document of the inputs (texts, e-mails, mbox
//! messages, HTML pages, or one per line; directories read whole) fingerprinted by SimHash and
//! named — by its Message-ID when it is a message that has one, else as [`crate::documents`]
//! names it (`FILE`, `FILE#N`, `FILE:LINE`) — for [`Blocklist::from_near`](phishbloom_core::Blocklist::from_near) and
//! [`Blocklist::add_near`](phishbloom_core::Blocklist::add_near).

use std::path::{Path, PathBuf};

use crate::{Error, Result};
use phishbloom_core::NamedDoc;
use phishbloom_text::simhash::{Fingerprint, SimHashParams, SimHasher};

use crate::documents::{read_documents, DocumentFormat};

/// What reading the documents found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NearSummary {
    /// Files read.
    pub files: u64,
    /// Documents fingerprinted.
    pub documents: u64,
    /// Of which shorter than the threshold (fingerprinted by an exact hash).
    pub exact: u64,
    /// Documents that could not be decoded (each named in `problems`).
    pub skipped: u64,
    /// The first few problems, each naming its document.
    pub problems: Vec<String>,
}

/// The most problems a summary keeps word for word.
const MAX_PROBLEMS: usize = 5;

/// The files of `inputs`, a directory standing for every file below it (sorted; names
/// starting with `.` skipped); `-` is standard input.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, &mut files)?;
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, "read the directory", e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads and fingerprints every document of `inputs` under `params`, each in `category`
/// (none: the list's name). An input that cannot be read is an error; a document that cannot
/// be decoded is skipped and counted.
pub fn read_near_docs(
    inputs: &[PathBuf],
    format: DocumentFormat,
    params: &SimHashParams,
    category: Option<&str>,
) -> Result<(Vec<NamedDoc>, NearSummary)> {
    let mut summary = NearSummary::default();
    let mut hasher = SimHasher::new();
    let mut docs = Vec::new();
    for input in expand_inputs(inputs)? {
        summary.files += 1;
        for document in read_documents(&input, format)? {
            match document {
                Ok(document) => {
                    let (fingerprint, _) = hasher.fingerprint(&document.text, params);
                    summary.documents += 1;
                    summary.exact += u64::from(matches!(fingerprint, Fingerprint::Exact(_)));
                    docs.push(NamedDoc {
                        fingerprint,
                        name: document.message_id.unwrap_or(document.name),
                        categories: category.map(str::to_string).into_iter().collect(),
                    });
                }
                Err(error) => {
                    summary.skipped += 1;
                    if summary.problems.len() < MAX_PROBLEMS {
                        summary.problems.push(error.to_string());
                    }
                }
            }
        }
    }
    if docs.is_empty() {
        return Err(Error::EmptyInput {
            path: inputs.first().cloned().unwrap_or_default(),
            detail: format!(
                "no document could be read from {} file(s){}",
                summary.files,
                summary
                    .problems
                    .first()
                    .map(|p| format!(": {p}"))
                    .unwrap_or_default()
            ),
        });
    }
    Ok((docs, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_read_from_files_and_directories_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("pages");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(
            sub.join("a.html"),
            "<html><body><p>Hello there</p></body></html>",
        )
        .unwrap();
        std::fs::write(sub.join(".hidden"), "skip me").unwrap();
        std::fs::write(
            dir.path().join("m.eml"),
            "Message-ID: <run-7@spam.example>\nSubject: Win\nFrom: a@b.example\n\nbody\n",
        )
        .unwrap();
        let inputs = vec![sub.clone(), dir.path().join("m.eml")];
        let (docs, summary) = read_near_docs(
            &inputs,
            DocumentFormat::Auto,
            &SimHashParams::default(),
            Some("kits"),
        )
        .unwrap();
        let names: Vec<&str> = docs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [sub.join("a.html").to_str().unwrap(), "run-7@spam.example"]
        );
        assert_eq!((summary.files, summary.documents, summary.exact), (2, 2, 2));
        assert_eq!(docs[0].categories, ["kits"]);
        let empty = tempfile::tempdir().unwrap();
        assert!(read_near_docs(
            &[empty.path().to_path_buf()],
            DocumentFormat::Auto,
            &SimHashParams::default(),
            None
        )
        .is_err());
    }
}
