//! The near-duplicate section's configurations: every single fingerprint (shingle width ×
//! weighting), every checked one (a lookup and a check fingerprint), and whether the checked
//! ones' two distances are independent — each as its CSV file and its Markdown table.

use phishbloom_core::fmt;
use phishbloom_lab::measure::near::checked::{within, CheckedRow, CHECK_DISTANCES};
use phishbloom_lab::measure::near::edits::EDITS;
use phishbloom_lab::measure::near::{Choice, Quality, QualityRow, K, KMAX, PLANNED_LIST};
use phishbloom_lab::theory::binomial_64_half_cdf;

use super::{edit_labels, header_with_edits};
use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};

/// The label of the unrelated documents' rows in the CSV files.
const UNRELATED: &str = "unrelated (false documents)";

/// Writes `near_configs.csv` (every configuration × edit × k) and `near_distances.csv` (the
/// unrelated distances beside Binomial(64, ½)); returns their names.
pub(super) fn write_single_csv(ctx: &mut Context, q: &Quality) -> Result<(String, String)> {
    let mut configs = Table::new(&[
        "shingle",
        "weighting",
        "edit",
        "k",
        "copies",
        "found",
        "recall",
    ]);
    for row in &q.rows {
        let lead = [row.shingle.to_string(), row.weights.name().into()];
        for e in &row.edits {
            for kk in 0..=KMAX {
                let (copies, found) = (e.copies, e.found[kk]);
                configs.push(counted(&lead, e.edit.label(), kk, copies, found));
            }
        }
        for kk in 0..=KMAX {
            let (unrelated, false_docs) = (row.unrelated, row.false_docs[kk]);
            configs.push(counted(&lead, UNRELATED.into(), kk, unrelated, false_docs));
        }
    }
    let configs_csv = ctx.write_csv("near_configs.csv", &configs)?;
    let mut distances = Table::new(&[
        "shingle",
        "weighting",
        "distance",
        "pairs",
        "binomial_expected",
    ]);
    for row in &q.rows {
        for (d, &count) in row.distances.histogram.iter().enumerate() {
            let below = if d == 0 {
                0.0
            } else {
                binomial_64_half_cdf(d as u32 - 1)
            };
            let p = binomial_64_half_cdf(d as u32) - below;
            distances.push(vec![
                row.shingle.to_string(),
                row.weights.name().into(),
                d.to_string(),
                count.to_string(),
                num(p * row.distances.pairs as f64),
            ]);
        }
    }
    let distances_csv = ctx.write_csv("near_distances.csv", &distances)?;
    Ok((configs_csv, distances_csv))
}

/// A CSV row: the `lead` cells, then the edit, k, the documents tried, the ones found and
/// their ratio.
fn counted(lead: &[String], edit: String, k: usize, tried: u64, found: u64) -> Vec<String> {
    let mut cells = lead.to_vec();
    cells.extend([
        edit,
        k.to_string(),
        tried.to_string(),
        found.to_string(),
        num(found as f64 / tried.max(1) as f64),
    ]);
    cells
}

/// Recall of edit `e` at distance `k` as a table cell.
fn recall_cell(row: &QualityRow, e: usize, k: usize) -> String {
    let r = &row.edits[e];
    format!("{:.3}", r.found[k] as f64 / r.copies.max(1) as f64)
}

/// `text`, in bold when `bold`.
fn bold_if(bold: bool, text: String) -> String {
    if bold {
        format!("**{text}**")
    } else {
        text
    }
}

