//! The attempt ledger's retention cap: how many rows the `attempts` table keeps (a setting,
//! `switchyard settings ledger-retention-rows N`; default [`RETENTION_ROWS`]). The ledger
//! writer reads it each time it prunes (every 1 000 rows written), so a change applies to a
//! running relay without a restart.

use switchyard_store::{AnyConnection, StoreError};

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, LEDGER_RETENTION_ROWS};

/// Settings key of the retention cap.
pub const RETENTION_KEY: &str = LEDGER_RETENTION_ROWS.key;
pub use crate::settings::values::{MAX_RETENTION_ROWS, MIN_RETENTION_ROWS};

/// The cap as stored (default when unset or unreadable).
pub(crate) async fn retention_rows(conn: &mut AnyConnection) -> Result<i64, StoreError> {
    LEDGER_RETENTION_ROWS.read(conn, Scope::Global).await
}

impl Context {
    pub async fn ledger_retention_rows(&self) -> Result<i64, EngineError> {
        self.setting(&LEDGER_RETENTION_ROWS, Scope::Global).await
    }

    /// Sets the cap (1 000 – 10 000 000 rows); rows beyond it go at the next prune.
    pub async fn set_ledger_retention_rows(&self, rows: i64) -> Result<(), EngineError> {
        self.set_setting(&LEDGER_RETENTION_ROWS, Scope::Global, rows).await
    }
}
