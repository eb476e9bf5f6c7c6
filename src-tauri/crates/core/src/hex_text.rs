//! Keys as text: a prefix and the lowercase hex of a digest, written into one allocation.
//! (`hex::encode` builds its string a `char` at a time: 1.2k instructions for 16 bytes, on
//! every request's turn and conversation key.)

/// `prefix` followed by the lowercase hex of `bytes`.
pub(crate) fn hex_text(prefix: &str, bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(prefix.len() + 2 * bytes.len());
    out.extend_from_slice(prefix.as_bytes());
    // Bytes, not `String::push` (a capacity check and a UTF-8 encode per digit: 1.3k
    // instructions for the three keys of a ledger row).
    out.extend(bytes.iter().flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0x0f)]]));
    String::from_utf8(out).unwrap_or_default() // a &str and ASCII digits: always UTF-8
}

/// `prefix` followed by `text`.
pub(crate) fn prefixed(prefix: &str, text: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + text.len());
    out.push_str(prefix);
    out.push_str(text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_hex_encode_writes() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_text("", &bytes), hex::encode(&bytes), "every byte value, lowercase");
        assert_eq!(hex_text("a:", &[0xab, 0x01]), "a:ab01", "after the prefix");
        assert_eq!(prefixed("s:", "f00"), "s:f00");
    }
}
