//! A running relay learns of a rotated token from its revision in the settings table and
//! reads the keychain only then (or once a minute): a keychain read is a Secret Service
//! session, and read every second it was 6 % of the relay's CPU at 500 req/s. On a manual
//! clock and the memory vault, which counts its reads.

use std::sync::Arc;

use crate::common::clock::ManualClock;
use crate::common::TestResult;
use http::HeaderMap;
use switchyard_engine::{Engine, Router};
use switchyard_relay::RelayState;
use switchyard_vault::MemoryVault;

fn bearer(token: &str) -> Result<HeaderMap, Box<dyn std::error::Error>> {
    let mut h = HeaderMap::new();
    h.insert("authorization", format!("Bearer {token}").parse()?);
    Ok(h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keychain_is_read_when_the_token_revision_moves_or_once_a_minute() -> TestResult {
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(MemoryVault::new());
    let clock = ManualClock::new();
    let engine = Arc::new(Engine::open_with(dir.path(), vault.clone(), clock.clone()).await?);
    let first = engine.relay_token(false).await?;
    let state =
        RelayState::new(Arc::new(Router::start(engine.clone())), switchyard_engine::Secret::new(first.expose()))?;

    let reads = vault.reads();
    state.refresh_token().await;
    assert_eq!(vault.reads() - reads, 1, "the first check reads the keychain once");
    let reads = vault.reads();
    for _ in 0..5 {
        state.refresh_token().await;
    }
    assert_eq!(vault.reads() - reads, 0, "while the revision stays, the keychain is not asked");

    let rotated = engine.relay_token(true).await?;
    assert!(state.is_authorized(&bearer(first.expose())?, true), "until the next check the old token works");
    let reads = vault.reads();
    state.refresh_token().await;
    assert_eq!(vault.reads() - reads, 1, "a rotation moves the revision: one read");
    assert!(state.is_authorized(&bearer(rotated.expose())?, true), "the rotated token is accepted");
    assert!(!state.is_authorized(&bearer(first.expose())?, true), "and the old one refused");

    let reads = vault.reads();
    clock.step(59_000);
    state.refresh_token().await;
    assert_eq!(vault.reads() - reads, 0, "within a minute of the last read, nothing is read");
    clock.step(2_000);
    state.refresh_token().await;
    assert_eq!(vault.reads() - reads, 1, "after a minute the keychain is read again (an entry changed by hand)");
    Ok(())
}
