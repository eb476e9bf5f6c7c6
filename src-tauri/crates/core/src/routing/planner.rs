//! The attempt planner: after a failed physical attempt of a request, decide whether to fail
//! over to another profile, retry the same profile once, or give up (invariants 6, 9, 10).
//! A success needs no plan: it is delivered.

use serde::Serialize;

use super::failure::{Failure, FailureKind, Scope};
use super::selection::SelectionReason;

/// Default bound on physical attempts per request.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Everything the planner decides from.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// How the attempt just made failed.
    pub failure: Failure,
    /// Output of this turn already reached the client.
    pub committed: bool,
    /// Physical attempts made for this request so far, the one just finished included.
    pub attempts: u32,
    /// `RetrySame` decisions already taken for this request.
    pub same_retries: u32,
    /// Usually `DEFAULT_MAX_ATTEMPTS`.
    pub max_attempts: u32,
    /// Eligible profiles when the request started (bounds attempts to this + 1).
    pub eligible_count: usize,
    /// Eligible profiles not yet tried in this request, most preferred first (for balanced
    /// routing the next SWRR pick, for priority routing in priority order).
    pub alternatives: &'a [&'a str],
}

/// Why the planner stopped; the relay then delivers the last upstream answer as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum GiveUp {
    /// The failure came after output reached the client: deliver it in-stream.
    Committed { kind: FailureKind },
    /// Provider, request or ambiguous scope (or a transient retry already spent).
    NotRetryable { kind: FailureKind, scope: Scope },
    /// Credential-scoped, but no other profile is eligible.
    NoAlternative { kind: FailureKind },
    /// `max_attempts` or eligible count + 1 reached.
    AttemptsExhausted { kind: FailureKind },
}

/// The next step of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Rebind the turn to this profile id (the first alternative) and attempt again.
    FailoverTo(String, SelectionReason),
    /// Attempt again on the same profile (once, transient provider trouble only).
    RetrySame,
    GiveUp(GiveUp),
}

/// The attempt bound of a request: `min(max_attempts, eligible_count + 1)`, at least 1.
pub fn attempt_limit(max_attempts: u32, eligible_count: usize) -> u32 {
    let by_eligible = u32::try_from(eligible_count).unwrap_or(u32::MAX).saturating_add(1);
    max_attempts.min(by_eligible).max(1)
}

/// Decides the next step after a failure. Order: any failure after commit gives up; the
/// attempt bound gives up; credential scopes fail over to the first alternative; transient
/// provider failures retry the same profile once; everything else gives up.
pub fn plan_next(input: &PlanInput<'_>) -> Plan {
    let failure = input.failure;
    let kind = failure.kind;
    if input.committed {
        return Plan::GiveUp(GiveUp::Committed { kind });
    }
    if input.attempts >= attempt_limit(input.max_attempts, input.eligible_count) {
        return Plan::GiveUp(GiveUp::AttemptsExhausted { kind });
    }
    if failure.scope.allows_failover() {
        return match input.alternatives.first() {
            Some(next) => Plan::FailoverTo(next.to_string(), SelectionReason::Failover(kind)),
            None => Plan::GiveUp(GiveUp::NoAlternative { kind }),
        };
    }
    if failure.scope == Scope::Provider && kind.is_transient() && input.same_retries == 0 {
        return Plan::RetrySame;
    }
    Plan::GiveUp(GiveUp::NotRetryable { kind, scope: failure.scope })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(failure: Failure, attempts: u32, alternatives: &'static [&'static str]) -> PlanInput<'static> {
        PlanInput {
            failure,
            committed: false,
            attempts,
            same_retries: 0,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            eligible_count: 3,
            alternatives,
        }
    }

    fn fail(kind: FailureKind, scope: Scope) -> Failure {
        Failure::new(kind, scope)
    }

    #[test]
    fn only_credential_scopes_fail_over() {
        for scope in Scope::ALL {
            let plan = plan_next(&input(fail(FailureKind::RateLimited, scope), 1, &["b"]));
            let moved = matches!(plan, Plan::FailoverTo(..));
            assert_eq!(
                moved,
                scope.allows_failover(),
                "scope {scope} must {}fail over",
                if scope.allows_failover() { "" } else { "not " }
            );
        }
    }

    #[test]
    fn transient_provider_failures_retry_the_same_profile_once() {
        let mut i = input(fail(FailureKind::Overloaded, Scope::Provider), 1, &["b"]);
        assert_eq!(plan_next(&i), Plan::RetrySame, "an overload may be retried once");
        i.same_retries = 1;
        i.attempts = 2;
        assert_eq!(
            plan_next(&i),
            Plan::GiveUp(GiveUp::NotRetryable { kind: FailureKind::Overloaded, scope: Scope::Provider }),
            "never a second same-profile retry"
        );
        let bad = input(fail(FailureKind::BadRequest, Scope::Request), 1, &["b"]);
        assert!(
            matches!(plan_next(&bad), Plan::GiveUp(GiveUp::NotRetryable { .. })),
            "request errors are passed through, not retried"
        );
    }

    #[test]
    fn attempts_are_bounded_by_max_and_eligible_count() {
        assert_eq!(attempt_limit(3, 1), 2, "one eligible profile: the attempt plus one retry");
        assert_eq!(attempt_limit(3, 8), 3, "max_attempts caps large pools");
        assert_eq!(attempt_limit(0, 0), 1, "the first attempt always happens");
        let i = input(fail(FailureKind::RateLimited, Scope::Credential), 3, &["c"]);
        assert_eq!(
            plan_next(&i),
            Plan::GiveUp(GiveUp::AttemptsExhausted { kind: FailureKind::RateLimited }),
            "a third failed attempt ends the request even with alternatives left"
        );
    }
}
