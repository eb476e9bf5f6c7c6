//! The `circuits` table: persisted cooldowns per profile (`model = ''`) and per
//! (profile, model). Probe claims live in memory only and never reach this table.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct CircuitRow {
    pub profile_id: String,
    pub model: String,
    pub state: String,
    pub kind: Option<String>,
    pub until_ms: Option<i64>,
    pub backoff_level: i64,
    pub revision: i64,
    pub updated_at: i64,
}

/// Writes the circuit's current state, creating the row if needed.
pub async fn upsert(conn: &mut AnyConnection, c: &CircuitRow) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO circuits (profile_id, model, state, kind, until_ms, backoff_level, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT(profile_id, model) DO UPDATE SET state = excluded.state, kind = excluded.kind, \
         until_ms = excluded.until_ms, backoff_level = excluded.backoff_level, updated_at = excluded.updated_at, \
         revision = circuits.revision + 1 RETURNING revision",
    )
    .bind(&c.profile_id)
    .bind(&c.model)
    .bind(&c.state)
    .bind(&c.kind)
    .bind(c.until_ms)
    .bind(c.backoff_level)
    .bind(c.updated_at)
    .fetch_one(conn)
    .await?)
}

/// Resets every circuit of a profile (credential replacement, disable, re-verification).
pub async fn clear_profile(conn: &mut AnyConnection, profile_id: &str) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM circuits WHERE profile_id = $1").bind(profile_id).execute(conn).await?.rows_affected())
}

/// Every stored circuit (start-up rebuilds the in-memory board from these).
pub async fn all(conn: &mut AnyConnection) -> Result<Vec<CircuitRow>, StoreError> {
    Ok(sqlx::query_as::<_, CircuitRow>(
        "SELECT profile_id, model, state, kind, until_ms, backoff_level, revision, updated_at FROM circuits ORDER BY profile_id, model",
    )
    .fetch_all(conn)
    .await?)
}

/// Deletes one circuit row (`model = ''` is the credential-wide one).
pub async fn clear_one(conn: &mut AnyConnection, profile_id: &str, model: &str) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM circuits WHERE profile_id = $1 AND model = $2")
        .bind(profile_id)
        .bind(model)
        .execute(conn)
        .await?
        .rows_affected())
}
