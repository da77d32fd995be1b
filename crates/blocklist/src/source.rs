//! List sources: a CSV with a header (the key column found by name, rows selected by a label)
//! or a plain list, one key per line, from a file or standard input; malformed rows and
//! duplicates counted, not fatal. (UT1 category folders are read as two plain lists, see
//! [`crate::entries`].)

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use phishbloom_filter::KeyHash;

use crate::keys::KeyScheme;
use crate::partition::Partitioner;
use phishbloom_core::{Error, Result};

pub use phishbloom_core::contents::KeyList;

/// Longest key accepted from a list, in bytes. Far above real URLs (browsers and servers cap them
/// near 8–64 KiB) and short enough that a hostile multi-megabyte line cannot dominate memory;
/// longer lines are reported as malformed.
pub const MAX_KEY_BYTES: usize = 64 * 1024;

/// How many malformed lines are reported by number.
pub const MALFORMED_EXAMPLES: usize = 5;

/// Where a list comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A file.
    Path(PathBuf),
    /// Standard input (`-` on the command line).
    Stdin,
}

impl Input {
    /// `-` means standard input, anything else a path.
    pub fn from_arg(arg: &str) -> Input {
        if arg == "-" {
            Input::Stdin
        } else {
            Input::Path(PathBuf::from(arg))
        }
    }

    /// The file, if the input is one (for checking that an output does not overwrite it).
    pub fn file(&self) -> Option<&Path> {
        match self {
            Input::Path(path) => Some(path),
            Input::Stdin => None,
        }
    }

    /// The name used in messages.
    pub fn display_path(&self) -> PathBuf {
        match self {
            Input::Path(path) => path.clone(),
            Input::Stdin => PathBuf::from("<stdin>"),
        }
    }

    /// Opens the input for reading; a directory is an error that says so.
    pub fn open(&self) -> Result<Box<dyn Read + Send>> {
        match self {
            Input::Stdin => Ok(Box::new(std::io::stdin())),
            Input::Path(path) => open_file(path).map(|f| Box::new(f) as Box<dyn Read + Send>),
        }
    }

    /// Opens the input as a list: gzip or zstd decompressed, a byte-order mark dropped, and
    /// refused if it is not text unless `keys_are_bytes` ([`crate::decode::open_list`]).
    pub fn open_list(&self, keys_are_bytes: bool) -> Result<Box<dyn Read + Send>> {
        let (reader, _) =
            crate::decode::open_list(self.open()?, &self.display_path(), keys_are_bytes)?;
        Ok(reader)
    }
}

/// Opens a regular file, with errors that name it.
pub fn open_file(path: &Path) -> Result<File> {
    let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
    if metadata.is_dir() {
        return Err(Error::IsADirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}

/// How to interpret the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// CSV if the file name ends in `.csv`, otherwise one key per line.
    #[default]
    Auto,
    /// CSV with a header row.
    Csv,
    /// One key per line.
    Lines,
}

impl Format {
    /// Whether `input` is read as CSV: always with [`Format::Csv`], never with
    /// [`Format::Lines`], by a `.csv` file name (any case) with [`Format::Auto`] — so never
    /// standard input unless the format says CSV.
    pub fn reads_as_csv(self, input: &Input) -> bool {
        match self {
            Format::Csv => true,
            Format::Lines => false,
            Format::Auto => {
                matches!(input, Input::Path(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")))
            }
        }
    }
}

/// Which CSV rows to take.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LabelFilter {
    /// `isMalicious = -1` if the header has an `isMalicious` column (dataset.csv's phishing
    /// rows), otherwise every row.
    #[default]
    Default,
    /// Every row.
    All,
    /// Rows whose `column` equals `value` (after trimming spaces).
    Equals {
        /// The label column's name.
        column: String,
        /// The value to select.
        value: String,
    },
}

/// The default label column and value: dataset.csv's phishing rows.
pub const DEFAULT_LABEL: (&str, &str) = ("isMalicious", "-1");

/// Options for [`read_list`].
#[derive(Clone, Debug)]
pub struct ListOptions {
    /// CSV or lines.
    pub format: Format,
    /// The CSV column holding the keys.
    pub key_column: String,
    /// Which CSV rows to take.
    pub label: LabelFilter,
    /// How lines become keys.
    pub scheme: KeyScheme,
    /// A CSV column whose value is each row's category (see [`read_list_groups`]).
    pub category_column: Option<String>,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            format: Format::Auto,
            key_column: "url".to_string(),
            label: LabelFilter::Default,
            scheme: KeyScheme::Url,
            category_column: None,
        }
    }
}

