//! Dumps of the filters created over the Redis protocol, in chunks, and their loading back
//! (RedisBloom's `SCANDUMP`/`LOADCHUNK` iterator), in this server's own format: a header
//! ([`Filter::header`], read back by [`Filter::from_header`]) — the magic, a type byte, then
//! the type's parameters and counts, written and read by the type itself — then the layers'
//! bytes in order ([`Filter::dump_chunk`], [`Filter::load_chunk`]).

use std::ops::Range;

use super::{Filter, FilterError, Result, ScalingBloom, ScalingCuckoo};

/// Bytes of filter data per `SCANDUMP` chunk (RedisBloom sends up to 16 MiB; smaller chunks
/// keep a reply well under the client's and this server's bulk limits).
pub const DUMP_CHUNK: usize = 1 << 20;

/// The first bytes of a dump's header, then one byte for the type.
const MAGIC: &[u8; 8] = b"PBADHOC1";

/// Layers a dump header may describe (RedisBloom's chains stay far below).
pub(super) const MAX_LAYERS: u32 = 64;

/// Little-endian reader of a dump header's fields.
pub(super) struct Header<'a>(&'a [u8]);

impl Header<'_> {
    pub(super) fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(FilterError::BadChunk("the header is cut short"))?;
        self.0 = rest;
        Ok(*head)
    }
    pub(super) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    pub(super) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    pub(super) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    pub(super) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.take()?))
    }

    /// A layer count within [`MAX_LAYERS`] (and not 0), or `error`.
    pub(super) fn layers(&mut self, error: &'static str) -> Result<u32> {
        let n = self.u32()?;
        if n == 0 || n > MAX_LAYERS {
            return Err(FilterError::BadChunk(error));
        }
        Ok(n)
    }
}

/// The pieces of `segments` (their lengths, in order) that the `len` bytes from `offset` of
/// their concatenation cover: each piece's segment and its range within it.
fn spans(
    segments: impl IntoIterator<Item = usize>,
    offset: u64,
    len: usize,
) -> Vec<(usize, Range<usize>)> {
    let mut pieces = Vec::new();
    let (mut skip, mut left) = (offset, len);
    for (i, segment) in segments.into_iter().enumerate() {
        if left == 0 {
            break;
        }
        if skip >= segment as u64 {
            skip -= segment as u64;
            continue;
        }
        // `skip` < `segment`, a usize.
        let start = skip as usize;
        skip = 0;
        let end = segment.min(start + left);
        left -= end - start;
        pieces.push((i, start..end));
    }
    pieces
}

impl Filter {
    fn segments(&self) -> Vec<&[u8]> {
        match self {
            Filter::Bloom(b) => b.segments(),
            Filter::Cuckoo(c) => c.segments(),
        }
    }

    fn segments_mut(&mut self) -> Vec<&mut [u8]> {
        match self {
            Filter::Bloom(b) => b.segments_mut(),
            Filter::Cuckoo(c) => c.segments_mut(),
        }
    }

    /// Bytes of data a dump carries after its header.
    pub fn data_len(&self) -> u64 {
        self.segments().iter().map(|s| s.len() as u64).sum()
    }

    /// The dump header: the type and every parameter and count, without the bits.
    pub fn header(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        match self {
            Filter::Bloom(b) => {
                out.push(b'B');
                b.write_header(&mut out);
            }
            Filter::Cuckoo(c) => {
                out.push(b'C');
                c.write_header(&mut out);
            }
        }
        out
    }

    /// A filter of the header's type and parameters, its bits all zero until the chunks are
    /// loaded; every parameter is checked as a new filter's are, and the size capped.
    pub fn from_header(bytes: &[u8]) -> Result<Filter> {
        let rest = bytes
            .strip_prefix(&MAGIC[..])
            .ok_or(FilterError::BadChunk("not a header of this server's dump"))?;
        let (&kind, rest) = rest
            .split_first()
            .ok_or(FilterError::BadChunk("the header is cut short"))?;
        let mut h = Header(rest);
        let filter = match kind {
            b'B' => Filter::Bloom(ScalingBloom::read_header(&mut h)?),
            b'C' => Filter::Cuckoo(ScalingCuckoo::read_header(&mut h)?),
            _ => return Err(FilterError::BadChunk("an unknown filter type")),
        };
        if !h.0.is_empty() {
            return Err(FilterError::BadChunk("bytes after the header"));
        }
        Ok(filter)
    }

