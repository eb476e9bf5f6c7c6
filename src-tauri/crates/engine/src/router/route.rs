//! The one routing loop (docs/design.md, "The request path"): for each physical attempt,
//! choose the profile (pinned login, legacy primary, sticky binding, SWRR or priority,
//! failover, probe) with its admission and lease, let the transport make the HTTP call, take
//! what it learned (`Reply`: outcome and facts), settle the circuits, plan the next step and
//! record the attempt — exactly once, through a [`Recording`] guard that writes on completion,
//! failure or drop. The relay only does HTTP: it builds one [`RouteRequest`], implements
//! [`Transport`] and turns [`Routed`] into a response. What kind of request it is — pinned,
//! legacy, routed, with or without hops — is the run's [`Policy`](super::policy::Policy),
//! decided once; the loop only asks it.

use std::sync::Arc;

use switchyard_core::routing::{Failure, FailureKind, Plan, Scope};

use crate::error::EngineError;
use crate::router::attempt::Attempt;
use crate::router::login::{refused_token, AfterRefusal};
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::request::RouteRequest;
use crate::router::run::Start;
use crate::router::state::RoutingState;
use crate::router::transport::{AttemptFacts, Outcome, Target, Transport};
use crate::router::{NextAttempt, Recording, RequestRun, Router};

/// Which attempt produced what the client gets (outside legacy mode it is told in headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The connection that served (a fallback hop's slug when the request fell back).
    pub connection: String,
    pub connection_id: String,
    pub profile_id: String,
    pub attempts: u32,
    pub reason: String,
    pub legacy: bool,
}

/// How a request ended.
// One value per request, moved once into the response: boxing the recording buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Routed<D, K> {
    /// An attempt succeeded: deliver `body`; `recording` writes its ledger row when dropped.
    Delivered { body: D, recording: Recording, route: Route },
    /// Every attempt failed; deliver the last kept error answer as it is.
    Kept { kept: K, route: Route },
    /// The last attempt got no answer (network, timeout) and nothing was kept. `timed_out`:
    /// no response head came within the first-byte timeout.
    NoAnswer { failure: Failure, route: Route, timed_out: bool },
    /// The request cannot be served now (503, or 429 when all are cooling down; 413 for a body
    /// over the limit), and why.
    /// `limit`: the limit a limit refusal names (`x-switchyard-reason: limit:<id>`).
    Unavailable { status: u16, retry_after_secs: Option<u64>, message: String, why: Refusal, limit: Option<String> },
}

impl Router {
    /// Routes one request through `transport` until an attempt succeeds, the planner gives
    /// up, or nothing is eligible.
    pub async fn route<T: Transport>(
        self: &Arc<Self>,
        request: RouteRequest,
        transport: &T,
    ) -> Result<Routed<T::Delivered, T::Kept>, EngineError> {
        let mut run = match self.start_run(request).await? {
            Start::Run(run) => run,
            Start::Refused(refused) => return Ok(routed(refused)),
        };
        let routed = self.run_loop(&mut run, transport).await;
        if let Ok(r) = &routed {
            self.tell_end(&run, r);
        }
        routed
    }

    /// The loop of [`Router::route`] over a started run.
    async fn run_loop<T: Transport>(
        self: &Arc<Self>,
        run: &mut RequestRun,
        transport: &T,
    ) -> Result<Routed<T::Delivered, T::Kept>, EngineError> {
        // The paths a delivered answer never takes (a fallback hop, an owned login's renewal)
        // are boxed: their futures are kilobytes, and this loop's future would be sized by them
        // (and with it the request's, which hyper keeps per connection).
        let mut kept: Option<(T::Kept, Route)> = None;
        // An owned login's retry after a 401 renewed it (`router/login.rs`): no selection.
        let mut renewed: Option<Attempt> = None;
        // An owned login this request found expired (or moved) after its 401: the relay's own
        // answer replaces the provider's bare 401 if that is what the client would get.
        let mut unusable: Option<(String, Unavailable)> = None;
        loop {
            let next = match renewed.take() {
                Some(a) => NextAttempt::Go(a),
                None => self.next_attempt(run).await?,
            };
            let mut attempt = match next {
                NextAttempt::Go(a) => a,
                NextAttempt::Unavailable(refused) => {
                    if Box::pin(self.fall_back_unavailable(run)).await? {
                        continue;
                    }
                    return Ok(last_answer(run, kept, unusable, routed(refused)));
                }
            };
            let route = Route {
                connection: run.snapshot.slug.clone(),
                connection_id: run.snapshot.connection_id.clone(),
                profile_id: attempt.profile_id.clone(),
                attempts: run.attempts(),
                reason: run.hops.take_fresh().unwrap_or_else(|| attempt.reason.text()),
                legacy: run.policy.answers_as_legacy(&run.hops),
            };
            let mut recording = Recording::start(self, run, &attempt, route.reason.clone());
            let reply = transport.attempt(target(run, &attempt, self.engine.now_system())).await;
            let too_large = reply.facts.body_too_large;
            let timed_out = self.learn(run, &attempt, &mut recording, reply.facts, &route);
            let (failure, kept_now) = match reply.outcome {
                Outcome::Deliver { status, ttfb_ms, body } if too_large => {
                    recording.report.status = Some(status);
                    recording.report.ttfb_ms = ttfb_ms;
                    drop(body);
                    recording.finish();
                    return Ok(body_too_large());
                }
                Outcome::Deliver { status, ttfb_ms, body } => {
                    self.attempt_succeeded(&mut attempt).await;
                    if run.policy.commits() {
                        self.commit(run);
                    }
                    if let Some(pool) = run.hops.pool() {
                        self.pool_delivered(pool).await;
                    }
                    recording.report.status = Some(status);
                    recording.report.ttfb_ms = ttfb_ms;
                    recording.hold(run.ticket.take());
                    recording.ends_request();
                    return Ok(Routed::Delivered { body, recording, route });
                }
                Outcome::Failed { failure, status, ttfb_ms, kept } => {
                    recording.report.status = status;
                    recording.report.ttfb_ms = ttfb_ms;
                    recording.report.failure = Some(failure);
                    (failure, kept)
                }
            };
            recording.finish();
            if too_large {
                return Ok(body_too_large());
            }
            run.failed = Some(failure.kind);
            let mut failure = failure;
            if refused_token(failure.kind, &attempt) {
                match Box::pin(self.renewed_attempt(run, &mut attempt)).await {
                    AfterRefusal::Retry(next) => {
                        if let Some(k) = kept_now {
                            kept = Some((k, route.clone()));
                        }
                        renewed = Some(*next);
                        continue;
                    }
                    AfterRefusal::CoolUntil(until) => {
                        failure = Failure::new(FailureKind::RateLimited, Scope::Credential).with_retry_at(until);
                    }
                    AfterRefusal::Unusable(why) => {
                        let snap = &run.snapshot;
                        let index = snap.profiles.iter().position(|p| p.id == attempt.profile_id);
                        unusable = index.map(|i| (attempt.profile_id.clone(), self.login_unavailable(snap, i, &why)));
                    }
                    AfterRefusal::Settle => {}
                }
            }
            let plan = self.attempt_failed(run, &mut attempt, failure).await;
            if let Some(k) = kept_now {
                kept = Some((k, route.clone()));
            }
            if matches!(plan, Plan::FailoverTo(..) | Plan::RetrySame) {
                continue;
            }
            if Box::pin(self.fall_back_after(run, failure, &plan)).await? {
                continue;
            }
            return Ok(last_answer(run, kept, unusable, Routed::NoAnswer { failure, route, timed_out }));
        }
    }

