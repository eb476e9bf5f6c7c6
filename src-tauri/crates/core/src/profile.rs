//! Profile-level words: whether a credential is present, and the identifier formats.

use serde::{Deserialize, Serialize};

/// Whether the keychain holds a secret for a profile (the DB only knows the locator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialState {
    Present,
    Missing,
}

impl CredentialState {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialState::Present => "present",
            CredentialState::Missing => "missing",
        }
    }
}

/// True when `s` has the shape of a generated profile or connection id (`p_`/`c_` + 32 hex).
pub fn looks_like_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|rest| rest.len() == 32 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_shape() {
        assert!(looks_like_id(&format!("p_{}", "a".repeat(32)), "p_"), "generated ids match");
        assert!(!looks_like_id("work", "p_"), "labels are not ids");
        assert!(!looks_like_id(&format!("c_{}", "a".repeat(32)), "p_"), "prefix matters");
    }
}
