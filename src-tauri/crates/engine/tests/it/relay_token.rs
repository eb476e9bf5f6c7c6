//! The relay token on the real keychain: concurrent first calls from two engines on one data
//! dir (as from two processes) create it once; every call prints the token that is stored.

use crate::common::{open, TestResult};

const ROUNDS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_calls_return_the_one_stored_token() -> TestResult {
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir()?;
        let a = open(dir.path()).await?;
        let b = open(dir.path()).await?;
        let (from_a, from_b) = tokio::join!(a.relay_token(false), b.relay_token(false));
        let (from_a, from_b) = (from_a?, from_b?);
        let third = open(dir.path()).await?;
        let stored = third.relay_token(false).await?;
        assert_eq!(from_a.expose(), from_b.expose(), "round {round}: two first calls must print the same token");
        assert_eq!(
            from_a.expose(),
            stored.expose(),
            "round {round}: the token printed first is the one stored (a later call prints it again)"
        );
        for engine in [a, b, third] {
            engine.close().await;
        }
    }
    Ok(())
}

#[tokio::test]
async fn rotation_replaces_the_stored_token() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let first = engine.relay_token(false).await?;
    let rotated = engine.relay_token(true).await?;
    assert_ne!(first.expose(), rotated.expose(), "rotate makes a new token");
    assert_eq!(engine.relay_token(false).await?.expose(), rotated.expose(), "the rotated token is the stored one");
    Ok(())
}
