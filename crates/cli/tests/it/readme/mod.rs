//! The documentation's console examples, executed: every ```` ```console ```` block of
//! `README.md` and of each `docs/guide/*.md` page is parsed, each `$ COMMAND` runs with
//! `sh -c` against the real `phishbloom` binary, and what it prints (standard output and
//! standard error, interleaved as they were written) must match the lines the page shows under
//! it, so a renamed flag, a changed column or a stale number fails.
//!
//! # How a page is read ([`markdown`], [`matcher`])
//!
//! - A block's lines starting with `$ ` are commands; a command line ending in `\` continues
//!   on the next line; every other line is expected output of the command above it.
//! - In a command, text after two or more spaces and `# ` (outside quotes) is a comment for
//!   the reader (`… > gone.txt   # sites taken down`) and is not run.
//! - Expected output may use two wildcards, and only for values that differ from run to run
//!   (clock times, durations, random keys, ports), or to elide lines the example is not about:
//!   a line that is `...` alone (white space aside) stands for any number of lines (none
//!   included), and `[..]` inside a line for any text within that line. Everything else is
//!   compared exactly; only white space at the end of a line and blank lines at the end of the
//!   output are ignored.
//! - A command that exits with a status above 1 fails unless the page shows an error for it.
//! - Every block runs: an HTML comment `<!-- readme-test: skip (REASON) -->` on the line before
//!   a block marks it skipped, and the test then fails naming it. A command whose output cannot
//!   be shown belongs in a `sh` block instead.
//!
//! # Where it runs ([`section`], [`fixtures`], [`servers`])
//!
//! Each `## ` section of each page runs in a fresh temporary directory `T/work` (its blocks in
//! page order, sharing files within the section; `### ` subsections belong to their section),
//! with `T/shared` a symbolic link to the real `../shared` beside the clone, so
//! `../shared/data/...` resolves as the pages write it. The input files the pages use without
//! creating them ([`fixtures`]) are written first. `SOURCE_DATE_EPOCH` pins the time
//! `build` writes into a list, so checksums, ETags and dates are the same on every run and are
//! compared exactly. Servers the pages talk to run on free loopback ports: the pages' addresses
//! are replaced by the real ones in commands, and the real ones by the pages' in output.
//! Sections run two at a time; a failure names the page, the section, the line and the command.
//!
//! Without `../shared/data` the test fails, unless `PHISHBLOOM_README_WITHOUT_DATA=1` says to
//! skip it (loudly).

mod fixtures;
mod markdown;
mod matcher;
mod section;
mod servers;

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use markdown::{parse_blocks, Block};
use section::run_section;

/// The environment variable that lets the test pass without `../shared/data`.
const WITHOUT_DATA: &str = "PHISHBLOOM_README_WITHOUT_DATA";

/// The folder of guide pages, from the repository root.
const GUIDES: &str = "docs/guide";

/// Fewer guide pages than this means the folder was moved or emptied, not that there is less
/// to run.
const MIN_GUIDES: usize = 5;

/// Fewer commands than this in all the pages means the parser has stopped reading them.
const MIN_STEPS: usize = 80;

/// How many sections run at once.
const WORKERS: usize = 2;

/// The pages whose console blocks run: README.md, then the guides in name order, each as its
/// path from the repository root and its text.
fn pages(root: &Path) -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(root.join(GUIDES))
        .unwrap_or_else(|e| panic!("read {GUIDES}/: {e}"))
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("{GUIDES}/{name}"))
        .collect();
    names.sort();
    assert!(
        names.len() >= MIN_GUIDES,
        "{GUIDES}/ holds {} pages, fewer than {MIN_GUIDES}: is the runner still reading the guides?",
        names.len()
    );
    std::iter::once("README.md".to_string())
        .chain(names)
        .map(|page| {
            let text = std::fs::read_to_string(root.join(&page))
                .unwrap_or_else(|e| panic!("read {page}: {e}"));
            (page, text)
        })
        .collect()
}

/// The blocks of one page grouped by `## ` section, in page order.
fn sections(blocks: &[Block]) -> Vec<Vec<&Block>> {
    let mut sections: Vec<Vec<&Block>> = Vec::new();
    for block in blocks {
        match sections.last_mut() {
            Some(last) if last[0].section_number == block.section_number => last.push(block),
            _ => sections.push(vec![block]),
        }
    }
    sections
}

