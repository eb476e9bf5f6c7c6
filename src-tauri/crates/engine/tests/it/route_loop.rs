//! The engine's one routing loop (`Router::route`) driven by a scripted fake transport (issue
//! 13): one test per planner branch — deliver, retry the same profile once, fail over, give
//! up, probe success and failure, abort mid-attempt, committed stream error — each asserting
//! the ledger rows written: exactly one per physical attempt. And what an attempt learned
//! besides its outcome (issue 26: the `Reply`'s facts) — a Responses id remembered through the
//! loop, a late model in the row, dropped account state marked, quota readings on the board, a
//! timeout told apart. A manual clock steps time; the memory vault holds the keys (the
//! keychain is not what these test).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::ManualClock;
use switchyard_core::routing::{Failure, FailureKind, Scope};
use switchyard_engine::{
    AttemptFacts, AttemptView, Engine, NewConnection, NewProfile, Reply, RequestKeys, RouteRequest, Routed, Router,
    Secret, Target, Transport,
};
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One scripted answer.
#[derive(Debug, Clone, Copy)]
enum Step {
    Ok,
    /// Fails with this failure; `kept`: an error answer with this status.
    Fail(Failure, Option<u16>),
    /// Never answers (the caller drops the request).
    Hang,
}

/// Plays the steps in order (each with the facts queued for it, if any) and notes which
/// profile each attempt went to and whether it was asked to drop account-bound state.
#[derive(Default)]
struct Script {
    steps: Mutex<VecDeque<Step>>,
    facts: Mutex<VecDeque<AttemptFacts>>,
    targets: Mutex<Vec<String>>,
    strips: Mutex<Vec<bool>>,
}

impl Script {
    fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Script { steps: Mutex::new(steps.into_iter().collect()), ..Script::default() }
    }

    /// The attempts' facts, in order (attempts past the list learn nothing).
    fn learning(self, facts: impl IntoIterator<Item = AttemptFacts>) -> Self {
        Script { facts: Mutex::new(facts.into_iter().collect()), ..self }
    }

    fn targets(&self) -> Vec<String> {
        self.targets.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn strips(&self) -> Vec<bool> {
        self.strips.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

impl Transport for Script {
    type Delivered = &'static str;
    type Kept = u16;

    fn attempt(&self, target: Target<'_>) -> impl Future<Output = Reply<&'static str, u16>> + Send {
        if let Ok(mut t) = self.targets.lock() {
            t.push(target.profile_id.to_string());
        }
        if let Ok(mut s) = self.strips.lock() {
            s.push(target.strip_account_state);
        }
        let step = self.steps.lock().ok().and_then(|mut s| s.pop_front()).unwrap_or(Step::Ok);
        let facts = self.facts.lock().ok().and_then(|mut f| f.pop_front()).unwrap_or_default();
        async move {
            let reply = match step {
                Step::Ok => Reply::deliver(200, Some(1), "answer"),
                Step::Fail(failure, kept) => Reply::failed(failure, kept, Some(1), kept),
                Step::Hang => std::future::pending().await,
            };
            reply.with(facts)
        }
    }
}

fn rate_limited() -> Failure {
    Failure::new(FailureKind::RateLimited, Scope::Credential)
}

struct World {
    _mock: MockProvider,
    _dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    router: Arc<Router>,
}

/// A connection `c` with `keys` (labels a, b, …) verified against the mock, in `mode`.
async fn world(keys: usize, mode: &str) -> Result<World, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock(AtomicI64::new(1_800_000_000_000)));
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let labels = ["a", "b", "c"];
    for label in &labels[..keys] {
        mock.set_key(&format!("sk-{label}"), KeyScript::new(["m1"]));
    }
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(Secret::new("sk-a"))).await?;
    engine
        .profile_edit("c", "primary", switchyard_engine::ProfileEdit { label: Some("a".into()), ..Default::default() })
        .await?;
    for (i, label) in labels[1..keys].iter().enumerate() {
        let p = NewProfile { label: (*label).into(), weight: Some(1), priority: Some(i64::try_from(i)? + 1) };
        engine.profile_add("c", p, Secret::new(format!("sk-{label}"))).await?;
    }
    engine.verify("c", None, false, &|_| {}).await?;
    engine.routing_activate("c", mode.parse()?, "test").await?;
    let router = Arc::new(Router::start(engine.clone()));
    Ok(World { _mock: mock, _dir: dir, clock, engine, router })
}

