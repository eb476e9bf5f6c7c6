//! The routing state in a team store ([`SharedState`]: several `relay serve` replicas on one
//! Postgres, invariant 25). The rows are the truth; this replica's [`LocalState`] is a cache
//! refreshed at every read:
//!
//! - a decision's read (`store::routing_view`, one round trip) brings the turn's and the
//!   conversation's bindings, the SWRR position of its (connection or pool, model) and every
//!   circuit of the connection with its probe lease; the circuits are folded into the board and
//!   the bindings into the local tables, so a cooldown another replica opened is obeyed at this
//!   decision (read through; measured against LISTEN/NOTIFY in docs/decisions.md);
//! - SWRR runs on the view's copy; a decision that advanced it is written by compare-and-swap on
//!   its revision, and a lost race reads the position again, so weights hold exactly over every
//!   replica's decisions together;
//! - the bindings a decision made or moved are written in one statement; a kept one touched less
//!   than [`TOUCH_EVERY_MS`] ago is not written again (a warm conversation's tool-loop call costs
//!   the one read);
//! - the half-open probe is a lease on the circuit's row claimed by one conditional update with
//!   an expiry; a replica that dies holding it loses it when it ends, and an abandoned probe
//!   releases it at once ([`StoreLease`]);
//! - which profile produced a Responses answer is a row with an expiry;
//! - each quota writer pass reads the readings other replicas wrote.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use switchyard_core::routing::{CircuitBoard, CircuitSnapshot, ConversationStep, ProbeLease, Swrr, BINDING_IDLE_TTL};
use switchyard_store::circuits::{self, ProbeClaim};
use switchyard_store::route_bindings::{self, BindingRow};
use switchyard_store::routing_view::{self, ViewBinding};
use switchyard_store::{response_origins, swrr_positions, Store};

use super::local::LocalState;
use super::{Claim, Going, RoutingState, Subject, View, ViewKeys};
use crate::clock::Clock;
use crate::error::EngineError;
use crate::router::quota::QuotaBoard;

/// How long a probe lease lasts unless the relay says otherwise (`relay serve --probe-lease-secs`).
pub const DEFAULT_PROBE_LEASE: Duration = Duration::from_secs(30);
/// A kept binding used less than this long ago is not written again.
pub const TOUCH_EVERY_MS: i64 = 60_000;
/// How long a Responses answer's origin is kept on a shared store.
pub const RESPONSE_ORIGIN_TTL_MS: i64 = 24 * 3_600_000;
/// How often a replica deletes ended bindings and origins.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// SWRR decisions retried after lost compare-and-swaps before this one is taken unshared.
const MAX_SWRR_RACES: u32 = 32;
/// How far before the newest quota reading seen a replica's next read starts (another replica
/// writes up to a pass late).
pub const QUOTA_MARGIN_MS: i64 = 10_000;

/// The bindings as the store had them at the last read (what a kept binding's touch is judged by).
#[derive(Debug, Clone, Default)]
pub(crate) struct Stored {
    turn: Option<ViewBinding>,
    conversation: Option<ViewBinding>,
}

#[derive(Debug)]
pub(crate) struct SharedState {
    local: LocalState,
    store: Store,
    board: Arc<CircuitBoard>,
    /// The engine clock (the sweeper dates what ended by it).
    clock: Arc<dyn Clock>,
    /// Names this replica as a probe lease's holder.
    owner: String,
    probe_lease_ms: i64,
    /// Numbers this replica's leases (`<owner>#<n>`), so releasing an abandoned one never ends a
    /// newer one of the same replica.
    leases: AtomicU64,
}

/// A probe lease this replica holds in the store: released when dropped (a probe's outcome
/// rewrites or deletes the row first, which ends the lease anyway; an abandoned probe's release
/// lets another replica probe at once).
#[derive(Debug)]
pub(crate) struct StoreLease {
    store: Store,
    owner: String,
    profile: String,
    slots: Vec<String>,
}

impl Drop for StoreLease {
    fn drop(&mut self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let (store, owner, profile, slots) =
            (self.store.clone(), self.owner.clone(), self.profile.clone(), std::mem::take(&mut self.slots));
        handle.spawn(async move {
            let Ok(mut conn) = store.acquire().await else { return };
            for model in slots {
                if let Err(e) = circuits::release_probe(&mut conn, &profile, &model, &owner).await {
                    tracing::warn!(error = %e, "probe lease not released; it ends by itself");
                }
            }
        });
    }
}

