//! One clock on the routing path (issue 13.2): the relay dates a provider's `Retry-After` with
//! the engine's clock, the same one the circuits compare against, so a manual clock steps a
//! cooldown to its end without sleeping. (Before, the relay used the system time while the
//! circuits used the engine's clock: with a clock set elsewhere the cooldown never ended.)

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchyard_engine::{Clock, Engine, NewConnection, NewProfile, ProfileEdit, Router, Secret};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};
use switchyard_vault::MemoryVault;

#[derive(Debug)]
struct ManualClock {
    ms: AtomicI64,
    start: Instant,
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }

    fn monotonic(&self) -> Instant {
        // Moves with the wall time it was stepped by.
        self.start + Duration::from_millis(u64::try_from(self.ms.load(Ordering::SeqCst) - JAN_2025).unwrap_or(0))
    }
}

/// 2025-01-01T00:00:00Z: far from the machine's time, so a mixed-up clock shows.
const JAN_2025: i64 = 1_735_689_600_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_ends_when_the_engine_clock_says_so_without_sleeping() -> Result<(), Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    mock.set_key(
        "sk-a",
        KeyScript::new(["m1"]).model("m1", Behaviour::sequence([Behaviour::rate_limited(30), Behaviour::Ok])),
    );
    mock.set_key("sk-b", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock { ms: AtomicI64::new(JAN_2025), start: Instant::now() });
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(Secret::new("sk-a"))).await?;
    engine.profile_edit("c", "primary", ProfileEdit { label: Some("a".into()), ..Default::default() }).await?;
    engine
        .profile_add("c", NewProfile { label: "b".into(), weight: Some(1), priority: Some(1) }, Secret::new("sk-b"))
        .await?;
    engine.verify("c", None, false, &|_| {}).await?;
    engine.routing_activate("c", "priority", "test").await?;
    let token = engine.relay_token(false).await?;
    let bearer = token.expose().to_string();
    let router = Arc::new(Router::new(engine.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/c/c/v1/chat/completions", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(switchyard_relay::serve(listener, router, token, async move {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::new();
    let ask = |text: &str| {
        http.post(&url)
            .bearer_auth(&bearer)
            .json(&json!({"model": "m1", "messages": [{"role": "user", "content": text}]}))
    };
    let reason = |r: &reqwest::Response| {
        r.headers().get("x-switchyard-reason").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    };
    let first = ask("one").send().await?;
    assert_eq!(reason(&first), "failover:rate_limited", "a's 429 (Retry-After: 30) moves the turn to b");
    let second = ask("two").send().await?;
    assert_eq!(reason(&second), "priority", "a cools down for 30 s of the engine's clock: b serves");
    clock.ms.fetch_add(31_000, Ordering::SeqCst);
    let third = ask("three").send().await?;
    assert_eq!(third.status(), 200, "served");
    assert_eq!(reason(&third), "probe", "31 s later on the engine's clock the cooldown is over: a is probed");
    let _ = stop.send(());
    task.await??;
    Ok(())
}
