//! The execution basis fingerprint: a hash of what a verification result depends on besides
//! the key (protocol, base URL, non-secret headers). Evidence taken under another
//! fingerprint is stale.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::connection::Protocol;
use crate::header::Header;

/// Hex SHA-256 of the canonical basis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BasisFingerprint(pub String);

impl BasisFingerprint {
    /// Computes the fingerprint. Headers are sorted by name so order does not matter; each
    /// field is length-prefixed so no two different bases share a canonical form.
    pub fn compute(protocol: Protocol, base_url: &str, headers: &[Header]) -> Self {
        let mut sorted: Vec<&Header> = headers.iter().collect();
        sorted.sort();
        let mut hasher = Sha256::new();
        let mut field = |s: &str| {
            hasher.update((s.len() as u64).to_be_bytes());
            hasher.update(s.as_bytes());
        };
        field("switchyard.basis.v1");
        field(protocol.as_str());
        field(base_url);
        for h in sorted {
            field(&h.name);
            field(&h.value);
        }
        BasisFingerprint(hex::encode(hasher.finalize()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(n: &str, v: &str) -> Header {
        Header { name: n.into(), value: v.into() }
    }

    #[test]
    fn header_order_does_not_matter() {
        let a = BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("a", "1"), h("b", "2")]);
        let b = BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("b", "2"), h("a", "1")]);
        assert_eq!(a, b, "the same headers in another order are the same basis");
    }

    #[test]
    fn every_field_changes_the_fingerprint() {
        let base = BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("a", "1")]);
        let changed = [
            BasisFingerprint::compute(Protocol::Anthropic, "https://x", &[h("a", "1")]),
            BasisFingerprint::compute(Protocol::Openai, "https://y", &[h("a", "1")]),
            BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("a", "2")]),
            BasisFingerprint::compute(Protocol::Openai, "https://x", &[]),
        ];
        for c in changed {
            assert_ne!(c, base, "a protocol, URL or header change must make evidence stale");
        }
        assert_eq!(base.as_str().len(), 64, "hex sha-256");
    }

    #[test]
    fn field_boundaries_are_unambiguous() {
        let a = BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("ab", "c")]);
        let b = BasisFingerprint::compute(Protocol::Openai, "https://x", &[h("a", "bc")]);
        assert_ne!(a, b, "length prefixes keep name/value boundaries apart");
    }
}
