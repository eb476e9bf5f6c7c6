//! The `prices` table: the user's price per model, USD per million tokens. A cache price that
//! is `None` was not given (rows with such tokens then cost "unknown", never a guess).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct PriceRow {
    pub model: String,
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
    pub cache_read_usd_per_mtok: Option<f64>,
    pub cache_write_usd_per_mtok: Option<f64>,
    pub updated_at: i64,
}

/// Every price, by model name.
pub async fn list(conn: &mut AnyConnection) -> Result<Vec<PriceRow>, StoreError> {
    Ok(sqlx::query_as::<_, PriceRow>(
        "SELECT model, input_usd_per_mtok, output_usd_per_mtok, cache_read_usd_per_mtok, cache_write_usd_per_mtok, \
         updated_at FROM prices ORDER BY model",
    )
    .fetch_all(conn)
    .await?)
}

/// Sets a model's price (replacing the whole row: a cache price left out is cleared).
pub async fn put(conn: &mut AnyConnection, row: &PriceRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO prices (model, input_usd_per_mtok, output_usd_per_mtok, cache_read_usd_per_mtok, \
         cache_write_usd_per_mtok, updated_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT(model) DO UPDATE SET \
         input_usd_per_mtok = excluded.input_usd_per_mtok, output_usd_per_mtok = excluded.output_usd_per_mtok, \
         cache_read_usd_per_mtok = excluded.cache_read_usd_per_mtok, \
         cache_write_usd_per_mtok = excluded.cache_write_usd_per_mtok, updated_at = excluded.updated_at",
    )
    .bind(&row.model)
    .bind(row.input_usd_per_mtok)
    .bind(row.output_usd_per_mtok)
    .bind(crate::real::Real(row.cache_read_usd_per_mtok))
    .bind(crate::real::Real(row.cache_write_usd_per_mtok))
    .bind(row.updated_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a model's price; `false` when it had none.
pub async fn remove(conn: &mut AnyConnection, model: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query("DELETE FROM prices WHERE model = $1").bind(model).execute(conn).await?.rows_affected() > 0)
}