/// What reading a list found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ListSummary {
    /// `csv` or `lines`.
    pub format: &'static str,
    /// Data rows or lines read (header excluded).
    pub rows: u64,
    /// Rows whose label selected them (all rows without a label filter).
    pub selected: u64,
    /// Selected rows that were blank.
    pub blank: u64,
    /// Rows that could not be used (wrong field count, bad key, too long).
    pub malformed: u64,
    /// The first few malformed rows: (1-based line number, reason).
    pub malformed_examples: Vec<(u64, String)>,
    /// Selected keys equal (after normalization) to an earlier one.
    pub duplicates: u64,
    /// The label filter applied, as `column = value`, if any.
    pub label: Option<String>,
}

impl ListSummary {
    fn malformed(&mut self, line: u64, reason: impl Into<String>) {
        self.malformed += 1;
        if self.malformed_examples.len() < MALFORMED_EXAMPLES {
            self.malformed_examples.push((line, reason.into()));
        }
    }

    /// The error for a list at `path` that gave no key, saying what was read.
    pub(crate) fn empty_input(&self, path: PathBuf) -> Error {
        Error::EmptyInput {
            path,
            detail: format!(
                "{} rows, {} selected, {} blank, {} malformed",
                self.rows, self.selected, self.blank, self.malformed
            ),
        }
    }
}

/// Collects distinct keys per group (category) and counts duplicates (by 128-bit xxh3: a false
/// "duplicate" needs a 128-bit collision, probability ~n²/2^129) — or, streaming
/// ([`Collector::hashing`]), only hashes the keys into partitions, which
/// [`crate::stream`] deduplicates afterwards.
pub(crate) struct Collector {
    groups: Vec<(String, KeyList, HashSet<u128>)>,
    scratch: Vec<u8>,
    scheme: KeyScheme,
    hashes: Option<Partitioner>,
}

impl Collector {
    fn new(scheme: KeyScheme, default_group: &str) -> Self {
        Collector {
            groups: vec![(
                default_group.to_string(),
                KeyList::default(),
                HashSet::new(),
            )],
            scratch: Vec::new(),
            scheme,
            hashes: None,
        }
    }

    /// A collector that keeps no key, only its hash, in `partitioner` (one group).
    pub(crate) fn hashing(scheme: KeyScheme, partitioner: Partitioner) -> Self {
        Collector {
            hashes: Some(partitioner),
            ..Collector::new(scheme, "")
        }
    }

    /// The partitions of a hashing collector.
    pub(crate) fn into_partitioner(self) -> Option<Partitioner> {
        self.hashes
    }

    /// Normalizes and records one selected raw key, in group `group` (0 is the default). Fails
    /// only when a hashing collector cannot write its temporary file.
    fn add(
        &mut self,
        raw: &[u8],
        line: u64,
        summary: &mut ListSummary,
        group: usize,
    ) -> Result<()> {
        summary.selected += 1;
        if raw.len() > MAX_KEY_BYTES {
            summary.malformed(line, format!("key longer than {MAX_KEY_BYTES} bytes"));
            return Ok(());
        }
        if !self.scheme.normalize_into(raw, &mut self.scratch) {
            summary.blank += 1;
            return Ok(());
        }
        let hash = KeyHash::of(&self.scratch);
        if let Some(partitioner) = &mut self.hashes {
            return partitioner.push(hash);
        }
        let (_, keys, seen) = &mut self.groups[group];
        if seen.insert(u128::from(hash.h1) | u128::from(hash.h2) << 64) {
            keys.push(&self.scratch);
        } else {
            summary.duplicates += 1;
        }
        Ok(())
    }

    /// The group named `name`, created if new.
    fn group(&mut self, name: &[u8]) -> usize {
        let name = String::from_utf8_lossy(name.trim_ascii());
        match self.groups.iter().position(|(n, _, _)| *n == name) {
            Some(index) => index,
            None => {
                self.groups
                    .push((name.into_owned(), KeyList::default(), HashSet::new()));
                self.groups.len() - 1
            }
        }
    }
}

