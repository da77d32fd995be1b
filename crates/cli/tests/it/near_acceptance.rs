//! Acceptance test of near-duplicate lists through the real executable: known documents of real prose
//! (The Debian Administrator's Handbook, Debian package `debian-handbook`, cut into ~3 KB
//! documents by `phishbloom_lab::corpus`) become a near-duplicate list with
//! `phishbloom build --near FILES… -o known.bloom`; copies with 2 % of their words edited and
//! unrelated documents are asked with `phishbloom scan known.bloom FILES… --json`.
//!
//! The corpus is required: CI installs it (`.ci/run`). Without it the test fails naming the
//! package, unless `PHISHBLOOM_SKIP_CORPUS=1` is set, which skips it with a message.
//!
//! The lab's measurement (docs/report/near.md, `cargo run --release -p phishbloom-lab-cli --
//! near`) chose the defaults: words (`w = 1`, tf) looked up within k = 3, confirmed by word
//! pairs (`w = 2`) within 8 bits. This test asserts the acceptance bounds below with them.
//!
//! Unrelated documents come from the other half of the English pages and from the German and
//! French translations. Some translated pages keep English passages, listings or command
//! output word for word: such a document is a copy of a known one, not unrelated. The test
//! decides that without SimHash: a query document sharing at least [`SHARED`] of its
//! [`SHINGLE`]-word shingles with one known document is a *shared-text* document and counts
//! neither as unrelated nor as a copy (their number is bounded, so this cannot hide a broken
//! list).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_lab::corpus::{self, Document};
use phishbloom_lab::measure::near::edits::Edit;
use phishbloom_lab::measure::near::{split_by_page, vocabulary};

/// The seed of the page split and of the edits.
const SEED: u64 = 22;

/// Other languages of the same package whose pages are unrelated documents too (the words of a
/// translation are not the English words; their code lines and commands are shared).
const OTHER_LANGUAGES: [&str; 2] = ["de-DE", "fr-FR"];

/// Words per shingle of the shared-text rule.
const SHINGLE: usize = 5;

/// The fraction of a query's shingles found in one known document from which on the query is
/// a copy of it (shared text), not an unrelated document: most of its text, word for word.
const SHARED: f64 = 0.8;

/// The distinct `SHINGLE`-word shingles of `text` (whitespace words, lowercased).
fn word_shingles(text: &str) -> HashSet<Vec<String>> {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    words.windows(SHINGLE).map(<[String]>::to_vec).collect()
}

/// The largest fraction of `text`'s shingles found in one known document (`index`: shingle →
/// known documents holding it).
fn shared_fraction(text: &str, index: &HashMap<Vec<String>, Vec<usize>>) -> f64 {
    let shingles = word_shingles(text);
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for s in &shingles {
        for &k in index.get(s).map_or(&[][..], Vec::as_slice) {
            *counts.entry(k).or_default() += 1;
        }
    }
    let most = counts.values().copied().max().unwrap_or(0);
    most as f64 / shingles.len().max(1) as f64
}

