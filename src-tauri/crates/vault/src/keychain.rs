//! The OS keychain through the `keyring` crate: Secret Service on Linux, Keychain on macOS,
//! Credential Manager on Windows. There is no fallback to files: if the keychain cannot be
//! reached, every call fails with [`VaultError::Unavailable`].

use keyring::{Entry, Error as KeyringError};

use crate::{Locator, Secret, Vault, VaultError};

#[derive(Debug, Default, Clone, Copy)]
pub struct Keychain;

impl Keychain {
    pub fn new() -> Self {
        Keychain
    }

    /// Checks that the keychain answers, by reading an entry that does not exist.
    pub fn check_reachable(&self) -> Result<(), VaultError> {
        let probe = Locator { service: "switchyard.probe".into(), account: "reachability".into() };
        self.get(&probe).map(|_| ())
    }
}

fn entry(locator: &Locator) -> Result<Entry, VaultError> {
    Entry::new(&locator.service, &locator.account).map_err(map_error)
}

/// Maps keyring errors without ever carrying secret bytes (`BadEncoding` holds them).
fn map_error(e: KeyringError) -> VaultError {
    match e {
        KeyringError::NoStorageAccess(inner) => VaultError::Unavailable(inner.to_string()),
        KeyringError::PlatformFailure(inner) => VaultError::Unavailable(inner.to_string()),
        KeyringError::BadEncoding(_) => VaultError::Failed("stored secret is not valid UTF-8".into()),
        KeyringError::TooLong(field, max) => VaultError::Failed(format!("{field} longer than {max}")),
        KeyringError::Invalid(field, why) => VaultError::Failed(format!("invalid {field}: {why}")),
        KeyringError::Ambiguous(_) => VaultError::Failed("more than one keychain entry matches".into()),
        KeyringError::NoEntry => VaultError::Failed("no entry".into()),
        other => VaultError::Failed(other.to_string()),
    }
}

impl Vault for Keychain {
    fn put(&self, locator: &Locator, secret: &Secret) -> Result<(), VaultError> {
        entry(locator)?.set_password(secret.expose()).map_err(map_error)
    }

    fn get(&self, locator: &Locator) -> Result<Option<Secret>, VaultError> {
        match entry(locator)?.get_password() {
            Ok(s) => Ok(Some(Secret::new(s))),
            Err(KeyringError::NoEntry) => Ok(None),
            Err(e) => Err(map_error(e)),
        }
    }

    fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
        match entry(locator)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(KeyringError::NoEntry) => Ok(false),
            Err(e) => Err(map_error(e)),
        }
    }
}
