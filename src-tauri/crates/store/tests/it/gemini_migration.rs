//! Migration 0012 (protocol `gemini`) rebuilds the connections table to widen its CHECK. On a
//! database at the schema a released Switchyard had (every migration but 0012), with a connection,
//! its profiles, evidence, a fallback chain and history, the open keeps every row and every foreign
//! key: nothing cascades away during the rebuild, and the cascade still works after it.

use std::path::Path;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use switchyard_store::{connections, evidence, fallback, profiles, Store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The migration this test is about.
const GEMINI_VERSION: u32 = 12;

/// Copies every migration but 0012 into `to` (0014 landed before it: a real data dir of the last
/// release has 0001-0010 and 0014 applied).
fn previous_migrations(to: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations");
    let mut copied = 0;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let version: u32 = name.split('_').next().and_then(|v| v.parse().ok()).unwrap_or(0);
        if version != GEMINI_VERSION && name.ends_with(".sql") {
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
    let refused = sqlx::query(
        "INSERT INTO connections (id, slug, protocol, base_url, basis_fingerprint, created_at, updated_at) \
         VALUES ('g0', 'gem0', 'gemini', 'https://generativelanguage.googleapis.com', 'fp', 1, 1)",
    )
    .execute(&pool)
    .await;
    assert!(refused.is_err(), "the seed is at the previous schema: its CHECK refuses gemini");
    for sql in [
        "INSERT INTO connections (id, slug, protocol, base_url, basis_fingerprint, routing_mode, routing_note, revision, created_at, updated_at) \
         VALUES ('c1', 'main', 'anthropic', 'https://api.example.com', 'fp', 'balanced', 'why', 4, 10, 20), \
                ('c2', 'spare', 'anthropic', 'https://spare.example.com', 'fp2', 'legacy', NULL, 1, 11, 21)",
        "INSERT INTO profiles (id, connection_id, label, weight, priority, enabled, is_primary, locator_service, locator_account, \
         credential_revision, revision, created_at, updated_at) VALUES \
         ('p1', 'c1', 'alice', 3, 0, 1, 1, 'switchyard', 'acct-1', 2, 5, 11, 21), \
         ('p2', 'c1', 'bob', 1, 1, 0, 0, NULL, NULL, 1, 1, 12, 22), \
         ('p3', 'c2', 'carol', 1, 0, 1, 1, 'switchyard', 'acct-3', 1, 1, 13, 23)",
        "INSERT INTO evidence (profile_id, credential_revision, basis_fingerprint, verified_at, outcome, source, models_json, detail, revision) \
         VALUES ('p1', 2, 'fp', 30, 'ok', 'listed', '[]', NULL, 3)",
        "INSERT INTO fallback_chains (connection_id, hops, active, wanted, revision, updated_at) \
         VALUES ('c1', '[\"spare\"]', 1, 1, 2, 40)",
        "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status) \
         VALUES (50, 'c1', 't1', 1, 'p1', 'swrr', 'm1', 200)",
    ] {
        sqlx::query(sql).execute(&pool).await?;
    }
    pool.close().await;
    Ok(())
}

#[tokio::test]
async fn the_rebuild_keeps_every_connection_and_every_row_that_refers_to_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let migrations = dir.path().join("migrations");
    std::fs::create_dir(&migrations)?;
    assert!(previous_migrations(&migrations)? >= 11, "0001-0010 and 0014 make the previous schema");
    let db = dir.path().join("old.db");
    seed_previous_schema(&db, &migrations).await?;

    let store = Store::open(&db).await?;
    let mut conn = store.acquire().await?;
    let rows = connections::list(&mut conn).await?;
    let summary: Vec<_> = rows
        .iter()
        .map(|c| (c.id.as_str(), c.slug.as_str(), c.protocol.as_str(), c.routing_mode.as_str(), c.revision))
        .collect();
    assert_eq!(
        summary,
        vec![("c1", "main", "anthropic", "balanced", 4), ("c2", "spare", "anthropic", "legacy", 1)],
        "both connections survive the rebuild with their columns and revisions"
    );
    assert_eq!(rows[0].routing_note.as_deref(), Some("why"), "a nullable column is copied too");
    assert_eq!(profiles::for_connection(&mut conn, "c1").await?.len(), 2, "c1's profiles did not cascade away");
    assert_eq!(profiles::for_connection(&mut conn, "c2").await?.len(), 1, "c2's profile is kept");
    assert!(evidence::for_profile(&mut conn, "p1").await?.is_some(), "evidence is kept");
    let chain = fallback::get(&mut conn, "c1").await?.ok_or("the fallback chain cascaded away")?;
    assert_eq!((chain.hops.as_str(), chain.active), ("[\"spare\"]", true), "the chain is untouched");
    let attempts: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM attempts").fetch_one(&mut *conn).await?;
    assert_eq!(attempts, 1, "history stays");
    let dangling: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM pragma_foreign_key_check").fetch_one(&mut *conn).await?;
    assert_eq!(dangling, 0, "no row refers to a missing one");
    let fks: i64 = sqlx::query_scalar("PRAGMA foreign_keys").fetch_one(&mut *conn).await?;
    assert_eq!(fks, 1, "the pool's connections have foreign keys on again");

    let def = connections::Definition {
        protocol: "gemini".into(),
        base_url: "https://generativelanguage.googleapis.com".into(),
        headers_json: "[]".into(),
        models_json: "[]".into(),
        mapping_json: "{}".into(),
        basis_fingerprint: "fpg".into(),
    };
    connections::insert(&mut conn, "g1", "gem", &def, 60).await?;
    let unknown = connections::Definition { protocol: "vertex".into(), ..def };
    assert!(
        connections::insert(&mut conn, "v1", "vert", &unknown, 61).await.is_err(),
        "the rebuilt table still refuses a protocol it does not know"
    );

    let spare = connections::by_slug(&mut conn, "spare").await?.ok_or("spare")?;
    connections::delete(&mut conn, "c2", spare.revision).await?;
    assert!(
        profiles::for_connection(&mut conn, "c2").await?.is_empty(),
        "deleting a connection still cascades to its profiles: the rebuilt table is the one they refer to"
    );
    drop(conn);
    store.close().await;

    let again = Store::open(&db).await?;
    let mut conn = again.acquire().await?;
    assert_eq!(connections::list(&mut conn).await?.len(), 2, "a second open applies nothing again");
    Ok(())
}
