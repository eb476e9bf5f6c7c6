//! The values settings hold that are more than a number or a word: what a setting's stored
//! text reads into (the table in `mod.rs` declares each setting with its default and range; the
//! use case that means it reads it). Kept with the table, so a setting's value is declared
//! where the setting is, and the rooms that use it import it from here.

use std::time::Duration;

use switchyard_core::routing::DEFAULT_AFFINITY_WINDOW;

/// The relay's port unless the `relay_port` setting says otherwise.
pub const DEFAULT_RELAY_PORT: u16 = 4141;
/// The default wait for a provider's first byte.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default maximum evidence age: 7 days.
pub const DEFAULT_MAX_EVIDENCE_AGE_MS: i64 = 7 * 24 * 3600 * 1000;
/// Rows kept in the `attempts` table unless the `ledger_retention_rows` setting says otherwise
/// (`ledger/retention.rs`), and the range that setting takes.
pub const RETENTION_ROWS: i64 = 100_000;
pub const MIN_RETENTION_ROWS: i64 = 1_000;
pub const MAX_RETENTION_ROWS: i64 = 10_000_000;
/// The most concurrent runs a profile may be given (the CLI backend).
pub const MAX_CLI_CONCURRENCY: u8 = 16;

/// The stored setting: the mode and the window (also remembered under `turn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AffinitySetting {
    pub conversation: bool,
    pub window: Duration,
}

impl Default for AffinitySetting {
    fn default() -> Self {
        AffinitySetting { conversation: true, window: DEFAULT_AFFINITY_WINDOW }
    }
}

/// The stored setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CliBackendSetting {
    pub enabled: bool,
    pub max_concurrent: u8,
}

impl Default for CliBackendSetting {
    fn default() -> Self {
        CliBackendSetting { enabled: false, max_concurrent: 2 }
    }
}

/// An exec position: SWRR's current weights by profile id, in candidate order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExecPosition(pub Vec<(String, i64)>);
