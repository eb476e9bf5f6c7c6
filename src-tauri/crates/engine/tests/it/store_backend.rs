//! Which backend the suite runs on: under `scripts/with-postgres` (SWITCHYARD_TEST_PG set) every
//! data dir's store is a Postgres database of its own and no SQLite file appears, so the rest
//! of this suite really exercises Postgres; without it, the SQLite file. And the rule a server
//! store keeps: a Postgres store is sealed, never the keychain.

use std::sync::Arc;

use switchyard_engine::{
    Engine, EngineError, MasterKey, OpenOptions, StoreLocation, SystemClock, VaultKind, DB_FILE, TEST_PG_ENV,
};
use switchyard_vault::MemoryVault;

use crate::common::{legacy, profile, secret, TestResult};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_runs_on_the_backend_the_environment_names() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), Arc::new(SystemClock)).await?;
    engine.connection_add(legacy("main"), None).await?;
    engine.close().await;
    let location = switchyard_engine::store_location(dir.path()).await?;
    let file = dir.path().join(DB_FILE).exists();
    match std::env::var(TEST_PG_ENV) {
        Ok(server) if !server.trim().is_empty() => {
            assert!(location.is_postgres(), "with {TEST_PG_ENV} set the store is Postgres: {location:?}");
            assert!(!file, "and no SQLite file is written in the data dir");
        }
        _ => {
            assert_eq!(location, StoreLocation::File(dir.path().join(DB_FILE)), "by default the data dir's file");
            assert!(file, "which the open created");
        }
    }
    let again = Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), Arc::new(SystemClock)).await?;
    assert_eq!(again.connection_list().await?.len(), 1, "a reopen finds the same store");
    again.close().await;
    Ok(())
}

/// Postgres only (skipped without SWITCHYARD_TEST_PG): a store named explicitly, as `--store`
/// does, is sealed; the keychain is refused there, and so is an open without the master key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_is_sealed_and_refuses_the_keychain() -> TestResult {
    let Ok(server) = std::env::var(TEST_PG_ENV) else { return Ok(()) };
    let url = switchyard_store::ensure_postgres_database(&server, "sy_explicit_store").await?;
    let dir = tempfile::tempdir()?;
    let at = || Some(StoreLocation::parse(&url));
    let key = || Ok(MasterKey::from_bytes([9; 32]));
    let clock = || Arc::new(SystemClock);
    type Key = Box<dyn FnOnce() -> Result<MasterKey, switchyard_engine::VaultError> + Send>;
    let open =
        |vault, key: Key| Engine::open(OpenOptions::at(dir.path()).store(at()).choosing(vault, key).clock(clock()));
    let keychain = open(Some(VaultKind::Keychain), Box::new(key)).await;
    assert!(
        matches!(&keychain, Err(EngineError::SealedVault(m)) if m.contains("Postgres")),
        "the keychain is refused on a Postgres store: {:?}",
        keychain.as_ref().err()
    );
    let no_key = open(
        None,
        Box::new(|| Err(switchyard_engine::VaultError::Unavailable("no SWITCHYARD_MASTER_KEY_FILE".into()))),
    )
    .await;
    assert!(no_key.is_err(), "no master key, no start");
    let engine = open(None, Box::new(key)).await?;
    assert!(engine.sealed_key_id().is_some(), "the store is sealed");
    engine.connection_add(legacy("main"), None).await?;
    engine.profile_add("main", profile("work", 1), secret("sk-canary-explicit-pg")).await?;
    engine.close().await;
    let dump = String::from_utf8_lossy(&crate::common::pg_dump(&url)).into_owned();
    assert!(dump.contains("sealed_secrets"), "the dump is of the right database");
    assert!(!dump.contains("canary"), "the canary secret is not in pg_dump of a sealed Postgres store");
    assert!(!dir.path().join(DB_FILE).exists(), "nothing went to an SQLite file");
    Ok(())
}
