//! List sources: a CSV with a header (the key column found by name, rows selected by a label)
//! or a plain list, one key per line, from a file or standard input — and, for lists of
//! entries, the formats admins already have, recognized by their content ([`crate::formats`]):
//! hosts files, AdBlock rules (with their exceptions), PhishTank's and URLhaus's CSVs,
//! OpenPhish's feed. Malformed rows, duplicates and skipped lines counted, not fatal. (UT1
//! category folders are read as two plain lists, see [`crate::entries`].)
//!
//! This module holds the inputs, options and summaries and chooses how a list is read; the
//! reading itself is by job: [`csv_rows`] (CSVs), [`lines`] (every other format, line by
//! line, each line bounded) and [`collect`] (the keys kept, distinct, by group).

mod collect;
mod csv_rows;
mod lines;

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use phishbloom_filter::KeyHash;

use crate::formats::{detect, ListFormat, Skip};
use crate::{Error, Result};
use phishbloom_core::keys::KeyScheme;

use phishbloom_core::KeyList;

pub(crate) use collect::Collector;
pub(crate) use csv_rows::read_csv;
pub use lines::read_bounded_line;
use lines::{read_lines, LineReading};

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

    /// [`Input::open_list`], with a copy of the list's first `head_bytes` decoded bytes (to
    /// recognize its format).
    pub fn open_list_with_head(
        &self,
        keys_are_bytes: bool,
        head_bytes: usize,
    ) -> Result<(Box<dyn Read + Send>, Vec<u8>)> {
        let (reader, _, head) = crate::decode::open_list_with_head(
            self.open()?,
            &self.display_path(),
            keys_are_bytes,
            head_bytes,
        )?;
        Ok((reader, head))
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
    /// Recognized: for lists of entries by their content ([`crate::formats::detect`]: hosts,
    /// AdBlock, PhishTank, URLhaus, else CSV by a `.csv` name, else lines); for lists of whole
    /// keys by the name alone (CSV if it ends in `.csv`, otherwise one key per line), since a
    /// key may look like anything.
    #[default]
    Auto,
    /// CSV with a header row.
    Csv,
    /// One key per line.
    Lines,
    /// A hosts file ([`ListFormat::Hosts`]).
    Hosts,
    /// AdBlock / uBlock Origin rules ([`ListFormat::Adblock`]).
    Adblock,
    /// PhishTank's CSV ([`ListFormat::Phishtank`]).
    Phishtank,
    /// URLhaus's CSV ([`ListFormat::Urlhaus`]).
    Urlhaus,
    /// OpenPhish's feed ([`ListFormat::Openphish`]): one URL per line.
    Openphish,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 8] = [
        Format::Auto,
        Format::Csv,
        Format::Lines,
        Format::Hosts,
        Format::Adblock,
        Format::Phishtank,
        Format::Urlhaus,
        Format::Openphish,
    ];

    /// Its name (`auto`, or the forced format's, as `--format` takes it).
    pub fn name(self) -> &'static str {
        self.forced().map_or("auto", ListFormat::name)
    }

    /// The format a name ([`Format::name`]) names.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }

    /// The format this one forces, `None` for [`Format::Auto`].
    pub fn forced(self) -> Option<ListFormat> {
        Some(match self {
            Format::Auto => return None,
            Format::Csv => ListFormat::Csv,
            Format::Lines => ListFormat::Lines,
            Format::Hosts => ListFormat::Hosts,
            Format::Adblock => ListFormat::Adblock,
            Format::Phishtank => ListFormat::Phishtank,
            Format::Urlhaus => ListFormat::Urlhaus,
            Format::Openphish => ListFormat::Openphish,
        })
    }

    /// Whether `input` is read as CSV: always with a CSV format ([`Format::Csv`], PhishTank's,
    /// URLhaus's), never with the others, by a `.csv` file name (any case) with
    /// [`Format::Auto`] — so never standard input unless the format says CSV. (A list of
    /// entries may still be recognized as PhishTank's or URLhaus's CSV by its content.)
    pub fn reads_as_csv(self, input: &Input) -> bool {
        match self.forced() {
            Some(format) => format.is_csv(),
            None => has_csv_name(input),
        }
    }
}

