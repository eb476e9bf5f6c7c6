//! Routing state on a shared store (a team relay: several `relay serve` replicas on one Postgres,
//! invariant 25). An embedded store keeps SWRR positions, bindings, circuits' probe claims and
//! response origins in this process's memory; on a shared store the rows are the truth and the
//! memory is a cache refreshed at every decision:
//!
//! - a routed request's first decision reads, in one round trip (`store::routing_view`), the
//!   turn's and the conversation's bindings, the SWRR position of its (connection, model) and
//!   every circuit of the connection with its probe lease, and folds them into memory — so a
//!   cooldown another replica opened is obeyed at this decision (read through; measured against
//!   LISTEN/NOTIFY in docs/decisions.md);
//! - SWRR runs on the run's own copy of the position; a decision that advanced it is written by
//!   compare-and-swap on its revision, and a replica that lost the race reads again and decides
//!   again, so weights hold exactly over every replica's decisions together;
//! - the bindings a decision made or moved are written in one statement; a binding kept and
//!   touched less than [`TOUCH_EVERY_MS`] ago is not written again (a warm conversation's
//!   tool-loop call costs the one read);
//! - the half-open probe is a lease on the circuit's row claimed by one conditional update
//!   with an expiry ([`Router::set_probe_lease`]); a replica that dies holding it loses it when
//!   it ends, and an abandoned probe releases it at once ([`SharedLease`]);
//! - which profile produced a Responses answer is a row with an expiry.
//!
//! Per replica (not shared, documented): token loads under conversation affinity, fallen turns.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{
    choose_member, ConversationStep, MemberPick, ProbeLease, Strategy, Swrr, BINDING_IDLE_TTL, POOL_WARM_WINDOW,
};
use switchyard_store::circuits::{self, ProbeClaim};
use switchyard_store::route_bindings::{self, BindingRow};
use switchyard_store::routing_view::{self, RoutingView, ViewBinding, ViewKeys};
use switchyard_store::{response_origins, swrr_positions, Store};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::router::run::TurnRun;
use crate::router::{PoolRoute, PoolSnapshot, Router};

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

/// This replica's part in the shared routing state.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Names this replica as a probe lease's holder.
    pub(crate) owner: String,
    probe_lease_ms: AtomicI64,
    /// Numbers this replica's leases (`<owner>#<n>`), so releasing an abandoned one never ends
    /// a newer one of the same replica.
    leases: AtomicU64,
}

/// What a routed run read from the shared store at its first decision.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pulled {
    /// The run's own copy of the SWRR position and the revision it was read at (0: no row).
    pub swrr: Swrr,
    pub revision: i64,
    pub turn: Option<ViewBinding>,
    pub conversation: Option<ViewBinding>,
    /// Lost compare-and-swaps so far.
    races: u32,
}

impl Shared {
    pub(crate) fn new() -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        Shared {
            owner: format!("replica-{}-{:x}", std::process::id(), nanos & 0xffff_ffff),
            probe_lease_ms: AtomicI64::new(DEFAULT_PROBE_LEASE.as_millis() as i64),
            leases: AtomicU64::new(1),
        }
    }
}

/// A probe lease this replica holds on a shared store: released when dropped (a probe's outcome
/// rewrites or deletes the row first, which ends the lease anyway; an abandoned probe's release
/// lets another replica probe at once).
#[derive(Debug)]
pub(crate) struct SharedLease {
    store: Store,
    owner: String,
    profile: String,
    slots: Vec<String>,
}

impl Drop for SharedLease {
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

/// What the shared store said about a probe this replica's board admitted.
#[derive(Debug)]
pub(crate) enum SharedProbe {
    /// This replica probes; the lease is released when the guard drops.
    Ours(SharedLease),
    /// Another replica holds the lease (or the cooldown is not over there): not now.
    Held,
    /// The circuit was closed meanwhile: go without a probe.
    Closed,
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

/// A stored SWRR position (weights text, revision) as the run's copy; no row is a fresh
/// position at revision 0.
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

impl Router {
    /// The shared routing state, when the store is shared.
    pub(crate) fn shared(&self) -> Option<&Shared> {
        self.shared.as_ref()
    }

    /// How long a probe lease lasts on a shared store (`relay serve --probe-lease-secs`).
    pub fn set_probe_lease(&self, lease: Duration) {
        if let Some(s) = &self.shared {
            s.probe_lease_ms.store(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX), Ordering::Relaxed);
        }
    }

