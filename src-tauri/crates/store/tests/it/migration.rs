//! Migration 0008 (profile kinds) on a real SQLite file at the previous schema: a database
//! written by migrations 0001–0007, with profiles, evidence, circuits and attempts, opens
//! after the migration with every profile and its evidence intact and every profile an API
//! key. Then a kind round-trips and the table refuses a kind it does not know.

use std::path::Path;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use switchyard_store::profiles::{self, Kind, NewProfile};
use switchyard_store::{evidence, Store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The migration this test is about; every earlier file is "the previous schema".
const KINDS_VERSION: u32 = 8;

/// Copies the migrations before 0008 into `to`, so a migrator can build the previous schema
/// exactly as an older Switchyard did (same files, same checksums).
fn previous_migrations(to: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations");
    let mut copied = 0;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let version: u32 = name.split('_').next().and_then(|v| v.parse().ok()).unwrap_or(u32::MAX);
        if version < KINDS_VERSION {
            std::fs::copy(&path, to.join(&name))?;
            copied += 1;
        }
    }
    Ok(copied)
}

async fn seed_previous_schema(db: &Path, migrations: &Path) -> TestResult {
    let opts = SqliteConnectOptions::new().filename(db).create_if_missing(true).foreign_keys(true);
    let pool = SqlitePoolOptions::new().max_connections(1).connect_with(opts).await?;
    sqlx::migrate::Migrator::new(migrations).await?.run(&pool).await?;
    let has_kind: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info('profiles') WHERE name = 'kind'")
        .fetch_one(&pool)
        .await?;
    assert_eq!(has_kind, 0, "the seed is at the previous schema: profiles has no kind column yet");
    for sql in [
        "INSERT INTO connections (id, slug, protocol, base_url, basis_fingerprint, routing_mode, revision, created_at, updated_at) \
         VALUES ('c1', 'main', 'anthropic', 'https://api.example.com', 'fp', 'balanced', 4, 10, 20)",
        "INSERT INTO profiles (id, connection_id, label, weight, priority, enabled, is_primary, locator_service, locator_account, \
         credential_revision, revision, created_at, updated_at) VALUES \
         ('p1', 'c1', 'alice', 3, 0, 1, 1, 'switchyard', 'acct-1', 2, 5, 11, 21), \
         ('p2', 'c1', 'bob', 1, 1, 0, 0, NULL, NULL, 1, 1, 12, 22)",
        "INSERT INTO evidence (profile_id, credential_revision, basis_fingerprint, verified_at, outcome, source, models_json, detail, revision) \
         VALUES ('p1', 2, 'fp', 30, 'ok', 'listed', '[{\"model\":\"m1\",\"source\":\"listed\",\"supported\":true,\"failure_kind\":null}]', NULL, 3)",
        "INSERT INTO circuits (profile_id, model, state, kind, until_ms, backoff_level, revision, updated_at) \
         VALUES ('p1', '', 'open', 'rate_limited', 99, 1, 1, 40)",
        "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status) \
         VALUES (50, 'c1', 't1', 1, 'p1', 'swrr', 'm1', 200)",
    ] {
        sqlx::query(sql).execute(&pool).await?;
    }
    pool.close().await;
    Ok(())
}

