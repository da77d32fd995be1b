//! Expected output against actual output: a page's lines, with the `...` and `[..]` wildcards,
//! aligned with what a command printed, and the alignment rendered for a failure message.

/// Whether `line` matches `pattern`, in which each `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    // `split` yields at least one part.
    let first = parts.next().expect("split yields a first part");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether an expected line is the `...` that stands for any number of lines.
pub(super) fn is_elision(line: &str) -> bool {
    line.trim() == "..."
}

/// One line of a comparison of expected and actual output.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Diff {
    /// An actual line its expected line matched.
    Same(String),
    /// An actual line a `...` stands for.
    Elided(String),
    /// An expected line with no actual line for it.
    Missing(String),
    /// An actual line no expected line matched.
    Extra(String),
}

/// The cheapest alignment of `expected` (with `...` and `[..]`) against `actual`: matched lines
/// cost nothing, so the output matches exactly when no line is [`Diff::Missing`] or
/// [`Diff::Extra`].
pub(super) fn compare(expected: &[String], actual: &[String]) -> Vec<Diff> {
    let (n, m) = (expected.len(), actual.len());
    // cost[i][j]: the fewest unmatched lines aligning expected[i..] with actual[j..].
    let mut cost = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            cost[i][j] = if i == n {
                m - j
            } else if is_elision(&expected[i]) {
                let skip = cost[i + 1][j];
                if j < m {
                    skip.min(cost[i][j + 1])
                } else {
                    skip
                }
            } else {
                let mut best = cost[i + 1][j] + 1;
                if j < m {
                    best = best.min(cost[i][j + 1] + 1);
                    if line_matches(&expected[i], &actual[j]) {
                        best = best.min(cost[i + 1][j + 1]);
                    }
                }
                best
            };
        }
    }
    let mut diff = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i == n {
            diff.push(Diff::Extra(actual[j].clone()));
            j += 1;
        } else if is_elision(&expected[i]) {
            if j < m && cost[i][j] == cost[i][j + 1] {
                diff.push(Diff::Elided(actual[j].clone()));
                j += 1;
            } else {
                i += 1;
            }
        } else if j < m
            && line_matches(&expected[i], &actual[j])
            && cost[i][j] == cost[i + 1][j + 1]
        {
            diff.push(Diff::Same(actual[j].clone()));
            i += 1;
            j += 1;
        } else if cost[i][j] == cost[i + 1][j] + 1 {
            diff.push(Diff::Missing(expected[i].clone()));
            i += 1;
        } else {
            diff.push(Diff::Extra(actual[j].clone()));
            j += 1;
        }
    }
    diff
}

/// Whether `actual` matches `expected`.
pub(super) fn output_matches(expected: &[String], actual: &[String]) -> bool {
    compare(expected, actual)
        .iter()
        .all(|d| matches!(d, Diff::Same(_) | Diff::Elided(_)))
}

/// A comparison for a failure message: `-` the page's line, `+` the actual one, `~` an actual
/// line a `...` stands for (of a long run of them, the first and the last), two spaces for
/// lines that agree.
pub(super) fn render(diff: &[Diff]) -> String {
    let mut text = String::new();
    let mut at = 0;
    while at < diff.len() {
        let line = match &diff[at] {
            Diff::Same(l) => format!("      {l}\n"),
            Diff::Missing(l) => format!("    - {l}\n"),
            Diff::Extra(l) => format!("    + {l}\n"),
            Diff::Elided(first) => {
                let run = diff[at..]
                    .iter()
                    .take_while(|d| matches!(d, Diff::Elided(_)))
                    .count();
                if run > 3 {
                    let Diff::Elided(last) = &diff[at + run - 1] else {
                        unreachable!("the run holds elided lines only")
                    };
                    text += &format!("    ~ {first}\n    ~ ({} more lines)\n", run - 2);
                    at += run - 1;
                    format!("    ~ {last}\n")
                } else {
                    format!("    ~ {first}\n")
                }
            }
        };
        text += &line;
        at += 1;
    }
    text
}
fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[test]
fn compares_exactly_without_wildcards() {
    let expected = strings(&["n = 10,317 entries", "done"]);
    assert!(output_matches(
        &expected,
        &strings(&["n = 10,317 entries", "done"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,316 entries", "done"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,317 entries"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,317 entries", "done", "more"])
    ));
    assert!(!output_matches(&strings(&[]), &strings(&["anything"])));
    assert!(output_matches(&strings(&[]), &strings(&[])));
}

#[test]
fn in_line_wildcard_matches_any_text_within_the_line() {
    assert!(line_matches("built in [..] s; ok", "built in 0.03 s; ok"));
    assert!(line_matches("built in [..] s; ok", "built in  s; ok"));
    assert!(line_matches("[..]", ""));
    assert!(line_matches("a[..]b[..]c", "a-x-b-y-c"));
    assert!(line_matches("a[..]", "abc"));
    assert!(line_matches("[..]c", "abc"));
    assert!(!line_matches("built in [..] s; ok", "built in 0.03 s; ok!"));
    assert!(!line_matches("built in [..] s; ok", "made in 0.03 s; ok"));
    // The text around a wildcard is still exact.
    assert!(!line_matches(
        "key [..], 18,407 entries",
        "key 9f1c, 18,408 entries"
    ));
    // The last part may not overlap what an earlier part matched.
    assert!(!line_matches("ab[..]ba", "aba"));
    // No wildcard: the whole line.
    assert!(!line_matches("abc", "abcd"));
}

#[test]
fn ellipsis_line_matches_any_number_of_lines() {
    let expected = strings(&["head", "...", "tail"]);
    assert!(output_matches(&expected, &strings(&["head", "tail"])));
    assert!(output_matches(
        &expected,
        &strings(&["head", "x", "y", "tail"])
    ));
    assert!(!output_matches(&expected, &strings(&["head", "x"])));
    assert!(!output_matches(&expected, &strings(&["x", "head", "tail"])));
    assert!(output_matches(&strings(&["..."]), &strings(&[])));
    assert!(output_matches(
        &strings(&["a", "  ..."]),
        &strings(&["a", "  b"])
    ));
    assert!(output_matches(
        &strings(&["a", "..."]),
        &strings(&["a", "b", "c"])
    ));
    assert!(!output_matches(
        &strings(&["a", "..."]),
        &strings(&["b", "c"])
    ));
    // A `...` inside a line is literal text.
    assert!(!output_matches(
        &strings(&["a ... b"]),
        &strings(&["a x b"])
    ));
}

#[test]
fn diff_shows_the_changed_line() {
    let expected = strings(&["read x", "...", "n = 33,311 rows", "done in [..] s"]);
    let actual = strings(&["read x", "skipped", "n = 33,298 rows", "done in 0.1 s"]);
    assert_eq!(
        compare(&expected, &actual),
        vec![
            Diff::Same("read x".into()),
            Diff::Elided("skipped".into()),
            Diff::Elided("n = 33,298 rows".into()),
            Diff::Missing("n = 33,311 rows".into()),
            Diff::Same("done in 0.1 s".into()),
        ]
    );
}

#[test]
fn diff_shortens_long_runs_under_an_ellipsis() {
    let expected = strings(&["...", "end"]);
    let actual = strings(&["1", "2", "3", "4", "5", "end!"]);
    assert_eq!(
        render(&compare(&expected, &actual)),
        "    ~ 1\n    ~ (4 more lines)\n    ~ end!\n    - end\n"
    );
}