    /// Takes what an attempt learned besides its outcome: the model read late (into the run
    /// and the row), dropped account state (into the row), quota readings (onto the board),
    /// a Responses id (remembered with its profile). Returns whether it timed out.
    fn learn(
        &self,
        run: &mut RequestRun,
        attempt: &Attempt,
        recording: &mut Recording,
        facts: AttemptFacts,
        route: &Route,
    ) -> bool {
        if run.model.is_none() && facts.late_model.is_some() {
            run.model = facts.late_model;
            recording.set_model(run.model.as_deref());
        }
        if attempt.strip_account_state && facts.dropped_account_state {
            recording.mark_dropped_account_state();
        }
        if !facts.quota.is_empty() {
            self.quota.record(&attempt.profile_id, run.model.as_deref(), facts.quota, self.engine.now_ms());
        }
        recording.report.reference_cost_usd = facts.reference_cost_usd;
        if let Some(id) = facts.response_id {
            let (now, now_ms) = (self.engine.monotonic(), self.engine.now_ms());
            self.state.remember_origin(&route.connection_id, &id, &attempt.profile_id, now, now_ms);
        }
        facts.timed_out
    }
}

/// What the client gets when no attempt is left: the last kept answer — unless it is the
/// provider's refusal of an owned login this request found unusable (expired, endpoints moved),
/// which says nothing of why or what to run: the relay's own answer says both. `otherwise` when
/// nothing was kept.
fn last_answer<D, K>(
    run: &RequestRun,
    kept: Option<(K, Route)>,
    unusable: Option<(String, Unavailable)>,
    otherwise: Routed<D, K>,
) -> Routed<D, K> {
    match (kept, unusable) {
        (Some((_, route)), Some((profile, refused))) if route.profile_id == profile => routed(refused),
        (Some((kept, route)), _) => Routed::Kept { kept, route: Route { attempts: run.attempts(), ..route } },
        (None, _) => otherwise,
    }
}

/// The refusal as the loop's result.
fn routed<D, K>(refused: Unavailable) -> Routed<D, K> {
    let Unavailable { status, retry_after_secs, message, why, limit } = refused;
    Routed::Unavailable { status, retry_after_secs, message, why, limit }
}

/// 413: a forwarded body went over the relay's limit while it streamed upstream.
fn body_too_large<D, K>() -> Routed<D, K> {
    let message = "the request body is over the relay's limit".to_string();
    routed(Unavailable::new(Refusal::BodyTooLarge, 413, None, message))
}

/// The transport's view of `attempt`: every rule decided (which model name goes upstream,
/// pass-through or not, whether account-bound items go, how it authenticates and where it goes
/// when not to the connection's base URL), and the engine clock's time. A request naming its
/// profile passes through: nothing in it is changed.
fn target<'a>(run: &'a RequestRun, attempt: &'a Attempt, now: std::time::SystemTime) -> Target<'a> {
    let pass_through = run.policy.passes_through(&run.hops);
    let model = run.model.as_deref();
    let upstream_model = if pass_through { model } else { model.map(|m| run.snapshot.upstream_model(m)) };
    Target {
        snapshot: &run.snapshot,
        profile_id: &attempt.profile_id,
        secret: &attempt.secret,
        number: attempt.number,
        pass_through,
        model,
        upstream_model,
        strip_account_state: attempt.strip_account_state,
        now,
        cli: attempt.cli.then(|| run.snapshot.cli_target(&attempt.profile_id)).flatten(),
        credential: attempt.credential,
        base_url: attempt.base_url.as_deref(),
        account_id: attempt.login.as_ref().and_then(|l| l.account_id.as_deref()),
    }
}
