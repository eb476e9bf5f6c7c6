//! Which vault a data dir keeps its secrets in, and the sealed one's rows in the store.
//!
//! A data dir starts on the OS keychain. `--vault sealed` (or `SWITCHYARD_VAULT=sealed`) puts
//! its secrets in the store instead, sealed under the master key (`switchyard-vault`'s
//! `SealedVault`); the first sealed open records `vault = sealed` in `settings`, and from then
//! on every open of that data dir is sealed (a process asked for the keychain there refuses to
//! start). A data dir that already keeps a key or the relay token in the keychain is never
//! turned sealed (its keys would read `missing`): that open is refused, naming `store copy`. A sealed open refuses to start without a key, and with a key other than the one the
//! stored rows were sealed under — before anything is served (invariant 26). A data dir picks
//! once; its keys move to a sealed team store with `store copy` (`store_copy.rs`), which leaves
//! the data dir as it was.
//!
//! The vault API blocks (the engine calls it on the blocking pool, `engine.rs` `blocking`), so
//! [`StoreRows`] runs each store call to completion on the runtime's handle from that thread.

use std::sync::Arc;

use switchyard_store::sealed_secrets::{self, SealedRow};
use switchyard_store::{settings, Store, StoreError};
use switchyard_vault::{Locator, MasterKey, SealedEntry, SealedRows, SealedVault, Sealer, Vault, VaultError};

use crate::clock::Clock;
use crate::context::Context;
use crate::error::EngineError;

/// Settings key recording the data dir's vault (`sealed`; absent = the OS keychain).
pub const VAULT_KEY: &str = "vault";
/// Environment variable choosing the vault (`keychain` or `sealed`), like `--vault`.
pub const VAULT_ENV: &str = "SWITCHYARD_VAULT";

/// Where secrets are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaultKind {
    /// The OS keychain (the desktop's, the default).
    Keychain,
    /// Encrypted in the store under a master key kept outside it (a server's).
    Sealed,
}

impl VaultKind {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "keychain" => Some(VaultKind::Keychain),
            "sealed" => Some(VaultKind::Sealed),
            _ => None,
        }
    }
}

/// What `Engine::open` builds the vault from.
pub(crate) enum VaultSpec {
    /// A vault the caller made (keychain, or memory in tests).
    Given(Arc<dyn Vault>),
    /// The sealed vault over this store, under this key.
    Sealed(MasterKey),
}

/// The vault for `store`, after checking the data dir's recorded choice and (sealed) that the
/// key is the one the rows are sealed under.
pub(crate) async fn vault_for(
    store: &Store,
    spec: VaultSpec,
    clock: &Arc<dyn Clock>,
) -> Result<(Arc<dyn Vault>, Option<Arc<Sealer>>), EngineError> {
    let mut conn = store.acquire().await?;
    let recorded = settings::get(&mut conn, VAULT_KEY).await?;
    match spec {
        VaultSpec::Given(vault) => {
            if recorded.is_some_and(|(v, _)| v == "sealed") {
                return Err(EngineError::SealedVault(format!(
                    "sealed vault: this data dir keeps its secrets sealed in the store; start with {VAULT_ENV}=sealed \
                     (or --vault sealed) and the master key"
                )));
            }
            Ok((vault, None))
        }
        VaultSpec::Sealed(key) => {
            check_key(&mut conn, key.id()).await?;
            if recorded.is_none() {
                refuse_keychain_secrets(&mut conn).await?;
                settings::put(&mut conn, VAULT_KEY, "sealed", None, clock.now_ms()).await?;
            }
            let rows = Arc::new(StoreRows {
                store: store.clone(),
                handle: tokio::runtime::Handle::current(),
                clock: clock.clone(),
            });
            let vault = SealedVault::new(&key, rows)?;
            Ok((Arc::new(vault), Some(Arc::new(Sealer::new(&key)?))))
        }
    }
}

/// Refuses to turn a data dir that keeps secrets in the OS keychain (a profile's key, the relay
/// token) sealed: the choice is recorded for good, and its keys would read `missing` from then on.
/// The way to serve them sealed is `store copy` into a team store, which leaves this one as it is.
async fn refuse_keychain_secrets(conn: &mut switchyard_store::AnyConnection) -> Result<(), EngineError> {
    if !sealed_secrets::key_ids(conn).await?.is_empty() {
        return Ok(()); // a store `store copy` filled: its secrets are sealed already
    }
    let keys = switchyard_store::profiles::all_locators(conn).await?.len();
    let token = settings::get(conn, crate::config::relay_settings::RELAY_TOKEN_REVISION_KEY).await?.is_some();
    if keys == 0 && !token {
        return Ok(());
    }
    let held = match (keys, token) {
        (0, _) => "the relay token".to_string(),
        (n, false) => format!("{n} key(s)"),
        (n, true) => format!("{n} key(s) and the relay token"),
    };
    Err(EngineError::SealedVault(format!(
        "sealed vault: this data dir keeps {held} in the OS keychain; opening it sealed would record the sealed vault \
         for good and read them as missing, so nothing was changed. Keep the keychain (drop --vault sealed / \
         {VAULT_ENV}), or copy everything into a sealed team store: switchyard store copy --to postgres://… \
         --master-key-file FILE"
    )))
}

