//! `attempts::tagged_since` on a real SQLite file: a profile's rows since a time whose tags hold
//! one name = value (what `switchyard exec --failover` reads for its launch), and nothing else.

use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::{Store, StoreError};

fn row(at_ms: i64, profile: &str, tags: Option<&str>, kind: Option<&str>) -> AttemptRow {
    AttemptRow {
        at_ms,
        connection_id: "c1".into(),
        turn: format!("t{at_ms}"),
        attempt: 1,
        profile_id: profile.into(),
        reason: "pinned".into(),
        failure_kind: kind.map(str::to_string),
        tags: tags.map(str::to_string),
        ..AttemptRow::default()
    }
}

#[tokio::test]
async fn rows_of_one_launch_are_found_by_their_tag() -> Result<(), StoreError> {
    let dir = tempfile::tempdir().map_err(|e| StoreError::Corrupt { table: "tmp", detail: e.to_string() })?;
    let store = Store::open(&dir.path().join("t.db")).await?;
    let mut conn = store.acquire().await?;
    let launch = r#"{"launch":"l-1"}"#;
    attempts::insert_batch(
        &mut conn,
        vec![
            row(100, "p1", Some(launch), None),
            row(200, "p1", Some(launch), Some("rate_limited")),
            row(300, "p1", Some(r#"{"launch":"l-2"}"#), Some("quota_exhausted")),
            row(400, "p2", Some(launch), Some("quota_exhausted")),
            row(500, "p1", None, Some("quota_exhausted")),
            row(600, "p1", Some(r#"{"team":"x","launch":"l-1"}"#), None),
            row(50, "p1", Some(launch), Some("auth_invalid")),
        ],
    )
    .await?;
    let found = attempts::tagged_since(&mut conn, "c1", "p1", 100, "launch", "l-1").await?;
    let at: Vec<i64> = found.iter().map(|r| r.at_ms).collect();
    assert_eq!(at, vec![600, 200, 100], "this profile's rows of launch l-1 since 100, newest first: {at:?}");
    let none = attempts::tagged_since(&mut conn, "c1", "p1", 0, "launch", "l-9").await?;
    assert!(none.is_empty(), "another launch's id finds nothing");
    Ok(())
}
