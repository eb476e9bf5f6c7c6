//! Background re-verification (issue 16.5) on a manual clock, against the mock provider over
//! real HTTP: evidence at half its max age is refreshed without anyone running `verify`; a key
//! whose listing now fails drops out and suspends the connection once the gates no longer
//! hold; the task never sends a deep check (only `GET /v1/models` reaches the provider).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::clock::{priority_pair, ManualClock};
use switchyard_engine::{Engine, ReverifyTask, DEFAULT_MAX_EVIDENCE_AGE_MS};
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
    let suspended = engine.routing_status("c").await?.state == "suspended";
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
