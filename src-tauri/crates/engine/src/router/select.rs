//! Choosing the profile of a request's next physical attempt (`route.rs` runs it first), as
//! the run's policy says: the named login (`pinned.rs`), the legacy primary, or — routed — a
//! decision on the run's [`View`](super::state::View) of the routing state: sticky binding, warm
//! conversation, SWRR or priority, failover to the planner's choice, probe; with its admission
//! and lease and its secret read for this attempt. Only a request's first attempt selects under
//! the connection's affinity and may bind, refresh or move its conversation; failover and
//! retries never touch the conversation binding (they are not turn boundaries). A request
//! continuing a known Responses answer goes only to the profile that produced it, or is refused;
//! an attempt that left the request's own key asks the transport to drop account-bound items
//! from the body (`Attempt::strip_account_state`). When nothing may serve, the answer is 503 or
//! 429 with `Retry-After`.

use switchyard_core::routing::{
    select_for_call, select_priority, Admission, Affinity, CallInput, ConversationStep, Eligibility, Exclusion,
    FailureKind, Move, MoveCause, QuotaBlocks, SelectionReason, Strategy,
};
use switchyard_core::states::ProfileKind;

use crate::error::EngineError;
use crate::router::attempt::{Attempt, AttemptSecret, Probe};
use crate::router::policy::Policy;
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::run::{NextStep, RequestRun};
use crate::router::state::{Claim, Going, RoutingState, View};
use crate::router::transport::CredentialUse;
use crate::router::Router;

/// The profile `choose` picked, why, and what that does to the request's conversation.
#[derive(Debug, Clone, Copy)]
struct Choice {
    index: usize,
    reason: SelectionReason,
    step: ConversationStep,
    /// A first attempt that left the turn's bound profile (it is no longer eligible).
    switched: bool,
    /// How many untried profiles were eligible (0 for a retry, which does not evaluate).
    eligible: usize,
}

/// The next step of a request.
#[derive(Debug)]
pub(crate) enum NextAttempt {
    Go(Attempt),
    /// No attempt may be made now, and why.
    Unavailable(Unavailable),
}

impl Router {
    /// Chooses the profile of the next attempt and reads its secret.
    pub(crate) async fn next_attempt(&self, run: &mut RequestRun) -> Result<NextAttempt, EngineError> {
        match &run.policy {
            Policy::Pinned(pin) => {
                let name = pin.profile.clone();
                self.pinned_attempt(run, &name).await
            }
            Policy::Legacy => self.legacy_attempt(run).await,
            Policy::Routed { .. } => self.routed_attempt(run).await,
        }
    }

    async fn routed_attempt(&self, run: &mut RequestRun) -> Result<NextAttempt, EngineError> {
        let now = (self.engine.monotonic(), self.engine.now_ms());
        let mut view = match run.view.take() {
            Some(view) => view,
            None => self.state.read(&run.view_keys(now)).await?,
        };
        loop {
            // The decision runs on the view's copy of the SWRR position; one that advanced it is
            // written back by compare-and-swap, and one that lost the race is taken again on the
            // position as it is now.
            let choice = self.choose(run, &mut view);
            if !self.state.advance(&run.view_keys(now), &mut view).await? {
                continue;
            }
            let Some(Choice { index, mut reason, step, switched, eligible }) = choice else {
                let refused = self.unavailable(run);
                run.view = Some(view);
                return Ok(NextAttempt::Unavailable(refused));
            };
            run.counts.eligible_at_start.get_or_insert(eligible);
            let snap = run.snapshot.clone();
            let profile = &snap.profiles[index];
            let Some(probe) = self.admit(&profile.id, run.model_key()).await? else {
                run.tried.push(profile.id.clone());
                continue;
            };
            if probe.is_some() {
                reason = SelectionReason::Probe;
            }
            let AttemptSecret::Ready(secret, login) = self.attempt_secret(&snap, index).await? else {
                run.tried.push(profile.id.clone());
                continue;
            };
            let failover = matches!(run.next, NextStep::Failover(..));
            let going = Going {
                target: &profile.id,
                failover,
                step: if failover { ConversationStep::Untracked } else { step },
            };
            self.state.bind(&run.view_keys(now), &view, going).await?;
            let moved = self.moved_conversation(run, step);
            run.moved_off |= switched || moved.is_some() || failover;
            run.counts.attempts += 1;
            if !run.tried.contains(&profile.id) {
                run.tried.push(profile.id.clone());
            }
            run.view = Some(view);
            return Ok(NextAttempt::Go(Attempt {
                profile_id: profile.id.clone(),
                number: run.counts.attempts,
                reason,
                moved,
                strip_account_state: run.moved_off,
                secret,
                credential: credential_use(profile.credential.kind),
                base_url: login.as_ref().map(|l| l.base_url.clone()),
                login,
                cli: true,
                probe,
            }));
        }
    }

