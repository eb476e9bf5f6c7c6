//! The `quota` table: the latest limit reading per (profile, window, model), `model = ''` for
//! windows of the whole account. Readings are facts with the time they were seen; a write
//! never replaces a newer reading and skips profiles deleted meanwhile (the writer runs off
//! the request path, after the fact). A `health reset` ([`clear`]) deletes a profile's readings
//! and leaves a marker row (window [`RESET_MARKER`], seen at the reset) so that a reading seen
//! before it — still in a running relay's memory — is never written back, and the relay drops
//! it from memory ([`resets`]). [`prune`] keeps the newest readings under a cap. Each reading
//! also carries the first reading of the last hour of its window (`base_*`, migration 0009),
//! which the quota view forecasts from, and the overall window's representative claim.

use sqlx::{AnyConnection, FromRow};

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
    /// Which window binds the account (the overall window's representative claim).
    pub claim: Option<String>,
    /// The first reading of the last hour of this window: when, and its utilization.
    pub base_seen_at_ms: Option<i64>,
    pub base_utilization: Option<f64>,
}

/// The window name of a reset marker: `model` is the model reset (`''`: every window of the
/// profile), `seen_at_ms` when. Never a reading: listings leave it out.
pub const RESET_MARKER: &str = "*reset";

/// A `health reset` of a profile's readings (of one model's, or of all with `model` `''`).
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct QuotaReset {
    pub profile_id: String,
    pub model: String,
    pub at_ms: i64,
}

