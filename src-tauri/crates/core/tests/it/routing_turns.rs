//! Turn-level tests through the planner: a small driver plays the engine's attempt loop
//! (eligibility → selection → binding → attempt → circuit → plan) against scripted answers,
//! to check stickiness, failover before commit, none after, and the attempt bounds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fixture::{basis, criteria, pool, NOW};
use switchyard_core::routing::{
    plan_next, select_for_turn, CircuitBoard, Eligibility, Failure, FailureKind, GiveUp, Plan, PlanInput, ProfileView,
    Scope, SelectionReason, Strategy, Swrr, TurnBindings, DEFAULT_MAX_ATTEMPTS,
};

const M: &str = "m";

/// What the fake provider answers to one attempt.
#[derive(Clone, Copy)]
enum Answer {
    Ok,
    FailBeforeOutput(Failure),
    FailAfterOutput(Failure),
}

struct World {
    profiles: Vec<ProfileView>,
    board: Arc<CircuitBoard>,
    swrr: Swrr,
    bindings: TurnBindings,
    eligibility: Eligibility,
    t0: Instant,
}

/// The attempts of one request (profile id, reason) and how it ended.
struct Request {
    attempts: Vec<(String, SelectionReason)>,
    /// `None`: an attempt succeeded and was delivered; else the planner's last decision.
    end: Option<Plan>,
}

impl World {
    fn new(n: usize) -> Self {
        World {
            profiles: pool(n, &[M]),
            board: Arc::new(CircuitBoard::default()),
            swrr: Swrr::default(),
            bindings: TurnBindings::default(),
            eligibility: Eligibility::default(),
            t0: Instant::now(),
        }
    }

    fn eligible_ids(&mut self) -> Vec<String> {
        let b = basis();
        self.eligibility.evaluate(&self.profiles, M, &criteria(&b), &self.board.view());
        self.eligibility.eligible().iter().map(|&i| self.profiles[i].id.clone()).collect()
    }

    fn request(&mut self, turn: &str, answer: &mut dyn FnMut(&str) -> Answer) -> Request {
        let now = self.t0;
        let eligible_count = self.eligible_ids().len();
        let bound = self.bindings.get(turn, now).map(|b| b.profile_id.clone());
        let sel = select_for_turn(
            Strategy::Balanced,
            bound.as_deref(),
            &self.profiles,
            self.eligibility.eligible(),
            &mut self.swrr,
        );
        let Some(sel) = sel else {
            return Request {
                attempts: vec![],
                end: Some(Plan::GiveUp(GiveUp::NoAlternative { kind: FailureKind::Unknown })),
            };
        };
        let mut current = self.profiles[sel.index].id.clone();
        let mut reason = sel.reason;
        self.bindings.bind(turn, &current, now);
        let (mut attempts, mut same_retries, mut log) = (0u32, 0u32, Vec::new());
        loop {
            attempts += 1;
            log.push((current.clone(), reason));
            let failure = match answer(&current) {
                Answer::Ok => {
                    self.bindings.commit(turn, now);
                    return Request { attempts: log, end: None };
                }
                Answer::FailBeforeOutput(f) => f,
                Answer::FailAfterOutput(f) => {
                    self.bindings.commit(turn, now);
                    f
                }
            };
            let _ = self.board.record_failure(&current, M, &failure, NOW);
            let tried: Vec<&str> = log.iter().map(|(p, _)| p.as_str()).collect();
            let alternatives_owned: Vec<String> =
                self.eligible_ids().into_iter().filter(|p| !tried.contains(&p.as_str())).collect();
            let alternatives: Vec<&str> = alternatives_owned.iter().map(String::as_str).collect();
            let committed = self.bindings.peek(turn, now).is_some_and(|b| b.committed);
            let plan = plan_next(&PlanInput {
                failure,
                committed,
                attempts,
                same_retries,
                max_attempts: DEFAULT_MAX_ATTEMPTS,
                eligible_count,
                alternatives: &alternatives,
            });
            match plan {
                Plan::FailoverTo(next, why) => {
                    assert!(
                        self.bindings.rebind(turn, &next, now).is_ok(),
                        "the planner only fails over turns that are not committed"
                    );
                    current = next;
                    reason = why;
                }
                Plan::RetrySame => same_retries += 1,
                end => return Request { attempts: log, end: Some(end) },
            }
        }
    }

    fn later(&mut self, mins: u64) {
        self.t0 += Duration::from_secs(mins * 60);
    }
}

fn rate_limited() -> Failure {
    Failure::new(FailureKind::RateLimited, Scope::Credential)
}