/// Reads `input` as `options` say. `progress` is called now and then with the bytes read so far.
/// Malformed rows are counted in the summary, not fatal; an input without any key is an error.
pub fn read_list(
    input: &Input,
    options: &ListOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<(KeyList, ListSummary)> {
    let (mut groups, summary) = read_list_groups(input, options, "", progress)?;
    let keys = match groups.len() {
        1 => groups.pop().map(|(_, keys)| keys).unwrap_or_default(),
        // Categories from a column: one list of the distinct keys of every group.
        _ => {
            let mut seen = HashSet::new();
            let mut keys = KeyList::default();
            for (_, group) in &groups {
                for key in group.iter() {
                    if seen.insert(KeyHash::of(key)) {
                        keys.push(key);
                    }
                }
            }
            keys
        }
    };
    Ok((keys, summary))
}

/// Like [`read_list`], with the keys grouped by category: one group named `category` (the
/// list's own name), or — with [`ListOptions::category_column`] — one group per value of that
/// CSV column. Keys are distinct within a group; a key may be in several groups.
pub fn read_list_groups(
    input: &Input,
    options: &ListOptions,
    category: &str,
    progress: &mut dyn FnMut(u64),
) -> Result<(Vec<(String, KeyList)>, ListSummary)> {
    let bytes = options.scheme == KeyScheme::Exact;
    read_list_groups_of(input, options, category, progress, bytes)
}

/// [`read_list_groups`], saying whether the keys may be any bytes (`keys_are_bytes`: binary
/// input is not refused) whatever `options.scheme` reads them as (entries are read as raw
/// lines, but a list of entries is text).
pub(crate) fn read_list_groups_of(
    input: &Input,
    options: &ListOptions,
    category: &str,
    progress: &mut dyn FnMut(u64),
    keys_are_bytes: bool,
) -> Result<(Vec<(String, KeyList)>, ListSummary)> {
    let path = input.display_path();
    let csv = options.format.reads_as_csv(input);
    let reader = input.open_list(keys_are_bytes)?;
    read_groups_from(reader, &path, csv, options, category, progress)
}

/// [`read_list`] from any reader (`csv` chooses the format; `path` names it in messages).
pub fn read_list_from(
    reader: Box<dyn Read + Send>,
    path: &Path,
    csv: bool,
    options: &ListOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<(KeyList, ListSummary)> {
    let (groups, summary) = read_groups_from(reader, path, csv, options, "", progress)?;
    let mut keys = KeyList::default();
    for (_, group) in &groups {
        keys.extend(group);
    }
    Ok((keys, summary))
}

fn read_groups_from(
    reader: Box<dyn Read + Send>,
    path: &Path,
    csv: bool,
    options: &ListOptions,
    category: &str,
    progress: &mut dyn FnMut(u64),
) -> Result<(Vec<(String, KeyList)>, ListSummary)> {
    let path = path.to_path_buf();
    let mut collector = Collector::new(options.scheme, category);
    let mut summary = ListSummary::default();
    if csv {
        read_csv(
            reader,
            &path,
            options,
            &mut collector,
            &mut summary,
            progress,
        )?;
    } else {
        let sniff = options.format == Format::Auto;
        read_lines(reader, &path, sniff, &mut collector, &mut summary, progress)?;
    }
    let groups: Vec<(String, KeyList)> = collector
        .groups
        .into_iter()
        .filter(|(_, keys, _)| !keys.is_empty())
        .map(|(name, keys, _)| (name, keys))
        .collect();
    if groups.is_empty() {
        return Err(summary.empty_input(path));
    }
    Ok((groups, summary))
}

/// Whether a plain list's first line looks like a CSV header (`url,isMalicious`): two or more
/// comma-separated fields, each a column name — letters, digits, `_`, `-` or spaces, starting
/// with a letter — and none of them a host or URL. Such a list read as lines would make its
/// header and its rows (`evil.com,-1`) into keys.
pub(crate) fn looks_like_csv_header(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let fields: Vec<&[u8]> = line.split(|&b| b == b',').map(<[u8]>::trim_ascii).collect();
    fields.len() >= 2
        && fields.iter().all(|field| {
            field.first().is_some_and(u8::is_ascii_alphabetic)
                && field
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' '))
        })
}

