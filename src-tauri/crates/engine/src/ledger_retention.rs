//! The attempt ledger's retention cap: how many rows the `attempts` table keeps (a setting,
//! `switchyard settings ledger-retention-rows N`; default [`RETENTION_ROWS`]). The ledger
//! writer reads it each time it prunes (every 1 000 rows written), so a change applies to a
//! running relay without a restart.

use switchyard_core::InvalidInput;
use switchyard_store::{settings, SqliteConnection, StoreError};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::ledger::RETENTION_ROWS;

/// Settings key of the retention cap.
pub const RETENTION_KEY: &str = "ledger_retention_rows";
pub const MIN_RETENTION_ROWS: i64 = 1_000;
pub const MAX_RETENTION_ROWS: i64 = 10_000_000;

/// The cap as stored (default when unset or unreadable).
pub(crate) async fn retention_rows(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    Ok(settings::get(conn, RETENTION_KEY)
        .await?
        .and_then(|(v, _)| v.parse().ok())
        .filter(|n| (MIN_RETENTION_ROWS..=MAX_RETENTION_ROWS).contains(n))
        .unwrap_or(RETENTION_ROWS))
}

impl Engine {
    pub async fn ledger_retention_rows(&self) -> Result<i64, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(retention_rows(&mut conn).await?)
    }

    /// Sets the cap (1 000 – 10 000 000 rows); rows beyond it go at the next prune.
    pub async fn set_ledger_retention_rows(&self, rows: i64) -> Result<(), EngineError> {
        if !(MIN_RETENTION_ROWS..=MAX_RETENTION_ROWS).contains(&rows) {
            return Err(InvalidInput::new(
                "ledger_retention_rows",
                format!("must be between {MIN_RETENTION_ROWS} and {MAX_RETENTION_ROWS} (got {rows})"),
            )
            .into());
        }
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, RETENTION_KEY).await?.map(|(_, rev)| rev);
        settings::put(&mut conn, RETENTION_KEY, &rows.to_string(), current, self.now_ms()).await?;
        Ok(())
    }
}
