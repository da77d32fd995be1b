//! Acceptance test of near-duplicate lists through the real executable, on three kinds of real
//! text read from Debian packages (`phishbloom_lab::corpus`, each cut into ~3 KB documents):
//! prose (The Debian Administrator's Handbook, `debian-handbook`), manual pages (`manpages`,
//! `manpages-dev`) and technical documentation (the Rust standard library's doc comments,
//! `rust-web-src`). For each, known documents become a list with
//! `phishbloom build --near FILES… -o known.bloom` (the defaults: MinHash sketches), and copies
//! with 2, 5 and 10 % of their words edited, and unrelated documents, are asked with
//! `phishbloom scan known.bloom FILES… --json`.
//!
//! The corpora are required: CI installs them (`.ci/run`). Without one the test fails naming
//! its package, unless `PHISHBLOOM_SKIP_CORPUS=1` is set, which skips it with a message.
//!
//! What counts as unrelated is decided without sketches, by the true resemblance of 5-word
//! shingle sets ([`ShingleIndex`]): a query whose resemblance with some known document is at
//! least [`NEAR_COPY`] is a near copy the corpus holds of its own (the same paragraphs on two
//! pages, a translation that kept the English text, the doc comment of `f32::ln` and of
//! `f64::ln`), and a match is right; one below [`UNRELATED_RESEMBLANCE`] is unrelated, and a
//! match is false; the ones between (sharing a paragraph or two) count as neither, and their
//! number is reported.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_lab::corpus::Document;
use phishbloom_lab::measure::near::corpora::{ShingleIndex, CORPORA, NEAR_COPY};
use phishbloom_lab::measure::near::edits::Edit;
use phishbloom_lab::measure::near::{split_by_page, vocabulary};
use phishbloom_text::minhash::{binomial_upper_tail, UNRELATED_RESEMBLANCE};

/// The seed of the page split and of the edits.
const SEED: u64 = 22;

/// Most known documents per corpus (the rest of its pages, and the other corpora, are
/// unrelated queries).
const MAX_KNOWN: usize = 400;

/// Words per shingle of the ground truth (the list's own shingle width).
const SHINGLE: u32 = 5;

/// The recall goals: (percent of words edited, least share of copies found).
const GOALS: [(u32, f64); 3] = [(2, 0.98), (5, 0.95), (10, 0.85)];

/// The false-match goal per unrelated document.
const FALSE_RATE: f64 = 1e-4;

/// The significance of the false-match test: it fails when the count seen would come from a
/// true rate of [`FALSE_RATE`] with probability below this.
const SIGNIFICANCE: f64 = 1e-3;

/// The most false matches among `n` unrelated documents that a true rate of [`FALSE_RATE`]
/// explains: the largest k with P[Binomial(n, FALSE_RATE) ≥ k] ≥ [`SIGNIFICANCE`].
fn allowed_false(n: u64) -> u64 {
    (0..=n)
        .take_while(|&k| binomial_upper_tail(n as u32, FALSE_RATE, k as u32) >= SIGNIFICANCE)
        .last()
        .unwrap_or(0)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the temporary directory is writable");
    path
}

/// `phishbloom build --near FLAGS FILES -o LIST`, which must succeed.
fn build_near(list: &Path, flags: &[&str], files: &[PathBuf]) {
    let built = Command::new(env!("CARGO_BIN_EXE_phishbloom"))
        .args(["build", "--near"])
        .args(flags)
        .args(files)
        .arg("-o")
        .arg(list)
        .output()
        .expect("phishbloom runs");
    assert!(
        built.status.success(),
        "{}: build failed: {}",
        list.display(),
        String::from_utf8_lossy(&built.stderr)
    );
}

/// Every corpus's documents, or `None` when one is missing and the skip variable says so.
fn corpora_or_skip() -> Option<Vec<(&'static str, Vec<Document>)>> {
    let mut out = Vec::new();
    for (name, read) in CORPORA {
        match read() {
            Ok(docs) => out.push((name, docs)),
            Err(error) => {
                if std::env::var("PHISHBLOOM_SKIP_CORPUS").is_ok_and(|v| v == "1") {
                    eprintln!("SKIPPED near_acceptance: {error} (PHISHBLOOM_SKIP_CORPUS=1)");
                    return None;
                }
                panic!(
                    "{error}; set PHISHBLOOM_SKIP_CORPUS=1 to skip this test on a machine \
                     without the package"
                );
            }
        }
    }
    Some(out)
}

/// What one corpus's run saw.
#[derive(Debug, Default)]
struct Counts {
    /// Per goal: (copies, found with the right match).
    copies: Vec<(u64, u64)>,
    /// Unrelated documents asked, and matched.
    unrelated: u64,
    false_matches: u64,
    /// Queries the corpus holds near copies of (matched, of them).
    near_copies: u64,
    near_copies_matched: u64,
    /// Queries sharing some text (between the two resemblances): asked, matched.
    partial: u64,
    partial_matched: u64,
}

