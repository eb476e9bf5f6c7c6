//! String scanning 64 bytes at a time without SIMD intrinsics (the workspace forbids
//! `unsafe`): quote and backslash masks by SWAR, and which bytes a backslash escapes.

/// Bit `k` set where `block[k]` is a quote, and where it is a backslash (SWAR, 8 bytes a word).
pub(super) fn block_masks(block: &[u8]) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // 0x80 in each byte of `v` equal to `c`, gathered into 8 bits.
    let eq = |v: u64, c: u8| {
        let x = v ^ (ONES * u64::from(c));
        let zero = !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7);
        (zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    };
    let (mut quotes, mut backslashes) = (0u64, 0u64);
    for (k, word) in block.chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let v = u64::from_le_bytes(w);
        quotes |= eq(v, b'"') << (8 * k);
        backslashes |= eq(v, b'\\') << (8 * k);
    }
    (quotes, backslashes)
}

/// The bytes escaped by a backslash in a 64-byte block (simdjson's `find_escaped`): a run
/// of backslashes escapes the byte after it when the run is odd. `carry` says the block
/// starts escaped, and is set for the next block.
pub(super) fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslashes = backslashes & !*carry;
    let follows = (backslashes << 1) | *carry;
    let odd_starts = backslashes & !EVEN & !follows;
    let (even_starts, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    (EVEN ^ (even_starts << 1)) & follows
}
