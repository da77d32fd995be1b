//! End-to-end tests of the report generator: runs the `--quick` report once into a temporary
//! directory and checks its files, its links and the statistical invariants of its data.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use phishbloom_report::{run, Error, ReportOptions, ReportSummary};

/// σ multiple for statistical assertions: with ~120 measured points a 5 σ excursion has a
/// chance of about 7·10⁻⁵ per run, and the seeds are fixed, so a failure means a real bug.
const SIGMAS: f64 = 5.0;

/// The shared data set when present (`shared/data` beside the repository), else a small
/// generated one with the same columns and labels.
fn dataset(dir: &Path) -> PathBuf {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/dataset.csv");
    if shared.is_file() {
        return shared;
    }
    let path = dir.join("dataset.csv");
    let mut text = String::from("url,isMalicious\n");
    for i in 0..3_000u32 {
        // One phishing row in four, as in the real file.
        let label = if i % 4 == 0 { -1 } else { 1 };
        text.push_str(&format!("site{i}.example.com/login/{i},{label}\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// The quick report, run once for all tests: (output directory guard, summary).
fn report() -> &'static (tempfile::TempDir, ReportSummary) {
    static REPORT: OnceLock<(tempfile::TempDir, ReportSummary)> = OnceLock::new();
    REPORT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let data = dataset(dir.path());
        let summary = run(&ReportOptions {
            out: dir.path().join("report"),
            quick: true,
            data,
            threads: 2,
            verbose: false,
        })
        .unwrap();
        (dir, summary)
    })
}

fn out() -> PathBuf {
    report().0.path().join("report")
}

/// A CSV file of the report as (header, rows).
fn read_csv(name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(out().join(name)).unwrap();
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The column `name` of a CSV as numbers (rows where it is empty are skipped).
fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<Option<f64>> {
    let index = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter()
        .map(|row| (!row[index].is_empty()).then(|| row[index].parse::<f64>().unwrap()))
        .collect()
}

#[test]
fn every_file_exists_and_every_csv_parses_with_finite_numbers() {
    let (_, summary) = report();
    assert!(summary.files.iter().any(|f| f.ends_with("README.md")));
    let mut csvs = 0;
    for file in &summary.files {
        assert!(file.is_file(), "{} missing", file.display());
        if file.extension().is_some_and(|e| e == "csv") {
            csvs += 1;
            let name = file.file_name().unwrap().to_str().unwrap();
            let (header, rows) = read_csv(name);
            assert!(!header.is_empty() && !rows.is_empty(), "{name} is empty");
            for row in &rows {
                assert_eq!(row.len(), header.len(), "{name}: ragged row {row:?}");
                for cell in row {
                    if let Ok(value) = cell.parse::<f64>() {
                        assert!(value.is_finite(), "{name}: non-finite {cell}");
                    }
                    assert!(
                        !["NaN", "inf", "-inf"].contains(&cell.as_str()),
                        "{name}: {cell}"
                    );
                }
            }
        }
    }
    assert!(csvs >= 8, "only {csvs} CSV files");
    // No temporary files left behind by the atomic writer.
    for entry in std::fs::read_dir(out()).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().starts_with('.'),
            "{name:?} left over"
        );
    }
}

#[test]
fn the_keyword_section_finds_every_planted_keyword_and_verification_flags_nothing() {
    report();
    let (header, rows) = read_csv("keywords.csv");
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert!(rows.len() >= 3, "{rows:?}");
    for row in &rows {
        assert_eq!(
            row[column("planted")],
            row[column("planted_found")],
            "{row:?}"
        );
        if row[column("system")] != "phishbloom"
            && !row[column("system")].starts_with("aho-corasick (raw")
        {
            assert_eq!(row[column("flagged")], "0", "{row:?}");
        }
    }
}

