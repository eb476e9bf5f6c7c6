//! Whether a profile's secret is in the keychain, cached by (locator, credential revision) so
//! views and readiness do not ask the keychain about every profile on every look. A rotation
//! changes the revision (and the locator), so the next look asks again; every write or delete
//! through the engine drops the locator's entries. Only answers are cached (`present`,
//! `missing`), never `unknown` (a keychain error is asked again). A secret removed behind the
//! engine's back (another keychain tool) shows as present until the next write, rotation or
//! restart; using it (verify, the relay) still reads the keychain and reports the truth.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use switchyard_core::states::CredentialPresence;
use switchyard_vault::Locator;

/// Entries kept before the cache starts over.
const CAPACITY: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct PresenceCache {
    entries: Mutex<HashMap<(Locator, i64), CredentialPresence>>,
}

impl PresenceCache {
    pub(crate) fn get(&self, locator: &Locator, revision: i64) -> Option<CredentialPresence> {
        self.lock().get(&(locator.clone(), revision)).copied()
    }

    pub(crate) fn put(&self, locator: Locator, revision: i64, state: CredentialPresence) {
        if state == CredentialPresence::Unknown {
            return;
        }
        let mut entries = self.lock();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert((locator, revision), state);
    }

    /// Drops every revision's entry of `locator` (a write or delete through the engine).
    pub(crate) fn forget(&self, locator: &Locator) {
        self.lock().retain(|(l, _), _| l != locator);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Locator, i64), CredentialPresence>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(account: &str) -> Locator {
        Locator { service: "switchyard".into(), account: account.into() }
    }

    #[test]
    fn an_answer_is_kept_per_revision_and_forgotten_on_write() {
        let cache = PresenceCache::default();
        cache.put(loc("a"), 1, CredentialPresence::Present);
        assert_eq!(
            cache.get(&loc("a"), 1),
            Some(CredentialPresence::Present),
            "the same revision is answered from memory"
        );
        assert_eq!(cache.get(&loc("a"), 2), None, "a rotated revision asks the keychain again");
        cache.forget(&loc("a"));
        assert_eq!(cache.get(&loc("a"), 1), None, "a write through the engine drops the entry");
    }

    #[test]
    fn a_keychain_error_is_not_cached() {
        let cache = PresenceCache::default();
        cache.put(loc("a"), 1, CredentialPresence::Unknown);
        assert_eq!(cache.get(&loc("a"), 1), None, "unknown is asked again next time");
    }
}
