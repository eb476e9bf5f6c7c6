//! Moving a data dir onto a team store (`switchyard store copy --to postgres://…`): the
//! configuration (connections, profiles with their ids, weights and evidence, routing modes,
//! fallback chains, pools, prices, settings), the ledger, quota readings, circuits and relay
//! users are copied into an empty Postgres store in one transaction, and every key and token the
//! source's vault holds is sealed into the target's vault under the target's master key. The
//! source is only read. Not carried, on purpose:
//! - owned logins (`oauth`): a refresh token that two stores refresh is reused and refused, which
//!   logs the account out; the profile arrives without its login and is signed in again there;
//! - official-CLI logins (`external`): they live in this machine's account directories;
//! - the install id, the vault choice and the relay token (the team store makes its own), the
//!   secret journal, and the routing state replicas share (bindings, SWRR positions, response
//!   origins: they rebuild as traffic flows).

use serde::Serialize;
use switchyard_store::copy::{advance_identity, copy_table, holds_foreign_tables, rows_held, sealed_key_ids, Except};
use switchyard_store::sealed_secrets;
use switchyard_store::{circuits, connections, profiles, settings, Location, Store, StoreError};
use switchyard_vault::{Locator, MasterKey, Sealer};

use crate::config::relay_settings::RELAY_TOKEN_REVISION_KEY;
use crate::config::start_with_system::START_WITH_SYSTEM_KEY;
use crate::context::Context;
use crate::error::EngineError;
use crate::sealed::{row_of, VAULT_KEY};

/// The tables copied, in an order that satisfies every foreign key.
const TABLES: [&str; 11] = [
    "connections",
    "settings",
    "profiles",
    "evidence",
    "circuits",
    "attempts",
    "quota",
    "prices",
    "key_fees",
    "fallback_chains",
    "pools",
];

/// Relay users are copied last (they reference nothing).
const USERS_TABLE: &str = "relay_users";

/// Settings that belong to one store (or one desktop: starting with the system) and are not
/// copied.
const OWN_SETTINGS: [&str; 4] = [settings::INSTALL_ID, VAULT_KEY, RELAY_TOKEN_REVISION_KEY, START_WITH_SYSTEM_KEY];

/// A profile named in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CopiedProfile {
    pub connection: String,
    pub label: String,
    pub kind: String,
}

/// What a copy did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreCopyReport {
    /// The target, its password hidden.
    pub target: String,
    /// Rows written per table, in copy order.
    pub tables: Vec<(String, u64)>,
    /// Keys and tokens sealed into the target's vault.
    pub secrets: u64,
    /// The master key they are sealed under (every replica needs its file).
    pub key_id: String,
    /// Profiles that arrive without their login: sign in again on the team store.
    pub sign_in_again: Vec<CopiedProfile>,
    /// Keys or tokens this data dir's vault did not hold: they arrive missing.
    pub without_secret: Vec<CopiedProfile>,
}

impl Context {
    /// Copies this store into the empty Postgres store at `target`, sealing secrets under `key`.
    /// `progress` hears `(table, rows so far)` while a table is copied. Nothing is written to the
    /// target unless all of it is (one transaction); the source is only read.
    pub async fn copy_store_to(
        &self,
        target: &Location,
        key: &MasterKey,
        progress: &mut (dyn FnMut(&str, u64) + Send),
    ) -> Result<StoreCopyReport, EngineError> {
        if !target.is_postgres() {
            return Err(EngineError::Invalid(switchyard_core::InvalidInput {
                field: "to".into(),
                message: "a copy goes to a team store: --to postgres://USER@HOST:PORT/DB".into(),
            }));
        }
        let sealer = Sealer::new(key)?;
        if let Location::Postgres(url) = target {
            if holds_foreign_tables(url).await? {
                return Err(EngineError::Precondition(format!(
                    "{} holds tables but is not a Switchyard store; a copy goes only into a new database, so nothing \
                     was written",
                    target.shown()
                )));
            }
        }
        let destination = Store::open_at(target).await?;
        let outcome = self.copy_into(&destination, &sealer, progress).await;
        destination.close().await;
        let (tables, secrets, sign_in_again, without_secret) = outcome?;
        tracing::info!(target = %target.shown(), secrets, "store copied");
        Ok(StoreCopyReport {
            target: target.shown(),
            tables,
            secrets,
            key_id: sealer.key_id().to_string(),
            sign_in_again,
            without_secret,
        })
    }

