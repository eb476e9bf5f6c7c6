//! The router the relay drives: what a name routes to (`resolve.rs`), per-connection and
//! per-pool snapshots, the secret cache, the routing state behind its one seam (`state/`: SWRR
//! positions, bindings, probe claims, response origins — in memory, or shared by a team's
//! replicas), the circuit board, the attempt ledger, the latest quota readings (`quota.rs`) and
//! the one routing loop (`Router::route`, in `route.rs`) over a request whose kind is decided
//! once (`policy.rs`). The relay does HTTP through a [`Transport`]; every routing decision is
//! made here and in `switchyard_core::routing`.

mod admission;
mod attempt;
mod cli_backend;
mod ending;
mod fallback;
mod login;
mod pinned;
mod policy;
mod pool;
mod quota;
mod recording;
mod refusal;
mod request;
mod resolve;
mod route;
mod run;
pub(crate) mod secret_cache;
mod select;
mod settle;
mod snapshot;
mod state;
mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use switchyard_core::routing::TokenLoadTable;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::ledger::Ledger;
use crate::telemetry::Telemetry;

use crate::router::secret_cache::SecretCache;
pub use cli_backend::{CliBackend, CliTarget};
pub use pool::{PoolRoute, PoolSnapshot};
pub use quota::{QuotaBoard, FLUSH_EVERY as QUOTA_FLUSH_EVERY, MAX_READINGS as MAX_QUOTA_READINGS};
pub use recording::{AttemptReport, Recording, DROPPED_ACCOUNT_STATE};
pub use refusal::Refusal;
pub use request::{Pin, RequestKeys, RouteRequest};
pub use resolve::Resolved;
pub use route::{Route, Routed};
pub(crate) use run::RequestRun;
pub(crate) use select::NextAttempt;
pub use snapshot::Snapshot;
pub use state::{Sharing, DEFAULT_PROBE_LEASE, MAX_RESPONSE_ORIGINS, RESPONSE_ORIGIN_TTL_MS};
pub use transport::{AttemptFacts, CredentialUse, Outcome, Reply, Target, Transport};

use state::States;

/// How a router is started.
#[derive(Debug, Clone)]
pub struct RouterOptions {
    /// Where its routing state lives.
    pub sharing: Sharing,
    /// How long a concurrency slot lasts without a renewal (a killed process's slots are free
    /// again after it).
    pub slot_lease: std::time::Duration,
    /// What it counts and exports (`telemetry/`): counters on, no spans, by default.
    pub telemetry: Arc<Telemetry>,
}

impl RouterOptions {
    /// What a router on `engine` keeps by default: its routing state shared with the other
    /// replicas when the engine was opened on a team store (`--store postgres://…`), else in
    /// memory.
    pub fn for_engine(engine: &Engine) -> Self {
        let sharing =
            if engine.on_team_store() { Sharing::Shared { probe_lease: DEFAULT_PROBE_LEASE } } else { Sharing::Local };
        RouterOptions {
            sharing,
            slot_lease: crate::limits::DEFAULT_SLOT_LEASE,
            telemetry: Arc::new(Telemetry::counting()),
        }
    }
}

/// Shared by every request of a relay. Cheap to clone behind an `Arc`.
#[derive(Debug)]
pub struct Router {
    pub(crate) engine: Arc<Engine>,
    snapshots: Mutex<HashMap<String, Arc<Snapshot>>>,
    refresh: tokio::sync::Mutex<()>,
    pub(crate) secrets: SecretCache,
    /// SWRR positions, bindings, probe claims beyond this process, response origins: in memory
    /// or in the team store, chosen when the router starts.
    state: Arc<States>,
    /// (connection, model) → each profile's decayed prompt tokens, learned as attempts are
    /// recorded (token balance under conversation affinity; per process). Shared with the
    /// ledger's writer, which teaches it a JSON answer's usage once it has read it.
    pub(crate) loads: Arc<Mutex<TokenLoadTable>>,
    pub(crate) ledger: Ledger,
    pub(crate) quota: Arc<QuotaBoard>,
    /// Turns that fell back to a hop of their connection's chain (per process, bounded).
    pub(crate) fallen: Mutex<fallback::FallenTurns>,
    /// Pools' snapshots, reloaded at most once a second.
    pools: Mutex<pool::PoolSnapshots>,
    /// The limits as last read, and who this process is when it holds a concurrency slot.
    pub(crate) limits: admission::RouterLimits,
    /// What this router counts and exports; fed by the ledger's writer.
    pub(crate) telemetry: Arc<Telemetry>,
    /// Lives as long as the router: its background tasks end once it is gone.
    _alive: Arc<()>,
}

