//! The core stays I/O-free: no source file of this crate names the file system, threads,
//! sockets, processes, the environment or the clock, and its dependencies are the ones that
//! build for `wasm32-unknown-unknown` (CI builds it there: `bash .ci/wasm-core`). A use of any
//! of them belongs in `phishbloom-blocklist`, above the core.

use std::path::Path;

/// Paths whose use means I/O, threads or the clock.
const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::thread",
    "std::net",
    "std::process",
    "std::env",
    "std::os::",
    "std::time",
    "SystemTime",
    "Instant::",
    "tempfile",
    "memmap2",
];

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_uses_io_threads_or_the_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 20, "found only {} source files", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests at the end of a file may use the host freely: stop at them.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            for word in FORBIDDEN {
                if line.contains(word) {
                    found.push(format!("{}:{}: {word}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "I/O in the core:\n{}", found.join("\n"));
}

#[test]
fn dependencies_are_the_wasm_ready_ones() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap();
    let names: Vec<&str> = dependencies
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .filter_map(|l| l.split('=').next())
        .map(str::trim)
        .collect();
    const ALLOWED: &[&str] = &[
        "phishbloom-filter",
        "phishbloom-url",
        "phishbloom-text",
        "xxhash-rust",
        "memchr",
        "serde",
        "serde_json",
        "thiserror",
        "bytemuck",
        "sha2",
        "ed25519-dalek",
        "icu_casemap",
        "smallvec",
    ];
    for name in &names {
        assert!(
            ALLOWED.contains(name),
            "{name} is not a known wasm-ready dependency of the core: build it with \
             `bash .ci/wasm-core` first, then add it here"
        );
    }
    assert!(names.len() >= 5, "{names:?}");
}
