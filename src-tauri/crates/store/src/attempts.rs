//! The `attempts` table: append-only ledger of physical provider calls. Rows name the stable
//! profile id (never the label) and carry no secret material.

use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct AttemptRow {
    pub at_ms: i64,
    pub connection_id: String,
    pub turn: String,
    pub attempt: i64,
    pub profile_id: String,
    pub reason: String,
    pub model: Option<String>,
    pub status: Option<i64>,
    pub failure_kind: Option<String>,
    pub scope: Option<String>,
    pub ttfb_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
}

/// Appends a batch in one statement per row (call inside a transaction for one fsync).
pub async fn insert_batch(conn: &mut SqliteConnection, rows: &[AttemptRow]) -> Result<(), StoreError> {
    for r in rows {
        sqlx::query(
            "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, \
             scope, ttfb_ms, duration_ms, input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(r.at_ms)
        .bind(&r.connection_id)
        .bind(&r.turn)
        .bind(r.attempt)
        .bind(&r.profile_id)
        .bind(&r.reason)
        .bind(&r.model)
        .bind(r.status)
        .bind(&r.failure_kind)
        .bind(&r.scope)
        .bind(r.ttfb_ms)
        .bind(r.duration_ms)
        .bind(r.input_tokens)
        .bind(r.output_tokens)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Newest first.
pub async fn for_connection(
    conn: &mut SqliteConnection,
    connection_id: &str,
    limit: i64,
) -> Result<Vec<AttemptRow>, StoreError> {
    Ok(sqlx::query_as::<_, AttemptRow>(
        "SELECT at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, scope, ttfb_ms, \
         duration_ms, input_tokens, output_tokens FROM attempts WHERE connection_id = ? ORDER BY id DESC LIMIT ?",
    )
    .bind(connection_id)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// Keeps the newest `keep` rows overall; returns how many were removed.
pub async fn prune(conn: &mut SqliteConnection, keep: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM attempts WHERE id <= (SELECT id FROM attempts ORDER BY id DESC LIMIT 1 OFFSET ?)")
        .bind(keep)
        .execute(conn)
        .await?
        .rows_affected())
}
