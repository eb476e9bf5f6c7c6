//! The sealed vault: the secret backend for a server (no desktop keychain). Secrets are kept in
//! the store, encrypted under a master key that is never stored there (`master_key.rs`,
//! `cipher.rs`). Where the rows live is the [`SealedRows`] trait's business: the engine
//! implements it over the store's `sealed_secrets` table, so this crate stays below the store.

mod cipher;
mod master_key;

use std::sync::Arc;

pub use cipher::{SealedEntry, Sealer};
pub use master_key::{loose_mode, MasterKey, CREDENTIAL_NAME, KEY_BYTES, MASTER_KEY_FILE_ENV, MIN_DISTINCT_BYTES};

use crate::{Locator, Secret, Vault, VaultError};

/// Where sealed rows are kept. Calls block, like every vault call.
pub trait SealedRows: Send + Sync + std::fmt::Debug {
    fn put(&self, entry: SealedEntry) -> Result<(), VaultError>;
    fn get(&self, locator: &Locator) -> Result<Option<SealedEntry>, VaultError>;
    fn delete(&self, locator: &Locator) -> Result<bool, VaultError>;
}

/// A [`Vault`] whose secrets are sealed rows.
#[derive(Debug)]
pub struct SealedVault {
    sealer: Sealer,
    rows: Arc<dyn SealedRows>,
}

impl SealedVault {
    pub fn new(key: &MasterKey, rows: Arc<dyn SealedRows>) -> Result<Self, VaultError> {
        Ok(SealedVault { sealer: Sealer::new(key)?, rows })
    }

    /// The id of the master key this vault seals under.
    pub fn key_id(&self) -> &str {
        self.sealer.key_id()
    }
}

impl Vault for SealedVault {
    fn put(&self, locator: &Locator, secret: &Secret) -> Result<(), VaultError> {
        self.rows.put(self.sealer.seal(locator, secret)?)
    }

    fn get(&self, locator: &Locator) -> Result<Option<Secret>, VaultError> {
        match self.rows.get(locator)? {
            Some(entry) => self.sealer.open(&entry).map(Some),
            None => Ok(None),
        }
    }

    fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
        self.rows.delete(locator)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;

    #[derive(Debug, Default)]
    struct Rows(Mutex<HashMap<Locator, SealedEntry>>);

    impl SealedRows for Rows {
        fn put(&self, entry: SealedEntry) -> Result<(), VaultError> {
            self.0.lock().map_err(|_| VaultError::Failed("poisoned".into()))?.insert(entry.locator.clone(), entry);
            Ok(())
        }
        fn get(&self, locator: &Locator) -> Result<Option<SealedEntry>, VaultError> {
            Ok(self.0.lock().map_err(|_| VaultError::Failed("poisoned".into()))?.get(locator).cloned())
        }
        fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
            Ok(self.0.lock().map_err(|_| VaultError::Failed("poisoned".into()))?.remove(locator).is_some())
        }
    }

    #[test]
    fn a_sealed_vault_round_trips_through_its_rows() {
        let rows = Arc::new(Rows::default());
        let key = MasterKey::from_bytes([9; 32]);
        let vault = SealedVault::new(&key, rows.clone()).unwrap_or_else(|e| panic!("vault: {e}"));
        let loc = Locator { service: "s".into(), account: "a".into() };
        assert!(matches!(vault.get(&loc), Ok(None)), "nothing stored yet");
        vault.put(&loc, &Secret::new("sk-round-trip")).unwrap_or_else(|e| panic!("put: {e}"));
        let back = vault.get(&loc).ok().flatten().map(|s| s.expose().to_string());
        assert_eq!(back.as_deref(), Some("sk-round-trip"), "what was put comes back");
        assert!(matches!(vault.delete(&loc), Ok(true)), "deleted");
        assert!(matches!(vault.get(&loc), Ok(None)), "and gone");
    }
}
