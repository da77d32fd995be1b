//! Reading a CSV list: the key column found by name in its header, rows selected by a label,
//! categories from a column; URLhaus's CSV read through its comment box ([`CommentLines`]).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::collect::Collector;
use super::lines::{read_bounded_line, PROGRESS_EVERY};
use super::{LabelFilter, ListOptions, ListSummary, DEFAULT_LABEL};
use crate::formats::{is_urlhaus_header, ListFormat, Skip};
use crate::{Error, Result};

/// Reads a CSV (`format`: plain, PhishTank's or URLhaus's, whose `#` lines are comments and
/// whose header is the commented `# id,dateadded,url,…` line).
pub(crate) fn read_csv(
    reader: Box<dyn Read + Send>,
    path: &Path,
    format: ListFormat,
    options: &ListOptions,
    collector: &mut Collector,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    summary.format = format.name();
    let comments = Arc::new(AtomicU64::new(0));
    let reader: Box<dyn Read + Send> = match format {
        ListFormat::Urlhaus => Box::new(CommentLines::new(reader, Arc::clone(&comments))),
        _ => reader,
    };
    let result = read_csv_rows(reader, path, options, collector, summary, progress);
    summary.skip_many(Skip::Comment, comments.load(Ordering::Relaxed));
    result
}

/// The columns of a CSV that a read uses, found by name in its header.
struct Columns {
    /// The header's field count (a row with another count is malformed).
    fields: usize,
    /// The key column.
    key: usize,
    /// The label column with its name and the value selected, if rows are selected.
    label: Option<(usize, String, String)>,
    /// The category column, if categories come from one.
    category: Option<usize>,
}

impl Columns {
    /// Finds the columns `options` name in `header`; a missing one is an error naming the
    /// columns found.
    fn find(header: &csv::ByteRecord, path: &Path, options: &ListOptions) -> Result<Self> {
        let columns: Vec<String> = header
            .iter()
            .map(|c| String::from_utf8_lossy(c).trim().to_string())
            .collect();
        let find = |name: &str| columns.iter().position(|c| c.eq_ignore_ascii_case(name));
        let missing = |column: &str, role| Error::MissingColumn {
            path: path.to_path_buf(),
            column: column.to_string(),
            role,
            found: columns.join(", "),
        };
        let key = find(&options.key_column).ok_or_else(|| missing(&options.key_column, "key"))?;
        let label = match &options.label {
            LabelFilter::All => None,
            LabelFilter::Default => find(DEFAULT_LABEL.0)
                .map(|i| (i, DEFAULT_LABEL.0.to_string(), DEFAULT_LABEL.1.to_string())),
            LabelFilter::Equals { column, value } => {
                let index = find(column).ok_or_else(|| missing(column, "label"))?;
                Some((index, column.clone(), value.clone()))
            }
        };
        let category = match &options.category_column {
            Some(column) => Some(find(column).ok_or_else(|| missing(column, "category"))?),
            None => None,
        };
        Ok(Columns {
            fields: header.len(),
            key,
            label,
            category,
        })
    }
}

/// Reads the CSV's rows after its header into `collector`: rows of another field count are
/// malformed, rows the label does not select are passed over (their labels remembered for
/// the message when none is selected).
fn read_csv_rows(
    reader: Box<dyn Read + Send>,
    path: &Path,
    options: &ListOptions,
    collector: &mut Collector,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let mut csv = csv::ReaderBuilder::new()
        .flexible(true)
        .buffer_capacity(1 << 20)
        .from_reader(reader);
    let header = csv.byte_headers().map_err(|e| Error::CsvHeader {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let columns = Columns::find(header, path, options)?;
    summary.label = columns.label.as_ref().map(|(_, c, v)| format!("{c} = {v}"));
    let mut labels_seen: Vec<String> = Vec::new();
    let mut record = csv::ByteRecord::new();
    loop {
        let line = csv.position().line();
        match csv.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                summary.rows += 1;
                summary.malformed(line, e.to_string());
                if matches!(e.kind(), csv::ErrorKind::Io(_)) {
                    return Err(Error::io(
                        path,
                        "read",
                        std::io::Error::other(e.to_string()),
                    ));
                }
                continue;
            }
        }
        summary.rows += 1;
        take_row(
            &record,
            line,
            &columns,
            collector,
            summary,
            &mut labels_seen,
        )?;
        if summary.rows.is_multiple_of(PROGRESS_EVERY) {
            progress(csv.position().byte());
        }
    }
    if let Some((_, column, value)) = columns.label {
        if summary.selected == 0 && summary.rows > summary.malformed {
            return Err(Error::NoMatchingRows {
                path: path.to_path_buf(),
                column,
                value,
                seen: labels_seen.join(", "),
            });
        }
    }
    Ok(())
}