#[test]
fn svgs_are_well_formed_and_labelled() {
    let (_, summary) = report();
    let svgs: Vec<&PathBuf> = summary
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "svg"))
        .collect();
    assert!(svgs.len() >= 4, "only {} plots", svgs.len());
    for svg in svgs {
        let text = std::fs::read_to_string(svg).unwrap();
        let trimmed = text.trim();
        assert!(
            trimmed.starts_with("<svg") || trimmed.starts_with("<?xml"),
            "{}",
            svg.display()
        );
        assert!(trimmed.ends_with("</svg>"), "{}", svg.display());
        assert_eq!(
            text.matches("<svg").count(),
            text.matches("</svg>").count(),
            "{}",
            svg.display()
        );
        assert!(
            text.matches("<text").count() >= 10,
            "{}: too little text",
            svg.display()
        );
        // Axis titles: every plot has a y axis of rates, bytes or ratios and a labelled x axis.
        assert!(
            ["false-positive rate", "bytes", "time ratio", "bits per key"]
                .iter()
                .any(|label| text.contains(label)),
            "{}: no y-axis label",
            svg.display()
        );
        assert!(
            [
                "k (hash functions",
                "bits per key (m/n)",
                "n (keys)",
                "query set",
                "layout",
                "p (target false-positive rate)",
                "bits per entry"
            ]
            .iter()
            .any(|label| text.contains(label)),
            "{}: no x-axis label",
            svg.display()
        );
    }
}

#[test]
fn every_link_of_the_readme_exists() {
    let readme = std::fs::read_to_string(out().join("README.md")).unwrap();
    let mut images = 0;
    for (i, _) in readme.match_indices("](") {
        let rest = &readme[i + 2..];
        let target = &rest[..rest.find(')').unwrap()];
        if target.starts_with('#') || target.starts_with("http") {
            continue;
        }
        assert!(
            out().join(target).is_file(),
            "README links missing {target}"
        );
        if readme[..i]
            .rfind("![")
            .is_some_and(|j| !readme[j..i].contains('\n'))
        {
            images += 1;
        }
    }
    assert!(images >= 4, "only {images} images");
    for section in 1..=9 {
        assert!(
            readme.contains(&format!("## {section}. ")),
            "section {section} missing"
        );
    }
    assert!(readme.contains("--quick"), "a quick report must say so");
}

#[test]
fn bloom_filters_have_no_false_negatives() {
    for (name, column_name) in [
        ("rate_vs_k.csv", "false_negatives"),
        ("rate_vs_bits.csv", "false_negatives"),
        ("dataset.csv", "false_negatives"),
        ("hash_strategies.csv", "false_negatives"),
        ("memory.csv", "false_negatives_in_sample"),
        ("seed002_scale.csv", "false_negatives"),
        ("changes_bits.csv", "false_negatives"),
        ("changes_speed.csv", "false_negatives"),
    ] {
        let (header, rows) = read_csv(name);
        let values = column(&header, &rows, column_name);
        assert!(
            values.iter().any(Option::is_some),
            "{name}: nothing measured"
        );
        for value in values.into_iter().flatten() {
            assert_eq!(value, 0.0, "{name}: false negatives");
        }
    }
}

/// Checks that each row's false-positive count is within `SIGMAS` binomial σ of `queries · p`,
/// plus `slack` (a fraction of the expected count) and one count for rounding.
fn check_counts(name: &str, rate_column: &str, slack: f64) {
    let (header, rows) = read_csv(name);
    let queries = column(&header, &rows, "queries");
    let hits = column(&header, &rows, "false_positives");
    let rates = column(&header, &rows, rate_column);
    let mut checked = 0;
    for ((q, h), p) in queries.iter().zip(&hits).zip(&rates) {
        let (Some(q), Some(h), Some(p)) = (q, h, p) else {
            continue;
        };
        let expected = q * p;
        let sigma = (q * p * (1.0 - p)).sqrt();
        let tolerance = SIGMAS * sigma + slack * expected + 1.0;
        assert!(
            (h - expected).abs() <= tolerance,
            "{name}: {h} false positives in {q} queries, expected {expected:.1} ± {tolerance:.1} from {rate_column}"
        );
        checked += 1;
    }
    assert!(checked > 10, "{name}: only {checked} rows checked");
}

#[test]
fn measured_rates_follow_theory_within_binomial_error() {
    // Conditional on a filter's bits, its false-positive count is exactly binomial.
    check_counts("rate_vs_k.csv", "filter_rate_given_bits", 0.0);
    check_counts("rate_vs_bits.csv", "filter_rate_given_bits", 0.0);
    // Against the theory (the mean over filters) allow for the spread between filters: at the
    // quick sizes (≥ 20 blocks of 512 bits) it stays under 15 % of the rate.
    check_counts("rate_vs_k.csv", "theory_rate", 0.15);
    check_counts("rate_vs_bits.csv", "theory_rate", 0.15);
}

