//! The `relay_users` table: per-person relay tokens, kept as SHA-256 hashes only.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct RelayUserRow {
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// Adds `name` with `token_hash`, or gives a revoked name a new token. A live name is a
/// [`StoreError::Duplicate`] (`field` = "user").
pub async fn add(conn: &mut AnyConnection, name: &str, token_hash: &str, now_ms: i64) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO relay_users (name, token_hash, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at, \
         revoked_at = NULL WHERE relay_users.revoked_at IS NOT NULL",
    )
    .bind(name)
    .bind(token_hash)
    .bind(now_ms)
    .execute(conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Duplicate { field: "user" });
    }
    Ok(())
}

/// Every user, revoked ones included, by name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<RelayUserRow>, StoreError> {
    Ok(sqlx::query_as::<_, RelayUserRow>("SELECT name, created_at, revoked_at FROM relay_users ORDER BY name")
        .fetch_all(conn)
        .await?)
}

/// Revokes `name`'s token; `false` when no live user has that name.
pub async fn revoke(conn: &mut AnyConnection, name: &str, now_ms: i64) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE relay_users SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL")
        .bind(now_ms)
        .bind(name)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// (token hash, name) of every live user: what a relay accepts.
pub async fn live_hashes(conn: &mut AnyConnection) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, String)>("SELECT token_hash, name FROM relay_users WHERE revoked_at IS NULL")
        .fetch_all(conn)
        .await?)
}