impl World {
    async fn route(
        &self,
        turn: &str,
        script: &Script,
    ) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        self.route_request(self.request(turn).await?, script).await
    }

    /// A request for `m1` in turn `turn`, to change before routing it.
    async fn request(&self, turn: &str) -> Result<RouteRequest, Box<dyn std::error::Error>> {
        Ok(RouteRequest::new(self.router.snapshot("c").await?, Some("m1"), RequestKeys::turn(turn)))
    }

    async fn route_request(
        &self,
        request: RouteRequest,
        script: &Script,
    ) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        Ok(self.router.route(request, script).await?)
    }

    /// The ledger, oldest first, after the writer flushed.
    async fn ledger(&self) -> Result<Vec<AttemptView>, Box<dyn std::error::Error>> {
        self.router.flush().await;
        let mut rows = self.engine.attempts("c", 100).await?;
        rows.reverse();
        Ok(rows)
    }

    fn later(&self, ms: i64) {
        self.clock.0.fetch_add(ms, Ordering::SeqCst);
    }
}

fn reasons(rows: &[AttemptView]) -> Vec<String> {
    rows.iter().map(|r| r.reason.clone()).collect()
}

#[tokio::test]
async fn a_success_is_delivered_and_recorded_once_when_its_recording_is_dropped() -> TestResult {
    let w = world(2, "balanced").await?;
    let routed = w.route("t1", &Script::new([Step::Ok])).await?;
    let Routed::Delivered { body, mut recording, route } = routed else { panic!("delivered: {routed:?}") };
    assert_eq!((body, route.attempts, route.reason.as_str()), ("answer", 1, "swrr"), "a fresh turn is an SWRR pick");
    recording.set_usage(switchyard_providers::usage::Usage {
        input_tokens: Some(10),
        output_tokens: Some(3),
        cache_read_tokens: Some(7),
        cache_write_tokens: None,
    });
    assert!(w.ledger().await?.is_empty(), "nothing is written while the answer is still being delivered");
    drop(recording);
    let rows = w.ledger().await?;
    assert_eq!(rows.len(), 1, "exactly one row for one physical attempt");
    assert_eq!(
        (rows[0].status, rows[0].input_tokens, rows[0].output_tokens),
        (Some(200), Some(10), Some(3)),
        "with usage"
    );
    assert_eq!(
        (rows[0].cache_read_tokens, rows[0].cache_write_tokens),
        (Some(7), None),
        "the prompt-cache counts reach the ledger as reported (unknown stays unknown)"
    );
    Ok(())
}

#[tokio::test]
async fn transient_provider_trouble_retries_the_same_profile_once() -> TestResult {
    let w = world(2, "balanced").await?;
    let overloaded = Failure::new(FailureKind::Overloaded, Scope::Provider);
    let script = Script::new([Step::Fail(overloaded, Some(529)), Step::Ok]);
    let routed = w.route("t1", &script).await?;
    assert!(matches!(routed, Routed::Delivered { .. }), "the retry succeeded");
    drop(routed);
    let t = script.targets();
    assert_eq!(t.len(), 2, "two physical attempts");
    assert_eq!(t[0], t[1], "both on the same profile");
    let rows = w.ledger().await?;
    assert_eq!(reasons(&rows), ["swrr", "swrr"], "one row each, the retry keeps its selection reason");
    assert_eq!(rows[0].failure_kind.as_deref(), Some("overloaded"), "the first records the failure");

    let script = Script::new([Step::Fail(overloaded, Some(529)), Step::Fail(overloaded, Some(529))]);
    let routed = w.route("t2", &script).await?;
    let Routed::Kept { kept, route } = routed else { panic!("the provider's answer is delivered: {routed:?}") };
    assert_eq!((kept, route.attempts), (529, 2), "never a second same-profile retry");
    assert_eq!(w.ledger().await?.len(), 4, "two more rows, one per attempt");
    Ok(())
}

