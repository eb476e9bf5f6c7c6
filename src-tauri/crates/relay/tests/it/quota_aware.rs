//! Quota-aware selection through the relay (issue 15.3, invariant 18): with it on, a key whose
//! latest reading says its request window is spent is skipped before the provider refuses it,
//! and comes back once the window's reset passes on the engine's clock (a manual one: no
//! sleeping); `routing status` lists it as `quota_reserve` meanwhile, and `health reset`
//! clears it. With it off, nothing changes: the spent key keeps serving.

use std::sync::Arc;

use crate::common::clock::{priority_pair, ManualClock, Served};
use serde_json::json;
use switchyard_engine::Engine;
use switchyard_mock_provider::{KeyScript, MockProvider};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Key `a` (tried first) reports 5 requests, 1 left on its first call and 0 after; `b` has room.
fn scripts(mock: &MockProvider) {
    mock.set_key("sk-quota-a", KeyScript::new(["m1"]).quota(5, 1));
    mock.set_key("sk-quota-b", KeyScript::new(["m1"]).quota(100, 90));
}

struct Setup {
    mock: MockProvider,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    relay: Served,
    _dir: tempfile::TempDir,
}

/// An OpenAI connection with keys `a` and `b` on priority routing on a manual clock, quota-aware
/// selection on (with no reserve) or left at its default.
async fn setup(quota_aware: bool) -> Result<Setup, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    scripts(&mock);
    let clock = ManualClock::new();
    let (dir, engine) = priority_pair(&clock, &mock, "sk-quota-a", "sk-quota-b").await?;
    if quota_aware {
        let status = engine.set_quota_aware("c", true, Some(0)).await?;
        assert!(status.quota_aware.enabled, "the status shows the new setting");
    }
    // Start the quota steps and the hit counts after verification.
    scripts(&mock);
    mock.reset_counts();
    let relay = Served::start(&engine).await?;
    Ok(Setup { mock, clock, engine, relay, _dir: dir })
}

impl Setup {
    /// Sends one turn; returns the status and the label of the profile that served it.
    async fn ask(&self, text: &str) -> Result<(u16, String), Box<dyn std::error::Error>> {
        let resp = reqwest::Client::new()
            .post(&self.relay.url)
            .bearer_auth(&self.relay.bearer)
            .json(&json!({"model": "m1", "messages": [{"role": "user", "content": text}]}))
            .send()
            .await?;
        let status = resp.status().as_u16();
        let id = resp.headers().get("x-switchyard-profile").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let label = self.engine.profile_list("c").await?.into_iter().find(|p| p.id == id).map(|p| p.label);
        let _ = resp.bytes().await?;
        Ok((status, label.unwrap_or_default()))
    }

    async fn stop(self) -> TestResult {
        self.relay.stop().await
    }

    /// Two turns on `a` spend its window; the third is served by `b` (quota-aware on).
    async fn spend_a(&self) -> TestResult {
        assert_eq!(self.ask("one").await?, (200, "a".to_string()), "a serves first (1 request left)");
        assert_eq!(self.ask("two").await?, (200, "a".to_string()), "a serves again; its reading now says 0 left");
        assert_eq!(self.ask("three").await?, (200, "b".to_string()), "a's spent window skips it: b serves");
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_key_is_skipped_before_any_429_and_returns_after_its_reset() -> TestResult {
    let s = setup(true).await?;
    s.spend_a().await?;
    assert_eq!(s.mock.hits("sk-quota-a"), 2, "a was not even tried once its reading said 0 left");
    assert_eq!(s.mock.hits("sk-quota-b"), 1, "b served the third turn on its first try");

    s.relay.router.flush_quota().await;
    let status = s.engine.routing_status("c").await?;
    assert!(status.quota_aware.enabled, "routing status shows quota-aware selection on");
    let m1 = status.gates.models.iter().find(|m| m.model == "m1").ok_or("m1 has a gate line")?;
    let reasons: Vec<(&str, &str)> = m1.excluded.iter().map(|e| (e.label.as_str(), e.reason.as_str())).collect();
    assert_eq!(reasons, [("a", "quota_reserve")], "the gate report says why a is skipped");
    assert!(status.gates.ok, "a quota skip does not fail the gates (it ends by itself)");
    assert_eq!(status.state, switchyard_engine::RoutingState::Active, "nor suspend the connection");

    s.clock.step(61_000);
    assert_eq!(
        s.ask("four").await?,
        (200, "a".to_string()),
        "past the window's reset the reading is ignored: a serves"
    );
    assert_eq!(s.mock.hits("sk-quota-a"), 3, "a is back");
    s.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_quota_aware_selection_off_nothing_changes() -> TestResult {
    let s = setup(false).await?;
    for turn in ["one", "two", "three", "four"] {
        assert_eq!(s.ask(turn).await?, (200, "a".to_string()), "off: a serves {turn} whatever its reading says");
    }
    assert_eq!((s.mock.hits("sk-quota-a"), s.mock.hits("sk-quota-b")), (4, 0), "off: b is never asked");
    s.relay.router.flush_quota().await;
    let status = s.engine.routing_status("c").await?;
    assert!(!status.quota_aware.enabled, "quota-aware selection is off by default");
    assert!(status.gates.models.iter().all(|m| m.excluded.is_empty()), "off: the gate report lists no quota skip");
    s.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reset_clears_a_keys_quota_reserve() -> TestResult {
    let s = setup(true).await?;
    s.spend_a().await?;

    // The user knows better (a plan upgrade, a wrong header): `health reset` clears the reading,
    // in the store and — at the relay's next quota pass — in the running relay's memory.
    let a_windows =
        |v: &switchyard_engine::QuotaView| v.profiles.iter().find(|p| p.label == "a").map(|p| p.windows.len());
    s.relay.router.flush_quota().await;
    assert_eq!(a_windows(&s.engine.quota("c").await?), Some(1), "a's spent window is stored");
    s.engine.health_reset("c", "a", None).await?;
    assert_eq!(a_windows(&s.engine.quota("c").await?), Some(0), "a's readings are gone from the store");
    s.relay.router.flush_quota().await;
    assert_eq!(a_windows(&s.engine.quota("c").await?), Some(0), "and the relay does not write the old one back");
    let status = s.engine.routing_status("c").await?;
    let m1 = status.gates.models.iter().find(|m| m.model == "m1").ok_or("m1 has a gate line")?;
    assert!(m1.excluded.is_empty(), "routing status no longer lists a as quota_reserve: {:?}", m1.excluded);
    assert_eq!(s.ask("four").await?, (200, "a".to_string()), "a serves again before its window's reset");
    s.stop().await
}
