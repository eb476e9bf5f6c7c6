//! The `limits` table: caps on a scope (`user:NAME`, `users`, `connection:SLUG`, `pool:POOL`),
//! each with a stable id. A new capacity is a CAS on `revision` and keeps what the limit's
//! counters hold (`limit_counters.rs`); measure and period never change under one id.

use sqlx::{AnyConnection, FromRow};

use crate::error::{cas_failure, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LimitRow {
    pub id: String,
    pub scope: String,
    /// `requests`, `tokens`, `usd` (capacity in millionths of a USD) or `concurrency`.
    pub measure: String,
    pub capacity: i64,
    /// `minute` … `month`; `None` for concurrency.
    pub period: Option<String>,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Every limit, by id.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<LimitRow>, StoreError> {
    Ok(sqlx::query_as::<_, LimitRow>(
        "SELECT id, scope, measure, capacity, period, revision, created_at, updated_at FROM limits ORDER BY id",
    )
    .fetch_all(conn)
    .await?)
}

pub async fn by_id(conn: &mut AnyConnection, id: &str) -> Result<Option<LimitRow>, StoreError> {
    Ok(sqlx::query_as::<_, LimitRow>(
        "SELECT id, scope, measure, capacity, period, revision, created_at, updated_at FROM limits WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

/// Adds a limit (revision 1); an existing id is a [`StoreError::Duplicate`] (`field` = "limit").
pub async fn insert(conn: &mut AnyConnection, row: &LimitRow) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO limits (id, scope, measure, capacity, period, revision, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 1, $6, $6) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&row.id)
    .bind(&row.scope)
    .bind(&row.measure)
    .bind(row.capacity)
    .bind(row.period.as_deref())
    .bind(row.created_at)
    .execute(conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Duplicate { field: "limit" });
    }
    Ok(())
}

/// Sets a limit's capacity when its revision is still `revision`; returns the new revision.
pub async fn set_capacity(
    conn: &mut AnyConnection,
    id: &str,
    capacity: i64,
    revision: i64,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query(
        "UPDATE limits SET capacity = $1, revision = revision + 1, updated_at = $2 WHERE id = $3 AND revision = $4",
    )
    .bind(capacity)
    .bind(now_ms)
    .bind(id)
    .bind(revision)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(cas_failure(conn, "limits", id, revision).await);
    }
    Ok(revision + 1)
}

/// Removes a limit with its counters and slots; `None` when there was none, else its last
/// revision.
pub async fn remove(conn: &mut AnyConnection, id: &str) -> Result<Option<i64>, StoreError> {
    let revision: Option<i64> = sqlx::query_scalar("DELETE FROM limits WHERE id = $1 RETURNING revision")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    if revision.is_some() {
        sqlx::query("DELETE FROM limit_counters WHERE limit_id = $1").bind(id).execute(&mut *conn).await?;
        sqlx::query("DELETE FROM limit_leases WHERE limit_id = $1").bind(id).execute(&mut *conn).await?;
    }
    Ok(revision)
}
