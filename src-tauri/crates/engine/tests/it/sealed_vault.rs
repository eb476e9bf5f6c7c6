//! The sealed vault on a real SQLite file (invariant 26): secrets round-trip through the store
//! sealed under the master key, never in plaintext in the database file or its WAL; a process
//! holding another key, or none, does not open; rotation re-seals everything and the old key is
//! refused afterwards; a data dir once sealed does not open on the keychain.

use std::path::Path;
use std::sync::Arc;

use switchyard_engine::{Engine, EngineError, ErrorCode, MasterKey, OpenOptions, SystemClock, VaultError};

use crate::common::{legacy, profile, secret, TestResult};

const CANARY: &str = "sk-canary-sealed-7f3a9c";

async fn db_bytes(dir: &Path) -> Vec<u8> {
    crate::common::store_bytes(dir).await
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

async fn open(dir: &Path, key: [u8; 32]) -> Result<Engine, EngineError> {
    Engine::open(OpenOptions::at(dir).sealed(MasterKey::from_bytes(key))).await
}

/// The refusal an open gave, or a panic naming what came back.
fn refusal(got: Result<Engine, EngineError>, what: &str) -> EngineError {
    match got {
        Ok(_) => panic!("{what}: the open must be refused"),
        Err(e) => e,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_round_trip_sealed_and_never_in_plaintext_in_the_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path(), [1; 32]).await?;
    assert!(engine.sealed_key_id().is_some(), "a sealed open says so");
    engine.connection_add(legacy("main"), None).await?;
    let added = engine.profile_add("main", profile("work", 1), secret(CANARY)).await?;
    let token = engine.relay_token(false).await?;
    engine.close().await;

    let again = open(dir.path(), [1; 32]).await?;
    let back = again.profile_secret(&added.id).await?.map(|s| s.expose().to_string());
    assert_eq!(back.as_deref(), Some(CANARY), "the profile's secret comes back through the sealed vault");
    assert_eq!(again.relay_token(false).await?.expose(), token.expose(), "so does the relay token");
    again.close().await;

    let bytes = db_bytes(dir.path()).await;
    assert!(!contains(&bytes, "canary"), "the canary secret never reaches the database file or its WAL");
    assert!(!contains(&bytes, token.expose()), "nor the relay token");
    assert!(contains(&bytes, "sealed_secrets"), "the sealed rows are in this file (the test reads the right one)");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_or_none_does_not_open() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path(), [1; 32]).await?;
    engine.connection_add(legacy("main"), None).await?;
    engine.profile_add("main", profile("work", 1), secret(CANARY)).await?;
    engine.close().await;

    let e = refusal(open(dir.path(), [2; 32]).await, "another master key");
    assert_eq!(e.code(), ErrorCode::KeychainUnavailable, "a coded refusal (exit 6), not an internal error: {e}");
    let text = e.to_string();
    assert!(text.contains("wrong master key"), "the refusal names the cause: {text}");
    assert!(!text.contains("canary"), "and never a secret: {text}");

    let e = refusal(
        Engine::open(
            OpenOptions::at(dir.path())
                .choosing(None, || Err(VaultError::Sealed("no master key: set SWITCHYARD_MASTER_KEY_FILE".into()))),
        )
        .await,
        "no master key, vault chosen by the data dir",
    );
    assert!(e.to_string().contains("no master key"), "a sealed data dir without a key does not start: {e}");

    let e = refusal(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await,
        "keychain on a sealed dir",
    );
    assert!(e.to_string().contains("sealed in the store"), "a sealed data dir is not opened on another vault: {e}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_reseals_everything_and_the_old_key_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path(), [1; 32]).await?;
    engine.connection_add(legacy("main"), None).await?;
    let added = engine.profile_add("main", profile("work", 1), secret(CANARY)).await?;
    let token = engine.relay_token(false).await?;
    let before = db_bytes(dir.path()).await;
    let count = engine.rotate_master_key(&MasterKey::from_bytes([3; 32])).await?;
    assert_eq!(count, 2, "the profile's secret and the relay token were re-sealed");
    assert!(engine.ready().await.is_err(), "the process still holding the old key is no longer ready");
    engine.close().await;

    let e = refusal(open(dir.path(), [1; 32]).await, "the old key after rotation");
    assert!(e.to_string().contains("wrong master key"), "the old key is refused: {e}");
    let rotated = open(dir.path(), [3; 32]).await?;
    rotated.ready().await?;
    let back = rotated.profile_secret(&added.id).await?.map(|s| s.expose().to_string());
    assert_eq!(back.as_deref(), Some(CANARY), "the new key opens what the old one sealed");
    assert_eq!(rotated.relay_token(false).await?.expose(), token.expose(), "the relay token too");
    rotated.close().await;
    assert_ne!(before, db_bytes(dir.path()).await, "the rows changed");
    assert!(!contains(&db_bytes(dir.path()).await, "canary"), "no plaintext after rotation either");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_is_refused_on_the_keychain() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine =
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?;
    let e = engine.rotate_master_key(&MasterKey::from_bytes([3; 32])).await.map(|_| ()).err();
    assert_eq!(e.map(|e| e.code()), Some(ErrorCode::Precondition), "nothing sealed, nothing to rotate");
    Ok(())
}

/// Issue 39: one `--vault sealed` command on an existing keychain data dir flipped it for good and
/// its keys read `missing`. The sealed open is refused, saying why and the way to a sealed
/// store; the data dir stays on the keychain with its key readable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keychain_data_dir_holding_keys_is_never_turned_sealed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(switchyard_vault::MemoryVault::new());
    let desk = Engine::open_with(dir.path(), vault.clone(), Arc::new(SystemClock)).await?;
    desk.connection_add(legacy("main"), None).await?;
    let added = desk.profile_add("main", profile("work", 1), secret(CANARY)).await?;
    desk.close().await;

    let e = refusal(open(dir.path(), [1; 32]).await, "a sealed open of a keychain data dir with a key");
    assert_eq!(e.code(), ErrorCode::KeychainUnavailable, "the vault cannot be opened as asked: {e}");
    let why = e.to_string();
    assert!(why.contains("1 key(s)") && why.contains("store copy"), "says what it holds and the way: {why}");
    assert!(!why.contains(CANARY), "never the key: {why}");

    let again = Engine::open_with(dir.path(), vault, Arc::new(SystemClock)).await?;
    let back = again.profile_secret(&added.id).await?.map(|s| s.expose().to_string());
    assert_eq!(back.as_deref(), Some(CANARY), "still a keychain data dir, its key readable");
    again.close().await;

    let empty = tempfile::tempdir()?;
    let fresh = open(empty.path(), [1; 32]).await?;
    assert!(fresh.sealed_key_id().is_some(), "a new data dir may start sealed");
    fresh.close().await;
    Ok(())
}
