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

/// Rows per INSERT statement (14 parameters each, well under SQLite's parameter limit).
const ROWS_PER_STATEMENT: usize = 64;

/// Appends a batch with multi-row INSERTs (call inside a transaction for one fsync). Each
/// statement is one round trip to the SQLite worker thread, so rows are grouped.
pub async fn insert_batch(conn: &mut SqliteConnection, rows: &[AttemptRow]) -> Result<(), StoreError> {
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        let mut q = sqlx::QueryBuilder::new(
            "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, \
             scope, ttfb_ms, duration_ms, input_tokens, output_tokens) ",
        );
        q.push_values(chunk, |mut b, r| {
            b.push_bind(r.at_ms)
                .push_bind(&r.connection_id)
                .push_bind(&r.turn)
                .push_bind(r.attempt)
                .push_bind(&r.profile_id)
                .push_bind(&r.reason)
                .push_bind(&r.model)
                .push_bind(r.status)
                .push_bind(&r.failure_kind)
                .push_bind(&r.scope)
                .push_bind(r.ttfb_ms)
                .push_bind(r.duration_ms)
                .push_bind(r.input_tokens)
                .push_bind(r.output_tokens);
        });
        q.build().execute(&mut *conn).await?;
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