#[tokio::test]
async fn a_credential_failure_fails_over_to_the_planners_choice() -> TestResult {
    let w = world(3, "priority").await?;
    let script = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]);
    let routed = w.route("t1", &script).await?;
    let Routed::Delivered { route, recording, .. } = routed else { panic!("delivered after failover: {routed:?}") };
    drop(recording);
    assert_eq!(route.reason, "failover:rate_limited", "the second attempt is a failover");
    let t = script.targets();
    let status = w.engine.routing_status("c").await?;
    let by_priority: Vec<String> = ["a", "b"]
        .iter()
        .filter_map(|l| status.profiles.iter().find(|p| p.label == *l).map(|p| p.id.clone()))
        .collect();
    assert_eq!(t, by_priority, "priority order: the first, then the most preferred alternative");
    let rows = w.ledger().await?;
    assert_eq!(reasons(&rows), ["priority", "failover:rate_limited"], "one row per attempt");
    assert_eq!(rows[0].failure_kind.as_deref(), Some("rate_limited"), "the failed attempt's kind is recorded");
    Ok(())
}

#[tokio::test]
async fn request_and_ambiguous_failures_give_up_with_the_providers_answer() -> TestResult {
    let w = world(2, "balanced").await?;
    for (kind, scope, status) in
        [(FailureKind::BadRequest, Scope::Request, 400), (FailureKind::PermissionAmbiguous, Scope::Ambiguous, 403)]
    {
        let script = Script::new([Step::Fail(Failure::new(kind, scope), Some(status))]);
        let routed = w.route(&format!("t{status}"), &script).await?;
        let Routed::Kept { kept, route } = routed else { panic!("given up: {routed:?}") };
        assert_eq!((kept, route.attempts), (status, 1), "{kind:?} is passed through after one attempt");
    }
    let network = Script::new([Step::Fail(Failure::network(), None), Step::Fail(Failure::network(), None)]);
    let routed = w.route("tnet", &network).await?;
    assert!(matches!(routed, Routed::NoAnswer { .. }), "no answer at all: the relay says so itself: {routed:?}");
    assert_eq!(w.ledger().await?.len(), 4, "one row per physical attempt (the network failure was retried once)");
    Ok(())
}

#[tokio::test]
async fn after_the_cooldown_one_probe_closes_or_reopens_the_circuit() -> TestResult {
    let w = world(2, "priority").await?;
    // The first key fails and cools down; the turn fails over.
    let script = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]);
    drop(w.route("t1", &script).await?);
    let first = script.targets()[0].clone();
    w.later(31_000);
    // The cooldown ended: the next request on that key is the probe, and it fails again.
    let again = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]);
    drop(w.route("t2", &again).await?);
    assert_eq!(again.targets()[0], first, "the cooled key is tried first, as its probe");
    w.later(31_000);
    let not_yet = Script::new([Step::Ok]);
    drop(w.route("t3", &not_yet).await?);
    assert_ne!(not_yet.targets()[0], first, "a failed probe doubled the backoff: 31 s later it is still cooling");
    w.later(60_000);
    let probe = Script::new([Step::Ok]);
    drop(w.route("t4", &probe).await?);
    assert_eq!(probe.targets()[0], first, "after the doubled backoff the probe succeeds");
    let rows = w.ledger().await?;
    assert_eq!(
        reasons(&rows),
        ["priority", "failover:rate_limited", "probe", "failover:rate_limited", "priority", "probe"],
        "one row per attempt, probes named"
    );
    let closed = Script::new([Step::Ok]);
    drop(w.route("t5", &closed).await?);
    assert_eq!(closed.targets()[0], first, "the successful probe closed the circuit: priority order again");
    Ok(())
}

