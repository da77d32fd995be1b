//! The bit array behind every filter: 64-byte-aligned blocks, on the heap or, for large arrays,
//! in an anonymous mapping that the kernel zeroes lazily.
//!
//! Both layouts store their bits in [`Block`]s of 512 bits so that a block never straddles two
//! cache lines. Words are little-endian `u64`s; bit `i` of the array is bit `i % 64` of word
//! `i / 64`. Nothing here maps a file: a filter read from disk is copied into memory, so that a
//! file replaced or truncated later cannot change or fault a filter in use.

use std::sync::atomic::AtomicU64;

use bytemuck::{Pod, Zeroable};
use memmap2::MmapMut;

/// One cache line of bits: eight 64-bit words, aligned to 64 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct Block(pub [u64; 8]);

/// Bytes in one [`Block`].
pub const BLOCK_BYTES: usize = 64;

/// The storage of a filter's bits.
pub(crate) enum Storage {
    /// Bits on the heap.
    Owned(Vec<Block>),
    /// Bits in an anonymous private mapping (never file-backed), for large new filters.
    Anonymous {
        /// The mapping; its length is `blocks · 64`.
        map: MmapMut,
        /// Number of blocks.
        blocks: usize,
    },
}

impl Storage {
    /// `blocks` zeroed blocks. Large arrays (≥ 1 MiB) are an anonymous mapping, whose pages the
    /// kernel zeroes lazily on first touch, so a 100 MB filter is created in microseconds (the
    /// allocator would memset 64-byte-aligned memory eagerly); small ones are a `Vec`.
    pub(crate) fn zeroed(blocks: usize) -> crate::Result<Storage> {
        /// Below this, a heap allocation is cheaper than a system call.
        const ANONYMOUS_MIN_BYTES: usize = 1 << 20;
        let bytes = blocks.saturating_mul(BLOCK_BYTES);
        if bytes >= ANONYMOUS_MIN_BYTES {
            // A failed mapping (address space exhausted; or no mappings at all, as on wasm32,
            // where memmap2 compiles to a stub that always fails) falls back to the allocator
            // below, which reports the failure the usual way.
            if let Ok(map) = MmapMut::map_anon(bytes) {
                // Ask for transparent huge pages (Linux; where THP is `madvise`, as here): a
                // probe of a filter larger than the cache is a random access, and with 4 KiB
                // pages nearly every one also misses the TLB (a 360 MiB filter spans 92,000
                // pages). Only a hint: refused or unsupported, the mapping works as it is.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                return Ok(Storage::Anonymous { map, blocks });
            }
        }
        bytemuck::allocation::try_zeroed_vec(blocks)
            .map(Storage::Owned)
            .map_err(|()| crate::Error::OutOfMemory {
                bytes: bytes as u64,
            })
    }

    /// The bits as blocks.
    #[inline(always)]
    pub(crate) fn blocks(&self) -> &[Block] {
        match self {
            Storage::Owned(blocks) => blocks,
            // The mapping is page-aligned and `blocks · 64` bytes long (`zeroed` made it so), so
            // the cast to 64-byte-aligned blocks cannot fail.
            Storage::Anonymous { map, blocks } => {
                bytemuck::cast_slice(&map[..blocks * BLOCK_BYTES])
            }
        }
    }

    /// The bits as mutable blocks.
    #[inline(always)]
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block] {
        match self {
            Storage::Owned(blocks) => blocks,
            // Same bounds and alignment argument as in `blocks`.
            Storage::Anonymous { map, blocks } => {
                bytemuck::cast_slice_mut(&mut map[..*blocks * BLOCK_BYTES])
            }
        }
    }

    /// The bits as words.
    #[inline(always)]
    pub(crate) fn words(&self) -> &[u64] {
        bytemuck::cast_slice(self.blocks())
    }

    /// The bits as mutable words.
    #[inline(always)]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        bytemuck::cast_slice_mut(self.blocks_mut())
    }

    /// The bits as bytes, in file order (little-endian words).
    pub(crate) fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self.blocks())
    }

    /// The words as atomics, for inserting from several threads at once.
    ///
    /// Takes `&mut self`, so for the lifetime of the returned slice nothing else can read or
    /// write the words non-atomically.
    pub(crate) fn atomic_words(&mut self) -> &[AtomicU64] {
        let words = self.words_mut();
        // SAFETY: `AtomicU64` has the same size and bit validity as `u64` (std docs), and the
        // words are 8-byte aligned (they live in 64-byte-aligned blocks), which `AtomicU64`
        // requires on every platform. The exclusive borrow of `words` is held by the returned
        // shared slice, so all access during its lifetime is atomic.
        unsafe { std::slice::from_raw_parts(words.as_mut_ptr().cast::<AtomicU64>(), words.len()) }
    }

    /// Number of set bits.
    pub(crate) fn count_ones(&self) -> u64 {
        self.words().iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// Hints the CPU to start loading the cache line at `address` (a no-op off x86-64).
#[inline(always)]
pub fn prefetch<T>(address: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of the x86-64 baseline, so the intrinsic's target feature is always
        // present; a prefetch has no architectural effect and cannot fault, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((address as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_one_aligned_cache_line() {
        assert_eq!(std::mem::size_of::<Block>(), BLOCK_BYTES);
        assert_eq!(std::mem::align_of::<Block>(), BLOCK_BYTES);
        let storage = Storage::zeroed(3).unwrap();
        assert_eq!(storage.blocks().as_ptr() as usize % BLOCK_BYTES, 0);
        assert_eq!(storage.words().len(), 24);
        assert_eq!(storage.count_ones(), 0);
    }

    #[test]
    fn atomic_view_writes_through() {
        let mut storage = Storage::zeroed(1).unwrap();
        storage.atomic_words()[3].fetch_or(0b101, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(storage.words()[3], 0b101);
        assert_eq!(storage.count_ones(), 2);
    }
}