/// Writes `rows` in one transaction; returns how many were stored. A row older than the stored
/// reading of its key, of a profile that no longer exists, or seen before a reset of its
/// profile (and model) is skipped.
pub async fn upsert_batch(conn: &mut AnyConnection, rows: &[QuotaRow]) -> Result<u64, StoreError> {
    if rows.is_empty() {
        return Ok(0);
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut written = 0;
    for r in rows {
        written += sqlx::query(
            "INSERT INTO quota (profile_id, name, model, limit_value, remaining, utilization, resets_at_ms, status, \
             window_minutes, seen_at_ms, claim, base_seen_at_ms, base_utilization) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $13, $14 \
             WHERE EXISTS (SELECT 1 FROM profiles WHERE id = $1) \
             AND NOT EXISTS (SELECT 1 FROM quota m WHERE m.profile_id = $1 AND m.name = $11 \
             AND (m.model = '' OR m.model = $3) AND m.seen_at_ms >= $10) \
             ON CONFLICT(profile_id, name, model) DO UPDATE SET limit_value = excluded.limit_value, \
             remaining = excluded.remaining, utilization = excluded.utilization, resets_at_ms = excluded.resets_at_ms, \
             status = excluded.status, window_minutes = excluded.window_minutes, seen_at_ms = excluded.seen_at_ms, \
             claim = excluded.claim, base_seen_at_ms = excluded.base_seen_at_ms, \
             base_utilization = excluded.base_utilization \
             WHERE excluded.seen_at_ms >= quota.seen_at_ms",
        )
        .bind(&r.profile_id)
        .bind(&r.name)
        .bind(&r.model)
        .bind(r.limit_value)
        .bind(r.remaining)
        .bind(crate::real::Real(r.utilization))
        .bind(r.resets_at_ms)
        .bind(&r.status)
        .bind(r.window_minutes)
        .bind(r.seen_at_ms)
        .bind(RESET_MARKER)
        .bind(&r.claim)
        .bind(r.base_seen_at_ms)
        .bind(crate::real::Real(r.base_utilization))
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    tx.commit().await?;
    Ok(written)
}

/// Every reading of a connection's profiles, by profile, window and model.
pub async fn for_connection(conn: &mut AnyConnection, connection_id: &str) -> Result<Vec<QuotaRow>, StoreError> {
    Ok(sqlx::query_as::<_, QuotaRow>(
        "SELECT q.profile_id, q.name, q.model, q.limit_value, q.remaining, q.utilization, q.resets_at_ms, q.status, \
         q.window_minutes, q.seen_at_ms, q.claim, q.base_seen_at_ms, q.base_utilization \
         FROM quota q JOIN profiles p ON p.id = q.profile_id \
         WHERE p.connection_id = $1 AND q.name <> $2 ORDER BY q.profile_id, q.name, q.model",
    )
    .bind(connection_id)
    .bind(RESET_MARKER)
    .fetch_all(conn)
    .await?)
}

/// Every reading seen after `since_ms` (any process's: a team relay's replicas read each other's),
/// reset markers left out.
pub async fn seen_since(conn: &mut AnyConnection, since_ms: i64) -> Result<Vec<QuotaRow>, StoreError> {
    Ok(sqlx::query_as::<_, QuotaRow>(
        "SELECT profile_id, name, model, limit_value, remaining, utilization, resets_at_ms, status, \
         window_minutes, seen_at_ms, claim, base_seen_at_ms, base_utilization \
         FROM quota WHERE seen_at_ms > $1 AND name <> $2 ORDER BY seen_at_ms",
    )
    .bind(since_ms)
    .bind(RESET_MARKER)
    .fetch_all(conn)
    .await?)
}

/// `health reset`: deletes the readings of `profile_id` (only those of `model` when given) and
/// records the reset at `at_ms`, in one transaction. Returns how many readings went.
pub async fn clear(
    conn: &mut AnyConnection,
    profile_id: &str,
    model: Option<&str>,
    at_ms: i64,
) -> Result<u64, StoreError> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let removed = sqlx::query("DELETE FROM quota WHERE profile_id = $1 AND name <> $2 AND ($3 IS NULL OR model = $3)")
        .bind(profile_id)
        .bind(RESET_MARKER)
        .bind(model)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    sqlx::query(
        "INSERT INTO quota (profile_id, name, model, seen_at_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT(profile_id, name, model) DO UPDATE SET seen_at_ms = CASE WHEN excluded.seen_at_ms > quota.seen_at_ms \
         THEN excluded.seen_at_ms ELSE quota.seen_at_ms END",
    )
    .bind(profile_id)
    .bind(RESET_MARKER)
    .bind(model.unwrap_or_default())
    .bind(at_ms)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(removed)
}

/// Every `health reset` recorded (one row per profile and model reset; they go with their
/// profile).
pub async fn resets(conn: &mut AnyConnection) -> Result<Vec<QuotaReset>, StoreError> {
    Ok(sqlx::query_as::<_, QuotaReset>("SELECT profile_id, model, seen_at_ms AS at_ms FROM quota WHERE name = $1")
        .bind(RESET_MARKER)
        .fetch_all(conn)
        .await?)
}

/// Deletes all but the `keep` newest readings (markers are kept); returns how many went.
pub async fn prune(conn: &mut AnyConnection, keep: usize) -> Result<u64, StoreError> {
    let keep = i64::try_from(keep).unwrap_or(i64::MAX);
    // Postgres has no rowid (and no `LIMIT -1`): the key, and a tie among equal times broken by it.
    let sql = match crate::Backend::of(conn) {
        crate::Backend::Sqlite => {
            "DELETE FROM quota WHERE rowid IN (SELECT rowid FROM quota WHERE name <> $1 \
             ORDER BY seen_at_ms DESC, rowid DESC LIMIT -1 OFFSET $2)"
        }
        crate::Backend::Postgres => {
            "DELETE FROM quota WHERE (profile_id, name, model) IN (SELECT profile_id, name, model FROM quota \
             WHERE name <> $1 ORDER BY seen_at_ms DESC, profile_id DESC, name DESC, model DESC OFFSET $2)"
        }
    };
    Ok(sqlx::query(sql).bind(RESET_MARKER).bind(keep).execute(conn).await?.rows_affected())
}
