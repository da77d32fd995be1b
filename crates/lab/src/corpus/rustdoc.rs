//! Rust's standard library documentation as a corpus: the doc comments (`///`, `//!`) of
//! `library/core`, `library/alloc` and `library/std` in Debian's `rust-web-src` (the sources
//! rustdoc renders into the library's HTML pages), one source file a page. Technical prose
//! full of stock phrasing ("# Examples", "Basic usage:", "# Panics", `assert_eq!` lines), the
//! kind of text on which near-duplicate fingerprints tuned on a book make false matches.

use std::path::{Path, PathBuf};

use super::{split_page, Document};
use crate::error::{Error, Result};

/// The Debian package that installs the sources.
pub const PACKAGE: &str = "rust-web-src";

/// Where Debian's Rust sources live (`rustc-VERSION` beneath it).
pub const SRC_DIR: &str = "/usr/src";

/// The library crates read.
pub const CRATES: [&str; 3] = ["core", "alloc", "std"];

/// The documents of every `.rs` file of [`CRATES`] with doc comments, files in path order.
pub fn rust_docs() -> Result<Vec<Document>> {
    let missing = || Error::MissingCorpus {
        path: PathBuf::from(SRC_DIR).join("rustc-*/library"),
        package: PACKAGE,
    };
    let root = std::fs::read_dir(SRC_DIR)
        .map_err(|_| missing())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rustc-"))
                && p.join("library/core/src").is_dir()
        })
        .max()
        .ok_or_else(missing)?;
    let mut files = Vec::new();
    for krate in CRATES {
        collect_rs(&root.join("library").join(krate).join("src"), &mut files)?;
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(source) = std::fs::read_to_string(&file) else {
            continue;
        };
        let name = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('#', "_");
        out.extend(split_page(&name, &doc_paragraphs(&source)));
    }
    Ok(out)
}

/// Every `.rs` file under `dir`.
fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir, "read"))? {
        let path = entry.map_err(Error::io(dir, "read"))?.path();
        if path.is_dir() {
            collect_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The paragraphs of a source file's doc comments: consecutive doc lines joined, a blank doc
/// line or any other line ending a paragraph; code blocks kept line by line (as rustdoc shows
/// them, one line a paragraph).
pub fn doc_paragraphs(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_code = false;
    let flush = |current: &mut Vec<&str>, out: &mut Vec<String>| {
        let text = current.join(" ");
        let words: Vec<&str> = text.split_whitespace().collect();
        if !words.is_empty() {
            out.push(words.join(" "));
        }
        current.clear();
    };
    for line in source.lines() {
        let trimmed = line.trim_start();
        let Some(doc) = trimmed
            .strip_prefix("///")
            .or_else(|| trimmed.strip_prefix("//!"))
        else {
            flush(&mut current, &mut out);
            in_code = false;
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if doc.trim_start().starts_with("```") {
            flush(&mut current, &mut out);
            in_code = !in_code;
            continue;
        }
        if doc.trim().is_empty() {
            flush(&mut current, &mut out);
            continue;
        }
        current.push(doc);
        if in_code {
            flush(&mut current, &mut out);
        }
    }
    flush(&mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_comments_become_paragraphs_and_code_lines() {
        let source = "//! The module.\n\n/// Adds one\n/// to x.\n///\n/// # Examples\n///\n\
                      /// ```\n/// let y = add(1);\n/// assert_eq!(y, 2);\n/// ```\n\
                      pub fn add(x: u32) -> u32 { x + 1 }\n";
        assert_eq!(
            doc_paragraphs(source),
            [
                "The module.",
                "Adds one to x.",
                "# Examples",
                "let y = add(1);",
                "assert_eq!(y, 2);",
            ]
        );
    }
}
