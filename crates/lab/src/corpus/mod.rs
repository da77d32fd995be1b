//! Real text for the near-duplicate measurements, read from Debian packages and cut at
//! paragraph boundaries into documents of about 3 KB — the size of a phishing mail or page:
//! prose (this module: The Debian Administrator's Handbook, package `debian-handbook`, CC
//! BY-SA 3.0 / GPL-2+, whose English HTML chapters are read as a browser shows them,
//! [`phishbloom_blocklist::html::visible_text`]), manual pages ([`man_pages`]) and technical
//! documentation ([`rust_docs`]).
//!
//! The package is what a CI machine can install with `apt-get` (`.ci/run` does): a real book of
//! ~8 MB of HTML in English, 127 pages, not generated word salad. When it is missing,
//! [`handbook`] says so with the command that installs it; nothing here passes silently.
//!
//! Its natural duplicates are kept, not hidden: every page carries the same navigation lines
//! ("Prev", "Next", the book's title), and some notes recur. [`duplicate_paragraphs`] counts
//! them for the report.

mod man;
mod rustdoc;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use phishbloom_blocklist::html::visible_text;

use crate::error::{Error, Result};

pub use man::{man_pages, roff_paragraphs};
pub use rustdoc::{doc_paragraphs, rust_docs};

/// The Debian package that installs the corpus.
pub const PACKAGE: &str = "debian-handbook";

/// Where the package puts the English HTML pages.
pub const HANDBOOK_DIR: &str = "/usr/share/doc/debian-handbook/html/en-US";

/// Bytes a document grows to before it is cut (at the end of the paragraph that reaches it).
pub const DOCUMENT_BYTES: usize = 3000;

/// A page's last document shorter than this is dropped rather than kept as a short one.
pub const MIN_TAIL_BYTES: usize = 1500;

/// One document of the corpus: consecutive paragraphs of one page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// `PAGE#N`: the HTML file's name and the document's index within it.
    pub name: String,
    /// The paragraphs (visible lines, white space collapsed), in order.
    pub paragraphs: Vec<String>,
}

impl Document {
    /// The text: paragraphs separated by blank lines.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n\n")
    }

    /// Bytes of [`Document::text`].
    pub fn len(&self) -> usize {
        self.paragraphs.iter().map(String::len).sum::<usize>()
            + 2 * self.paragraphs.len().saturating_sub(1)
    }

    /// Whether the document has no text.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The handbook's documents from [`HANDBOOK_DIR`], or [`Error::MissingCorpus`].
pub fn handbook() -> Result<Vec<Document>> {
    documents_in(Path::new(HANDBOOK_DIR))
}

/// The documents of every `*.html` page directly in `dir`, pages in name order.
pub fn documents_in(dir: &Path) -> Result<Vec<Document>> {
    let missing = || Error::MissingCorpus {
        path: dir.to_path_buf(),
        package: PACKAGE,
    };
    let entries = std::fs::read_dir(dir).map_err(|_| missing())?;
    let mut pages: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    if pages.is_empty() {
        return Err(missing());
    }
    pages.sort();
    let mut out = Vec::new();
    for page in pages {
        let html = std::fs::read_to_string(&page).map_err(Error::io(&page, "read"))?;
        let name = page
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(split_page(&name, &paragraphs(&html)));
    }
    Ok(out)
}

/// The non-empty visible lines of a page, white space collapsed.
pub fn paragraphs(html: &str) -> Vec<String> {
    visible_text(html)
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect()
}

/// Cuts a page's paragraphs into documents of about [`DOCUMENT_BYTES`], dropping a last one
/// shorter than [`MIN_TAIL_BYTES`].
pub fn split_page(page: &str, paragraphs: &[String]) -> Vec<Document> {
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut bytes = 0;
    for paragraph in paragraphs {
        bytes += paragraph.len() + 2;
        current.push(paragraph.clone());
        if bytes >= DOCUMENT_BYTES {
            out.push(Document {
                name: format!("{page}#{}", out.len()),
                paragraphs: std::mem::take(&mut current),
            });
            bytes = 0;
        }
    }
    if bytes >= MIN_TAIL_BYTES {
        out.push(Document {
            name: format!("{page}#{}", out.len()),
            paragraphs: current,
        });
    }
    out
}

/// Paragraphs that occur in more than one document: `(paragraph, documents holding it)`, most
/// frequent first (ties by text), for the report's note on natural duplicates.
pub fn duplicate_paragraphs(docs: &[Document]) -> Vec<(String, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for doc in docs {
        let mut own: Vec<&str> = doc.paragraphs.iter().map(String::as_str).collect();
        own.sort_unstable();
        own.dedup();
        for p in own {
            *seen.entry(p).or_default() += 1;
        }
    }
    let mut out: Vec<(String, usize)> = seen
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(p, n)| (p.to_string(), n))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_at_paragraphs_into_documents_of_about_3_kb() {
        let paragraphs: Vec<String> = (0..40)
            .map(|i| format!("{i} {}", "word ".repeat(60)))
            .collect();
        let docs = split_page("p.html", &paragraphs);
        assert!(docs.len() >= 3);
        for doc in &docs {
            assert!(doc.len() >= MIN_TAIL_BYTES, "{}", doc.len());
            assert!(doc.len() < DOCUMENT_BYTES + 400, "{}", doc.len());
        }
        assert_eq!(docs[1].name, "p.html#1");
        // Every paragraph lands in one document, in order, unless it is in the dropped tail.
        let kept: Vec<&String> = docs.iter().flat_map(|d| &d.paragraphs).collect();
        assert_eq!(kept[0], &paragraphs[0]);
        assert!(kept.windows(2).all(|w| w[0] != w[1]));
    }

    #[test]
    fn paragraphs_are_the_visible_lines() {
        // Lines of the visible text: a raw newline inside an element also ends one (the
        // handbook's HTML keeps each paragraph on one line).
        let html = "<html><head><title>T</title></head><body><p>One  two three</p>\
                    <script>x</script><p>Four</p></body></html>";
        assert_eq!(paragraphs(html), ["T", "One two three", "Four"]);
    }

    #[test]
    fn a_missing_corpus_names_the_package() {
        let error = documents_in(Path::new("/nonexistent/handbook")).unwrap_err();
        assert!(error
            .to_string()
            .contains("apt-get install -y debian-handbook"));
    }

    #[test]
    fn duplicates_are_counted_once_per_document() {
        let doc = |name: &str, ps: &[&str]| Document {
            name: name.into(),
            paragraphs: ps.iter().map(|p| p.to_string()).collect(),
        };
        let docs = [
            doc("a", &["Next", "x", "Next"]),
            doc("b", &["Next", "y"]),
            doc("c", &["z"]),
        ];
        assert_eq!(duplicate_paragraphs(&docs), [("Next".to_string(), 2)]);
    }
}
