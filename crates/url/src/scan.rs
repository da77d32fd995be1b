//! Searching a byte string a window of bytes at a time: the window test is written so that the
//! compiler compares the whole window at once (SSE2 on x86-64), and the first hit is the lowest
//! bit of the window's mask (SSE2's `pmovmskb`, the one `unsafe` call here; a portable fold
//! elsewhere). Shared by the scheme split (`crate::scheme`), the fast path
//! (`crate::fast`) and the JSON printer of verdicts (its escapes).

/// Bytes tested per window: one SSE2 register (16 keeps the windows few for ~50-byte URLs).
const BLOCK: usize = 16;

/// Index of the first byte `b` of `s` with `hit(b, next)`, `next` being the byte after `b`
/// (0 after the last byte; `hit` must not rely on a 0 inside `s` meaning the end).
///
/// `hit` should combine its tests with `|` and `&`, not `||` and `&&`: without branches the
/// compiler can test a whole window at once.
///
/// Windows of `BLOCK` (16) bytes are tested at once (the last window overlaps the one before, so
/// there is no byte-by-byte tail); the first hit is the lowest set bit of its window's mask.
#[inline(always)]
pub fn find(s: &[u8], hit: impl Fn(u8, u8) -> bool + Copy) -> Option<usize> {
    let len = s.len();
    // A window needs the byte after its last one too: a shorter slice is copied into one, with
    // zeros after it (the 0 `next` of its last byte), and hits on the zeros are not counted.
    if len <= BLOCK {
        let mut padded = [0; BLOCK + 1];
        padded[..len].copy_from_slice(s);
        let (bytes, nexts) = windows(&padded, 0);
        // Hits on the zeros after `s` are not counted (`len` <= 16 < 32 bits).
        let hits = mask(bytes, nexts, hit) & ((1 << len) - 1);
        return (hits != 0).then(|| hits.trailing_zeros() as usize);
    }
    // Start of the last window: the one that ends just before the last byte.
    let last = len - 1 - BLOCK;
    let mut start = 0;
    loop {
        // Every byte before `start` missed, so a hit in an overlapping last window is new.
        let at = start.min(last);
        let (bytes, nexts) = windows(s, at);
        let hits = mask(bytes, nexts, hit);
        if hits != 0 {
            return Some(at + hits.trailing_zeros() as usize);
        }
        if at == last {
            break;
        }
        start += BLOCK;
    }
    hit(s[len - 1], 0).then_some(len - 1)
}

/// The positions of `byte` in `s`, as one bit per byte: bit `i` of word `w` is set where
/// `s[64 * w + i] == byte`, for every 64-byte piece of `s` in order (`visit(w, mask)`; the last
/// piece may be shorter). Stops early when `visit` returns `false`.
///
/// Each piece is tested `BLOCK` bytes at a time, the last window of a piece overlapping the
/// one before (its bits are the same bytes' bits again), so there is no byte-by-byte tail; a
/// piece shorter than one window is copied into one first.
#[inline(always)]
pub fn each_mask(s: &[u8], byte: u8, mut visit: impl FnMut(usize, u64) -> bool) {
    for (w, piece) in s.chunks(64).enumerate() {
        if !visit(w, piece_mask(piece, byte)) {
            return;
        }
    }
}

/// The positions of `byte` in `s`, ascending: [`each_mask`]'s bits as an iterator, for callers
/// that walk the positions one at a time (the line ends of a block of text). Each 64 bytes cost
/// one mask; each position, a few bit operations — no call per position.
pub fn positions(s: &[u8], byte: u8) -> Positions<'_> {
    Positions {
        s,
        byte,
        piece: 0,
        mask: s
            .get(..s.len().min(64))
            .map_or(0, |first| piece_mask(first, byte)),
    }
}

/// The iterator of [`positions`].
#[derive(Clone, Debug)]
pub struct Positions<'a> {
    s: &'a [u8],
    byte: u8,
    /// The 64-byte piece `mask` covers.
    piece: usize,
    /// The positions in that piece not yet yielded.
    mask: u64,
}

impl Iterator for Positions<'_> {
    type Item = usize;

    // The next position of a piece already masked costs a few bit operations, inlined into the
    // caller's loop; the masking of the next pieces is a call, once per 64 bytes at most.
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.mask == 0 && !self.next_piece() {
            return None;
        }
        let at = self.piece * 64 + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

