//! Opening the store: an SQLite file (WAL, busy timeout, foreign keys) or a Postgres database,
//! each with its own forward-only migrations, behind one sqlx `Any` pool.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, PgConnection, SqliteConnection, Transaction};

use crate::error::StoreError;

/// The forward-only SQLite migrations in `migrations/`.
static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../../migrations");
/// The forward-only Postgres migrations in `migrations/postgres/` (docs/decisions.md: the
/// first one is the schema SQLite reaches at 0014; later ones port SQLite's one to one).
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../../migrations/postgres");

/// Key of the transaction-scoped advisory lock every Postgres write transaction takes: writers
/// queue on it like SQLite's `BEGIN IMMEDIATE` queues on the file's write lock, so a
/// read-then-write transaction (the revision CAS, the journal) sees no concurrent writer.
const WRITE_LOCK_KEY: i64 = 0x5357_5954_4452;

/// A write transaction (SQLite `BEGIN IMMEDIATE`; Postgres `BEGIN` + the write lock).
pub type Tx = Transaction<'static, Any>;

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (created if missing): the embedded default.
    File(PathBuf),
    /// A Postgres database, `postgres://user@host:port/db` (a team's server).
    Postgres(String),
}

impl Location {
    /// A `--store` / `SWITCHYARD_STORE` value: `postgres://…` / `postgresql://…`, or a file path
    /// (`sqlite://` prefix optional).
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Location::Postgres(text.to_string())
        } else {
            Location::File(PathBuf::from(text.strip_prefix("sqlite://").unwrap_or(text)))
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }

    /// The location with any password in a Postgres URL replaced, for messages and logs.
    pub fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(url) => {
                let shown = match (url.find("://"), url.rfind('@')) {
                    (Some(s), Some(at)) if at > s => {
                        let user = &url[s + 3..at];
                        let user = user.split(':').next().unwrap_or_default();
                        format!("{}{user}:***{}", &url[..s + 3], &url[at..])
                    }
                    _ => url.clone(),
                };
                hide_query_password(&shown)
            }
        }
    }
}

/// `…?password=SECRET&…` with the value replaced (libpq also takes the password there).
fn hide_query_password(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else { return url.to_string() };
    let fields: Vec<String> = query
        .split('&')
        .map(|f| match f.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => f.to_string(),
        })
        .collect();
    format!("{base}?{}", fields.join("&"))
}

/// Which database engine a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend of a connection (store functions with backend-specific SQL branch on this).
    pub fn of(conn: &AnyConnection) -> Self {
        if conn.backend_name().eq_ignore_ascii_case("postgresql") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }
}

