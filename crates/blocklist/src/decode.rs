//! What a list file's bytes are before they are lines: gzip or zstd read directly (by their
//! magic bytes, whatever the file's name — standard input too), a UTF-8 byte-order mark
//! dropped, and input that is not text refused — an executable or a delta given as a list would
//! otherwise become a list of garbage keys with exit 0.

use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::{Error, Result};

/// The first bytes of a gzip stream (RFC 1952, ID1 ID2).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The first bytes of a zstd frame (RFC 8878, magic number 0xFD2FB528 little-endian).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The UTF-8 encoding of U+FEFF, which some editors put before the first line.
const BOM: [u8; 3] = [0xef, 0xbb, 0xbf];

/// How much of the start of a list is looked at to decide that it is text: 64 KiB, hundreds of
/// lines of any list.
pub const SNIFF_BYTES: usize = 64 << 10;

/// What [`open_list`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decoding {
    /// The compression undone: `None`, `"gzip"` or `"zstd"`.
    pub compression: Option<&'static str>,
    /// Whether a byte-order mark was dropped.
    pub bom: bool,
}

/// The lines of a list from `reader`: decompressed when it starts with gzip's or zstd's magic,
/// without a leading byte-order mark, and — unless `keys_are_bytes` (`--exact`: keys may be
/// any bytes) — refused when most of the lines in its first 64 KiB hold a NUL byte or
/// invalid UTF-8. `path` names the input in errors.
pub fn open_list(
    reader: Box<dyn Read + Send>,
    path: &Path,
    keys_are_bytes: bool,
) -> Result<(Box<dyn Read + Send>, Decoding)> {
    open_list_with_head(reader, path, keys_are_bytes, 0)
        .map(|(reader, decoding, _)| (reader, decoding))
}

/// [`open_list`], also returning a copy of the list's first `head_bytes` bytes (at most
/// [`SNIFF_BYTES`]) as they will be read — decompressed, without a byte-order mark — for
/// recognizing its format ([`crate::formats::detect`]).
pub fn open_list_with_head(
    reader: Box<dyn Read + Send>,
    path: &Path,
    keys_are_bytes: bool,
    head_bytes: usize,
) -> Result<(Box<dyn Read + Send>, Decoding, Vec<u8>)> {
    let mut decoding = Decoding::default();
    let mut raw = BufReader::with_capacity(1 << 16, reader);
    let magic = peek(&mut raw, 4).map_err(|e| Error::io(path, "read", e))?;
    let decoded: Box<dyn Read + Send> = if magic.starts_with(&GZIP_MAGIC) {
        decoding.compression = Some("gzip");
        Box::new(flate2::read::MultiGzDecoder::new(raw))
    } else if magic.starts_with(&ZSTD_MAGIC) {
        decoding.compression = Some("zstd");
        Box::new(
            zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| Error::io(path, "start reading zstd", e))?,
        )
    } else {
        Box::new(raw)
    };
    let what = decoding.compression.unwrap_or("read");
    let mut decoded = decoded;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut decoded)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, if what == "read" { "read" } else { "decompress" }, e))?;
    if head.starts_with(&BOM) {
        head.drain(..BOM.len());
        decoding.bom = true;
    }
    if !keys_are_bytes {
        let full = head.len() < SNIFF_BYTES;
        if let Some(detail) = not_text(&head, full) {
            return Err(Error::NotText {
                path: path.to_path_buf(),
                detail,
            });
        }
    }
    let copy = head[..head.len().min(head_bytes)].to_vec();
    Ok((Box::new(Cursor::new(head).chain(decoded)), decoding, copy))
}

/// Up to `n` bytes at the start of `reader`, left unread.
fn peek<R: Read>(reader: &mut BufReader<R>, n: usize) -> std::io::Result<Vec<u8>> {
    let buffered = reader.fill_buf()?;
    Ok(buffered[..buffered.len().min(n)].to_vec())
}

/// Why `head` (the start of an input; all of it when `full`) is not a text list, if it is not:
/// most of its lines hold a NUL byte or invalid UTF-8. A line cut by the end of `head` is not
/// judged (it may end in half a character).
pub fn not_text(head: &[u8], full: bool) -> Option<String> {
    let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if !full && lines.len() > 1 {
        lines.pop();
    }
    let lines: Vec<&[u8]> = lines.into_iter().filter(|l| !l.is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let nul = lines.iter().filter(|l| l.contains(&0)).count();
    let invalid = lines
        .iter()
        .filter(|l| !l.contains(&0) && std::str::from_utf8(l).is_err())
        .count();
    // "Most": more than half of the lines judged.
    if (nul + invalid) * 2 > lines.len() {
        return Some(format!(
            "{} of the first {} lines hold NUL bytes and {} are not UTF-8",
            nul,
            lines.len(),
            invalid
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(bytes: Vec<u8>, exact: bool) -> Result<(Vec<u8>, Decoding)> {
        let (mut reader, decoding) =
            open_list(Box::new(Cursor::new(bytes)), Path::new("t"), exact)?;
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        Ok((out, decoding))
    }

    #[test]
    fn gzip_and_zstd_are_read_by_their_magic() {
        let text = b"evil.example\nbad.example/login\n".repeat(5000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let (out, decoding) = read(gz.finish().unwrap(), false).unwrap();
        assert_eq!(out, text);
        assert_eq!(decoding.compression, Some("gzip"));
        let zst = zstd::encode_all(&text[..], 3).unwrap();
        let (out, decoding) = read(zst, false).unwrap();
        assert_eq!(out, text);
        assert_eq!(decoding.compression, Some("zstd"));
        let (out, decoding) = read(text.clone(), false).unwrap();
        assert_eq!((out, decoding), (text, Decoding::default()));
    }

    #[test]
    fn a_byte_order_mark_is_dropped_once() {
        let (out, decoding) = read(b"\xef\xbb\xbfpassword123\nletmein\n".to_vec(), true).unwrap();
        assert_eq!(out, b"password123\nletmein\n");
        assert!(decoding.bom);
        let (out, _) = read(b"a\n\xef\xbb\xbfb\n".to_vec(), true).unwrap();
        assert_eq!(out, b"a\n\xef\xbb\xbfb\n");
    }

    #[test]
    fn binary_input_is_refused_unless_keys_are_bytes() {
        let binary: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 256) as u8).collect();
        assert!(matches!(
            read(binary.clone(), false),
            Err(Error::NotText { .. })
        ));
        assert!(read(binary, true).is_ok());
        // A few Latin-1 lines in a UTF-8 list are lines, not a binary file.
        let mostly_text = b"caf\xe9.example\nevil.example\nbad.example\n".to_vec();
        assert!(read(mostly_text, false).is_ok());
        assert!(read(Vec::new(), false).is_ok());
    }
}