    async fn copy_into(
        &self,
        destination: &Store,
        sealer: &Sealer,
        progress: &mut (dyn FnMut(&str, u64) + Send),
    ) -> Result<(Vec<(String, u64)>, u64, Vec<CopiedProfile>, Vec<CopiedProfile>), EngineError> {
        // One consistent view of the source for the profiles and every table.
        let mut read = self.store.begin_read().await?;
        let plan = secrets_plan(&mut read).await?;
        // Read every secret first: a vault that cannot be read stops the copy before any write.
        let mut sealed = Vec::new();
        let (mut sign_in_again, mut without_secret) = (Vec::new(), Vec::new());
        for (profile, locator) in plan {
            match locator {
                None => {
                    if matches!(profile.kind.as_str(), "oauth" | "external") {
                        sign_in_again.push(profile);
                    } else {
                        without_secret.push(profile);
                    }
                }
                Some(locator) => match self.vault_get(locator.clone()).await? {
                    Some(secret) => sealed.push(sealer.seal(&locator, &secret)?),
                    None => without_secret.push(profile),
                },
            }
        }
        let mut tx = destination.begin().await?;
        refuse_unless_empty(&mut tx, sealer.key_id()).await?;
        let mut tables = Vec::new();
        for table in TABLES.iter().copied().chain([USERS_TABLE]) {
            let except = (table == "settings").then_some(Except { column: "key", values: &OWN_SETTINGS });
            progress(table, 0);
            let mut told = |n: u64| progress(table, n);
            let rows = copy_table(&mut read, &mut tx, table, except, &mut told).await?;
            tables.push((table.to_string(), rows));
        }
        advance_identity(&mut tx, "attempts", "id").await?;
        // From a Postgres source, a circuit may carry a probe lease of one of its replicas.
        circuits::release_all_leases(&mut tx).await?;
        let now = self.now_ms();
        let secrets = sealed.len() as u64;
        for entry in sealed {
            sealed_secrets::put(&mut tx, &row_of(entry), now).await?;
        }
        drop(read);
        tx.commit().await.map_err(StoreError::from)?;
        Ok((tables, secrets, sign_in_again, without_secret))
    }
}

/// Every profile with what its copy needs: the locator of a key or token to seal, or none
/// (an owned or official-CLI login, which is signed in again on the target).
async fn secrets_plan(
    conn: &mut switchyard_store::AnyConnection,
) -> Result<Vec<(CopiedProfile, Option<Locator>)>, EngineError> {
    let mut plan = Vec::new();
    for connection in connections::list(&mut *conn).await? {
        for p in profiles::for_connection(&mut *conn, &connection.id).await? {
            let named = CopiedProfile { connection: connection.slug.clone(), label: p.label, kind: p.kind };
            let sealable = matches!(named.kind.as_str(), "api_key" | "token");
            let locator = match (sealable, p.locator_service, p.locator_account) {
                (true, Some(service), Some(account)) => Some(Locator { service, account }),
                _ => None,
            };
            plan.push((named, locator));
        }
    }
    Ok(plan)
}

/// A copy goes only into a store that holds no configuration, history, secret or user yet (a
/// store a replica served from once holds only its own settings and relay token, which do not
/// count — but that token must be sealed under the key the copy seals with).
async fn refuse_unless_empty(tx: &mut switchyard_store::AnyConnection, key_id: &str) -> Result<(), EngineError> {
    let tables: Vec<&str> = TABLES.iter().copied().chain([USERS_TABLE]).collect();
    let held = rows_held(&mut *tx, &tables, &OWN_SETTINGS).await?;
    if held > 0 {
        return Err(EngineError::Precondition(format!(
            "the target store is not empty ({held} rows of configuration, history, secrets or users); a copy goes only \
             into a new store, so nothing was written"
        )));
    }
    if let Some(other) = sealed_key_ids(tx).await?.into_iter().find(|id| id != key_id) {
        return Err(EngineError::Precondition(format!(
            "the team store already seals under master key {other}, not {key_id}: give --master-key-file the key its \
             replicas use; nothing was written"
        )));
    }
    Ok(())
}