#[tokio::test]
async fn a_database_at_the_previous_schema_keeps_every_profile_and_its_evidence() -> TestResult {
    let dir = tempfile::tempdir()?;
    let migrations = dir.path().join("migrations");
    std::fs::create_dir(&migrations)?;
    assert_eq!(previous_migrations(&migrations)?, 7, "0001-0007 make the previous schema");
    let db = dir.path().join("old.db");
    seed_previous_schema(&db, &migrations).await?;

    let store = Store::open(&db).await?;
    let mut conn = store.acquire().await?;
    let rows = profiles::for_connection(&mut conn, "c1").await?;
    let summary: Vec<_> = rows
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.label.as_str(),
                p.weight,
                p.priority,
                p.enabled,
                p.is_primary,
                p.locator_account.as_deref(),
                p.credential_revision,
                p.revision,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![("p1", "alice", 3, 0, true, true, Some("acct-1"), 2, 5), ("p2", "bob", 1, 1, false, false, None, 1, 1),],
        "every profile survives the migration with its settings, locator and revisions"
    );
    for p in &rows {
        assert_eq!(
            (p.kind.as_str(), p.client.as_deref(), p.expires_at),
            ("api_key", None, None),
            "an existing profile ({}) is an API key after the migration",
            p.id
        );
    }
    let ev = evidence::for_profile(&mut conn, "p1").await?.ok_or("p1's evidence is gone")?;
    assert_eq!(
        (ev.credential_revision, ev.basis_fingerprint.as_str(), ev.verified_at, ev.outcome.as_str(), ev.revision),
        (2, "fp", 30, "ok", 3),
        "the evidence row is untouched, still bound to the same credential revision (so it stays current)"
    );
    assert!(ev.models_json.contains("\"m1\""), "its models are kept");
    let circuits: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM circuits").fetch_one(&mut *conn).await?;
    let attempts: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM attempts").fetch_one(&mut *conn).await?;
    assert_eq!((circuits, attempts), (1, 1), "cooldowns and history stay");
    drop(conn);
    store.close().await;
    Ok(())
}

#[tokio::test]
async fn a_kind_round_trips_and_an_unknown_one_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("k.db")).await?;
    let mut conn = store.acquire().await?;
    let def = switchyard_store::connections::Definition {
        protocol: "anthropic".into(),
        base_url: "https://api.example.com".into(),
        headers_json: "[]".into(),
        models_json: "[]".into(),
        mapping_json: "{}".into(),
        basis_fingerprint: "fp".into(),
    };
    switchyard_store::connections::insert(&mut conn, "c1", "main", &def, 1).await?;
    let new = |id: &'static str, label: &'static str| NewProfile {
        id,
        connection_id: "c1",
        label,
        weight: 1,
        priority: 0,
        enabled: true,
        is_primary: false,
        locator: None,
    };
    let token = Kind { kind: "token", client: Some("claude-code"), expires_at: Some(1_900_000_000_000) };
    profiles::insert_kind(&mut conn, &new("p1", "tok"), token, 1).await?;
    profiles::insert_kind(
        &mut conn,
        &new("p2", "ext"),
        Kind { kind: "external", client: Some("codex"), expires_at: None },
        1,
    )
    .await?;
    let rows = profiles::for_connection(&mut conn, "c1").await?;
    let got: Vec<_> = rows.iter().map(|p| (p.kind.as_str(), p.client.as_deref(), p.expires_at)).collect();
    assert_eq!(
        got,
        vec![("token", Some("claude-code"), Some(1_900_000_000_000)), ("external", Some("codex"), None)],
        "kind, client and expiry are stored as given"
    );
    let rev = profiles::replace_credential(&mut conn, "p1", rows[0].revision, ("svc", "acct"), None, 2).await?;
    let fresh = profiles::by_id(&mut conn, "p1").await?.ok_or("p1")?;
    assert_eq!(
        (fresh.revision, fresh.expires_at, fresh.kind.as_str()),
        (rev, None, "token"),
        "a new token replaces the expiry, keeps the kind"
    );
    let bad = Kind { kind: "password", client: None, expires_at: None };
    assert!(
        profiles::insert_kind(&mut conn, &new("p3", "bad"), bad, 1).await.is_err(),
        "the table's CHECK refuses a kind it does not know"
    );
    let bad_client = Kind { kind: "external", client: Some("cursor"), expires_at: None };
    assert!(
        profiles::insert_kind(&mut conn, &new("p4", "bad2"), bad_client, 1).await.is_err(),
        "and an unknown client"
    );
    Ok(())
}