    /// Eligible profiles not yet tried, most preferred first: the one SWRR (on a copy of the
    /// run's view) or priority order would pick next, then the others.
    pub(crate) fn alternatives(&self, run: &RequestRun) -> Vec<String> {
        let snap = &run.snapshot;
        let mut eligible = self.eligible(run);
        let first = match snap.strategy {
            Some(Strategy::Balanced) => {
                let mut swrr = run.view.as_ref().map(|v| v.swrr.clone()).unwrap_or_default();
                swrr.select(&snap.profiles, &eligible)
            }
            Some(Strategy::Priority) => select_priority(&snap.profiles, &eligible),
            None => None,
        };
        if let Some(pos) = first.and_then(|f| eligible.iter().position(|&i| i == f)) {
            eligible[..=pos].rotate_right(1);
        }
        eligible.into_iter().map(|i| snap.profiles[i].id.clone()).collect()
    }

    async fn legacy_attempt(&self, run: &mut RequestRun) -> Result<NextAttempt, EngineError> {
        let snap = run.snapshot.clone();
        let unavailable = |message: &str| {
            NextAttempt::Unavailable(Unavailable::new(Refusal::PrimaryUnavailable, 503, None, message.to_string()))
        };
        if run.counts.on_connection() > 0 {
            return Ok(unavailable("legacy routing makes one attempt"));
        }
        let Some(index) = snap.primary else {
            return Ok(unavailable("the connection has no primary profile"));
        };
        if !run.may_use(index) {
            return Ok(NextAttempt::Unavailable(self.client_not_allowed(run, &[index])));
        }
        // With hops to go to, legacy is a one-key connection: a primary that cannot serve now
        // (cooling, disabled, …) leaves the request to them.
        if self.legacy_blocked(run).is_some() {
            return Ok(unavailable("the primary profile cannot serve now"));
        }
        let probe = if run.policy.may_fall_back(&run.hops) && !run.hops.hopped() {
            match self.admit(&snap.profiles[index].id, run.model_key()).await? {
                Some(probe) => probe,
                None => return Ok(unavailable("the primary profile cannot serve now")),
            }
        } else {
            None
        };
        let (secret, login) = match self.attempt_secret(&snap, index).await? {
            AttemptSecret::Ready(secret, login) => (secret, login),
            AttemptSecret::Missing => return Ok(unavailable("the primary profile has no secret in the keychain")),
            AttemptSecret::NoLogin(why) => {
                return Ok(NextAttempt::Unavailable(self.login_unavailable(&snap, index, &why)));
            }
        };
        run.counts.attempts += 1;
        Ok(NextAttempt::Go(Attempt {
            profile_id: snap.profiles[index].id.clone(),
            number: run.counts.attempts,
            reason: if probe.is_some() { SelectionReason::Probe } else { SelectionReason::LegacyPrimary },
            moved: None,
            strip_account_state: run.hops.hopped(),
            secret,
            credential: credential_use(snap.profiles[index].credential.kind),
            base_url: login.as_ref().map(|l| l.base_url.clone()),
            login,
            cli: true,
            probe,
        }))
    }

    /// Admission of an attempt on (profile, model) against the circuit board and, beyond this
    /// process, the probe's claim in the routing state. `None`: blocked now (cooling, or another
    /// request or replica probes it); `Some(None)`: go without a probe.
    async fn admit(&self, profile_id: &str, model: &str) -> Result<Option<Option<Probe>>, EngineError> {
        let lease = match self.engine.board.admit(profile_id, model, self.engine.now_ms()) {
            Admission::Closed => return Ok(Some(None)),
            Admission::Blocked(_) => return Ok(None),
            Admission::Probe(lease) => lease,
        };
        match self.state.claim_probe(&lease, self.engine.now_ms()).await? {
            Claim::Ours(beyond) => Ok(Some(Some(Probe { lease, _beyond: beyond }))),
            Claim::Held => Ok(None),
            Claim::Closed => {
                drop(lease);
                self.engine.board.reset_circuit(profile_id, None);
                self.engine.board.reset_circuit(profile_id, Some(model));
                Ok(Some(None))
            }
        }
    }

    /// Eligibility of every profile for the run's model now, under the board's circuits and,
    /// when the connection turned quota-aware selection on, the latest quota readings.
    fn evaluate(&self, run: &RequestRun) -> Eligibility {
        self.evaluate_under(run, &self.quota_blocks(run))
    }

