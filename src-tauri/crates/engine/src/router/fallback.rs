//! Fallback inside the routing loop (invariant 17): when the request's connection has no
//! eligible profile — at selection time, or after a credential-scoped failure before output
//! left none — the request moves to the next hop of the connection's active chain whose
//! current evidence supports the model (the requested one, or the hop's own), and routes
//! there in that connection's own mode. The first attempt on a hop is recorded as
//! `fallback:<kind>`; a turn that fell back stays on its hop until it ends
//! ([`FallenTurns`]); new turns start on the first connection again. A legacy connection with
//! an active chain behaves as a one-key connection (its primary's health decides); without a
//! chain nothing here runs.

use std::sync::Arc;
use std::time::Instant;
use switchyard_core::lru::Lru;

use switchyard_core::routing::fallback::{decide, selection_kind, Decision, FallbackKind, Moment};
use switchyard_core::routing::{Eligibility, Exclusion, Failure, FailureKind, GiveUp, Plan, Scope, BINDING_IDLE_TTL};

use crate::error::EngineError;
use crate::router::{Router, Snapshot, TurnRun};

/// The most turns remembered as fallen back (the oldest is forgotten first).
const MAX_FALLEN_TURNS: usize = 10_000;

/// Where a request stands on its connection's chain.
#[derive(Debug, Default)]
pub(crate) struct ChainPosition {
    /// The connection the request was sent to, once it left it (its chain is followed).
    pub origin: Option<Arc<Snapshot>>,
    /// The next hop to consider.
    pub next: usize,
    /// Set while the next attempt is the first on a hop: why the request fell back.
    pub fresh: Option<FallbackKind>,
    /// A pool request: its hops are the pool's other members (`pool.rs`), not a chain.
    pub pool: Option<crate::router::PoolRoute>,
}

/// Turns that fell back: turn key → (origin connection id, hop index), idle-expiring like
/// turn bindings. Memory only, bounded.
#[derive(Debug)]
pub(crate) struct FallenTurns {
    turns: Lru<String, (String, usize)>,
}

impl Default for FallenTurns {
    fn default() -> Self {
        FallenTurns { turns: Lru::new(MAX_FALLEN_TURNS, Some(BINDING_IDLE_TTL)) }
    }
}

impl FallenTurns {
    fn get(&mut self, turn: &str, origin: &str, now: Instant) -> Option<usize> {
        let (o, hop) = self.turns.get(turn, now)?;
        if o != origin {
            self.turns.remove(turn);
            return None;
        }
        Some(*hop)
    }

    fn put(&mut self, turn: &str, origin: &str, hop: usize, now: Instant) {
        self.turns.insert(turn.to_string(), (origin.to_string(), hop), now);
    }
}

/// Exclusions that make a legacy connection with an active chain fall back: its primary's
/// health (evidence and model lists are not legacy's business).
const LEGACY_HEALTH: [Exclusion; 9] = [
    Exclusion::Disabled,
    Exclusion::SecretMissing,
    Exclusion::Missing,
    Exclusion::Expired,
    Exclusion::AuthInvalid,
    Exclusion::CircuitOpen,
    Exclusion::ModelCircuitOpen,
    Exclusion::QuotaReserve,
    Exclusion::ProbeInFlight,
];

impl TurnRun {
    /// The request left its connection for a hop of the chain.
    pub(crate) fn fell_back(&self) -> bool {
        self.chain.origin.is_some()
    }

    /// Whether the first connection's chain may be used by this request.
    pub(crate) fn chain_active(&self) -> bool {
        self.chain_hops().len() > self.chain.next && self.model.is_some()
    }

    /// The hops this request may move along: a pool's other members, else its first
    /// connection's chain.
    pub(crate) fn chain_hops(&self) -> &[switchyard_core::routing::Hop] {
        match &self.chain.pool {
            Some(pool) => &pool.hops,
            None => &self.chain.origin.as_ref().unwrap_or(&self.snapshot).fallback,
        }
    }
}

impl Router {
    /// A turn that fell back earlier continues on its hop (call right after `start_turn`).
    pub(crate) async fn resume_fallen_turn(&self, run: &mut TurnRun) -> Result<(), EngineError> {
        if run.snapshot.fallback.is_empty() || run.model.is_none() || run.chain.pool.is_some() {
            return Ok(());
        }
        let now = self.engine.monotonic();
        let hop = self.fallen_lock().get(&run.turn, &run.snapshot.connection_id, now);
        let Some(hop) = hop.filter(|&h| h < run.snapshot.fallback.len()) else {
            return Ok(());
        };
        let origin = run.snapshot.clone();
        let target = &origin.fallback[hop];
        let model = target.model_for(run.model.as_deref().unwrap_or("")).to_string();
        let snap = self.snapshot(&target.slug).await?;
        self.switch_to(run, origin, hop, snap, model, None);
        Ok(())
    }

    /// Nothing of the run's connection could be chosen: fall back if the rules allow.
    pub(crate) async fn fall_back_unavailable(&self, run: &mut TurnRun) -> Result<bool, EngineError> {
        if !run.chain_active() {
            return Ok(false);
        }
        let moment = match run.last_failover_kind() {
            // A failover's target turned out not to be eligible: a credential-scoped failure
            // before output left none.
            Some(kind) => {
                Moment::AfterFailure { failure: Failure::new(kind, Scope::Credential), committed: run.committed }
            }
            None => match self.selection_kind(run) {
                Some(why) => Moment::Selection { why },
                None => return Ok(false),
            },
        };
        self.fall_back(run, moment).await
    }

