//! What the skim learnt from bodies it read before. An agent resends its whole conversation on
//! every call, with one or two new messages at the end: the digests of the old ones are known.
//!
//! **How a value is recognised without reading it.** An entry is filed under the hash of the
//! value's first `window` bytes (its opening: role, type, ids) and holds the value's length
//! and the XXH3-128 of all its bytes. Meeting a value, the scanner hashes the window at the
//! cursor, and for each entry filed there (at most `SLOTS`) hashes that many bytes: when the
//! full hash matches, the value is those bytes, and its digest and human flag are the entry's.
//! No bracket is counted and no grammar read; hashing runs at memory speed.
//!
//! **Why it is sound.** An entry is only written after the scanner read the value in full and
//! found it valid, and it is keyed (through the hash seed) by the reader that read it (which
//! field, which protocol); every remembered value sits at a fixed depth (a top-level member, or
//! an item of `messages`/`input`). Equal bytes read the same way give the same digest and the
//! same validity, so a hit answers what a read would have, up to an accidental 128-bit
//! collision (module docs of `body_skim`: the keys are not a security boundary). What follows
//! the value is read as before. The bytes themselves are not kept.
//!
//! **Bounds.** Two generations of at most `capacity / 2` windows each (about 90 bytes a
//! window): when the current one fills, it becomes the previous one and the oldest is dropped;
//! a hit in the previous generation moves its window forward. The mutex is held for one map
//! operation, never while hashing or reading.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};

use super::Digest;

/// Values shorter than this are always read by `DigestMemo::default()` (a lookup costs about
/// as much as reading them); it is also the window an entry is filed under.
pub const DEFAULT_MEMO_MIN_BYTES: usize = 128;

/// Windows kept by `DigestMemo::default()` (~3 MB at most): the messages of about 150 Claude
/// Code conversations of 200 KB.
pub const DEFAULT_MEMO_ENTRIES: usize = 32_768;

/// Values kept per window: tool results open alike, and a message loses its prompt-cache mark
/// (its tail) on the next call.
const SLOTS: usize = 2;

/// What a remembered value read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Known {
    pub digest: Digest,
    pub human: bool,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    len: usize,
    full: u128,
    known: Known,
}

/// The newest value first.
type Bucket = [Option<Entry>; SLOTS];

/// The keys are hashes already: the map uses them as they are.
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(29) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

type Map = HashMap<u64, Bucket, BuildHasherDefault<PreHashed>>;

#[derive(Debug, Default, Clone)]
struct Generations {
    current: Map,
    previous: Map,
}

