//! Choosing the profile of a request's next physical attempt (`route.rs` runs it first):
//! legacy primary, sticky binding, warm conversation, SWRR or priority, failover to the
//! planner's choice, probe — with its admission and lease and its secret read for this
//! attempt. Only a request's first attempt runs `select_for_call` under the connection's
//! affinity and may bind, refresh or move its conversation; failover and retries never touch
//! the conversation binding (they are not turn boundaries). A request continuing a known
//! Responses answer (`previous_response_id`) goes only to the profile that produced it
//! (`continuity`), or is refused; an attempt that left the request's own key (failover, a
//! conversation move, a turn moved off its binding) asks the transport to drop account-bound
//! items from the body (`Attempt::strip_account_state`). When nothing may serve, the answer
//! is 503 or 429 with `Retry-After`.

use std::sync::Arc;

use switchyard_core::routing::{
    select_for_call, select_priority, Admission, Affinity, CallInput, ConversationStep, Eligibility, Exclusion,
    FailureKind, Move, MoveCause, ProbeLease, QuotaBlocks, SelectionReason, Strategy, Swrr,
};
use switchyard_core::states::ProfileKind;
use switchyard_vault::Secret;

use crate::error::EngineError;
use crate::router::login::AttemptLogin;
use crate::router::run::{Pending, TurnRun};
use crate::router::shared::{SharedLease, SharedProbe};
use crate::router::transport::CredentialUse;
use crate::router::Router;

/// One physical attempt: the chosen profile and its secret, read for this attempt.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub profile_id: String,
    pub number: u32,
    pub reason: SelectionReason,
    /// Set when this attempt moved its warm conversation off an ineligible key (a turn
    /// boundary only): why the old key could not keep it.
    pub moved: Option<MoveCause>,
    /// The attempt goes to another account than the one that produced the conversation's
    /// account-bound items: the transport drops them from the body.
    pub strip_account_state: bool,
    pub secret: Arc<Secret>,
    /// How the attempt authenticates upstream (from the profile's kind).
    pub credential: CredentialUse,
    /// An owned login's account, refresh mark and backend (`router/login.rs`).
    pub login: Option<AttemptLogin>,
    pub(super) lease: Option<ProbeLease>,
    /// The probe's lease on a shared store (released when the attempt is dropped).
    pub(super) shared_lease: Option<Box<SharedLease>>,
}

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
    /// No profile may serve the request now: answer `status` (503, or 429 when every
    /// profile is cooling down for rate or quota reasons) with `Retry-After`.
    Unavailable {
        status: u16,
        retry_after_secs: Option<u64>,
        message: String,
        /// The request continues a response whose profile cannot serve now (`continuity`).
        continuity: bool,
    },
}

impl Router {
    /// Chooses the profile of the next attempt and reads its secret.
    pub(crate) async fn next_attempt(&self, run: &mut TurnRun) -> Result<NextAttempt, EngineError> {
        if run.pinned.is_some() {
            return self.pinned_attempt(run).await;
        }
        if run.is_legacy() {
            return self.legacy_attempt(run).await;
        }
        if self.shared().is_some() && run.pending == Pending::First && run.pulled.is_none() {
            self.pull(run).await?;
        }
        loop {
            // On a shared store SWRR runs on the run's copy of the stored position; a decision
            // that advanced it is written by compare-and-swap, and one that lost the race is
            // taken again on the position another replica wrote (`shared.rs`).
            let mut pulled = run.pulled.take();
            let before = pulled.as_ref().map(|p| p.swrr.clone());
            let choice = self.choose(run, pulled.as_mut().map(|p| &mut p.swrr));
            if let (Some(p), Some(before)) = (pulled.as_mut(), before) {
                let model = run.model.as_deref().unwrap_or("");
                let target = &run.snapshot.connection_id;
                if !self.advance_swrr(target, model, p, &before).await? {
                    run.pulled = pulled;
                    continue;
                }
            }
            run.pulled = pulled;
            let Some(Choice { index, mut reason, step, switched, eligible }) = choice else {
                return Ok(self.unavailable(run));
            };
            run.eligible_at_start.get_or_insert(eligible);
            let snap = run.snapshot.clone();
            let profile = &snap.profiles[index];
            let model = run.model.as_deref().unwrap_or("");
            let Some((lease, shared_lease)) = self.admit(&profile.id, model).await? else {
                run.tried.push(profile.id.clone());
                continue;
            };
            if lease.is_some() {
                reason = SelectionReason::Probe;
            }
            let Some((secret, login)) = self.attempt_secret(&snap, index).await? else {
                run.tried.push(profile.id.clone());
                continue;
            };
            {
                let mut bindings = self.bindings_lock();
                let now = self.engine.monotonic();
                match run.pending {
                    Pending::Failover(..) => {
                        let _ = bindings.rebind(&run.turn, &profile.id, now);
                    }
                    _ => bindings.bind(&run.turn, &profile.id, now),
                }
            }
            let moved = self.follow_conversation(run, step, &profile.id);
            if run.pulled.is_some() {
                let step =
                    if matches!(run.pending, Pending::Failover(..)) { ConversationStep::Untracked } else { step };
                let rows = self.binding_rows(run, &profile.id, step);
                if let Err(e) = self.share_bindings(rows).await {
                    tracing::warn!(code = e.code().as_str(), "bindings not shared; other replicas may choose anew");
                }
            }
            run.moved_off |= switched || moved.is_some() || matches!(run.pending, Pending::Failover(..));
            run.attempts += 1;
            if !run.tried.contains(&profile.id) {
                run.tried.push(profile.id.clone());
            }
            let number = run.attempts;
            return Ok(NextAttempt::Go(Attempt {
                profile_id: profile.id.clone(),
                number,
                reason,
                moved,
                strip_account_state: run.moved_off,
                secret,
                credential: credential_use(profile.credential.kind),
                login,
                lease,
                shared_lease,
            }));
        }
    }

