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

/// Rows per INSERT statement, largest first (14 parameters each, well under SQLite's limit).
/// Only these three shapes are ever prepared: every distinct row count would be another
/// cached prepared statement per pooled connection (a 64-row INSERT compiles to a large
/// program), which grew the relay by ~10 MB under load.
const STATEMENT_ROWS: [usize; 3] = [64, 8, 1];

/// Appends a batch with multi-row INSERTs (call inside a transaction for one fsync). Each
/// statement is one round trip to the SQLite worker thread, so rows are grouped.
pub async fn insert_batch(conn: &mut SqliteConnection, rows: &[AttemptRow]) -> Result<(), StoreError> {
    let mut rest = rows;
    while !rest.is_empty() {
        let n = STATEMENT_ROWS.into_iter().find(|&n| n <= rest.len()).unwrap_or(1);
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
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

/// Keeps at most the newest `keep` rows overall (by id range: ids only grow, so this is an
/// index seek, not a scan of `keep` rows); returns how many were removed.
pub async fn prune(conn: &mut SqliteConnection, keep: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM attempts WHERE id <= (SELECT max(id) FROM attempts) - ?")
        .bind(keep)
        .execute(conn)
        .await?
        .rows_affected())
}