impl Positions<'_> {
    /// Masks the pieces after the current one until one holds a position; `false` at the end.
    #[inline(never)]
    fn next_piece(&mut self) -> bool {
        while self.mask == 0 {
            self.piece += 1;
            let start = self.piece * 64;
            if start >= self.s.len() {
                return false;
            }
            let end = self.s.len().min(start + 64);
            self.mask = piece_mask(&self.s[start..end], self.byte);
        }
        true
    }
}

/// [`each_mask`]'s mask of one piece of at most 64 bytes.
#[inline(always)]
fn piece_mask(piece: &[u8], byte: u8) -> u64 {
    let len = piece.len();
    let eq = |window: &[u8; BLOCK]| {
        let mut flags = [0u8; BLOCK];
        for (flag, &b) in flags.iter_mut().zip(window) {
            *flag = u8::from(b == byte).wrapping_neg();
        }
        u64::from(pack(flags))
    };
    if let Some(whole) = piece.first_chunk::<64>() {
        // A whole piece (all but a text's last): four windows, no loop.
        let window = |at: usize| -> &[u8; BLOCK] {
            // In range: `at + BLOCK <= 64`.
            whole[at..]
                .first_chunk()
                .expect("a window of a whole piece")
        };
        // Written out: four windows of BLOCK (16) bytes make the piece.
        return eq(window(0))
            | eq(window(BLOCK)) << BLOCK
            | eq(window(2 * BLOCK)) << (2 * BLOCK)
            | eq(window(3 * BLOCK)) << (3 * BLOCK);
    }
    if len < BLOCK {
        let padded = padded(piece);
        // Hits on the padding are not counted (`len` < 16 < 64 bits).
        return eq(&padded) & ((1u64 << len) - 1);
    }
    let mut mask = 0;
    let mut at = 0;
    while at + BLOCK <= len {
        // In range: `at + BLOCK <= len`.
        let window = piece[at..].first_chunk().expect("a whole window is left");
        mask |= eq(window) << at;
        at += BLOCK;
    }
    if at < len {
        // The last `BLOCK` bytes (`len` >= `BLOCK`), overlapping the window before.
        let window = piece.last_chunk().expect("the piece has a whole window");
        mask |= eq(window) << (len - BLOCK);
    }
    mask
}

/// `s` (shorter than [`BLOCK`]) followed by zeros: copied as two overlapping pieces of a fixed
/// size (8 or 4 bytes, or byte by byte below 4), which compile to a few moves, where
/// `copy_from_slice` of a length known only at run time calls `memcpy` (and zeroing calls
/// `memset`): more than the window test the bytes are for.
#[inline(always)]
fn padded(s: &[u8]) -> [u8; BLOCK] {
    let mut out = [0u8; BLOCK];
    let len = s.len();
    debug_assert!(len < BLOCK, "a piece shorter than a window");
    if len >= 8 {
        out[..8].copy_from_slice(&s[..8]);
        out[len - 8..len].copy_from_slice(&s[len - 8..]);
    } else if len >= 4 {
        out[..4].copy_from_slice(&s[..4]);
        out[len - 4..len].copy_from_slice(&s[len - 4..]);
    } else if len > 0 {
        // 1 to 3 bytes: the first, the middle and the last cover them (a loop or a slice copy
        // compiles to `memcpy` again).
        out[0] = s[0];
        out[len / 2] = s[len / 2];
        out[len - 1] = s[len - 1];
    }
    out
}

/// Bit `i` set where `hit(bytes[i], nexts[i])` (`nexts[i]` is the byte after `bytes[i]`): the
/// flags are computed for the whole window at once, as 0x00 or 0xFF bytes, then packed one bit
/// per byte.
#[inline(always)]
fn mask(bytes: &[u8; BLOCK], nexts: &[u8; BLOCK], hit: impl Fn(u8, u8) -> bool) -> u32 {
    let mut flags = [0u8; BLOCK];
    for ((flag, &b), &n) in flags.iter_mut().zip(bytes).zip(nexts) {
        *flag = u8::from(hit(b, n)).wrapping_neg();
    }
    pack(flags)
}

