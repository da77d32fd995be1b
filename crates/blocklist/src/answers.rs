//! One answer per scanned document, from a keyword list's [`Scanner`], a near-duplicate list,
//! or both: each document's answer line (TSV or JSON) and whether it matched. The documents
//! come from [`crate::documents`]; the lines are written by [`phishbloom_core::scan`].

use phishbloom_core::near::NearHasher;
use phishbloom_core::near::NearMatch;
use phishbloom_core::printer::Output;
use phishbloom_core::scan::{write_document, write_near_document, Scanner};
use phishbloom_core::Blocklist;
use phishbloom_text::mail::Document;

use crate::documents::TextStream;
use crate::Result;

/// Answers documents with the lists given, keeping the last answer's line.
pub struct DocumentAnswers<'a> {
    /// The keyword list's scanner, if one was given.
    scanner: Option<Scanner<'a>>,
    /// The near-duplicate list, if one was given.
    near: Option<&'a Blocklist>,
    /// The Hamming distance asked for (the list's own when `None`).
    max_distance: Option<u32>,
    output: Output,
    hasher: NearHasher,
    line: Vec<u8>,
    matched: u64,
}

impl<'a> DocumentAnswers<'a> {
    /// Answers with `scanner` and/or `near` (a near-duplicate list, asked within
    /// `max_distance`), in the form `output`.
    pub fn new(
        scanner: Option<Scanner<'a>>,
        near: Option<&'a Blocklist>,
        max_distance: Option<u32>,
        output: Output,
    ) -> Self {
        DocumentAnswers {
            scanner,
            near,
            max_distance,
            output,
            hasher: NearHasher::new(),
            line: Vec::new(),
            matched: 0,
        }
    }

    /// Whether a plain text can be streamed: with a keyword list only (a near-duplicate list
    /// needs the whole text, so with one every input is read whole).
    pub fn streams(&self) -> bool {
        self.near.is_none() && self.scanner.is_some()
    }

    /// How many documents matched (spam, or near a known one).
    pub fn matched(&self) -> u64 {
        self.matched
    }

    /// The answer line of a streamed text; `None` without a keyword list (a text is only
    /// streamed with one: [`DocumentAnswers::streams`]).
    pub fn answer_text(&mut self, text: TextStream) -> Option<Result<&[u8]>> {
        let name = text.name().to_string();
        let scanner = self.scanner.as_mut()?;
        Some(text.scan(scanner).map(|verdict| {
            self.matched += u64::from(verdict.spam);
            self.line.clear();
            write_document(&name, None, &verdict, None, self.output, &mut self.line);
            &self.line[..]
        }))
    }

    /// The answer line of `document`: near-duplicates first, then keywords.
    pub fn answer(&mut self, document: &Document) -> Result<&[u8]> {
        let near_matches: Option<Vec<NearMatch>> = match self.near {
            Some(list) => Some(list.near(&document.text, self.max_distance, &mut self.hasher)?),
            None => None,
        };
        let verdict = match self.scanner.as_mut() {
            Some(scanner) => Some(scanner.scan(&document.text)?),
            None => None,
        };
        let is_near = near_matches.as_ref().is_some_and(|m| !m.is_empty());
        let subject = document.subject.as_deref();
        self.line.clear();
        match &verdict {
            Some(verdict) => {
                self.matched += u64::from(verdict.spam || is_near);
                let near = near_matches.as_deref();
                write_document(
                    &document.name,
                    subject,
                    verdict,
                    near,
                    self.output,
                    &mut self.line,
                );
            }
            None => {
                self.matched += u64::from(is_near);
                let near = near_matches.as_deref().unwrap_or_default();
                write_near_document(&document.name, subject, near, self.output, &mut self.line);
            }
        }
        Ok(&self.line)
    }
}
