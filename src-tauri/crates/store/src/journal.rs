//! The `secret_journal` table: keychain locators recorded before a secret is written or an
//! old one deleted, so a crash between the keychain and the database leaves a trace that
//! start-up garbage collection follows.

use sqlx::SqliteConnection;

use crate::error::StoreError;

pub async fn record(conn: &mut SqliteConnection, service: &str, account: &str, now_ms: i64) -> Result<(), StoreError> {
    sqlx::query("INSERT OR IGNORE INTO secret_journal (service, account, created_at) VALUES (?, ?, ?)")
        .bind(service)
        .bind(account)
        .bind(now_ms)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn clear(conn: &mut SqliteConnection, service: &str, account: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM secret_journal WHERE service = ? AND account = ?")
        .bind(service)
        .bind(account)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn list(conn: &mut SqliteConnection) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, String)>("SELECT service, account FROM secret_journal ORDER BY created_at")
        .fetch_all(conn)
        .await?)
}
