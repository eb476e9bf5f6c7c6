//! Buffers for the copies of forwarded bodies (`body/outgoing.rs`), kept for reuse. A copy
//! lives until the ledger's writer has read its keys (up to the ledger's linger, 100 ms), so a
//! relay forwarding 200 KB bodies at 200 req/s holds ~20 of them; allocating each afresh
//! faults its pages in from the kernel on every request (measured forwarding 1 MB bodies at 50
//! req/s: 65 page faults and 1,825 µs of relay CPU per request before, 14 and 1,374 after).
//! Only large buffers are kept — from [`SMALL_BODY`] up to [`KEPT_BUFFER`] of capacity, at
//! most [`KEPT_BYTES`] in all: small ones come from the allocator's free lists anyway.

use crate::body::SMALL_BODY;

use std::sync::{Mutex, PoisonError};

/// The most buffer capacity kept, in all.
pub const KEPT_BYTES: usize = 8 << 20;

/// The largest buffer kept.
pub const KEPT_BUFFER: usize = 2 << 20;

#[derive(Debug, Default)]
pub(crate) struct CopyBuffers {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl CopyBuffers {
    /// An empty buffer with room for at least `len` bytes (`0`: not declared): a kept one
    /// when one fits and the body is not small.
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        if len > 0 && len as u64 <= SMALL_BODY {
            return Vec::with_capacity(len);
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        match kept.buffers.iter().position(|b| b.capacity() >= len) {
            Some(i) => {
                let buffer = kept.buffers.swap_remove(i);
                kept.bytes -= buffer.capacity();
                buffer
            }
            None => Vec::with_capacity(len),
        }
    }

    /// Keeps `buffer` for a later copy, within the bounds (module docs).
    pub(crate) fn give(&self, mut buffer: Vec<u8>) {
        let capacity = buffer.capacity();
        if (capacity as u64) < SMALL_BODY || capacity > KEPT_BUFFER {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.bytes + capacity <= KEPT_BYTES {
            buffer.clear();
            kept.bytes += capacity;
            kept.buffers.push(buffer);
        }
    }

    /// The capacity kept now.
    #[cfg(test)]
    pub(crate) fn kept_bytes(&self) -> usize {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_within_the_bounds() {
        let buffers = CopyBuffers::default();
        let mut a = buffers.take(100_000);
        a.extend_from_slice(&[7; 100_000]);
        let at = a.as_ptr();
        buffers.give(a);
        let b = buffers.take(90_000);
        assert_eq!(b.as_ptr(), at, "a kept buffer that fits is handed out again");
        assert!(b.is_empty(), "and empty");
        assert_eq!(buffers.kept_bytes(), 0, "a handed-out buffer is no longer counted");
        buffers.give(b);
        let undeclared = buffers.take(0);
        assert_eq!(undeclared.as_ptr(), at, "a body of no declared length gets a kept buffer");
        buffers.give(Vec::with_capacity(1000));
        assert_eq!(buffers.kept_bytes(), 0, "a small buffer is not kept");
        assert_eq!(buffers.take(1000).capacity(), 1000, "a small body gets a buffer of its own size");
        buffers.give(Vec::with_capacity(KEPT_BUFFER + 1));
        assert_eq!(buffers.kept_bytes(), 0, "an oversized buffer is not kept");
        for _ in 0..8 {
            buffers.give(Vec::with_capacity(KEPT_BUFFER));
        }
        assert!(buffers.kept_bytes() <= KEPT_BYTES, "never more than the bound: {}", buffers.kept_bytes());
    }
}
