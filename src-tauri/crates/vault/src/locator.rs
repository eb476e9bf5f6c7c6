//! Keychain addresses. The service is namespaced by the data dir's install id, so two data
//! dirs never see each other's entries.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Locator {
    pub service: String,
    pub account: String,
}

impl Locator {
    /// The keychain service name of one install (one data dir).
    pub fn service_for(install_id: &str) -> String {
        format!("switchyard.{install_id}")
    }

    /// A fresh locator for a profile's credential. `nonce` makes every rotation a new entry,
    /// so the old secret stays readable until the database points at the new one.
    pub fn for_profile(install_id: &str, profile_id: &str, nonce: &str) -> Self {
        Locator { service: Self::service_for(install_id), account: format!("profile/{profile_id}/{nonce}") }
    }

    /// The relay token of one install.
    pub fn relay_token(install_id: &str) -> Self {
        Locator { service: Self::service_for(install_id), account: "relay-token".to_string() }
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.service, self.account)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_do_not_share_services() {
        let a = Locator::for_profile("i1", "p_1", "n");
        let b = Locator::for_profile("i2", "p_1", "n");
        assert_ne!(a.service, b.service, "two data dirs must never see each other's entries");
    }
}
