//! Searching a byte string a window of bytes at a time, without `unsafe` or platform code:
//! the window test is written so that the compiler compares the whole window at once (SSE2 on
//! x86-64), and only the window with the first hit is searched byte by byte. Shared by the
//! scheme split ([`crate::scheme`]), the fast path ([`crate::fast`]) and the JSON printer of
//! verdicts (its escapes).

/// Bytes tested per window: one SSE2 register (16 keeps the windows few for ~50-byte URLs).
const BLOCK: usize = 16;

/// Index of the first byte `b` of `s` with `hit(b, next)`, `next` being the byte after `b`
/// (0 after the last byte; `hit` must not rely on a 0 inside `s` meaning the end).
///
/// `hit` should combine its tests with `|` and `&`, not `||` and `&&`: without branches the
/// compiler can test a whole window at once.
///
/// Windows of [`BLOCK`] bytes are tested at once (the last window overlaps the one before, so
/// there is no byte-by-byte tail); only the window with the first hit is searched byte by byte.
#[inline(always)]
pub fn find(s: &[u8], hit: impl Fn(u8, u8) -> bool + Copy) -> Option<usize> {
    let len = s.len();
    // A window needs the byte after its last one too: a shorter slice is copied into one, with
    // zeros after it (the 0 `next` of its last byte), and hits on the zeros are not counted.
    if len <= BLOCK {
        let mut padded = [0; BLOCK + 1];
        padded[..len].copy_from_slice(s);
        let (bytes, nexts) = windows(&padded, 0);
        if !any(bytes, nexts, hit) {
            return None;
        }
        return bytes
            .iter()
            .zip(nexts)
            .position(|(&b, &n)| hit(b, n))
            .filter(|&i| i < len);
    }
    // Start of the last window: the one that ends just before the last byte.
    let last = len - 1 - BLOCK;
    let mut start = 0;
    loop {
        // Every byte before `start` missed, so a hit in an overlapping last window is new.
        let at = start.min(last);
        let (bytes, nexts) = windows(s, at);
        if any(bytes, nexts, hit) {
            return bytes
                .iter()
                .zip(nexts)
                .position(|(&b, &n)| hit(b, n))
                .map(|i| at + i);
        }
        if at == last {
            break;
        }
        start += BLOCK;
    }
    hit(s[len - 1], 0).then_some(len - 1)
}

/// Whether `hit(b, next)` for a byte `b` of `bytes` and the byte `next` after it in `nexts`,
/// all tested at once.
#[inline(always)]
fn any(bytes: &[u8; BLOCK], nexts: &[u8; BLOCK], hit: impl Fn(u8, u8) -> bool) -> bool {
    bytes
        .iter()
        .zip(nexts)
        .fold(false, |any, (&b, &n)| any | hit(b, n))
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
        fn find_agrees_on_arbitrary_bytes(s in prop::collection::vec(prop::sample::select(vec![b'a', b'/', b'.', b'?', b'A']), 0..80)) {
            let hit = |b: u8, n: u8| (b == b'?') | ((b == b'/') & ((n | 1) == b'/'));
            let slow = (0..s.len()).find(|&i| hit(s[i], s.get(i + 1).map_or(0, |&n| n)));
            prop_assert_eq!(find(&s, hit), slow);
        }
    }
}
