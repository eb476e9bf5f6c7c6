//! The relay's secret cache, keyed by (locator, credential revision): a rotation changes
//! both, so the next attempt reads the new secret from the keychain; otherwise attempts are
//! served from memory. Secrets are shared as `Arc<Secret>` and never cloned into strings.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};
use switchyard_core::states::CredentialPresence;

use switchyard_store::profiles::ProfileRow;
use switchyard_vault::{Locator, Secret};

use crate::context::Context;
use crate::error::EngineError;

/// Entries kept before the cache starts over (old revisions are never read again).
const CAPACITY: usize = 4096;

/// One cached read: where, at which revision, and what was there (`None`: nothing stored).
#[derive(Debug)]
struct Entry {
    locator: Locator,
    revision: i64,
    secret: Option<Arc<Secret>>,
}

/// The hash of (service, account, revision) → the entry read there. A lookup on every attempt
/// hashes the profile row's own strings (foldhash, per-process random seed; SipHash of them was
/// ~0.6k instructions, issue 40) and compares the entry's locator with them, so a hit copies
/// nothing (building the `Locator` key for each lookup was two strings a request). Two
/// locators whose hashes collide take turns in one slot: the other one is read again.
type Entries = HashMap<u64, Entry, foldhash::fast::RandomState>;

#[derive(Debug, Default)]
pub struct SecretCache {
    map: Mutex<Entries>,
    seed: foldhash::fast::RandomState,
}

impl SecretCache {
    /// The secret of `profile` at its current credential revision (`None`: not in the keychain).
    pub(crate) async fn get(&self, engine: &Context, profile: &ProfileRow) -> Result<Option<Arc<Secret>>, EngineError> {
        let (Some(service), Some(account)) = (&profile.locator_service, &profile.locator_account) else {
            return Ok(None);
        };
        let revision = profile.credential_revision;
        let key = self.seed.hash_one((service.as_str(), account.as_str(), revision));
        if let Some(hit) = self.lock().get(&key) {
            if hit.revision == revision && hit.locator.service == *service && hit.locator.account == *account {
                return Ok(hit.secret.clone());
            }
        }
        let locator = Locator { service: service.clone(), account: account.clone() };
        let secret = engine.vault_get(locator.clone()).await?.map(Arc::new);
        let mut map = self.lock();
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(key, Entry { locator, revision, secret: secret.clone() });
        Ok(secret)
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
