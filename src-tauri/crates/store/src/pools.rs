//! The `pools` table: one row per pool (its members as JSON, the mode asked for, whether a
//! gated activation set it active, the launcher's SWRR position). Updates are compare-and-swap
//! on `revision`.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct PoolRow {
    pub id: String,
    pub name: String,
    pub protocol: String,
    /// JSON array of `{"connection_id", "slug", "model"|null, "weight"}`, in priority order.
    pub members: String,
    /// `balanced` or `priority`; `None` until first activated.
    pub mode: Option<String>,
    #[sqlx(try_from = "crate::flag::Flag")]
    pub active: bool,
    /// Imported activated: to be activated once the gates hold.
    #[sqlx(try_from = "crate::flag::Flag")]
    pub wanted: bool,
    /// The launcher's SWRR position (JSON), `None` before the first launch.
    pub launch: Option<String>,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, name, protocol, members, mode, active, wanted, launch, revision, created_at, updated_at";

pub async fn by_name(conn: &mut AnyConnection, name: &str) -> Result<Option<PoolRow>, StoreError> {
    Ok(sqlx::query_as::<_, PoolRow>(&format!("SELECT {COLUMNS} FROM pools WHERE name = $1"))
        .bind(name)
        .fetch_optional(conn)
        .await?)
}

pub async fn by_id(conn: &mut AnyConnection, id: &str) -> Result<Option<PoolRow>, StoreError> {
    Ok(sqlx::query_as::<_, PoolRow>(&format!("SELECT {COLUMNS} FROM pools WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?)
}

pub async fn all(conn: &mut AnyConnection) -> Result<Vec<PoolRow>, StoreError> {
    Ok(sqlx::query_as::<_, PoolRow>(&format!("SELECT {COLUMNS} FROM pools ORDER BY name")).fetch_all(conn).await?)
}

/// A new pool, inactive (`wanted`: an imported file had it activated in `mode`).
pub struct NewPool<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub protocol: &'a str,
    pub members: &'a str,
    pub mode: Option<&'a str>,
    pub wanted: bool,
}

pub async fn insert(conn: &mut AnyConnection, pool: &NewPool<'_>, now_ms: i64) -> Result<(), StoreError> {
    let done = sqlx::query(
        "INSERT INTO pools (id, name, protocol, members, mode, active, wanted, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8) ON CONFLICT(name) DO NOTHING",
    )
    .bind(pool.id)
    .bind(pool.name)
    .bind(pool.protocol)
    .bind(pool.members)
    .bind(pool.mode)
    .bind(i64::from(pool.wanted))
    .bind(now_ms)
    .bind(now_ms)
    .execute(conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::Duplicate { field: "pool name" });
    }
    Ok(())
}

/// Replaces the members at revision `expected`: the pool goes inactive (its gates must be
/// passed again) and the launcher's position is forgotten.
pub async fn set_members(
    conn: &mut AnyConnection,
    id: &str,
    members: &str,
    expected: i64,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE pools SET members = $1, active = 0, wanted = 0, launch = NULL, revision = revision + 1, \
         updated_at = $2 WHERE id = $3 AND revision = $4 RETURNING revision",
    )
    .bind(members)
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    settle(conn, id, done, expected).await
}

/// Activates in `mode` or deactivates (`mode` kept) at revision `expected`.
pub async fn set_active(
    conn: &mut AnyConnection,
    id: &str,
    mode: Option<&str>,
    active: bool,
    expected: i64,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE pools SET mode = COALESCE($1, mode), active = $2, wanted = 0, revision = revision + 1, updated_at = $3 \
         WHERE id = $4 AND revision = $5 RETURNING revision",
    )
    .bind(mode)
    .bind(i64::from(active))
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    settle(conn, id, done, expected).await
}

/// Stores the launcher's position at revision `expected`.
pub async fn set_launch(
    conn: &mut AnyConnection,
    id: &str,
    launch: &str,
    expected: i64,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE pools SET launch = $1, revision = revision + 1, updated_at = $2 WHERE id = $3 AND revision = $4 \
         RETURNING revision",
    )
    .bind(launch)
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    settle(conn, id, done, expected).await
}

/// Removes a pool; returns whether there was one.
pub async fn delete(conn: &mut AnyConnection, id: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query("DELETE FROM pools WHERE id = $1").bind(id).execute(conn).await?.rows_affected() > 0)
}

async fn settle(conn: &mut AnyConnection, id: &str, done: Option<i64>, expected: i64) -> Result<i64, StoreError> {
    if let Some(rev) = done {
        return Ok(rev);
    }
    match by_id(conn, id).await? {
        Some(row) => Err(StoreError::Conflict { expected, found: row.revision }),
        None => Err(StoreError::NotFound("pool")),
    }
}