    /// Whether this router keeps its routing state in a shared store.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// A pool's member on a shared store: the warm conversation's member read there, else SWRR
    /// over conversations on the stored position (compare-and-swap, decided again on a lost
    /// race), and the conversation's binding written when it is new or moved. `None`: no able
    /// member. Returns the pick and the member the conversation was on.
    pub(crate) async fn shared_member(
        &self,
        pool: &PoolSnapshot,
        strategy: Strategy,
        able: &[usize],
        conversation: Option<&ConversationKey>,
        requested: &str,
    ) -> Result<Option<(MemberPick, Option<usize>)>, EngineError> {
        let scope = format!("pool:{}", pool.id);
        let conv = conversation.map(|c| c.as_str().to_string()).unwrap_or_default();
        let now_ms = self.engine.now_ms();
        let keys = ViewKeys {
            conversation_scope: &scope,
            turn: "",
            conversation: &conv,
            model: requested,
            swrr_target: &scope,
            connection_id: "",
            now_ms,
        };
        let view = {
            let mut conn = self.engine.store.acquire().await?;
            routing_view::read(&mut conn, &keys).await?
        };
        let sticky = view.conversation.as_ref().and_then(|b| pool.slots.iter().position(|s| s.key == b.target));
        let (swrr, revision) = position(view.swrr);
        let mut pulled = Pulled { swrr, revision, turn: None, conversation: view.conversation, races: 0 };
        let pick = loop {
            let before = pulled.swrr.clone();
            let Some(pick) = choose_member(strategy, &pool.slots, able, sticky, &mut pulled.swrr) else {
                return Ok(None);
            };
            if self.advance_swrr(&scope, requested, &mut pulled, &before).await? {
                break pick;
            }
        };
        let member = &pool.slots[pick.index].key;
        let window_ms = POOL_WARM_WINDOW.as_millis() as i64;
        let write = pulled.conversation.as_ref().is_none_or(|b| due(b, member, now_ms, touch_every(window_ms)));
        if conversation.is_some() && write {
            let row = BindingRow {
                scope,
                key: conv,
                model: requested.to_string(),
                target: member.clone(),
                last_ms: now_ms,
                window_ms,
            };
            let mut conn = self.engine.store.acquire().await?;
            route_bindings::put(&mut conn, &[row]).await?;
        }
        Ok(Some((pick, sticky)))
    }

    /// Keeps a pool conversation on the member that served it (after a hand-off) in the shared
    /// store, off the request path.
    pub(crate) fn share_pool_binding(&self, route: &PoolRoute) {
        let (Some(_), Some(conversation)) = (&self.shared, route.conversation()) else { return };
        if !route.handed_off() {
            return;
        }
        let row = BindingRow {
            scope: format!("pool:{}", route.pool_id),
            key: conversation.to_string(),
            model: route.requested.clone().unwrap_or_default(),
            target: route.member.clone(),
            last_ms: self.engine.now_ms(),
            window_ms: POOL_WARM_WINDOW.as_millis() as i64,
        };
        let store = self.engine.store.clone();
        tokio::spawn(async move {
            let Ok(mut conn) = store.acquire().await else { return };
            if let Err(e) = route_bindings::put(&mut conn, &[row]).await {
                tracing::warn!(error = %e, "pool binding not shared");
            }
        });
    }