#[tokio::test]
async fn an_abandoned_probe_releases_its_claim_and_is_recorded_once() -> TestResult {
    let w = world(2, "priority").await?;
    drop(w.route("t1", &Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok])).await?);
    w.later(31_000);
    let hang = Script::new([Step::Hang]);
    let gone = tokio::time::timeout(Duration::from_millis(100), w.route("t2", &hang)).await;
    assert!(gone.is_err(), "the client left while the probe was in flight");
    let next = Script::new([Step::Ok]);
    let routed = w.route("t3", &next).await?;
    let Routed::Delivered { route, recording, .. } = routed else { panic!("served: {routed:?}") };
    drop(recording);
    assert_eq!(route.reason, "probe", "the abandoned probe released its claim: a new probe is admitted");
    let rows = w.ledger().await?;
    assert_eq!(rows.len(), 4, "the abandoned attempt is recorded once, like every other: {rows:?}");
    assert_eq!((rows[2].reason.as_str(), rows[2].status), ("probe", None), "without a status: no answer came");
    Ok(())
}

#[tokio::test]
async fn a_stream_error_after_output_is_recorded_and_the_turn_never_fails_over() -> TestResult {
    let w = world(2, "balanced").await?;
    let routed = w.route("t1", &Script::new([Step::Ok])).await?;
    let Routed::Delivered { mut recording, .. } = routed else { panic!("delivered: {routed:?}") };
    recording.set_failure(rate_limited());
    drop(recording);
    let later = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]);
    let routed = w.route("t1", &later).await?;
    assert!(matches!(routed, Routed::Kept { kept: 429, .. }), "a committed turn gives up on its binding: {routed:?}");
    assert_eq!(later.targets().len(), 1, "no credential failover in a committed turn");
    let rows = w.ledger().await?;
    assert_eq!(reasons(&rows), ["swrr", "sticky"], "one row per attempt");
    assert_eq!(
        rows[0].failure_kind.as_deref(),
        Some("rate_limited"),
        "the in-stream error is on the delivered attempt"
    );
    Ok(())
}

#[tokio::test]
async fn a_responses_id_learned_by_an_attempt_pins_the_request_that_continues_it() -> TestResult {
    let w = world(2, "balanced").await?;
    let learned = AttemptFacts { response_id: Some("resp_42".into()), ..AttemptFacts::default() };
    let first = Script::new([Step::Ok]).learning([learned]);
    drop(w.route("t1", &first).await?);
    let producer = first.targets()[0].clone();
    // SWRR over two equal keys would pick the other key for the next fresh turns.
    for turn in ["t2", "t3"] {
        let mut request = w.request(turn).await?;
        request.previous_response_id = Some("resp_42".into());
        let script = Script::new([Step::Ok]);
        let routed = w.route_request(request, &script).await?;
        let Routed::Delivered { route, .. } = routed else { panic!("delivered: {routed:?}") };
        assert_eq!(
            script.targets(),
            std::slice::from_ref(&producer),
            "{turn}: a continued response goes to its producer"
        );
        assert_eq!(route.reason, "continuity", "{turn}: and says why");
    }
    let mut unknown = w.request("t4").await?;
    unknown.previous_response_id = Some("resp_never_seen".into());
    let script = Script::new([Step::Ok]);
    let Routed::Delivered { route, .. } = w.route_request(unknown, &script).await? else { panic!("delivered") };
    assert_eq!(route.reason, "swrr", "an id the loop never learned routes normally");
    Ok(())
}

