//! String scanning 64 bytes at a time: quote and backslash masks (SSE2 compares through
//! `safe_arch` on x86_64 — the workspace forbids `unsafe` of its own — and SWAR on 64-bit
//! words elsewhere), and which bytes a backslash escapes.

/// Bit `k` set where `block[k]` is a quote, and where it is a backslash (SSE2, 16 bytes a
/// compare). `block` is 64 bytes.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(super) fn block_masks(block: &[u8]) -> (u64, u64) {
    use safe_arch::{cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i};
    let quote = set_splat_i8_m128i(b'"' as i8);
    let backslash = set_splat_i8_m128i(b'\\' as i8);
    let (mut quotes, mut backslashes) = (0u64, 0u64);
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let Ok(lane) = <&[u8; 16]>::try_from(lane) else { continue };
        let v = load_unaligned_m128i(lane);
        let bits = |m: safe_arch::m128i| u64::from(move_mask_i8_m128i(m) as u32 & 0xffff) << (16 * k);
        quotes |= bits(cmp_eq_mask_i8_m128i(v, quote));
        backslashes |= bits(cmp_eq_mask_i8_m128i(v, backslash));
    }
    (quotes, backslashes)
}

/// The same masks by SWAR, 8 bytes a word (targets without SSE2); also the reference the
/// SSE2 masks are tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(super) fn block_masks_swar(block: &[u8]) -> (u64, u64) {
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

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(super) fn block_masks(block: &[u8]) -> (u64, u64) {
    block_masks_swar(block)
}

/// Bit `k` set where `lane[k]` is a quote or a backslash (16 bytes, one SSE2 compare each):
/// where a short string (a key, a role, a type) ends or first escapes.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(super) fn lane_stops(lane: &[u8; 16]) -> u32 {
    use safe_arch::{bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i};
    let v = load_unaligned_m128i(lane);
    let stops = bitor_m128i(
        cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(b'"' as i8)),
        cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(b'\\' as i8)),
    );
    move_mask_i8_m128i(stops) as u32 & 0xffff
}

/// The same bits byte by byte (targets without SSE2; the reference in tests).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
pub(super) fn lane_stops_bytes(lane: &[u8; 16]) -> u32 {
    lane.iter().enumerate().fold(0, |m, (k, &c)| m | (u32::from(c == b'"' || c == b'\\') << k))
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(super) fn lane_stops(lane: &[u8; 16]) -> u32 {
    lane_stops_bytes(lane)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_masks_mark_every_quote_and_backslash(
            block in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), any::<u8>()], 64)
        ) {
            let want = block.iter().enumerate().fold((0u64, 0u64), |(q, b), (k, &c)| {
                (q | (u64::from(c == b'"') << k), b | (u64::from(c == b'\\') << k))
            });
            prop_assert_eq!(block_masks(&block), want, "masks of {:?}", block);
            prop_assert_eq!(block_masks_swar(&block), want, "SWAR masks of {:?}", block);
            for lane in block.chunks_exact(16).filter_map(|l| <&[u8; 16]>::try_from(l).ok()) {
                prop_assert_eq!(lane_stops(lane), lane_stops_bytes(lane), "stops of {:?}", lane);
            }
        }
    }
}
