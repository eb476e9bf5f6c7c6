//! The `key_fees` table: a subscription key's monthly fee in USD (one row per profile; the row
//! goes with its profile).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct KeyFeeRow {
    pub profile_id: String,
    pub monthly_usd: f64,
    pub updated_at: i64,
}

/// The fees of a connection's profiles.
pub async fn for_connection(conn: &mut AnyConnection, connection_id: &str) -> Result<Vec<KeyFeeRow>, StoreError> {
    Ok(sqlx::query_as::<_, KeyFeeRow>(
        "SELECT f.profile_id, f.monthly_usd, f.updated_at FROM key_fees f JOIN profiles p ON p.id = f.profile_id \
         WHERE p.connection_id = $1 ORDER BY f.profile_id",
    )
    .bind(connection_id)
    .fetch_all(conn)
    .await?)
}

/// Every fee.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<KeyFeeRow>, StoreError> {
    Ok(sqlx::query_as::<_, KeyFeeRow>("SELECT profile_id, monthly_usd, updated_at FROM key_fees ORDER BY profile_id")
        .fetch_all(conn)
        .await?)
}

pub async fn put(conn: &mut AnyConnection, row: &KeyFeeRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO key_fees (profile_id, monthly_usd, updated_at) VALUES ($1, $2, $3) ON CONFLICT(profile_id) DO \
         UPDATE SET monthly_usd = excluded.monthly_usd, updated_at = excluded.updated_at",
    )
    .bind(&row.profile_id)
    .bind(row.monthly_usd)
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a profile's fee; `false` when it had none.
pub async fn remove(conn: &mut AnyConnection, profile_id: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query("DELETE FROM key_fees WHERE profile_id = $1").bind(profile_id).execute(conn).await?.rows_affected()
        > 0)
}