/// Records one CSV row (line `line`) read whole.
fn take_row(
    record: &csv::ByteRecord,
    line: u64,
    columns: &Columns,
    collector: &mut Collector,
    summary: &mut ListSummary,
    labels_seen: &mut Vec<String>,
) -> Result<()> {
    if record.len() != columns.fields {
        summary.malformed(
            line,
            format!("{} fields, header has {}", record.len(), columns.fields),
        );
        return Ok(());
    }
    if let Some((index, _, value)) = &columns.label {
        let cell = record
            .get(*index)
            .map(<[u8]>::trim_ascii)
            .unwrap_or_default();
        if cell != value.as_bytes() {
            remember_label(labels_seen, cell);
            return Ok(());
        }
    }
    let group = match columns.category {
        Some(index) => collector.group(record.get(index).unwrap_or_default()),
        None => 0,
    };
    collector.add(
        record.get(columns.key).unwrap_or_default(),
        line,
        summary,
        group,
    )
}

/// URLhaus's CSV as a plain CSV: every `#` line becomes an empty line (which the CSV reader
/// skips, so that its line numbers stay the file's), counted in `comments`, except the
/// commented header line `# id,dateadded,url,…`, which loses its `#`. Lines that do not start
/// with `#` pass through untouched, however long.
struct CommentLines {
    inner: BufReader<Box<dyn Read + Send>>,
    comments: Arc<AtomicU64>,
    /// Bytes to hand out before reading on: a header or an emptied comment line.
    pending: Vec<u8>,
    pending_at: usize,
    at_line_start: bool,
    header_seen: bool,
    line: Vec<u8>,
}

/// The longest comment or header line kept whole; longer ones are cut (a comment is dropped
/// anyway, and no header is that long).
const COMMENT_BYTES: usize = 4096;

impl CommentLines {
    fn new(reader: Box<dyn Read + Send>, comments: Arc<AtomicU64>) -> Self {
        CommentLines {
            inner: BufReader::with_capacity(1 << 16, reader),
            comments,
            pending: Vec::new(),
            pending_at: 0,
            at_line_start: true,
            header_seen: false,
            line: Vec::new(),
        }
    }
}

impl Read for CommentLines {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pending_at < self.pending.len() {
                let n = (self.pending.len() - self.pending_at).min(out.len());
                out[..n].copy_from_slice(&self.pending[self.pending_at..self.pending_at + n]);
                self.pending_at += n;
                return Ok(n);
            }
            let buffer = self.inner.fill_buf()?;
            if buffer.is_empty() {
                return Ok(0);
            }
            if self.at_line_start && buffer[0] == b'#' {
                read_bounded_line(&mut self.inner, &mut self.line, COMMENT_BYTES)?;
                let lower = self.line.trim_ascii().to_ascii_lowercase();
                self.pending.clear();
                self.pending_at = 0;
                if !self.header_seen && is_urlhaus_header(&lower) {
                    self.header_seen = true;
                    // The trimmed line starts with its `#` (`is_urlhaus_header` checked), so
                    // `[1..]` is in bounds.
                    let header = self.line.trim_ascii();
                    self.pending
                        .extend_from_slice(header[1..].trim_ascii_start());
                } else {
                    self.comments.fetch_add(1, Ordering::Relaxed);
                }
                self.pending.push(b'\n');
                continue;
            }
            // A line that is not a comment (an uncommented header counts as the header).
            self.header_seen = true;
            let take = memchr::memchr(b'\n', buffer)
                .map_or(buffer.len(), |at| at + 1)
                .min(out.len());
            out[..take].copy_from_slice(&buffer[..take]);
            self.at_line_start = buffer[take - 1] == b'\n';
            self.inner.consume(take);
            return Ok(take);
        }
    }
}

/// Keeps up to eight distinct label values for the "no matching rows" message.
fn remember_label(seen: &mut Vec<String>, cell: &[u8]) {
    if seen.len() < 8 {
        let value = String::from_utf8_lossy(cell).into_owned();
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
}