/// The corpus, or `None` when it is missing and the skip variable says to skip.
fn corpus_or_skip() -> Option<Vec<Document>> {
    match corpus::handbook() {
        Ok(docs) => Some(docs),
        Err(error) => {
            if std::env::var("PHISHBLOOM_SKIP_CORPUS").is_ok_and(|v| v == "1") {
                eprintln!("SKIPPED near_acceptance: {error} (PHISHBLOOM_SKIP_CORPUS=1)");
                None
            } else {
                panic!(
                    "{error}; set PHISHBLOOM_SKIP_CORPUS=1 to skip this test on a machine \
                     without the package"
                );
            }
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the temporary directory is writable");
    path
}

/// Counts of one run.
struct Counts {
    /// Copies found with the right match.
    found: u64,
    /// Copies asked.
    copies: u64,
    /// Unrelated documents matched.
    false_docs: u64,
    /// Unrelated documents asked.
    unrelated: u64,
    /// Shared-text documents (counted in neither).
    shared: u64,
}

/// Builds a list of the known documents with `flags`, scans copies and unrelated documents.
fn run(flags: &[&str]) -> Option<Counts> {
    let docs = corpus_or_skip()?;
    let vocabulary = vocabulary(&docs);
    let (known, english_unrelated, _) = split_by_page(docs, usize::MAX, SEED);
    let mut unrelated: Vec<Document> = english_unrelated;
    for language in OTHER_LANGUAGES {
        let dir = Path::new(corpus::HANDBOOK_DIR)
            .parent()
            .expect("the handbook directory has a parent")
            .join(language);
        unrelated.extend(corpus::documents_in(&dir).expect("the package installs every language"));
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let known_dir = dir.path().join("known");
    let query_dir = dir.path().join("queries");
    std::fs::create_dir_all(&known_dir).expect("mkdir");
    std::fs::create_dir_all(&query_dir).expect("mkdir");
    let mut index: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
    for (i, doc) in known.iter().enumerate() {
        for s in word_shingles(&doc.text()) {
            index.entry(s).or_default().push(i);
        }
    }
    let mut rng = SplitMix64::new(SEED);
    let mut known_files = Vec::new();
    let mut queries = Vec::new();
    // Expected answer per query file name: Some(known file name) for a copy, None unrelated;
    // shared-text documents are asked too but not counted.
    let mut expected: HashMap<String, Option<String>> = HashMap::new();
    let mut shared = HashSet::new();
    for (i, doc) in known.iter().enumerate() {
        let name = format!("known-{i:04}.txt");
        known_files.push(write(&known_dir, &name, &doc.text()));
        let copy = Edit::Words { percent: 2 }.apply(doc, &vocabulary, &mut rng);
        let copy_name = format!("copy-{i:04}.txt");
        queries.push(write(&query_dir, &copy_name, &copy));
        expected.insert(copy_name, Some(name));
    }
    for (i, doc) in unrelated.iter().enumerate() {
        let name = format!("unrelated-{i:04}.txt");
        let text = doc.text();
        if shared_fraction(&text, &index) >= SHARED {
            shared.insert(name.clone());
        }
        queries.push(write(&query_dir, &name, &text));
        expected.insert(name, None);
    }

    let exe = env!("CARGO_BIN_EXE_phishbloom");
    let list = dir.path().join("known.bloom");
    let built = Command::new(exe)
        .args(["build", "--near"])
        .args(flags)
        .args(&known_files)
        .arg("-o")
        .arg(&list)
        .output()
        .expect("phishbloom runs");
    assert!(
        built.status.success(),
        "build failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let scanned = Command::new(exe)
        .arg("scan")
        .arg(&list)
        .args(&queries)
        .arg("--json")
        .output()
        .expect("phishbloom runs");
    // Exit 0: at least one document is near a known one.
    assert_eq!(
        scanned.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&scanned.stderr)
    );

    let (mut copies, mut found, mut unrelated_docs, mut false_docs) = (0u64, 0u64, 0u64, 0u64);
    for line in String::from_utf8_lossy(&scanned.stdout).lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("one JSON object a line");
        let name = value["name"].as_str().expect("a name");
        let file = Path::new(name)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let near = value["verdict"] == "near";
        let matched: Vec<String> = value["matches"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["name"].as_str().or_else(|| m.as_str()))
                    .map(|n| {
                        Path::new(n)
                            .file_name()
                            .map(|f| f.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let best = value["match"].as_str().map(|n| {
            Path::new(n)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        match expected.get(&file) {
            Some(Some(original)) => {
                copies += 1;
                let right = best.as_ref() == Some(original) || matched.contains(original);
                found += u64::from(near && right);
            }
            Some(None) if shared.contains(&file) => {}
            Some(None) => {
                unrelated_docs += 1;
                false_docs += u64::from(near);
            }
            None => panic!("scan answered for a file it was not given: {name}"),
        }
    }
    assert_eq!(copies, known.len() as u64, "every copy is answered");
    assert_eq!(unrelated_docs + shared.len() as u64, unrelated.len() as u64);
    // Shared text is the exception: at most 3 % of the queries (this run: 18 of 986, 1.8 %).
    assert!(
        shared.len() as u64 * 100 <= 3 * unrelated.len() as u64,
        "{} shared-text documents of {}",
        shared.len(),
        unrelated.len()
    );

    assert!(copies >= 150, "too few known documents: {copies}");
    assert!(
        unrelated_docs >= 800,
        "too few unrelated documents: {unrelated_docs}"
    );
    eprintln!(
        "near acceptance {flags:?}: {found} of {copies} copies found; {false_docs} of \
         {unrelated_docs} unrelated matched; {} shared-text documents not counted",
        shared.len()
    );
    Some(Counts {
        found,
        copies,
        false_docs,
        unrelated: unrelated_docs,
        shared: shared.len() as u64,
    })
}

/// The acceptance bounds with the defaults (lookup w = 1 tf within k = 3, check w = 2
/// within 8): ≥ 90 % of the copies with 2 % of their words edited found with the right match,
/// ≤ 0.5 % of unrelated documents matched.
///
/// Sample sizes and tolerances, from the binomial. Copies: one per known document, n = 181
/// (asserted ≥ 150). The lab measured recall 0.957 for these edits (184 copies, its own seed);
/// with n = 181 the found count has sd √(n r (1 − r)) ≈ 2.7 copies (1.5 %), so the bound 0.90
/// is ≈ 3.8 sd below the measured recall (a true 0.957 fails it with probability ≈ 10⁻⁴ under
/// another seed); this run finds 168 (0.928, 1.9 sd below the lab's figure, 1.9 sd above the
/// bound). Unrelated: ≈ 180 English + ≈ 800 German and French documents (n ≈ 980, asserted
/// ≥ 800); 0.5 % allows 4 matches. The lab expects ~10⁻³ chance matches per unrelated document
/// against 10⁷ known ones, so ~10⁻⁸ against these 181: a match here is not chance but shared
/// text. Translated pages that kept English passages are set apart by the shared-text rule of
/// the module docs: 18 documents with this seed share ≥ 80 % of their 5-word shingles with one
/// known document; the list matches 6 of them (84–100 % shared: an English box, a file
/// listing, command output, English bodies under French headings) and no other query. Without
/// the rule those 6 would count as false matches, 6 of 986 (0.61 %), above the bound. The seeds are fixed and
/// the run deterministic: the derivation says the bounds are meaningful, not that the test is
/// flaky.
#[test]
fn defaults_meet_the_issue_bounds_on_copies_with_2_percent_edited() {
    let Some(c) = run(&[]) else {
        return;
    };
    let recall = c.found as f64 / c.copies as f64;
    let false_rate = c.false_docs as f64 / c.unrelated as f64;
    assert!(
        recall >= 0.90,
        "recall {recall:.3} < 0.90 ({} of {})",
        c.found,
        c.copies
    );
    assert!(
        false_rate <= 0.005,
        "false matches {false_rate:.4} > 0.005 ({} of {}; {} shared-text documents apart)",
        c.false_docs,
        c.unrelated,
        c.shared
    );
}
