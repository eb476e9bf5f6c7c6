//! The `settings` table: small key/value pairs (install id, relay port, evidence max age).

use sqlx::AnyConnection;

use crate::error::StoreError;

pub const INSTALL_ID: &str = "install_id";

pub async fn get(conn: &mut AnyConnection, key: &str) -> Result<Option<(String, i64)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, i64)>("SELECT value, revision FROM settings WHERE key = $1")
        .bind(key)
        .fetch_optional(conn)
        .await?)
}

/// Inserts `value` unless the key exists; returns the stored value either way.
pub async fn get_or_insert(
    conn: &mut AnyConnection,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<String, StoreError> {
    sqlx::query("INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING")
        .bind(key)
        .bind(value)
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    get(conn, key).await?.map(|(v, _)| v).ok_or(StoreError::NotFound("settings"))
}

/// CAS write: `expected` is the revision read, or `None` when the key must not exist yet.
pub async fn put(
    conn: &mut AnyConnection,
    key: &str,
    value: &str,
    expected: Option<i64>,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = match expected {
        None => sqlx::query_scalar::<_, i64>(
            "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT(key) DO NOTHING RETURNING revision",
        )
        .bind(key)
        .bind(value)
        .bind(now_ms)
        .fetch_optional(&mut *conn)
        .await?,
        Some(rev) => sqlx::query_scalar::<_, i64>(
            "UPDATE settings SET value = $1, revision = revision + 1, updated_at = $2 WHERE key = $3 AND revision = $4 RETURNING revision",
        )
        .bind(value)
        .bind(now_ms)
        .bind(key)
        .bind(rev)
        .fetch_optional(&mut *conn)
        .await?,
    };
    match done {
        Some(rev) => Ok(rev),
        None => match get(conn, key).await? {
            Some((_, found)) => Err(StoreError::Conflict { expected: expected.unwrap_or(0), found }),
            None => Err(StoreError::NotFound("settings")),
        },
    }
}

/// Removes a key (back to its default); `false` when it was not set.
pub async fn remove(conn: &mut AnyConnection, key: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query("DELETE FROM settings WHERE key = $1").bind(key).execute(conn).await?.rows_affected() > 0)
}
