//! Near-duplicate lists from files: every document of the inputs (texts, e-mails, mbox
//! messages, HTML pages, or one per line; directories read whole) printed by the list's
//! method (MinHash sketches or SimHash, [`phishbloom_core::near`]) and named — by its
//! Message-ID when it is a message that has one, else as [`crate::documents`] names it
//! (`FILE`, `FILE#N`, `FILE:LINE`) — for
//! [`Blocklist::from_near`](phishbloom_core::Blocklist::from_near) and
//! [`Blocklist::add_near`](phishbloom_core::Blocklist::add_near); and the boilerplate a MinHash
//! list drops, learned from a sample of them ([`learn_boilerplate`]).

use std::path::{Path, PathBuf};

use crate::{Error, Result};
use phishbloom_core::near::{NearHasher, NearMethod};
use phishbloom_core::NamedDoc;
use phishbloom_filter::rng::SplitMix64;
use phishbloom_text::minhash::{self, Boilerplate, MinHashParams, BOILERPLATE_SAMPLE};
use phishbloom_text::tokens::Tokens;

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

/// The seed of the sample the boilerplate is learned from, so that a list built twice from
/// the same documents is the same list.
const SAMPLE_SEED: u64 = 0x6e65_6172;

/// Learns the boilerplate of the documents of `inputs` ([`Boilerplate::learn`]) from a
/// uniform sample of at most [`BOILERPLATE_SAMPLE`] of them (reservoir sampling, seeded).
/// Documents that cannot be decoded are passed over here; [`read_near_docs`] counts them.
pub fn learn_boilerplate(
    inputs: &[PathBuf],
    format: DocumentFormat,
    params: &MinHashParams,
) -> Result<Boilerplate> {
    let mut rng = SplitMix64::new(SAMPLE_SEED);
    let mut tokens = Tokens::new();
    let mut sample: Vec<Vec<u64>> = Vec::new();
    let mut seen = 0u64;
    for input in expand_inputs(inputs)? {
        for document in read_documents(&input, format)?.into_iter().flatten() {
            // Algorithm R (Vitter 1985): document `seen` replaces a random slot with
            // probability `BOILERPLATE_SAMPLE / (seen + 1)`.
            let slot = if sample.len() < BOILERPLATE_SAMPLE {
                sample.push(Vec::new());
                sample.len() - 1
            } else {
                match rng.below(seen + 1) as usize {
                    j if j < BOILERPLATE_SAMPLE => j,
                    _ => {
                        seen += 1;
                        continue;
                    }
                }
            };
            seen += 1;
            tokens.tokenize(&document.text);
            sample[slot] = minhash::shingles(tokens.hashes(), params.shingle).collect();
        }
    }
    Ok(Boilerplate::learn(sample))
}

/// Reads and prints every document of `inputs` under `method`, each in `category` (none: the
/// list's name). An input that cannot be read is an error; a document that cannot be decoded
/// is skipped and counted.
pub fn read_near_docs(
    inputs: &[PathBuf],
    format: DocumentFormat,
    method: &NearMethod,
    category: Option<&str>,
) -> Result<(Vec<NamedDoc>, NearSummary)> {
    let mut summary = NearSummary::default();
    let mut hasher = NearHasher::new();
    let mut docs = Vec::new();
    for input in expand_inputs(inputs)? {
        summary.files += 1;
        for document in read_documents(&input, format)? {
            match document {
                Ok(document) => {
                    let fingerprint = method.print(&document.text, &mut hasher);
                    summary.documents += 1;
                    summary.exact += u64::from(fingerprint.is_exact());
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
            &NearMethod::simhash(),
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
            &NearMethod::simhash(),
            None
        )
        .is_err());
    }
}