/// The single configurations at k = [`K`]: the text, the table and what it shows.
pub(super) fn single_table(q: &Quality, configs_csv: &str, distances_csv: &str) -> String {
    let k = K as usize;
    let mut md = format!(
        "### Shingle width and weighting\n\nRecall at k = {K} for every configuration, the \
         unrelated documents with any known one within {K}, the distances of all {} unrelated \
         (query, known) pairs (Binomial(64, ½) would give 32 ± 4), and the false matches an \
         unrelated document would expect against a list of {} documents (n × the normal tail of \
         the measured distances at k + ½ — a list that size cannot be measured with this \
         corpus). tf-idf uses document frequencies of the known documents; a list does not \
         store them (measured here to see whether it should). Data: [{configs_csv}]({configs_csv}) \
         (k = 0…{KMAX}), [{distances_csv}]({distances_csv}).\n\n",
        fmt::count(q.rows.first().map_or(0, |r| r.distances.pairs)),
        fmt::power_of_ten(PLANNED_LIST as u64),
    );
    let labels = edit_labels();
    let header = header_with_edits(
        &["w", "weighting"],
        &labels,
        &[
            "unrelated matched",
            "unrelated distance",
            "min",
            "expected false at 10⁷",
        ],
    );
    let mut rows = Vec::new();
    for (i, row) in q.rows.iter().enumerate() {
        let mut cells = vec![
            bold_if(q.choice == Choice::Single(i), row.shingle.to_string()),
            row.weights.name().to_string(),
        ];
        cells.extend((0..EDITS.len()).map(|e| recall_cell(row, e, k)));
        cells.push(format!("{} of {}", row.false_docs[k], row.unrelated));
        cells.push(format!(
            "{:.1} ± {:.1}",
            row.distances.mean, row.distances.sd
        ));
        cells.push(row.distances.min.to_string());
        cells.push(format!("{:.1e}", row.expected_false(PLANNED_LIST, K)));
        rows.push(cells);
    }
    md.push_str(&markdown_table(&header, &rows));
    md.push_str(
        "\nOne SimHash cannot do both: single words (`w = 1`, tf) find the edited copies but put \
         texts of one language close together (their unrelated distances sit far below 32), so \
         a large list would match ordinary prose; wider shingles keep unrelated texts at \
         Binomial(64, ½) distances but let each edited word change `w` features, and few \
         copies stay within 3 bits. Hence the check below.\n\n",
    );
    md
}

/// Writes `near_checked.csv` (every checked configuration × c × k × edit) and
/// `near_checked_distances.csv` (unrelated pairs by both distances); returns their names.
pub(super) fn write_checked_csv(ctx: &mut Context, q: &Quality) -> Result<(String, String)> {
    let mut checked = Table::new(&[
        "shingle",
        "weighting",
        "check_shingle",
        "check_distance",
        "edit",
        "k",
        "copies",
        "found",
        "recall",
    ]);
    for row in &q.checked {
        for &c in &CHECK_DISTANCES {
            let lead = [
                row.shingle.to_string(),
                row.weights.name().into(),
                row.check_shingle.to_string(),
                c.to_string(),
            ];
            for kk in 0..=KMAX {
                for e in &row.edits {
                    let found = within(&e.right, kk, c);
                    checked.push(counted(&lead, e.edit.label(), kk, e.copies, found));
                }
                let (unrelated, false_docs) = (row.unrelated(), row.false_docs(kk, c));
                checked.push(counted(&lead, UNRELATED.into(), kk, unrelated, false_docs));
            }
        }
    }
    let checked_file = ctx.write_csv("near_checked.csv", &checked)?;
    let mut joint = Table::new(&[
        "shingle",
        "weighting",
        "check_shingle",
        "key_distance",
        "check_distance",
        "pairs",
    ]);
    for row in &q.checked {
        for (dk, line) in row.unrelated_pairs.iter().enumerate() {
            for (dc, &n) in line.iter().enumerate().filter(|(_, &n)| n > 0) {
                joint.push(vec![
                    row.shingle.to_string(),
                    row.weights.name().into(),
                    row.check_shingle.to_string(),
                    dk.to_string(),
                    dc.to_string(),
                    n.to_string(),
                ]);
            }
        }
    }
    let joint_file = ctx.write_csv("near_checked_distances.csv", &joint)?;
    Ok((checked_file, joint_file))
}

