//! Answer buffers handed back for reuse once their bytes are sent.
//!
//! A large text batch is answered in pieces of about 150 KiB, each sent while the next is
//! written.
//! A fresh buffer of that size costs more than the answers in it suggest: the allocator maps
//! it, the system faults in and zeroes each page as the answers are written, and gives the
//! pages back when the sent piece is dropped — about a tenth of the server's time on a stream
//! of text batches (`perf record` of `serve` under `wrk`). A [`Buffers`] keeps a few
//! sent buffers and hands them out again: a piece is a [`Bytes`] that owns its buffer and
//! gives it back when the connection has sent it and drops it.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

/// Sent buffers kept for reuse, at most. A text batch has about six pieces alive at once (four
/// queued to be sent, one being written, one or more in the connection's write queue while the
/// socket is full), so this serves two or three large batches at a time without an
/// allocation; beyond it a buffer is freed as usual.
const KEPT: usize = 16;

/// The largest buffer kept, in bytes: a slice of ordinary lines' answers (2,048 lines of
/// about 80 bytes, reserved with half again) fits, while a piece grown by very long lines is
/// freed rather than held. At most `KEPT` × this (16 MiB) is held.
const LARGEST: usize = 1 << 20;

/// A few sent answer buffers, kept for the next answers (see the module docs). Shared by
/// every connection of a server.
#[derive(Debug, Default)]
pub struct Buffers {
    spare: Mutex<Vec<Vec<u8>>>,
}

impl Buffers {
    /// An empty buffer with room for at least `capacity` bytes: a kept one where one waits
    /// (its pages already mapped), else a new one.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        // The list of spare buffers is whole whatever a panicking holder did: a push or pop.
        let kept = self
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut buffer = kept.unwrap_or_default();
        buffer.reserve(capacity);
        buffer
    }

    /// `buffer`'s bytes as a piece to send, whose buffer comes back here when the piece (and
    /// every clone and slice of it) is dropped.
    pub fn piece(self: &Arc<Self>, buffer: Vec<u8>) -> Bytes {
        Bytes::from_owner(Sent {
            buffer,
            home: Arc::clone(self),
        })
    }

    /// Keeps `buffer` for reuse (emptied), unless enough are kept or it is too large to hold.
    pub fn give_back(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() == 0 || buffer.capacity() > LARGEST {
            return;
        }
        buffer.clear();
        // Whole whatever a panicking holder did (see `take`).
        let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        if spare.len() < KEPT {
            spare.push(buffer);
        }
    }

    /// How many buffers are kept now.
    pub fn kept(&self) -> usize {
        // Whole whatever a panicking holder did (see `take`).
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A piece's buffer on its way out: its bytes are the piece's, and dropping it gives the
/// buffer back to `home`.
struct Sent {
    buffer: Vec<u8>,
    home: Arc<Buffers>,
}

impl AsRef<[u8]> for Sent {
    fn as_ref(&self) -> &[u8] {
        &self.buffer
    }
}

impl Drop for Sent {
    fn drop(&mut self) {
        self.home.give_back(std::mem::take(&mut self.buffer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sent piece's buffer comes back once every handle to it is dropped, emptied, with its
    /// capacity, and is handed out again.
    #[test]
    fn a_sent_buffer_comes_back_and_is_reused() {
        let buffers = Arc::new(Buffers::default());
        let mut buffer = buffers.take(1000);
        let capacity = buffer.capacity();
        assert!(capacity >= 1000);
        buffer.extend_from_slice(b"answers\n");
        let address = buffer.as_ptr();
        let piece = buffers.piece(buffer);
        assert_eq!(&piece[..], b"answers\n");
        let (clone, slice) = (piece.clone(), piece.slice(1..3));
        drop(piece);
        drop(clone);
        assert_eq!(buffers.kept(), 0, "a slice of the piece still holds it");
        assert_eq!(&slice[..], b"ns");
        drop(slice);
        assert_eq!(buffers.kept(), 1);
        let again = buffers.take(10);
        assert!(again.is_empty());
        assert_eq!((again.as_ptr(), again.capacity()), (address, capacity));
        assert_eq!(buffers.kept(), 0);
    }

    /// At most `KEPT` buffers are kept, none over `LARGEST` bytes, and none without capacity.
    #[test]
    fn what_is_kept_is_bounded() {
        let buffers = Buffers::default();
        buffers.give_back(Vec::new());
        buffers.give_back(Vec::with_capacity(LARGEST + 1));
        assert_eq!(buffers.kept(), 0);
        for _ in 0..KEPT + 5 {
            buffers.give_back(Vec::with_capacity(64));
        }
        assert_eq!(buffers.kept(), KEPT);
    }
}
