//! Idle expiry on the engine's clock (issue 13.2): a turn's binding and a conversation's key
//! are kept while young and dropped once idle past their window — stepped, never slept.

use crate::common;

use crate::common::{header, relay_stepped, user, Key, TestResult};
use serde_json::json;
use switchyard_mock_provider::KeyScript;

const MINUTE: i64 = 60_000;

fn two_keys() -> Vec<Key<'static>> {
    vec![
        Key { label: "a", secret: "sk-idle-a", weight: 1, script: KeyScript::new(["m1"]) },
        Key { label: "b", secret: "sk-idle-b", weight: 1, script: KeyScript::new(["m1"]) },
    ]
}

/// One call with these routing headers; (reason, profile) as the relay reports them.
async fn call(
    r: &common::Relay,
    headers: &[(&str, &str)],
    text: &str,
) -> Result<(String, String), Box<dyn std::error::Error>> {
    let body = json!({"model": "m1", "messages": [user(text)]});
    let mut req = r.http.post(format!("{}{}", r.base(), r.path())).bearer_auth(&r.token).json(&body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let resp = req.send().await?;
    assert_eq!(resp.status(), 200, "every call is served");
    Ok((header(&resp, "x-switchyard-reason"), header(&resp, "x-switchyard-profile")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_binding_lives_thirty_idle_minutes_on_the_engine_clock() -> TestResult {
    let (r, clock) = relay_stepped("openai", &["m1"], two_keys(), Some("balanced")).await?;
    r.engine.set_affinity("c", switchyard_engine::AffinityMode::Turn, None).await?;
    let turn = [("x-switchyard-turn", "turn-1")];
    let (reason, first) = call(&r, &turn, "start").await?;
    assert_eq!(reason, "swrr", "a new turn is assigned by SWRR");
    clock.step(29 * MINUTE);
    let (reason, again) = call(&r, &turn, "still here").await?;
    assert_eq!((reason.as_str(), again.as_str()), ("sticky", first.as_str()), "29 idle minutes keep the binding");
    clock.step(31 * MINUTE);
    let (reason, later) = call(&r, &turn, "back after lunch").await?;
    assert_eq!(reason, "swrr", "31 idle minutes on the engine clock drop the binding (no real time passed)");
    assert_ne!(later, first, "and SWRR, having given the first pick to {first}, gives this one to the other key");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_keeps_its_key_inside_the_window_and_is_reassigned_once_cold() -> TestResult {
    let (r, clock) = relay_stepped("openai", &["m1"], two_keys(), Some("balanced")).await?;
    r.engine.set_affinity("c", switchyard_engine::AffinityMode::Conversation, Some(10)).await?;
    clock.step(1_100); // the relay's snapshot picks the setting up on the engine's clock
    let conv = ("x-switchyard-conversation", "conv-1");
    let (reason, first) = call(&r, &[conv, ("x-switchyard-turn", "t1")], "first message").await?;
    assert_eq!(reason, "swrr", "a new conversation is assigned by SWRR");
    clock.step(9 * MINUTE);
    let (reason, warm) = call(&r, &[conv, ("x-switchyard-turn", "t2")], "second message").await?;
    assert_eq!(
        (reason.as_str(), warm.as_str()),
        ("conversation", first.as_str()),
        "a new turn 9 minutes later is inside the 10-minute window: same key"
    );
    clock.step(11 * MINUTE);
    let (reason, cold) = call(&r, &[conv, ("x-switchyard-turn", "t3")], "third message").await?;
    assert_eq!(reason, "swrr", "11 idle minutes make the conversation cold: SWRR assigns it again");
    assert_ne!(cold, first, "to the key whose turn it is in SWRR (the other one)");
    r.stop().await?;
    Ok(())
}