/// Whether the examples' data and tools are here; `false` (after saying so) when the data is
/// missing and [`WITHOUT_DATA`] allows skipping.
fn data_and_tools_present(shared: &Path) -> bool {
    if !shared.join("data/dataset.csv").is_file() || !shared.join("data/ut1").is_dir() {
        let message = format!(
            "the documentation's examples read {}/data (dataset.csv and ut1/), which is \
             missing; put the data beside the clone, or set {WITHOUT_DATA}=1 to skip this test",
            shared.display()
        );
        if std::env::var_os(WITHOUT_DATA).is_some_and(|v| v == "1") {
            eprintln!("\n=== SKIPPED the documentation's examples: {message} ===\n");
            return false;
        }
        panic!("{message}");
    }
    for tool in ["redis-server", "redis-cli", "curl"] {
        assert!(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .any(|dir| dir.join(tool).is_file()),
            "the documentation's examples run `{tool}`, which is not installed \
             (apt-get install -y redis-server redis-tools curl; .ci/run does)"
        );
    }
    true
}

/// README.md and every guide page, their console blocks run section by section.
#[test]
fn console_blocks_of_readme_and_guides_print_what_the_pages_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join("../shared");
    if !data_and_tools_present(&shared) {
        return;
    }
    let shared = shared
        .canonicalize()
        .expect("the shared directory resolves");
    let pages = pages(&root);
    let parsed: Vec<(&str, Vec<Block>)> = pages
        .iter()
        .map(|(page, text)| {
            let blocks = parse_blocks(page, text).unwrap_or_else(|e| panic!("{e}"));
            (page.as_str(), blocks)
        })
        .collect();
    let jobs: Vec<(usize, &str, Vec<&Block>)> = parsed
        .iter()
        .flat_map(|(page, blocks)| sections(blocks).into_iter().map(move |s| (*page, s)))
        .enumerate()
        .map(|(order, (page, blocks))| (order, page, blocks))
        .collect();

    let started = Instant::now();
    let next = Mutex::new(jobs.iter());
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                // The lock is held only to take the next job; a poisoned lock means another
                // worker panicked, which fails the test anyway.
                let Some((order, page, blocks)) = next.lock().expect("job queue").next() else {
                    break;
                };
                let outcome = run_section(&shared, page, blocks);
                outcomes.lock().expect("outcomes").push((*order, outcome));
            });
        }
    });
    let mut outcomes = outcomes.into_inner().expect("outcomes");
    outcomes.sort_by_key(|(order, _)| *order);
    let (mut steps, mut failures, mut skipped) = (0, Vec::new(), Vec::new());
    for (_, outcome) in outcomes {
        steps += outcome.steps;
        failures.extend(outcome.failures);
        skipped.extend(outcome.skipped);
    }

    let blocks: usize = parsed.iter().map(|(_, blocks)| blocks.len()).sum();
    eprintln!(
        "documentation examples: {} pages, {} sections, {} blocks, {steps} commands run in \
         {:.1} s; {} failed; {} blocks skipped",
        pages.len(),
        jobs.len(),
        blocks - skipped.len(),
        started.elapsed().as_secs_f64(),
        failures.len(),
        skipped.len(),
    );
    for skip in &skipped {
        eprintln!("=== SKIPPED block {skip}");
    }
    assert!(
        skipped.is_empty(),
        "{} blocks are marked skipped; every console block must run (a command whose output \
         cannot be shown belongs in a sh block):\n{}",
        skipped.len(),
        skipped.join("\n")
    );
    assert!(
        steps >= MIN_STEPS,
        "only {steps} commands were found in the pages: is the parser still reading them?"
    );
    for name in fixtures::names() {
        assert!(
            pages.iter().any(|(_, text)| text.contains(name)),
            "the fixture {name} is not used by any page any more: remove it"
        );
    }
    if !failures.is_empty() {
        let report: String = failures.iter().map(|f| format!("{f}\n")).collect();
        panic!(
            "{} commands do not do what their pages show:\n\n{report}",
            failures.len()
        );
    }
}

#[test]
fn sections_group_consecutive_blocks_of_one_heading() {
    let text =
        "```console\n$ a\n```\n## One\n```console\n$ b\n```\n### Sub\n```console\n$ c\n```\n\
                ## One\n```console\n$ d\n```\n## Two\n```console\n$ e\n```\n";
    let blocks = parse_blocks("page.md", text).expect("parses");
    let grouped: Vec<Vec<&str>> = sections(&blocks)
        .iter()
        .map(|s| s.iter().map(|b| b.steps[0].command.as_str()).collect())
        .collect();
    assert_eq!(
        grouped,
        vec![vec!["a"], vec!["b", "c"], vec!["d"], vec!["e"]]
    );
}
