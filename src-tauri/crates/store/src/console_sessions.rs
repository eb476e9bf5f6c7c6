//! The `console_sessions` table: the web console's sign-in sessions, by the SHA-256 of their
//! cookie value, with the admin they belong to, the hash of the token they were made from and of
//! their CSRF token. A session is valid only while its user is a live, unexpired admin whose
//! token is still the one it was made from ([`valid`] joins `relay_users`).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SessionRow {
    pub user_name: String,
    pub csrf_hash: String,
    pub expires_at: i64,
}

/// Keeps a new session.
pub async fn insert(
    conn: &mut AnyConnection,
    id_hash: &str,
    user_name: &str,
    token_hash: &str,
    csrf_hash: &str,
    now_ms: i64,
    expires_at: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO console_sessions (id_hash, user_name, token_hash, csrf_hash, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id_hash)
    .bind(user_name)
    .bind(token_hash)
    .bind(csrf_hash)
    .bind(now_ms)
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// The session `id_hash` names if it is valid at `now_ms`: not expired, and its user a live
/// admin whose token is the one the session was made from and not past its own expiry.
pub async fn valid(conn: &mut AnyConnection, id_hash: &str, now_ms: i64) -> Result<Option<SessionRow>, StoreError> {
    Ok(sqlx::query_as::<_, SessionRow>(
        "SELECT s.user_name, s.csrf_hash, s.expires_at FROM console_sessions s \
         JOIN relay_users u ON u.name = s.user_name AND u.token_hash = s.token_hash \
         WHERE s.id_hash = $1 AND s.expires_at > $2 AND u.revoked_at IS NULL AND u.role = 'admin' \
         AND (u.expires_at IS NULL OR u.expires_at > $2)",
    )
    .bind(id_hash)
    .bind(now_ms)
    .fetch_optional(conn)
    .await?)
}

/// Ends a session (sign-out). Whether there was one.
pub async fn remove(conn: &mut AnyConnection, id_hash: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM console_sessions WHERE id_hash = $1").bind(id_hash).execute(conn).await?;
    Ok(done.rows_affected() > 0)
}

/// Drops the sessions that ended before `now_ms`.
pub async fn prune(conn: &mut AnyConnection, now_ms: i64) -> Result<u64, StoreError> {
    let done = sqlx::query("DELETE FROM console_sessions WHERE expires_at <= $1").bind(now_ms).execute(conn).await?;
    Ok(done.rows_affected())
}

/// Gives a session a new CSRF token's hash (a reloaded page asks for a new one: the old one is
/// never stored in the browser). Whether the session exists.
pub async fn set_csrf(conn: &mut AnyConnection, id_hash: &str, csrf_hash: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE console_sessions SET csrf_hash = $1 WHERE id_hash = $2")
        .bind(csrf_hash)
        .bind(id_hash)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}