/// The top bit of each byte of `flags`, byte `i` as bit `i`: SSE2's `pmovmskb`, one
/// instruction (a loop over the bytes costs more than the whole window test).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
#[allow(unsafe_code)]
fn pack(flags: [u8; BLOCK]) -> u32 {
    use std::arch::x86_64::{__m128i, _mm_movemask_epi8};
    // SAFETY: this is compiled only where SSE2 is enabled (`target_feature = "sse2"`, part of
    // the x86-64 baseline: every x86-64 processor has it), so the intrinsic's required feature
    // is present; `[u8; 16]` and `__m128i` have the same size (16 bytes) and every bit pattern is
    // a valid value of both.
    let packed = unsafe { _mm_movemask_epi8(std::mem::transmute::<[u8; BLOCK], __m128i>(flags)) };
    // `pmovmskb` sets only the low 16 bits: the value is non-negative.
    packed as u32
}

/// The top bit of each byte of `flags`, byte `i` as bit `i` (other targets).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn pack(flags: [u8; BLOCK]) -> u32 {
    pack_bytes(flags)
}

/// [`pack`] a byte at a time: other targets' `pack`, and the reference of its test.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn pack_bytes(flags: [u8; BLOCK]) -> u32 {
    flags
        .iter()
        .enumerate()
        .fold(0, |packed, (i, &flag)| packed | (u32::from(flag >> 7) << i))
}

/// The [`BLOCK`] bytes of `s` from `at`, and the [`BLOCK`] bytes from `at + 1` (the byte after
/// each); `s` has at least `at + BLOCK + 1` bytes.
#[inline(always)]
fn windows(s: &[u8], at: usize) -> (&[u8; BLOCK], &[u8; BLOCK]) {
    let window = &s[at..at + BLOCK + 1];
    // Both are in range: `window` has `BLOCK + 1` bytes.
    let bytes = window.first_chunk().expect("a window has BLOCK + 1 bytes");
    let nexts = window.last_chunk().expect("a window has BLOCK + 1 bytes");
    (bytes, nexts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`find`] answers as a byte-by-byte search, whatever the length (short, exact windows,
    /// an overlapping last window) and wherever the hits are (the last byte sees `next` 0).
    #[test]
    fn find_agrees_with_a_byte_search() {
        let slow = |s: &[u8]| {
            (0..s.len()).find(|&i| s[i] == b'/' && s.get(i + 1).is_none_or(|&n| n == b'/'))
        };
        for len in 0..70 {
            for first in 0..=len {
                for second in first..=len {
                    let mut s = vec![b'a'; len];
                    for at in [first, second] {
                        if at < len {
                            s[at] = b'/';
                        }
                    }
                    let fast = find(&s, |b, n| (b == b'/') & ((n == b'/') | (n == 0)));
                    assert_eq!(fast, slow(&s), "{len} {first} {second}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn pack_reads_the_top_bit_of_each_byte(flags in prop::array::uniform16(any::<u8>())) {
            prop_assert_eq!(pack(flags), pack_bytes(flags));
        }

        #[test]
        fn each_mask_marks_every_byte_equal(s in prop::collection::vec(prop::sample::select(vec![b'a', b'.', b'/', 0]), 0..200), byte in prop::sample::select(vec![b'.', b'/', 0])) {
            let mut fast = Vec::new();
            each_mask(&s, byte, |w, mut mask| {
                while mask != 0 {
                    fast.push(64 * w + mask.trailing_zeros() as usize);
                    mask &= mask - 1;
                }
                true
            });
            let slow: Vec<usize> = (0..s.len()).filter(|&i| s[i] == byte).collect();
            prop_assert_eq!(&fast, &slow);
            prop_assert_eq!(positions(&s, byte).collect::<Vec<_>>(), slow);
        }

        #[test]
        fn find_agrees_on_arbitrary_bytes(s in prop::collection::vec(prop::sample::select(vec![b'a', b'/', b'.', b'?', b'A']), 0..80)) {
            let hit = |b: u8, n: u8| (b == b'?') | ((b == b'/') & ((n | 1) == b'/'));
            let slow = (0..s.len()).find(|&i| hit(s[i], s.get(i + 1).map_or(0, |&n| n)));
            prop_assert_eq!(find(&s, hit), slow);
        }
    }
}
