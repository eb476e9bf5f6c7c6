//! Settling one attempt (`route.rs` runs it after the transport answered): a success closes
//! a probe's circuits and commits the turn; a classified failure updates the circuits and the
//! planner says what comes next (fail over, retry the same profile once, give up).

use switchyard_core::routing::{plan_next, Failure, Plan, PlanInput, SelectionReason, DEFAULT_MAX_ATTEMPTS};

use crate::router::attempt::Attempt;
use crate::router::run::{NextStep, RequestRun};
use crate::router::state::RoutingState;
use crate::router::Router;

impl Router {
    /// The attempt was answered successfully (before any output was sent): close its
    /// circuits if it was a probe.
    pub(crate) async fn attempt_succeeded(&self, attempt: &mut Attempt) {
        if let Some(probe) = attempt.probe.take() {
            for snap in probe.lease.succeed() {
                // Boxed (a store write, kilobytes of future): only a probe's answer comes here.
                if let Err(e) = Box::pin(self.engine.persist_circuit(&snap)).await {
                    tracing::warn!(code = e.code().as_str(), "closed circuit not persisted");
                }
            }
        }
    }

    /// The attempt failed with a classified failure: update its circuits and plan the next step.
    pub(crate) async fn attempt_failed(&self, run: &mut RequestRun, attempt: &mut Attempt, failure: Failure) -> Plan {
        let model = run.model.clone().unwrap_or_default();
        // A pinned request's failure is the login's only when the client's credential is the
        // login's own (its official CLI run by `exec`); a stranger's refused credential holds
        // nothing against it (its probe lease goes back unsettled).
        let held = match run.policy.client_credential() {
            None => true,
            Some(pin) => self.engine.is_login_credential(&attempt.profile_id, &pin.credential).await,
        };
        match attempt.probe.take() {
            _ if !held => {
                tracing::info!(kind = %failure.kind, "a pinned request's own credential was refused; the login is not held to it");
            }
            Some(probe) => {
                for snap in probe.lease.fail(&failure, self.engine.now_ms()) {
                    if let Err(e) = Box::pin(self.engine.persist_circuit(&snap)).await {
                        tracing::warn!(code = e.code().as_str(), "probe circuit not persisted");
                    }
                }
            }
            None => {
                // Boxed, as every store write here: it would size the request's future.
                if let Err(e) = Box::pin(self.engine.record_failure(&attempt.profile_id, &model, &failure)).await {
                    tracing::warn!(code = e.code().as_str(), "failure not written to the circuit board's store");
                }
            }
        }
        // Legacy makes one attempt; so does a request naming its profile (no other account).
        if run.policy.makes_one_attempt() {
            return Plan::GiveUp(switchyard_core::routing::GiveUp::NotRetryable {
                kind: failure.kind,
                scope: failure.scope,
            });
        }
        let alternatives = self.alternatives(run);
        let alternatives: Vec<&str> = alternatives.iter().map(String::as_str).collect();
        let plan = plan_next(&PlanInput {
            failure,
            committed: run.committed,
            attempts: run.counts.on_connection(),
            same_retries: run.counts.same_retries,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            eligible_count: run.counts.eligible_at_start.unwrap_or(0),
            alternatives: &alternatives,
        });
        match &plan {
            Plan::FailoverTo(id, SelectionReason::Failover(kind)) => run.next = NextStep::Failover(*kind, id.clone()),
            Plan::FailoverTo(id, _) => run.next = NextStep::Failover(failure.kind, id.clone()),
            Plan::RetrySame => {
                run.counts.same_retries += 1;
                run.next = NextStep::RetrySame(attempt.profile_id.clone(), attempt.reason);
            }
            Plan::GiveUp(_) => {}
        }
        plan
    }

    /// Output of this turn reached the client: no more credential failover in this turn.
    pub(crate) fn commit(&self, run: &mut RequestRun) {
        run.committed = true;
        self.state.commit(&run.keys.turn, self.engine.monotonic());
    }
}