#[tokio::test]
async fn a_model_read_late_names_the_row_and_the_request() -> TestResult {
    let w = world(2, "balanced").await?;
    // Forwarding: the request names no model when it is sent; the transport reads it later.
    let request = RouteRequest::new(w.router.snapshot("c").await?, None, RequestKeys::turn("t1"));
    let learned = AttemptFacts { late_model: Some("m1".into()), ..AttemptFacts::default() };
    let script = Script::new([Step::Ok]).learning([learned]);
    let Routed::Delivered { route, recording, .. } = w.route_request(request, &script).await? else {
        panic!("delivered")
    };
    drop(recording);
    assert!(route.legacy, "a request without a model routes as legacy (one key, pass-through)");
    let rows = w.ledger().await?;
    assert_eq!(rows.len(), 1, "one attempt, one row");
    assert_eq!(rows[0].model.as_deref(), Some("m1"), "the model learned after the answer is in the row");
    assert_eq!(rows[0].reason, "legacy_primary", "legacy's one attempt");
    Ok(())
}

#[tokio::test]
async fn dropped_account_state_marks_only_the_attempt_that_was_asked_to_drop_it() -> TestResult {
    let w = world(2, "priority").await?;
    let dropped = || AttemptFacts { dropped_account_state: true, ..AttemptFacts::default() };
    // The first attempt claims a drop it was never asked for: the loop does not believe it.
    let script = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]).learning([dropped(), dropped()]);
    let Routed::Delivered { recording, .. } = w.route("t1", &script).await? else { panic!("delivered") };
    drop(recording);
    assert_eq!(script.strips(), [false, true], "only the failover leaves the request's own account");
    let rows = w.ledger().await?;
    let moved: Vec<Option<&str>> = rows.iter().map(|r| r.moved.as_deref()).collect();
    assert_eq!(moved, [None, Some("dropped_account_state")], "the failover attempt's row says what was dropped");
    Ok(())
}

#[tokio::test]
async fn quota_readings_an_attempt_learned_reach_the_board() -> TestResult {
    let w = world(2, "balanced").await?;
    assert_eq!(w.router.quota_board().len(), 0, "nothing read yet");
    let window = switchyard_providers::QuotaWindow {
        name: "requests",
        kind: switchyard_providers::WindowKind::Requests,
        per_model: true,
        family: None,
        claim: None,
        limit: Some(50),
        remaining: Some(0),
        utilization: None,
        resets_at_ms: Some(w.engine.now_ms() + 60_000),
        status: None,
        window_minutes: None,
    };
    let learned = AttemptFacts { quota: vec![window], ..AttemptFacts::default() };
    let script = Script::new([Step::Fail(rate_limited(), Some(429)), Step::Ok]).learning([learned]);
    drop(w.route("t1", &script).await?);
    assert_eq!(w.router.quota_board().len(), 1, "the failed attempt's reading is kept (any status counts)");
    w.router.flush().await;
    let view = w.engine.quota("c").await?;
    let first = script.targets()[0].clone();
    let p = view.profiles.iter().find(|p| p.id == first).ok_or("the first key has a view")?;
    let names: Vec<(&str, Option<&str>, Option<i32>)> =
        p.windows.iter().map(|w| (w.name.as_str(), w.model.as_deref(), w.remaining)).collect();
    assert_eq!(names, [("requests", Some("m1"), Some(0))], "stored under the key that answered and the model asked");
    Ok(())
}

#[tokio::test]
async fn a_timeout_is_told_apart_from_an_unreachable_provider() -> TestResult {
    let w = world(2, "balanced").await?;
    for timed_out in [true, false] {
        let facts = || AttemptFacts { timed_out, ..AttemptFacts::default() };
        let script = Script::new([Step::Fail(Failure::network(), None), Step::Fail(Failure::network(), None)])
            .learning([facts(), facts()]);
        let routed = w.route(&format!("t{timed_out}"), &script).await?;
        let Routed::NoAnswer { timed_out: told, failure, .. } = routed else { panic!("no answer: {routed:?}") };
        assert_eq!(told, timed_out, "the relay answers 504 upstream_timeout only for a timeout, else 502");
        assert_eq!(failure.kind, FailureKind::Network, "both are network failures in the ledger");
    }
    Ok(())
}