    /// One step of the `SCANDUMP` iterator: for `iter` 0, `(1, header)`; then the data from
    /// offset `iter − 1`, at most [`DUMP_CHUNK`] bytes, with the next iterator (`iter` plus
    /// the bytes sent); past the end, `(0, [])`.
    pub fn dump_chunk(&self, iter: u64) -> (u64, Vec<u8>) {
        if iter == 0 {
            return (1, self.header());
        }
        let offset = iter - 1;
        let total = self.data_len();
        if offset >= total {
            return (0, Vec::new());
        }
        let want = (total - offset).min(DUMP_CHUNK as u64) as usize;
        let segments = self.segments();
        let mut chunk = Vec::with_capacity(want);
        for (i, range) in spans(segments.iter().map(|s| s.len()), offset, want) {
            chunk.extend_from_slice(&segments[i][range]);
        }
        (iter + chunk.len() as u64, chunk)
    }

    /// Loads a data chunk that `SCANDUMP` answered with iterator `iter` (it starts at
    /// `iter − 1 − chunk.len()`).
    pub fn load_chunk(&mut self, iter: u64, chunk: &[u8]) -> Result<()> {
        let offset = iter
            .checked_sub(1 + chunk.len() as u64)
            .ok_or(FilterError::BadChunk(
                "an iterator before the chunk's start",
            ))?;
        if offset.saturating_add(chunk.len() as u64) > self.data_len() {
            return Err(FilterError::BadChunk("past the filter's end"));
        }
        let mut segments = self.segments_mut();
        let lengths: Vec<usize> = segments.iter().map(|s| s.len()).collect();
        let mut rest = chunk;
        for (i, range) in spans(lengths, offset, chunk.len()) {
            let (piece, after) = rest.split_at(range.len());
            segments[i][range].copy_from_slice(piece);
            rest = after;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(filter: &Filter) -> Filter {
        let (mut iter, header) = filter.dump_chunk(0);
        let mut copy = Filter::from_header(&header).unwrap();
        loop {
            let (next, chunk) = filter.dump_chunk(iter);
            if next == 0 {
                assert!(chunk.is_empty());
                break;
            }
            copy.load_chunk(next, &chunk).unwrap();
            iter = next;
        }
        copy
    }

    #[test]
    fn dumps_load_back_in_chunks() {
        // Two layers and more than one chunk.
        let mut b = ScalingBloom::new(0.001, 700_000, Some(2)).unwrap();
        for i in 0..700_010u32 {
            b.add(&i.to_le_bytes()).unwrap();
        }
        let bloom = Filter::Bloom(b);
        assert!(bloom.data_len() > DUMP_CHUNK as u64);
        let Filter::Bloom(copy) = round_trip(&bloom) else {
            panic!("a Bloom filter's dump loads as a Bloom filter")
        };
        let Filter::Bloom(b) = &bloom else {
            unreachable!()
        };
        assert_eq!(copy.debug(), b.debug());
        assert!((0..700_010u32).all(|i| copy.contains(&i.to_le_bytes())));

        let mut c = ScalingCuckoo::new(64, 4, 10, 2).unwrap();
        for i in 0..300u32 {
            c.add(&i.to_le_bytes(), false).unwrap();
        }
        let Filter::Cuckoo(copy) = round_trip(&Filter::Cuckoo(c.clone())) else {
            panic!("a cuckoo filter's dump loads as a cuckoo filter")
        };
        assert_eq!((copy.items(), copy.filters()), (c.items(), c.filters()));
        assert!((0..300u32).all(|i| copy.count(&i.to_le_bytes()) == c.count(&i.to_le_bytes())));
    }

    #[test]
    fn bad_headers_and_chunks_are_refused() {
        let bloom = Filter::Bloom(ScalingBloom::new(0.01, 100, Some(2)).unwrap());
        let header = bloom.header();
        assert!(Filter::from_header(&header[..header.len() - 1]).is_err());
        assert!(Filter::from_header(b"nonsense").is_err());
        let mut huge = header.clone();
        // The first layer's bit count, after magic, type, rate, expansion, flag, items, count.
        let at = 8 + 1 + 8 + 4 + 1 + 8 + 4;
        huge[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(matches!(
            Filter::from_header(&huge),
            Err(FilterError::TooLarge { .. })
        ));
        let mut copy = Filter::from_header(&header).unwrap();
        let len = bloom.data_len();
        assert!(copy.load_chunk(len + 2, b"x").is_err());
        assert!(copy.load_chunk(1, b"x").is_err());
    }
}