/// SWRR weights as the `swrr_positions` row keeps them.
fn weights_text(s: &Swrr) -> String {
    s.current_weights().map(|(id, w)| format!("{id}={w}")).collect::<Vec<_>>().join(",")
}

fn parse_weights(text: &str) -> Swrr {
    Swrr::from_current(text.split(',').filter_map(|p| {
        let (id, w) = p.rsplit_once('=')?;
        Some((id.to_string(), w.parse().ok()?))
    }))
}

/// A stored SWRR position (weights text, revision); no row is a fresh position at revision 0.
fn position(row: Option<(String, i64)>) -> (Swrr, i64) {
    row.map_or((Swrr::default(), 0), |(w, r)| (parse_weights(&w), r))
}

/// Whether a binding read from the store must be written again for `target` at `now_ms`: it
/// names another target, or it was last written `every` ms ago or more.
fn due(b: &ViewBinding, target: &str, now_ms: i64, every: i64) -> bool {
    b.target != target || now_ms - b.last_ms >= every
}

/// How often a kept binding with a `window_ms` window is touched: [`TOUCH_EVERY_MS`], or a
/// quarter of a shorter window.
fn touch_every(window_ms: i64) -> i64 {
    TOUCH_EVERY_MS.min(window_ms / 4)
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The binding scope of a conversation in the store.
fn conversation_scope(subject: Subject<'_>) -> String {
    match subject {
        Subject::Connection { .. } => "conversation".to_string(),
        Subject::Pool { id } => format!("pool:{id}"),
    }
}

impl SharedState {
    /// The shared state of a replica on `store`, and its sweeper of ended bindings and origins
    /// (on the current runtime, for as long as the state lives).
    pub(crate) fn start(
        store: Store,
        board: Arc<CircuitBoard>,
        clock: Arc<dyn Clock>,
        probe_lease: Duration,
    ) -> Arc<Self> {
        let state = Arc::new(SharedState {
            local: LocalState::default(),
            store,
            board,
            clock,
            owner: format!("replica-{}-{}", std::process::id(), &uuid::Uuid::new_v4().simple().to_string()[..8]),
            probe_lease_ms: ms(probe_lease),
            leases: AtomicU64::new(1),
        });
        spawn_sweeper(Arc::downgrade(&state));
        state
    }

    /// Folds the circuits the store read into the board (a lease another replica holds keeps
    /// this one off the probe).
    fn fold_circuits(
        &self,
        profiles: &[switchyard_core::routing::ProfileView],
        rows: Vec<routing_view::ViewCircuit>,
        now_ms: i64,
    ) {
        let owner = self.owner.as_str();
        let rows = rows.into_iter().filter_map(|c| {
            let mine =
                c.lease_owner.as_deref().is_some_and(|o| o.strip_prefix(owner).is_some_and(|r| r.starts_with('#')));
            let held_elsewhere = c.lease_until_ms.is_some_and(|u| u > now_ms) && c.lease_owner.is_some() && !mine;
            let snapshot = CircuitSnapshot {
                state: c.state.parse().ok()?,
                kind: c.kind.as_deref().and_then(|k| k.parse().ok()),
                until_ms: c.until_ms,
                backoff_level: u32::try_from(c.backoff_level).unwrap_or(0),
                profile_id: c.profile_id,
                model: c.model,
            };
            Some((snapshot, held_elsewhere))
        });
        self.board.sync_profiles(profiles.iter().map(|p| p.id.as_str()), rows);
    }

    /// The rows a going attempt writes: the turn's (new, moved or failed over, or kept but not
    /// written for [`TOUCH_EVERY_MS`]) and the conversation's (assigned, moved, or kept and due).
    fn binding_rows(&self, keys: &ViewKeys<'_>, view: &View, going: Going<'_>) -> Vec<BindingRow> {
        let now_ms = keys.now_ms;
        let mut rows = Vec::new();
        if let Some(turn) = keys.turn {
            if view.stored.turn.as_ref().is_none_or(|b| due(b, going.target, now_ms, TOUCH_EVERY_MS)) {
                rows.push(BindingRow {
                    scope: "turn".into(),
                    key: turn.to_string(),
                    model: String::new(),
                    target: going.target.to_string(),
                    last_ms: now_ms,
                    window_ms: ms(BINDING_IDLE_TTL),
                });
            }
        }
        if let (Some(key), Some(window)) = (keys.conversation, keys.window) {
            let window_ms = ms(window);
            let write = match going.step {
                ConversationStep::Untracked => false,
                ConversationStep::Kept => view
                    .stored
                    .conversation
                    .as_ref()
                    .is_none_or(|b| due(b, going.target, now_ms, touch_every(window_ms))),
                ConversationStep::Assigned { .. } | ConversationStep::Moved(_) => true,
            };
            if write {
                rows.push(BindingRow {
                    scope: conversation_scope(keys.subject),
                    key: key.as_str().to_string(),
                    model: keys.model.to_string(),
                    target: going.target.to_string(),
                    last_ms: now_ms,
                    window_ms,
                });
            }
        }
        rows
    }
}

impl RoutingState for SharedState {
    async fn read(&self, keys: &ViewKeys<'_>) -> Result<View, EngineError> {
        let target = keys.swrr_target();
        let scope = conversation_scope(keys.subject);
        let conversation = keys.conversation.map(|c| c.as_str()).unwrap_or_default();
        let connection_id = match keys.subject {
            Subject::Connection { id, .. } => id,
            Subject::Pool { .. } => "",
        };
        let store_keys = routing_view::ViewKeys {
            conversation_scope: &scope,
            turn: keys.turn.unwrap_or_default(),
            conversation,
            model: keys.model,
            swrr_target: &target,
            connection_id,
            now_ms: keys.now_ms,
        };
        let stored = {
            let mut conn = self.store.acquire().await?;
            routing_view::read(&mut conn, &store_keys).await?
        };
        if let Subject::Connection { profiles, .. } = keys.subject {
            self.fold_circuits(profiles, stored.circuits, keys.now_ms);
        }
        if let Some(turn) = keys.turn {
            self.local.adopt_turn(turn, stored.turn.as_ref().map(|t| t.target.as_str()), keys.now);
        }
        let conversation = stored.conversation.as_ref().map(|c| {
            let age = Duration::from_millis(u64::try_from(keys.now_ms - c.last_ms).unwrap_or(0));
            let window = Duration::from_millis(u64::try_from(c.window_ms).unwrap_or(0));
            (c.target.as_str(), keys.now.checked_sub(age).unwrap_or(keys.now), window)
        });
        self.local.adopt_conversation(keys, conversation);
        let mut view = self.local.view(keys);
        let (swrr, revision) = position(stored.swrr);
        view = View { turn: view.turn, conversation: view.conversation, ..View::read(swrr, revision) };
        view.stored = Stored { turn: stored.turn, conversation: stored.conversation };
        Ok(view)
    }

    async fn advance(&self, keys: &ViewKeys<'_>, view: &mut View) -> Result<bool, EngineError> {
        if !view.advanced() || view.races >= MAX_SWRR_RACES {
            if view.races >= MAX_SWRR_RACES {
                tracing::warn!(races = view.races, "SWRR position contended: this decision is not shared");
            }
            return Ok(true);
        }
        let target = keys.swrr_target();
        let mut conn = self.store.acquire().await?;
        let weights = weights_text(&view.swrr);
        if swrr_positions::advance(&mut conn, &target, keys.model, view.revision, &weights).await? {
            view.revision = if view.revision == 0 { 1 } else { view.revision + 1 };
            view.moves = view.swrr.moves();
            return Ok(true);
        }
        let (swrr, revision) = position(swrr_positions::get(&mut conn, &target, keys.model).await?);
        let races = view.races + 1;
        *view = View {
            turn: view.turn.take(),
            conversation: view.conversation.take(),
            stored: std::mem::take(&mut view.stored),
            races,
            ..View::read(swrr, revision)
        };
        Ok(false)
    }

    async fn bind(&self, keys: &ViewKeys<'_>, view: &View, going: Going<'_>) -> Result<(), EngineError> {
        self.local.bind(keys, view, going).await?;
        let rows = self.binding_rows(keys, view, going);
        if rows.is_empty() {
            return Ok(());
        }
        let written = async {
            let mut conn = self.store.acquire().await?;
            route_bindings::put(&mut conn, &rows).await?;
            Ok::<(), EngineError>(())
        };
        if let Err(e) = written.await {
            tracing::warn!(code = e.code().as_str(), "bindings not shared; other replicas may choose anew");
        }
        Ok(())
    }

    async fn claim_probe(&self, lease: &ProbeLease, now_ms: i64) -> Result<Claim, EngineError> {
        let mut slots = Vec::new();
        if lease.covers_credential() {
            slots.push(String::new());
        }
        if lease.covers_model() {
            slots.push(lease.model().to_string());
        }
        let until = now_ms.saturating_add(self.probe_lease_ms);
        let name = format!("{}#{}", self.owner, self.leases.fetch_add(1, Ordering::Relaxed));
        let mut guard = StoreLease {
            store: self.store.clone(),
            owner: name.clone(),
            profile: lease.profile().to_string(),
            slots: Vec::new(),
        };
        let mut conn = self.store.acquire().await?;
        let mut closed = 0;
        for model in slots {
            let who = (self.owner.as_str(), name.as_str());
            match circuits::claim_probe(&mut conn, lease.profile(), &model, who, now_ms, until).await? {
                ProbeClaim::Claimed => guard.slots.push(model),
                ProbeClaim::Closed => closed += 1,
                ProbeClaim::Held => {
                    let slot = (!model.is_empty()).then_some(model.as_str());
                    self.board.mark_held_elsewhere(lease.profile(), slot);
                    return Ok(Claim::Held);
                }
            }
        }
        if guard.slots.is_empty() && closed > 0 {
            return Ok(Claim::Closed);
        }
        Ok(Claim::Ours(Some(Box::new(guard))))
    }

    async fn origin(&self, connection_id: &str, response_id: &str, now: Instant, now_ms: i64) -> Option<String> {
        if let Some(known) = self.local.origin(connection_id, response_id, now, now_ms).await {
            return Some(known);
        }
        let mut conn = self.store.acquire().await.ok()?;
        response_origins::get(&mut conn, connection_id, response_id, now_ms).await.ok().flatten()
    }

    fn remember_origin(&self, connection_id: &str, response_id: &str, profile_id: &str, now: Instant, now_ms: i64) {
        self.local.remember_origin(connection_id, response_id, profile_id, now, now_ms);
        let store = self.store.clone();
        let until = now_ms.saturating_add(RESPONSE_ORIGIN_TTL_MS);
        let (c, r, p) = (connection_id.to_string(), response_id.to_string(), profile_id.to_string());
        tokio::spawn(async move {
            let Ok(mut conn) = store.acquire().await else { return };
            if let Err(e) = response_origins::put(&mut conn, &c, &r, &p, until).await {
                tracing::warn!(error = %e, "response origin not shared");
            }
        });
    }

    async fn adopt_quota(&self, board: &QuotaBoard, since: i64) -> i64 {
        let rows = match self.store.acquire().await {
            Ok(mut conn) => switchyard_store::quota::seen_since(&mut conn, since).await,
            Err(e) => Err(e),
        };
        match rows {
            Ok(rows) => board.adopt(&rows).map_or(since, |newest| since.max(newest - QUOTA_MARGIN_MS)),
            Err(e) => {
                tracing::warn!(error = %e, "other replicas' quota readings not read; retrying at the next pass");
                since
            }
        }
    }

    fn committed(&self, turn: &str, now: Instant) -> bool {
        self.local.committed(turn, now)
    }

    fn commit(&self, turn: &str, now: Instant) {
        self.local.commit(turn, now);
    }

    fn forget(&self, subject: Subject<'_>) {
        self.local.forget(subject);
    }
}

/// Deletes ended bindings and origins every [`SWEEP_EVERY`] while the state lives.
fn spawn_sweeper(state: Weak<SharedState>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(state) = state.upgrade() else { break };
            let Ok(mut conn) = state.store.acquire().await else { continue };
            let now = state.clock.now_ms();
            if let Err(e) = route_bindings::sweep(&mut conn, now).await {
                tracing::debug!(error = %e, "binding sweep failed");
            }
            if let Err(e) = response_origins::sweep(&mut conn, now).await {
                tracing::debug!(error = %e, "origin sweep failed");
            }
        }
    });
}
