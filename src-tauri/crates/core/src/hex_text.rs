//! Keys as text: a prefix and the lowercase hex of a digest, written into one allocation.
//! (`hex::encode` builds its string a `char` at a time: 1.2k instructions for 16 bytes, on
//! every request's turn and conversation key.)

/// `prefix` followed by the lowercase hex of `bytes`.
pub(crate) fn hex_text(prefix: &str, bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(prefix.len() + 2 * bytes.len());
    out.push_str(prefix);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
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