    /// Eligible profiles not yet tried, most preferred first: the one SWRR (on a copy of its
    /// state) or priority order would pick next, then the others.
    pub(crate) fn alternatives(&self, run: &TurnRun) -> Vec<String> {
        let snap = &run.snapshot;
        let mut eligible = self.eligible(run);
        let model = run.model.as_deref().unwrap_or("");
        let first = match snap.strategy {
            Some(Strategy::Balanced) => {
                let mut swrr: Swrr = match &run.pulled {
                    Some(p) => p.swrr.clone(),
                    None => self.swrr_lock().state(&snap.connection_id, model).cloned().unwrap_or_default(),
                };
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

    async fn legacy_attempt(&self, run: &mut TurnRun) -> Result<NextAttempt, EngineError> {
        let snap = run.snapshot.clone();
        let unavailable = |message: &str| NextAttempt::Unavailable {
            status: 503,
            retry_after_secs: None,
            message: message.to_string(),
            continuity: false,
        };
        if run.attempts > run.hop_base {
            return Ok(unavailable("legacy routing makes one attempt"));
        }
        let Some(index) = snap.primary else {
            return Ok(unavailable("the connection has no primary profile"));
        };
        if !run.may_use(index) {
            return Ok(self.client_not_allowed(run, &[index]));
        }
        // With an active chain, legacy is a one-key connection: a primary that cannot serve
        // now (cooling, disabled, …) leaves the request to the chain.
        if self.legacy_blocked(run).is_some() {
            return Ok(unavailable("the primary profile cannot serve now"));
        }
        let (lease, shared_lease) = if run.chain_active() && !run.fell_back() {
            let model = run.model.as_deref().unwrap_or("");
            match self.admit(&snap.profiles[index].id, model).await? {
                Some(admitted) => admitted,
                None => return Ok(unavailable("the primary profile cannot serve now")),
            }
        } else {
            (None, None)
        };
        let Some((secret, login)) = self.attempt_secret(&snap, index).await? else {
            return Ok(unavailable("the primary profile has no secret in the keychain"));
        };
        run.attempts += 1;
        Ok(NextAttempt::Go(Attempt {
            profile_id: snap.profiles[index].id.clone(),
            number: run.attempts,
            reason: if lease.is_some() { SelectionReason::Probe } else { SelectionReason::LegacyPrimary },
            moved: None,
            strip_account_state: run.fell_back(),
            secret,
            credential: credential_use(snap.profiles[index].credential.kind),
            login,
            lease,
            shared_lease,
        }))
    }

    /// Admission of an attempt on (profile, model) against the circuit board and, on a shared
    /// store, the probe's lease there. `None`: blocked now (cooling, or another request or
    /// replica probes it).
    async fn admit(
        &self,
        profile_id: &str,
        model: &str,
    ) -> Result<Option<(Option<ProbeLease>, Option<Box<SharedLease>>)>, EngineError> {
        match self.engine.board.admit(profile_id, model, self.engine.now_ms()) {
            Admission::Closed => Ok(Some((None, None))),
            Admission::Blocked(_) => Ok(None),
            Admission::Probe(lease) if self.shared().is_none() => Ok(Some((Some(lease), None))),
            Admission::Probe(lease) => match self.claim_probe(&lease).await? {
                SharedProbe::Ours(guard) => Ok(Some((Some(lease), Some(Box::new(guard))))),
                SharedProbe::Held => Ok(None),
                SharedProbe::Closed => {
                    drop(lease);
                    self.engine.board.reset_circuit(profile_id, None);
                    self.engine.board.reset_circuit(profile_id, Some(model));
                    Ok(Some((None, None)))
                }
            },
        }
    }

    /// Eligibility of every profile for the run's model now, under the board's circuits and,
    /// when the connection turned quota-aware selection on, the latest quota readings.
    fn evaluate(&self, run: &TurnRun) -> Eligibility {
        self.evaluate_under(run, &self.quota_blocks(run))
    }

    /// The quota blocks of the run's connection now (none when quota-aware selection is off).
    fn quota_blocks(&self, run: &TurnRun) -> QuotaBlocks {
        let snap = &run.snapshot;
        self.quota.blocks(&snap.profiles, &snap.quota_policy, self.engine.now_ms())
    }

    fn evaluate_under(&self, run: &TurnRun, quota: &QuotaBlocks) -> Eligibility {
        let model = run.model.as_deref().unwrap_or("");
        let now_ms = self.engine.now_ms();
        let mut e = Eligibility::default();
        let view = self.engine.board.view();
        e.evaluate_under_quota(&run.snapshot.profiles, model, &run.snapshot.criteria(now_ms), &view, quota);
        e
    }

    /// Eligible profiles for the run's model, minus those already tried in this request.
    pub(crate) fn eligible(&self, run: &TurnRun) -> Vec<usize> {
        untried(run, &self.evaluate(run))
    }

    /// The profile of the next attempt. The first attempt of a request selects under the
    /// connection's affinity (`select_for_call`: the turn's binding, the warm conversation's
    /// key, or SWRR / priority); a failover goes to the planner's choice and a retry to the
    /// same profile, both as under turn affinity.
    fn choose(&self, run: &TurnRun, shared_swrr: Option<&mut Swrr>) -> Option<Choice> {
        let snap = &run.snapshot;
        let strategy = snap.strategy?;
        if let Pending::RetrySame(id, reason) = &run.pending {
            let index = snap.profiles.iter().position(|p| &p.id == id)?;
            let step = ConversationStep::Untracked;
            return Some(Choice { index, reason: *reason, step, switched: false, eligible: 0 });
        }
        let evaluated = self.evaluate(run);
        let eligible = untried(run, &evaluated);
        // Continuing a known response: its profile or nothing (SWRR and bindings untouched).
        if let Some(pinned) = &run.continuing {
            let index = eligible.iter().copied().find(|&i| &snap.profiles[i].id == pinned)?;
            let step = ConversationStep::Untracked;
            let eligible = eligible.len();
            return Some(Choice { index, reason: SelectionReason::Continuity, step, switched: false, eligible });
        }
        if eligible.is_empty() {
            return None;
        }
        let model = run.model.as_deref().unwrap_or("");
        let now = self.engine.monotonic();
        let first = matches!(run.pending, Pending::First);
        let bound = if first { self.bindings_lock().get(&run.turn, now).map(|b| b.profile_id.clone()) } else { None };
        let tracked = match (&run.conversation, first, strategy, snap.affinity) {
            (Some(key), true, Strategy::Balanced, Affinity::Conversation { .. }) => Some(key),
            _ => None,
        };
        let affinity = if tracked.is_some() { snap.affinity } else { Affinity::Turn };
        let conversation = tracked.and_then(|key| self.conversations_lock().get(key, model, now).cloned());
        // Lock order: loads, then SWRR (`Recording` takes the loads alone).
        let loads = self.loads_lock();
        let input = CallInput {
            strategy,
            affinity,
            turn_bound: bound.as_deref(),
            conversation: conversation.as_ref(),
            candidates: &snap.profiles,
            eligible: &eligible,
            excluded: evaluated.excluded(),
            load: tracked.and_then(|_| loads.get(&snap.connection_id, model)),
            now,
        };
        // A failover goes to the planner's choice; the selection still runs so SWRR counts
        // it exactly as before (on the same state and eligible set it picks the same profile).
        let call = match shared_swrr {
            Some(s) => select_for_call(&input, s),
            None => self.swrr_lock().with_state(&snap.connection_id, model, |s| select_for_call(&input, s)),
        };
        drop(loads);
        let call = call?;
        match &run.pending {
            Pending::Failover(kind, id) => {
                let index =
                    eligible.iter().copied().find(|&i| &snap.profiles[i].id == id).unwrap_or(call.selection.index);
                let step = ConversationStep::Untracked;
                let eligible = eligible.len();
                Some(Choice { index, reason: SelectionReason::Failover(*kind), step, switched: false, eligible })
            }
            _ => {
                let index = call.selection.index;
                let switched = bound.as_deref().is_some_and(|b| b != snap.profiles[index].id);
                let eligible = eligible.len();
                Some(Choice { index, reason: call.selection.reason, step: call.conversation, switched, eligible })
            }
        }
    }

    /// Applies a going attempt's conversation step: bind a new, cold or moved conversation to
    /// `profile_id`, refresh a kept one. Returns the move's cause, for the ledger.
    fn follow_conversation(&self, run: &TurnRun, step: ConversationStep, profile_id: &str) -> Option<MoveCause> {
        let (Some(key), Some(window)) = (&run.conversation, run.snapshot.affinity.window()) else {
            return None;
        };
        let model = run.model.as_deref().unwrap_or("");
        let now = self.engine.monotonic();
        let mut conversations = self.conversations_lock();
        match step {
            ConversationStep::Untracked => None,
            ConversationStep::Kept => {
                conversations.touch(key, model, now);
                None
            }
            ConversationStep::Assigned { .. } => {
                conversations.bind(key, model, profile_id, window, now);
                None
            }
            ConversationStep::Moved(Move { why, .. }) => {
                conversations.bind(key, model, profile_id, window, now);
                drop(conversations);
                if why == MoveCause::Balance {
                    self.loads_lock().load_mut(&run.snapshot.connection_id, model).note_move();
                }
                tracing::info!(connection = %run.snapshot.slug, %why, "conversation moved to another key at a turn boundary");
                Some(why)
            }
        }
    }

    /// 503, or 429 when every blocked profile is cooling down for rate or quota reasons (a
    /// quota-aware skip counts), with `Retry-After` = the soonest cooldown end or reset.
    fn unavailable(&self, run: &mut TurnRun) -> NextAttempt {
        let model = run.model.as_deref().unwrap_or("");
        let now_ms = self.engine.now_ms();
        if let Some(pinned) = &run.continuing {
            return self.continuity_unavailable(run, pinned, model, now_ms);
        }
        let quota = self.quota_blocks(run);
        let e = self.evaluate_under(run, &quota);
        // Profiles could serve now, but the client rule keeps every one of them from this client.
        if run.attempts == 0 && !e.eligible().is_empty() && e.eligible().iter().all(|&i| !run.may_use(i)) {
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
                if let Some(u) = quota.until(id, model, now_ms) {
                    soonest = Some(soonest.map_or(u, |s| s.min(u)));
                }
                continue;
            }
            if !health.contains(&reason) {
                continue;
            }
            any = true;
            match self.engine.board.blocking_cooldown(id, model, now_ms) {
                Some((kind, until)) => {
                    all_cooling &= matches!(kind, FailureKind::RateLimited | FailureKind::QuotaExhausted);
                    if let Some(u) = until {
                        soonest = Some(soonest.map_or(u, |s| s.min(u)));
                    }
                }
                None => all_cooling = false,
            }
        }
        let retry_after_secs = soonest.map(|u| u64::try_from((u - now_ms + 999) / 1000).unwrap_or(0).max(1));
        let status = if any && all_cooling { 429 } else { 503 };
        let message = format!(
            "no credential profile of '{}' can serve model '{model}' now{}",
            run.snapshot.slug,
            retry_after_secs.map(|s| format!("; retry in {s} s")).unwrap_or_default()
        );
        NextAttempt::Unavailable { status, retry_after_secs, message, continuity: false }
    }

    /// 503 for a request continuing a response whose profile cannot serve now (cooling,
    /// disabled, removed, tried already): never another account, which could not read it.
    /// `Retry-After` when that profile's cooldown end is known.
    fn continuity_unavailable(&self, run: &TurnRun, pinned: &str, model: &str, now_ms: i64) -> NextAttempt {
        let until = self.engine.board.blocking_cooldown(pinned, model, now_ms).and_then(|(_, until)| until);
        let retry_after_secs = until.map(|u| u64::try_from((u - now_ms + 999) / 1000).unwrap_or(0).max(1));
        let message = format!(
            "this request continues a response (previous_response_id) made by profile '{pinned}' of '{}', which \
             cannot serve model '{model}' now{}; Switchyard does not send it to another key, whose account could \
             not read that response",
            run.snapshot.slug,
            retry_after_secs.map(|s| format!("; retry in {s} s")).unwrap_or_default()
        );
        NextAttempt::Unavailable { status: 503, retry_after_secs, message, continuity: true }
    }
}

/// The eligible profiles of `e` not yet tried in this request that the client rule lets serve
/// it (`TurnRun::may_use`).
fn untried(run: &TurnRun, e: &Eligibility) -> Vec<usize> {
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
