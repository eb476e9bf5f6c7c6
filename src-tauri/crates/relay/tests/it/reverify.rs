//! Background re-verification (issue 16.5) on a manual clock, against the mock provider over
//! real HTTP: evidence at half its max age is refreshed without anyone running `verify`; a key
//! whose listing now fails drops out and suspends the connection once the gates no longer
//! hold; the task never sends a deep check (only `GET /v1/models` reaches the provider); and
//! only keys routing needs evidence for are re-verified (issue 27): a legacy connection is not,
//! unless it is a hop of an activated fallback chain.

use std::sync::Arc;
use std::time::Duration;

use crate::common::clock::{priority_pair, ManualClock};
use switchyard_engine::{Engine, ReverifyTask, DEFAULT_MAX_EVIDENCE_AGE_MS};
use switchyard_engine::{NewConnection, ReverifyBackoff, Secret};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn last_checked(engine: &Engine) -> Result<Vec<Option<String>>, Box<dyn std::error::Error>> {
    Ok(engine.reverify_plan("c").await?.into_iter().map(|k| k.last_checked).collect())
}

/// Waits until the task has run two more passes (the first may have begun before the
/// clock moved), for at most 10 s of real time.
async fn two_passes(task: &ReverifyTask) -> Result<(), Box<dyn std::error::Error>> {
    tokio::time::timeout(Duration::from_secs(10), task.passes(2)).await.map_err(|_| "the task stopped passing")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_is_refreshed_at_half_its_age_and_a_key_that_stopped_working_suspends_routing() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-r1", KeyScript::new(["m1"]));
    mock.set_key("sk-r2", KeyScript::new(["m1"]));
    let clock: Arc<ManualClock> = ManualClock::new();
    let (_dir, engine) = priority_pair(&clock, &mock, "sk-r1", "sk-r2").await?;
    let before = last_checked(&engine).await?;
    assert!(before.iter().all(Option::is_some), "both keys verified: {before:?}");
    let plan = engine.reverify_plan("c").await?;
    assert!(plan.iter().all(|k| k.next_due.is_some()), "each key shows when its next check is due: {plan:?}");
    mock.reset_counts();
    let task = ReverifyTask::start(engine.clone(), Duration::from_millis(20));

    let max = DEFAULT_MAX_EVIDENCE_AGE_MS;
    clock.step(max * 45 / 100);
    two_passes(&task).await?;
    assert_eq!(last_checked(&engine).await?, before, "at 45 % of the max age nothing is due yet");

    clock.step(max * 16 / 100);
    two_passes(&task).await?;
    let refreshed = last_checked(&engine).await?.iter().zip(&before).all(|(a, b)| a != b);
    assert!(refreshed, "at 61 % of the max age both keys were re-verified without user action");
    assert_eq!(engine.routing_status("c").await?.state.to_string().as_str(), "active", "routing stays on");

    // Key b now fails its listing (the provider refuses it): it drops out, and a priority
    // pair with one key left fails the gates, so the connection suspends.
    mock.set_key("sk-r2", KeyScript::new(["m1"]).listing(Behaviour::Unauthorized));
    clock.step(max * 61 / 100);
    two_passes(&task).await?;
    let suspended = engine.routing_status("c").await?.state == switchyard_engine::RoutingState::Suspended;
    assert!(suspended, "a key that really stopped working suspends the connection");
    let status = engine.routing_status("c").await?;
    assert!(status.note.as_deref().unwrap_or_default().contains("suspended"), "and says why: {:?}", status.note);

    let sent: Vec<String> = mock.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert!(!sent.is_empty(), "the background checks reached the provider");
    assert!(
        sent.iter().all(|r| r == "GET /v1/models"),
        "listing only: no deep check (no completion request) is ever sent: {sent:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_keys_routing_needs_evidence_for_are_reverified() -> TestResult {
    let mock = MockProvider::start().await?;
    for key in ["sk-r1", "sk-r2", "sk-legacy", "sk-source", "sk-hop"] {
        mock.set_key(key, KeyScript::new(["m1"]));
    }
    let clock: Arc<ManualClock> = ManualClock::new();
    let (_dir, engine) = priority_pair(&clock, &mock, "sk-r1", "sk-r2").await?;
    let legacy = |slug: &str| NewConnection {
        slug: slug.into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    // Legacy and verified, no chain: the relay never looks at its evidence.
    engine.connection_add(legacy("plain"), Some(Secret::new("sk-legacy"))).await?;
    engine.verify("plain", None, false, &|_| {}).await?;
    // A legacy source with an activated chain to a legacy hop: the chain's gates read the hop's
    // evidence (the source's own is not legacy's business).
    engine.connection_add(legacy("source"), Some(Secret::new("sk-source"))).await?;
    engine.verify("source", None, false, &|_| {}).await?;
    engine.connection_add(legacy("hop"), Some(Secret::new("sk-hop"))).await?;
    engine.verify("hop", None, false, &|_| {}).await?;
    engine.fallback_set("source", &["hop".to_string()]).await?;
    engine.fallback_activate("source").await?;
    mock.reset_counts();

    clock.step(DEFAULT_MAX_EVIDENCE_AGE_MS * 61 / 100);
    let done = engine.reverify_due(&ReverifyBackoff::default()).await?;
    let mut slugs: Vec<&str> = done.iter().map(|r| r.slug.as_str()).collect();
    slugs.sort();
    assert_eq!(slugs, ["c", "c", "hop"], "the priority pair's keys and the chain's hop, nothing else: {done:?}");
    assert_eq!(mock.hits("sk-legacy"), 0, "a legacy connection without a chain is never called in the background");
    assert_eq!(mock.hits("sk-source"), 0, "nor a legacy chain source");
    let plan = engine.reverify_plan("plain").await?;
    assert!(plan.iter().all(|k| k.next_due.is_none()), "and no background check is shown as due: {plan:?}");
    assert!(engine.reverify_plan("hop").await?.iter().all(|k| k.next_due.is_some()), "the hop's is");
    Ok(())
}
