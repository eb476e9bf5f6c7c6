//! The `relay_users` table: per-person relay tokens, kept as SHA-256 hashes only, with each
//! user's role, scope (comma-separated connections/pools and model patterns; empty = all) and
//! expiry. Every change bumps `revision` (the audit names it before and after).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct RelayUserRow {
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// `user` or `admin`.
    pub role: String,
    pub connections: String,
    pub models: String,
    pub expires_at: Option<i64>,
    pub revision: i64,
}

/// What a user may do: role, scope, expiry (the fields `add` and `edit` write).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    pub role: String,
    pub connections: String,
    pub models: String,
    pub expires_at: Option<i64>,
}

const COLUMNS: &str = "name, created_at, revoked_at, role, connections, models, expires_at, revision";

/// Adds `name` with `token_hash`, or gives a revoked name a new token (and a new revision). A
/// live name is a [`StoreError::Duplicate`] (`field` = "user"). Returns the revision.
pub async fn add(
    conn: &mut AnyConnection,
    name: &str,
    token_hash: &str,
    grant: &Grant,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let revision: Option<i64> = sqlx::query_scalar(
        "INSERT INTO relay_users (name, token_hash, created_at, role, connections, models, expires_at, revision) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1) \
         ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at, \
         revoked_at = NULL, role = excluded.role, connections = excluded.connections, models = excluded.models, \
         expires_at = excluded.expires_at, revision = relay_users.revision + 1 \
         WHERE relay_users.revoked_at IS NOT NULL RETURNING revision",
    )
    .bind(name)
    .bind(token_hash)
    .bind(now_ms)
    .bind(&grant.role)
    .bind(&grant.connections)
    .bind(&grant.models)
    .bind(grant.expires_at)
    .fetch_optional(conn)
    .await?;
    revision.ok_or(StoreError::Duplicate { field: "user" })
}

/// Every user, revoked ones included, by name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<RelayUserRow>, StoreError> {
    Ok(sqlx::query_as::<_, RelayUserRow>(&format!("SELECT {COLUMNS} FROM relay_users ORDER BY name"))
        .fetch_all(conn)
        .await?)
}

/// A live user (not revoked).
pub async fn live(conn: &mut AnyConnection, name: &str) -> Result<Option<RelayUserRow>, StoreError> {
    Ok(sqlx::query_as::<_, RelayUserRow>(&format!(
        "SELECT {COLUMNS} FROM relay_users WHERE name = $1 AND revoked_at IS NULL"
    ))
    .bind(name)
    .fetch_optional(conn)
    .await?)
}

/// Writes a live user's grant when its revision is still `revision`; returns the new revision.
pub async fn edit(conn: &mut AnyConnection, name: &str, grant: &Grant, revision: i64) -> Result<i64, StoreError> {
    let done = sqlx::query(
        "UPDATE relay_users SET role = $1, connections = $2, models = $3, expires_at = $4, revision = revision + 1 \
         WHERE name = $5 AND revision = $6 AND revoked_at IS NULL",
    )
    .bind(&grant.role)
    .bind(&grant.connections)
    .bind(&grant.models)
    .bind(grant.expires_at)
    .bind(name)
    .bind(revision)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(stale(conn, name, revision).await);
    }
    Ok(revision + 1)
}

/// Gives a live user a new token (the old hash is gone at once); returns the new revision.
pub async fn rotate(conn: &mut AnyConnection, name: &str, token_hash: &str) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE relay_users SET token_hash = $1, revision = revision + 1 WHERE name = $2 AND revoked_at IS NULL \
         RETURNING revision",
    )
    .bind(token_hash)
    .bind(name)
    .fetch_optional(conn)
    .await?)
}

async fn stale(conn: &mut AnyConnection, name: &str, expected: i64) -> StoreError {
    match live(conn, name).await {
        Ok(Some(row)) => StoreError::Conflict { expected, found: row.revision },
        Ok(None) => StoreError::NotFound("relay user"),
        Err(e) => e,
    }
}

/// Revokes `name`'s token; the revision after, or `None` when no live user has that name.
pub async fn revoke(conn: &mut AnyConnection, name: &str, now_ms: i64) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "UPDATE relay_users SET revoked_at = $1, revision = revision + 1 WHERE name = $2 AND revoked_at IS NULL \
         RETURNING revision",
    )
    .bind(now_ms)
    .bind(name)
    .fetch_optional(conn)
    .await?)
}

/// A live token: its hash and its user's grant.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LiveToken {
    pub token_hash: String,
    pub name: String,
    pub role: String,
    pub connections: String,
    pub models: String,
    pub expires_at: Option<i64>,
}

/// Every live user's token hash and grant: what a relay accepts.
pub async fn live_tokens(conn: &mut AnyConnection) -> Result<Vec<LiveToken>, StoreError> {
    Ok(sqlx::query_as::<_, LiveToken>(
        "SELECT token_hash, name, role, connections, models, expires_at FROM relay_users WHERE revoked_at IS NULL",
    )
    .fetch_all(conn)
    .await?)
}
