//! One clock on the routing path (issue 13.2): the relay dates a provider's `Retry-After` with
//! the engine's clock, the same one the circuits compare against, so a manual clock steps a
//! cooldown to its end without sleeping. (Before, the relay used the system time while the
//! circuits used the engine's clock: with a clock set elsewhere the cooldown never ended.)

use crate::common::clock::{priority_pair, ManualClock, Served};
use serde_json::json;
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_ends_when_the_engine_clock_says_so_without_sleeping() -> Result<(), Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    mock.set_key(
        "sk-a",
        KeyScript::new(["m1"]).model("m1", Behaviour::sequence([Behaviour::rate_limited(30), Behaviour::Ok])),
    );
    mock.set_key("sk-b", KeyScript::new(["m1"]));
    let clock = ManualClock::new();
    let (_dir, engine) = priority_pair(&clock, &mock, "sk-a", "sk-b").await?;
    let relay = Served::start(&engine).await?;
    let (url, bearer) = (relay.url.clone(), relay.bearer.clone());
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
    clock.step(31_000);
    let third = ask("three").send().await?;
    assert_eq!(third.status(), 200, "served");
    assert_eq!(reason(&third), "probe", "31 s later on the engine's clock the cooldown is over: a is probed");
    relay.stop().await
}
