//! Where a data dir's store lives: its SQLite file unless the caller names a Postgres database
//! (`--store postgres://…`, `SWITCHYARD_STORE`). A data dir always exists (install lock, login
//! lock files), wherever the store is.
//!
//! Test hook (docs/decisions.md), compiled only with the `test-hooks` feature (the engine's own
//! tests; never a release build): when `SWITCHYARD_TEST_PG` names a Postgres server (set by
//! `scripts/with-postgres`), every data dir opened without an explicit store gets a database of
//! its own on that server, named after the dir, so the engine's whole test suite runs on
//! Postgres unchanged (one parameterised suite, not two copies). Unset, nothing changes.

use std::path::Path;

use switchyard_store::Location;

use crate::error::EngineError;

/// File name of the database inside a data dir.
pub const DB_FILE: &str = "switchyard.db";

/// The Postgres server the test suite's data dirs get their databases on.
#[cfg(feature = "test-hooks")]
pub const TEST_PG_ENV: &str = "SWITCHYARD_TEST_PG";

/// The store of `data_dir` when the caller names none (see the module doc for the test hook).
pub async fn store_location(data_dir: &Path) -> Result<Location, EngineError> {
    #[cfg(feature = "test-hooks")]
    if let Some(server) = std::env::var(TEST_PG_ENV).ok().filter(|s| !s.trim().is_empty()) {
        let name = format!("sy_{:016x}", fnv1a(data_dir.to_string_lossy().as_bytes()));
        return Ok(Location::Postgres(switchyard_store::ensure_postgres_database(server.trim(), &name).await?));
    }
    Ok(Location::File(data_dir.join(DB_FILE)))
}

#[cfg(feature = "test-hooks")]
/// 64-bit FNV-1a: a stable name for a path (not a security boundary; temp dirs differ anyway).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}
