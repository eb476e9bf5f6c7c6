//! The [`Engine`] handle: one data dir (SQLite file + install id) and one vault.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchyard_core::routing::{CircuitBoard, CircuitSnapshot, CooldownPolicy, PersistedState};
use switchyard_store::connections::{self, ConnectionRow};
use switchyard_store::profiles::{self, ProfileRow};
use switchyard_store::{settings, Store};
use switchyard_vault::{Keychain, Locator, Secret, Vault, VaultError};

use crate::clock::{Clock, SystemClock};
use crate::error::EngineError;
use crate::fault::{FaultPoint, Faults};

/// File name of the database inside a data dir.
pub const DB_FILE: &str = "switchyard.db";

#[derive(Debug)]
pub struct Engine {
    pub(crate) store: Store,
    pub(crate) vault: Arc<dyn Vault>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) install_id: String,
    pub(crate) faults: Faults,
    /// Circuits of every profile: cooldowns restored from the `circuits` table, claims in memory only.
    pub(crate) board: Arc<CircuitBoard>,
    /// HTTP client for test/discovery calls.
    pub(crate) http: reqwest::Client,
    /// Keychain presence by (locator, credential revision), for views and readiness.
    pub(crate) presence: crate::config::presence::PresenceCache,
    /// Readiness computations so far (each is a profile, evidence and settings read).
    pub(crate) readiness_loads: std::sync::atomic::AtomicU64,
    /// The sealed vault's key, when secrets are sealed in the store (`sealed.rs`).
    pub(crate) sealer: Option<Arc<switchyard_vault::Sealer>>,
    /// Owned logins' refresh state in this process (`login/refresh.rs`).
    pub(crate) logins: crate::login::Logins,
    /// The store is a team store (a Postgres database named by `--store`), which a relay's
    /// replicas share: routers on it share their routing state by default.
    team_store: bool,
    data_dir: PathBuf,
}

impl Engine {
    /// Opens `data_dir` with the OS keychain and the system clock.
    pub async fn open(data_dir: &Path) -> Result<Self, EngineError> {
        Self::open_with(data_dir, Arc::new(Keychain::new()), Arc::new(SystemClock)).await
    }

    /// Opens `data_dir` (creating it, owner-only) with the given vault and clock, then
    /// removes orphan keychain entries left by an interrupted operation.
    pub async fn open_with(data_dir: &Path, vault: Arc<dyn Vault>, clock: Arc<dyn Clock>) -> Result<Self, EngineError> {
        Self::open_on(data_dir, crate::sealed::VaultSpec::Given(vault), clock).await
    }

    /// Opens `data_dir` with the vault `spec` names (the sealed one is built over the store).
    pub(crate) async fn open_on(
        data_dir: &Path,
        spec: crate::sealed::VaultSpec,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, EngineError> {
        create_private_dir(data_dir)?;
        let location = crate::store_location::store_location(data_dir).await?;
        Self::open_in(data_dir, &location, spec, clock).await
    }

    /// Opens `data_dir` with its store at `location` (its SQLite file, or a Postgres database).
    pub(crate) async fn open_in(
        data_dir: &Path,
        location: &switchyard_store::Location,
        spec: crate::sealed::VaultSpec,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, EngineError> {
        create_private_dir(data_dir)?;
        let store = Store::open_at(location).await?;
        let (vault, sealer) = crate::sealed::vault_for(&store, spec, &clock).await?;
        let mut conn = store.acquire().await?;
        let fresh_id = uuid::Uuid::new_v4().simple().to_string();
        let install_id = settings::get_or_insert(&mut conn, settings::INSTALL_ID, &fresh_id, clock.now_ms()).await?;
        let board = Arc::new(CircuitBoard::restore(CooldownPolicy::default(), stored_circuits(&mut conn).await?));
        drop(conn);
        // Test/discovery never follows a redirect with a key attached (docs/design.md, invariant 19).
        let http = switchyard_providers::discovery::http_client()
            .map_err(|e| EngineError::Internal(format!("cannot build HTTP client: {e}")))?;
        let engine = Engine {
            store,
            vault,
            clock,
            install_id,
            faults: Faults::default(),
            board,
            http,
            presence: Default::default(),
            readiness_loads: Default::default(),
            sealer,
            logins: Default::default(),
            team_store: location.is_postgres(),
            data_dir: data_dir.to_path_buf(),
        };
        match engine.collect_orphans().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "removed orphan keychain entries"),
            Err(EngineError::KeychainUnavailable(why)) => {
                tracing::warn!(%why, "orphan clean-up skipped")
            }
            Err(e) => return Err(e),
        }
        let ids = {
            let mut conn = engine.store.acquire().await?;
            profiles::all_ids(&mut conn).await?
        };
        let swept = engine.sweep_login_locks(&ids);
        if swept > 0 {
            tracing::info!(removed = swept, "removed lock files of removed logins");
        }
        Ok(engine)
    }

