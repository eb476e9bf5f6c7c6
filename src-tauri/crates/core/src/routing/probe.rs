//! Admission of one attempt against the circuit board and the half-open probe lease: an RAII
//! guard whose `Drop` releases the claim unless the probe was resolved (invariant 8).

use std::sync::Arc;

use super::board::{apply_failure, target_of, CircuitBoard};
use super::circuit::{CircuitHealth, CircuitSnapshot};
use super::eligibility::Exclusion;
use super::failure::{Failure, FailureKind};

/// Whether an attempt on (profile, model) may go now.
#[derive(Debug)]
pub enum Admission {
    /// Every circuit closed: go.
    Closed,
    /// A cooldown ended: this attempt is the single probe. Resolve the lease with the result.
    Probe(ProbeLease),
    /// Not now, for this reason (`circuit_open`, `auth_invalid`, `model_circuit_open`,
    /// `probe_in_flight`).
    Blocked(Exclusion),
}

impl CircuitBoard {
    /// Decides admission and, when a circuit is half-open and unclaimed, claims its probe
    /// atomically: of any number of concurrent callers exactly one gets `Probe`.
    pub fn admit(self: &Arc<Self>, profile: &str, model: &str, now_ms: i64) -> Admission {
        let mut map = self.lock();
        let Some(pc) = map.get_mut(profile) else {
            return Admission::Closed;
        };
        let cred = pc.credential.as_ref().map(|c| c.health(now_ms));
        let per_model = pc.models.get(model).map(|c| c.health(now_ms));
        if let Some(CircuitHealth::Open { kind, .. }) = cred {
            return Admission::Blocked(if kind == FailureKind::AuthInvalid {
                Exclusion::AuthInvalid
            } else {
                Exclusion::CircuitOpen
            });
        }
        if let Some(CircuitHealth::Open { .. }) = per_model {
            return Admission::Blocked(Exclusion::ModelCircuitOpen);
        }
        let claimed = |h: Option<CircuitHealth>| matches!(h, Some(CircuitHealth::HalfOpen { claimed: true, .. }));
        if claimed(cred) || claimed(per_model) {
            return Admission::Blocked(Exclusion::ProbeInFlight);
        }
        let half_open = |h: Option<CircuitHealth>| matches!(h, Some(CircuitHealth::HalfOpen { .. }));
        let mut claim = |slot: Option<&str>| {
            let id = self.next_claim_id();
            pc.slot(slot).map(|c| {
                c.claim = Some(id);
                id
            })
        };
        let credential_claim = if half_open(cred) { claim(None) } else { None };
        let model_claim = if half_open(per_model) { claim(Some(model)) } else { None };
        drop(map);
        if credential_claim.is_none() && model_claim.is_none() {
            return Admission::Closed;
        }
        let lease = ProbeLease {
            board: Arc::clone(self),
            profile: profile.to_string(),
            model: model.to_string(),
            credential_claim,
            model_claim,
            resolved: false,
        };
        Admission::Probe(lease)
    }
}

/// The claim on a half-open probe. Exactly one exists per half-open circuit. `succeed`
/// closes the claimed circuits, `fail` re-opens them with doubled backoff; dropping it
/// unresolved (client gone, future cancelled, panic) releases the claim so another request
/// may probe. A reset of the profile in between turns every method into a no-op.
#[derive(Debug)]
pub struct ProbeLease {
    board: Arc<CircuitBoard>,
    profile: String,
    model: String,
    credential_claim: Option<u64>,
    model_claim: Option<u64>,
    resolved: bool,
}

impl ProbeLease {
    pub fn profile(&self) -> &str {
        &self.profile
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// True when this lease claimed the credential-wide circuit (else only the model one).
    pub fn covers_credential(&self) -> bool {
        self.credential_claim.is_some()
    }

    /// True when this lease claimed the (profile, model) circuit.
    pub fn covers_model(&self) -> bool {
        self.model_claim.is_some()
    }

    /// The probe succeeded: closes the claimed circuits. Returns their closed snapshots.
    pub fn succeed(mut self) -> Vec<CircuitSnapshot> {
        self.resolved = true;
        let mut out = Vec::new();
        let mut map = self.board.lock();
        if let Some(pc) = map.get_mut(&self.profile) {
            for (target, claim) in self.claims() {
                if pc.get(target).is_some_and(|c| c.claim == Some(claim)) {
                    pc.set(target, None);
                    out.push(CircuitSnapshot::closed(&self.profile, target.unwrap_or("")));
                }
            }
        }
        out
    }

    /// The probe failed. A credential-scoped failure on a claimed circuit re-opens it one
    /// backoff level higher; on an unclaimed circuit it opens as usual. Other scopes only
    /// release the claims (the probe proved nothing about the credential). Returns the
    /// changed circuits to persist.
    pub fn fail(mut self, failure: &Failure, now_ms: i64) -> Vec<CircuitSnapshot> {
        self.resolved = true;
        let target = target_of(failure.scope, &self.model);
        let mut out = Vec::new();
        let mut map = self.board.lock();
        let mut handled = false;
        for (slot, claim) in self.claims() {
            let ours = map.get(&self.profile).and_then(|pc| pc.get(slot)).is_some_and(|c| c.claim == Some(claim));
            if !ours {
                continue;
            }
            if target == Some(slot) {
                handled = true;
                let policy = *self.board.policy();
                out.extend(apply_failure(&mut map, &policy, &self.profile, slot, failure, true, now_ms));
            } else if let Some(c) = map.get_mut(&self.profile).and_then(|pc| pc.slot(slot)) {
                c.claim = None;
            }
        }
        if let (Some(slot), false) = (target, handled) {
            let policy = *self.board.policy();
            out.extend(apply_failure(&mut map, &policy, &self.profile, slot, failure, false, now_ms));
        }
        out
    }

    /// (circuit, claim id) pairs this lease holds; `None` circuit = credential-wide.
    fn claims(&self) -> impl Iterator<Item = (Option<&str>, u64)> {
        let cred = self.credential_claim.map(|id| (None, id));
        let model = self.model_claim.map(|id| (Some(self.model.as_str()), id));
        cred.into_iter().chain(model)
    }

    fn release(&self) {
        let mut map = self.board.lock();
        if let Some(pc) = map.get_mut(&self.profile) {
            for (slot, claim) in self.claims() {
                if let Some(c) = pc.slot(slot) {
                    if c.claim == Some(claim) {
                        c.claim = None;
                    }
                }
            }
        }
    }
}

impl Drop for ProbeLease {
    fn drop(&mut self) {
        if !self.resolved {
            self.release();
        }
    }
}
