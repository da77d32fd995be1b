//! Little-endian encoding of fixed-layout records: a bounds-checked reader that never panics,
//! whatever bytes it is given, and the matching writer helpers. Every binary structure of the
//! file format (header, section table, section records) is read and written through these.

/// Reads little-endian fields from a byte slice, front to back. Each read checks that the bytes
/// are there and returns `None` past the end, so a truncated or hostile record becomes an error
/// of the caller's choosing, never an out-of-bounds panic.
#[derive(Clone, Debug)]
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        ByteReader { bytes, at: 0 }
    }

    /// The next `len` bytes.
    pub fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Some(slice)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// A `u8`.
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// A little-endian `u128`.
    pub fn u128(&mut self) -> Option<u128> {
        self.array().map(u128::from_le_bytes)
    }

    /// A little-endian IEEE-754 `f64`.
    pub fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }

    /// An unsigned LEB128 varint (at most 10 bytes; a value past 64 bits is `None`).
    pub fn varint(&mut self) -> Option<u64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A varint that must fit a `usize` count no larger than the bytes left (each counted item
    /// takes at least one byte), so that a hostile count cannot make the caller allocate more
    /// than the input holds.
    pub fn count(&mut self) -> Option<usize> {
        let count = usize::try_from(self.varint()?).ok()?;
        (count <= self.bytes.len() - self.at).then_some(count)
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.at
    }
}

/// Appends little-endian fields to a `Vec<u8>`: the writing side of [`ByteReader`].
pub trait PutLe {
    /// Appends a `u16`.
    fn put_u16(&mut self, value: u16);
    /// Appends a `u32`.
    fn put_u32(&mut self, value: u32);
    /// Appends a `u64`.
    fn put_u64(&mut self, value: u64);
    /// Appends a `u128`.
    fn put_u128(&mut self, value: u128);
    /// Appends an `f64`.
    fn put_f64(&mut self, value: f64);
    /// Appends zero bytes up to the next multiple of `align`.
    fn pad_to(&mut self, align: usize);
    /// Appends an unsigned LEB128 varint.
    fn put_varint(&mut self, value: u64);
}

impl PutLe for Vec<u8> {
    fn put_u16(&mut self, value: u16) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_u32(&mut self, value: u32) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_u64(&mut self, value: u64) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_u128(&mut self, value: u128) {
        self.extend_from_slice(&value.to_le_bytes());
    }
    fn put_f64(&mut self, value: f64) {
        self.put_u64(value.to_bits());
    }
    fn pad_to(&mut self, align: usize) {
        let len = self.len().next_multiple_of(align);
        self.resize(len, 0);
    }
    fn put_varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.push(value as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_reads_back_every_width() {
        let mut out = Vec::new();
        out.push(7);
        out.put_u16(0xbeef);
        out.put_u32(0xdead_beef);
        out.put_u64(u64::MAX - 1);
        out.put_u128(1 << 100);
        out.put_f64(0.01);
        out.pad_to(64);
        assert_eq!(out.len(), 64);
        let mut reader = ByteReader::new(&out);
        assert_eq!(reader.u8(), Some(7));
        assert_eq!(reader.u16(), Some(0xbeef));
        assert_eq!(reader.u32(), Some(0xdead_beef));
        assert_eq!(reader.u64(), Some(u64::MAX - 1));
        assert_eq!(reader.u128(), Some(1 << 100));
        assert_eq!(reader.f64(), Some(0.01));
        assert_eq!(reader.position(), 39);
        assert!(reader.rest().iter().all(|&b| b == 0));
    }

    #[test]
    fn reading_past_the_end_is_none_not_a_panic() {
        let mut reader = ByteReader::new(&[1, 2, 3]);
        assert_eq!(reader.u32(), None);
        assert_eq!(reader.u16(), Some(0x0201));
        assert_eq!(reader.u16(), None);
        assert_eq!(reader.take(usize::MAX), None);
        assert_eq!(reader.u8(), Some(3));
        assert_eq!(reader.u8(), None);
    }

    #[test]
    fn varints_round_trip_and_refuse_overlong_input() {
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut out = Vec::new();
        for &v in &values {
            out.put_varint(v);
        }
        let mut reader = ByteReader::new(&out);
        for &v in &values {
            assert_eq!(reader.varint(), Some(v));
        }
        assert_eq!(reader.varint(), None);
        // Eleven continuation bytes, or a tenth byte past 64 bits.
        assert_eq!(ByteReader::new(&[0xff; 11]).varint(), None);
        let mut big = vec![0xff; 9];
        big.push(0x02);
        assert_eq!(ByteReader::new(&big).varint(), None);
        // A count larger than the bytes left.
        assert_eq!(ByteReader::new(&[5, 0, 0]).count(), None);
        assert_eq!(ByteReader::new(&[2, 0, 0]).count(), Some(2));
    }
}
