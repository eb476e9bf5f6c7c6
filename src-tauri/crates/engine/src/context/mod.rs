//! The engine's context, on the bottom floor: what every room shares — the store, the vault
//! (and its presence cache), the clock, the circuit board, the HTTP client of test/discovery,
//! the data dir and install id, crash injection for tests — and nothing of any room. Rooms
//! implement their use cases on [`Context`]; the [`Engine`](crate::Engine) facade on top holds
//! it with the state only one room keeps (owned logins' refresh state) and opens it
//! (`Engine::open`).

pub(crate) mod presence;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchyard_core::routing::{CircuitBoard, CircuitSnapshot, PersistedState};
use switchyard_store::connections::{self, ConnectionRow};
use switchyard_store::profiles::{self, ProfileRow};
use switchyard_store::Store;
use switchyard_vault::{Locator, Sealer, Secret, Vault, VaultError};

use crate::clock::Clock;
use crate::error::EngineError;
use crate::fault::{FaultPoint, Faults};
use presence::PresenceCache;

/// What every room of the engine shares. See the module.
#[derive(Debug)]
pub struct Context {
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
    pub(crate) presence: PresenceCache,
    /// Readiness computations so far (each is a profile, evidence and settings read).
    pub(crate) readiness_loads: std::sync::atomic::AtomicU64,
    /// The sealed vault's key, when secrets are sealed in the store (`sealed.rs`).
    pub(crate) sealer: Option<Arc<Sealer>>,
    /// The store is a team store (a Postgres database named by `--store`), which a relay's
    /// replicas share: routers on it share their routing state by default.
    pub(crate) team_store: bool,
    pub(crate) data_dir: PathBuf,
    /// Who the admin changes made through this engine are recorded as in the audit
    /// (`cli:<os user>`, `desktop`, `user:<name>`); `local` until a front end says.
    pub(crate) actor: std::sync::RwLock<String>,
}

tokio::task_local! {
    /// The actor of the changes a future makes (see [`acting_as`]).
    static ACTING: String;
}

/// Runs `work` with its admin changes recorded as made by `actor` (`user:<name>`: the console's
/// signed-in admin), whatever the engine's own actor is — a relay's engine serves many admins.
pub async fn acting_as<F: std::future::Future>(actor: String, work: F) -> F::Output {
    ACTING.scope(actor, work).await
}

impl Context {
    /// Sets who the audit names for changes made through this engine from now on.
    pub fn set_actor(&self, actor: &str) {
        *self.actor.write().unwrap_or_else(std::sync::PoisonError::into_inner) = actor.to_string();
    }

    /// Who the audit names for a change made now (what `routing activate` records as the
    /// activation's author, too).
    pub fn acting_actor(&self) -> String {
        self.actor()
    }

    /// Who the audit names for a change made now: the caller [`acting_as`] names (one request
    /// of a shared engine: the console's admin), else the engine's own.
    pub(crate) fn actor(&self) -> String {
        ACTING
            .try_with(Clone::clone)
            .unwrap_or_else(|_| self.actor.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone())
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
