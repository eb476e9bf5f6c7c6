//! Per-person relay tokens on a real SQLite file: a token is shown once and only its SHA-256
//! is stored; a live name cannot be added twice; revoking takes it out of what a relay accepts;
//! a revoked name may be added again with a new token.

use std::path::Path;
use std::sync::Arc;

use switchyard_engine::{user_token_hash, Engine, ErrorCode, SystemClock};

use crate::common::TestResult;

async fn db_text(dir: &Path) -> String {
    String::from_utf8_lossy(&crate::common::store_bytes(dir).await).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_are_added_once_revoked_and_added_again_with_a_new_token() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine =
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?;
    let first = engine.relay_user_add("alice").await?;
    assert!(first.expose().starts_with("syu_") && first.expose().len() == 68, "syu_ + 64 hex digits");
    let again = engine.relay_user_add("alice").await.map(|_| ()).err().map(|e| e.code());
    assert_eq!(again, Some(ErrorCode::Conflict), "a live name is not added twice");
    let bad = engine.relay_user_add("Alice Smith").await.map(|_| ()).err().map(|e| e.code());
    assert_eq!(bad, Some(ErrorCode::Invalid), "names are plain");

    let live = engine.relay_user_hashes().await?;
    assert_eq!(live, vec![(user_token_hash(first.expose()), "alice".to_string())], "the relay accepts the hash");
    let text = db_text(dir.path()).await;
    assert!(!text.contains(first.expose()), "the token itself is never stored");
    assert!(text.contains(&user_token_hash(first.expose())), "only its hash (the test reads the right file)");

    engine.relay_user_revoke("alice").await?;
    assert!(engine.relay_user_hashes().await?.is_empty(), "a revoked token is no longer accepted");
    let list = engine.relay_user_list().await?;
    assert!(list.len() == 1 && list[0].revoked_at.is_some(), "the list keeps the revoked user: {list:?}");
    let twice = engine.relay_user_revoke("alice").await.map(|_| ()).err().map(|e| e.code());
    assert_eq!(twice, Some(ErrorCode::NotFound), "nothing live to revoke");

    let second = engine.relay_user_add("alice").await?;
    assert_ne!(second.expose(), first.expose(), "a new token");
    let live = engine.relay_user_hashes().await?;
    assert_eq!(live, vec![(user_token_hash(second.expose()), "alice".to_string())], "only the new one is accepted");
    assert!(engine.relay_user_list().await?[0].revoked_at.is_none(), "and the user is live again");
    Ok(())
}
