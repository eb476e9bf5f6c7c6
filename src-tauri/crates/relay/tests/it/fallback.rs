//! Fallback across connections (issue 16, invariant 17), through real HTTP to two mock
//! providers on a manual clock: connection `a` (balanced, keys `a1` and `a2`, models m1 and
//! m2) falls back to `b` (legacy, key `b1`, model m1 only) when no key of `a` may serve.

use std::sync::Arc;

use crate::common::clock::{ManualClock, Served};
use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewProfile, ProfileEdit, Secret};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Pair {
    mock_a: MockProvider,
    mock_b: MockProvider,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

/// `a` (balanced unless `a_mode` is `None`: legacy, one key) with keys scripted by `a1`/`a2`,
/// `b` legacy with `b1` serving m1 only; the chain `a -> b` (model-first) set and activated.
async fn pair(a1: KeyScript, a2: Option<KeyScript>, a_mode: Option<&str>) -> Result<Pair, Box<dyn std::error::Error>> {
    let (mock_a, mock_b) = (MockProvider::start().await?, MockProvider::start().await?);
    mock_a.set_key("sk-a1", a1);
    if let Some(a2) = &a2 {
        mock_a.set_key("sk-a2", a2.clone());
    }
    mock_b.set_key("sk-b1", KeyScript::new(["m1"]));
    let clock = ManualClock::new();
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let conn = |slug: &str, mock: &MockProvider, models: &[&str]| NewConnection {
        slug: slug.into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: models.iter().map(|m| m.to_string()).collect(),
        ..Default::default()
    };
    engine.connection_add(conn("a", &mock_a, &["m1", "m2"]), Some(Secret::new("sk-a1"))).await?;
    engine.profile_edit("a", "primary", ProfileEdit { label: Some("a1".into()), ..Default::default() }).await?;
    if a2.is_some() {
        let p = NewProfile { label: "a2".into(), weight: Some(1), priority: Some(1) };
        engine.profile_add("a", p, Secret::new("sk-a2")).await?;
    }
    engine.connection_add(conn("b", &mock_b, &["m1"]), Some(Secret::new("sk-b1"))).await?;
    engine.verify("a", None, false, &|_| {}).await?;
    engine.verify("b", None, false, &|_| {}).await?;
    if let Some(mode) = a_mode {
        engine.routing_activate("a", mode.parse()?, "test").await?;
    }
    let set = engine.fallback_set("a", &["b".to_string()]).await?;
    assert!(!set.active && !set.activated, "a chain is stored inactive");
    let on = engine.fallback_activate("a").await?;
    assert!(on.active, "b has current evidence for m1 (the only model of a it enables): {:?}", on.gates.failures);
    mock_a.reset_counts();
    mock_b.reset_counts();
    Ok(Pair { mock_a, mock_b, clock, engine, _dir: dir })
}

/// A key of `a` whose model calls (m1 and m2) behave as `b`; its listing answers normally.
fn on_calls(b: Behaviour) -> KeyScript {
    KeyScript::new(["m1", "m2"]).model("m1", b.clone()).model("m2", b)
}

fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

async fn ask(relay: &Served, turn: &str, model: &str, stream: bool) -> reqwest::Result<reqwest::Response> {
    let body = json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": turn}]});
    reqwest::Client::new()
        .post(relay.url.replace("/c/c/", "/c/a/"))
        .bearer_auth(&relay.bearer)
        .header("x-switchyard-turn", turn)
        .json(&body)
        .send()
        .await
}

fn b_models(mock: &MockProvider) -> Vec<Option<String>> {
    mock.requests().into_iter().filter(|r| r.path.ends_with("/chat/completions")).map(|r| r.model).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_rate_limited_completes_on_the_fallback_and_returns_after_the_cooldown() -> TestResult {
    let limited = || on_calls(Behaviour::sequence([Behaviour::rate_limited(30), Behaviour::Ok]));
    let p = pair(limited(), Some(limited()), Some("balanced")).await?;
    let relay = Served::start(&p.engine).await?;

    let first = ask(&relay, "one", "m1", false).await?;
    assert_eq!(first.status(), 200, "both keys of a answer 429: the turn completes on b");
    assert_eq!(header(&first, "x-switchyard-connection"), "b", "the response names the connection that served");
    assert_eq!(header(&first, "x-switchyard-reason"), "fallback:rate_limited", "why a could not serve");
    assert_eq!(p.mock_a.hits("sk-a1") + p.mock_a.hits("sk-a2"), 2, "each key of a was tried once first");
    assert_eq!(b_models(&p.mock_b), vec![Some("m1".to_string())], "b is asked for the requested model, unchanged");

    let same_turn = ask(&relay, "one", "m1", false).await?;
    assert_eq!(header(&same_turn, "x-switchyard-connection"), "b", "a turn that fell back stays on b");

    let cooling = ask(&relay, "two", "m1", false).await?;
    assert_eq!(cooling.status(), 200, "a new turn while a cools down goes to b at selection time");
    assert_eq!(header(&cooling, "x-switchyard-reason"), "fallback:rate_limited", "the cooling circuits' kind");
    assert_eq!(p.mock_a.hits("sk-a1") + p.mock_a.hits("sk-a2"), 2, "no cooling key of a was sent anything");

    let unserved = ask(&relay, "three", "m2", false).await?;
    assert_eq!(unserved.status(), 429, "b does not serve m2, so the request stays on a, which is cooling");
    assert_eq!(p.mock_b.hits_for("sk-b1", "m2"), 0, "a model b does not serve is never sent to b");

    p.clock.step(31_000);
    let back = ask(&relay, "four", "m1", false).await?;
    assert_eq!(back.status(), 200, "served");
    assert_eq!(header(&back, "x-switchyard-connection"), "a", "after the cooldown a new turn is on a again");
    assert_eq!(header(&back, "x-switchyard-reason"), "probe", "through one probe");
    assert_eq!(p.mock_a.hits("sk-a1") + p.mock_a.hits("sk-a2"), 3, "exactly one more call reached a: the probe");

    relay.stop().await?;
    let on_b = p.engine.attempts("b", 50).await?;
    let fell: Vec<_> = on_b.iter().filter(|r| r.reason == "fallback:rate_limited").collect();
    assert_eq!(fell.len(), 2, "the ledger records both fallbacks on b: {on_b:?}");
    assert!(fell.iter().all(|r| r.connection == "b" && r.model.as_deref() == Some("m1")), "connection b, model m1");
    let on_a = p.engine.attempts("a", 50).await?;
    assert_eq!(on_a.iter().filter(|r| r.failure_kind.as_deref() == Some("rate_limited")).count(), 2, "a's 429s");
    let went: Vec<_> = on_a.iter().filter(|r| r.connection == "b").collect();
    assert_eq!(
        went.len(),
        3,
        "attempts a also lists the rows of its turns that went to b (two fallbacks, the fallen turn's next call): {on_a:?}"
    );
    assert!(went.iter().all(|r| r.origin.as_deref() == Some("a")), "each naming a as the origin");
    assert!(on_b.iter().all(|r| r.connection == "b"), "b's own listing names b as the connection that served");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_error_after_output_on_a_never_falls_back() -> TestResult {
    let dies = || KeyScript::new(["m1", "m2"]).model("m1", Behaviour::stream_error(2));
    let p = pair(dies(), Some(dies()), Some("balanced")).await?;
    let relay = Served::start(&p.engine).await?;
    let resp = ask(&relay, "one", "m1", true).await?;
    assert_eq!(resp.status(), 200, "the stream started on a");
    assert_eq!(header(&resp, "x-switchyard-connection"), "a", "served by a");
    let text = resp.text().await?;
    assert!(text.contains("error"), "the in-stream error reaches the client: {text}");
    assert_eq!(p.mock_b.hits("sk-b1"), 0, "after output nothing goes to another connection");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_scoped_and_provider_failures_never_fall_back() -> TestResult {
    let bad = KeyScript::new(["m1", "m2"]).model("m1", Behaviour::ServerError);
    let p = pair(bad.clone(), Some(bad), Some("balanced")).await?;
    let relay = Served::start(&p.engine).await?;
    let resp = ask(&relay, "one", "m1", false).await?;
    assert_eq!(resp.status(), 500, "a provider failure is delivered as it came");
    assert_eq!(p.mock_b.hits("sk-b1"), 0, "provider-scoped failures never fall back");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_connection_with_an_active_chain_is_a_one_key_connection() -> TestResult {
    let limited = on_calls(Behaviour::sequence([Behaviour::rate_limited(30), Behaviour::Ok]));
    let p = pair(limited, None, None).await?;
    let relay = Served::start(&p.engine).await?;
    let first = ask(&relay, "one", "m1", false).await?;
    assert_eq!(first.status(), 200, "the primary's 429 before output continues on the chain");
    assert_eq!(header(&first, "x-switchyard-connection"), "b", "served by b");
    assert_eq!(header(&first, "x-switchyard-reason"), "fallback:rate_limited", "why");
    let second = ask(&relay, "two", "m1", false).await?;
    assert_eq!(header(&second, "x-switchyard-connection"), "b", "the primary cools down: a new turn goes to b");
    assert_eq!(p.mock_a.hits("sk-a1"), 1, "the cooling primary was not sent the second turn");
    p.clock.step(31_000);
    let back = ask(&relay, "three", "m1", false).await?;
    assert_eq!(back.status(), 200, "served");
    assert_eq!(p.mock_a.hits("sk-a1"), 2, "after the cooldown the primary is asked again (one probe)");
    assert_eq!(header(&back, "x-switchyard-connection"), "", "a legacy answer carries no route headers");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_hop_model_is_what_the_hop_is_asked_for() -> TestResult {
    let limited = || on_calls(Behaviour::rate_limited(30));
    let p = pair(limited(), Some(limited()), Some("balanced")).await?;
    // Change the chain to ask b for m1 whatever a was asked (a's m2 -> b's m1).
    let set = p.engine.fallback_set("a", &["b=m1".to_string()]).await?;
    assert!(!set.activated, "a new chain replaces the old one inactive");
    p.engine.fallback_activate("a").await?;
    let relay = Served::start(&p.engine).await?;
    let resp = ask(&relay, "one", "m2", false).await?;
    assert_eq!(resp.status(), 200, "served by b");
    assert_eq!(header(&resp, "x-switchyard-connection"), "b", "fell back");
    assert_eq!(b_models(&p.mock_b), vec![Some("m1".to_string())], "the hop's model replaces the requested one");
    let body: Value = resp.json().await?;
    assert!(body.get("choices").is_some(), "an answer: {body}");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inactive_or_suspended_chain_changes_nothing() -> TestResult {
    let limited = || on_calls(Behaviour::rate_limited(30));
    let p = pair(limited(), Some(limited()), Some("balanced")).await?;
    p.engine.fallback_deactivate("a").await?;
    let relay = Served::start(&p.engine).await?;
    let resp = ask(&relay, "one", "m1", false).await?;
    assert_eq!(resp.status(), 429, "without an active chain a's 429 is delivered");
    assert_eq!(p.mock_b.hits("sk-b1"), 0, "and b is never asked");
    // Activated again, then b's endpoint changes: its evidence goes stale and the chain suspends.
    p.engine.fallback_activate("a").await?;
    let edit = switchyard_engine::ConnectionEdit {
        base_url: Some(format!("{}/v1/", p.mock_b.base_url().replace("127.0.0.1", "localhost"))),
        ..Default::default()
    };
    p.engine.connection_edit("b", edit).await?;
    let status = p.engine.fallback_status("a").await?;
    assert!(status.activated && !status.active, "editing a hop's endpoint suspends the chain");
    assert!(status.note.is_some(), "and says why");
    assert!(status.gates.failures.iter().any(|f| f.contains("hop b")), "the report names the hop: {:?}", status.gates);
    relay.stop().await
}
