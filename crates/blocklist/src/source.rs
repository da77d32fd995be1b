//! List sources: a CSV with a header (the key column found by name, rows selected by a label)
//! or a plain list, one key per line, from a file or standard input — and, for lists of
//! entries, the formats admins already have, recognized by their content ([`crate::formats`]):
//! hosts files, AdBlock rules (with their exceptions), PhishTank's and URLhaus's CSVs,
//! OpenPhish's feed. Malformed rows, duplicates and skipped lines counted, not fatal. (UT1
//! category folders are read as two plain lists, see [`crate::entries`].)

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use phishbloom_filter::KeyHash;

use crate::formats::{detect, is_urlhaus_header, parse_adblock_line, parse_hosts_line};
use crate::formats::{Line, ListFormat, Skip};
use crate::partition::Partitioner;
use crate::{Error, Result};
use phishbloom_core::keys::KeyScheme;

use phishbloom_core::KeyList;

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

/// Collects distinct keys per group (category) and counts duplicates (by 128-bit xxh3: a false
/// "duplicate" needs a 128-bit collision, probability ~n²/2^129) — or, streaming
/// ([`Collector::hashing`]), only hashes the keys into partitions, which
/// [`crate::stream`] deduplicates afterwards.
pub(crate) struct Collector {
    groups: Vec<(String, KeyList, HashSet<u128>)>,
    scratch: Vec<u8>,
    scheme: KeyScheme,
    hashes: Option<Partitioner>,
    /// A list's own exceptions (AdBlock `@@` rules), when its lines are entries; `None` for
    /// whole keys, which have none.
    exceptions: Option<KeyList>,
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
            exceptions: None,
        }
    }

    /// A collector that also keeps the list's own exceptions (lines that are entries).
    fn with_exceptions(scheme: KeyScheme, default_group: &str) -> Self {
        Collector {
            exceptions: Some(KeyList::default()),
            ..Collector::new(scheme, default_group)
        }
    }

    /// Records an exception rule's entry, or counts it skipped when the list holds keys.
    fn add_exception(&mut self, raw: &[u8], summary: &mut ListSummary) {
        match &mut self.exceptions {
            Some(exceptions) if self.scheme.normalize_into(raw, &mut self.scratch) => {
                summary.exceptions += 1;
                exceptions.push(&self.scratch);
            }
            Some(_) => summary.blank += 1,
            None => summary.skip(Skip::Exception),
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

/// Reports progress every this many rows (cheap enough not to show in profiles).
const PROGRESS_EVERY: u64 = 1 << 16;

/// How [`read_lines`] reads a list that is not a CSV.
#[derive(Clone, Copy)]
struct LineReading {
    /// Lines, OpenPhish's feed, a hosts file or AdBlock rules.
    format: ListFormat,
    /// Refuse a first line that is a CSV header.
    sniff: bool,
    /// `#` lines of plain lines are comments (lines of entries, which never start with `#`).
    comments: bool,
}

fn read_lines(
    reader: Box<dyn Read + Send>,
    path: &Path,
    how: LineReading,
    collector: &mut Collector,
    summary: &mut ListSummary,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    summary.format = how.format.name();
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
        if number == 1 && how.sniff && looks_like_csv_header(&line) {
            return Err(Error::LooksLikeCsv {
                path: path.to_path_buf(),
                header: String::from_utf8_lossy(&line).trim_end().to_string(),
            });
        }
        if !complete {
            summary.selected += 1;
            summary.malformed(number, format!("line longer than {MAX_KEY_BYTES} bytes"));
        } else {
            let parsed = match how.format {
                ListFormat::Hosts => Some(parse_hosts_line(&line)),
                ListFormat::Adblock => Some(parse_adblock_line(&line)),
                _ if how.comments && line.trim_ascii_start().starts_with(b"#") => {
                    Some(Line::Skip(Skip::Comment))
                }
                // Plain lines, the common case: the line is the key.
                _ => None,
            };
            match parsed {
                None => collector.add(&line, number, summary, 0)?,
                Some(parsed) => take_line(parsed, number, collector, summary)?,
            }
        }
        if number.is_multiple_of(PROGRESS_EVERY) {
            progress(bytes_read);
        }
    }
}

/// Records what one line of a hosts file or an AdBlock list holds.
fn take_line(
    parsed: Line<'_>,
    number: u64,
    collector: &mut Collector,
    summary: &mut ListSummary,
) -> Result<()> {
    match parsed {
        Line::Block(keys) => {
            for key in keys {
                collector.add(key, number, summary, 0)?;
            }
        }
        Line::Blank => {
            summary.selected += 1;
            summary.blank += 1;
        }
        Line::Allow(entry) => collector.add_exception(entry, summary),
        Line::Skip(reason) => summary.skip(reason),
        Line::Malformed(reason) => {
            summary.selected += 1;
            summary.malformed(number, reason);
        }
    }
    Ok(())
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
