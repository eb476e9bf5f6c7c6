//! The router the relay drives: per-connection snapshots, the secret cache, SWRR state,
//! turn bindings, conversation bindings (conversation affinity), which profile produced each
//! recent Responses answer (`response_origins.rs`), the circuit board, the attempt ledger, the
//! latest quota readings (`quota.rs`) and the one routing loop (`Router::route`, in `route.rs`). The relay does
//! HTTP through a [`Transport`]; every routing decision is made here and in
//! `switchyard_core::routing`.

mod cli_backend;
mod fallback;
mod login;
mod pinned;
mod pool;
mod quota;
mod recording;
mod request;
mod response_origins;
mod route;
mod run;
pub(crate) mod secret_cache;
mod select;
mod settle;
mod shared;
mod snapshot;
mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use switchyard_core::routing::{ConversationBindings, SwrrTable, TokenLoadTable, TurnBindings};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::ledger::Ledger;

use crate::router::secret_cache::SecretCache;
pub use cli_backend::{CliBackend, CliTarget};
pub use pool::{PoolRefusal, PoolRoute, PoolSnapshot, PoolStart};
pub use quota::{QuotaBoard, FLUSH_EVERY as QUOTA_FLUSH_EVERY, MAX_READINGS as MAX_QUOTA_READINGS};
pub use recording::{AttemptReport, Recording, DROPPED_ACCOUNT_STATE};
pub use request::{KeysLater, LaterKeys, RequestKeys, RouteRequest};
use response_origins::ResponseOrigins;
pub use response_origins::MAX_RESPONSE_ORIGINS;
pub use route::{Refusal, Route, Routed};
pub(crate) use run::TurnRun;
pub(crate) use select::NextAttempt;
pub use shared::{DEFAULT_PROBE_LEASE, RESPONSE_ORIGIN_TTL_MS};
pub use snapshot::Snapshot;
pub use transport::{AttemptFacts, CredentialUse, Outcome, Reply, Target, Transport};

/// Shared by every request of a relay. Cheap to clone behind an `Arc`.
#[derive(Debug)]
pub struct Router {
    pub(crate) engine: Arc<Engine>,
    snapshots: Mutex<HashMap<String, Arc<Snapshot>>>,
    refresh: tokio::sync::Mutex<()>,
    pub(crate) secrets: SecretCache,
    pub(crate) swrr: Mutex<SwrrTable>,
    pub(crate) bindings: Mutex<TurnBindings>,
    /// (conversation key, model) → the profile a conversation is kept on (balanced routing
    /// under conversation affinity; memory only).
    pub(crate) conversations: Mutex<ConversationBindings>,
    /// (connection, model) → each profile's decayed prompt tokens, learned as attempts are
    /// recorded (token balance under conversation affinity; memory only).
    pub(crate) loads: Mutex<TokenLoadTable>,
    /// (connection, response id) → the profile that produced it (memory only, bounded).
    pub(crate) responses: Mutex<ResponseOrigins>,
    pub(crate) ledger: Ledger,
    pub(crate) quota: Arc<QuotaBoard>,
    /// Turns that fell back to a hop of their connection's chain (memory only, bounded).
    pub(crate) fallen: Mutex<fallback::FallenTurns>,
    /// Pools: snapshots, warm conversations' members, SWRR per (pool, model) (memory only).
    pub(crate) pools: Mutex<pool::PoolBoard>,
    /// On a shared store (Postgres: a team relay's replicas): this replica's part in the routing
    /// state kept there (`shared.rs`); `None` on an embedded store.
    pub(crate) shared: Option<shared::Shared>,
    /// Lives as long as the router: its background tasks end once it is gone.
    _alive: Arc<()>,
}

impl Router {
    /// Starts a router and its background writers: the attempt ledger's writer thread and
    /// the quota readings' writer task (on the current tokio runtime). Named `start`, not
    /// `new`, because it spawns them; both end when the router is dropped.
    pub fn start(engine: Arc<Engine>) -> Self {
        let ledger = Ledger::start(engine.store.clone());
        let board = Arc::new(QuotaBoard::default());
        let shared = (engine.store.backend() == switchyard_store::Backend::Postgres).then(shared::Shared::new);
        quota::spawn_writer(&board, engine.store.clone(), shared.is_some());
        let alive = Arc::new(());
        if shared.is_some() {
            shared::spawn_sweeper(Arc::downgrade(&alive), Arc::downgrade(&engine));
        }
        Router {
            shared,
            _alive: alive,
            engine,
            snapshots: Mutex::default(),
            refresh: tokio::sync::Mutex::new(()),
            secrets: SecretCache::default(),
            swrr: Mutex::default(),
            bindings: Mutex::default(),
            conversations: Mutex::default(),
            loads: Mutex::default(),
            responses: Mutex::default(),
            ledger,
            quota: board,
            fallen: Mutex::default(),
            pools: Mutex::default(),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The routing snapshot of `slug`, reloaded when older than [`SNAPSHOT_TTL`]. While one
    /// request reloads, the others keep using the previous snapshot.
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
        let fresh = match self.engine.load_snapshot(slug, &self.secrets).await {
            Ok(s) => Arc::new(s),
            Err(e) => {
                self.lock_snapshots().remove(slug);
                return Err(e);
            }
        };
        if cached.as_ref().is_some_and(|c| c.strategy != fresh.strategy) {
            self.swrr_lock().forget_connection(&fresh.connection_id);
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

    /// Flushes the attempt ledger and the quota readings (call before the process exits).
    pub async fn shutdown(&self) {
        self.ledger.flush().await;
        self.flush_quota().await;
    }

    fn lock_snapshots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Snapshot>>> {
        self.snapshots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn swrr_lock(&self) -> std::sync::MutexGuard<'_, SwrrTable> {
        self.swrr.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn bindings_lock(&self) -> std::sync::MutexGuard<'_, TurnBindings> {
        self.bindings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn responses_lock(&self) -> std::sync::MutexGuard<'_, ResponseOrigins> {
        self.responses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn loads_lock(&self) -> std::sync::MutexGuard<'_, TokenLoadTable> {
        self.loads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn conversations_lock(&self) -> std::sync::MutexGuard<'_, ConversationBindings> {
        self.conversations.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
