//! The `pools` table on a real SQLite file: a name once, members and activation written
//! compare-and-swap, a members edit deactivates and forgets the launcher's position, and the
//! ledger's pool and origin columns select a pool's rows and a fallback's origin.

use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::pools::{self, NewPool};
use switchyard_store::{Store, StoreError};

async fn store() -> Result<(tempfile::TempDir, Store), StoreError> {
    let dir = tempfile::tempdir().map_err(|e| StoreError::Corrupt { table: "tmp", detail: e.to_string() })?;
    let store = Store::open(&dir.path().join("t.db")).await?;
    Ok((dir, store))
}

fn new_pool<'a>(id: &'a str, name: &'a str) -> NewPool<'a> {
    NewPool { id, name, protocol: "anthropic", members: "[]", mode: None, wanted: false }
}

#[tokio::test]
async fn pools_are_written_compare_and_swap() -> Result<(), StoreError> {
    let (_dir, store) = store().await?;
    let mut conn = store.acquire().await?;
    pools::insert(&mut conn, &new_pool("pl1", "fleet"), 1).await?;
    let dup = pools::insert(&mut conn, &new_pool("pl2", "fleet"), 1).await;
    assert!(matches!(dup, Err(StoreError::Duplicate { .. })), "a pool name is taken once: {dup:?}");
    let rev = pools::set_launch(&mut conn, "pl1", "{}", 1, 2).await?;
    let rev = pools::set_active(&mut conn, "pl1", Some("balanced"), true, rev, 3).await?;
    let row = pools::by_name(&mut conn, "fleet").await?.unwrap();
    assert!(row.active && row.mode.as_deref() == Some("balanced"), "activated in its mode: {row:?}");
    let stale = pools::set_members(&mut conn, "pl1", "[1]", 1, 4).await;
    assert!(
        matches!(stale, Err(StoreError::Conflict { expected: 1, found }) if found == rev),
        "a write naming an old revision fails: {stale:?}"
    );
    pools::set_members(&mut conn, "pl1", "[1]", rev, 5).await?;
    let row = pools::by_id(&mut conn, "pl1").await?.unwrap();
    assert!(!row.active, "new members must pass the gates again");
    assert_eq!(row.launch, None, "the launcher's position is forgotten with the old members");
    assert_eq!(row.mode.as_deref(), Some("balanced"), "the mode asked for is kept");
    assert!(pools::delete(&mut conn, "pl1").await?, "deleted");
    assert!(pools::all(&mut conn).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_pool_s_rows_and_a_fallback_s_origin_are_selected() -> Result<(), StoreError> {
    let (_dir, store) = store().await?;
    let mut conn = store.acquire().await?;
    let row = |connection: &str, pool: Option<&str>, origin: Option<&str>| AttemptRow {
        at_ms: 10,
        connection_id: connection.into(),
        turn: "t".into(),
        attempt: 1,
        profile_id: "p".into(),
        reason: "swrr".into(),
        pool_id: pool.map(str::to_string),
        origin_id: origin.map(str::to_string),
        ..Default::default()
    };
    attempts::insert_batch(
        &mut conn,
        vec![row("prim", None, None), row("spare", None, Some("prim")), row("glm", Some("pl1"), None)],
    )
    .await?;
    let prim = attempts::for_connection(&mut conn, "prim", 10).await?;
    assert_eq!(prim.len(), 2, "the origin's ledger shows the turn that went to spare");
    assert!(prim.iter().any(|r| r.connection_id == "spare"), "…named by the connection that served");
    let pool = attempts::for_pool(&mut conn, "pl1", 0, 10).await?;
    assert_eq!(pool.len(), 1, "a pool's rows by its id");
    assert_eq!(attempts::pool_page_since(&mut conn, "pl1", 0, 0, 10).await?.len(), 1, "paged the same way");
    Ok(())
}