/// Refuses `key_id` when any stored row is sealed under another key.
async fn check_key(conn: &mut switchyard_store::AnyConnection, key_id: &str) -> Result<(), EngineError> {
    let ids = sealed_secrets::key_ids(conn).await?;
    match ids.iter().find(|id| id.as_str() != key_id) {
        None => Ok(()),
        Some(other) => Err(EngineError::SealedVault(format!(
            "sealed vault: the store's secrets are sealed under master key {other}, but this process holds master \
             key {key_id}: wrong master key file (after `vault rotate-master-key`, every replica needs the new file)"
        ))),
    }
}

impl Context {
    /// Whether secrets are sealed in the store, and the master key's id.
    pub fn sealed_key_id(&self) -> Option<&str> {
        self.sealer.as_deref().map(Sealer::key_id)
    }

    /// Re-seals every secret in the store under `new` in one transaction; returns how many.
    /// Afterwards this process (and every replica) must be restarted with the new key file:
    /// a process still holding the old key refuses to read and is not ready.
    pub async fn rotate_master_key(&self, new: &MasterKey) -> Result<usize, EngineError> {
        let Some(old) = self.sealer.clone() else {
            return Err(EngineError::Precondition(
                "this data dir keeps its secrets in the OS keychain, not the sealed vault; nothing to rotate".into(),
            ));
        };
        let next = Sealer::new(new)?;
        let now = self.now_ms();
        let mut tx = self.store.begin().await?;
        let rows = sealed_secrets::all(&mut tx).await?;
        let count = rows.len();
        for row in rows {
            let entry = entry_of(row);
            let secret = old.open(&entry)?;
            let resealed = next.seal(&entry.locator, &secret)?;
            sealed_secrets::put(&mut tx, &row_of(resealed), now).await?;
        }
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(
            rows = count,
            from = old.key_id(),
            to = next.key_id(),
            "sealed vault re-sealed under a new master key"
        );
        Ok(count)
    }

    /// Whether this process can serve (the relay's `/readyz`): the store answers, every
    /// migration is applied and, when sealed, the stored rows are sealed under this process's key.
    pub async fn ready(&self) -> Result<(), EngineError> {
        self.store.ready().await.map_err(|e| EngineError::Precondition(format!("store not ready: {e}")))?;
        if let Some(sealer) = &self.sealer {
            let mut conn = self.store.acquire().await?;
            check_key(&mut conn, sealer.key_id()).await?;
        }
        Ok(())
    }
}

/// The vault the store at `location` recorded; a missing SQLite file is a new keychain one.
pub(crate) async fn recorded_kind_at(location: &switchyard_store::Location) -> Result<VaultKind, EngineError> {
    if let switchyard_store::Location::File(db) = location {
        if !db.exists() {
            return Ok(VaultKind::Keychain);
        }
    }
    let store = Store::open_at(location).await?;
    let recorded = {
        let mut conn = store.acquire().await?;
        settings::get(&mut conn, VAULT_KEY).await?
    };
    store.close().await;
    Ok(match recorded {
        Some((v, _)) if v == "sealed" => VaultKind::Sealed,
        _ => VaultKind::Keychain,
    })
}

fn entry_of(row: SealedRow) -> SealedEntry {
    SealedEntry {
        locator: Locator { service: row.service, account: row.account },
        key_id: row.key_id,
        nonce: row.nonce,
        ciphertext: row.ciphertext,
    }
}

pub(crate) fn row_of(entry: SealedEntry) -> SealedRow {
    SealedRow {
        service: entry.locator.service,
        account: entry.locator.account,
        key_id: entry.key_id,
        nonce: entry.nonce,
        ciphertext: entry.ciphertext,
    }
}

/// The sealed vault's rows in the store's `sealed_secrets` table.
#[derive(Debug)]
struct StoreRows {
    store: Store,
    handle: tokio::runtime::Handle,
    /// Stamps each written row's `updated_at`.
    clock: Arc<dyn Clock>,
}

impl StoreRows {
    /// Runs one store call to completion from the blocking pool.
    fn run<T>(&self, f: impl std::future::Future<Output = Result<T, StoreError>>) -> Result<T, VaultError> {
        self.handle.block_on(f).map_err(|e| VaultError::Unavailable(format!("the store cannot be read: {e}")))
    }
}

impl SealedRows for StoreRows {
    fn put(&self, entry: SealedEntry) -> Result<(), VaultError> {
        let row = row_of(entry);
        self.run(async {
            let mut conn = self.store.acquire().await?;
            sealed_secrets::put(&mut conn, &row, self.clock.now_ms()).await
        })
    }

    fn get(&self, locator: &Locator) -> Result<Option<SealedEntry>, VaultError> {
        let row = self.run(async {
            let mut conn = self.store.acquire().await?;
            sealed_secrets::get(&mut conn, &locator.service, &locator.account).await
        })?;
        Ok(row.map(entry_of))
    }

    fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
        self.run(async {
            let mut conn = self.store.acquire().await?;
            sealed_secrets::delete(&mut conn, &locator.service, &locator.account).await
        })
    }
}
