//! `FastHasher`: the Fx hash (as in rustc) for the routing hot path's small maps keyed by
//! profile ids, model names and connection ids. These keys come from our own database, not
//! from clients, so hash flooding is not a concern; turn keys (client-influenced) keep the
//! default SipHash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Fx hash: one rotate, xor and multiply per 8 bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher {
    hash: u64,
}

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with `FastHasher`.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(s: &str) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(s)
    }

    #[test]
    fn distinct_short_keys_hash_apart() {
        let keys = ["", "a", "b", "ab", "ba", "model-01", "model-10", "p_0000000000000001"];
        let hashes: std::collections::BTreeSet<u64> = keys.iter().map(|k| hash(k)).collect();
        assert_eq!(hashes.len(), keys.len(), "no collisions among typical keys");
        let mut m: FastMap<String, u32> = FastMap::default();
        m.insert("p1".into(), 1);
        assert_eq!(m.get("p1"), Some(&1), "lookups by &str work");
    }
}
