//! Limits on one relay over a desktop's SQLite data dir (issue 41; invariants 28–31), on the
//! manual clock: a daily USD cap refuses once spent and admits again in the next window; a
//! model without a price is refused by a USD limit; a refusal is the relay's own (429 in the
//! dialect's shape, `limit:<id>`, `retry-after`, `x-should-retry: false` past a minute),
//! changes no SWRR position, reaches no provider and is a ledger row naming its limit; a
//! concurrency limit never lets more requests in flight than it allows; scopes refuse with
//! 403 and send nothing; an expired token is refused.

use std::time::Duration;

use serde_json::{json, Value};
use switchyard_engine::{Measure, NewLimit, NewPrice, Period, Role, UserGrant};
use switchyard_mock_provider::{Behaviour, KeyScript};

use crate::common::{header, relay_stepped, Key, Relay, TestResult};

/// The mock's default answer is five words: five output tokens.
const OUTPUT_TOKENS: u64 = 5;

fn ask(max_tokens: u64, model: &str, text: &str) -> Value {
    json!({"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": text}]})
}

async fn post_as(relay: &Relay, token: &str, body: &Value) -> reqwest::Result<reqwest::Response> {
    relay
        .http
        .post(format!("{}/c/c/v1/messages", relay.url))
        .header("x-api-key", token)
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
}

/// Every profile's circuits, as `routing status` shows them.
async fn circuits(relay: &Relay) -> Result<String, Box<dyn std::error::Error>> {
    let status = relay.engine.routing_status("c").await?;
    let health: Vec<_> = status.profiles.iter().map(|p| serde_json::to_value(&p.health)).collect::<Result<_, _>>()?;
    Ok(serde_json::to_string(&health)?)
}