impl Router {
    /// Starts a router on `engine` with its default options ([`RouterOptions::for_engine`]).
    pub fn start(engine: Arc<Engine>) -> Self {
        let options = RouterOptions::for_engine(&engine);
        Self::start_with(engine, options)
    }

    /// Starts a router and its background writers: the attempt ledger's writer thread and
    /// the quota readings' writer task (on the current tokio runtime), and — shared — the
    /// sweeper of ended bindings. Named `start`, not `new`, because it spawns them; they end
    /// when the router is dropped.
    pub fn start_with(engine: Arc<Engine>, options: RouterOptions) -> Self {
        let ledger = Ledger::start(engine.store.clone(), options.telemetry.clone());
        let board = Arc::new(QuotaBoard::default());
        let state = Arc::new(match options.sharing {
            Sharing::Local => States::Local(state::local::LocalState::default()),
            Sharing::Shared { probe_lease } => States::Shared(state::shared::SharedState::start(
                engine.store.clone(),
                engine.board.clone(),
                engine.clock.clone(),
                probe_lease,
            )),
        });
        let alive = Arc::new(());
        Router {
            state,
            _alive: alive,
            engine,
            snapshots: Mutex::default(),
            refresh: tokio::sync::Mutex::new(()),
            secrets: SecretCache::default(),
            loads: Arc::default(),
            ledger,
            quota: board,
            fallen: Mutex::default(),
            pools: Mutex::default(),
            limits: admission::RouterLimits::new(options.slot_lease),
            telemetry: options.telemetry,
        }
        .with_quota_writer()
    }

    fn with_quota_writer(self) -> Self {
        quota::spawn_writer(&self.quota, self.engine.store.clone(), &self.state);
        admission::spawn_slot_renewer(&self.limits, self.engine.clone(), &self._alive);
        self
    }

    /// What this router counts and exports.
    pub fn telemetry(&self) -> &Arc<Telemetry> {
        &self.telemetry
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Whether this router's routing state is shared with other replicas.
    pub fn is_shared(&self) -> bool {
        self.state.is_shared()
    }

    /// The routing snapshot of `slug`, reloaded when older than [`SNAPSHOT_TTL`]. While one
    /// request reloads, the others keep using the previous snapshot.
    ///
    /// [`SNAPSHOT_TTL`]: snapshot::SNAPSHOT_TTL
    pub async fn snapshot(&self, slug: &str) -> Result<Arc<Snapshot>, EngineError> {
        let cached = self.lock_snapshots().get(slug).cloned();
        if let Some(s) = &cached {
            if s.is_fresh(self.engine.monotonic()) {
                return Ok(s.clone());
            }
        }
        let guard = match (&cached, self.refresh.try_lock()) {
            (Some(s), Err(_)) => return Ok(s.clone()),
            (_, Ok(g)) => g,
            (None, Err(_)) => self.refresh.lock().await,
        };
        // Boxed: a reload (once a second per connection) reads the store, and its future would
        // otherwise size every request's future by kilobytes (hyper keeps one per connection).
        let fresh = match Box::pin(self.engine.load_snapshot(slug, &self.secrets)).await {
            Ok(s) => Arc::new(s),
            Err(e) => {
                self.lock_snapshots().remove(slug);
                return Err(e);
            }
        };
        if cached.as_ref().is_some_and(|c| c.strategy != fresh.strategy) {
            use state::RoutingState;
            self.state.forget(state::Subject::Connection { id: &fresh.connection_id, profiles: &fresh.profiles });
        }
        self.lock_snapshots().insert(slug.to_string(), fresh.clone());
        drop(guard);
        Ok(fresh)
    }

    /// The models `snap` can serve now (some profile has current evidence for them): what a
    /// routed connection's `GET …/models` lists.
    pub fn served_models(&self, snap: &Snapshot) -> Vec<String> {
        snap.served_models(self.engine.now_ms())
    }

    /// Writes what the router holds for later — the attempt ledger's queue and the changed quota
    /// readings — and waits for both (call before the process exits, or to read them back).
    pub async fn flush(&self) {
        self.ledger.flush().await;
        self.flush_quota().await;
    }

    fn lock_snapshots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Snapshot>>> {
        self.snapshots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn loads_lock(&self) -> std::sync::MutexGuard<'_, TokenLoadTable> {
        self.loads.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
