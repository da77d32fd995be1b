//! Runs one stage of a URL check over the matchers bench's query stream, so that a profiler
//! (callgrind, perf) can attribute the cost of a check to its stages with repeatable instruction
//! counts. Criterion measures time (`cargo bench -p phishbloom-blocklist --bench matchers`); this
//! measures where the instructions go.
//!
//! ```sh
//! cargo build --release -p phishbloom-blocklist --example url_stages
//! valgrind --tool=callgrind --toggle-collect='*run_stage*' \
//!     target/release/examples/url_stages STAGE
//! ```
//!
//! Stages (each includes the ones before it): `canonicalize`, `expressions` (the bench's
//! "canonicalize+expressions only": canonicalize and count the expressions), `probes`
//! (canonicalize and hash every probe), `filter` (… and ask the Bloom filter), `verdict`
//! (`Blocklist::check_url`: … and resolve the candidates), `batch` (`Blocklist::check_batch`
//! over the raw lines), `check` (`check::answer_lines`: `check_batch` plus the TSV printer).
//! Only `run_stage` is counted with `--toggle-collect`, so building the list is left out.

#[path = "../benches/common/mod.rs"]
mod common;

use phishbloom_blocklist::check::answer_lines;
use phishbloom_core::engine::probes::UrlProbes;
use phishbloom_core::engine::Scratch;
use phishbloom_core::printer::Output;
use phishbloom_core::Blocklist;
use phishbloom_url::{CanonicalUrl, Canonicalizer};

/// Sums `per_url` over the lines that are URLs, canonicalized as `check` does (one reused
/// buffer).
fn sum_urls(lines: &[Vec<u8>], mut per_url: impl FnMut(&CanonicalUrl) -> usize) -> usize {
    let mut canonicalizer = Canonicalizer::new();
    lines
        .iter()
        .filter_map(|l| canonicalizer.canonicalize(l).ok().map(&mut per_url))
        .sum()
}

/// Runs `stage` once over `lines`; returns a number that depends on the work, so that nothing is
/// optimized away.
#[inline(never)]
fn run_stage(stage: &str, blocklist: &Blocklist, lines: &[Vec<u8>]) -> usize {
    let mut probes = UrlProbes::default();
    let mut answers = Vec::new();
    let mut scratch = Scratch::default();
    match stage {
        "canonicalize" => sum_urls(lines, |u| u.as_str().len()),
        "expressions" => sum_urls(lines, |u| u.expression_count()),
        "probes" => sum_urls(lines, |u| {
            probes.compute(u);
            probes.hashes().len()
        }),
        "filter" => {
            // A blocked or classic single filter (the bench builds a blocked one).
            let layers = blocklist.layers().expect("a filter-backed blocklist");
            sum_urls(lines, |u| {
                probes.compute(u);
                answers.clear();
                layers.contains_hash_batch(probes.hashes(), &mut answers);
                answers.iter().filter(|&&a| a).count()
            })
        }
        "verdict" => sum_urls(lines, |u| {
            usize::from(blocklist.check_url(u, &mut scratch).listed())
        }),
        "batch" => {
            let items: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
            let mut verdicts = Vec::with_capacity(items.len());
            blocklist.check_batch(&items, &mut scratch, &mut verdicts);
            verdicts.iter().filter(|v| v.listed()).count()
        }
        "check" => {
            let mut out = Vec::new();
            let stats = answer_lines(
                blocklist,
                lines.iter().map(Vec::as_slice),
                Output::Tsv,
                &mut out,
            );
            stats.listed as usize + out.len()
        }
        other => panic!("unknown stage {other:?}"),
    }
}

fn main() {
    let stage = std::env::args().nth(1).unwrap_or_else(|| "verdict".into());
    let list = common::list();
    let lines = common::stream(&list);
    let blocklist = common::build(&list, phishbloom_core::Kind::Blocked, false);
    let started = std::time::Instant::now();
    let result = run_stage(&stage, &blocklist, &lines);
    eprintln!(
        "{stage}: {} lines, result {result}, {:?} (wall time: for orientation only)",
        lines.len(),
        started.elapsed()
    );
}