fn limit(scope: &str, measure: Measure, amount: f64, period: Option<Period>) -> NewLimit {
    NewLimit { scope: scope.into(), measure, amount, period, id: None }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daily_usd_cap_refuses_once_spent_and_admits_again_the_next_day() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-cap-a", weight: 1, script: KeyScript::new(["m1", "m9"]) }];
    let (relay, clock) = relay_stepped("anthropic", &["m1", "m9"], keys, None).await?;
    // $2,000 per million output tokens, input free: five output tokens cost exactly $0.01.
    relay.engine.set_price("m1", NewPrice { input: 0.0, output: 2000.0, cache_read: None, cache_write: None }).await?;
    let cap = relay.engine.limit_set(&limit("connection:c", Measure::Usd, 0.05, Some(Period::Day))).await?;
    assert_eq!(cap.id, "connection-c-usd-day", "the default id names scope, measure and period");
    let mut served = 0;
    let mut refused = None;
    for i in 0..8 {
        let resp = relay.post(ask(OUTPUT_TOKENS, "m1", &format!("call {i}"))).await?;
        if resp.status() == 200 {
            served += 1;
            let _ = resp.bytes().await?;
        } else {
            refused = Some(resp);
            break;
        }
    }
    assert_eq!(served, 5, "$0.05 at $0.01 a request: exactly five served");
    let refused = refused.ok_or("the sixth request is refused")?;
    assert_eq!(refused.status(), 429, "a spent cap is 429");
    assert_eq!(header(&refused, "x-switchyard-reason"), "limit:connection-c-usd-day", "the refusal names its limit");
    let retry: u64 = header(&refused, "retry-after").parse()?;
    assert!(retry > 60 && retry <= 86_400, "retry-after is the wait until the day ends: {retry}");
    assert_eq!(header(&refused, "x-should-retry"), "false", "past a minute the client is told not to retry");
    let body: Value = refused.json().await?;
    assert_eq!(body["type"], "error", "Anthropic's error shape: {body}");
    assert_eq!(body["error"]["type"], "rate_limit_error", "Anthropic's kind for a 429: {body}");
    assert_eq!(relay.mock.hits("sk-cap-a"), 5, "the refused request never reached the provider");
    // A model without a price: a USD limit cannot know its cost and refuses (never spends it as zero).
    let unpriced = relay.post(ask(OUTPUT_TOKENS, "m9", "no price")).await?;
    assert_eq!(unpriced.status(), 403, "an unpriced model under a USD limit is refused");
    assert_eq!(header(&unpriced, "x-switchyard-reason"), "limit_needs_price");
    let text = unpriced.text().await?;
    assert!(text.contains("switchyard prices set m9"), "the refusal names the command that sets a price: {text}");
    assert_eq!(relay.mock.hits("sk-cap-a"), 5, "nor did the unpriced one");
    // The window as `limits status` shows it, once the ledger's writer settled the five.
    relay.router.flush().await;
    let status = relay.engine.limit_status(Some("connection:c")).await?;
    assert_eq!(status.len(), 1, "one window: {status:?}");
    assert!((status[0].used - 0.05).abs() < 1e-9, "five settled requests used $0.05: {status:?}");
    assert!(
        status[0].reserved.abs() < 1e-9 && status[0].remaining.abs() < 1e-9,
        "nothing reserved or left: {status:?}"
    );
    // The refusals are ledger rows naming their limit, with no attempt upstream.
    let rows = relay.engine.attempts("c", 50).await?;
    let limited: Vec<_> = rows.iter().filter(|r| r.limit.as_deref() == Some("connection-c-usd-day")).collect();
    assert_eq!(limited.len(), 2, "the 429 and the 403 are rows naming the limit: {rows:?}");
    assert!(
        limited.iter().all(|r| r.attempt == 0 && r.failure_kind.is_none()),
        "no attempt, no failure kind: {limited:?}"
    );
    // The next day the cap admits again.
    clock.step(i64::try_from(retry)? * 1000 + 1000);
    let next_day = relay.post(ask(OUTPUT_TOKENS, "m1", "a new day")).await?;
    assert_eq!(next_day.status(), 200, "a new window admits again: {}", next_day.text().await?);
    assert_eq!(relay.mock.hits("sk-cap-a"), 6);
    relay.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_request_moves_no_swrr_position_and_fails_over_nowhere() -> TestResult {
    let keys = vec![
        Key { label: "a", secret: "sk-swrr-a", weight: 1, script: KeyScript::new(["m1"]) },
        Key { label: "b", secret: "sk-swrr-b", weight: 1, script: KeyScript::new(["m1"]) },
    ];
    let (relay, clock) = relay_stepped("anthropic", &["m1"], keys, Some("balanced")).await?;
    relay.engine.limit_set(&limit("connection:c", Measure::Requests, 2.0, Some(Period::Minute))).await?;
    let served_by = |r: &reqwest::Response| header(r, "x-switchyard-profile");
    let first = relay.post(ask(8, "m1", "one")).await?;
    let second = relay.post(ask(8, "m1", "two")).await?;
    let order = [served_by(&first), served_by(&second)];
    assert_eq!((first.status().as_u16(), second.status().as_u16()), (200, 200), "two within the limit");
    assert_ne!(order[0], order[1], "balanced 1:1 alternates");
    let circuits_before = circuits(&relay).await?;
    for i in 0..3 {
        let refused = relay.post(ask(8, "m1", &format!("over {i}"))).await?;
        assert_eq!(refused.status(), 429, "over the limit");
        assert_eq!(header(&refused, "x-switchyard-reason"), "limit:connection-c-requests-minute");
        assert!(header(&refused, "x-should-retry").is_empty(), "a wait under a minute leaves retrying to the client");
        assert!(header(&refused, "x-switchyard-profile").is_empty(), "no key served or was tried");
    }
    assert_eq!(relay.mock.hits("sk-swrr-a") + relay.mock.hits("sk-swrr-b"), 2, "no refusal reached a key");
    assert_eq!(circuits(&relay).await?, circuits_before, "no circuit changed");
    clock.step(61_000);
    let third = relay.post(ask(8, "m1", "three")).await?;
    assert_eq!(third.status(), 200);
    assert_eq!(served_by(&third), order[0], "SWRR resumes where it was: the refusals moved no position");
    relay.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrency_limit_never_lets_more_in_flight() -> TestResult {
    let slow = KeyScript::new(["m1"]).model("m1", Behaviour::slow(300));
    let keys = vec![Key { label: "a", secret: "sk-slots-a", weight: 1, script: slow }];
    let (relay, _clock) = relay_stepped("anthropic", &["m1"], keys, None).await?;
    relay.engine.limit_set(&limit("connection:c", Measure::Concurrency, 2.0, None)).await?;
    let relay = std::sync::Arc::new(relay);
    let mut calls = Vec::new();
    for i in 0..6 {
        let relay = relay.clone();
        calls.push(tokio::spawn(async move {
            let resp = relay.post(ask(8, "m1", &format!("slow {i}"))).await?;
            let status = resp.status().as_u16();
            let _ = resp.bytes().await?;
            Ok::<u16, reqwest::Error>(status)
        }));
    }
    let mut statuses = Vec::new();
    for c in calls {
        statuses.push(c.await??);
    }
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(ok + statuses.iter().filter(|s| **s == 429).count(), 6, "each served or refused: {statuses:?}");
    assert!((1..=2).contains(&ok), "at most two in flight were admitted together: {statuses:?}");
    assert!(
        relay.mock.max_in_flight() <= 2,
        "the provider never saw more than two at once: {}",
        relay.mock.max_in_flight()
    );
    // Slots are freed when their requests end (on the ledger's next pass).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = relay.post(ask(8, "m1", "after")).await?;
    assert_eq!(again.status(), 200, "the slots came back");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_reaches_their_scope_only_and_an_expired_token_nothing() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-scope-a", weight: 1, script: KeyScript::new(["m1", "other-1"]) }];
    let (relay, clock) = relay_stepped("anthropic", &["m1", "other-1"], keys, None).await?;
    let narrow = UserGrant { models: Some(vec!["m*".into()]), ..UserGrant::default() };
    let ana = relay.engine.relay_user_add_with("ana", &narrow).await?;
    let elsewhere = UserGrant { connections: Some(vec!["other".into()]), ..UserGrant::default() };
    let bo = relay.engine.relay_user_add_with("bo", &elsewhere).await?;
    let soon = UserGrant {
        role: Some(Role::User),
        expires: Some(Some("2025-01-01T01:00:00Z".into())),
        ..UserGrant::default()
    };
    let cy = relay.engine.relay_user_add_with("cy", &soon).await?;
    // The relay reads the users within its refresh.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let ok = post_as(&relay, ana.expose(), &ask(8, "m1", "in scope")).await?;
    assert_eq!(ok.status(), 200, "a model matching the pattern is served");
    let out = post_as(&relay, ana.expose(), &ask(8, "other-1", "out of scope")).await?;
    assert_eq!(out.status(), 403, "a model outside the patterns is refused");
    assert_eq!(header(&out, "x-switchyard-reason"), "not_in_scope");
    let body = out.text().await?;
    assert!(!body.contains("other-1"), "the refusal does not repeat what the client sent: {body}");
    let wrong = post_as(&relay, bo.expose(), &ask(8, "m1", "another connection")).await?;
    assert_eq!(wrong.status(), 403, "a connection outside the scope is refused");
    assert_eq!(header(&wrong, "x-switchyard-reason"), "not_in_scope");
    let before = post_as(&relay, cy.expose(), &ask(8, "m1", "before expiry")).await?;
    assert_eq!(before.status(), 200, "before its expiry the token works");
    clock.step(3_600_000);
    let after = post_as(&relay, cy.expose(), &ask(8, "m1", "after expiry")).await?;
    assert_eq!(after.status(), 401, "past its expiry the token is nobody's");
    assert_eq!(relay.mock.hits("sk-scope-a"), 2, "only the two requests in scope reached the provider");
    relay.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn me_shows_a_token_holder_its_own_figures_and_limits_only() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-me-a", weight: 1, script: KeyScript::new(["m1"]) }];
    let (relay, clock) = relay_stepped("anthropic", &["m1"], keys, None).await?;
    // An hour into the day: a row is dated when its attempt started (the clock at midnight
    // exactly would date it yesterday).
    clock.step(3_600_000);
    relay.engine.set_price("m1", NewPrice { input: 0.0, output: 2000.0, cache_read: None, cache_write: None }).await?;
    let ana = relay.engine.relay_user_add("ana").await?;
    let bob = relay.engine.relay_user_add("bob").await?;
    let cy = relay.engine.relay_user_add("cy").await?;
    relay.engine.limit_set(&limit("users", Measure::Requests, 3.0, Some(Period::Day))).await?;
    relay.engine.limit_set(&limit("user:bob", Measure::Usd, 3.0, Some(Period::Month))).await?;
    tokio::time::sleep(Duration::from_millis(600)).await;
    for i in 0..3 {
        assert_eq!(post_as(&relay, ana.expose(), &ask(OUTPUT_TOKENS, "m1", &format!("ana {i}"))).await?.status(), 200);
    }
    assert_eq!(post_as(&relay, bob.expose(), &ask(OUTPUT_TOKENS, "m1", "bob")).await?.status(), 200);
    relay.router.flush().await;
    let me = |token: String| {
        let (http, url) = (relay.http.clone(), format!("{}/v1/switchyard/me", relay.url));
        async move { http.get(url).bearer_auth(token).send().await }
    };
    let resp = me(ana.expose().to_string()).await?;
    assert_eq!(resp.status(), 200);
    let text = resp.text().await?;
    let view: Value = serde_json::from_str(&text)?;
    assert_eq!(view["name"], "ana");
    assert_eq!(view["role"], "user");
    assert_eq!(view["today"]["requests"], 3, "ana's three requests: {view}");
    assert!((view["today"]["cost_usd"].as_f64().unwrap_or(-1.0) - 0.03).abs() < 1e-9, "at $0.01 each: {view}");
    let limits = view["limits"].as_array().ok_or("limits")?;
    assert_eq!(limits.len(), 1, "only the users limit applies to ana (bob's own is bob's): {view}");
    assert_eq!((limits[0]["subject"].as_str(), limits[0]["used"].as_f64()), (Some("ana"), Some(3.0)), "{view}");
    assert!(!text.contains("bob"), "nothing of another user: {text}");
    assert!(!text.contains(ana.expose()) && !text.contains("sk-me-a"), "no token, no key");
    let bob_view: Value = me(bob.expose().to_string()).await?.json().await?;
    let ids: Vec<&str> =
        bob_view["limits"].as_array().map(|l| l.iter().filter_map(|x| x["id"].as_str()).collect()).unwrap_or_default();
    assert!(
        ids.contains(&"user-bob-usd-month") && ids.contains(&"users-requests-day"),
        "bob's own and the users limit: {bob_view}"
    );
    // ana's fourth is refused; cy, who sent nothing, sees an unused window — none of ana's figures.
    assert_eq!(post_as(&relay, ana.expose(), &ask(OUTPUT_TOKENS, "m1", "ana over")).await?.status(), 429);
    relay.router.flush().await;
    let text = me(cy.expose().to_string()).await?.text().await?;
    let cy_view: Value = serde_json::from_str(&text)?;
    let row = &cy_view["limits"][0];
    assert_eq!(
        (row["subject"].as_str(), row["used"].as_f64(), row["refused"].as_i64(), row["remaining"].as_f64()),
        (Some("cy"), Some(0.0), Some(0), Some(3.0)),
        "cy's own, unused window of the users limit: {cy_view}"
    );
    assert!(!text.contains("ana") && !text.contains("bob"), "nothing of another user: {text}");
    let nobody = relay.http.get(format!("{}/v1/switchyard/me", relay.url)).send().await?;
    assert_eq!(nobody.status(), 401, "no token, no figures");
    relay.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_set_while_the_relay_runs_counts_from_its_next_request() -> TestResult {
    let keys = vec![
        Key { label: "a", secret: "sk-live-a", weight: 1, script: KeyScript::new(["m1"]) },
        Key { label: "b", secret: "sk-live-b", weight: 1, script: KeyScript::new(["m1"]) },
    ];
    let relay = crate::common::relay("openai", &["m1"], keys, Some("balanced")).await?;
    for i in 0..3 {
        assert_eq!(relay.chat("m1", vec![crate::common::user(&format!("before {i}"))], false).await?.status(), 200);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    relay.engine.connection_cap_set("c", switchyard_engine::CapKind::RequestsMinute, 3.0).await?;
    let mut statuses = Vec::new();
    for i in 0..4 {
        statuses
            .push(relay.chat("m1", vec![crate::common::user(&format!("after {i}"))], false).await?.status().as_u16());
    }
    relay.router.flush().await;
    let status = relay.engine.connection_limits("c").await?;
    assert_eq!(statuses, [200, 200, 200, 429], "the cap counts from the request after it was set: {status:?}");
    assert_eq!(status[0].used, 3.0, "{status:?}");
    relay.stop().await?;
    Ok(())
}