/// Applies pending migrations on a connection of its own with foreign keys OFF, then checks every
/// foreign key. A migration that rebuilds a table (0012: a CHECK cannot be altered in SQLite) drops
/// the old one, and with foreign keys on that DROP would cascade into every row referring to it;
/// `PRAGMA foreign_keys` cannot change inside the transaction sqlx runs each migration in, so it is
/// set on the connection before. Any dangling reference afterwards fails the open.
async fn migrate_sqlite(opts: SqliteConnectOptions) -> Result<(), StoreError> {
    let mut conn = SqliteConnection::connect_with(&opts.foreign_keys(false)).await?;
    SQLITE_MIGRATOR.run(&mut conn).await?;
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

/// Handle to one store (an SQLite file or a Postgres database).
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

/// Creates the SQLite file `path` empty, readable by its owner only, when it does not exist yet
/// (SQLite takes an empty file as a new database, and gives its WAL and shared-memory files the
/// database file's mode): the store holds the configuration, the ledger and — sealed — the
/// sealed secrets, so a `--store PATH` anywhere is as private as the data dir's own file.
fn create_private(path: &Path) {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    // An existing file is left as it is; any other failure (a missing directory) is SQLite's own
    // open to report, with the path.
    drop(options.open(path));
}

impl Store {
    /// Opens (creating if missing) the SQLite file `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_at(&Location::File(path.to_path_buf())).await
    }

    /// Opens the store at `location` and applies its backend's pending migrations (on
    /// Postgres under sqlx's migration advisory lock, so replicas starting together apply
    /// each migration once).
    pub async fn open_at(location: &Location) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        match location {
            Location::File(path) => {
                create_private(path);
                let url = format!("sqlite://{}", path.display());
                let opts = SqliteConnectOptions::from_str(&url)?
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(5))
                    .foreign_keys(true);
                migrate_sqlite(opts).await?;
                let pool = AnyPoolOptions::new()
                    .max_connections(4)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute(
                                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; \
                                 PRAGMA foreign_keys = ON;",
                            )
                            .await?;
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await?;
                Ok(Self { pool, backend: Backend::Sqlite })
            }
            Location::Postgres(url) => {
                let mut conn = PgConnection::connect(url).await?;
                POSTGRES_MIGRATOR.run(&mut conn).await?;
                conn.close().await?;
                let pool = AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await?;
                Ok(Self { pool, backend: Backend::Postgres })
            }
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether the store answers and every migration this build knows is applied (the
    /// relay's `/readyz`): one read of sqlx's migration table.
    pub async fn ready(&self) -> Result<(), StoreError> {
        let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_all(&self.pool)
            .await?;
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATOR,
            Backend::Postgres => &POSTGRES_MIGRATOR,
        };
        match migrator.iter().find(|m| !applied.contains(&m.version)) {
            None => Ok(()),
            Some(m) => Err(StoreError::Corrupt {
                table: "_sqlx_migrations",
                detail: format!("migration {} ({}) is not applied", m.version, m.description),
            }),
        }
    }

    /// Starts a write transaction that takes the write lock up front.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        match self.backend {
            Backend::Sqlite => Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?),
            Backend::Postgres => {
                let mut tx = self.pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(WRITE_LOCK_KEY).execute(&mut *tx).await?;
                Ok(tx)
            }
        }
    }

    /// A write transaction that locks only the rows it writes (limit counters: one row per
    /// limit window, so replicas admitting under different limits never wait on each other):
    /// SQLite `BEGIN IMMEDIATE` (the file has one write lock anyway); Postgres a plain read
    /// committed transaction, without the store-wide write lock of [`Store::begin`].
    pub async fn begin_rows(&self) -> Result<Tx, StoreError> {
        match self.backend {
            Backend::Sqlite => Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?),
            Backend::Postgres => Ok(self.pool.begin().await?),
        }
    }

    /// A read-only view of the whole store as of its first read (a copy reads every table
    /// through it): SQLite's deferred transaction, Postgres's repeatable read. It takes no
    /// write lock, so writers carry on meanwhile.
    pub async fn begin_read(&self) -> Result<Tx, StoreError> {
        match self.backend {
            Backend::Sqlite => Ok(self.pool.begin_with("BEGIN DEFERRED").await?),
            Backend::Postgres => {
                Ok(self.pool.begin_with("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY").await?)
            }
        }
    }

    /// Postgres: holds the advisory lock `key` (one of several replicas' single-flight work, e.g.
    /// an owned login's refresh) in a transaction of its own until the returned value is dropped,
    /// waiting at most `wait` for another holder; a holder that dies loses it with its connection.
    /// SQLite: `None` — one data dir, whose file locks cover every process on it.
    pub async fn hold_lock(&self, key: i64, wait: std::time::Duration) -> Result<Option<Tx>, StoreError> {
        if self.backend == Backend::Sqlite {
            return Ok(None);
        }
        let mut tx = self.pool.begin().await?;
        sqlx::query(&format!("SET LOCAL lock_timeout = '{}ms'", wait.as_millis())).execute(&mut *tx).await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(key).execute(&mut *tx).await?;
        Ok(Some(tx))
    }

    /// A pooled connection for reads and single-statement writes.
    pub async fn acquire(&self) -> Result<sqlx::pool::PoolConnection<Any>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// SQLite: folds the WAL into the database file, then closes every connection. Without the
    /// explicit checkpoint a process that exits right after closing can leave WAL frames that
    /// the next open folds in, so the file would change on a read-only run.
    pub async fn close(&self) {
        if self.backend == Backend::Sqlite {
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.pool).await {
                tracing::debug!(error = %e, "WAL checkpoint at close failed");
            }
        }
        self.pool.close().await;
    }
}

/// Creates database `name` on the Postgres server at `server_url` unless it exists, and returns
/// the URL of that database (same user, host and port). Two processes creating it at once
/// both succeed: the loser's "already exists" is the outcome it wanted.
pub async fn ensure_postgres_database(server_url: &str, name: &str) -> Result<String, StoreError> {
    if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        return Err(StoreError::Corrupt { table: "database name", detail: format!("{name:?} is not [a-z0-9_]") });
    }
    let mut conn = PgConnection::connect(server_url).await?;
    let exists: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1").bind(name).fetch_optional(&mut conn).await?;
    if exists.is_none() {
        if let Err(e) = conn.execute(format!("CREATE DATABASE {name}").as_str()).await {
            let raced =
                matches!(&e, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("42P04" | "23505")));
            if !raced {
                return Err(e.into());
            }
        }
    }
    conn.close().await?;
    let (base, query) = match server_url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (server_url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[scheme_end..].find('/').map_or(base.len(), |i| scheme_end + i);
    let mut url = format!("{}/{name}", &base[..authority_end]);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::Location;

    #[test]
    fn a_shown_postgres_url_hides_its_password_wherever_it_is() {
        let shown = Location::parse("postgres://sy:hunter2@db:5432/team?sslmode=require&password=hunter3").shown();
        assert_eq!(shown, "postgres://sy:***@db:5432/team?sslmode=require&password=***");
        assert!(!shown.contains("hunter"), "no password in what messages and logs show: {shown}");
        let plain = Location::parse("postgres://sy@db/team").shown();
        assert_eq!(plain, "postgres://sy:***@db/team", "a URL without a password still reads the same way");
    }
}
