//! Compare-and-swap on a real SQLite file: concurrent writers, conflicts, nothing half-written.

use switchyard_store::connections::{self, Definition};
use switchyard_store::profiles::{self, NewProfile, Settings};
use switchyard_store::{Store, StoreError};

fn definition() -> Definition {
    Definition {
        protocol: "openai".into(),
        base_url: "https://api.example.com/v1".into(),
        headers_json: "[]".into(),
        models_json: "[\"m\"]".into(),
        mapping_json: "{}".into(),
        basis_fingerprint: "f".repeat(64),
    }
}

pub(crate) async fn seeded() -> Result<(tempfile::TempDir, Store), StoreError> {
    let dir = tempfile::tempdir().map_err(|e| StoreError::Corrupt { table: "tmp", detail: e.to_string() })?;
    let store = Store::open(&dir.path().join("t.db")).await?;
    let mut conn = store.acquire().await?;
    connections::insert(&mut conn, "c1", "main", &definition(), 1).await?;
    let p = NewProfile {
        id: "p1",
        connection_id: "c1",
        label: "a",
        weight: 1,
        priority: 0,
        enabled: true,
        is_primary: true,
        locator: Some(("svc", "acct")),
    };
    profiles::insert(&mut conn, &p, 1).await?;
    drop(conn);
    Ok((dir, store))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_concurrent_writers_exactly_one_wins() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    for round in 0..20 {
        let rev = profiles::by_id(&mut *store.acquire().await?, "p1").await?.map(|p| p.revision).unwrap_or(0);
        let mut tasks = Vec::new();
        for writer in 0..2 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                let mut tx = store.begin().await?;
                let s = Settings { label: "a".into(), weight: 10 + writer, priority: 0, enabled: true };
                let r = profiles::update_settings(&mut tx, "p1", rev, &s, 2).await;
                tx.commit().await?;
                r
            }));
        }
        let mut wins = 0;
        let mut conflicts = 0;
        for t in tasks {
            match t.await.map_err(|e| StoreError::Corrupt { table: "task", detail: e.to_string() })? {
                Ok(new_rev) => {
                    assert_eq!(new_rev, rev + 1, "a winning CAS bumps the revision by exactly one");
                    wins += 1;
                }
                Err(StoreError::Conflict { expected, found }) => {
                    assert_eq!((expected, found), (rev, rev + 1), "the loser learns the revision it lost to");
                    conflicts += 1;
                }
                Err(e) => return Err(e),
            }
        }
        assert_eq!((wins, conflicts), (1, 1), "round {round}: exactly one writer may win a CAS race");
        let row = profiles::by_id(&mut *store.acquire().await?, "p1").await?;
        let w = row.map(|r| r.weight).unwrap_or_default();
        assert!(w == 10 || w == 11, "the row holds one writer's value whole, got weight {w}");
    }
    Ok(())
}

#[tokio::test]
async fn stale_update_changes_nothing_and_missing_row_is_not_found() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let before = profiles::by_id(&mut conn, "p1").await?;
    let s = Settings { label: "changed".into(), weight: 5, priority: 3, enabled: false };
    let stale = profiles::update_settings(&mut conn, "p1", 99, &s, 3).await;
    assert!(
        matches!(stale, Err(StoreError::Conflict { expected: 99, found: 1 })),
        "stale revision must conflict: {stale:?}"
    );
    assert_eq!(profiles::by_id(&mut conn, "p1").await?, before, "a refused CAS leaves the row untouched");
    let missing = profiles::update_settings(&mut conn, "nope", 1, &s, 3).await;
    assert!(matches!(missing, Err(StoreError::NotFound("profiles"))), "unknown id is not found: {missing:?}");
    let dup = connections::insert(&mut conn, "c2", "main", &definition(), 1).await;
    assert!(matches!(dup, Err(StoreError::Duplicate { field: "slug" })), "slugs are unique: {dup:?}");
    Ok(())
}

#[tokio::test]
async fn deleting_a_connection_cascades_and_wal_is_on() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut *conn).await?;
    assert_eq!(mode, "wal", "concurrent readers need WAL");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys").fetch_one(&mut *conn).await?;
    assert_eq!(fk, 1, "cascades need foreign keys on");
    connections::delete(&mut conn, "c1", 1).await?;
    assert_eq!(profiles::by_id(&mut conn, "p1").await?, None, "profiles go with their connection");
    Ok(())
}

#[tokio::test]
async fn attempt_batches_keep_every_row_in_order_and_prune_keeps_the_newest() -> Result<(), StoreError> {
    use switchyard_store::attempts::{self, AttemptRow};
    let (_dir, store) = seeded().await?;
    let row = |i: i64| AttemptRow {
        at_ms: i,
        connection_id: "c1".into(),
        turn: format!("t{i}"),
        attempt: 1,
        profile_id: "p1".into(),
        reason: "swrr".into(),
        model: Some("m".into()),
        status: Some(200),
        ttfb_ms: Some(1),
        duration_ms: Some(2),
        input_tokens: Some(3),
        output_tokens: Some(4),
        session: Some(format!("s{}", i % 3)),
        conversation: Some(format!("a:{}", i % 5)),
        moved: (i % 7 == 0).then(|| "excluded:circuit_open".to_string()),
        cache_read_tokens: Some(i * 10),
        cache_write_tokens: Some(i),
        tags: (i % 4 == 0).then(|| format!(r#"{{"job":"j{i}"}}"#)),
        ..Default::default()
    };
    // Odd text, and the NULL columns of a failed attempt.
    let odd = AttemptRow {
        at_ms: 150,
        turn: "quote \" back\\slash ünï\u{1F600} nul?".into(),
        model: None,
        status: None,
        failure_kind: Some("rate_limited".into()),
        scope: Some("credential".into()),
        ttfb_ms: None,
        duration_ms: Some(i64::MAX),
        input_tokens: None,
        output_tokens: None,
        session: None,
        conversation: None,
        moved: None,
        cache_read_tokens: None,
        cache_write_tokens: None,
        tags: None,
        ..row(150)
    };
    let rows: Vec<AttemptRow> = (0..150).map(row).chain([odd.clone()]).collect();
    let mut conn = store.acquire().await?;
    attempts::insert_batch(&mut conn, Vec::new()).await?;
    attempts::insert_batch(&mut conn, rows[..1].to_vec()).await?;
    attempts::insert_batch(&mut conn, rows[1..].to_vec()).await?;
    let newest = attempts::for_connection(&mut conn, "c1", 1000).await?;
    assert_eq!(
        newest.len(),
        151,
        "an empty, a 1-row (padded) and a 150-row (64+64+22, one transaction) batch keep every row"
    );
    assert_eq!(newest[0], odd, "odd text, NULLs and i64::MAX survive, and padding rows are not inserted");
    assert_eq!(newest[1], row(149), "newest first, every column intact");
    assert_eq!(newest[2], row(148), "the tags column round-trips");
    let order: Vec<i64> = newest.iter().rev().map(|r| r.at_ms).collect();
    assert_eq!(order, (0..=150).collect::<Vec<_>>(), "rows keep their batch order");
    assert_eq!(attempts::prune(&mut conn, 100).await?, 51, "prune removes only the oldest beyond the cap");
    assert_eq!(
        attempts::for_connection(&mut conn, "c1", 1000).await?.last().map(|r| r.at_ms),
        Some(51),
        "the newest 100 stay"
    );
    Ok(())
}
