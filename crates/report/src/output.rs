//! Output files of the report: an atomic text writer and the small CSV table every figure and
//! table is backed by.

use std::path::Path;

use phishbloom_lab::stats::Measurement;

use crate::error::{Error, Result};

/// Writes `text` to `path` atomically (the blocklist crate's writer: a temporary file in the
/// same directory, fsync, rename), so a reader never sees half a report file.
pub fn write_atomic_text(path: &Path, text: &str) -> Result<()> {
    phishbloom_blocklist::atomic::write_atomic(path, &[], &[text.as_bytes()]).map_err(|source| {
        Error::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A CSV table: a header and rows of already formatted cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.header.len(), "row width ≠ header width");
        self.rows.push(row);
    }

    /// The table as RFC 4180 CSV (cells with a comma, quote or newline are quoted).
    pub fn to_csv(&self) -> String {
        let mut text = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row.iter().map(|cell| quote(cell)).collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        text
    }
}

/// Quotes a CSV cell if it needs it.
fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// A number for a CSV cell: integers as they are, others with enough digits to be re-read.
pub fn num(value: f64) -> String {
    if value == 0.0 {
        "0".to_string()
    } else if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.6e}")
    }
}

/// The six CSV cells of a measured rate, in the column order of every table that has one:
/// queries, false positives, the rate, the ends of its 95 % interval and the theoretical rate.
pub fn measurement_cells(m: &Measurement) -> Vec<String> {
    vec![
        m.queries.to_string(),
        m.false_positives.to_string(),
        num(m.rate),
        num(m.ci_low),
        num(m.ci_high),
        num(m.theoretical),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurement_cells_are_the_six_columns_in_order() {
        let m = Measurement::new(3, 1_000, 0.01);
        let cells = measurement_cells(&m);
        assert_eq!(cells[..3], ["1000", "3", "3.000000e-3"]);
        assert_eq!(cells[5], "1.000000e-2");
        assert_eq!(cells[3], num(m.ci_low));
        assert_eq!(cells[4], num(m.ci_high));
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut table = Table::new(&["a", "b"]);
        table.push(vec!["x,y".into(), "say \"hi\"".into()]);
        table.push(vec!["1".into(), num(0.00125)]);
        assert_eq!(
            table.to_csv(),
            "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n1,1.250000e-3\n"
        );
        assert_eq!(num(42.0), "42");
        assert_eq!(num(0.0), "0");
    }

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        write_atomic_text(&path, "one").unwrap();
        write_atomic_text(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        let missing = dir.path().join("no/such/dir/a.md");
        assert!(matches!(
            write_atomic_text(&missing, "x"),
            Err(Error::Write { .. })
        ));
    }
}