    /// An attempt failed and the planner gave up: fall back if the failure was
    /// credential-scoped, before output, and no profile of the connection is left.
    pub(crate) async fn fall_back_after(
        &self,
        run: &mut TurnRun,
        failure: Failure,
        plan: &Plan,
    ) -> Result<bool, EngineError> {
        if !run.chain_active() || matches!(plan, Plan::GiveUp(GiveUp::Committed { .. })) {
            if run.chain_active() {
                tracing::debug!("no fallback after output");
            }
            return Ok(false);
        }
        if !run.is_legacy() && !self.alternatives(run).is_empty() {
            return Ok(false);
        }
        self.fall_back(run, Moment::AfterFailure { failure, committed: run.committed }).await
    }

    async fn fall_back(&self, run: &mut TurnRun, moment: Moment) -> Result<bool, EngineError> {
        let Decision::Fallback(kind) = decide(moment, run.chain_active(), run.continuing().is_some()) else {
            return Ok(false);
        };
        let origin = run.chain.origin.clone().unwrap_or_else(|| run.snapshot.clone());
        let requested = run.requested.clone().or_else(|| run.model.clone()).unwrap_or_default();
        let hops = run.chain_hops().to_vec();
        for (i, hop) in hops.iter().enumerate().skip(run.chain.next) {
            let model = hop.model_for(&requested).to_string();
            let snap = match self.snapshot(&hop.slug).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(code = e.code().as_str(), hop = %hop.slug, "fallback hop not loaded");
                    continue;
                }
            };
            if snap.protocol != origin.protocol || !self.hop_serves(&snap, &model) {
                continue;
            }
            tracing::info!(from = %origin.slug, to = %snap.slug, %kind, "request falls back");
            match run.chain.pool.as_mut() {
                // The conversation follows the member on delivery (`Router::pool_delivered`).
                Some(pool) => pool.member = pool.hop_members.get(i).cloned().unwrap_or_default(),
                None => self.fallen_lock().put(&run.turn, &origin.connection_id, i, self.engine.monotonic()),
            }
            self.switch_to(run, origin, i, snap, model, Some(kind));
            return Ok(true);
        }
        Ok(false)
    }

    fn switch_to(
        &self,
        run: &mut TurnRun,
        origin: Arc<Snapshot>,
        hop: usize,
        snap: Arc<Snapshot>,
        model: String,
        kind: Option<FallbackKind>,
    ) {
        if run.requested.is_none() {
            run.requested = run.model.clone();
        }
        let pool = run.chain.pool.take();
        run.chain = super::fallback::ChainPosition { origin: Some(origin), next: hop + 1, fresh: kind, pool };
        run.snapshot = snap;
        run.model = Some(model);
        run.enter_hop();
        run.eligible_at_start = run.is_legacy().then_some(1);
    }

    /// The hop's current evidence supports `model` and a profile of it may serve it now (a
    /// legacy hop: its primary).
    pub(crate) fn hop_serves(&self, snap: &Snapshot, model: &str) -> bool {
        if !snap.models.iter().any(|m| m == model) {
            return false;
        }
        let e = self.evaluate_snapshot(snap, model);
        match snap.strategy {
            Some(_) => !e.eligible().is_empty(),
            None => snap.primary.is_some_and(|p| e.is_eligible(p)),
        }
    }

    fn evaluate_snapshot(&self, snap: &Snapshot, model: &str) -> Eligibility {
        let now_ms = self.engine.now_ms();
        let quota = self.quota.blocks(&snap.profiles, &snap.quota_policy, now_ms);
        let mut e = Eligibility::default();
        e.evaluate_under_quota(&snap.profiles, model, &snap.criteria(now_ms), &self.engine.board.view(), &quota);
        e
    }

    /// Why the run's connection has nothing to choose now (its first excluded profile; a
    /// cooling one counts as the failure that opened its circuit).
    fn selection_kind(&self, run: &TurnRun) -> Option<FallbackKind> {
        let snap = &run.snapshot;
        let model = run.model.as_deref().unwrap_or("");
        let now_ms = self.engine.now_ms();
        let e = self.evaluate_snapshot(snap, model);
        let excluded: Vec<(Exclusion, Option<FailureKind>)> = e
            .excluded()
            .iter()
            .filter(|&&(i, _)| snap.strategy.is_some() || Some(i) == snap.primary)
            .map(|&(i, reason)| {
                let cooling = self.engine.board.blocking_cooldown(&snap.profiles[i].id, model, now_ms).map(|(k, _)| k);
                (reason, cooling)
            })
            .collect();
        // Every eligible profile was tried or blocked at admission: it is cooling or probing.
        if excluded.is_empty() {
            return Some(FallbackKind::Excluded(Exclusion::ProbeInFlight));
        }
        selection_kind(&excluded)
    }

    /// A legacy connection with an active chain: whether its primary cannot serve now, and
    /// why (`None`: send to the primary as legacy always does).
    pub(crate) fn legacy_blocked(&self, run: &TurnRun) -> Option<FallbackKind> {
        if run.fell_back() || !run.chain_active() {
            return None;
        }
        let snap = &run.snapshot;
        let primary = snap.primary?;
        let model = run.model.as_deref().unwrap_or("");
        let e = self.evaluate_snapshot(snap, model);
        let reason = e.excluded().iter().find(|&&(i, _)| i == primary).map(|&(_, r)| r)?;
        if !LEGACY_HEALTH.contains(&reason) {
            return None;
        }
        let cooling = self
            .engine
            .board
            .blocking_cooldown(&snap.profiles[primary].id, model, self.engine.now_ms())
            .map(|(k, _)| k);
        selection_kind(&[(reason, cooling)])
    }

    pub(crate) fn fallen_lock(&self) -> std::sync::MutexGuard<'_, FallenTurns> {
        self.fallen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