/// Reports progress every this many rows (cheap enough not to show in profiles).
const PROGRESS_EVERY: u64 = 1 << 16;

fn read_lines(
    reader: Box<dyn Read + Send>,
    path: &Path,
    sniff: bool,
    collector: &mut Collector,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    summary.format = "lines";
    // 1 MiB buffer: few read syscalls on large lists.
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut line = Vec::new();
    let mut bytes_read = 0u64;
    loop {
        let (consumed, complete) = read_bounded_line(&mut reader, &mut line, MAX_KEY_BYTES)
            .map_err(|e| Error::io(path, "read", e))?;
        if consumed == 0 {
            return Ok(());
        }
        bytes_read += consumed as u64;
        summary.rows += 1;
        let number = summary.rows;
        if number == 1 && sniff && looks_like_csv_header(&line) {
            return Err(Error::LooksLikeCsv {
                path: path.to_path_buf(),
                header: String::from_utf8_lossy(&line).trim_end().to_string(),
            });
        }
        if complete {
            collector.add(&line, number, summary, 0)?;
        } else {
            summary.selected += 1;
            summary.malformed(number, format!("line longer than {MAX_KEY_BYTES} bytes"));
        }
        if number.is_multiple_of(PROGRESS_EVERY) {
            progress(bytes_read);
        }
    }
}

/// Reads one line into `line` (without its `\n`), keeping at most `limit + 1` bytes of it and
/// discarding the rest, so that a line of any length costs bounded memory. Returns the bytes
/// consumed (0 at end of input) and whether the line fit the limit.
pub fn read_bounded_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<(usize, bool)> {
    line.clear();
    let mut consumed = 0;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            return Ok((consumed, line.len() <= limit));
        }
        let (take, done) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let content = if done {
            &buffer[..take - 1]
        } else {
            &buffer[..take]
        };
        let room = (limit + 1).saturating_sub(line.len());
        line.extend_from_slice(&content[..content.len().min(room)]);
        reader.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, line.len() <= limit));
        }
    }
}

