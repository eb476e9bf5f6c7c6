//! Secrets of Switchyard. A [`Secret`] never prints, never serializes and is zeroized on
//! drop; a [`Locator`] is the keychain address the database stores instead. Binaries use the
//! [`Keychain`] backend, or on a server the [`SealedVault`] (secrets encrypted in the store
//! under a master key kept outside it); [`MemoryVault`] is for unit tests.

mod keychain;
mod locator;
#[cfg(any(test, feature = "memory"))]
mod memory;
mod sealed;
mod secret;

pub use keychain::Keychain;
pub use locator::Locator;
#[cfg(any(test, feature = "memory"))]
pub use memory::MemoryVault;
pub use sealed::{
    loose_mode, MasterKey, SealedEntry, SealedRows, SealedVault, Sealer, CREDENTIAL_NAME, KEY_BYTES,
    MASTER_KEY_FILE_ENV, MIN_DISTINCT_BYTES,
};
pub use secret::Secret;

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VaultError {
    /// No keychain can be reached (no Secret Service, locked keyring, no D-Bus session).
    #[error("the OS keychain is unavailable: {0}")]
    Unavailable(String),
    /// The keychain answered but refused or failed the operation.
    #[error("keychain operation failed: {0}")]
    Failed(String),
    /// The sealed vault cannot serve: no master key, a key file others can read, a wrong key,
    /// a row that does not open. The message says which and never carries a secret.
    #[error("sealed vault: {0}")]
    Sealed(String),
}

/// A place secrets are kept. Calls block (the OS APIs are synchronous): call them from
/// `tokio::task::spawn_blocking` in async code.
pub trait Vault: Send + Sync + std::fmt::Debug {
    /// Stores `secret` at `locator`, replacing any previous value.
    fn put(&self, locator: &Locator, secret: &Secret) -> Result<(), VaultError>;
    /// Reads the secret, `None` when nothing is stored there.
    fn get(&self, locator: &Locator) -> Result<Option<Secret>, VaultError>;
    /// Deletes the secret; `false` when nothing was stored there.
    fn delete(&self, locator: &Locator) -> Result<bool, VaultError>;
}
