//! The `response_origins` table (migration 0015): which profile produced a Responses answer, so
//! a request continuing it (`previous_response_id`) on another replica goes to the same key.
//! Rows expire; [`sweep`] deletes ended ones.

use sqlx::AnyConnection;

use crate::error::StoreError;

/// Remembers that `profile_id` produced `response_id` on `connection_id`, until `expires_ms`.
pub async fn put(
    conn: &mut AnyConnection,
    connection_id: &str,
    response_id: &str,
    profile_id: &str,
    expires_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO response_origins (connection_id, response_id, profile_id, expires_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (connection_id, response_id) DO UPDATE SET profile_id = excluded.profile_id, \
         expires_ms = excluded.expires_ms",
    )
    .bind(connection_id)
    .bind(response_id)
    .bind(profile_id)
    .bind(expires_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// The profile that produced `response_id`, while its row lives.
pub async fn get(
    conn: &mut AnyConnection,
    connection_id: &str,
    response_id: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar::<_, String>(
        "SELECT profile_id FROM response_origins WHERE connection_id = $1 AND response_id = $2 AND expires_ms > $3",
    )
    .bind(connection_id)
    .bind(response_id)
    .bind(now_ms)
    .fetch_optional(conn)
    .await?)
}

/// Deletes every origin that ended before `now_ms`; returns how many.
pub async fn sweep(conn: &mut AnyConnection, now_ms: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM response_origins WHERE expires_ms <= $1")
        .bind(now_ms)
        .execute(conn)
        .await?
        .rows_affected())
}