pub(crate) fn read_csv(
    reader: Box<dyn Read + Send>,
    path: &Path,
    options: &ListOptions,
    collector: &mut Collector,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    summary.format = "csv";
    let mut csv = csv::ReaderBuilder::new()
        .flexible(true)
        .buffer_capacity(1 << 20)
        .from_reader(reader);
    let header = csv
        .byte_headers()
        .map_err(|e| Error::CsvHeader {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
        .clone();
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
    let key_index = find(&options.key_column).ok_or_else(|| missing(&options.key_column, "key"))?;
    let label = match &options.label {
        LabelFilter::All => None,
        LabelFilter::Default => find(DEFAULT_LABEL.0)
            .map(|i| (i, DEFAULT_LABEL.0.to_string(), DEFAULT_LABEL.1.to_string())),
        LabelFilter::Equals { column, value } => {
            let index = find(column).ok_or_else(|| missing(column, "label"))?;
            Some((index, column.clone(), value.clone()))
        }
    };
    summary.label = label.as_ref().map(|(_, c, v)| format!("{c} = {v}"));
    let category_index = match &options.category_column {
        Some(column) => Some(find(column).ok_or_else(|| missing(column, "category"))?),
        None => None,
    };
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
        if record.len() != header.len() {
            summary.malformed(
                line,
                format!("{} fields, header has {}", record.len(), header.len()),
            );
            continue;
        }
        if let Some((index, _, value)) = &label {
            let cell = record
                .get(*index)
                .map(<[u8]>::trim_ascii)
                .unwrap_or_default();
            if cell != value.as_bytes() {
                remember_label(&mut labels_seen, cell);
                continue;
            }
        }
        let group = match category_index {
            Some(index) => collector.group(record.get(index).unwrap_or_default()),
            None => 0,
        };
        collector.add(
            record.get(key_index).unwrap_or_default(),
            line,
            summary,
            group,
        )?;
        if summary.rows.is_multiple_of(PROGRESS_EVERY) {
            progress(csv.position().byte());
        }
    }
    if let Some((_, column, value)) = label {
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

/// Keeps up to eight distinct label values for the "no matching rows" message.
fn remember_label(seen: &mut Vec<String>, cell: &[u8]) {
    if seen.len() < 8 {
        let value = String::from_utf8_lossy(cell).into_owned();
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, name: &str, content: &[u8]) -> Input {
        let path = dir.join(name);
        File::create(&path).unwrap().write_all(content).unwrap();
        Input::Path(path)
    }

    fn read(input: &Input, options: &ListOptions) -> Result<(KeyList, ListSummary)> {
        read_list(input, options, &mut |_| {})
    }

    #[test]
    fn dataset_shaped_csv_selects_phishing_rows() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(
            dir.path(),
            "d.csv",
            b"url,isMalicious\nevil.com,-1\ngood.com,1\n\"a.com/x,y\",-1\nEVIL.com/,-1\nbroken\n",
        );
        let (keys, summary) = read(&input, &ListOptions::default()).unwrap();
        let keys: Vec<_> = keys.iter().collect();
        assert_eq!(keys, vec![&b"evil.com"[..], b"a.com/x,y"]);
        assert_eq!(summary.rows, 5);
        assert_eq!(summary.selected, 3);
        assert_eq!(summary.duplicates, 1);
        assert_eq!(summary.malformed, 1);
        assert_eq!(summary.malformed_examples[0].0, 6);
        assert_eq!(summary.label.as_deref(), Some("isMalicious = -1"));
    }

    #[test]
    fn csv_errors_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(dir.path(), "d.csv", b"link,label\nx,1\n");
        let error = read(&input, &ListOptions::default()).unwrap_err();
        assert!(matches!(error, Error::MissingColumn { .. }), "{error:?}");
        assert!(error.to_string().contains("link, label"));

        let input = write(dir.path(), "e.csv", b"url,isMalicious\nx,1\ny,1\n");
        let options = ListOptions {
            label: LabelFilter::Equals {
                column: "isMalicious".into(),
                value: "-7".into(),
            },
            ..ListOptions::default()
        };
        let error = read(&input, &options).unwrap_err();
        assert!(matches!(error, Error::NoMatchingRows { .. }), "{error:?}");
        assert!(error.to_string().contains("values seen: 1"), "{error}");
    }

    #[test]
    fn plain_lines_handle_blank_long_and_binary_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut content = b"one\r\n\n  \ntwo\n\xff\xfe\n".to_vec();
        content.extend(std::iter::repeat_n(b'x', MAX_KEY_BYTES + 10));
        content.extend_from_slice(b"\nthree");
        let input = write(dir.path(), "list.txt", &content);
        let options = ListOptions {
            scheme: KeyScheme::Exact,
            ..ListOptions::default()
        };
        let (keys, summary) = read(&input, &options).unwrap();
        let keys: Vec<_> = keys.iter().collect();
        assert_eq!(
            keys,
            vec![&b"one"[..], b"  ", b"two", b"\xff\xfe", b"three"]
        );
        assert_eq!(summary.blank, 1);
        assert_eq!(summary.malformed, 1);
        assert_eq!(summary.malformed_examples[0].0, 6);
    }

    #[test]
    fn empty_input_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let input = write(dir.path(), "empty.txt", b"\n\n");
        assert!(matches!(
            read(&input, &ListOptions::default()),
            Err(Error::EmptyInput { .. })
        ));
        let input = Input::Path(dir.path().to_path_buf());
        assert!(matches!(
            read(&input, &ListOptions::default()),
            Err(Error::IsADirectory { .. })
        ));
        let input = Input::Path(dir.path().join("missing"));
        assert!(matches!(
            read(&input, &ListOptions::default()),
            Err(Error::Io { .. })
        ));
    }

    #[test]
    fn bounded_line_reader_keeps_memory_bounded() {
        let data = vec![b'a'; 10_000];
        let mut reader = BufReader::with_capacity(64, &data[..]);
        let mut line = Vec::new();
        let (consumed, fits) = read_bounded_line(&mut reader, &mut line, 100).unwrap();
        assert_eq!((consumed, fits, line.len()), (10_000, false, 101));
        assert_eq!(read_bounded_line(&mut reader, &mut line, 100).unwrap().0, 0);
    }
}