/// The file name of a path given in an answer.
fn file_name(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Builds a list of `known`, scans its edited copies and `strangers`, counts.
fn run(corpus: &str, known: &[Document], strangers: &[String], vocabulary: &[String]) -> Counts {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (known_dir, query_dir) = (dir.path().join("known"), dir.path().join("queries"));
    std::fs::create_dir_all(&known_dir).expect("mkdir");
    std::fs::create_dir_all(&query_dir).expect("mkdir");
    let mut rng = SplitMix64::new(SEED);
    let mut known_files = Vec::new();
    let mut queries = Vec::new();
    // Per query file: the goal it belongs to and its original, or None for a stranger.
    let mut expected: HashMap<String, Option<(usize, String)>> = HashMap::new();
    for (i, doc) in known.iter().enumerate() {
        let name = format!("known-{i:04}.txt");
        known_files.push(write(&known_dir, &name, &doc.text()));
        for (g, &(percent, _)) in GOALS.iter().enumerate() {
            let copy = Edit::Words { percent }.apply(doc, vocabulary, &mut rng);
            let copy_name = format!("copy{percent}-{i:04}.txt");
            queries.push(write(&query_dir, &copy_name, &copy));
            expected.insert(copy_name, Some((g, name.clone())));
        }
    }
    let truth = ShingleIndex::new(
        known
            .iter()
            .map(|d| d.text())
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
        SHINGLE,
    );
    let mut resemblance: HashMap<String, f64> = HashMap::new();
    for (i, text) in strangers.iter().enumerate() {
        let name = format!("stranger-{i:05}.txt");
        resemblance.insert(name.clone(), truth.most_resembled(text).1);
        queries.push(write(&query_dir, &name, text));
        expected.insert(name, None);
    }

    let exe = env!("CARGO_BIN_EXE_phishbloom");
    let list = dir.path().join("known.bloom");
    build_near(&list, &[], &known_files);
    let mut counts = Counts {
        copies: vec![(0, 0); GOALS.len()],
        ..Counts::default()
    };
    // Scanned in batches: a command line holds a few thousand paths at most.
    for batch in queries.chunks(2_000) {
        let scanned = Command::new(exe)
            .arg("scan")
            .arg(&list)
            .args(batch)
            .arg("--json")
            .output()
            .expect("phishbloom runs");
        assert!(
            matches!(scanned.status.code(), Some(0 | 1)),
            "{corpus}: {}",
            String::from_utf8_lossy(&scanned.stderr)
        );
        for line in String::from_utf8_lossy(&scanned.stdout).lines() {
            let value: serde_json::Value =
                serde_json::from_str(line).expect("one JSON object a line");
            tally(&value, &expected, &resemblance, &mut counts);
        }
    }
    let asked: u64 = counts.copies.iter().map(|c| c.0).sum();
    assert_eq!(
        asked,
        (known.len() * GOALS.len()) as u64,
        "{corpus}: every copy is answered"
    );
    counts
}

/// Counts one answer of `scan --json`.
fn tally(
    value: &serde_json::Value,
    expected: &HashMap<String, Option<(usize, String)>>,
    resemblance: &HashMap<String, f64>,
    counts: &mut Counts,
) {
    let file = file_name(value["name"].as_str().expect("a name"));
    let near = value["verdict"] == "near";
    match expected.get(&file) {
        Some(Some((goal, original))) => {
            // The match names the copied document, or lists it among the near ones (a known
            // document the corpus holds twice may come first).
            let best = value["match"].as_str().map(file_name);
            let listed = value["matches"].as_array().is_some_and(|m| {
                m.iter()
                    .any(|m| m["name"].as_str().map(file_name).as_ref() == Some(original))
            });
            counts.copies[*goal].0 += 1;
            counts.copies[*goal].1 +=
                u64::from(near && (best.as_ref() == Some(original) || listed));
            if near {
                let r = value["resemblance"]
                    .as_f64()
                    .expect("a sketch's match has a resemblance");
                assert!((0.0..=1.0).contains(&r), "{value}");
            }
        }
        Some(None) => {
            let r = resemblance[&file];
            if r >= NEAR_COPY {
                counts.near_copies += 1;
                counts.near_copies_matched += u64::from(near);
            } else if r >= UNRELATED_RESEMBLANCE {
                counts.partial += 1;
                counts.partial_matched += u64::from(near);
            } else {
                counts.unrelated += 1;
                counts.false_matches += u64::from(near);
            }
        }
        None => panic!("scan answered for a file it was not given: {file}"),
    }
}

/// The goals on every corpus: copies with 2, 5 and 10 % of their words edited found with the
/// right match at ≥ 0.98, 0.95 and 0.85; unrelated documents matched at a rate the binomial
/// allows for ≤ 10⁻⁴ (at 10⁻³ significance).
///
/// Sample sizes and margins. Copies: up to 400 per goal and corpus (at least 150 asserted).
/// The lab (`cargo run --release -p phishbloom-lab-cli -- near`, docs/report/near.md) finds
/// 1.000, 1.000 and 0.973–0.975 on these corpora with its own seed; at 10 %, with n = 181
/// (the handbook's known half) the found share has sd √(0.97·0.03/181) = 0.013, so the goal
/// 0.85 is 9 sd below: the seeds are fixed and the run deterministic, and the margin says the
/// bound is meaningful rather than lucky. Unrelated: about 4,000 per corpus (its own unrelated pages
/// and the other two corpora); at a true 10⁻⁴ the expected count is 0.4 and 3 or more is
/// below 10⁻³, so the test allows [`allowed_false`] of them. The lab's design bound
/// ([`phishbloom_text::minhash::match_threshold`]) is 0.01 expected false matches per query
/// at any list size for documents below [`UNRELATED_RESEMBLANCE`].
#[test]
fn sketches_find_edited_copies_and_no_unrelated_document_on_three_corpora() {
    let Some(corpora) = corpora_or_skip() else {
        return;
    };
    let mut failures = Vec::new();
    for (c, (name, docs)) in corpora.iter().enumerate() {
        let vocabulary = vocabulary(docs);
        let (mut known, own_unrelated, _) = split_by_page(docs.clone(), usize::MAX, SEED);
        let mut seen = std::collections::HashSet::new();
        known.retain(|d| seen.insert(d.text()));
        known.truncate(MAX_KNOWN);
        let mut strangers: Vec<String> = own_unrelated.iter().map(Document::text).collect();
        for (other, (_, docs)) in corpora.iter().enumerate() {
            if other != c {
                strangers.extend(docs.iter().map(Document::text));
            }
        }
        let counts = run(name, &known, &strangers, &vocabulary);
        let allowed = allowed_false(counts.unrelated);
        eprintln!(
            "near acceptance, {name}: copies found {}; {} of {} unrelated matched (allowed \
             {allowed}); near copies in the corpus matched {} of {}; partly shared text \
             matched {} of {}",
            GOALS
                .iter()
                .zip(&counts.copies)
                .map(|((p, _), (n, f))| format!("{p} %: {f} of {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            counts.false_matches,
            counts.unrelated,
            counts.near_copies_matched,
            counts.near_copies,
            counts.partial_matched,
            counts.partial,
        );
        assert!(known.len() >= 150, "{name}: too few known documents");
        assert!(
            counts.unrelated >= 2_000,
            "{name}: too few unrelated documents"
        );
        for ((percent, goal), (n, found)) in GOALS.iter().zip(&counts.copies) {
            let recall = *found as f64 / *n as f64;
            if recall < *goal {
                failures.push(format!(
                    "{name}: {percent} % edited: recall {recall:.3} < {goal}"
                ));
            }
        }
        if counts.false_matches > allowed {
            failures.push(format!(
                "{name}: {} of {} unrelated documents matched (at most {allowed} for a rate of \
                 {FALSE_RATE})",
                counts.false_matches, counts.unrelated
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The SimHash method keeps answering as it did: copies with 2 % of their words edited of the
/// handbook found at ≥ 0.90 (it measured 0.957), unrelated ones matched at ≤ 0.5 %.
#[test]
fn the_simhash_method_still_finds_copies_with_2_percent_edited() {
    let Some(corpora) = corpora_or_skip() else {
        return;
    };
    let (_, docs) = &corpora[0];
    let vocabulary = vocabulary(docs);
    let (known, own_unrelated, _) = split_by_page(docs.clone(), usize::MAX, SEED);
    let strangers: Vec<String> = own_unrelated.iter().map(Document::text).collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = SplitMix64::new(SEED);
    let mut files = Vec::new();
    let mut queries = Vec::new();
    for (i, doc) in known.iter().enumerate() {
        files.push(write(dir.path(), &format!("known-{i:04}.txt"), &doc.text()));
        let copy = Edit::Words { percent: 2 }.apply(doc, &vocabulary, &mut rng);
        queries.push(write(dir.path(), &format!("copy-{i:04}.txt"), &copy));
    }
    for (i, text) in strangers.iter().enumerate() {
        queries.push(write(dir.path(), &format!("stranger-{i:04}.txt"), text));
    }
    let exe = env!("CARGO_BIN_EXE_phishbloom");
    let list = dir.path().join("sim.bloom");
    build_near(&list, &["--near-method", "simhash"], &files);
    let scanned = Command::new(exe)
        .arg("scan")
        .arg(&list)
        .args(&queries)
        .arg("--json")
        .output()
        .expect("phishbloom runs");
    let (mut found, mut false_matches) = (0usize, 0usize);
    for line in String::from_utf8_lossy(&scanned.stdout).lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let file = file_name(value["name"].as_str().expect("a name"));
        let near = value["verdict"] == "near";
        if let Some(i) = file.strip_prefix("copy-") {
            let original = format!("known-{i}");
            found += usize::from(near && value["match"].as_str().map(file_name) == Some(original));
        } else {
            false_matches += usize::from(near);
        }
    }
    assert!(
        found as f64 >= 0.90 * known.len() as f64,
        "{found} of {}",
        known.len()
    );
    assert!(
        false_matches as f64 <= 0.005 * strangers.len() as f64,
        "{false_matches}"
    );
}