    /// The quota blocks of the run's connection now (none when quota-aware selection is off).
    fn quota_blocks(&self, run: &RequestRun) -> QuotaBlocks {
        let snap = &run.snapshot;
        self.quota.blocks(&snap.profiles, &snap.quota_policy, self.engine.now_ms())
    }

    fn evaluate_under(&self, run: &RequestRun, quota: &QuotaBlocks) -> Eligibility {
        let now_ms = self.engine.now_ms();
        let mut e = Eligibility::default();
        let view = self.engine.board.view();
        e.evaluate_under_quota(&run.snapshot.profiles, run.model_key(), &run.snapshot.criteria(now_ms), &view, quota);
        e
    }

    /// Eligible profiles for the run's model, minus those already tried in this request.
    pub(crate) fn eligible(&self, run: &RequestRun) -> Vec<usize> {
        untried(run, &self.evaluate(run))
    }

    /// The profile of the next attempt, decided on `view`. The first attempt of a request
    /// selects under the connection's affinity (`select_for_call`: the turn's binding, the warm
    /// conversation's key, or SWRR / priority); a failover goes to the planner's choice and a
    /// retry to the same profile, both as under turn affinity.
    fn choose(&self, run: &RequestRun, view: &mut View) -> Option<Choice> {
        let snap = &run.snapshot;
        let Policy::Routed { strategy, continuing } = &run.policy else { return None };
        let strategy = *strategy;
        if let NextStep::RetrySame(id, reason) = &run.next {
            let index = snap.profiles.iter().position(|p| &p.id == id)?;
            let step = ConversationStep::Untracked;
            return Some(Choice { index, reason: *reason, step, switched: false, eligible: 0 });
        }
        let evaluated = self.evaluate(run);
        let eligible = untried(run, &evaluated);
        // Continuing a known response: its profile or nothing (SWRR and bindings untouched).
        if let Some(pinned) = continuing {
            let index = eligible.iter().copied().find(|&i| &snap.profiles[i].id == pinned)?;
            let step = ConversationStep::Untracked;
            let eligible = eligible.len();
            return Some(Choice { index, reason: SelectionReason::Continuity, step, switched: false, eligible });
        }
        if eligible.is_empty() {
            return None;
        }
        let model = run.model_key();
        let now = self.engine.monotonic();
        let first = matches!(run.next, NextStep::First);
        let bound = if first { view.turn.as_deref() } else { None };
        let tracked = match (&run.keys.conversation, first, strategy, snap.affinity) {
            (Some(key), true, Strategy::Balanced, Affinity::Conversation { .. }) => Some(key),
            _ => None,
        };
        let affinity = if tracked.is_some() { snap.affinity } else { Affinity::Turn };
        let conversation = tracked.and(view.conversation.as_ref());
        let loads = self.loads_lock();
        let input = CallInput {
            strategy,
            affinity,
            turn_bound: bound,
            conversation,
            candidates: &snap.profiles,
            eligible: &eligible,
            excluded: evaluated.excluded(),
            load: tracked.and_then(|_| loads.get(&snap.connection_id, model)),
            now,
        };
        // A failover goes to the planner's choice; the selection still runs so SWRR counts
        // it exactly as before (on the same state and eligible set it picks the same profile).
        let call = select_for_call(&input, &mut view.swrr);
        drop(loads);
        let call = call?;
        match &run.next {
            NextStep::Failover(kind, id) => {
                let index =
                    eligible.iter().copied().find(|&i| &snap.profiles[i].id == id).unwrap_or(call.selection.index);
                let step = ConversationStep::Untracked;
                let eligible = eligible.len();
                Some(Choice { index, reason: SelectionReason::Failover(*kind), step, switched: false, eligible })
            }
            _ => {
                let index = call.selection.index;
                let switched = bound.is_some_and(|b| b != snap.profiles[index].id);
                let eligible = eligible.len();
                Some(Choice { index, reason: call.selection.reason, step: call.conversation, switched, eligible })
            }
        }
    }

    /// A going attempt moved its conversation to another key: why (for the ledger), noted in the
    /// token load for a balance move.
    fn moved_conversation(&self, run: &RequestRun, step: ConversationStep) -> Option<MoveCause> {
        let ConversationStep::Moved(Move { why, .. }) = step else { return None };
        run.keys.conversation.as_ref()?;
        run.snapshot.affinity.window()?;
        if why == MoveCause::Balance {
            self.loads_lock().load_mut(&run.snapshot.connection_id, run.model_key()).note_move();
        }
        tracing::info!(connection = %run.snapshot.slug, %why, "conversation moved to another key at a turn boundary");
        Some(why)
    }

