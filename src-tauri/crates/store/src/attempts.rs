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
    /// The client's session, hashed (never the raw id).
    pub session: Option<String>,
    /// The request's conversation key (a hash with its kind prefix, never the raw id).
    pub conversation: Option<String>,
    /// Why this turn moved its warm conversation to another key (`excluded:<exclusion>`,
    /// `unavailable`, `removed`); `None` when it did not move.
    pub moved: Option<String>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
}

/// Newest first.
pub async fn for_connection(
    conn: &mut SqliteConnection,
    connection_id: &str,
    limit: i64,
) -> Result<Vec<AttemptRow>, StoreError> {
    Ok(sqlx::query_as::<_, AttemptRow>(
        "SELECT at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, scope, ttfb_ms, \
         duration_ms, input_tokens, output_tokens, session, conversation, moved, cache_read_tokens, cache_write_tokens \
         FROM attempts WHERE connection_id = ? ORDER BY id DESC LIMIT ?",
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

/// Rows per INSERT statement; a shorter batch pads with NULL rows that the statement skips,
/// so one prepared statement serves every batch size (each distinct shape would be another
/// cached statement per pooled connection, ~10 MB of relay RSS under load when there were 64).
const SHAPE_ROWS: usize = 64;

/// Columns bound per row.
const COLUMNS: usize = 19;

/// `INSERT … SELECT * FROM (VALUES (…) × 64) WHERE column1 IS NOT NULL` (`at_ms` is never
/// NULL in a real row).
fn values_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let row = format!("({})", vec!["?"; COLUMNS].join(","));
        format!(
            "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, \
             scope, ttfb_ms, duration_ms, input_tokens, output_tokens, session, conversation, moved, cache_read_tokens, \
             cache_write_tokens) SELECT * FROM (VALUES {}) WHERE column1 IS NOT NULL",
            vec![row; SHAPE_ROWS].join(",")
        )
    })
}

/// Appends a batch: up to 64 rows in one statement (one implicit transaction, one round trip
/// to the SQLite worker thread); a longer batch in one transaction. Bound parameters, not a
/// JSON array unpacked by `json_each`, which cost SQLite 7 vs 4.5 µs per row (256-row batches).
pub async fn insert_batch(conn: &mut SqliteConnection, rows: &[AttemptRow]) -> Result<(), StoreError> {
    if rows.len() <= SHAPE_ROWS {
        return insert_chunk(conn, rows).await;
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    for chunk in rows.chunks(SHAPE_ROWS) {
        insert_chunk(&mut tx, chunk).await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn insert_chunk(conn: &mut SqliteConnection, chunk: &[AttemptRow]) -> Result<(), StoreError> {
    if chunk.is_empty() {
        return Ok(());
    }
    let mut q = sqlx::query(values_sql());
    for r in chunk {
        q = q
            .bind(r.at_ms)
            .bind(r.connection_id.as_str())
            .bind(r.turn.as_str())
            .bind(r.attempt)
            .bind(r.profile_id.as_str())
            .bind(r.reason.as_str())
            .bind(r.model.as_deref())
            .bind(r.status)
            .bind(r.failure_kind.as_deref())
            .bind(r.scope.as_deref())
            .bind(r.ttfb_ms)
            .bind(r.duration_ms)
            .bind(r.input_tokens)
            .bind(r.output_tokens)
            .bind(r.session.as_deref())
            .bind(r.conversation.as_deref())
            .bind(r.moved.as_deref())
            .bind(r.cache_read_tokens)
            .bind(r.cache_write_tokens);
    }
    for _ in chunk.len()..SHAPE_ROWS {
        for _ in 0..COLUMNS {
            q = q.bind(None::<i64>);
        }
    }
    q.execute(conn).await?;
    Ok(())
}