    /// Reads the run's view from the shared store and folds it into memory (see the module).
    pub(crate) async fn pull(&self, run: &mut TurnRun) -> Result<(), EngineError> {
        let model = run.model.clone().unwrap_or_default();
        let conversation = run.conversation.as_ref().map(|c| c.as_str().to_string()).unwrap_or_default();
        let now_ms = self.engine.now_ms();
        let snap = run.snapshot.clone();
        let keys = ViewKeys {
            conversation_scope: "conversation",
            turn: &run.turn,
            conversation: &conversation,
            model: &model,
            swrr_target: &snap.connection_id,
            connection_id: &snap.connection_id,
            now_ms,
        };
        let view = {
            let mut conn = self.engine.store.acquire().await?;
            routing_view::read(&mut conn, &keys).await?
        };
        let RoutingView { turn, conversation: conv, swrr, circuits } = view;
        let owner = self.shared.as_ref().map(|s| s.owner.as_str()).unwrap_or_default();
        let rows = circuits.into_iter().filter_map(|c| {
            let mine =
                c.lease_owner.as_deref().is_some_and(|o| o.strip_prefix(owner).is_some_and(|r| r.starts_with('#')));
            let held_elsewhere = c.lease_until_ms.is_some_and(|u| u > now_ms) && c.lease_owner.is_some() && !mine;
            let snapshot = switchyard_core::routing::CircuitSnapshot {
                state: c.state.parse().ok()?,
                kind: c.kind.as_deref().and_then(|k| k.parse().ok()),
                until_ms: c.until_ms,
                backoff_level: u32::try_from(c.backoff_level).unwrap_or(0),
                profile_id: c.profile_id,
                model: c.model,
            };
            Some((snapshot, held_elsewhere))
        });
        self.engine.board.sync_profiles(snap.profiles.iter().map(|p| p.id.as_str()), rows);
        let now = self.engine.monotonic();
        {
            let mut bindings = self.bindings_lock();
            match &turn {
                Some(t) if bindings.peek(&run.turn, now).is_none_or(|b| b.profile_id != t.target) => {
                    bindings.bind(&run.turn, &t.target, now);
                }
                Some(_) => {}
                None => {
                    bindings.remove(&run.turn);
                }
            }
        }
        if let Some(key) = &run.conversation {
            let mut conversations = self.conversations_lock();
            match &conv {
                Some(c) => {
                    let age = Duration::from_millis(u64::try_from(now_ms - c.last_ms).unwrap_or(0));
                    let last = now.checked_sub(age).unwrap_or(now);
                    let window = Duration::from_millis(u64::try_from(c.window_ms).unwrap_or(0));
                    conversations.bind(key, &model, &c.target, window, last);
                }
                None => {
                    conversations.remove(key);
                }
            }
        }
        let (swrr, revision) = position(swrr);
        run.pulled = Some(Pulled { swrr, revision, turn, conversation: conv, races: 0 });
        Ok(())
    }

    /// Writes the run's SWRR position if its decision advanced it (`before` → `pulled.swrr`).
    /// False when another replica advanced it first: `pulled` then holds the stored position
    /// again and the caller decides again.
    pub(crate) async fn advance_swrr(
        &self,
        target: &str,
        model: &str,
        pulled: &mut Pulled,
        before: &Swrr,
    ) -> Result<bool, EngineError> {
        if &pulled.swrr == before || pulled.races >= MAX_SWRR_RACES {
            if pulled.races >= MAX_SWRR_RACES {
                tracing::warn!(races = pulled.races, "SWRR position contended: this decision is not shared");
            }
            return Ok(true);
        }
        let mut conn = self.engine.store.acquire().await?;
        if swrr_positions::advance(&mut conn, target, model, pulled.revision, &weights_text(&pulled.swrr)).await? {
            pulled.revision = if pulled.revision == 0 { 1 } else { pulled.revision + 1 };
            return Ok(true);
        }
        pulled.races += 1;
        let (swrr, revision) = position(swrr_positions::get(&mut conn, target, model).await?);
        pulled.swrr = swrr;
        pulled.revision = revision;
        Ok(false)
    }

    /// Writes the bindings a going attempt made ([`Router::binding_rows`]): the turn's (new, moved or failed over, or
    /// kept but not written for [`TOUCH_EVERY_MS`]) and the conversation's (assigned, moved,
    /// or kept and due a touch), in one statement. Nothing when nothing changed.
    pub(crate) async fn share_bindings(&self, rows: Vec<BindingRow>) -> Result<(), EngineError> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut conn = self.engine.store.acquire().await?;
        route_bindings::put(&mut conn, &rows).await?;
        Ok(())
    }