#[test]
fn seed_001_table_is_reproduced_beside_the_printed_values() {
    let (header, rows) = read_csv("seed001_table.csv");
    assert_eq!(rows.len(), 12);
    let printed = column(&header, &rows, "seed_001_printed");
    let formula = column(&header, &rows, "asymptotic_formula");
    for (p, f) in printed.iter().zip(&formula) {
        let (p, f) = (p.unwrap(), f.unwrap());
        // The seed prints three significant digits (and 0.00053, 0.00014 with two).
        assert!((p - f).abs() / f < 0.01, "printed {p} vs formula {f}");
    }
}

#[test]
fn sizing_reproduces_the_seed_figures() {
    let (header, rows) = read_csv("sizing.csv");
    let m = column(&header, &rows, "m_bits");
    let case = header.iter().position(|h| h == "case").unwrap();
    let layout = header.iter().position(|h| h == "layout").unwrap();
    let find = |name: &str| {
        rows.iter()
            .zip(&m)
            .find(|(r, _)| r[case].contains(name) && r[layout] == "classic")
            .map(|(_, m)| m.unwrap())
            .unwrap()
    };
    assert_eq!(find("seed 002"), 958_505_838.0);
    assert_eq!(find("seed 000"), 849_687.0);
}

#[test]
fn lists_that_change_lose_no_key_and_deltas_follow_the_golomb_formula() {
    // phishbloom's full cuckoo filter refuses instead of dropping a resident fingerprint.
    let (header, rows) = read_csv("changes_eviction.csv");
    let lost = column(&header, &rows, "accepted_then_lost");
    assert_eq!(lost[0], Some(0.0), "{rows:?}");
    // Every delete of a member found it.
    let (header, rows) = read_csv("changes_speed.csv");
    for failed in column(&header, &rows, "failed_deletes")
        .into_iter()
        .flatten()
    {
        assert_eq!(failed, 0.0);
    }
    // Golomb–Rice coding with the best parameter stays within 10 % of log₂(U/n) + 1.5 bits.
    let (header, rows) = read_csv("changes_deltas.csv");
    let bytes = column(&header, &rows, "bytes");
    let formula = column(&header, &rows, "formula_bytes");
    for (b, f) in bytes.iter().zip(&formula) {
        let ratio = b.unwrap() / f.unwrap();
        assert!((0.9..1.1).contains(&ratio), "{b:?} bytes vs formula {f:?}");
    }
    // Removals meet the target of at most 4 bytes each.
    let change = header.iter().position(|h| h == "change").unwrap();
    let met = header.iter().position(|h| h == "target_met").unwrap();
    let removals: Vec<_> = rows.iter().filter(|r| r[change] == "removals").collect();
    assert!(!removals.is_empty());
    assert!(removals.iter().all(|r| r[met] == "yes"), "{removals:?}");
}

#[test]
fn peers_miss_no_listed_url_and_hit_clean_ones_at_their_own_rates() {
    let (header, rows) = read_csv("peers.csv");
    assert!(rows.len() >= 6, "{rows:?}");
    for missed in column(&header, &rows, "listed_urls_missed") {
        assert_eq!(missed, Some(0.0));
    }
    let asked = column(&header, &rows, "clean_urls");
    let hits = column(&header, &rows, "clean_urls_listed");
    let theory = column(&header, &rows, "per_url_theory");
    for ((q, h), p) in asked.iter().zip(&hits).zip(&theory) {
        let (q, h, p) = (q.unwrap(), h.unwrap(), p.unwrap());
        let tolerance = SIGMAS * (q * p * (1.0 - p)).sqrt() + 1.0;
        assert!((h - q * p).abs() <= tolerance, "{h} of {q} at {p}");
    }
}

#[test]
fn a_missing_dataset_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = run(&ReportOptions {
        out: dir.path().join("out"),
        quick: true,
        data: dir.path().join("nope.csv"),
        threads: 1,
        verbose: false,
    })
    .unwrap_err();
    assert!(matches!(error, Error::MissingDataset { .. }));
    assert!(error.to_string().contains("--data"), "{error}");
    assert!(
        !dir.path().join("out").exists(),
        "nothing is written on error"
    );
}
