//! Manual pages as a corpus: the Linux man-pages project's sections 2–5 and 7 (Debian packages
//! `manpages` and `manpages-dev`: system calls, library functions, devices, file formats,
//! overviews), each page's roff source read from its `.gz` and reduced to the paragraphs a
//! reader sees. Terse technical reference prose, with the same headings in every page (NAME,
//! SYNOPSIS, RETURN VALUE, ERRORS, SEE ALSO) and recurring stock sentences.

use std::io::Read;
use std::path::PathBuf;

use super::{split_page, Document};
use crate::error::{Error, Result};

/// The Debian packages that install the pages.
pub const PACKAGES: &str = "manpages manpages-dev";

/// Where the pages are, unless `PHISHBLOOM_MAN_DIR` names another directory (`.ci/run` unpacks
/// the packages there when dpkg is kept from writing manual pages).
pub const MAN_DIR: &str = "/usr/share/man";

/// The directory the pages are read from.
fn man_dir() -> PathBuf {
    std::env::var_os("PHISHBLOOM_MAN_DIR").map_or_else(|| PathBuf::from(MAN_DIR), PathBuf::from)
}

/// The sections read.
pub const SECTIONS: [&str; 5] = ["2", "3", "4", "5", "7"];

/// The documents of every page of [`SECTIONS`] under [`MAN_DIR`], pages in name order; a page
/// that only includes another (`.so`) or links to one is skipped.
pub fn man_pages() -> Result<Vec<Document>> {
    let mut pages: Vec<PathBuf> = Vec::new();
    for section in SECTIONS {
        let dir = man_dir().join(format!("man{section}"));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let suffix = format!(".{section}.gz");
        // A link is another name of a page already read: reading it again would plant exact
        // duplicates among documents meant to be unrelated.
        pages.extend(
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(&suffix)),
        );
    }
    if pages.len() < 100 {
        return Err(Error::MissingCorpus {
            path: man_dir(),
            package: PACKAGES,
        });
    }
    pages.sort();
    let mut out = Vec::new();
    for page in pages {
        let mut source = String::new();
        let file = std::fs::File::open(&page).map_err(Error::io(&page, "open"))?;
        if flate2::read::GzDecoder::new(file)
            .read_to_string(&mut source)
            .is_err()
        {
            // Not UTF-8 or not gzip: a page in another encoding; the corpus does without it.
            continue;
        }
        let name = page
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(split_page(&name, &roff_paragraphs(&source)));
    }
    Ok(out)
}

/// Macros whose arguments are text a reader sees (headings, fonts, a tagged paragraph's tag).
const TEXT_MACROS: [&str; 11] = [
    "SH", "SS", "B", "I", "BR", "BI", "IB", "IR", "RB", "RI", "IP",
];

/// Macros that end a paragraph.
const BREAK_MACROS: [&str; 9] = ["SH", "SS", "PP", "P", "LP", "IP", "TP", "sp", "TH"];

/// The paragraphs of a roff page as a reader sees them: comments and layout requests dropped,
/// font and character escapes removed, the text arguments of [`TEXT_MACROS`] kept, lines
/// joined into paragraphs at [`BREAK_MACROS`] and blank lines. Empty for an include (`.so`).
pub fn roff_paragraphs(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        let words: Vec<&str> = current.split_whitespace().collect();
        if !words.is_empty() {
            out.push(words.join(" "));
        }
        current.clear();
    };
    for line in source.lines() {
        if line.starts_with(".\\\"") || line.starts_with("'\\\"") || line.starts_with("\\\"") {
            continue;
        }
        if let Some(request) = line.strip_prefix('.').or_else(|| line.strip_prefix('\'')) {
            let request = request.trim_start();
            let (name, args) = request.split_once(' ').unwrap_or((request, ""));
            if name == "so" {
                return Vec::new();
            }
            if BREAK_MACROS.contains(&name) {
                flush(&mut current, &mut out);
            }
            if TEXT_MACROS.contains(&name) {
                current.push(' ');
                current.push_str(&unescape(&args.replace('"', "")));
                if matches!(name, "SH" | "SS") {
                    flush(&mut current, &mut out);
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut current, &mut out);
            continue;
        }
        current.push(' ');
        current.push_str(&unescape(line));
    }
    flush(&mut current, &mut out);
    out
}

/// Text without roff escapes: fonts (`\fB`, `\f(CW`, `\f[I]`), sizes (`\s-1`), named
/// characters (`\(em`, `\[rq]`, `\*(lq`) become a space, `\-` a hyphen, `\e` a backslash,
/// and the zero-width ones (`\&`, `\c`, `\|`, `\^`, `\%`) nothing.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('f') => skip_name(&mut chars),
            Some('s') => {
                if matches!(chars.peek(), Some('+' | '-')) {
                    chars.next();
                }
                chars.next();
            }
            Some('(') => {
                chars.next();
                chars.next();
                out.push(' ');
            }
            Some('[') => {
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                }
                out.push(' ');
            }
            Some('*') => {
                skip_name(&mut chars);
                out.push(' ');
            }
            Some('-') => out.push('-'),
            Some('e') | Some('\\') => out.push('\\'),
            Some(' ') | Some('~') => out.push(' '),
            _ => {}
        }
    }
    out
}

/// Skips an escape's name: one character, `(xx`, or `[name]`.
fn skip_name(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('(') => {
            chars.next();
            chars.next();
        }
        Some('[') => {
            for c in chars.by_ref() {
                if c == ']' {
                    break;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_becomes_the_paragraphs_a_reader_sees() {
        let page = ".\\\" a comment\n.TH OPEN 2 2024\n.SH NAME\nopen, creat \\- open a file\n\
                    .SH DESCRIPTION\nThe\n.BR open ()\nsystem call opens the file\nspecified by\n\
                    .IR pathname .\n.PP\nIf \\fBO_CREAT\\fP is given \\(em it is created.\n";
        assert_eq!(
            roff_paragraphs(page),
            [
                "NAME",
                "open, creat - open a file",
                "DESCRIPTION",
                "The open () system call opens the file specified by pathname .",
                "If O_CREAT is given it is created.",
            ]
        );
    }

    #[test]
    fn an_include_is_no_page() {
        assert!(roff_paragraphs(".so man2/open.2\n").is_empty());
    }
}
