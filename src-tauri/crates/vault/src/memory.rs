//! In-memory vault for unit tests of other crates. Never used by a binary.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{Locator, Secret, Vault, VaultError};

#[derive(Debug, Default)]
pub struct MemoryVault {
    entries: Mutex<HashMap<Locator, String>>,
    unavailable: bool,
    /// `get` calls so far (tests count keychain reads with it).
    reads: std::sync::atomic::AtomicUsize,
}

impl MemoryVault {
    pub fn new() -> Self {
        Self::default()
    }

    /// A vault that behaves like an unreachable keychain.
    pub fn unavailable() -> Self {
        Self { unavailable: true, ..Self::default() }
    }

    /// How many times `get` was called.
    pub fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Locators currently stored (tests check for orphans with it).
    pub fn locators(&self) -> Vec<Locator> {
        let mut v: Vec<Locator> = self.lock().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        v.sort();
        v
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<Locator, String>>, VaultError> {
        if self.unavailable {
            return Err(VaultError::Unavailable("memory vault configured as unavailable".into()));
        }
        self.entries.lock().map_err(|_| VaultError::Failed("memory vault poisoned".into()))
    }
}

impl Vault for MemoryVault {
    fn put(&self, locator: &Locator, secret: &Secret) -> Result<(), VaultError> {
        self.lock()?.insert(locator.clone(), secret.expose().to_string());
        Ok(())
    }

    fn get(&self, locator: &Locator) -> Result<Option<Secret>, VaultError> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self.lock()?.get(locator).map(|s| Secret::new(s.clone())))
    }

    fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
        Ok(self.lock()?.remove(locator).is_some())
    }
}