    /// 503, or 429 when every blocked profile is cooling down for rate or quota reasons (a
    /// quota-aware skip counts), with `Retry-After` = the soonest cooldown end or reset.
    fn unavailable(&self, run: &mut RequestRun) -> Unavailable {
        let model = run.model_key().to_string();
        let now_ms = self.engine.now_ms();
        if let Some(pinned) = run.policy.continuing() {
            return self.continuity_unavailable(run, pinned, &model, now_ms);
        }
        let quota = self.quota_blocks(run);
        let e = self.evaluate_under(run, &quota);
        // Profiles could serve now, but the client rule keeps every one of them from this client.
        if run.counts.attempts == 0 && !e.eligible().is_empty() && e.eligible().iter().all(|&i| !run.may_use(i)) {
            return self.client_not_allowed(run, e.eligible());
        }
        let health =
            [Exclusion::CircuitOpen, Exclusion::ModelCircuitOpen, Exclusion::AuthInvalid, Exclusion::ProbeInFlight];
        let mut soonest: Option<i64> = None;
        let mut all_cooling = true;
        let mut any = false;
        for &(i, reason) in e.excluded() {
            let id = &run.snapshot.profiles[i].id;
            if reason == Exclusion::QuotaReserve {
                any = true;
                if let Some(u) = quota.until(id, &model, now_ms) {
                    soonest = Some(soonest.map_or(u, |s| s.min(u)));
                }
                continue;
            }
            if !health.contains(&reason) {
                continue;
            }
            any = true;
            match self.engine.board.blocking_cooldown(id, &model, now_ms) {
                Some((kind, until)) => {
                    all_cooling &= matches!(kind, FailureKind::RateLimited | FailureKind::QuotaExhausted);
                    if let Some(u) = until {
                        soonest = Some(soonest.map_or(u, |s| s.min(u)));
                    }
                }
                None => all_cooling = false,
            }
        }
        let retry_after_secs = soonest.map(|u| retry_after(u, now_ms));
        let status = if any && all_cooling { 429 } else { 503 };
        let message = format!(
            "no credential profile of '{}' can serve model '{model}' now{}",
            run.snapshot.slug,
            retry_after_secs.map(|s| format!("; retry in {s} s")).unwrap_or_default()
        );
        Unavailable::new(Refusal::NoEligibleProfile, status, retry_after_secs, message)
    }

    /// 503 for a request continuing a response whose profile cannot serve now (cooling,
    /// disabled, removed, tried already): never another account, which could not read it.
    /// `Retry-After` when that profile's cooldown end is known.
    fn continuity_unavailable(&self, run: &RequestRun, pinned: &str, model: &str, now_ms: i64) -> Unavailable {
        let until = self.engine.board.blocking_cooldown(pinned, model, now_ms).and_then(|(_, until)| until);
        let retry_after_secs = until.map(|u| retry_after(u, now_ms));
        let message = format!(
            "this request continues a response (previous_response_id) made by profile '{pinned}' of '{}', which \
             cannot serve model '{model}' now{}; Switchyard does not send it to another key, whose account could \
             not read that response",
            run.snapshot.slug,
            retry_after_secs.map(|s| format!("; retry in {s} s")).unwrap_or_default()
        );
        Unavailable::new(Refusal::Continuity, 503, retry_after_secs, message)
    }
}

/// Whole seconds until `until_ms` (at least 1): a `Retry-After` value.
pub(crate) fn retry_after(until_ms: i64, now_ms: i64) -> u64 {
    u64::try_from((until_ms - now_ms + 999) / 1000).unwrap_or(0).max(1)
}

/// The eligible profiles of `e` not yet tried in this request that the client rule lets serve
/// it (`RequestRun::may_use`).
fn untried(run: &RequestRun, e: &Eligibility) -> Vec<usize> {
    e.eligible()
        .iter()
        .copied()
        .filter(|&i| !run.tried.contains(&run.snapshot.profiles[i].id) && run.may_use(i))
        .collect()
}

/// How a profile of `kind` authenticates upstream.
pub(crate) fn credential_use(kind: ProfileKind) -> CredentialUse {
    match kind {
        ProfileKind::ApiKey => CredentialUse::Key,
        ProfileKind::Token => CredentialUse::Token,
        ProfileKind::Oauth => CredentialUse::Login,
        ProfileKind::External => CredentialUse::Client,
    }
}
