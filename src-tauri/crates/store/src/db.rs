//! Opening the database file: WAL, busy timeout, foreign keys, migrations.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Sqlite, SqliteConnection, SqlitePool, Transaction};

use crate::error::StoreError;

/// The forward-only migrations in `migrations/`, applied by [`Store::open`].
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../../migrations");

/// A transaction started with `BEGIN IMMEDIATE` (read-then-write without BUSY upgrades).
pub type Tx = Transaction<'static, Sqlite>;

/// Applies pending migrations on a connection of its own with foreign keys OFF, then checks every
/// foreign key. A migration that rebuilds a table (0012: a CHECK cannot be altered in SQLite) drops
/// the old one, and with foreign keys on that DROP would cascade into every row referring to it;
/// `PRAGMA foreign_keys` cannot change inside the transaction sqlx runs each migration in, so it is
/// set on the connection before. Any dangling reference afterwards fails the open.
async fn migrate(opts: SqliteConnectOptions) -> Result<(), StoreError> {
    let mut conn = SqliteConnection::connect_with(&opts.foreign_keys(false)).await?;
    MIGRATOR.run(&mut conn).await?;
    let dangling: Vec<(String, Option<i64>, String)> =
        sqlx::query_as("SELECT \"table\", rowid, parent FROM pragma_foreign_key_check").fetch_all(&mut conn).await?;
    conn.close().await?;
    match dangling.first() {
        None => Ok(()),
        Some((table, rowid, parent)) => Err(StoreError::Corrupt {
            table: "foreign keys",
            detail: format!(
                "{} row(s) refer to missing rows after the migrations, first {table} rowid {rowid:?} -> {parent}",
                dangling.len()
            ),
        }),
    }
}

/// Handle to the SQLite file of one data dir.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if missing) `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let url = format!("sqlite://{}", path.display());
        let opts = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        migrate(opts.clone()).await?;
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(opts).await?;
        Ok(Self { pool })
    }

    /// Whether the store answers and every migration this build knows is applied (the
    /// relay's `/readyz`): one read of sqlx's migration table.
    pub async fn ready(&self) -> Result<(), StoreError> {
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = 1").fetch_all(&self.pool).await?;
        match MIGRATOR.iter().find(|m| !applied.contains(&m.version)) {
            None => Ok(()),
            Some(m) => Err(StoreError::Corrupt {
                table: "_sqlx_migrations",
                detail: format!("migration {} ({}) is not applied", m.version, m.description),
            }),
        }
    }

    /// Starts a write transaction that takes the write lock up front.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// A pooled connection for reads and single-statement writes.
    pub async fn acquire(&self) -> Result<sqlx::pool::PoolConnection<Sqlite>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// Folds the WAL into the database file, then closes every connection. Without the
    /// explicit checkpoint a process that exits right after closing can leave WAL frames that
    /// the next open folds in, so the file would change on a read-only run.
    pub async fn close(&self) {
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.pool).await {
            tracing::debug!(error = %e, "WAL checkpoint at close failed");
        }
        self.pool.close().await;
    }
}
