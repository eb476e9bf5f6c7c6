//! Fault injection for crash-safety tests: the engine stops at a named step as if the
//! process had died there. Only tests arm it.

use std::sync::Mutex;

/// Steps of multi-step operations: credentials (docs/design.md, invariant 13) and import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// After the new locator is journaled, before the new secret is written.
    AfterJournal,
    /// After the new secret is in the keychain, before the profile row points at it.
    AfterSecretWrite,
    /// After the profile row points at the new secret, before the old one is deleted.
    AfterRowSwap,
    /// After the old secret is deleted, before its journal entry is cleared.
    AfterOldDelete,
    /// Inside an import's transaction, after its first connection is written.
    ImportAfterFirstConnection,
    /// A login refresh: the token endpoint answered with new tokens, before the keychain item
    /// is written (the refresh token it consumed is lost with the process).
    RefreshBeforeKeychainWrite,
    /// A login refresh: the new tokens are in the keychain, before the profile row records the
    /// refresh (the next use adopts the item and brings the row up to date).
    RefreshAfterKeychainWrite,
}

#[derive(Debug, Default)]
pub(crate) struct Faults(Mutex<Option<FaultPoint>>);

impl Faults {
    pub(crate) fn arm(&self, point: Option<FaultPoint>) {
        if let Ok(mut g) = self.0.lock() {
            *g = point;
        }
    }

    /// Fails with [`crate::EngineError::Crashed`] when `point` is armed (once).
    pub(crate) fn check(&self, point: FaultPoint) -> Result<(), crate::EngineError> {
        let hit = self.0.lock().map(|mut g| g.take_if(|p| *p == point).is_some()).unwrap_or(false);
        if hit {
            return Err(crate::EngineError::Crashed(point));
        }
        Ok(())
    }
}