#[test]
fn a_turn_sticks_to_its_profile_while_fresh_turns_rotate() {
    let mut w = World::new(2);
    let first = w.request("turn-1", &mut |_| Answer::Ok);
    let tool_loop: Vec<Request> = (0..3).map(|_| w.request("turn-1", &mut |_| Answer::Ok)).collect();
    for r in &tool_loop {
        assert_eq!(
            r.attempts,
            vec![(first.attempts[0].0.clone(), SelectionReason::Sticky)],
            "every call of a turn (tool loop) uses the turn's binding"
        );
    }
    let second = w.request("turn-2", &mut |_| Answer::Ok);
    assert_ne!(
        second.attempts[0].0, first.attempts[0].0,
        "sticky calls do not advance SWRR: the next fresh turn goes to the other profile"
    );
    assert_eq!(second.attempts[0].1, SelectionReason::Swrr, "fresh turns are SWRR picks");
}

#[test]
fn failover_before_output_rebinds_the_turn() {
    let mut w = World::new(3);
    let r = w.request("t", &mut |p| {
        if p == "p00" {
            Answer::FailBeforeOutput(rate_limited())
        } else {
            Answer::Ok
        }
    });
    assert_eq!(r.end, None, "the second profile answered (delivered, no plan needed)");
    assert_eq!(
        r.attempts,
        vec![
            ("p00".to_string(), SelectionReason::Swrr),
            ("p01".to_string(), SelectionReason::Failover(FailureKind::RateLimited)),
        ],
        "a credential-scoped failure before output moves the turn, recorded as failover:<kind>"
    );
    let next = w.request("t", &mut |_| Answer::Ok);
    assert_eq!(
        next.attempts,
        vec![("p01".to_string(), SelectionReason::Sticky)],
        "the turn stays on the profile it failed over to"
    );
}

#[test]
fn no_failover_after_output() {
    let mut w = World::new(3);
    let r = w.request("t", &mut |_| Answer::FailAfterOutput(rate_limited()));
    assert_eq!(r.attempts.len(), 1, "an error after the first content byte is not retried elsewhere");
    assert_eq!(
        r.end,
        Some(Plan::GiveUp(GiveUp::Committed { kind: FailureKind::RateLimited })),
        "the error is delivered to the client in-stream"
    );

    let mut w = World::new(3);
    let ok = w.request("t", &mut |_| Answer::Ok);
    let later = w.request("t", &mut |_| Answer::FailBeforeOutput(rate_limited()));
    assert_eq!(
        later.attempts,
        vec![(ok.attempts[0].0.clone(), SelectionReason::Sticky)],
        "a committed turn's next call tries only its binding"
    );
    assert!(
        matches!(later.end, Some(Plan::GiveUp(GiveUp::Committed { .. }))),
        "no credential failover in a committed turn"
    );
}

#[test]
fn attempts_are_bounded() {
    let mut w = World::new(5);
    let r = w.request("t", &mut |_| Answer::FailBeforeOutput(rate_limited()));
    assert_eq!(r.attempts.len(), DEFAULT_MAX_ATTEMPTS as usize, "at most max_attempts physical attempts");
    assert!(matches!(r.end, Some(Plan::GiveUp(GiveUp::AttemptsExhausted { .. }))), "then it gives up");

    let mut w = World::new(1);
    let overloaded = Failure::new(FailureKind::Overloaded, Scope::Provider);
    let r = w.request("t", &mut |_| Answer::FailBeforeOutput(overloaded));
    assert_eq!(
        r.attempts.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["p00", "p00"],
        "an overloaded provider is retried once on the same profile, never more"
    );

    let mut w = World::new(2);
    let forbidden = Failure::new(FailureKind::PermissionAmbiguous, Scope::Ambiguous);
    let r = w.request("t", &mut |_| Answer::FailBeforeOutput(forbidden));
    assert_eq!(r.attempts.len(), 1, "an ambiguous 403 never causes failover");
}

#[test]
fn an_ineligible_binding_is_replaced_and_an_idle_turn_starts_over() {
    let mut w = World::new(2);
    let first = w.request("t", &mut |_| Answer::Ok);
    let bound = first.attempts[0].0.clone();
    let _ = w.board.record_failure(&bound, M, &rate_limited(), NOW);
    let next = w.request("t", &mut |_| Answer::Ok);
    assert_ne!(next.attempts[0].0, bound, "a binding is used only while its profile stays eligible");
    assert_eq!(next.attempts[0].1, SelectionReason::Swrr, "the replacement is a fresh pick");

    w.later(31);
    assert!(w.bindings.peek("t", w.t0).is_none(), "after 30 idle minutes the binding is gone");
}
