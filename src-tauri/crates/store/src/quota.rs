//! The `quota` table: the latest limit reading per (profile, window, model), `model = ''` for
//! windows of the whole account. Readings are facts with the time they were seen; a write
//! never replaces a newer reading and skips profiles deleted meanwhile (the writer runs off
//! the request path, after the fact).

use sqlx::{FromRow, SqliteConnection};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct QuotaRow {
    pub profile_id: String,
    pub name: String,
    /// `''` for a window of the whole account.
    pub model: String,
    pub limit_value: Option<i64>,
    pub remaining: Option<i64>,
    /// Share used, 0.0 ..= 1.0.
    pub utilization: Option<f64>,
    pub resets_at_ms: Option<i64>,
    pub status: Option<String>,
    pub window_minutes: Option<i64>,
    pub seen_at_ms: i64,
}

/// Writes `rows` in one transaction; returns how many were stored. A row older than the stored
/// reading of its key, or of a profile that no longer exists, is skipped.
pub async fn upsert_batch(conn: &mut SqliteConnection, rows: &[QuotaRow]) -> Result<u64, StoreError> {
    if rows.is_empty() {
        return Ok(0);
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut written = 0;
    for r in rows {
        written += sqlx::query(
            "INSERT INTO quota (profile_id, name, model, limit_value, remaining, utilization, resets_at_ms, status, \
             window_minutes, seen_at_ms) \
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM profiles WHERE id = ?1) \
             ON CONFLICT(profile_id, name, model) DO UPDATE SET limit_value = excluded.limit_value, \
             remaining = excluded.remaining, utilization = excluded.utilization, resets_at_ms = excluded.resets_at_ms, \
             status = excluded.status, window_minutes = excluded.window_minutes, seen_at_ms = excluded.seen_at_ms \
             WHERE excluded.seen_at_ms >= quota.seen_at_ms",
        )
        .bind(&r.profile_id)
        .bind(&r.name)
        .bind(&r.model)
        .bind(r.limit_value)
        .bind(r.remaining)
        .bind(r.utilization)
        .bind(r.resets_at_ms)
        .bind(&r.status)
        .bind(r.window_minutes)
        .bind(r.seen_at_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    tx.commit().await?;
    Ok(written)
}

/// Every reading of a connection's profiles, by profile, window and model.
pub async fn for_connection(conn: &mut SqliteConnection, connection_id: &str) -> Result<Vec<QuotaRow>, StoreError> {
    Ok(sqlx::query_as::<_, QuotaRow>(
        "SELECT q.profile_id, q.name, q.model, q.limit_value, q.remaining, q.utilization, q.resets_at_ms, q.status, \
         q.window_minutes, q.seen_at_ms FROM quota q JOIN profiles p ON p.id = q.profile_id \
         WHERE p.connection_id = ? ORDER BY q.profile_id, q.name, q.model",
    )
    .bind(connection_id)
    .fetch_all(conn)
    .await?)
}