impl Generations {
    fn insert(&mut self, per_generation: usize, window: u64, bucket: Bucket) {
        if self.current.len() >= per_generation && !self.current.contains_key(&window) {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(window, bucket);
    }
}

/// Digests of values read before, shared by every request of a relay (module docs).
#[derive(Debug)]
pub struct DigestMemo {
    generations: Mutex<Generations>,
    per_generation: usize,
    window: usize,
}

impl Default for DigestMemo {
    fn default() -> Self {
        DigestMemo::with_limits(DEFAULT_MEMO_ENTRIES, DEFAULT_MEMO_MIN_BYTES)
    }
}

impl Clone for DigestMemo {
    fn clone(&self) -> Self {
        DigestMemo {
            generations: Mutex::new(self.lock().clone()),
            per_generation: self.per_generation,
            window: self.window,
        }
    }
}

impl DigestMemo {
    /// A memo of at most `windows` windows (at least 2), of values of `min_bytes` or more.
    pub fn with_limits(windows: usize, min_bytes: usize) -> Self {
        DigestMemo {
            generations: Mutex::new(Generations::default()),
            per_generation: (windows / 2).max(1),
            window: min_bytes.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // every change is one map operation: a panic elsewhere leaves nothing half-written
        self.generations.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many values are held (both generations).
    pub fn len(&self) -> usize {
        let g = self.lock();
        g.current.values().chain(g.previous.values()).map(|b| b.iter().flatten().count()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn window_at(&self, seed: u64, b: &[u8], start: usize) -> Option<u64> {
        b.get(start..start.checked_add(self.window)?).map(|w| xxh3_64_with_seed(w, seed))
    }

    /// A value read before by the reader `seed` names, starting at `start`: where it ends and
    /// what it read as.
    pub(super) fn recall(&self, seed: u64, b: &[u8], start: usize) -> Option<(usize, Known)> {
        let window = self.window_at(seed, b, start)?;
        let bucket = {
            let mut g = self.lock();
            match g.current.get(&window) {
                Some(bucket) => *bucket,
                None => {
                    let bucket = g.previous.remove(&window)?;
                    g.insert(self.per_generation, window, bucket);
                    bucket
                }
            }
        };
        bucket.into_iter().flatten().find_map(|e| {
            let end = start.checked_add(e.len)?;
            let bytes = b.get(start..end)?;
            (xxh3_128_with_seed(bytes, seed) == e.full).then_some((end, e.known))
        })
    }

    /// Files the value `b[start..end]`, read in full and valid by the reader `seed` names.
    pub(super) fn remember(&self, seed: u64, b: &[u8], start: usize, end: usize, known: Known) {
        let Some(bytes) = b.get(start..end) else { return };
        let Some(window) = self.window_at(seed, &b[..end], start) else { return };
        let entry = Entry { len: bytes.len(), full: xxh3_128_with_seed(bytes, seed), known };
        let mut g = self.lock();
        let mut bucket = g.current.get(&window).or_else(|| g.previous.get(&window)).copied().unwrap_or_default();
        if bucket.iter().flatten().any(|e| e.len == entry.len && e.full == entry.full) {
            return;
        }
        bucket.rotate_right(1);
        bucket[0] = Some(entry);
        g.insert(self.per_generation, window, bucket);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(n: u8) -> Known {
        Known { digest: [n; 16], human: n.is_multiple_of(2) }
    }

    #[test]
    fn a_value_is_recalled_by_its_exact_bytes_only() {
        let memo = DigestMemo::with_limits(8, 4);
        let body = b"[{\"a\":1},{\"a\":1,\"b\":2}]";
        memo.remember(1, body, 1, 8, known(2));
        assert_eq!(memo.recall(1, body, 1), Some((8, known(2))), "the same bytes at the same place");
        assert_eq!(memo.recall(1, b"xx{\"a\":1}", 2), Some((9, known(2))), "the same bytes elsewhere");
        assert_eq!(memo.recall(2, body, 1), None, "another reader's seed");
        assert_eq!(memo.recall(1, b"{\"a\":2}", 0), None, "the same opening, other bytes");
        assert_eq!(memo.recall(1, b"{\"a\"", 0), None, "a body cut short");
        memo.remember(1, body, 9, 22, known(3));
        assert_eq!(memo.recall(1, body, 9), Some((22, known(3))), "a longer value with the same opening");
        assert_eq!(memo.recall(1, body, 1), Some((8, known(2))), "both are kept under one window");
        assert_eq!(memo.len(), 2, "two values");
        memo.remember(1, body, 1, 3, known(4));
        assert_eq!(memo.len(), 2, "a value shorter than the window is not kept");
    }

    #[test]
    fn the_memo_keeps_at_most_its_capacity_and_the_recently_used() {
        let memo = DigestMemo::with_limits(4, 1);
        let body = b"abcdefgh";
        for k in 0..4 {
            memo.remember(1, body, k, k + 1, known(k as u8));
        }
        assert_eq!(memo.len(), 4, "two generations of two");
        assert_eq!(memo.recall(1, body, 0), Some((1, known(0))), "found in the previous generation, moved forward");
        memo.remember(1, body, 6, 7, known(6));
        assert!(memo.len() <= 4, "never more than the capacity: {}", memo.len());
        assert_eq!(memo.recall(1, body, 0), Some((1, known(0))), "the entry used last survived the turnover");
        assert_eq!(memo.recall(1, body, 1), None, "the oldest entry is gone");
        let copy = memo.clone();
        assert_eq!(copy.recall(1, body, 6), Some((7, known(6))), "a clone holds the same entries");
    }
}
