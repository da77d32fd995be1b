//! Reading a list that is not a CSV line by line — plain lines, OpenPhish's feed, hosts files,
//! AdBlock rules — each line bounded in memory however long it is.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::collect::Collector;
use super::{refuse_csv_header, ListSummary, MAX_KEY_BYTES};
use crate::formats::{parse_adblock_line, parse_hosts_line, Line, ListFormat, Skip};
use crate::{Error, Result};

/// Reports progress every this many rows (cheap enough not to show in profiles).
pub(super) const PROGRESS_EVERY: u64 = 1 << 16;

/// How [`read_lines`] reads a list that is not a CSV.
#[derive(Clone, Copy)]
pub(super) struct LineReading {
    /// Lines, OpenPhish's feed, a hosts file or AdBlock rules.
    pub(super) format: ListFormat,
    /// Refuse a first line that is a CSV header.
    pub(super) sniff: bool,
    /// `#` lines of plain lines are comments (lines of entries, which never start with `#`).
    pub(super) comments: bool,
}

/// Reads a list that is not a CSV, line by line, into `collector`.
pub(super) fn read_lines(
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
        if number == 1 && how.sniff {
            refuse_csv_header(&line, path)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