    /// The per-data-dir id that namespaces this install's keychain entries.
    pub fn install_id(&self) -> &str {
        &self.install_id
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Whether the engine was opened on a team store (several replicas share it).
    pub fn on_team_store(&self) -> bool {
        self.team_store
    }

    /// Arms a simulated crash at `point` (tests of crash safety only).
    pub fn arm_fault(&self, point: Option<FaultPoint>) {
        self.faults.arm(point);
    }

    pub async fn close(&self) {
        self.store.close().await;
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The engine clock's time as RFC 3339 text (milliseconds).
    pub fn now_rfc3339(&self) -> String {
        crate::clock::rfc3339(self.now_ms())
    }

    /// The engine clock's wall time, for classifying provider headers on the routing path.
    pub fn now_system(&self) -> std::time::SystemTime {
        crate::clock::system_time(self.clock.as_ref())
    }

    /// How many times a readiness was computed (for tests holding each use case to one).
    #[doc(hidden)]
    pub fn readiness_loads(&self) -> u64 {
        self.readiness_loads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The engine clock's monotonic time.
    pub fn monotonic(&self) -> std::time::Instant {
        self.clock.monotonic()
    }

    pub(crate) async fn connection_by_slug(&self, slug: &str) -> Result<ConnectionRow, EngineError> {
        let mut conn = self.store.acquire().await?;
        connections::by_slug(&mut conn, slug).await?.ok_or_else(|| EngineError::not_found("connection", slug))
    }

    /// Resolves a PROFILE argument: a profile id or a label of this connection.
    pub(crate) async fn profile_by_ref(
        &self,
        connection: &ConnectionRow,
        reference: &str,
    ) -> Result<ProfileRow, EngineError> {
        let mut conn = self.store.acquire().await?;
        let rows = profiles::for_connection(&mut conn, &connection.id).await?;
        rows.into_iter().find(|p| p.id == reference || p.label == reference).ok_or_else(|| {
            let shown =
                switchyard_core::secret_shape::echo_safe(reference).unwrap_or(switchyard_core::secret_shape::NOT_SHOWN);
            EngineError::NotFound { what: "profile", name: format!("{shown}' in connection '{}", connection.slug) }
        })
    }

    pub(crate) async fn vault_put(&self, locator: Locator, secret: Secret) -> Result<(), EngineError> {
        self.presence.forget(&locator);
        let vault = self.vault.clone();
        blocking(move || vault.put(&locator, &secret)).await
    }

    pub(crate) async fn vault_get(&self, locator: Locator) -> Result<Option<Secret>, EngineError> {
        let vault = self.vault.clone();
        blocking(move || vault.get(&locator)).await
    }

    pub(crate) async fn vault_delete(&self, locator: Locator) -> Result<bool, EngineError> {
        self.presence.forget(&locator);
        let vault = self.vault.clone();
        blocking(move || vault.delete(&locator)).await
    }
}

/// Persisted cooldowns as board snapshots; rows that no longer parse are skipped with a warning.
pub(crate) async fn stored_circuits(
    conn: &mut switchyard_store::AnyConnection,
) -> Result<Vec<CircuitSnapshot>, EngineError> {
    let rows = switchyard_store::circuits::all(conn).await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let state = r.state.parse::<PersistedState>();
        let kind = r.kind.as_deref().map(str::parse).transpose();
        match (state, kind) {
            (Ok(state), Ok(kind)) => out.push(CircuitSnapshot {
                profile_id: r.profile_id,
                model: r.model,
                state,
                kind,
                until_ms: r.until_ms,
                backoff_level: u32::try_from(r.backoff_level).unwrap_or(0),
            }),
            _ => tracing::warn!(profile = %r.profile_id, "skipping an unreadable circuit row"),
        }
    }
    Ok(out)
}

/// Runs a blocking keychain call off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
) -> Result<T, EngineError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| EngineError::Internal(format!("keychain task failed: {e}")))?
        .map_err(EngineError::from)
}

fn create_private_dir(dir: &Path) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| EngineError::Internal(format!("cannot create data dir {}: {e}", dir.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// The data dir both front ends use: `SWITCHYARD_DATA_DIR`, else the per-user data dir.
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SWITCHYARD_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let base = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
    base.join("switchyard")
}
