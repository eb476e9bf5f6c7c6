//! The relay's secret cache, keyed by (locator, credential revision): a rotation changes
//! both, so the next attempt reads the new secret from the keychain; otherwise attempts are
//! served from memory. Secrets are shared as `Arc<Secret>` and never cloned into strings.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use switchyard_core::states::CredentialPresence;

use switchyard_store::profiles::ProfileRow;
use switchyard_vault::{Locator, Secret};

use crate::config::rows::locator_of;
use crate::context::Context;
use crate::error::EngineError;

/// Entries kept before the cache starts over (old revisions are never read again).
const CAPACITY: usize = 4096;

/// (locator, credential revision) → the secret read there (`None`: nothing stored).
/// Hashed with foldhash (per-process random seed): a lookup on every attempt, where SipHash of
/// the locator's strings was ~0.6k instructions (issue 40).
type Entries = HashMap<(Locator, i64), Option<Arc<Secret>>, foldhash::fast::RandomState>;

#[derive(Debug, Default)]
pub struct SecretCache {
    map: Mutex<Entries>,
}

impl SecretCache {
    /// The secret of `profile` at its current credential revision (`None`: not in the keychain).
    pub(crate) async fn get(&self, engine: &Context, profile: &ProfileRow) -> Result<Option<Arc<Secret>>, EngineError> {
        let Some(locator) = locator_of(profile) else {
            return Ok(None);
        };
        let key = (locator, profile.credential_revision);
        if let Some(hit) = self.lock().get(&key) {
            return Ok(hit.clone());
        }
        let read = engine.vault_get(key.0.clone()).await?.map(Arc::new);
        let mut map = self.lock();
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(key, read.clone());
        Ok(read)
    }

    /// Whether the secret is there (`Unknown`: keychain unreachable), for eligibility.
    pub(crate) async fn presence(&self, engine: &Context, profile: &ProfileRow) -> CredentialPresence {
        match self.get(engine, profile).await {
            Ok(Some(_)) => CredentialPresence::Present,
            Ok(None) => CredentialPresence::Missing,
            Err(_) => CredentialPresence::Unknown,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