/// The checked configurations at k = [`K`] and every check distance: the text and the table.
pub(super) fn checked_table(q: &Quality, checked_file: &str, joint_file: &str) -> String {
    let k = K as usize;
    let mut md = format!(
        "### Checked configurations: a lookup fingerprint and a check\n\nA list holds two \
         SimHashes per document: the lookup one (shingles of `w` tokens) in the permuted tables, \
         and a check one of wider shingles (`check w`) beside it. A known document matches when \
         its lookup fingerprint is within k **and** its check fingerprint within c of the \
         query's. Both fingerprints use the one weighting a list stores (set lookups get a set \
         check). Recall at k = {K} per edit (right match: the copy's own original passes both), \
         unrelated documents with any known one passing both, precision (right pairs ÷ pairs \
         passing both, over the copies and the unrelated documents), the check distances of the \
         unrelated pairs, and the expected false matches per unrelated document against 10⁷ \
         known ones: n × P(key ≤ k) × P(check ≤ c), each factor the normal tail (at k + ½, \
         c + ½) of the measured unrelated distances. **The product assumes the two distances \
         independent**; the next table checks that on the measured pairs. Data: \
         [{checked_file}]({checked_file}) (every k = 0…{KMAX} and c), \
         [{joint_file}]({joint_file}) (unrelated pairs by both distances).\n\n"
    );
    let labels = edit_labels();
    let header = header_with_edits(
        &["w", "weighting", "check w", "c"],
        &labels,
        &[
            "unrelated matched",
            "precision",
            "unrelated check distance",
            "min",
            "expected false at 10⁷",
        ],
    );
    let mut rows = Vec::new();
    for (i, row) in q.checked.iter().enumerate() {
        for &c in &CHECK_DISTANCES {
            let bold = q.choice
                == Choice::Checked {
                    row: i,
                    check_distance: c,
                };
            let mut cells = vec![
                bold_if(bold, row.shingle.to_string()),
                row.weights.name().to_string(),
                row.check_shingle.to_string(),
                bold_if(bold, c.to_string()),
            ];
            cells.extend(EDITS.iter().map(|&e| format!("{:.3}", row.recall(e, k, c))));
            cells.push(format!("{} of {}", row.false_docs(k, c), row.unrelated()));
            cells.push(format!("{:.3}", row.precision(k, c)));
            cells.push(format!(
                "{:.1} ± {:.1}",
                row.check_distances.mean, row.check_distances.sd
            ));
            cells.push(row.check_distances.min.to_string());
            cells.push(format!("{:.1e}", row.expected_false(PLANNED_LIST, K, c)));
            rows.push(cells);
        }
    }
    md.push_str(&markdown_table(&header, &rows));
    md
}

/// The measured dependence of the two distances of the checked configurations: the text and
/// the table.
pub(super) fn independence_table(q: &Quality) -> String {
    let mut md = String::from(
        "\n**Independence of the two distances** on the unrelated pairs: each distance cut \
         where its own empirical lower tail reaches a fraction q, the pairs within both counted \
         beside pairs × F_key × F_check (what independent distances would give). A ratio above \
         1 means that a pair close in words tends to be close in word pairs too, so the \
         product above underestimates the joint tail by about that factor (measured at these \
         looser thresholds; the tail at k = 3 and c ≤ 16 is too rare to count).\n\n",
    );
    let mut rows = Vec::new();
    for row in &q.checked {
        for ind in row.independence() {
            rows.push(vec![
                row.label(),
                format!("{}", ind.quantile),
                format!("≤ {}", ind.key_threshold),
                format!("≤ {}", ind.check_threshold),
                fmt::count(ind.observed),
                format!("{:.1}", ind.expected),
                format!("{:.2}", ind.ratio()),
            ]);
        }
    }
    md.push_str(&markdown_table(
        &[
            "configuration",
            "q",
            "key",
            "check",
            "pairs within both",
            "expected if independent",
            "ratio",
        ],
        &rows,
    ));
    md
}

/// The largest measured dependence ratio of the chosen configuration's two distances, when
/// the chosen one is checked.
pub(super) fn chosen_dependence(q: &Quality) -> Option<f64> {
    let dependence = |row: &CheckedRow| {
        row.independence()
            .iter()
            .map(|i| i.ratio())
            .fold(0.0, f64::max)
    };
    match q.choice {
        Choice::Checked { row, .. } => Some(dependence(&q.checked[row])),
        Choice::Single(_) => None,
    }
}
