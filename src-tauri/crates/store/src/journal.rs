//! The `secret_journal` table: keychain locators recorded before a secret is written or an
//! old one deleted, so a crash between the keychain and the database leaves a trace that
//! start-up garbage collection follows. A write in progress carries its writer's pid and a
//! lease (migration 0003); the rule for what is an orphan lives in the engine.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct JournalEntry {
    pub service: String,
    pub account: String,
    pub created_at: i64,
    /// The process writing this secret; `None` for a secret to delete (or an old entry).
    pub owner_pid: Option<i64>,
    /// Until when (unix ms) the writer may still commit the secret.
    pub lease_until: Option<i64>,
}

/// Records a secret to delete: no writer, an orphan as soon as no profile references it.
pub async fn record(conn: &mut AnyConnection, service: &str, account: &str, now_ms: i64) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO secret_journal (service, account, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (service, account) DO UPDATE SET owner_pid = NULL, lease_until = NULL",
    )
    .bind(service)
    .bind(account)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records a secret about to be written by process `owner_pid`, which has until
/// `lease_until` (unix ms) to commit it to a profile row.
pub async fn record_write(
    conn: &mut AnyConnection,
    service: &str,
    account: &str,
    owner_pid: i64,
    lease_until: i64,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO secret_journal (service, account, created_at, owner_pid, lease_until) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (service, account) DO UPDATE SET owner_pid = excluded.owner_pid, lease_until = excluded.lease_until",
    )
    .bind(service)
    .bind(account)
    .bind(now_ms)
    .bind(owner_pid)
    .bind(lease_until)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes an entry; `false` when there was none (start-up clean-up already took it).
pub async fn clear(conn: &mut AnyConnection, service: &str, account: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM secret_journal WHERE service = $1 AND account = $2")
        .bind(service)
        .bind(account)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Every entry, oldest first.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<JournalEntry>, StoreError> {
    Ok(sqlx::query_as::<_, JournalEntry>(
        "SELECT service, account, created_at, owner_pid, lease_until FROM secret_journal ORDER BY created_at",
    )
    .fetch_all(conn)
    .await?)
}
