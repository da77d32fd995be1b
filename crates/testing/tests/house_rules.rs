//! The house rules, checked on the tree itself so that CI fails when one is broken:
//! - no function in a product crate passes [`MAX_FUNCTION_LINES`] lines (its signature to its
//!   closing brace, as a reader meets it: comments and blank lines count);
//! - no source file passes [`MAX_FILE_LINES`] lines, tests included;
//! - no history in the tree: no issue numbers, rounds, sessions or list items in code, tests or
//!   documents (git log keeps history; a page says what is true now);
//! - every dependency a crate declares is used by it.
//!
//! Functions are found by parsing each file (`syn`, with line numbers), not by pattern.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest a function of a product crate may be, in lines.
const MAX_FUNCTION_LINES: usize = 120;

/// The longest a source file may be, in lines.
const MAX_FILE_LINES: usize = 1000;

/// The crates that ship in the product (`phishbloom` and the browser extension); the lab, the
/// report and the test helpers are held to the file limit only.
const PRODUCT_CRATES: &[&str] = &[
    "blocklist",
    "cli",
    "core",
    "filter",
    "redis",
    "server",
    "sync",
    "text",
    "url",
    "wasm",
];

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` (recursively) whose name ends in one of `endings`, skipping build
/// output and installed packages.
fn files(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | "dist" | ".git") {
                    stack.push(path);
                }
            } else if endings.iter().any(|ending| name.ends_with(ending)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `path` relative to the workspace root, for messages.
fn shown(path: &Path) -> String {
    let root = root().canonicalize().unwrap_or_else(|_| root());
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// The functions of a parsed file, each with the lines of its `fn` keyword and its closing
/// brace: free functions, methods and trait methods with a body, in inline modules too.
fn functions(items: &[syn::Item], out: &mut Vec<(String, usize, usize)>) {
    fn push(out: &mut Vec<(String, usize, usize)>, sig: &syn::Signature, body: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = body.brace_token.span.close().end().line;
        out.push((sig.ident.to_string(), first, last));
    }
    for item in items {
        match item {
            syn::Item::Fn(f) => push(out, &f.sig, &f.block),
            syn::Item::Impl(block) => {
                for item in &block.items {
                    if let syn::ImplItem::Fn(f) = item {
                        push(out, &f.sig, &f.block);
                    }
                }
            }
            syn::Item::Trait(block) => {
                for item in &block.items {
                    if let syn::TraitItem::Fn(syn::TraitItemFn {
                        sig,
                        default: Some(body),
                        ..
                    }) = item
                    {
                        push(out, sig, body);
                    }
                }
            }
            syn::Item::Mod(module) => {
                if let Some((_, items)) = &module.content {
                    functions(items, out);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn product_functions_are_at_most_120_lines() {
    let mut long = Vec::new();
    let mut counted = 0;
    for krate in PRODUCT_CRATES {
        for path in files(&root().join("crates").join(krate).join("src"), &[".rs"]) {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: cannot parse: {e}", shown(&path)));
            let mut found = Vec::new();
            functions(&file.items, &mut found);
            counted += found.len();
            for (name, first, last) in found {
                let lines = last - first + 1;
                if lines > MAX_FUNCTION_LINES {
                    long.push(format!("{}:{first} {name}: {lines} lines", shown(&path)));
                }
            }
        }
    }
    // The product has well over a thousand functions: far fewer means the walk went wrong.
    assert!(
        counted > 1000,
        "only {counted} functions found: is the walk broken?"
    );
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines; split them by step:\n{}",
        long.join("\n")
    );
}

#[test]
fn source_files_are_at_most_1000_lines() {
    let root = root();
    let mut long = Vec::new();
    let mut counted = 0;
    for dir in ["crates", "clients", "fuzz"] {
        for path in files(&root.join(dir), &[".rs", ".mjs", ".js"]) {
            counted += 1;
            let lines = std::fs::read_to_string(&path)
                .expect("read a source file")
                .lines()
                .count();
            if lines > MAX_FILE_LINES {
                long.push(format!("{}: {lines} lines", shown(&path)));
            }
        }
    }
    assert!(
        counted > 100,
        "only {counted} source files found: is the walk broken?"
    );
    assert!(
        long.is_empty(),
        "source files over {MAX_FILE_LINES} lines; split them by job:\n{}",
        long.join("\n")
    );
}

/// Phrases that tell history wherever they stand. Written with an escaped space or quote, so
/// that this file holds none of them and is checked like every other.
const HISTORY_PHRASES: &[&str] = &[
    "issue\x27s",
    "round\x20one",
    "round\x20two",
    "round\x20three",
    "session\x20before",
    "session\x20of the",
    "before this\x20session",
    "the last\x20session",
    "earlier\x20sessions",
];

/// Whether `line` tells history: a tracker's issue by number, a numbered round, a session
/// before this one, or a test named after an item of a list.
fn tells_history(line: &str) -> bool {
    let lower = line.to_lowercase();
    let numbered = |word: &str| {
        lower.match_indices(word).any(|(at, _)| {
            let after = &lower[at + word.len()..];
            after.starts_with(|c: char| c.is_ascii_digit())
                || (after.starts_with(' ') && after[1..].starts_with(|c: char| c.is_ascii_digit()))
        })
    };
    numbered("issue")
        || numbered("fn\x20item_")
        || HISTORY_PHRASES.iter().any(|phrase| lower.contains(phrase))
}

#[test]
fn no_history_in_the_tree() {
    let root = root();
    let mut found = Vec::new();
    let mut paths = vec![root.join("README.md"), root.join("Cargo.toml")];
    for dir in ["crates", "docs", "clients", ".ci", "fuzz"] {
        paths.extend(files(
            &root.join(dir),
            &[
                ".rs", ".md", ".mjs", ".js", ".sh", ".py", ".toml", ".json", ".html", "",
            ],
        ));
    }
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not text (an image)
        };
        for (number, line) in text.lines().enumerate() {
            if tells_history(line) {
                found.push(format!("{}:{}: {}", shown(&path), number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "history in the tree (git log keeps it; say what is true now, and why):\n{}",
        found.join("\n")
    );
}

#[test]
fn history_is_recognized_and_other_uses_are_not() {
    assert!(tells_history("// Issue\x2023: the URL line path"));
    assert!(tells_history("the issue\x27s target"));
    assert!(tells_history("Round\x20two: instruction counts"));
    assert!(tells_history("figures from the session\x20before"));
    assert!(tells_history("fn item_\x315_push_keeps_adds() {"));
    assert!(!tells_history(
        "a RESP connection's session keeps its protocol version"
    ));
    assert!(!tells_history("the browser's session storage"));
    assert!(!tells_history("issues a warning when the list is old"));
}

/// The dependencies a manifest declares (in `[dependencies]`, `[dev-dependencies]` and
/// `[build-dependencies]`), as the names code refers to them by.
fn declared(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = matches!(
                line,
                "[dependencies]" | "[dev-dependencies]" | "[build-dependencies]"
            );
            continue;
        }
        if !in_dependencies || line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            names.insert(name.trim().replace('-', "_"));
        }
    }
    names
}

/// Dependencies that are used without being named in code, by crate folder: why each is there.
const USED_UNNAMED: &[(&str, &str, &str)] = &[
    (
        "redis",
        "rustls",
        "redis-rs's rustls has no crypto provider of its own: this picks ring",
    ),
    (
        "testing",
        "proc_macro2",
        "line numbers of parsed functions (span-locations) for the house rules",
    ),
];

#[test]
fn every_declared_dependency_is_used() {
    let root = root();
    let mut unused = Vec::new();
    for manifest in files(&root.join("crates"), &["Cargo.toml"]) {
        let dir = manifest
            .parent()
            .expect("a manifest is in its crate's folder");
        let text = std::fs::read_to_string(&manifest).expect("read a manifest");
        let code: String = files(dir, &[".rs"])
            .iter()
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .collect();
        let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned());
        for name in declared(&text) {
            if USED_UNNAMED
                .iter()
                .any(|(krate, unnamed, _)| Some(*krate) == folder.as_deref() && *unnamed == name)
            {
                continue;
            }
            let named = [
                format!("{name}::"),
                format!("use {name}"),
                format!("{name}!"),
            ]
            .iter()
            .any(|form| code.contains(form.as_str()));
            if !named {
                unused.push(format!("{}: {name}", shown(&manifest)));
            }
        }
    }
    assert!(
        unused.is_empty(),
        "dependencies declared but never used; remove them:\n{}",
        unused.join("\n")
    );
}