    /// The rows [`Router::share_bindings`] writes for a going attempt on `profile_id` (computed
    /// before any await: a run is not `Sync`).
    pub(crate) fn binding_rows(&self, run: &TurnRun, profile_id: &str, step: ConversationStep) -> Vec<BindingRow> {
        let Some(pulled) = &run.pulled else { return Vec::new() };
        let now_ms = self.engine.now_ms();
        let mut rows = Vec::new();
        if pulled.turn.as_ref().is_none_or(|b| due(b, profile_id, now_ms, TOUCH_EVERY_MS)) {
            rows.push(BindingRow {
                scope: "turn".into(),
                key: run.turn.clone(),
                model: String::new(),
                target: profile_id.to_string(),
                last_ms: now_ms,
                window_ms: BINDING_IDLE_TTL.as_millis() as i64,
            });
        }
        if let (Some(key), Some(window)) = (&run.conversation, run.snapshot.affinity.window()) {
            let window_ms = window.as_millis() as i64;
            let write = match step {
                ConversationStep::Untracked => false,
                ConversationStep::Kept => {
                    pulled.conversation.as_ref().is_none_or(|b| due(b, profile_id, now_ms, touch_every(window_ms)))
                }
                ConversationStep::Assigned { .. } | ConversationStep::Moved(_) => true,
            };
            if write {
                rows.push(BindingRow {
                    scope: "conversation".into(),
                    key: key.as_str().to_string(),
                    model: run.model.clone().unwrap_or_default(),
                    target: profile_id.to_string(),
                    last_ms: now_ms,
                    window_ms,
                });
            }
        }
        rows
    }

    /// Claims on the shared store the probe `lease` claimed on this replica's board.
    pub(crate) async fn claim_probe(&self, lease: &ProbeLease) -> Result<SharedProbe, EngineError> {
        let Some(shared) = &self.shared else { return Ok(SharedProbe::Closed) };
        let mut slots = Vec::new();
        if lease.covers_credential() {
            slots.push(String::new());
        }
        if lease.covers_model() {
            slots.push(lease.model().to_string());
        }
        let now_ms = self.engine.now_ms();
        let until = now_ms.saturating_add(shared.probe_lease_ms.load(Ordering::Relaxed));
        let name = format!("{}#{}", shared.owner, shared.leases.fetch_add(1, Ordering::Relaxed));
        let mut guard = SharedLease {
            store: self.engine.store.clone(),
            owner: name.clone(),
            profile: lease.profile().to_string(),
            slots: Vec::new(),
        };
        let mut conn = self.engine.store.acquire().await?;
        let mut closed = 0;
        for model in slots {
            let who = (shared.owner.as_str(), name.as_str());
            match circuits::claim_probe(&mut conn, lease.profile(), &model, who, now_ms, until).await? {
                ProbeClaim::Claimed => guard.slots.push(model),
                ProbeClaim::Closed => closed += 1,
                ProbeClaim::Held => {
                    let slot = (!model.is_empty()).then_some(model.as_str());
                    self.engine.board.mark_held_elsewhere(lease.profile(), slot);
                    return Ok(SharedProbe::Held);
                }
            }
        }
        if guard.slots.is_empty() && closed > 0 {
            return Ok(SharedProbe::Closed);
        }
        Ok(SharedProbe::Ours(guard))
    }

    /// The profile that produced Responses answer `response_id`, from the shared store.
    pub(crate) async fn shared_origin(&self, connection_id: &str, response_id: &str) -> Option<String> {
        self.shared.as_ref()?;
        let mut conn = self.engine.store.acquire().await.ok()?;
        response_origins::get(&mut conn, connection_id, response_id, self.engine.now_ms()).await.ok().flatten()
    }

    /// Remembers a Responses answer's origin in the shared store (off the request path).
    pub(crate) fn share_origin(&self, connection_id: &str, response_id: &str, profile_id: &str) {
        if self.shared.is_none() {
            return;
        }
        let store = self.engine.store.clone();
        let until = self.engine.now_ms().saturating_add(RESPONSE_ORIGIN_TTL_MS);
        let (c, r, p) = (connection_id.to_string(), response_id.to_string(), profile_id.to_string());
        tokio::spawn(async move {
            let Ok(mut conn) = store.acquire().await else { return };
            if let Err(e) = response_origins::put(&mut conn, &c, &r, &p, until).await {
                tracing::warn!(error = %e, "response origin not shared");
            }
        });
    }
}

/// Deletes ended bindings and origins every [`SWEEP_EVERY`] while the router lives.
pub(crate) fn spawn_sweeper(router: std::sync::Weak<()>, engine: std::sync::Weak<Engine>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let (Some(_), Some(engine)) = (router.upgrade(), engine.upgrade()) else { break };
            let Ok(mut conn) = engine.store.acquire().await else { continue };
            let now = engine.now_ms();
            if let Err(e) = route_bindings::sweep(&mut conn, now).await {
                tracing::debug!(error = %e, "binding sweep failed");
            }
            if let Err(e) = response_origins::sweep(&mut conn, now).await {
                tracing::debug!(error = %e, "origin sweep failed");
            }
        }
    });
}
