//! The `fallback_chains` table: one row per connection that has a fallback chain (its hops as
//! JSON, whether it was activated). Updates are compare-and-swap on `revision`.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ChainRow {
    pub connection_id: String,
    /// JSON array of `{"connection_id", "model"|null}`.
    pub hops: String,
    #[sqlx(try_from = "crate::flag::Flag")]
    pub active: bool,
    pub activated_at: Option<i64>,
    /// Imported activated: to be activated once the gates hold.
    #[sqlx(try_from = "crate::flag::Flag")]
    pub wanted: bool,
    pub revision: i64,
    pub updated_at: i64,
}

pub async fn get(conn: &mut AnyConnection, connection_id: &str) -> Result<Option<ChainRow>, StoreError> {
    Ok(sqlx::query_as::<_, ChainRow>(
        "SELECT connection_id, hops, active, activated_at, wanted, revision, updated_at FROM fallback_chains \
         WHERE connection_id = $1",
    )
    .bind(connection_id)
    .fetch_optional(conn)
    .await?)
}

pub async fn all(conn: &mut AnyConnection) -> Result<Vec<ChainRow>, StoreError> {
    Ok(sqlx::query_as::<_, ChainRow>(
        "SELECT connection_id, hops, active, activated_at, wanted, revision, updated_at FROM fallback_chains \
         ORDER BY connection_id",
    )
    .fetch_all(conn)
    .await?)
}

/// Stores `hops` as the (inactive) chain of `connection_id`. `expected`: the revision read, or
/// `None` when the connection must not have a chain yet.
pub async fn put(
    conn: &mut AnyConnection,
    connection_id: &str,
    hops: &str,
    expected: Option<i64>,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = match expected {
        None => sqlx::query_scalar::<_, i64>(
            "INSERT INTO fallback_chains (connection_id, hops, active, updated_at) VALUES ($1, $2, 0, $3) \
             ON CONFLICT(connection_id) DO NOTHING RETURNING revision",
        )
        .bind(connection_id)
        .bind(hops)
        .bind(now_ms)
        .fetch_optional(&mut *conn)
        .await?,
        Some(rev) => sqlx::query_scalar::<_, i64>(
            "UPDATE fallback_chains SET hops = $1, active = 0, activated_at = NULL, wanted = 0, revision = revision + 1, \
             updated_at = $2 WHERE connection_id = $3 AND revision = $4 RETURNING revision",
        )
        .bind(hops)
        .bind(now_ms)
        .bind(connection_id)
        .bind(rev)
        .fetch_optional(&mut *conn)
        .await?,
    };
    settle(conn, connection_id, done, expected).await
}

/// Activates (with the time) or deactivates the chain at revision `expected`.
pub async fn set_active(
    conn: &mut AnyConnection,
    connection_id: &str,
    active: bool,
    expected: i64,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE fallback_chains SET active = $1, activated_at = $2, wanted = 0, revision = revision + 1, updated_at = $3 \
         WHERE connection_id = $4 AND revision = $5 RETURNING revision",
    )
    .bind(i64::from(active))
    .bind(active.then_some(now_ms))
    .bind(now_ms)
    .bind(connection_id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    settle(conn, connection_id, done, Some(expected)).await
}

/// Inserts the chain of a connection just imported: inactive, `wanted` when the file had it
/// activated.
pub async fn insert_imported(
    conn: &mut AnyConnection,
    connection_id: &str,
    hops: &str,
    wanted: bool,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO fallback_chains (connection_id, hops, active, wanted, updated_at) VALUES ($1, $2, 0, $3, $4)",
    )
    .bind(connection_id)
    .bind(hops)
    .bind(i64::from(wanted))
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes the chain of `connection_id`; returns whether there was one.
pub async fn delete(conn: &mut AnyConnection, connection_id: &str) -> Result<bool, StoreError> {
    let done =
        sqlx::query("DELETE FROM fallback_chains WHERE connection_id = $1").bind(connection_id).execute(conn).await?;
    Ok(done.rows_affected() > 0)
}

async fn settle(
    conn: &mut AnyConnection,
    connection_id: &str,
    done: Option<i64>,
    expected: Option<i64>,
) -> Result<i64, StoreError> {
    if let Some(rev) = done {
        return Ok(rev);
    }
    match (get(conn, connection_id).await?, expected) {
        (Some(row), Some(e)) => Err(StoreError::Conflict { expected: e, found: row.revision }),
        (Some(row), None) => Err(StoreError::Conflict { expected: 0, found: row.revision }),
        (None, _) => Err(StoreError::NotFound("fallback chain")),
    }
}