/// Whether the input is a file named `*.csv` (any case).
fn has_csv_name(input: &Input) -> bool {
    matches!(input, Input::Path(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")))
}

/// How much of a list's start [`crate::formats::detect`] is given: 16 KiB, a few hundred
/// lines.
const DETECT_BYTES: usize = 16 << 10;

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

impl LabelFilter {
    /// The rows a build's label options select: every row with `all_rows`; rows whose
    /// `column` (default `isMalicious`) equals `value` when a value is given; else the default.
    pub fn from_options(column: Option<&str>, value: Option<&str>, all_rows: bool) -> Self {
        match (column, value, all_rows) {
            (_, _, true) => LabelFilter::All,
            (column, Some(value), _) => LabelFilter::Equals {
                column: column.unwrap_or(DEFAULT_LABEL.0).to_string(),
                value: value.to_string(),
            },
            _ => LabelFilter::Default,
        }
    }
}

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
    /// The format read ([`ListFormat::name`]: `csv`, `lines`, `hosts`, …).
    pub format: &'static str,
    /// Data rows or lines read (header excluded).
    pub rows: u64,
    /// Rows whose label selected them (all rows without a label filter), or keys taken from
    /// lines (a hosts line may give several), blank ones included.
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
    /// Lines that held nothing to block, by reason (comments, localhost lines, cosmetic rules,
    /// …); not counted in `selected`.
    pub skipped: BTreeMap<Skip, u64>,
    /// Exceptions read from the list itself (AdBlock `@@` rules).
    pub exceptions: u64,
}

impl ListSummary {
    /// Counts one line skipped for `reason`.
    pub fn skip(&mut self, reason: Skip) {
        self.skip_many(reason, 1);
    }

    fn skip_many(&mut self, reason: Skip, count: u64) {
        if count > 0 {
            *self.skipped.entry(reason).or_default() += count;
        }
    }

    /// The skipped lines in words, most frequent reason first within the summary's order
    /// (`12 comments, 3 localhost lines`), or `None` when no line was skipped.
    pub fn skipped_text(&self) -> Option<String> {
        let parts: Vec<String> = Skip::ALL
            .iter()
            .filter_map(|reason| {
                let count = *self.skipped.get(reason)?;
                Some(format!("{count} {}", reason.describe(count)))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

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

/// What [`read_entry_list`] read: the groups of entry lines, the list's own exceptions
/// (AdBlock `@@` rules) and the summary.
pub(crate) struct ListParts {
    /// Lines (entries or keys) by category.
    pub groups: Vec<(String, KeyList)>,
    /// The list's own exceptions.
    pub exceptions: KeyList,
    /// What reading found.
    pub summary: ListSummary,
}

/// [`read_list_groups`], saying whether the keys may be any bytes (`keys_are_bytes`: binary
/// input is not refused) whatever `options.scheme` reads them as. [`Format::Auto`] goes by the
/// file's name: keys may look like anything.
pub(crate) fn read_list_groups_of(
    input: &Input,
    options: &ListOptions,
    category: &str,
    progress: &mut dyn FnMut(u64),
    keys_are_bytes: bool,
) -> Result<(Vec<(String, KeyList)>, ListSummary)> {
    let path = input.display_path();
    let format = options.format.forced().unwrap_or(if has_csv_name(input) {
        ListFormat::Csv
    } else {
        ListFormat::Lines
    });
    let sniff = options.format == Format::Auto && format == ListFormat::Lines;
    let reader = input.open_list(keys_are_bytes)?;
    let collector = Collector::new(options.scheme, category);
    let parts = read_parts(reader, &path, format, sniff, options, collector, progress)?;
    Ok((parts.groups, parts.summary))
}

/// Reads a list of entries as raw lines (`options.scheme` should be [`KeyScheme::Exact`]: the
/// lines are parsed as entries afterwards): [`Format::Auto`] recognizes the format by content
/// ([`detect`]), `#` lines of a plain list are comments, and AdBlock exceptions are kept apart.
pub(crate) fn read_entry_list(
    input: &Input,
    options: &ListOptions,
    category: &str,
) -> Result<ListParts> {
    let path = input.display_path();
    let (reader, format, sniff) = match options.format.forced() {
        Some(format) => (input.open_list(false)?, format, false),
        None => {
            let (reader, head) = input.open_list_with_head(false, DETECT_BYTES)?;
            let format = detect(&head, has_csv_name(input));
            (reader, format, format == ListFormat::Lines)
        }
    };
    let collector = Collector::with_exceptions(options.scheme, category);
    read_parts(
        reader,
        &path,
        format,
        sniff,
        options,
        collector,
        &mut |_| {},
    )
}

/// [`read_list`] from any reader (`csv` chooses the format; `path` names it in messages).
pub fn read_list_from(
    reader: Box<dyn Read + Send>,
    path: &Path,
    csv: bool,
    options: &ListOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<(KeyList, ListSummary)> {
    let format = if csv {
        ListFormat::Csv
    } else {
        ListFormat::Lines
    };
    let sniff = !csv && options.format == Format::Auto;
    let collector = Collector::new(options.scheme, "");
    let parts = read_parts(reader, path, format, sniff, options, collector, progress)?;
    let mut keys = KeyList::default();
    for (_, group) in &parts.groups {
        keys.extend(group);
    }
    Ok((keys, parts.summary))
}

/// Reads `reader` in `format` into `collector`'s groups; `sniff` refuses plain lines that
/// start with a CSV header. A list that gave neither a key nor an exception is an error.
fn read_parts(
    reader: Box<dyn Read + Send>,
    path: &Path,
    format: ListFormat,
    sniff: bool,
    options: &ListOptions,
    mut collector: Collector,
    progress: &mut dyn FnMut(u64),
) -> Result<ListParts> {
    let path = path.to_path_buf();
    let mut summary = ListSummary::default();
    if format.is_csv() {
        read_csv(
            reader,
            &path,
            format,
            options,
            &mut collector,
            &mut summary,
            progress,
        )?;
    } else {
        let lines = LineReading {
            format,
            sniff,
            comments: collector.exceptions.is_some(),
        };
        read_lines(reader, &path, lines, &mut collector, &mut summary, progress)?;
    }
    let exceptions = collector.exceptions.take().unwrap_or_default();
    let groups: Vec<(String, KeyList)> = collector
        .groups
        .into_iter()
        .filter(|(_, keys, _)| !keys.is_empty())
        .map(|(name, keys, _)| (name, keys))
        .collect();
    if groups.is_empty() && exceptions.is_empty() {
        return Err(summary.empty_input(path));
    }
    Ok(ListParts {
        groups,
        exceptions,
        summary,
    })
}

/// Refuses a plain list whose first line (without its `\n`) is a CSV header
/// ([`looks_like_csv_header`]), naming the header.
pub(crate) fn refuse_csv_header(first_line: &[u8], path: &Path) -> Result<()> {
    if looks_like_csv_header(first_line) {
        return Err(Error::LooksLikeCsv {
            path: path.to_path_buf(),
            header: String::from_utf8_lossy(first_line).trim_end().to_string(),
        });
    }
    Ok(())
}

/// Whether a plain list's first line looks like a CSV header (`url,isMalicious`): two or more
/// comma-separated fields, each a column name — letters, digits, `_`, `-` or spaces, starting
/// with a letter — and none of them a host or URL. Such a list read as lines would make its
/// header and its rows (`evil.com,-1`) into keys.
pub(crate) fn looks_like_csv_header(line: &[u8]) -> bool {
    let line = phishbloom_text::line::content(line);
    let fields: Vec<&[u8]> = line.split(|&b| b == b',').map(<[u8]>::trim_ascii).collect();
    fields.len() >= 2
        && fields.iter().all(|field| {
            field.first().is_some_and(u8::is_ascii_alphabetic)
                && field
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' '))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn every_format_is_found_by_its_name() {
        for format in Format::ALL {
            assert_eq!(Format::from_name(format.name()), Some(format));
        }
        assert_eq!(Format::from_name("yaml"), None);
    }

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
    fn urlhaus_comments_are_counted_and_line_numbers_stay_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let text = "#####\n# URLhaus\n#\n# id,dateadded,url,url_status\n\
                    \"1\",\"2025-01-01\",\"http://a.example/x\",\"online\"\n\
                    \"2\",\"2025-01-01\"\n\
                    # a comment between rows\n\
                    \"3\",\"2025-01-01\",\"http://b.example/y,z\",\"offline\"\n";
        let input = write(dir.path(), "csv.txt", text.as_bytes());
        let options = ListOptions {
            format: Format::Urlhaus,
            ..ListOptions::default()
        };
        let (keys, summary) = read(&input, &options).unwrap();
        let keys: Vec<_> = keys.iter().collect();
        assert_eq!(keys, vec![&b"a.example/x"[..], b"b.example/y,z"]);
        assert_eq!(summary.format, "urlhaus");
        assert_eq!(summary.skipped.get(&Skip::Comment), Some(&4));
        // The short row is line 6 of the file.
        assert_eq!(summary.malformed_examples[0].0, 6);
        // An uncommented header is the header too.
        let input = write(
            dir.path(),
            "plain.txt",
            b"id,dateadded,url\n1,2025,http://c.example/\n",
        );
        let (keys, _) = read(&input, &options).unwrap();
        assert_eq!(keys.iter().collect::<Vec<_>>(), vec![&b"c.example"[..]]);
    }

    #[test]
    fn entry_lists_are_recognized_and_keep_their_exceptions() {
        let dir = tempfile::tempdir().unwrap();
        let raw = ListOptions {
            scheme: KeyScheme::Exact,
            ..ListOptions::default()
        };
        let input = write(
            dir.path(),
            "f.txt",
            b"! t\n||a.example^\n@@||b.a.example^\nx.example##.ad\n",
        );
        let parts = read_entry_list(&input, &raw, "f").unwrap();
        assert_eq!(parts.summary.format, "adblock");
        assert_eq!(parts.groups[0].1.iter().collect::<Vec<_>>(), [b"a.example"]);
        assert_eq!(
            parts.exceptions.iter().collect::<Vec<_>>(),
            [b"b.a.example"]
        );
        assert_eq!(
            parts.summary.skipped_text().as_deref(),
            Some("1 comment, 1 cosmetic rule")
        );
        // A plain list of entries: `#` lines are comments.
        let input = write(dir.path(), "l.txt", b"# my list\nevil.example\n");
        let parts = read_entry_list(&input, &raw, "l").unwrap();
        assert_eq!(parts.summary.format, "lines");
        assert_eq!(parts.summary.skipped.get(&Skip::Comment), Some(&1));
        // A list of whole keys keeps `#` lines as keys, and has no exceptions.
        let (keys, summary) = read(&input, &raw).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(summary.skipped.is_empty());
        let options = ListOptions {
            format: Format::Adblock,
            ..raw.clone()
        };
        let input = write(dir.path(), "k.txt", b"||a.example^\n@@||b.example^\n");
        let (keys, summary) = read(&input, &options).unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(
            summary.skipped_text().as_deref(),
            Some("1 exception rule (a list of keys has no exceptions)")
        );
    }

    proptest::proptest! {
        /// No list in any format panics the reader (errors are fine): lines of rule-like
        /// bytes, through every format's reading, URLhaus's comment filter included.
        #[test]
        fn no_list_panics_any_format(
            lines in proptest::collection::vec("[|@^$#!/*.,=~\" a-z0-9:%\\[\\]\t-]{0,40}", 0..12)
        ) {
            let text = lines.join("\n");
            let formats = [
                ListFormat::Lines,
                ListFormat::Csv,
                ListFormat::Hosts,
                ListFormat::Adblock,
                ListFormat::Phishtank,
                ListFormat::Urlhaus,
                ListFormat::Openphish,
            ];
            for format in formats {
                let reader = Box::new(std::io::Cursor::new(text.clone().into_bytes()));
                let collector = Collector::with_exceptions(KeyScheme::Exact, "p");
                let _ = read_parts(
                    reader,
                    Path::new("p"),
                    format,
                    true,
                    &ListOptions::default(),
                    collector,
                    &mut |_| {},
                );
            }
        }
    }
}
