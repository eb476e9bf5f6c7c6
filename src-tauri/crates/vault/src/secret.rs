//! The `Secret` type: redacted `Debug`/`Display`, no `Serialize`, zeroized on drop.

use std::fmt;
use zeroize::Zeroizing;

/// An API key or token. The only way to see the value is [`Secret::expose`], used where the
/// value is sent upstream or handed to the keychain.
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Wraps a secret. Surrounding whitespace (a trailing newline from stdin) is removed.
    pub fn new(value: impl Into<String>) -> Self {
        let mut v: String = value.into();
        let trimmed = v.trim();
        if trimmed.len() != v.len() {
            let t = Zeroizing::new(trimmed.to_string());
            zeroize::Zeroize::zeroize(&mut v);
            return Secret(t);
        }
        Secret(Zeroizing::new(v))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl PartialEq for Secret {
    /// Constant-time comparison, so tokens can be checked without a timing side channel.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl Eq for Secret {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_value() {
        let s = Secret::new("sk-canary-1234567890");
        let shown = format!("{s:?} {s} {:?}", Some(&s));
        assert!(!shown.contains("canary"), "secret leaked through formatting: {shown}");
    }

    #[test]
    fn trims_trailing_newline_from_stdin() {
        assert_eq!(Secret::new("abc\n").expose(), "abc", "a newline from `echo` is not part of the key");
    }

    #[test]
    fn equality_is_by_value() {
        assert_eq!(Secret::new("a"), Secret::new("a"), "same value compares equal");
        assert_ne!(Secret::new("a"), Secret::new("b"), "different values differ");
        assert_ne!(Secret::new("a"), Secret::new("ab"), "different lengths differ");
    }
}
