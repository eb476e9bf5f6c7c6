//! The `sealed_secrets` table: the sealed vault's rows (nonce, ciphertext and the id of the
//! master key they were sealed under). The store never sees a plaintext secret or the key.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SealedRow {
    pub service: String,
    pub account: String,
    pub key_id: String,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

/// Inserts or replaces the row at (`service`, `account`).
pub async fn put(conn: &mut AnyConnection, row: &SealedRow, now_ms: i64) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sealed_secrets (service, account, key_id, nonce, ciphertext, updated_at) VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (service, account) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce, \
         ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
    )
    .bind(&row.service)
    .bind(&row.account)
    .bind(&row.key_id)
    .bind(&row.nonce)
    .bind(&row.ciphertext)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn get(conn: &mut AnyConnection, service: &str, account: &str) -> Result<Option<SealedRow>, StoreError> {
    Ok(sqlx::query_as::<_, SealedRow>(
        "SELECT service, account, key_id, nonce, ciphertext FROM sealed_secrets WHERE service = $1 AND account = $2",
    )
    .bind(service)
    .bind(account)
    .fetch_optional(conn)
    .await?)
}

/// `true` when a row was deleted.
pub async fn delete(conn: &mut AnyConnection, service: &str, account: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM sealed_secrets WHERE service = $1 AND account = $2")
        .bind(service)
        .bind(account)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Every row (master-key rotation re-seals them all in one transaction).
pub async fn all(conn: &mut AnyConnection) -> Result<Vec<SealedRow>, StoreError> {
    Ok(sqlx::query_as::<_, SealedRow>(
        "SELECT service, account, key_id, nonce, ciphertext FROM sealed_secrets ORDER BY service, account",
    )
    .fetch_all(conn)
    .await?)
}

/// The distinct master-key ids rows are sealed under (a process checks its key against them at
/// start).
pub async fn key_ids(conn: &mut AnyConnection) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar::<_, String>("SELECT DISTINCT key_id FROM sealed_secrets ORDER BY key_id")
        .fetch_all(conn)
        .await?)
}
