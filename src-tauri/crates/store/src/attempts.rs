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

/// Appends a batch in one statement, so in one implicit transaction and one round trip to
/// the SQLite worker thread whatever the batch size, with one prepared statement for every
/// size: the rows travel as one JSON array of arrays, unpacked by `json_each`. (Multi-row
/// INSERTs took a statement per row-count shape, each cached per pooled connection, and up
/// to five round trips for a 12-row batch.)
pub async fn insert_batch(conn: &mut SqliteConnection, rows: &[AttemptRow]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let packed = serde_json::to_string(&rows.iter().map(AttemptRow::packed).collect::<Vec<_>>())
        .map_err(|e| StoreError::Corrupt { table: "attempts", detail: e.to_string() })?;
    sqlx::query(
        "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, \
         scope, ttfb_ms, duration_ms, input_tokens, output_tokens) \
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, \
         value->>9, value->>10, value->>11, value->>12, value->>13 FROM json_each(?) ORDER BY key",
    )
    .bind(packed)
    .execute(conn)
    .await?;
    Ok(())
}

/// One row as a JSON array in column order (a tuple serializes as an array).
type Packed<'a> = (
    i64,
    &'a str,
    &'a str,
    i64,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<i64>,
    Option<&'a str>,
    Option<&'a str>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

impl AttemptRow {
    fn packed(&self) -> Packed<'_> {
        (
            self.at_ms,
            &self.connection_id,
            &self.turn,
            self.attempt,
            &self.profile_id,
            &self.reason,
            self.model.as_deref(),
            self.status,
            self.failure_kind.as_deref(),
            self.scope.as_deref(),
            self.ttfb_ms,
            self.duration_ms,
            self.input_tokens,
            self.output_tokens,
        )
    }
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
