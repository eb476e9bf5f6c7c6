//! Moving a request to a hop inside the routing loop (invariants 17 and 24): when its
//! connection has no eligible profile — at selection time, or after a credential-scoped failure
//! before output left none — the request moves to the next hop of its [`Hops`] (its first
//! connection's active chain, or its pool's other members) whose current evidence supports the
//! model (the requested one, or the hop's own), and routes there in that connection's own mode.
//! The first attempt on a hop is recorded as `fallback:<kind>` (`pool:<kind>` in a pool); a turn
//! that fell back along a chain stays on its hop until it ends ([`FallenTurns`]); new turns start
//! on the first connection again. A legacy connection with an active chain behaves as a one-key
//! connection (its primary's health decides); without hops nothing here runs.

use std::sync::Arc;
use std::time::Instant;
use switchyard_core::lru::Lru;

use switchyard_core::routing::fallback::{decide, selection_kind, Decision, FallbackKind, Moment};
use switchyard_core::routing::{Eligibility, Exclusion, Failure, FailureKind, GiveUp, Plan, Scope, BINDING_IDLE_TTL};

use crate::error::EngineError;
use crate::router::policy::{Chain, Hops};
use crate::router::{RequestRun, Router, Snapshot};

/// The most turns remembered as fallen back (the oldest is forgotten first).
const MAX_FALLEN_TURNS: usize = 10_000;

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

impl Router {
    /// The hop a turn that fell back earlier continues on (its connection and the model asked
    /// there), with `hops` moved past it; `None`: the turn starts on `snapshot`.
    pub(crate) async fn fallen_hop(
        &self,
        snapshot: &Arc<Snapshot>,
        model: Option<&str>,
        hops: &mut Hops,
        turn: &str,
    ) -> Result<Option<(Arc<Snapshot>, String)>, EngineError> {
        let (Hops::Chain(chain), Some(model)) = (&mut *hops, model) else { return Ok(None) };
        let now = self.engine.monotonic();
        let hop = self.fallen_lock().get(turn, &snapshot.connection_id, now);
        let Some(hop) = hop.filter(|&h| h < snapshot.fallback.len()) else { return Ok(None) };
        let target = &snapshot.fallback[hop];
        let hop_model = target.model_for(model).to_string();
        let snap = self.snapshot(&target.slug).await?;
        *chain = Chain { origin: snapshot.clone(), left: true, next: hop + 1, fresh: None };
        Ok(Some((snap, hop_model)))
    }

    /// Nothing of the run's connection could be chosen: move to a hop if the rules allow.
    pub(crate) async fn fall_back_unavailable(&self, run: &mut RequestRun) -> Result<bool, EngineError> {
        if !run.policy.may_fall_back(&run.hops) {
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

    /// An attempt failed and the planner gave up: move to a hop if the failure was
    /// credential-scoped, before output, and no profile of the connection is left.
    pub(crate) async fn fall_back_after(
        &self,
        run: &mut RequestRun,
        failure: Failure,
        plan: &Plan,
    ) -> Result<bool, EngineError> {
        if !run.policy.may_fall_back(&run.hops) {
            return Ok(false);
        }
        if matches!(plan, Plan::GiveUp(GiveUp::Committed { .. })) {
            tracing::debug!("no fallback after output");
            return Ok(false);
        }
        if !run.policy.is_legacy() && !self.alternatives(run).is_empty() {
            return Ok(false);
        }
        self.fall_back(run, Moment::AfterFailure { failure, committed: run.committed }).await
    }

    async fn fall_back(&self, run: &mut RequestRun, moment: Moment) -> Result<bool, EngineError> {
        let Decision::Fallback(kind) = decide(moment, run.hops.has_next(), run.policy.continuing().is_some()) else {
            return Ok(false);
        };
        let requested = run.requested.clone().or_else(|| run.model.clone()).unwrap_or_default();
        let protocol = run.snapshot.protocol;
        let origin_slug = match &run.hops {
            Hops::Chain(c) => c.origin.slug.clone(),
            _ => run.snapshot.slug.clone(),
        };
        let hops = run.hops.list().to_vec();
        for (i, hop) in hops.iter().enumerate().skip(run.hops.next()) {
            let model = hop.model_for(&requested).to_string();
            let snap = match self.snapshot(&hop.slug).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(code = e.code().as_str(), hop = %hop.slug, "fallback hop not loaded");
                    continue;
                }
            };
            if snap.protocol != protocol || !self.hop_serves(&snap, &model) {
                continue;
            }
            tracing::info!(from = %origin_slug, to = %snap.slug, %kind, "request falls back");
            match &mut run.hops {
                // The conversation follows the member on delivery (`Router::pool_delivered`).
                Hops::Pool(pool) => {
                    pool.member = pool.hop_members.get(i).cloned().unwrap_or_default();
                    (pool.next, pool.fresh) = (i + 1, Some(kind));
                }
                Hops::Chain(chain) => {
                    self.fallen_lock().put(&run.keys.turn, &chain.origin.connection_id, i, self.engine.monotonic());
                    (chain.left, chain.next, chain.fresh) = (true, i + 1, Some(kind));
                }
                Hops::None => return Ok(false),
            }
            run.enter_hop(snap, model);
            return Ok(true);
        }
        Ok(false)
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

    pub(crate) fn evaluate_snapshot(&self, snap: &Snapshot, model: &str) -> Eligibility {
        let now_ms = self.engine.now_ms();
        let quota = self.quota.blocks(&snap.profiles, &snap.quota_policy, now_ms);
        let mut e = Eligibility::default();
        e.evaluate_under_quota(&snap.profiles, model, &snap.criteria(now_ms), &self.engine.board.view(), &quota);
        e
    }

    /// Why the run's connection has nothing to choose now (its first excluded profile; a
    /// cooling one counts as the failure that opened its circuit).
    fn selection_kind(&self, run: &RequestRun) -> Option<FallbackKind> {
        let snap = &run.snapshot;
        let model = run.model_key();
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

    /// A legacy connection with hops to go to: whether its primary cannot serve now, and why
    /// (`None`: send to the primary as legacy always does).
    pub(crate) fn legacy_blocked(&self, run: &RequestRun) -> Option<FallbackKind> {
        if run.hops.hopped() || !run.policy.may_fall_back(&run.hops) {
            return None;
        }
        let snap = &run.snapshot;
        let primary = snap.primary?;
        let model = run.model_key();
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
